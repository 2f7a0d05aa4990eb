"""Server-side apply on custom resources follows the CRD version's schema (list/map types), as kube-apiserver.

kube builds a custom resource's structured-merge-diff type from the CRD's structural schema
(apiextensions-apiserver pkg/controller/openapi/builder, kube-openapi pkg/schemaconv): map lists merge by key
(``k:{...}``), sets by value (``v:...``), lists without ``x-kubernetes-list-type`` and ``atomic`` ones are
replaced whole, objects are granular unless ``x-kubernetes-map-type: atomic``, unknown fields (preserved) are
deduced, and ``metadata`` is ObjectMeta.
"""

from __future__ import annotations

import types as pytypes
from typing import Any

import pytest

from kapi import managedfields as mf
from kapi.resources import Resource
from services.gateway import fieldmanager

T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"
V1 = "ssalists.example.com/v1"


def _spec_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "required": ["name"],
                                "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "plain": {"type": "array", "items": {"type": "string"}},
            "whole": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
            "atomicMap": {"type": "object", "x-kubernetes-map-type": "atomic",
                          "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            "granularMap": {"type": "object", "x-kubernetes-map-type": "granular",
                            "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            "nested": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }


def _crd(versions: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    versions = versions or {"v1": _spec_schema()}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.ssalists.example.com"},
            "spec": {"group": "ssalists.example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget", "singular": "widget", "listKind": "WidgetList"},
                     "versions": [{"name": name, "served": True, "storage": i == 0,
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}
                                  for i, (name, spec) in enumerate(versions.items())]}}


def _obj(spec: dict[str, Any], version: str = "v1") -> dict[str, Any]:
    return {"apiVersion": f"ssalists.example.com/{version}", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"}, "spec": spec}


def _apply(live: dict[str, Any] | None, spec: dict[str, Any], manager: str, time: str = T0,
           t: mf.Types | None = None, force: bool = False) -> dict[str, Any]:
    t = t or fieldmanager.crd_types(_crd(), "v1")
    return mf.apply(live, _obj(spec), manager, V1, time, t, force)


def _fields(obj: dict[str, Any]) -> dict[str, Any]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}


def test_map_list_and_set_merge_without_conflict() -> None:
    one = _apply(None, {"items": [{"name": "first"}], "tags": ["alpha"]}, "m1")
    assert _fields(one) == {"m1": {"f:spec": {"f:items": {'k:{"name":"first"}': {".": {}, "f:name": {}}},
                                              "f:tags": {'v:"alpha"': {}}}}}
    two = _apply(one, {"items": [{"name": "second"}], "tags": ["beta"]}, "m2", T1)
    assert two["spec"] == {"items": [{"name": "first"}, {"name": "second"}], "tags": ["alpha", "beta"]}
    assert _fields(two) == {
        "m1": {"f:spec": {"f:items": {'k:{"name":"first"}': {".": {}, "f:name": {}}}, "f:tags": {'v:"alpha"': {}}}},
        "m2": {"f:spec": {"f:items": {'k:{"name":"second"}': {".": {}, "f:name": {}}},
                          "f:tags": {'v:"beta"': {}}}},
    }


def test_conflict_only_on_the_same_key() -> None:
    one = _apply(None, {"items": [{"name": "first", "value": "a"}]}, "m1")
    with pytest.raises(mf.ApplyConflict) as err:
        _apply(one, {"items": [{"name": "first", "value": "b"}, {"name": "second"}]}, "m2", T1)
    assert err.value.message == ('Apply failed with 1 conflict: conflict with "m1": '
                                 '.spec.items[name="first"].value')
    same = _apply(one, {"items": [{"name": "first", "value": "a"}]}, "m2", T1)  # same value: shared, no conflict
    assert _fields(same)["m2"] == {"f:spec": {"f:items": {'k:{"name":"first"}': {
        ".": {}, "f:name": {}, "f:value": {}}}}}


