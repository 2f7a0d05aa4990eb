"""Structural schema handling of custom resources: defaulting, pruning, validation messages, CEL rules."""

from __future__ import annotations

from typing import Any

import pytest

from services.admission import crd_schema

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["image"],
            "x-kubernetes-validations": [{"rule": "self.replicas <= self.maxReplicas",
                                          "message": "replicas must not exceed maxReplicas"}],
            "properties": {
                "image": {"type": "string", "minLength": 2, "maxLength": 10},
                "replicas": {"type": "integer", "minimum": 1, "default": 1},
                "maxReplicas": {"type": "integer", "maximum": 10, "default": 5},
                "color": {"type": "string", "enum": ["red", "green"]},
                "name": {"type": "string", "pattern": "^[a-z]+$"},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {"type": "array", "maxItems": 2, "x-kubernetes-list-type": "set",
                         "items": {"type": "string"}},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "email": {"type": "string", "format": "email"},
                "immutable": {"type": "string", "x-kubernetes-validations": [
                    {"rule": "self == oldSelf", "message": "Value is immutable"}]},
                "embedded": {"type": "object", "x-kubernetes-embedded-resource": True,
                             "x-kubernetes-preserve-unknown-fields": True},
            },
        },
    },
}


NOT_CHECKED = ("<nil>", "Invalid value: null: some validation rules were not checked because the object was "
                        "invalid; correct the existing errors to complete validation")


def obj(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"},
            "spec": {"image": "nginx", "replicas": 1, "maxReplicas": 5, **spec}}


def test_defaults_then_prunes_unknown_fields() -> None:
    o = obj(extra=1, free={"anything": {"goes": True}}, labels={"a": "b"})
    del o["spec"]["replicas"], o["spec"]["maxReplicas"]
    o["top"] = 1
    crd_schema.default(o, SCHEMA)
    unknown = crd_schema.prune(o, SCHEMA, root=True)
    assert unknown == ["spec.extra", "top"]
    assert o["spec"]["replicas"] == 1 and o["spec"]["maxReplicas"] == 5
    assert o["spec"]["free"] == {"anything": {"goes": True}}
    assert o["metadata"] == {"name": "x"}


@pytest.mark.parametrize(("spec", "field", "message"), [
    ({"replicas": "two"}, "spec.replicas",
     'Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
    ({"replicas": 0}, "spec.replicas", "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
    ({"maxReplicas": 11}, "spec.maxReplicas",
     "Invalid value: 11: spec.maxReplicas in body should be less than or equal to 10"),
    ({"color": "blue"}, "spec.color", 'Unsupported value: "blue": supported values: "red", "green"'),
    ({"name": "A1"}, "spec.name", "Invalid value: \"A1\": spec.name in body should match '^[a-z]+$'"),
    ({"image": "n"}, "spec.image", 'Invalid value: "n": spec.image in body should be at least 2 chars long'),
    ({"image": "nginx-very-long"}, "spec.image", "Too long: may not be more than 10 bytes"),
    ({"port": True}, "spec.port", 'Invalid value: "boolean": spec.port in body must be of type integer,string: '
                                  '"boolean"'),
    ({"tags": ["a", "a"]}, "spec.tags[1]", 'Duplicate value: "a"'),
    ({"tags": ["a", "b", "c"]}, "spec.tags", "Too many: 3: must have at most 2 items"),
    ({"ports": [{"name": "a"}, {"name": "a"}]}, "spec.ports[1]",
     'Duplicate value: {"name":"a"}'),
    ({"labels": {"a": 1}}, "spec.labels.a", 'Invalid value: "integer": spec.labels.a in body must be of type string: '
                                            '"integer"'),
    ({"email": "nope"}, "spec.email", 'Invalid value: "nope": spec.email in body must be of type email: "nope"'),
    ({"replicas": 6}, "spec", "Invalid value: replicas must not exceed maxReplicas"),
    ({"embedded": {"kind": "Pod"}}, "spec.embedded.apiVersion", "Required value: must not be empty"),
])
def test_validation_messages(spec: dict[str, Any], field: str, message: str) -> None:
    o = obj(**spec)
    crd_schema.default(o, SCHEMA)
    causes = crd_schema.validate(o, SCHEMA)
    # kube's hasBlockingErr: an enum, required, too long/many or type error skips the schema's CEL rules
    blocked = message.startswith(("Unsupported value", "Too long", "Too many", "Required value")) or \
        "must be of type" in message
    assert [(c.field, c.message) for c in causes] == [(field, message)] + ([NOT_CHECKED] if blocked else [])


def test_required_and_valid() -> None:
    o = obj()
    crd_schema.default(o, SCHEMA)
    assert crd_schema.validate(o, SCHEMA) == []
    del o["spec"]["image"]
    assert [(c.type, c.field) for c in crd_schema.validate(o, SCHEMA)] == [("FieldValueRequired", "spec.image"),
                                                                        ("FieldValueInvalid", "<nil>")]


def test_transition_rule_uses_old_self_only_on_update() -> None:
    new = obj(immutable="b")
    assert crd_schema.validate(new, SCHEMA) == []  # create: transition rules do not run
    old = obj(immutable="a")
    causes = crd_schema.validate(new, SCHEMA, old)
    assert [(c.field, c.message) for c in causes] == [("spec.immutable", 'Invalid value: "b": Value is immutable')]
    assert crd_schema.validate(obj(immutable="a"), SCHEMA, old) == []


def test_pattern_matching_is_linear_time() -> None:
    """Go's regexp (RE2) decides ``^(a+)+$`` against 40 a's and a ``!`` at once; a backtracking engine needs
    hours, holding admission (every write) meanwhile. The answer is the usual 422 cause."""
    import time

    from kapi import goregexp as regexp

    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "s": {"type": "string", "pattern": "^(a+)+$"}}}}}
    o = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"},
         "spec": {"s": "a" * 40 + "!"}}
    started = time.monotonic()
    causes = crd_schema.validate(o, schema)
    assert time.monotonic() - started < 1.0
    assert [(c.field, c.message) for c in causes] == [
        ("spec.s", f'Invalid value: "{"a" * 40}!": spec.s in body should match \'^(a+)+$\'')]
    assert regexp.search("^(a+)+$", "a" * 100_000) is True
    assert regexp.search(r"(a)\1", "aa") is None  # no backreferences in RE2 (nor in Go): not checked here
