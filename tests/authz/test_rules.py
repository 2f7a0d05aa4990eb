"""RulesFor, rule coverage (escalation prevention) and kube's compact rule strings (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.attributes import UserInfo
from services.authz.policy import PolicyIndex
from services.authz.rbac import PolicyRule, rules_for
from services.authz.rules import compact, compact_string, covers

from .objects import binding, role, rule, subject

ALICE = UserInfo("alice", "", ("dev", "system:authenticated"))


def pr(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None,
       names: list[str] | None = None, urls: list[str] | None = None) -> PolicyRule:
    return PolicyRule.from_json(rule(verbs, groups, resources, names, urls))


@pytest.mark.parametrize(
    ("owner", "servant", "covered"),
    [
        ([pr(["*"], ["*"], ["*"])], pr(["get", "delete"], ["apps"], ["deployments"]), True),
        ([pr(["get"], [""], ["pods"])], pr(["get"], [""], ["pods"]), True),
        ([pr(["get"], [""], ["pods"])], pr(["get", "list"], [""], ["pods"]), False),
        ([pr(["get"], [""], ["pods"]), pr(["list"], [""], ["pods"])], pr(["get", "list"], [""], ["pods"]), True),
        ([pr(["get"], [""], ["pods"])], pr(["get"], ["apps"], ["pods"]), False),
        ([pr(["get"], [""], ["pods"])], pr(["get"], [""], ["pods/log"]), False),
        ([pr(["get"], [""], ["*/log"])], pr(["get"], [""], ["pods/log"]), True),
        ([pr(["get"], [""], ["pods"], ["a"])], pr(["get"], [""], ["pods"]), False),
        ([pr(["get"], [""], ["pods"], ["a", "b"])], pr(["get"], [""], ["pods"], ["a"]), True),
        ([pr(["get"], [""], ["pods"])], pr(["get"], [""], ["pods"], ["a"]), True),
        ([pr(["get"], urls=["/logs/*"])], pr(["get"], urls=["/logs/x"]), True),
        ([pr(["get"], urls=["/logs/*"])], pr(["get"], urls=["/metrics"]), False),
        ([pr(["*"], urls=["*"])], pr(["get", "post"], urls=["/anything"]), True),
        ([pr(["*"], ["*"], ["*"])], pr(["get"], urls=["/healthz"]), False),
        ([], pr(["get"], [""], ["pods"]), False),
    ],
)
def test_covers(owner: list[PolicyRule], servant: PolicyRule, covered: bool) -> None:
    ok, missing = covers(owner, [servant])
    assert ok is covered
    assert bool(missing) is not covered


def test_missing_rules_compact_to_kube_strings() -> None:
    _, missing = covers([pr(["get"], [""], ["pods"])], [pr(["get", "list"], ["", "apps"], ["pods"], ["x"]),
                                                       pr(["get"], urls=["/metrics"])])
    assert sorted(compact_string(r) for r in compact(missing)) == [
        '{APIGroups:[""], Resources:["pods"], ResourceNames:["x"], Verbs:["list"]}',
        '{APIGroups:["apps"], Resources:["pods"], ResourceNames:["x"], Verbs:["get" "list"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ]


def _index(objects: list[tuple[str, dict[str, Any]]]) -> PolicyIndex:
    index = PolicyIndex()
    for resource in ("roles", "clusterroles", "rolebindings", "clusterrolebindings"):
        index.replace(resource, [o for r, o in objects if r == resource], 1)
    return index


def test_rules_for_visits_cluster_bindings_then_namespace_bindings() -> None:
    index = _index([
        ("clusterroles", role("reader", [rule(["get"], [""], ["pods"]), rule(["get"], urls=["/healthz"])])),
        ("roles", role("writer", [rule(["update"], [""], ["configmaps"])], "demo")),
        ("clusterrolebindings", binding("r", "ClusterRole", "reader", [subject("Group", "dev")])),
        ("rolebindings", binding("w", "Role", "writer", [subject("User", "alice")], "demo")),
        ("rolebindings", binding("gone", "Role", "missing", [subject("User", "alice")], "demo")),
        ("rolebindings", binding("other", "Role", "writer", [subject("User", "alice")], "elsewhere")),
    ])
    cluster = rules_for(index, ALICE, "")
    assert [r.to_json() for r in cluster.rules] == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
        {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]
    assert cluster.errors == ()
    demo = rules_for(index, ALICE, "demo")
    assert [r.to_json() for r in demo.rules][2:] == [
        {"verbs": ["update"], "apiGroups": [""], "resources": ["configmaps"]}]
    assert demo.errors == ('role.rbac.authorization.k8s.io "missing" not found',)
    assert rules_for(index, UserInfo("bob"), "demo").rules == ()
