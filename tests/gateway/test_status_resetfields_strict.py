"""The /status reset fields of the field manager (kube's GetResetFields as structured-merge-diff's IgnoreFilter) and
strict decoding of bodies with both duplicate and unknown fields."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from kapi import managedfields as mf
from kapi.resources import REGISTRY
from services.gateway import fieldmanager
from services.gateway import patch as patching
from services.gateway.scope import RequestScope

T = "2026-01-01T00:00:00Z"
T2 = "2026-01-01T00:00:05Z"
CRD_GV = "apiextensions.k8s.io/v1"


def _types(group: str, version: str, kind: str) -> mf.Types:
    return mf.Types(patching.schema_for(group, version, kind), patching._definitions())


CRD = _types("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
SVC = _types("", "v1", "Service")
DEPLOY = _types("apps", "v1", "Deployment")


def _scope(group: str, resource: str, subresource: str) -> RequestScope:
    r = REGISTRY.get(group, "v1", resource)
    return cast(RequestScope, SimpleNamespace(info=SimpleNamespace(subresource=subresource), resource=r))


def _owners(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"]["managedFields"]}


def _crd(labels: dict[str, str]) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": CRD_GV, "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com", "labels": labels},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True}]}}
    obj["metadata"]["managedFields"] = mf.update(None, obj, "creator", CRD_GV, T, CRD, "", ("status",))
    return obj


def test_reset_fields_are_the_kinds_status_strategys() -> None:
    assert fieldmanager.reset_fields(_scope("apiextensions.k8s.io", "customresourcedefinitions", "status")) == (
        "metadata", "spec")
    assert fieldmanager.reset_fields(_scope("", "services", "status")) == ("spec",)
    assert fieldmanager.reset_fields(_scope("apps", "deployments", "status")) == ("spec",)
    assert fieldmanager.reset_fields(_scope("apiextensions.k8s.io", "customresourcedefinitions", "")) == ("status",)


def test_crd_status_update_owns_no_metadata_and_leaves_the_label_owners_alone() -> None:
    live = _crd({"a": "1", "b": "1"})
    new = {**live, "metadata": {**live["metadata"], "labels": {"a": "2", "c": "3"}},
           "status": {"storedVersions": ["v1"]}}
    reset = fieldmanager.reset_fields(_scope("apiextensions.k8s.io", "customresourcedefinitions", "status"))
    fields = mf.update(live, new, "ctl", CRD_GV, T2, CRD, "status", reset)
    owners = {e["manager"]: e for e in fields}
    assert owners["ctl"]["fieldsV1"] == {"f:status": {"f:storedVersions": {}}}
    # kube's comparison is filtered too: the creator keeps f:a (changed) and f:b (removed by the write)
    assert owners["creator"]["fieldsV1"]["f:metadata"] == {"f:labels": {".": {}, "f:a": {}, "f:b": {}}}


def test_service_status_update_owns_the_labels_it_changed() -> None:
    live: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n",
                            "labels": {"a": "1"}}, "spec": {"ports": [{"port": 80, "protocol": "TCP"}]}}
    live["metadata"]["managedFields"] = mf.update(None, live, "creator", "v1", T, SVC, "", ("status",))
    new = {**live, "metadata": {**live["metadata"], "labels": {"a": "2"}}}
    reset = fieldmanager.reset_fields(_scope("", "services", "status"))
    owners = {e["manager"]: e for e in mf.update(live, new, "ctl", "v1", T2, SVC, "status", reset)}
    assert owners["ctl"]["fieldsV1"] == {"f:metadata": {"f:labels": {"f:a": {}}}}
    assert "f:a" not in owners["creator"]["fieldsV1"]["f:metadata"]["f:labels"]  # taken by the /status writer


def test_crd_status_apply_merges_labels_that_nobody_owns_and_conflicts_on_none() -> None:
    live = _crd({"a": "1"})
    config = {"apiVersion": CRD_GV, "kind": "CustomResourceDefinition",
              "metadata": {"name": "widgets.example.com", "labels": {"a": "2", "z": "9"}},
              "status": {"storedVersions": ["v1"]}}
    reset = ("metadata", "spec")
    out = mf.apply(live, config, "ctl", CRD_GV, T2, CRD, False, "status", reset)  # no conflict on f:a
    assert out["metadata"]["labels"] == {"a": "2", "z": "9"}  # kept: the CRD status strategy resets no metadata
    owners = _owners(out)
    assert owners["ctl"]["fieldsV1"] == {"f:status": {"f:storedVersions": {}}}
    assert owners["creator"]["fieldsV1"]["f:metadata"] == {"f:labels": {".": {}, "f:a": {}}}


def test_apply_keeps_the_owners_of_fields_outside_the_endpoint() -> None:
    spec = {"selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    live: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment",
                            "metadata": {"name": "d", "namespace": "n"}, "spec": spec}
    live["metadata"]["managedFields"] = mf.update(None, live, "creator", "apps/v1", T, DEPLOY, "", ("status",))
    with_status = {**live, "status": {"replicas": 1}}
    with_status["metadata"] = {**live["metadata"], "managedFields": mf.update(
        live, with_status, "kcm", "apps/v1", T2, DEPLOY, "status", ("spec",))}
    status_apply = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                    "status": {"readyReplicas": 1}}
    out = mf.apply(with_status, status_apply, "ssa", "apps/v1", T2, DEPLOY, False, "status", ("spec",))
    assert set(_owners(out)) == {"creator", "kcm", "ssa"}  # was: creator's spec entry dropped
    main_apply = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 2}}
    out = mf.apply(with_status, main_apply, "user", "apps/v1", T2, DEPLOY, False, "", ("status",))
    assert _owners(out)["kcm"]["fieldsV1"] == {"f:status": {"f:replicas": {}}}  # was: kcm's status entry dropped