def test_removal_of_items_a_manager_stops_applying_only_its_own() -> None:
    one = _apply(None, {"items": [{"name": "first"}, {"name": "mine"}], "tags": ["alpha", "solo"]}, "m1")
    two = _apply(one, {"items": [{"name": "second"}, {"name": "first"}], "tags": ["beta", "alpha"]}, "m2", T1)
    three = _apply(two, {"items": [], "tags": []}, "m1", T1)
    # m1's "mine"/"solo" go; "first"/"alpha" stay (m2 owns them too), m2's items stay
    assert three["spec"] == {"items": [{"name": "first"}, {"name": "second"}], "tags": ["alpha", "beta"]}
    four = _apply(two, {"items": [{"name": "first"}], "tags": ["alpha"]}, "m1", T1)
    assert four["spec"] == {"items": [{"name": "first"}, {"name": "second"}], "tags": ["alpha", "beta"]}
    assert _fields(four)["m1"] == {"f:spec": {"f:items": {'k:{"name":"first"}': {".": {}, "f:name": {}}},
                                              "f:tags": {'v:"alpha"': {}}}}


@pytest.mark.parametrize("field", ["plain", "whole"])
def test_lists_without_list_type_and_atomic_lists_are_atomic(field: str) -> None:
    one = _apply(None, {field: ["alpha"]}, "m1")
    assert _fields(one) == {"m1": {"f:spec": {f"f:{field}": {}}}}
    with pytest.raises(mf.ApplyConflict) as err:
        _apply(one, {field: ["beta"]}, "m2", T1)
    assert err.value.message == f'Apply failed with 1 conflict: conflict with "m1": .spec.{field}'


def test_atomic_map_is_owned_whole_and_granular_and_nested_by_field() -> None:
    one = _apply(None, {"atomicMap": {"a": "1"}, "granularMap": {"a": "1"}, "nested": {"a": "1"}}, "m1")
    assert _fields(one) == {"m1": {"f:spec": {"f:atomicMap": {}, "f:granularMap": {"f:a": {}},
                                              "f:nested": {"f:a": {}}}}}
    two = _apply(one, {"granularMap": {"b": "2"}, "nested": {"b": "2"}}, "m2", T1)
    assert two["spec"]["granularMap"] == {"a": "1", "b": "2"} and two["spec"]["nested"] == {"a": "1", "b": "2"}
    with pytest.raises(mf.ApplyConflict) as err:
        _apply(one, {"atomicMap": {"b": "2"}}, "m2", T1)
    assert err.value.message == 'Apply failed with 1 conflict: conflict with "m1": .spec.atomicMap'


def test_preserve_unknown_fields_subtree_is_deduced() -> None:
    one = _apply(None, {"free": {"x": {"y": "1"}, "l": ["a"]}}, "m1")
    assert _fields(one) == {"m1": {"f:spec": {"f:free": {"f:l": {}, "f:x": {"f:y": {}}}}}}
    two = _apply(one, {"free": {"x": {"z": "2"}}}, "m2", T1)  # deduced maps are granular
    assert two["spec"]["free"] == {"x": {"y": "1", "z": "2"}, "l": ["a"]}
    with pytest.raises(mf.ApplyConflict) as err:  # deduced lists are atomic
        _apply(one, {"free": {"l": ["b"]}}, "m2", T1)
    assert err.value.message == 'Apply failed with 1 conflict: conflict with "m1": .spec.free.l'


def test_metadata_is_object_meta() -> None:
    t = fieldmanager.crd_types(_crd(), "v1")
    cfg = _obj({})
    cfg["metadata"]["finalizers"] = ["a.example.com/x"]
    one = mf.apply(None, cfg, "m1", V1, T0, t)
    cfg2 = _obj({})
    cfg2["metadata"]["finalizers"] = ["b.example.com/y"]
    two = mf.apply(one, cfg2, "m2", V1, T1, t)
    assert two["metadata"]["finalizers"] == ["a.example.com/x", "b.example.com/y"]
    assert _fields(two)["m2"] == {"f:metadata": {"f:finalizers": {'v:"b.example.com/y"': {}}}, "f:spec": {}}


def test_each_version_uses_its_own_schema() -> None:
    v2 = {"type": "object", "properties": {"items": {"type": "array", "items": {
        "type": "object", "properties": {"name": {"type": "string"}}}}}}
    definition = _crd({"v1": _spec_schema(), "v2": v2})
    assert fieldmanager.crd_types(definition, "v1").list_kind(
        fieldmanager.crd_types(definition, "v1").field(_spec_schema(), "items")) == ("map", ("name",))
    t2 = fieldmanager.crd_types(definition, "v2")
    one = mf.apply(None, _obj({"items": [{"name": "first"}]}, "v2"), "m1", "ssalists.example.com/v2", T0, t2)
    assert _fields(one) == {"m1": {"f:spec": {"f:items": {}}}}


