"""The default (bootstrap) RBAC policy: object shape and the access it grants."""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest

from kapi.attributes import Attributes, UserInfo
from services.authz.aggregation import aggregate
from services.authz.authorizer import Decision
from services.authz.bootstrap import default_objects
from services.authz.policy import PolicyIndex
from services.authz.rbac import RBACAuthorizer

from .objects import binding, subject


def test_object_shape() -> None:
    now = datetime.datetime(2031, 2, 3, 4, 5, 6, 789, tzinfo=datetime.UTC)
    objects = default_objects(now)
    kinds = {(r, o["kind"]) for r, o in objects}
    assert kinds == {("clusterroles", "ClusterRole"), ("clusterrolebindings", "ClusterRoleBinding")}
    names = {o["metadata"]["name"] for _, o in objects}
    assert {"cluster-admin", "system:discovery", "system:basic-user", "system:public-info-viewer", "admin", "edit",
            "view"} <= names
    uids = set()
    for _, obj in objects:
        meta = obj["metadata"]
        assert obj["apiVersion"] == "rbac.authorization.k8s.io/v1"
        assert meta["creationTimestamp"] == "2031-02-03T04:05:06Z"
        assert re.fullmatch(r"[0-9a-f-]{36}", meta["uid"])
        assert meta["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
        assert meta["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
        assert "resourceVersion" not in meta
        uids.add(meta["uid"])
    assert len(uids) == len(objects)
    bindings = {o["metadata"]["name"]: o for r, o in objects if r == "clusterrolebindings"}
    assert bindings["system:public-info-viewer"]["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:authenticated"},
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:unauthenticated"},
    ]
    assert bindings["cluster-admin"]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                                    "name": "cluster-admin"}


def aggregated_defaults() -> list[tuple[str, dict[str, Any]]]:
    """The defaults with admin/edit/view filled as the aggregator would (view before edit before admin)."""
    objects = default_objects()
    roles = {o["metadata"]["name"]: o for r, o in objects if r == "clusterroles"}
    for name in ("view", "edit", "admin"):
        roles[name]["rules"] = aggregate(name, roles[name]["aggregationRule"], roles)
    return objects


def bootstrap_index() -> PolicyIndex:
    index = PolicyIndex()
    objects = aggregated_defaults()
    for resource in ("clusterroles", "clusterrolebindings"):
        index.replace(resource, [o for r, o in objects if r == resource], 1)
    index.replace("roles", [], 1)
    index.replace("rolebindings", [
        binding("v", "ClusterRole", "view", [subject("User", "viewer")], "demo"),
        binding("e", "ClusterRole", "edit", [subject("User", "editor")], "demo"),
        binding("a", "ClusterRole", "admin", [subject("User", "owner")], "demo"),
    ], 1)
    return index


ANON = UserInfo("system:anonymous", "", ("system:unauthenticated",))
AUTHED = UserInfo("someone", "", ("system:authenticated",))
MASTER = UserInfo("root", "", ("system:masters", "system:authenticated"))
VIEWER = UserInfo("viewer", "", ("system:authenticated",))
EDITOR = UserInfo("editor", "", ("system:authenticated",))
OWNER = UserInfo("owner", "", ("system:authenticated",))


def nonres(user: UserInfo, path: str, verb: str = "get") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=False, path=path)


def res(user: UserInfo, verb: str, resource: str, group: str = "", ns: str = "demo", sub: str = "",
        name: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, api_group=group, api_version="v1",
                      resource=resource, subresource=sub, namespace=ns, name=name)


