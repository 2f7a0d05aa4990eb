"""RBAC privilege-escalation prevention: roles, cluster roles and bindings written by users of varying power."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from services.authz import union
from services.authz.escalation import EscalationChecker
from services.authz.policy import PolicyIndex
from services.authz.rbac import RBACAuthorizer

from .objects import binding, role, rule, subject

G = "rbac.authorization.k8s.io"
ALICE = UserInfo("alice", "", ("dev", "system:authenticated"))
ROOT = UserInfo("root", "", ("system:masters",))
ESCALATOR = UserInfo("esc", "", ("system:authenticated",))
BINDER = UserInfo("binder", "", ("system:authenticated",))

POLICY: list[tuple[str, dict[str, Any]]] = [
    ("clusterroles", role("pod-reader", [rule(["get", "list"], [""], ["pods"])])),
    ("clusterroles", role("secret-reader", [rule(["get"], [""], ["secrets"])])),
    ("clusterroles", role("rbac-writer", [rule(["create", "update", "patch"], [G], ["*"])])),
    ("clusterroles", role("escalate", [rule(["escalate"], [G], ["roles", "clusterroles"])])),
    ("clusterroles", role("bind-secret-reader", [rule(["bind"], [G], ["clusterroles"], ["secret-reader"])])),
    ("roles", role("cm-writer", [rule(["update"], [""], ["configmaps"])], "demo")),
    ("clusterrolebindings", binding("alice-pods", "ClusterRole", "pod-reader", [subject("User", "alice")])),
    ("rolebindings", binding("alice-cm", "Role", "cm-writer", [subject("User", "alice")], "demo")),
    ("clusterrolebindings", binding("esc", "ClusterRole", "escalate", [subject("User", "esc")])),
    ("rolebindings", binding("binder", "ClusterRole", "bind-secret-reader", [subject("User", "binder")], "demo")),
]


@pytest.fixture(scope="module")
def checker() -> EscalationChecker:
    index = PolicyIndex()
    for resource in ("roles", "clusterroles", "rolebindings", "clusterrolebindings"):
        index.replace(resource, [o for r, o in POLICY if r == resource], 1)
    return EscalationChecker(union.build(["RBAC"], {"RBAC": lambda: RBACAuthorizer(index)}), index)


def write(user: UserInfo, resource: str, namespace: str = "", verb: str = "create") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, api_group=G, api_version="v1",
                      resource=resource, namespace=namespace)


OK, FORBIDDEN, NOT_FOUND = 0, 403, 404


@pytest.mark.parametrize(
    ("user", "resource", "namespace", "obj", "outcome"),
    [
        # Roles: only what the writer holds, in that scope.
        (ALICE, "roles", "demo", role("r", [rule(["get"], [""], ["pods"])], "demo"), OK),
        (ALICE, "roles", "demo", role("r", [rule(["update"], [""], ["configmaps"])], "demo"), OK),
        (ALICE, "roles", "other", role("r", [rule(["update"], [""], ["configmaps"])], "other"), FORBIDDEN),
        (ALICE, "roles", "demo", role("r", [rule(["get"], [""], ["secrets"])], "demo"), FORBIDDEN),
        (ALICE, "roles", "demo", role("r", [rule(["get", "delete"], [""], ["pods"])], "demo"), FORBIDDEN),
        (ALICE, "clusterroles", "", role("r", [rule(["get"], [""], ["pods"], ["one"])]), OK),
        (ALICE, "clusterroles", "", role("r", [rule(["update"], [""], ["configmaps"])]), FORBIDDEN),
        (ALICE, "clusterroles", "", role("r", [rule(["get"], urls=["/metrics"])]), FORBIDDEN),
        (ALICE, "clusterroles", "", {**role("agg", []), "aggregationRule": {"clusterRoleSelectors": [{}]}}, FORBIDDEN),
        # escalate verb and system:masters bypass the check.
        (ESCALATOR, "clusterroles", "", role("r", [rule(["*"], ["*"], ["*"])]), OK),
        (ROOT, "clusterroles", "", role("r", [rule(["*"], ["*"], ["*"])]), OK),
        # Bindings: the referenced role's rules must be held in the binding's scope, or `bind` granted.
        (ALICE, "rolebindings", "demo", binding("b", "ClusterRole", "pod-reader", [subject("User", "bob")], "demo"),
         OK),
        (ALICE, "rolebindings", "demo", binding("b", "Role", "cm-writer", [subject("User", "bob")], "demo"), OK),
        (ALICE, "rolebindings", "demo", binding("b", "ClusterRole", "secret-reader", [subject("User", "bob")],
                                                "demo"), FORBIDDEN),
        (ALICE, "clusterrolebindings", "", binding("b", "ClusterRole", "secret-reader", [subject("User", "bob")]),
         FORBIDDEN),
        (ALICE, "rolebindings", "demo", binding("b", "ClusterRole", "missing", [subject("User", "bob")], "demo"),
         NOT_FOUND),
        (BINDER, "rolebindings", "demo", binding("b", "ClusterRole", "secret-reader", [subject("User", "bob")],
                                                 "demo"), OK),
        (BINDER, "rolebindings", "other", binding("b", "ClusterRole", "secret-reader", [subject("User", "bob")],
                                                  "other"), FORBIDDEN),
        (BINDER, "rolebindings", "demo", binding("b", "ClusterRole", "pod-reader", [subject("User", "bob")], "demo"),
         FORBIDDEN),
        (ESCALATOR, "clusterrolebindings", "", binding("b", "ClusterRole", "secret-reader", [subject("User", "x")]),
         FORBIDDEN),
        (ROOT, "clusterrolebindings", "", binding("b", "ClusterRole", "secret-reader", [subject("User", "x")]), OK),
    ],
)
async def test_escalation(checker: EscalationChecker, user: UserInfo, resource: str, namespace: str,
                          obj: dict[str, Any], outcome: int) -> None:
    if outcome == OK:
        await checker.check(write(user, resource, namespace), obj, None)
        return
    with pytest.raises(errors.StatusError) as info:
        await checker.check(write(user, resource, namespace), obj, None)
    assert info.value.code == outcome


async def test_forbidden_message_is_kubes(checker: EscalationChecker) -> None:
    obj = role("r", [rule(["get", "list"], [""], ["secrets", "pods"])], "demo")
    with pytest.raises(errors.StatusError) as info:
        await checker.check(write(ALICE, "roles", "demo"), obj, None)
    assert info.value.message == (
        'roles.rbac.authorization.k8s.io "r" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is '
        'attempting to grant RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}')
    agg = {**role("agg", []), "aggregationRule": {"clusterRoleSelectors": [{}]}}
    with pytest.raises(errors.StatusError) as info:
        await checker.check(write(ALICE, "clusterroles"), agg, None)
    assert info.value.message.endswith("must have cluster-admin privileges to use the aggregationRule")


async def test_only_garbage_collector_fields_skip_the_check(checker: EscalationChecker) -> None:
    """kube's IsOnlyMutatingGCFields: ownerReferences and finalizers may change freely; anything else, labels
    included (a label can aggregate a ClusterRole into admin/edit/view), is checked like a create."""
    old = role("big", [rule(["*"], ["*"], ["*"])])
    gc = {**old, "metadata": {**old["metadata"], "finalizers": ["x/y"], "ownerReferences": [{"name": "o"}],
                              "resourceVersion": "7", "managedFields": [{"manager": "m"}]}}
    await checker.check(write(ALICE, "clusterroles", verb="update"), gc, old)
    relabelled = {**old, "metadata": {**old["metadata"], "labels": {
        "rbac.authorization.k8s.io/aggregate-to-view": "true"}}}
    with pytest.raises(errors.StatusError) as info:
        await checker.check(write(ALICE, "clusterroles", verb="update"), relabelled, old)
    assert info.value.code == 403 and "attempting to grant RBAC permissions not currently held" in info.value.message
    bound = binding("b", "ClusterRole", "secret-reader", [subject("User", "x")])
    await checker.check(write(ALICE, "clusterrolebindings", verb="patch"),
                        {**bound, "metadata": {**bound["metadata"], "finalizers": ["x/y"]}}, bound)
    with pytest.raises(errors.StatusError):
        await checker.check(write(ALICE, "clusterrolebindings", verb="patch"),
                            {**bound, "metadata": {**bound["metadata"], "labels": {"a": "b"}}}, bound)
    with pytest.raises(errors.StatusError):
        await checker.check(write(ALICE, "clusterrolebindings", verb="patch"),
                            {**bound, "subjects": [subject("User", "alice")]}, bound)


async def test_other_resources_and_unsynced_policy() -> None:
    index = PolicyIndex()
    checker = EscalationChecker(union.build(["RBAC"], {"RBAC": lambda: RBACAuthorizer(index)}), index)
    configmaps = Attributes(user=ALICE, verb="create", resource_request=True, resource="configmaps", namespace="d")
    await checker.check(configmaps, {"metadata": {"name": "x"}}, None)
    with pytest.raises(errors.StatusError) as info:
        await checker.check(write(ALICE, "roles", "demo"), role("r", [], "demo"), None)
    assert info.value.code == 503
