"""kapi's bootstrap RBAC objects against kube-apiserver's (bootstrappolicy golden files, checked in as
``rbacboot_kube_policy.yaml``): each of kube's objects exists with exactly kube's rules (in kube's order),
subjects, labels and annotations; kapi's extra objects are a named list, each with the reason it exists."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from kapi.attributes import Attributes, UserInfo
from services.authz.authorizer import Decision
from services.authz.bootstrap import default_objects, namespaced_objects
from services.authz.node import NodeAuthorizer
from services.authz.policy import PolicyIndex
from services.authz.rbac import RBACAuthorizer

from .test_bootstrap import aggregated_defaults
from .test_node import graph_with

GOLDEN = yaml.safe_load((pathlib.Path(__file__).parent / "rbacboot_kube_policy.yaml").read_text())
LABELS = {"kubernetes.io/bootstrapping": "rbac-defaults"}
ANNOTATIONS = {"rbac.authorization.kubernetes.io/autoupdate": "true"}
KCM = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-controller-manager"}

# kapi-only ClusterRoles -> why kapi needs them (kube has none of these).
KAPI_ONLY_CLUSTER_ROLES = {
    "kapi:controller:tenant": "the tenancy loops bind namespace-creator in namespaces tenants create",
    "namespace-creator": "the role a tenant gets in a namespace it created (kapi.tenancy)",
    "kapi:namespace-provisioner": "--tenant-namespace-provisioning binds it to system:authenticated",
    "kapi:controller:apiservice-registration": "kube-apiserver's autoregister/crdregistration run as a kapi loop",
    "kapi:controller:resourcequota-reader": "the ResourceQuota loop GETs a quota before its status PUT",
}


def _rules(compact: list[list[Any]]) -> list[dict[str, Any]]:
    out = []
    for groups, resources, verbs, *names in compact:
        rule = {"apiGroups": groups, "resources": resources, "verbs": verbs}
        if names:
            rule["resourceNames"] = names[0]
        out.append(rule)
    return out


def _subject(text: str) -> dict[str, Any]:
    kind, name = text.split(":", 1)
    if kind == "ServiceAccount":
        namespace, name = name.split("/")
        return {"kind": kind, "name": name, "namespace": namespace}
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name}


def _norm(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if v} for r in rules]


OBJECTS = {(r, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
           for r, o in [*default_objects(), *namespaced_objects()]}


def _get(resource: str, name: str, namespace: str = "") -> dict[str, Any]:
    return OBJECTS[(resource, namespace, name)]


def _expected_cluster_roles() -> dict[str, list[dict[str, Any]]]:
    out = {name: _rules(rules) for name, rules in GOLDEN["cluster_roles"].items()}
    out.update({"system:controller:" + c: _rules(rules) for c, rules in GOLDEN["controller_roles"].items()})
    return out


@pytest.mark.parametrize(("name", "rules"), sorted(_expected_cluster_roles().items()))
def test_cluster_role_is_kubes(name: str, rules: list[dict[str, Any]]) -> None:
    role = _get("clusterroles", name)
    assert _norm(role["rules"]) == rules
    assert role["metadata"]["labels"] == LABELS
    assert role["metadata"]["annotations"] == ANNOTATIONS
    assert "aggregationRule" not in role


@pytest.mark.parametrize("controller", sorted(GOLDEN["controller_roles"]))
def test_controller_binding_is_kubes(controller: str) -> None:
    """controller_policy.go: system:controller:<c> binds only the ServiceAccount kube-system/<c>."""
    name = "system:controller:" + controller
    binding = _get("clusterrolebindings", name)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": controller, "namespace": "kube-system"}]
    assert binding["metadata"]["labels"] == LABELS and binding["metadata"]["annotations"] == ANNOTATIONS


def test_namespaced_objects_are_exactly_kubes() -> None:
    roles = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for r, o in namespaced_objects() if r == "roles"}
    assert {f"{ns}/{n}" for ns, n in roles} == set(GOLDEN["namespace_roles"])
    for key, rules in GOLDEN["namespace_roles"].items():
        role = roles[tuple(key.split("/", 1))]
        assert _norm(role["rules"]) == _rules(rules), key
        assert role["metadata"]["labels"] == LABELS and role["metadata"]["annotations"] == ANNOTATIONS
    bindings = {(o["metadata"]["namespace"], o["metadata"]["name"]): o
                for r, o in namespaced_objects() if r == "rolebindings"}
    assert {f"{ns}/{n}" for ns, n in bindings} == set(GOLDEN["namespace_role_bindings"])
    for key, (role_name, subjects) in GOLDEN["namespace_role_bindings"].items():
        binding = bindings[tuple(key.split("/", 1))]
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role_name}
        assert binding["subjects"] == [_subject(s) for s in subjects], key
        assert binding["metadata"]["labels"] == LABELS and binding["metadata"]["annotations"] == ANNOTATIONS


def test_kapi_only_objects_are_the_named_list() -> None:
    """No controller role or binding kube lacks; kapi's extras are the named roles plus, for each controller role
    a kapi loop uses, one binding of it to system:kube-controller-manager (kapi runs all loops as that user)."""
    controllers = {"system:controller:" + c for c in GOLDEN["controller_roles"]}
    roles = {n for r, _, n in OBJECTS if r == "clusterroles"}
    assert {n for n in roles if n.startswith("system:controller:")} == controllers
    assert set(KAPI_ONLY_CLUSTER_ROLES) <= roles
    assert not {n for n in roles if n.startswith("kapi:") or n == "namespace-creator"} - set(KAPI_ONLY_CLUSTER_ROLES)
    bindings = {n: o for (r, _, n), o in OBJECTS.items() if r == "clusterrolebindings"}
    assert {n for n in bindings if n.startswith("system:controller:")} == controllers
    loop_bindings = {n: o for n, o in bindings.items() if n.startswith("kapi:controller-manager:")}
    assert loop_bindings, "kapi's loops lost their grants"
    for name, binding in loop_bindings.items():
        assert binding["roleRef"]["name"] == "system:controller:" + name.removeprefix("kapi:controller-manager:")
        assert binding["subjects"] == [KCM]
    assert bindings["kapi:controller:resourcequota-reader"]["subjects"] == [KCM]
    assert _norm(_get("clusterroles", "kapi:controller:resourcequota-reader")["rules"]) == [
        {"apiGroups": [""], "resources": ["resourcequotas"], "verbs": ["get"]}]


def _index() -> PolicyIndex:
    index = PolicyIndex()
    objects = [*aggregated_defaults(), *namespaced_objects()]
    for resource in ("clusterroles", "clusterrolebindings", "roles", "rolebindings"):
        index.replace(resource, [o for r, o in objects if r == resource], 1)
    return index


def _sa(name: str) -> UserInfo:
    return UserInfo(f"system:serviceaccount:kube-system:{name}", "",
                    ("system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"))


def _res(user: UserInfo, verb: str, resource: str, group: str = "", ns: str = "demo", sub: str = "",
         name: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, api_group=group, api_version="v1",
                      resource=resource, subresource=sub, namespace=ns, name=name)


KCM_USER = UserInfo("system:kube-controller-manager", "", ("system:authenticated",))


@pytest.mark.parametrize(("attributes", "allowed"), [
    (_res(_sa("deployment-controller"), "update", "deployments", "apps", sub="status", name="d"), True),
    (_res(_sa("deployment-controller"), "delete", "secrets", name="s"), False),
    (_res(_sa("deployment-controller"), "create", "replicasets", "apps"), True),
    (_res(_sa("bootstrap-signer"), "update", "configmaps", ns="kube-public", name="cluster-info"), True),
    (_res(_sa("bootstrap-signer"), "update", "configmaps", ns="kube-public", name="other"), False),
    (_res(_sa("bootstrap-signer"), "list", "secrets", ns="kube-system"), True),
    (_res(_sa("bootstrap-signer"), "list", "secrets", ns="default"), False),
    (_res(_sa("leader-election-controller"), "update", "leasecandidates", "coordination.k8s.io",
          ns="kube-system", name="x"), True),
    (_res(_sa("resource-claim-controller"), "patch", "resourceclaims", "resource.k8s.io", sub="binding",
          name="c"), True),
    (_res(KCM_USER, "get", "resourcequotas", name="q"), True),
    (_res(KCM_USER, "update", "resourcequotas", sub="status", name="q"), True),
    (_res(KCM_USER, "create", "deployments", "apps"), False),
    (_res(KCM_USER, "delete", "secrets", name="s"), True),  # kube's system:kube-controller-manager
    (_res(KCM_USER, "delete", "configmaps", name="s"), True),  # kapi's namespace loop: namespace-controller
])
async def test_kube_grants(attributes: Attributes, allowed: bool) -> None:
    result = await RBACAuthorizer(_index()).authorize(attributes)
    assert (result.decision == Decision.ALLOW) is allowed, result


def test_system_node_is_kubes_plus_the_dra_claim_read() -> None:
    """policy.go NodeRules(): core events only (no events.k8s.io), get/list/watch secrets and configmaps (the
    Node authorizer narrows them to its pods' objects), get/patch/update persistentvolumeclaims/status."""
    rules = _norm(_get("clusterroles", "system:node")["rules"])
    assert rules == [*_rules(GOLDEN["system_node"]),
                     {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["get"]}]


NODE = UserInfo("system:node:n1", "", ("system:nodes", "system:authenticated"))


async def test_node_static_rules_grant_no_events_k8s_io_and_no_secret_listing() -> None:
    """The Node authorizer's static rules are system:node's: events.k8s.io Events are not a node's (kube's
    NodeRules use the core group only); listing secrets stays refused by the graph check."""
    authorizer = NodeAuthorizer(graph_with())
    denied = [_res(NODE, "create", "events", "events.k8s.io"), _res(NODE, "list", "secrets"),
              _res(NODE, "watch", "configmaps", ns="")]
    for attributes in denied:
        assert (await authorizer.authorize(attributes)).decision != Decision.ALLOW, attributes
    assert (await authorizer.authorize(_res(NODE, "create", "events"))).decision == Decision.ALLOW


DRA_EXTRA = {
    "system:aggregate-to-admin": [],
    "system:aggregate-to-edit": [{"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims",
                                                                                  "resourceclaimtemplates"],
                                  "verbs": ["create", "delete", "deletecollection", "patch", "update"]}],
    "system:aggregate-to-view": [{"apiGroups": ["resource.k8s.io"], "resources": [
        "resourceclaims", "resourceclaims/status", "resourceclaimtemplates"], "verbs": ["get", "list", "watch"]}],
}


@pytest.mark.parametrize("name", sorted(DRA_EXTRA))
def test_aggregated_from_roles_are_kubes_plus_dra(name: str) -> None:
    """policy.go: each rule as kube's (edit's leases one ReadWrite rule, was two), in kube's order."""
    role = _get("clusterroles", name)
    assert _norm(role["rules"]) == [*_rules(GOLDEN["aggregate_roles"][name]), *DRA_EXTRA[name]]
    assert role["metadata"]["labels"] == {**LABELS, "rbac.authorization.k8s.io/aggregate-to-"
                                          + name.removeprefix("system:aggregate-to-"): "true"}
