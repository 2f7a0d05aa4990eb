"""Pure logic of the controllers: --controllers parsing, namespace conditions, tenancy, templates, token expiry."""

from __future__ import annotations

import base64
import datetime

import pytest

from kapi import tenancy
from services.controllers import manager
from services.controllers.loops import garbagecollector, namespace, tenantquota, tokencleaner

ALL_DEFAULT = ["namespace", "serviceaccount", "root-ca-cert-publisher", "garbagecollector", "resourcequota",
               "tenant-rbac", "tenant-quota", "autoregister", "csrsigning", "pvc-protection", "pv-protection",
               "service-cidr-controller", "podgc", "disruption"]


@pytest.mark.parametrize(("spec", "expected"), [
    ("*", ALL_DEFAULT),
    ("", ALL_DEFAULT),
    ("*,tokencleaner", ["namespace", "serviceaccount", "root-ca-cert-publisher", "tokencleaner", "garbagecollector",
                        "resourcequota", "tenant-rbac", "tenant-quota", "autoregister", "csrsigning",
                        "pvc-protection", "pv-protection", "service-cidr-controller", "podgc", "disruption"]),
    ("*,-garbagecollector,-tenant-quota", ["namespace", "serviceaccount", "root-ca-cert-publisher", "resourcequota",
                                          "tenant-rbac", "autoregister", "csrsigning", "pvc-protection",
                                          "pv-protection", "service-cidr-controller", "podgc", "disruption"]),
    ("namespace,tokencleaner", ["namespace", "tokencleaner"]),
    ("garbage-collector-controller", ["garbagecollector"]),  # kube's newer names are aliases
    ("*,-namespace-controller", [n for n in ALL_DEFAULT if n != "namespace"]),
])
def test_controllers_flag(spec: str, expected: list[str]) -> None:
    assert manager.enabled(spec) == expected


def test_unknown_controller_refused() -> None:
    with pytest.raises(ValueError, match='"nope" is not in the list of known controllers'):
        manager.enabled("*,-nope")


def test_namespace_conditions_as_kube_writes_them() -> None:
    conds = namespace.conditions({"configmaps.": 1, "pods.": 2}, {"example.com/x": 1}, [], [], "T1")
    by = {c["type"]: c for c in conds}
    assert [c["type"] for c in conds] == [
        "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure", "NamespaceContentRemaining", "NamespaceFinalizersRemaining"]
    assert by["NamespaceContentRemaining"] == {
        "type": "NamespaceContentRemaining", "status": "True", "reason": "SomeResourcesRemain",
        "message": "Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 resource instances",
        "lastTransitionTime": "T1"}
    assert by["NamespaceFinalizersRemaining"]["message"] == (
        "Some content in the namespace has finalizers remaining: example.com/x in 1 resource instances")
    assert by["NamespaceDeletionContentFailure"]["reason"] == "ContentDeleted"
    # later: content gone; unchanged conditions keep their transition time
    done = namespace.conditions({}, {}, [], conds, "T2")
    by2 = {c["type"]: c for c in done}
    assert by2["NamespaceContentRemaining"]["reason"] == "ContentRemoved"
    assert by2["NamespaceContentRemaining"]["lastTransitionTime"] == "T2"
    assert by2["NamespaceDeletionDiscoveryFailure"]["lastTransitionTime"] == "T1"


def test_namespaced_resources_cover_content_kinds() -> None:
    names = {(r.group, r.resource) for r in namespace.namespaced_resources()}
    assert {("", "pods"), ("", "configmaps"), ("apps", "deployments"), ("rbac.authorization.k8s.io", "rolebindings"),
            ("coordination.k8s.io", "leases")} <= names
    assert ("", "namespaces") not in names and ("authorization.k8s.io", "localsubjectaccessreviews") not in names


def _ns(**annotations: str) -> dict[str, object]:
    return {"metadata": {"name": "a", "annotations": annotations}}


@pytest.mark.parametrize(("annotations", "expected"), [
    ({}, []),
    ({tenancy.CREATOR: "alice", tenancy.CREATOR_GROUPS: "dev"}, [("User", "alice")]),
    ({tenancy.CREATOR: "kubernetes-admin", tenancy.CREATOR_GROUPS: "system:masters"}, []),
    ({tenancy.CREATOR: "system:serviceaccount:x:y"}, []),
    ({tenancy.CREATOR: "alice", tenancy.CREATOR_GROUPS: "dev,team-a", tenancy.TENANT_GROUP: "team-a"},
     [("User", "alice"), ("Group", "team-a")]),
    ({tenancy.CREATOR: "alice", tenancy.CREATOR_GROUPS: "dev", tenancy.TENANT_GROUP: "team-b"}, [("User", "alice")]),
])
def test_tenant_subjects(annotations: dict[str, str], expected: list[tuple[str, str]]) -> None:
    assert [(s["kind"], s["name"]) for s in tenancy.tenant_subjects(_ns(**annotations))] == expected


def test_quota_template_parsing() -> None:
    quotas = tenantquota.quotas_from_template(tenantquota.DEFAULT_TEMPLATE)
    assert quotas["tenant-best-effort-pods"] == {"scopes": ["BestEffort"], "hard": {"pods": "10"}}
    assert quotas["tenant-not-best-effort-pods"]["scopes"] == ["NotBestEffort"]
    assert quotas["tenant-services"]["hard"] == {"services": "10", "services.loadbalancers": "2",
                                                 "count/ingresses.networking.k8s.io": "10"}
    assert tenantquota.quotas_from_template({"bad": "[", "nohard": "scopes: []", "ok": '{"hard": {"pods": 3}}'}) == {
        "ok": {"hard": {"pods": "3"}}}


@pytest.mark.parametrize(("raw", "expected"), [
    (base64.b64encode(b"2030-01-02T03:04:05Z").decode(), datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)),
    ("not base64!", None),
    (base64.b64encode(b"yesterday").decode(), None),
    (None, None),
])
def test_bootstrap_token_expiration(raw: str | None, expected: datetime.datetime | None) -> None:
    data = {"expiration": raw} if raw is not None else {}
    assert tokencleaner.expiration({"data": data}) == expected


def test_garbage_collector_resolves_owner_kinds() -> None:
    assert garbagecollector.resource_of("apps/v1", "Deployment").resource == "deployments"  # type: ignore[union-attr]
    assert garbagecollector.resource_of("v1", "ConfigMap").resource == "configmaps"  # type: ignore[union-attr]
    assert garbagecollector.resource_of("example.com/v1", "Widget") is None
    monitored = {(r.group, r.resource) for r in garbagecollector.monitored_resources()}
    assert ("", "events") not in monitored and ("", "configmaps") in monitored and ("", "namespaces") in monitored
