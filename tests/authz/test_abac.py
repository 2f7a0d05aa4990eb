"""ABAC policy files and matching ("Using ABAC Authorization"), table-driven."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kapi.attributes import Attributes, UserInfo
from services.authz.abac import ABACAuthorizer, Policy, PolicyLoadError, load, parse, parse_line
from services.authz.authorizer import Decision

ALICE = UserInfo("alice", "", ("dev", "system:authenticated"))
BOB = UserInfo("bob", "", ("ops", "system:authenticated"))
ANON = UserInfo("system:anonymous", "", ("system:unauthenticated",))


def v1(**spec: object) -> str:
    return json.dumps({"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": spec})


def res(user: UserInfo, verb: str, resource: str = "pods", namespace: str = "ns1", group: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, resource=resource, namespace=namespace,
                      api_group=group)


def url(user: UserInfo, path: str, verb: str = "get") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=False, path=path)


# The examples of the "Using ABAC Authorization" page.
EVERYTHING = v1(user="alice", namespace="*", resource="*", apiGroup="*")
KUBELET_READ_PODS = v1(user="kubelet", namespace="*", resource="pods", readonly=True)
BOB_READ_PROJECT = v1(user="bob", namespace="projectCaribou", resource="pods", readonly=True)
ANY_READ_NONRESOURCE = v1(user="*", nonResourcePath="*", readonly=True)
GROUP_APPS = v1(group="ops", namespace="*", resource="deployments", apiGroup="apps")
HEALTH_PREFIX = v1(group="system:unauthenticated", nonResourcePath="/healthz*", readonly=True)


@pytest.mark.parametrize(
    ("lines", "attributes", "allowed"),
    [
        ([EVERYTHING], res(ALICE, "delete", "secrets"), True),
        ([EVERYTHING], res(ALICE, "create", "deployments", group="apps"), True),
        ([EVERYTHING], res(BOB, "get"), False),
        ([EVERYTHING], url(ALICE, "/version"), False),  # no nonResourcePath: resource policy only
        ([BOB_READ_PROJECT], res(BOB, "get", namespace="projectCaribou"), True),
        ([BOB_READ_PROJECT], res(BOB, "list", namespace="projectCaribou"), True),
        ([BOB_READ_PROJECT], res(BOB, "watch", namespace="projectCaribou"), True),
        ([BOB_READ_PROJECT], res(BOB, "create", namespace="projectCaribou"), False),
        ([BOB_READ_PROJECT], res(BOB, "patch", namespace="projectCaribou"), False),
        ([BOB_READ_PROJECT], res(BOB, "get", namespace="other"), False),
        ([BOB_READ_PROJECT], res(BOB, "get", "secrets", namespace="projectCaribou"), False),
        ([BOB_READ_PROJECT], res(BOB, "get", "pods", "projectCaribou", group="apps"), False),  # apiGroup "" only
        ([KUBELET_READ_PODS], res(UserInfo("kubelet"), "list", namespace=""), True),  # "*" matches cluster scope
        ([ANY_READ_NONRESOURCE], url(ALICE, "/version"), True),
        ([ANY_READ_NONRESOURCE], url(BOB, "/apis", "post"), False),
        ([ANY_READ_NONRESOURCE], url(ANON, "/version"), False),  # "*" user = authenticated users only
        ([ANY_READ_NONRESOURCE], res(ALICE, "get"), False),
        ([GROUP_APPS], res(BOB, "update", "deployments", group="apps"), True),
        ([GROUP_APPS], res(ALICE, "update", "deployments", group="apps"), False),
        ([HEALTH_PREFIX], url(ANON, "/healthz/etcd"), True),
        ([HEALTH_PREFIX], url(ANON, "/healthzz"), True),  # prefix match, as kube
        ([HEALTH_PREFIX], url(ANON, "/livez"), False),
        ([v1(namespace="*", resource="*")], res(ALICE, "get"), False),  # neither user nor group: matches nobody
        ([v1(user="alice", group="ops", namespace="*", resource="*", apiGroup="*")], res(ALICE, "get"), False),
        ([v1(user="bob", group="ops", namespace="*", resource="*", apiGroup="*")], res(BOB, "get"), True),
        ([v1(group="*", namespace="*", resource="*", apiGroup="*", readonly=True)], res(BOB, "get"), True),
        ([v1(group="*", namespace="*", resource="*", apiGroup="*", readonly=True)], res(ANON, "get"), False),
        ([v1(user="alice", namespace="ns1", resource="pods")], res(ALICE, "get", namespace=""), False),
        ([BOB_READ_PROJECT, EVERYTHING], res(ALICE, "delete"), True),  # any policy may allow
        # Unversioned (v0) lines, converted as kube converts them.
        (['{"user": "alice"}'], res(ALICE, "delete", "anything", "any", "any.group"), True),
        (['{"user": "alice"}'], url(ALICE, "/metrics", "post"), True),
        (['{"readonly": true}'], res(BOB, "get"), True),  # no subject: every authenticated user
        (['{"readonly": true}'], res(BOB, "create"), False),
        (['{"readonly": true}'], res(ANON, "get"), False),
        (['{"user": "bob", "namespace": "ns1"}'], res(BOB, "delete"), True),
        (['{"user": "bob", "namespace": "ns1"}'], url(BOB, "/version"), False),  # namespaced: no paths
        (['{"user": "*", "resource": "pods"}'], res(ALICE, "get", group="any"), True),
    ],
)
async def test_matching(lines: list[str], attributes: Attributes, allowed: bool) -> None:
    result = await ABACAuthorizer(parse(lines)).authorize(attributes)
    if allowed:
        assert result.decision == Decision.ALLOW
    else:
        assert (result.decision, result.reason) == (Decision.NO_OPINION, "No policy matched.")
    assert result.cacheable


@pytest.mark.parametrize(
    ("line", "policy"),
    [
        (v1(user="*", readonly=True, nonResourcePath="*"),
         Policy("", "system:authenticated", True, non_resource_path="*")),
        (v1(user="u", group="g", apiGroup="apps", resource="deployments", namespace="n"),
         Policy("u", "g", False, "apps", "deployments", "n")),
        ('{"user": "u"}', Policy("u", "", False, "*", "*", "*", "*")),
        ('{"group": "*", "user": "u"}', Policy("", "system:authenticated", False, "*", "*", "*", "*")),
        ('{"apiVersion": "abac.authorization.kubernetes.io/v0", "kind": "Policy", "user": "u", "namespace": "n"}',
         Policy("u", "", False, "*", "*", "n", "")),
    ],
)
def test_parse_line(line: str, policy: Policy) -> None:
    assert parse_line(line) == policy


def test_file_comments_blank_lines_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "policy.jsonl"
    path.write_text(f"# who may do what\n\n{EVERYTHING}\n   \n{BOB_READ_PROJECT}\n")
    assert [p.user for p in load(str(path))] == ["alice", "bob"]
    for bad, reason in [("{not json", "line 3"),
                        (json.dumps({"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Other"}),
                         "unrecognized kind"),
                        (json.dumps({"apiVersion": "abac.authorization.kubernetes.io/v9", "kind": "Policy"}),
                         "no kind"),
                        (v1(user=["alice"]), "user must be a string"),
                        ("[1, 2]", "JSON object")]:
        path.write_text(f"# header\n{EVERYTHING}\n{bad}\n")
        with pytest.raises(PolicyLoadError, match=reason) as info:
            load(str(path))
        assert str(info.value).startswith(f"error reading policy file {path}, line 3: ")


def test_rules_for() -> None:
    authorizer = ABACAuthorizer(parse([EVERYTHING, BOB_READ_PROJECT, ANY_READ_NONRESOURCE,
                                       v1(user="alice", namespace="other", resource="secrets")]))
    rules = authorizer.rules_for(ALICE, "ns1")
    assert rules.resource_rules == ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},)
    assert rules.non_resource_rules == ()  # as kube: a policy's namespace ("" here) also scopes its path
    assert not rules.incomplete
    cluster = authorizer.rules_for(ALICE, "")
    assert cluster.non_resource_rules == ({"verbs": ["get", "list", "watch"], "nonResourceURLs": ["*"]},)
    bob = authorizer.rules_for(BOB, "projectCaribou")
    assert bob.resource_rules == ({"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]},)
