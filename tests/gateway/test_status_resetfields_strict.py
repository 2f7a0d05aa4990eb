"""The /status reset fields of the field manager (kube's GetResetFields as structured-merge-diff's IgnoreFilter) and
strict decoding of bodies with both duplicate and unknown fields."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest

from kapi import errors
from kapi import managedfields as mf
from kapi.resources import REGISTRY
from services.gateway import fieldmanager, negotiation
from services.gateway import patch as patching
from services.gateway.scope import RequestScope, check_duplicates

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


# Strict decoding: duplicate and unknown fields together (sigs.k8s.io/json, apimachinery strictDecodingError).

POD_BODY = (b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"1","a":"2"}},'
            b'"spec":{"x":1,"x":2,"y":{"d":1,"d":2},"containers":[{"name":"c","image":"i","image":"j"}]}}')


def _decoding_scope(directive: str, content_type: str = "application/json") -> Any:
    return SimpleNamespace(field_validation=lambda: directive, content_type=content_type, warnings=[],
                           resource=REGISTRY.get("", "v1", "pods"))


def _pod(body: bytes) -> dict[str, Any]:
    return cast(dict[str, Any], json.loads(body))


def test_strict_errors_in_decoder_order_without_duplicates_of_unknown_keys() -> None:
    assert negotiation.strict_field_errors(POD_BODY, "application/json", ["spec.x", "spec.y"]) == [
        'duplicate field "metadata.labels.a"', 'unknown field "spec.x"', 'unknown field "spec.y"',
        'duplicate field "spec.containers[0].image"']


def test_strict_400_lists_unknown_and_duplicate_fields_together() -> None:
    scope = _decoding_scope("Strict")
    with pytest.raises(errors.StatusError) as caught:
        check_duplicates(scope, POD_BODY, _pod(POD_BODY))
    assert caught.value.code == 400 and caught.value.reason == "BadRequest"
    assert caught.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.labels.a", '
        'unknown field "spec.x", unknown field "spec.y", duplicate field "spec.containers[0].image"')


def test_warn_gives_no_duplicate_warning_for_a_repeated_unknown_field() -> None:
    body = b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"x":1,"x":2,"containers":[]}}'
    scope = _decoding_scope("Warn")
    check_duplicates(scope, body, _pod(body))
    assert scope.warnings == []  # admission warns `unknown field "spec.x"` once
    strict = _decoding_scope("Strict")
    check_duplicates(strict, body, _pod(body))  # no 400 here: the unknown field alone is admission's Strict 400
    scope = _decoding_scope("Warn")
    check_duplicates(scope, POD_BODY, _pod(POD_BODY))
    assert scope.warnings == ['duplicate field "metadata.labels.a"', 'duplicate field "spec.containers[0].image"']


def test_yaml_strict_400_names_the_yaml_error_then_the_unknown_fields() -> None:
    body = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  name: q\nspec:\n  x: 1\n  containers: []\n"
    scope = _decoding_scope("Strict", "application/yaml")
    with pytest.raises(errors.StatusError) as caught:
        check_duplicates(scope, body, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"},
                                       "spec": {"x": 1, "containers": []}})
    assert caught.value.message.endswith(
        'strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map, '
        'unknown field "spec.x"')
