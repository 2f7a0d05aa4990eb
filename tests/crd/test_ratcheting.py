"""CRD validation ratcheting (KEP-4008): on update, errors of values unchanged from the stored object are dropped.

kube: apiextensions-apiserver pkg/apiserver/validation/ratcheting.go, pkg/apiserver/schema/cel/validation.go
(shouldRatchetError), pkg/registry/customresource/strategy.go ValidateUpdate, k8s.io/apiserver
pkg/cel/common/equality.go (CorrelatedObject).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from services.admission import crd_ratchet, crd_schema


def _schema(**spec_props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "other": {"type": "string"}, **spec_props}}}}


def _obj(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec}


def _causes(new: dict[str, Any], sch: dict[str, Any], old: dict[str, Any] | None = None,
            warnings: list[str] | None = None) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in crd_schema.validate(new, sch, old, warnings)]


@pytest.mark.parametrize(("prop", "bad", "worse", "message"), [
    ({"type": "string", "maxLength": 3}, "abcd", "abcde", "Too long: may not be more than 3 bytes"),
    ({"type": "string", "enum": ["a", "b"]}, "c", "d", 'Unsupported value: "d": supported values: "a", "b"'),
    ({"type": "string", "pattern": "^[a-z]+$"}, "A", "B",
     "Invalid value: \"B\": spec.v in body should match '^[a-z]+$'"),
    ({"type": "integer", "maximum": 5}, 6, 7, "Invalid value: 7: spec.v in body should be less than or equal to 5"),
    ({"type": "integer", "minimum": 5}, 4, 3, "Invalid value: 3: spec.v in body should be greater than or equal to 5"),
    ({"type": "string", "format": "ipv4"}, "x", "y", 'Invalid value: "y": spec.v in body must be of type ipv4: "y"'),
    ({"type": "integer"}, "one", "two", 'Invalid value: "string": spec.v in body must be of type integer: "string"'),
])
def test_unchanged_invalid_value_is_ratcheted(prop: dict[str, Any], bad: Any, worse: Any, message: str) -> None:
    sch = _schema(v=prop)
    old = _obj(v=bad, other="x")
    assert [f for f, _ in _causes(_obj(v=bad, other="x"), sch)] == ["spec.v"]  # create: not ratcheted
    assert _causes(_obj(v=bad, other="y"), sch, old) == []  # an unrelated change
    assert _causes(_obj(v=worse, other="x"), sch, old) == [("spec.v", message)]  # changed to another bad value


def test_required_ratchets_with_its_object() -> None:
    sch = _schema()
    sch["properties"]["spec"]["required"] = ["must"]
    sch["properties"]["spec"]["properties"]["sub"] = {"type": "object", "required": ["x"],
                                                      "properties": {"x": {"type": "string"},
                                                                     "y": {"type": "string"}}}
    old = _obj(other="a", sub={"y": "1"})
    # spec changed: its required field is reported; sub unchanged: its own missing field is not
    assert _causes(_obj(other="b", sub={"y": "1"}), sch, old) == [("spec.must", "Required value")]
    assert _causes(_obj(other="b", sub={"y": "2"}), sch, old) == [("spec.must", "Required value"),
                                                                 ("spec.sub.x", "Required value")]


def test_lists_by_list_type() -> None:
    item = {"type": "string", "maxLength": 2}
    sch = _schema(plain={"type": "array", "items": item},
                  atomic={"type": "array", "x-kubernetes-list-type": "atomic", "items": item},
                  set={"type": "array", "x-kubernetes-list-type": "set", "items": item})
    too_long = "Too long: may not be more than 2 bytes"
    old = _obj(plain=["abc", "ok"], atomic=["abc", "ok"], set=["abc", "ok"])
    # unchanged lists: nothing
    assert _causes(copy.deepcopy(old), sch, old) == []
    # a plain list correlates by index: the unchanged invalid item 0 stays ratcheted
    assert _causes(_obj(plain=["abc", "no"], atomic=["abc", "ok"], set=["abc", "ok"]), sch, old) == []
    assert _causes(_obj(plain=["abc", "ok", "xyz"], atomic=["abc", "ok"], set=["abc", "ok"]), sch, old) == [
        ("spec.plain[2]", too_long)]
    # atomic and set lists do not correlate their items: any change re-validates every item
    assert _causes(_obj(plain=["abc", "ok"], atomic=["abc", "no"], set=["abc", "no"]), sch, old) == [
        ("spec.atomic[0]", too_long), ("spec.set[0]", too_long)]


def test_map_list_correlates_by_key() -> None:
    sch = _schema(ports={"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                         "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                                    "port": {"type": "integer", "maximum": 100}}}})
    old = _obj(ports=[{"name": "a", "port": 500}, {"name": "b", "port": 1}])
    # reordered, b changed: a (invalid, unchanged) is ratcheted
    assert _causes(_obj(ports=[{"name": "b", "port": 2}, {"name": "a", "port": 500}]), sch, old) == []
    # a renamed: a new item, validated
    assert _causes(_obj(ports=[{"name": "c", "port": 500}, {"name": "b", "port": 1}]), sch, old) == [
        ("spec.ports[0].port", "Invalid value: 500: spec.ports[0].port in body should be less than or equal to 100")]


def test_cel_rules_ratchet_unless_they_use_old_self() -> None:
    sch = _schema(v={"type": "string", "x-kubernetes-validations": [
        {"rule": "self.startsWith('ok')", "message": "must start with ok", "reason": "FieldValueForbidden"}]},
        t={"type": "string", "x-kubernetes-validations": [
            {"rule": "self == oldSelf || self.startsWith('ok')", "message": "must start with ok",
             "reason": "FieldValueForbidden"}]})
    old = _obj(v="bad", t="bad", other="x")
    warnings: list[str] = []
    assert _causes(_obj(v="bad", t="bad", other="y"), sch, old, warnings) == []
    assert warnings == ['spec.v: Forbidden: must start with ok']  # kube: warning.AddWarning
    # the transition rule runs on the unchanged value too (it passes here through oldSelf)
    warnings = []
    assert _causes(_obj(v="worse", t="worse", other="x"), sch, old, warnings) == [
        ("spec.v", 'Forbidden: must start with ok'),
        ("spec.t", 'Forbidden: must start with ok')]
    assert warnings == []


def test_transition_rule_on_unchanged_value_is_not_ratcheted() -> None:
    sch = _schema(t={"type": "string", "x-kubernetes-validations": [
        {"rule": "oldSelf == 'never'", "message": "frozen", "reason": "FieldValueForbidden"}]})
    old = _obj(t="a", other="x")
    assert _causes(_obj(t="a", other="y"), sch, old) == [("spec.t", 'Forbidden: frozen')]


def test_cel_rule_of_an_uncorrelated_item_follows_its_nearest_correlated_ancestor() -> None:
    sch = _schema(set={"type": "array", "x-kubernetes-list-type": "set", "items": {
        "type": "string", "x-kubernetes-validations": [
            {"rule": "self.size() < 3", "message": "short", "reason": "FieldValueForbidden"}]}})
    old = _obj(set=["abc"], other="x")
    warnings: list[str] = []
    assert _causes(_obj(set=["abc"], other="y"), sch, old, warnings) == []
    assert warnings == ['spec.set[0]: Forbidden: short']
    assert _causes(_obj(set=["abc", "d"], other="x"), sch, old) == [("spec.set[0]", 'Forbidden: short')]


def test_cel_runtime_errors_are_not_ratcheted() -> None:
    sch = _schema(m={"type": "object", "additionalProperties": {"type": "string"},
                     "x-kubernetes-validations": [{"rule": "self['k'] == 'v'"}]})
    old = _obj(m={"a": "b"}, other="x")
    causes = _causes(_obj(m={"a": "b"}, other="y"), sch, old)
    assert [f for f, _ in causes] == ["spec.m"] and "evaluating rule: self['k'] == 'v'" in causes[0][1]


def test_duplicates_are_reported_only_when_the_old_object_had_none() -> None:
    sch = _schema(set={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                  keys={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}})
    clean = _obj(set=["a"], keys=["b"])
    assert _causes(_obj(set=["a", "a"], keys=["b"]), sch, clean) == [("spec.set[1]", 'Duplicate value: "a"')]
    dirty = _obj(set=["a", "a"], keys=["b"])
    assert _causes(_obj(set=["a", "a"], keys=["b", "b"]), sch, dirty) == []  # kube: whole-object, old had some


def test_values_with_undeclared_keys_never_count_as_unchanged() -> None:
    """CachedDeepEqual correlates only declared properties: a preserve-unknown-fields object with content
    is not equal even to itself, so its errors are not ratcheted."""
    sch = _schema(free={"type": "object", "x-kubernetes-preserve-unknown-fields": True, "maxProperties": 1})
    old = _obj(free={"a": 1, "b": 2}, other="x")
    assert _causes(_obj(free={"a": 1, "b": 2}, other="y"), sch, old) == [
        ("spec.free", "Too many: 2: must have at most 1 items")]
    assert not crd_ratchet.unchanged({"a": 1}, {"a": 1}, {"type": "object"})
    assert crd_ratchet.unchanged({}, {}, {"type": "object"})


def test_equality_is_typed_like_go() -> None:
    assert not crd_ratchet.unchanged(5.0, 5, {"type": "number"})
    assert not crd_ratchet.unchanged(True, 1, {})
    assert crd_ratchet.unchanged([1, [2]], [1, [2]], {"type": "array", "x-kubernetes-list-type": "atomic"})
    sch = _schema(n={"type": "number", "maximum": 1})
    assert [f for f, _ in _causes(_obj(n=5.0), sch, _obj(n=5))] == ["spec.n"]  # 5.0 is not 5: not ratcheted
    assert _causes(_obj(n=5, other="y"), sch, _obj(n=5)) == []


def test_create_does_not_ratchet_and_root_type_meta_never_ratchets() -> None:
    sch = _schema(v={"type": "string", "maxLength": 1})
    sch["properties"]["kind"] = {"type": "string", "x-kubernetes-validations": [
        {"rule": "self == 'Other'", "reason": "FieldValueForbidden"}]}
    old = _obj(v="long", other="x")
    assert _causes(_obj(v="long", other="y"), sch, old) == [("kind", "Forbidden: failed rule: self == 'Other'")]


def test_status_writes_check_only_the_status_schema() -> None:
    """ValidateStatusUpdate: the schema of ``status`` alone (apiextensions validator.go); a spec that never counts
    as unchanged (undeclared keys) and a missing required root field are not reported on /status."""
    sch = _schema(free={"type": "object", "x-kubernetes-preserve-unknown-fields": True, "maxProperties": 1})
    sch["required"] = ["spec", "must"]
    sch["properties"]["status"] = {"type": "object", "properties": {"phase": {"type": "string", "enum": ["Ok"]}}}
    old = _obj(free={"a": 1, "b": 2})
    new = _obj(free={"a": 1, "b": 2})
    new["status"] = {"phase": "Bad"}
    assert _causes(new, sch, old) == [("must", "Required value"),
                                      ("spec.free", "Too many: 2: must have at most 1 items"),
                                      ("status.phase", 'Unsupported value: "Bad": supported values: "Ok"')]
    assert [(c.field, c.message) for c in crd_schema.validate(new, sch, old, status_only=True)] == [
        ("status.phase", 'Unsupported value: "Bad": supported values: "Ok"')]
    del new["status"]
    assert crd_schema.validate(new, sch, old, status_only=True) == []
