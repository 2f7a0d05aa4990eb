"""Failed x-kubernetes-validations rules as kube 1.35+ words them, and kube's hasBlockingErr.

apiextensions-apiserver ``pkg/apiserver/schema/cel/validation.go`` (validateExpressions, fieldErrorForReason):
the bad value is the node's value (``field.OmitValueType{}`` for an object or array), printed by apimachinery's
``field.Error.ErrorBody``; evaluation errors still show the schema's type. ``pkg/registry/customresource/
strategy.go`` (hasBlockingErr): an enum, required, too long, too many or type error skips every rule and adds
one fieldless cause instead.
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi.errors import Cause
from services.admission import crd_schema

NOT_CHECKED = ("<nil>", "Invalid value: null: some validation rules were not checked because the object was "
                        "invalid; correct the existing errors to complete validation")


def _schema(rule: dict[str, Any] | None = None, **props: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "object", "properties": props}
    if rule is not None:
        spec["x-kubernetes-validations"] = [rule]
    return {"type": "object", "properties": {"spec": spec, "status": {"type": "object", "properties": {
        "phase": {"type": "string", "enum": ["Ready"]}}}}}


def _rule(sch: dict[str, Any], rule: str, **extra: Any) -> dict[str, Any]:
    return {**sch, "x-kubernetes-validations": [{"rule": rule, **extra}]}


def _causes(spec: dict[str, Any], sch: dict[str, Any], old: dict[str, Any] | None = None,
            warnings: list[str] | None = None, **kw: Any) -> list[tuple[str, str, str]]:
    obj = {"apiVersion": "x.example.com/v1", "kind": "X", "metadata": {"name": "x"}, "spec": spec}
    return [(c.type, c.field, c.message) for c in crd_schema.validate(obj, sch, old, warnings, **kw)]


@pytest.mark.parametrize(("prop", "value", "shown"), [
    ({"type": "string"}, "legacy", '"legacy"'),
    ({"type": "string"}, 'say "hi"\n\x01\u00e9', '"say \\"hi\\"\\n\\x01\u00e9"'),  # Go %q
    ({"type": "integer"}, 5, "5"),
    ({"type": "integer"}, -9223372036854775808, "-9223372036854775808"),
    ({"type": "number"}, 1.5, "1.5"),
    ({"type": "number"}, 2.0, "2"),  # float64 %v
    ({"type": "number"}, 1000000.0, "1e+06"),
    ({"type": "number"}, 0.00001, "1e-05"),
    ({"type": "boolean"}, True, "true"),
    ({"type": "boolean"}, False, "false"),
    ({"x-kubernetes-int-or-string": True}, 3, "3"),
    ({"x-kubernetes-int-or-string": True}, "3", '"3"'),
])
def test_a_scalar_rule_failure_shows_the_value(prop: dict[str, Any], value: Any, shown: str) -> None:
    sch = _schema(v=_rule(prop, "false", message="no"))
    assert _causes({"v": value}, sch) == [("FieldValueInvalid", "spec.v", f"Invalid value: {shown}: no")]


@pytest.mark.parametrize(("prop", "value"), [
    ({"type": "object", "properties": {"a": {"type": "string"}}}, {"a": "b"}),
    ({"type": "object", "additionalProperties": {"type": "string"}}, {}),
    ({"type": "array", "items": {"type": "string"}}, ["a"]),
])
def test_an_object_or_array_rule_failure_omits_the_value(prop: dict[str, Any], value: Any) -> None:
    sch = _schema(v=_rule(prop, "false", message="no"))
    assert _causes({"v": value}, sch) == [("FieldValueInvalid", "spec.v", "Invalid value: no")]


def test_an_untyped_value_is_printed_as_json() -> None:
    sch = _schema(v=_rule({"x-kubernetes-preserve-unknown-fields": True}, "false", message="no"))
    assert _causes({"v": {"z": [1, "<&>"], "a": None}}, sch) == [
        ("FieldValueInvalid", "spec.v", 'Invalid value: {"a":null,"z":[1,"\\u003c\\u0026\\u003e"]}: no')]


def test_root_and_spec_rules_omit_the_value() -> None:
    sch = _schema({"rule": "self.n < 3", "message": "n too big"}, n={"type": "integer"})
    sch["x-kubernetes-validations"] = [{"rule": "self.spec.n < 2"}]
    assert _causes({"n": 5}, sch) == [
        ("FieldValueInvalid", "", "Invalid value: failed rule: self.spec.n < 2"),
        ("FieldValueInvalid", "spec", "Invalid value: n too big")]


@pytest.mark.parametrize(("extra", "message"), [
    ({}, 'Invalid value: "bad": failed rule: self.startsWith(\'ok\')'),  # the rule, trimmed
    ({"message": "  must start with ok  "}, 'Invalid value: "bad": must start with ok'),
    ({"messageExpression": "'got ' + self"}, 'Invalid value: "bad": got bad'),
    ({"message": "fallback", "messageExpression": "'  '"}, 'Invalid value: "bad": fallback'),  # empty: ignored
    ({"message": "fallback", "messageExpression": "1 / 0 == 1 ? 'a' : 'b'"}, 'Invalid value: "bad": fallback'),
    ({"message": "m", "reason": "FieldValueForbidden"}, "Forbidden: m"),
    ({"message": "m", "reason": "FieldValueRequired"}, "Required value: m"),
    ({"message": "m", "reason": "FieldValueDuplicate"}, 'Duplicate value: "bad"'),  # no detail
    ({"message": "m", "reason": "FieldValueInvalid"}, 'Invalid value: "bad": m'),
])
def test_message_sources_and_reasons(extra: dict[str, Any], message: str) -> None:
    sch = _schema(v=_rule({"type": "string"}, " self.startsWith('ok') ", **extra))
    reason = extra.get("reason", "FieldValueInvalid")
    assert _causes({"v": "bad"}, sch) == [(reason, "spec.v", message)]


def test_duplicate_reason_on_an_object_has_no_value() -> None:
    sch = _schema(v=_rule({"type": "object"}, "false", message="m", reason="FieldValueDuplicate"))
    assert _causes({"v": {}}, sch) == [("FieldValueDuplicate", "spec.v", "Duplicate value")]


def test_field_path_keeps_the_rule_nodes_value() -> None:
    sch = _schema({"rule": "self.n < 3", "message": "n too big", "fieldPath": ".n"}, n={"type": "integer"})
    assert _causes({"n": 5}, sch) == [("FieldValueInvalid", "spec.n", "Invalid value: n too big")]


def test_evaluation_errors_still_show_the_type() -> None:
    sch = _schema(v=_rule({"type": "integer"}, "10 / (self - self) > 0"), o=_rule({"type": "object"}, "self.x == 1"))
    assert _causes({"v": 4, "o": {}}, sch) == [
        ("FieldValueInvalid", "spec.v", 'Invalid value: "integer": division by zero '
                                        "evaluating rule: 10 / (self - self) > 0"),
        ("FieldValueInvalid", "spec.o", 'Invalid value: "object": no such key: x evaluating rule: self.x == 1')]


def test_ratcheted_rule_warning_uses_the_same_text() -> None:
    sch = _schema(v=_rule({"type": "string"}, "self.startsWith('ok')", message="must start with ok"),
                  other={"type": "string"})
    old = {"apiVersion": "x.example.com/v1", "kind": "X", "metadata": {"name": "x"},
           "spec": {"v": "bad", "other": "a"}}
    warnings: list[str] = []
    assert _causes({"v": "bad", "other": "b"}, sch, old, warnings) == []
    assert warnings == ['spec.v: Invalid value: "bad": must start with ok']


@pytest.mark.parametrize(("spec", "first"), [
    ({"color": "blue"}, ("FieldValueNotSupported", "spec.color", 'Unsupported value: "blue": supported values: '
                                                                 '"red"')),
    ({"name": "toolong"}, ("FieldValueTooLong", "spec.name", "Too long: may not be more than 3 bytes")),
    ({"tags": ["a", "b"]}, ("FieldValueTooMany", "spec.tags", "Too many: 2: must have at most 1 items")),
    ({"n": "x"}, ("FieldValueTypeInvalid", "spec.n", 'Invalid value: "string": spec.n in body must be of type '
                                                     'integer: "string"')),
    ({"n": None}, ("FieldValueTypeInvalid", "spec.n", 'Invalid value: "null": spec.n in body must be of type '
                                                      'integer: "null"')),
    ({"ip": "x"}, ("FieldValueTypeInvalid", "spec.ip", 'Invalid value: "x": spec.ip in body must be of type '
                                                       'ipv4: "x"')),
    ({"sub": {}}, ("FieldValueRequired", "spec.sub.k", "Required value")),
])
def test_blocking_errors_skip_every_rule(spec: dict[str, Any], first: tuple[str, str, str]) -> None:
    sch = _schema({"rule": "false", "message": "never"}, color={"type": "string", "enum": ["red"]},
                  name={"type": "string", "maxLength": 3}, tags={"type": "array", "maxItems": 1,
                                                                  "items": {"type": "string"}},
                  n={"type": "integer"}, ip={"type": "string", "format": "ipv4"},
                  sub={"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}}})
    assert _causes(spec, sch) == [first, ("FieldValueInvalid", *NOT_CHECKED)]


def test_non_blocking_errors_let_rules_run_after_every_schema_error() -> None:
    sch = _schema({"rule": "self.n < 3", "message": "n too big"},
                  n={"type": "integer", "minimum": 10, "x-kubernetes-validations": [{"rule": "self > 7",
                                                                                     "message": "n small"}]},
                  s={"type": "string", "pattern": "^a$"})
    # kapi skipped a node's rules when the node had a schema error; kube runs them (after all schema errors)
    assert _causes({"n": 5, "s": "b"}, sch) == [
        ("FieldValueInvalid", "spec.n", "Invalid value: 5: spec.n in body should be greater than or equal to 10"),
        ("FieldValueInvalid", "spec.s", "Invalid value: \"b\": spec.s in body should match '^a$'"),
        ("FieldValueInvalid", "spec", "Invalid value: n too big"),
        ("FieldValueInvalid", "spec.n", "Invalid value: 5: n small")]


def test_no_rules_no_extra_cause() -> None:
    sch = _schema(n={"type": "integer"})
    assert _causes({"n": "x"}, sch) == [
        ("FieldValueTypeInvalid", "spec.n", 'Invalid value: "string": spec.n in body must be of type integer: '
                                            '"string"')]


def test_rules_on_an_absent_field_still_count() -> None:
    """cel.NewValidator exists when any node has rules, so the extra cause comes even if none would run."""
    sch = _schema(n={"type": "integer"}, absent=_rule({"type": "string"}, "true"))
    assert _causes({"n": "x"}, sch)[1:] == [("FieldValueInvalid", *NOT_CHECKED)]


def test_metadata_causes_block_the_rules() -> None:
    sch = _schema({"rule": "false", "message": "never"})
    prior = [Cause("FieldValueRequired", "Required value: name or generateName is required", "metadata.name")]
    assert _causes({}, sch, prior=prior) == [("FieldValueInvalid", *NOT_CHECKED)]
    invalid = [Cause("FieldValueInvalid", 'Invalid value: "A": bad', "metadata.name")]
    assert _causes({}, sch, prior=invalid) == [("FieldValueInvalid", "spec", "Invalid value: never")]


def test_ratcheted_and_status_filtered_errors_do_not_block() -> None:
    sch = _schema(color={"type": "string", "enum": ["red"]}, v=_rule({"type": "string"}, "self != 'bad'",
                                                                       message="not bad"))
    old = {"apiVersion": "x.example.com/v1", "kind": "X", "metadata": {"name": "x"}, "spec": {"color": "blue"}}
    assert _causes({"color": "blue", "v": "bad"}, sch, old) == [
        ("FieldValueInvalid", "spec.v", 'Invalid value: "bad": not bad')]
    # a /status write checks the schema of status alone: spec's enum error is gone, the rules run
    assert _causes({"color": "green", "v": "bad"}, sch, old, status_only=True) == [
        ("FieldValueInvalid", "spec.v", 'Invalid value: "bad": not bad')]


def test_default_values_run_rules_only_without_schema_errors() -> None:
    sch = {"type": "integer", "minimum": 5, "x-kubernetes-validations": [{"rule": "self > 7", "message": "small"}]}
    assert [c.message for c in crd_schema.value_causes(3, sch)] == [
        "Invalid value: 3:  in body should be greater than or equal to 5"]
    assert [c.message for c in crd_schema.value_causes(6, sch)] == ["Invalid value: 6: small"]
