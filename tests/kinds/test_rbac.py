"""Role, ClusterRole, RoleBinding and ClusterRoleBinding defaults and validation (kapi.kinds.rbac), rule by rule.

Each row is one of kube's rules (pkg/apis/rbac/validation, v1 defaults.go) with its field path and message; the
bootstrap policy and the tenant controller's bindings must stay valid.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.kinds import strategy_for
from services.authz import bootstrap
from services.controllers.loops import tenantrbac

G = "rbac.authorization.k8s.io"
ROLE, CLUSTER_ROLE = strategy_for(G, "Role"), strategy_for(G, "ClusterRole")
BINDING, CLUSTER_BINDING = strategy_for(G, "RoleBinding"), strategy_for(G, "ClusterRoleBinding")
STRATEGIES = {"Role": ROLE, "ClusterRole": CLUSTER_ROLE, "RoleBinding": BINDING, "ClusterRoleBinding": CLUSTER_BINDING}
PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
REF = {"apiGroup": G, "kind": "ClusterRole", "name": "view"}


def causes(kind: str, obj: dict[str, Any]) -> list[tuple[str, str]]:
    obj = {"apiVersion": f"{G}/v1", "kind": kind, **copy.deepcopy(obj)}
    strategy = STRATEGIES[kind]
    strategy.default(obj)
    return [(c.field, c.message) for c in strategy.validate(obj)]


@pytest.mark.parametrize(("kind", "rules", "expected"), [
    ("Role", [PODS], []),
    ("Role", [{}], [
        ("rules[0].verbs", "Required value: verbs must contain at least one value"),
        ("rules[0].apiGroups", "Required value: resource rules must supply at least one api group"),
        ("rules[0].resources", "Required value: resource rules must supply at least one resource")]),
    ("Role", [{**PODS, "verbs": []}], [("rules[0].verbs", "Required value: verbs must contain at least one value")]),
    ("Role", [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
     [("rules[0].nonResourceURLs",
       'Invalid value: []string{"/healthz"}: namespaced rules cannot apply to non-resource URLs')]),
    ("ClusterRole", [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez"]}], []),
    ("ClusterRole", [{"verbs": ["get"], "nonResourceURLs": ["/healthz"], "resourceNames": ["x"]}],
     [("rules[0].nonResourceURLs",
       'Invalid value: []string{"/healthz"}: rules cannot apply to both regular resources and non-resource URLs')]),
    ("Role", [{"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]}], [
        ("rules[0].nonResourceURLs",
         'Invalid value: []string{"/x"}: namespaced rules cannot apply to non-resource URLs'),
        ("rules[0].nonResourceURLs",
         'Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs')]),
    ("ClusterRole", [PODS, {"verbs": ["*"], "resources": ["*"]}],
     [("rules[1].apiGroups", "Required value: resource rules must supply at least one api group")]),
    ("ClusterRole", [{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments", "replicasets"],
                      "resourceNames": ["web"]}], []),
])
def test_rules(kind: str, rules: list[dict[str, Any]], expected: list[tuple[str, str]]) -> None:
    meta = {"name": "r", "namespace": "demo"} if kind == "Role" else {"name": "r"}
    assert causes(kind, {"metadata": meta, "rules": rules}) == expected


@pytest.mark.parametrize(("aggregation", "expected"), [
    ({"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}, []),
    ({"clusterRoleSelectors": []}, [("aggregationRule.clusterRoleSelectors",
                                     "Required value: at least one clusterRoleSelector required if aggregationRule "
                                     "is non-nil")]),
    ({}, [("aggregationRule.clusterRoleSelectors",
           "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil")]),
    ({"clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "Foo"}]}]}, [
        ("aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator",
         'Invalid value: "Foo": not a valid selector operator'),
        ("aggregationRule.clusterRoleSelectors[0]", 'Invalid value: "null": invalid label selector.')]),
])
def test_aggregation_rule(aggregation: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert causes("ClusterRole", {"metadata": {"name": "r"}, "aggregationRule": aggregation}) == expected


def test_binding_defaults() -> None:
    obj = {"metadata": {"name": "b", "namespace": "demo"}, "roleRef": {"kind": "Role", "name": "r"},
           "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                        {"kind": "ServiceAccount", "name": "sa"}, {"kind": "Other", "name": "x"}]}
    BINDING.default(obj)
    assert obj["roleRef"] == {"apiGroup": G, "kind": "Role", "name": "r"}
    assert [s.get("apiGroup") for s in obj["subjects"]] == [G, G, None, None]
    bare: dict[str, Any] = {"metadata": {"name": "b"}}
    CLUSTER_BINDING.default(bare)
    assert bare["roleRef"] == {"apiGroup": G}


SA = {"kind": "ServiceAccount", "name": "builder", "namespace": "demo"}


@pytest.mark.parametrize(("kind", "ref", "subjects", "expected"), [
    ("RoleBinding", REF, [SA, {"kind": "User", "name": "alice"}], []),
    ("RoleBinding", {**REF, "kind": "Role"}, [{"kind": "ServiceAccount", "name": "builder"}], []),
    ("RoleBinding", {**REF, "apiGroup": "evil.io"}, [],
     [("roleRef.apiGroup", 'Unsupported value: "evil.io": supported values: "rbac.authorization.k8s.io"')]),
    ("RoleBinding", {**REF, "kind": "Foo"}, [],
     [("roleRef.kind", 'Unsupported value: "Foo": supported values: "Role", "ClusterRole"')]),
    ("ClusterRoleBinding", {**REF, "kind": "Role"}, [],
     [("roleRef.kind", 'Unsupported value: "Role": supported values: "ClusterRole"')]),
    ("RoleBinding", {**REF, "name": ""}, [], [("roleRef.name", "Required value")]),
    ("ClusterRoleBinding", {**REF, "name": "a/b"}, [],
     [("roleRef.name", "Invalid value: \"a/b\": may not contain '/'")]),
    ("RoleBinding", None, [], [("roleRef.kind", 'Unsupported value: "": supported values: "Role", "ClusterRole"'),
                               ("roleRef.name", "Required value")]),
    ("ClusterRoleBinding", REF, [{"kind": "ServiceAccount", "name": "builder"}],
     [("subjects[0].namespace", "Required value")]),
    ("RoleBinding", REF, [{**SA, "apiGroup": G}],
     [("subjects[0].apiGroup", 'Unsupported value: "rbac.authorization.k8s.io": supported values: ""')]),
    ("RoleBinding", REF, [{**SA, "name": "Bad_Name"}],
     [("subjects[0].name", 'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case '
                           "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                           "character (e.g. 'example.com', regex used for validation is "
                           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
    ("RoleBinding", REF, [{"kind": "User", "name": "alice", "apiGroup": "evil.io"}],
     [("subjects[0].apiGroup", 'Unsupported value: "evil.io": supported values: "rbac.authorization.k8s.io"')]),
    ("RoleBinding", REF, [{"kind": "Group", "name": ""}], [("subjects[0].name", "Required value")]),
    ("ClusterRoleBinding", REF, [{"kind": "Robot", "name": "r2"}, {"name": "x"}], [
        ("subjects[0].kind", 'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'),
        ("subjects[1].kind", 'Unsupported value: "": supported values: "ServiceAccount", "User", "Group"')]),
])
def test_bindings(kind: str, ref: dict[str, Any] | None, subjects: list[dict[str, Any]],
                  expected: list[tuple[str, str]]) -> None:
    meta = {"name": "b", "namespace": "demo"} if kind == "RoleBinding" else {"name": "b"}
    obj: dict[str, Any] = {"metadata": meta, "subjects": subjects}
    if ref is not None:
        obj["roleRef"] = ref
    assert causes(kind, obj) == expected


@pytest.mark.parametrize("kind", ["RoleBinding", "ClusterRoleBinding"])
def test_role_ref_is_immutable(kind: str) -> None:
    strategy = STRATEGIES[kind]
    old = {"metadata": {"name": "b"}, "roleRef": REF, "subjects": [SA]}
    assert strategy.validate_update({**old, "subjects": []}, old) == []
    changed = strategy.validate_update({**old, "roleRef": {**REF, "name": "edit"}}, old)
    assert [(c.field, c.message) for c in changed] == [
        ("roleRef", 'Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", '
                    'Name:"edit"}: cannot change roleRef')]


def test_bootstrap_policy_and_tenant_bindings_are_valid() -> None:
    objects = [*bootstrap.default_objects(), *bootstrap.namespaced_objects()]
    objects += [("rolebindings", tenantrbac.binding("team-a", [{"apiGroup": G, "kind": "User", "name": "alice"}])),
                ("clusterrolebindings", tenantrbac.provisioning_binding())]
    for _, obj in objects:
        assert causes(obj["kind"], obj) == [], obj["metadata"]["name"]


async def test_admission_reports_kube_messages_not_the_schema_required() -> None:
    from kapi import errors, jsonutil
    from kapi.attributes import Attributes, UserInfo
    from services.admission.chain import Chain
    from services.admission.pipeline import Admitter

    role = {"apiVersion": f"{G}/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "demo"}, "rules": [{}]}
    attrs = Attributes(UserInfo("alice"), "create", True, api_group=G, api_version="v1", resource="roles",
                       namespace="demo", name="r")
    with pytest.raises(errors.StatusError) as err:
        await Admitter(Chain([])).admit("CREATE", attrs, "Role", jsonutil.dumps(role))
    assert err.value.message == (
        'Role.rbac.authorization.k8s.io "r" is invalid: [rules[0].verbs: Required value: verbs must contain at least '
        "one value, rules[0].apiGroups: Required value: resource rules must supply at least one api group, "
        "rules[0].resources: Required value: resource rules must supply at least one resource]")
