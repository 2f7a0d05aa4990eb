"""Leftover CRD/CEL message parity: list-type duplicates as kube 1.37 prints them (JSON values), a CRD
default's transition rules, and cel-go's string conversion error texts."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.cel.library import runtime_error
from kapi.crd import validation
from services.admission import crd_schema
from services.admission.matching import evaluate_cel

# --- x-kubernetes-list-type duplicates (apiextensions listtype/validation.go, field.ErrorBody json.Marshal) ----


def _list(list_type: str, keys: list[str] | None = None, items: dict[str, Any] | None = None) -> dict[str, Any]:
    sch: dict[str, Any] = {"type": "array", "x-kubernetes-list-type": list_type,
                           "items": items or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    if keys:
        sch["x-kubernetes-list-map-keys"] = keys
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": {"l": sch}}}}


def _causes(value: list[Any], sch: dict[str, Any], old: list[Any] | None = None) -> list[tuple[str, str, str]]:
    def wrap(v: list[Any]) -> dict[str, Any]:
        return {"apiVersion": "x.example.com/v1", "kind": "X", "metadata": {"name": "x"}, "spec": {"l": v}}
    return [(c.type, c.field, c.message)
            for c in crd_schema.validate(wrap(value), sch, None if old is None else wrap(old))]


def test_map_list_duplicates_print_their_keys_as_json() -> None:
    sch = _list("map", ["name"])
    assert _causes([{"name": "a", "v": 1}, {"name": "a", "v": 2}], sch) == [
        ("FieldValueDuplicate", "spec.l[1]", 'Duplicate value: {"name":"a"}')]
    # a third appearance is not reported again; an absent key is an empty object
    assert _causes([{"name": "a"}, {"name": "a"}, {"name": "a"}, {"v": 1}, {"v": 2}], sch) == [
        ("FieldValueDuplicate", "spec.l[1]", 'Duplicate value: {"name":"a"}'),
        ("FieldValueDuplicate", "spec.l[4]", "Duplicate value: {}")]
    # a number key, and Go's HTML escaping in json.Marshal
    assert _causes([{"name": 1}, {"name": 1}, {"name": "<&>"}, {"name": "<&>"}], sch) == [
        ("FieldValueDuplicate", "spec.l[1]", 'Duplicate value: {"name":1}'),
        ("FieldValueDuplicate", "spec.l[3]", 'Duplicate value: {"name":"\\u003c\\u0026\\u003e"}')]


def test_map_list_with_several_keys_prints_the_present_keys_sorted() -> None:
    sch = _list("map", ["port", "name"])
    assert _causes([{"port": 80, "name": "a", "x": 1}, {"name": "a", "port": 80}], sch) == [
        ("FieldValueDuplicate", "spec.l[1]", 'Duplicate value: {"name":"a","port":80}')]
    assert _causes([{"port": 80}, {"port": 80, "x": True}], sch) == [
        ("FieldValueDuplicate", "spec.l[1]", 'Duplicate value: {"port":80}')]


def test_map_list_item_that_is_no_object() -> None:
    sch = _list("map", ["name"], items={"x-kubernetes-preserve-unknown-fields": True})
    assert _causes([{"name": "a"}, "x", 3, {"name": "a"}], sch) == [
        ("FieldValueInvalid", "spec.l[1]", 'Invalid value: "x": must be an object for an array of list-type map')]


def test_set_duplicates_compare_go_values() -> None:
    sch = _list("set", items={"x-kubernetes-preserve-unknown-fields": True})
    # 1, true and 1.5 are different items; compounds compare as JSON and print as JSON
    assert _causes([1, True, "1", 1.5, 1, True, {"b": 1, "a": [2]}, {"a": [2], "b": 1}, [1, "x"], [1, "x"], 1],
                   sch) == [
        ("FieldValueDuplicate", "spec.l[4]", "Duplicate value: 1"),
        ("FieldValueDuplicate", "spec.l[5]", "Duplicate value: true"),
        ("FieldValueDuplicate", "spec.l[7]", 'Duplicate value: {"a":[2],"b":1}'),
        ("FieldValueDuplicate", "spec.l[9]", 'Duplicate value: [1,"x"]')]


def test_duplicates_are_not_reported_when_the_stored_object_had_some() -> None:
    sch = _list("map", ["name"])
    assert _causes([{"name": "a"}, {"name": "a"}, {"name": "b"}, {"name": "b"}], sch,
                   old=[{"name": "a"}, {"name": "a"}]) == []


# --- CRD default values: transition rules (apiextensions schema/defaulting/validation.go) ---------------------

P = "spec.validation.openAPIV3Schema.properties[spec]"


def _crd(spec_schema: dict[str, Any], versions: int = 1) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    other = {"type": "object", "properties": {"spec": {"type": "object"}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": f"v{i + 1}", "served": True, "storage": i == 0,
                                   "schema": {"openAPIV3Schema": schema if i == 0 else other}}
                                  for i in range(versions)]}}


def _errors(d: dict[str, Any]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in validation.validate(d, None, crd_schema.value_causes)]


def _prop(default: Any, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"n": {"type": "integer", "default": default,
                                                   "x-kubernetes-validations": list(rules)}}}


def test_default_transition_rule_sees_the_default_as_old_self() -> None:
    # oldSelf == self: a rule that forbids keeping the value fails for the default
    assert _errors(_crd(_prop(5, {"rule": "self != oldSelf", "message": "must change"}))) == [
        f"{P}.properties[n].default: Invalid value: 5: must change"]
    assert _errors(_crd(_prop(5, {"rule": "self == oldSelf", "message": "immutable"}))) == []
    assert _errors(_crd(_prop(5, {"rule": "self > oldSelf"}))) == [
        f"{P}.properties[n].default: Invalid value: 5: failed rule: self > oldSelf"]


def test_default_optional_old_self_rules_run_with_and_without_old() -> None:
    # with the default as old value it passes; as a create (oldSelf none) it fails
    assert _errors(_crd(_prop(5, {"rule": "oldSelf.hasValue()", "optionalOldSelf": True,
                                  "message": "only on update"}))) == [
        f"{P}.properties[n].default: Invalid value: 5: only on update"]
    # fails in the first run: the second run does not happen, so the error is there once
    assert _errors(_crd(_prop(5, {"rule": "!oldSelf.hasValue()", "optionalOldSelf": True,
                                  "message": "only on create"}))) == [
        f"{P}.properties[n].default: Invalid value: 5: only on create"]
    assert _errors(_crd(_prop(5, {"rule": "oldSelf.orValue(0) <= self", "optionalOldSelf": True}))) == []


def test_default_object_rules_nest_under_the_default_path() -> None:
    sch = {"type": "object", "properties": {"o": {
        "type": "object", "default": {"a": 1},
        "properties": {"a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < oldSelf"}]}}}}}
    assert _errors(_crd(sch, versions=2)) == [
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[o].default.a: Invalid value: 1: "
        "failed rule: self < oldSelf"]


def test_default_with_a_schema_error_runs_no_rule() -> None:
    assert _errors(_crd(_prop("x", {"rule": "self != oldSelf"}))) == [
        f'{P}.properties[n].default: Invalid value: "string":  in body must be of type integer: "string"']


# --- cel-go string conversion errors (common/types/string.go ConvertToType) ------------------------------------


@pytest.mark.parametrize(("expression", "text"), [
    ("int('abc')", "type conversion error from 'string' to 'int'"),
    ("int('1.5')", "type conversion error from 'string' to 'int'"),
    ("int('99999999999999999999')", "type conversion error from 'string' to 'int'"),
    ("uint('-1')", "type conversion error from 'string' to 'uint'"),
    ("uint('x')", "type conversion error from 'string' to 'uint'"),
    ("double('x')", "type conversion error from 'string' to 'double'"),
    ("duration('1d')", "type conversion error from 'string' to 'google.protobuf.Duration'"),
    ("duration('')", "type conversion error from 'string' to 'google.protobuf.Duration'"),
    ("timestamp('abc')", "type conversion error from 'string' to 'google.protobuf.Timestamp'"),
    ("timestamp('2020-13-01T00:00:00Z')", "type conversion error from 'string' to 'google.protobuf.Timestamp'"),
    ("timestamp('0000-01-01T00:00:00Z')", "timestamp overflow"),
    ("uint(-1)", "unsigned integer overflow"),
    ("int(1e30)", "integer overflow"),
])
def test_conversion_error_texts(expression: str, text: str) -> None:
    with pytest.raises(Exception) as info:
        evaluate_cel(expression, {})
    assert runtime_error(info.value) == text


def test_conversion_errors_in_crd_rules_are_wrapped_as_kube_does() -> None:
    sch = {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"s": {"type": "string"}},
        "x-kubernetes-validations": [{"rule": "int(self.s) > 0"}, {"rule": "duration(self.s) > duration('0s')",
                                                                   "message": "positive"}]}}}
    obj = {"apiVersion": "x.example.com/v1", "kind": "X", "metadata": {"name": "x"}, "spec": {"s": "abc"}}
    assert [(c.field, c.message) for c in crd_schema.validate(obj, sch)] == [
        ("spec", "Invalid value: \"object\": type conversion error from 'string' to 'int' evaluating rule: "
                 "int(self.s) > 0"),
        ("spec", "Invalid value: \"object\": type conversion error from 'string' to 'google.protobuf.Duration' "
                 "evaluating rule: positive")]
