"""RBAC rule matching and the RBAC authorizer over an in-memory policy index (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from services.authz.authorizer import Decision
from services.authz.policy import PolicyIndex
from services.authz.rbac import PolicyRule, RBACAuthorizer, Subject, applies_to, describe_subject

from .objects import binding, role, rule, subject

ALICE = UserInfo("alice", "", ("dev", "system:authenticated"))


def res(verb: str, resource: str, *, group: str = "", sub: str = "", ns: str = "", name: str = "",
        user: UserInfo = ALICE) -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, api_group=group, api_version="v1",
                      resource=resource, subresource=sub, namespace=ns, name=name)


def nonres(verb: str, path: str, user: UserInfo = ALICE) -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=False, path=path)


@pytest.mark.parametrize(
    ("rule_", "attributes", "allowed"),
    [
        # verbs
        (rule(["get"], [""], ["pods"]), res("get", "pods"), True),
        (rule(["get"], [""], ["pods"]), res("list", "pods"), False),
        (rule(["*"], [""], ["pods"]), res("deletecollection", "pods"), True),
        (rule([], [""], ["pods"]), res("get", "pods"), False),
        # API groups
        (rule(["get"], [""], ["deployments"]), res("get", "deployments", group="apps"), False),
        (rule(["get"], ["apps"], ["deployments"]), res("get", "deployments", group="apps"), True),
        (rule(["get"], ["*"], ["deployments"]), res("get", "deployments", group="apps"), True),
        (rule(["get"], [], ["pods"]), res("get", "pods"), False),
        # resources and subresources
        (rule(["get"], [""], ["*"]), res("get", "secrets"), True),
        (rule(["get"], [""], ["*"]), res("get", "pods", sub="log"), True),
        (rule(["get"], [""], ["pods"]), res("get", "pods", sub="log"), False),
        (rule(["get"], [""], ["pods/log"]), res("get", "pods", sub="log"), True),
        (rule(["get"], [""], ["pods/log"]), res("get", "pods"), False),
        (rule(["update"], ["apps"], ["*/scale"]), res("update", "deployments", group="apps", sub="scale"), True),
        (rule(["update"], ["apps"], ["*/scale"]), res("update", "deployments", group="apps"), False),
        (rule(["update"], ["apps"], ["*/scale"]), res("update", "deployments", group="apps", sub="status"), False),
        (rule(["update"], ["apps"], ["*/scal"]), res("update", "deployments", group="apps", sub="scale"), False),
        (rule(["update"], ["apps"], ["deployments/*"]), res("update", "deployments", group="apps", sub="scale"), False),
        # resourceNames
        (rule(["get"], [""], ["configmaps"], ["app"]), res("get", "configmaps", name="app"), True),
        (rule(["get"], [""], ["configmaps"], ["app"]), res("get", "configmaps", name="other"), False),
        (rule(["list"], [""], ["configmaps"], ["app"]), res("list", "configmaps"), False),
        (rule(["create"], [""], ["configmaps"], ["app"]), res("create", "configmaps"), False),
        (rule(["watch"], [""], ["configmaps"], ["app"]), res("watch", "configmaps", name="app"), True),
        (rule(["get"], [""], ["configmaps"], []), res("get", "configmaps", name="any"), True),
        # non-resource URLs
        (rule(["get"], urls=["/healthz"]), nonres("get", "/healthz"), True),
        (rule(["get"], urls=["/healthz"]), nonres("get", "/healthz/etcd"), False),
        (rule(["get"], urls=["/healthz*"]), nonres("get", "/healthz/etcd"), True),
        (rule(["get"], urls=["/apis/*"]), nonres("get", "/apis/apps/v1"), True),
        (rule(["get"], urls=["/apis/*"]), nonres("get", "/apis"), False),
        (rule(["get"], urls=["/apis/**"]), nonres("get", "/apis/"), True),
        (rule(["get"], urls=["*"]), nonres("get", "/anything"), True),
        (rule(["get"], urls=["/healthz"]), nonres("post", "/healthz"), False),
        # a resource rule never allows a non-resource request and vice versa
        (rule(["*"], ["*"], ["*"]), nonres("get", "/healthz"), False),
        (rule(["*"], urls=["*"]), res("get", "pods"), False),
    ],
)
def test_rule_allows(rule_: dict[str, Any], attributes: Attributes, allowed: bool) -> None:
    assert PolicyRule.from_json(rule_).allows(attributes) is allowed


SA = UserInfo("system:serviceaccount:demo:builder", "", ("system:serviceaccounts", "system:serviceaccounts:demo"))


@pytest.mark.parametrize(
    ("user", "subject_", "namespace", "applies"),
    [
        (ALICE, Subject("User", "alice"), "", True),
        (ALICE, Subject("User", "bob"), "", False),
        (ALICE, Subject("Group", "dev"), "", True),
        (ALICE, Subject("Group", "alice"), "", False),
        (SA, Subject("ServiceAccount", "builder", "demo"), "", True),
        (SA, Subject("ServiceAccount", "builder", "other"), "", False),
        (SA, Subject("ServiceAccount", "builder"), "demo", True),  # RoleBinding namespace defaults
        (SA, Subject("ServiceAccount", "builder"), "", False),  # ClusterRoleBinding: no namespace, no match
        (SA, Subject("User", "system:serviceaccount:demo:builder"), "", True),
        (SA, Subject("Group", "system:serviceaccounts:demo"), "", True),
        (ALICE, Subject("Robot", "alice"), "", False),
    ],
)
def test_applies_to(user: UserInfo, subject_: Subject, namespace: str, applies: bool) -> None:
    assert applies_to(user, subject_, namespace) is applies


def test_describe_subject() -> None:
    assert describe_subject(Subject("ServiceAccount", "builder"), "demo") == 'ServiceAccount "builder/demo"'
    assert describe_subject(Subject("ServiceAccount", "b", "x"), "demo") == 'ServiceAccount "b/x"'
    assert describe_subject(Subject("Group", "dev"), "demo") == 'Group "dev"'


def policy() -> PolicyIndex:
    index = PolicyIndex()
    index.replace("clusterroles", [
        role("pod-reader", [rule(["get", "list", "watch"], [""], ["pods", "pods/log"])]),
        role("healthz", [rule(["get"], urls=["/healthz", "/metrics"]), rule(["get"], [""], ["nodes"])]),
        role("scaler", [rule(["get", "update"], ["apps"], ["*/scale"])]),
    ], 10)
    index.replace("roles", [
        role("cm-app", [rule(["get", "update"], [""], ["configmaps"], ["app"])], namespace="demo"),
        role("secret-reader", [rule(["get"], [""], ["secrets"])], namespace="demo"),
        role("metrics", [rule(["get"], urls=["/metrics"])], namespace="demo"),
    ], 11)
    index.replace("clusterrolebindings", [
        binding("devs-read-pods", "ClusterRole", "pod-reader", [subject("User", "zed"), subject("Group", "dev")]),
        binding("ops-healthz", "ClusterRole", "healthz", [subject("Group", "ops")]),
        binding("sa-scaler", "ClusterRole", "scaler", [subject("ServiceAccount", "builder", "demo")]),
        binding("sa-no-ns", "ClusterRole", "pod-reader", [subject("ServiceAccount", "lonely")]),
        binding("dangling", "ClusterRole", "does-not-exist", [subject("User", "ghost")]),
        binding("crb-to-role", "Role", "secret-reader", [subject("User", "sneaky")]),
    ], 12)
    index.replace("rolebindings", [
        binding("alice-cm", "Role", "cm-app", [subject("User", "alice")], namespace="demo"),
        binding("carol-pods", "ClusterRole", "pod-reader", [subject("User", "carol")], namespace="demo"),
        binding("carol-healthz", "ClusterRole", "healthz", [subject("User", "carol")], namespace="demo"),
        binding("sa-secrets", "Role", "secret-reader", [subject("ServiceAccount", "builder")], namespace="demo"),
        binding("metrics", "Role", "metrics", [subject("User", "carol")], namespace="demo"),
        binding("ghost-role", "Role", "nope", [subject("User", "ghost")], namespace="demo"),
    ], 13)
    return index


BOB = UserInfo("bob", "", ("system:authenticated",))
CAROL = UserInfo("carol", "", ("system:authenticated",))
OPS = UserInfo("olga", "", ("ops", "system:authenticated"))
LONELY = UserInfo("system:serviceaccount:demo:lonely", "", ())
GHOST = UserInfo("ghost", "", ())
SNEAKY = UserInfo("sneaky", "", ())
ZED_DEV = UserInfo("zed", "", ("dev",))

ALLOW, NO = Decision.ALLOW, Decision.NO_OPINION


@pytest.mark.parametrize(
    ("attributes", "decision", "reason"),
    [
        (res("list", "pods", ns="demo"), ALLOW,
         'RBAC: allowed by ClusterRoleBinding "devs-read-pods" of ClusterRole "pod-reader" to Group "dev"'),
        (res("list", "pods"), ALLOW, None),  # cluster-wide list through a ClusterRoleBinding
        (res("get", "pods", sub="log", ns="x", name="p"), ALLOW, None),
        (res("delete", "pods", ns="demo", name="p"), NO, ""),
        (res("get", "pods", user=BOB, ns="demo"), NO, ""),
        # Role with resourceNames through a RoleBinding
        (res("get", "configmaps", ns="demo", name="app"), ALLOW,
         'RBAC: allowed by RoleBinding "alice-cm/demo" of Role "cm-app" to User "alice"'),
        (res("update", "configmaps", ns="demo", name="app"), ALLOW, None),
        (res("get", "configmaps", ns="demo", name="other"), NO, ""),
        (res("list", "configmaps", ns="demo"), NO, ""),
        (res("get", "configmaps", ns="other", name="app"), NO, ""),
        # RoleBinding -> ClusterRole grants only in the binding's namespace
        (res("list", "pods", ns="demo", user=CAROL), ALLOW,
         'RBAC: allowed by RoleBinding "carol-pods/demo" of ClusterRole "pod-reader" to User "carol"'),
        (res("list", "pods", ns="other", user=CAROL), NO, ""),
        (res("list", "pods", user=CAROL), NO, ""),
        # non-resource rules: only via ClusterRoleBinding
        (nonres("get", "/healthz", user=OPS), ALLOW,
         'RBAC: allowed by ClusterRoleBinding "ops-healthz" of ClusterRole "healthz" to Group "ops"'),
        (nonres("get", "/healthz", user=CAROL), NO, ""),
        (nonres("get", "/metrics", user=CAROL), NO, ""),
        (Attributes(user=CAROL, verb="get", resource_request=False, path="/metrics", namespace="demo"), NO, ""),
        # service accounts
        (res("update", "deployments", group="apps", sub="scale", ns="x", name="d", user=SA), ALLOW,
         'RBAC: allowed by ClusterRoleBinding "sa-scaler" of ClusterRole "scaler" to ServiceAccount "builder/demo"'),
        (res("get", "secrets", ns="demo", name="s", user=SA), ALLOW,
         'RBAC: allowed by RoleBinding "sa-secrets/demo" of Role "secret-reader" to ServiceAccount "builder/demo"'),
        (res("get", "secrets", ns="other", name="s", user=SA), NO, ""),
        (res("list", "pods", ns="demo", user=LONELY), NO, ""),
        # the first applying subject of a binding is the one named
        (res("list", "pods", user=ZED_DEV), ALLOW,
         'RBAC: allowed by ClusterRoleBinding "devs-read-pods" of ClusterRole "pod-reader" to User "zed"'),
        # a missing role is reported in the NoOpinion reason, like kube
        (res("get", "pods", ns="demo", user=GHOST), NO,
         'RBAC: [clusterrole.rbac.authorization.k8s.io "does-not-exist" not found, '
         'role.rbac.authorization.k8s.io "nope" not found]'),
        (res("get", "pods", ns="", user=GHOST), NO,
         'RBAC: clusterrole.rbac.authorization.k8s.io "does-not-exist" not found'),
        # a ClusterRoleBinding can only grant a ClusterRole
        (res("get", "secrets", ns="demo", name="s", user=SNEAKY), NO, ""),
    ],
)
async def test_rbac_authorizer(attributes: Attributes, decision: Decision, reason: str | None) -> None:
    result = await RBACAuthorizer(policy()).authorize(attributes)
    assert result.decision == decision, result
    if reason is not None:
        assert result.reason == reason


async def test_not_synced_fails_closed() -> None:
    index = PolicyIndex()
    index.replace("clusterroles", [], 1)
    index.replace("roles", [], 1)
    index.replace("rolebindings", [], 1)
    with pytest.raises(errors.StatusError) as info:
        await RBACAuthorizer(index).authorize(res("get", "pods"))
    assert (info.value.code, info.value.message) == (503, "authorization policy not yet synced")
    index.replace("clusterrolebindings", [], 1)
    assert (await RBACAuthorizer(index).authorize(res("get", "pods"))).decision == Decision.NO_OPINION
