"""Numbers JSON cannot hold as kube does: integers beyond int64 decode as floats, YAML .inf/.nan are refused."""

from __future__ import annotations

import pytest

from kapi import jsonutil, safedecode
from kapi.errors import StatusError
from services.admission.crd_schema import validate
from services.gateway import negotiation
from services.gateway.dynamic import _cell


def test_json_integers_beyond_int64_are_floats() -> None:
    body = (b'{"a": [18446744073709551615, 9223372036854775807, -9223372036854775808, {"b": 9223372036854775808}],'
            b' "c": 99999999999999999999999, "s": "99999999999999999999", "t": true}')
    value = negotiation.decode_body(body, "application/json")
    assert value == {"a": [1.8446744073709552e19, 9223372036854775807, -9223372036854775808,
                           {"b": 9.223372036854776e18}], "c": 1e23, "s": "99999999999999999999", "t": True}
    assert isinstance(value["a"][1], int) and isinstance(value["a"][0], float)
    assert jsonutil.dumps(value)  # encodable again


def test_merge_patch_integers_beyond_int64_are_floats() -> None:
    value = negotiation.decode_body(b'{"spec": {"replicas": 18446744073709551615}}', "application/merge-patch+json")
    assert value == {"spec": {"replicas": 1.8446744073709552e19}}


def test_int64_floats_scalar() -> None:
    assert jsonutil.int64_floats(1 << 63) == float(1 << 63)
    assert jsonutil.int64_floats(5) == 5 and jsonutil.int64_floats(True) is True


def test_yaml_integers_beyond_int64_are_floats() -> None:
    value = safedecode.load_yaml(b"a: 99999999999999999999999\nb: 18446744073709551615\nc: -9223372036854775808\n"
                                 b"d: 0x10\n")
    assert value == {"a": 1e23, "b": 1.8446744073709552e19, "c": -9223372036854775808, "d": 16}
    assert isinstance(value["c"], int)
    assert safedecode.load_yaml(b"a: " + b"9" * 400) == {"a": "9" * 400}  # no float64 holds it: go-yaml's string


@pytest.mark.parametrize(("text", "shown"), [(b"a: .inf", "+Inf"), (b"a: [-.Inf]", "-Inf"), (b"a: {b: .NaN}", "NaN")])
def test_yaml_inf_and_nan_are_refused(text: bytes, shown: str) -> None:
    with pytest.raises(StatusError) as info:
        negotiation.decode_body(text, "application/yaml")
    assert info.value.code == 400
    assert info.value.message == f"error converting YAML to JSON: json: unsupported value: {shown}"


def test_yaml_inf_key_is_a_string() -> None:
    assert safedecode.load_yaml(b".inf: 1\n") == {".inf": 1}


def test_schema_integer_beyond_2_53_is_a_number() -> None:
    sch = {"type": "object", "properties": {"spec": {"type": "object",
                                                     "properties": {"replicas": {"type": "integer"}}}}}
    causes = validate({"spec": {"replicas": 1e23}}, sch)
    assert [(c.field, c.message) for c in causes] == [
        ("spec.replicas", 'Invalid value: "number": spec.replicas in body must be of type integer: "number"')]
    assert validate({"spec": {"replicas": 3.0}}, sch) == []


def test_table_integer_cell_beyond_int64() -> None:
    column = {"jsonPath": ".spec.r", "type": "integer"}
    assert _cell(column, {"spec": {"r": 1e23}}) == -(1 << 63)  # Go's int64(float64) on amd64
    assert _cell(column, {"spec": {"r": 18446744073709551615}}) == -(1 << 63)
    assert _cell(column, {"spec": {"r": 7}}) == 7