def test_types_of_a_request_use_the_served_crd() -> None:
    definition = _crd()
    resource = Resource("ssalists.example.com", "v1", "widgets", "Widget", True)
    registry = pytypes.SimpleNamespace(crd_of=lambda r: definition if r.resource == "widgets" else None)
    scope: Any = pytypes.SimpleNamespace(resource=resource,
                                         backends=pytypes.SimpleNamespace(custom_resources=registry))
    t = fieldmanager.types(scope)
    assert t.list_kind(t.field(t.field(t.root, "spec"), "items")) == ("map", ("name",))
    assert t.list_kind(t.field(t.field(t.root, "spec"), "tags")) == ("set", ())
    assert fieldmanager.types(scope) is t  # cached per schema
    scope.backends.custom_resources = None  # CRD unknown: deduced
    t = fieldmanager.types(scope)
    assert t.root == {} and t.list_kind(t.field(t.field(t.root, "spec"), "items")) == ("atomic", ())


def test_a_key_of_several_fields_is_sorted_by_field_name() -> None:
    spec = {"type": "object", "properties": {"routes": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "host"],
        "items": {"type": "object", "properties": {"port": {"type": "integer"}, "host": {"type": "string"},
                                                   "weight": {"type": "integer"}}}}}}
    t = fieldmanager.crd_types(_crd({"v1": spec}), "v1")
    one = _apply(None, {"routes": [{"port": 80, "host": "a", "weight": 1}]}, "m1", t=t)
    assert _fields(one) == {"m1": {"f:spec": {"f:routes": {'k:{"host":"a","port":80}': {
        ".": {}, "f:host": {}, "f:port": {}, "f:weight": {}}}}}}
    with pytest.raises(mf.ApplyConflict) as err:
        _apply(one, {"routes": [{"port": 80, "host": "a", "weight": 2}]}, "m2", T1, t=t)
    assert err.value.message == ('Apply failed with 1 conflict: conflict with "m1": '
                                 '.spec.routes[host="a",port=80].weight')


def test_a_key_field_the_item_omits_takes_its_schema_default() -> None:
    spec = {"type": "object", "properties": {"ports": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "proto"],
        "items": {"type": "object", "properties": {"port": {"type": "integer"},
                                                   "proto": {"type": "string", "default": "UDP"}}}}}}
    t = fieldmanager.crd_types(_crd({"v1": spec}), "v1")
    one = _apply(None, {"ports": [{"port": 53}]}, "m1", t=t)
    assert _fields(one) == {"m1": {"f:spec": {"f:ports": {'k:{"port":53,"proto":"UDP"}': {".": {}, "f:port": {}}}}}}
    # the defaulted object (as admission stores it) is the same item: merged, not added
    two = _apply({**one, "spec": {"ports": [{"port": 53, "proto": "UDP"}]}},
                 {"ports": [{"port": 53, "proto": "UDP"}]}, "m2", T1, t=t)
    assert two["spec"] == {"ports": [{"port": 53, "proto": "UDP"}]}


def test_an_update_records_map_and_set_items() -> None:
    t = fieldmanager.crd_types(_crd(), "v1")
    created = _obj({"items": [{"name": "a", "value": "1"}], "tags": ["x"], "plain": ["p"]})
    fields = mf.update(None, created, "kubectl-create", V1, T0, t, typed=True)
    assert fields[0]["fieldsV1"] == {"f:spec": {".": {}, "f:items": {".": {}, 'k:{"name":"a"}': {
        ".": {}, "f:name": {}, "f:value": {}}}, "f:plain": {}, "f:tags": {".": {}, 'v:"x"': {}}}}
    created["metadata"]["managedFields"] = fields
    edited = _obj({"items": [{"name": "a", "value": "1"}, {"name": "b"}], "tags": ["x"], "plain": ["p"]})
    later = mf.update(created, edited, "kubectl-edit", V1, T1, t, typed=True)
    assert {e["manager"]: e["fieldsV1"] for e in later}["kubectl-edit"] == {"f:spec": {"f:items": {
        'k:{"name":"b"}': {".": {}, "f:name": {}}}}}