@pytest.mark.parametrize(
    ("attributes", "allowed"),
    [
        (nonres(ANON, "/healthz"), True),
        (nonres(ANON, "/version"), True),
        (nonres(ANON, "/readyz"), True),
        (nonres(ANON, "/api"), False),
        (nonres(ANON, "/apis/apps/v1"), False),
        (nonres(AUTHED, "/api"), True),
        (nonres(AUTHED, "/apis/apps/v1"), True),
        (nonres(AUTHED, "/openapi/v3"), True),
        (nonres(AUTHED, "/metrics"), False),
        (nonres(AUTHED, "/healthz", "post"), False),
        (res(AUTHED, "create", "selfsubjectaccessreviews", "authorization.k8s.io", ns=""), True),
        (res(AUTHED, "create", "selfsubjectreviews", "authentication.k8s.io", ns=""), True),
        (res(AUTHED, "list", "pods"), False),
        (res(ANON, "create", "selfsubjectaccessreviews", "authorization.k8s.io", ns=""), False),
        (res(MASTER, "delete", "nodes", ns=""), True),
        (res(MASTER, "escalate", "clusterroles", "rbac.authorization.k8s.io", ns=""), True),
        (nonres(MASTER, "/metrics"), True),
        (res(VIEWER, "list", "pods"), True),
        (res(VIEWER, "get", "pods", sub="log", name="p"), True),
        (res(VIEWER, "get", "deployments", "apps", sub="scale", name="d"), True),
        (res(VIEWER, "get", "secrets", name="s"), False),
        (res(VIEWER, "create", "configmaps"), False),
        (res(VIEWER, "list", "pods", ns="other"), False),
        (res(EDITOR, "get", "secrets", name="s"), True),
        (res(EDITOR, "create", "deployments", "apps"), True),
        (res(EDITOR, "update", "deployments", "apps", sub="scale", name="d"), True),
        (res(EDITOR, "create", "rolebindings", "rbac.authorization.k8s.io"), False),
        (res(OWNER, "create", "rolebindings", "rbac.authorization.k8s.io"), True),
        (res(OWNER, "create", "localsubjectaccessreviews", "authorization.k8s.io"), True),
        (res(OWNER, "delete", "namespaces", ns="", name="demo"), False),
    ],
)
async def test_bootstrap_grants(attributes: Attributes, allowed: bool) -> None:
    result = await RBACAuthorizer(bootstrap_index()).authorize(attributes)
    assert (result.decision == Decision.ALLOW) is allowed, result


async def test_reason_names_the_bootstrap_binding() -> None:
    result = await RBACAuthorizer(bootstrap_index()).authorize(nonres(ANON, "/healthz"))
    assert result.reason == ('RBAC: allowed by ClusterRoleBinding "system:public-info-viewer" of ClusterRole '
                             '"system:public-info-viewer" to Group "system:unauthenticated"')


def test_dra_and_volume_attributes_class_controller_roles_are_kubes() -> None:
    """controller_policy.go: resource-claim-controller (DynamicResourceAllocation) and
    volumeattributesclass-protection-controller (VolumeAttributesClass), both on by default."""
    roles = {o["metadata"]["name"]: o for r, o in default_objects() if r == "clusterroles"}
    events = {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]}
    assert roles["system:controller:resource-claim-controller"]["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["pods/finalizers"], "verbs": ["update"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"],
         "verbs": ["create", "delete", "get", "list", "watch"]},
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims", "resourceclaims/status"],
         "verbs": ["patch", "update"]},
        {"apiGroups": [""], "resources": ["pods/status"], "verbs": ["patch", "update"]},
        events,
        {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims/binding"], "verbs": ["patch", "update"]}]
    assert roles["system:controller:volumeattributesclass-protection-controller"]["rules"] == [
        {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["storage.k8s.io"], "resources": ["volumeattributesclasses"],
         "verbs": ["get", "list", "update", "watch"]},
        events]
    bindings = {o["metadata"]["name"]: o for r, o in default_objects() if r == "clusterrolebindings"}
    for name in ("system:controller:resource-claim-controller",
                 "system:controller:volumeattributesclass-protection-controller"):
        assert bindings[name]["roleRef"]["name"] == name
        # kapi runs the loops as system:kube-controller-manager: a kapi-only binding grants it the role
        assert bindings[name.replace("system:controller:", "kapi:controller-manager:")]["roleRef"]["name"] == name


CONTROLLER_MANAGER = UserInfo("system:kube-controller-manager", "", ("system:authenticated",))


@pytest.mark.parametrize(("attributes", "allowed"), [
    (res(CONTROLLER_MANAGER, "create", "resourceclaims", "resource.k8s.io"), True),
    (res(CONTROLLER_MANAGER, "patch", "resourceclaims", "resource.k8s.io", sub="status", name="c"), True),
    (res(CONTROLLER_MANAGER, "update", "pods", sub="finalizers", name="p"), True),
    (res(CONTROLLER_MANAGER, "update", "volumeattributesclasses", "storage.k8s.io", ns="", name="v"), True),
    (res(CONTROLLER_MANAGER, "create", "volumeattributesclasses", "storage.k8s.io", ns=""), False),
    (res(CONTROLLER_MANAGER, "create", "resourceslices", "resource.k8s.io", ns=""), False),
])
async def test_controller_manager_gets_the_dra_and_vac_controller_grants(attributes: Attributes,
                                                                         allowed: bool) -> None:
    result = await RBACAuthorizer(bootstrap_index()).authorize(attributes)
    assert (result.decision == Decision.ALLOW) is allowed, result
