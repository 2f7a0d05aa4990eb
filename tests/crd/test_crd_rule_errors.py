"""CRD x-kubernetes-validations rules whose evaluation fails: field errors with cel-go's texts, not a 500."""

from __future__ import annotations

import pytest

from kapi.cel.library import runtime_error
from services.admission.crd_schema import validate
from services.admission.matching import evaluate_cel


@pytest.mark.parametrize(("expression", "self_", "text"), [
    ("self.a / self.b > 0", {"a": 1, "b": 0}, "division by zero"),
    ("self.a % self.b > 0", {"a": 1, "b": 0}, "modulus by zero"),
    ("self.a / self.b > 0", {"a": -9223372036854775808, "b": -1}, "integer overflow"),
    ("self.a + self.b > 0", {"a": 9223372036854775807, "b": 1}, "integer overflow"),
    ("self.x == 1", {}, "no such key: x"),
    ("self.m['k'] == 1", {"m": {}}, "no such key: k"),
    ("self.l[3] > 0", {"l": [1]}, "index out of bounds: 3"),
    ("self.a > 'x'", {"a": 1}, "no such overload"),
])
def test_runtime_error_texts(expression: str, self_: dict, text: str) -> None:
    with pytest.raises(Exception) as info:
        evaluate_cel(expression, {"self": self_})
    assert runtime_error(info.value) == text


def test_parse_error_is_no_runtime_error() -> None:
    with pytest.raises(ValueError) as info:
        evaluate_cel("self.a +", {"self": {}})
    assert runtime_error(info.value) is None


_SCHEMA = {"type": "object", "properties": {"spec": {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "ios": {"x-kubernetes-int-or-string": True},
                   "l": {"type": "array", "items": {"type": "integer"}}},
    "x-kubernetes-validations": [{"rule": "self.a / self.b > 0"}, {"rule": "self.l[3] > 0", "message": " four "}],
}, "n": {"type": "integer", "x-kubernetes-validations": [{"rule": "self + 1 > 0"}]},
    "s": {"x-kubernetes-int-or-string": True, "x-kubernetes-validations": [{"rule": "self > 'a'"}]}}}


def test_rule_errors_are_field_errors() -> None:
    causes = validate({"spec": {"a": 1, "b": 0, "l": [1]}, "n": 9223372036854775807, "s": 3}, _SCHEMA)
    assert [(c.field, c.message) for c in causes] == [
        ("spec", 'Invalid value: "object": division by zero evaluating rule: self.a / self.b > 0'),
        ("spec", 'Invalid value: "object": index out of bounds: 3 evaluating rule: four'),
        ("n", 'Invalid value: "integer": integer overflow evaluating rule: self + 1 > 0'),
        ("s", "Invalid value: \"\": 'no such overload': call arguments did not match a supported operator, "
              "function or macro signature for rule: self > 'a'"),
    ]


def test_missing_key_is_an_evaluation_error_not_a_failed_rule() -> None:
    sch = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"x": {"type": "integer"}},
                                                     "x-kubernetes-validations": [{"rule": "self.x == 1"}]}}}
    causes = validate({"spec": {}}, sch)
    assert [c.message for c in causes] == ['Invalid value: "object": no such key: x evaluating rule: self.x == 1']
