"""Floats in JSON answers as Go's encoding/json writes them (floatEncoder): kube decodes custom resources and other
unstructured data into float64s and writes them back that way, whatever text the client sent."""

from __future__ import annotations

import pytest

from kapi import jsonutil


@pytest.mark.parametrize(("value", "go"), [
    (1.0, "1"), (-0.0, "-0"), (2.5, "2.5"), (0.1, "0.1"), (1e15, "1000000000000000"),
    (1e20, "100000000000000000000"), (1.2345678901234567e19, "12345678901234567000"), (-2.5e17, "-250000000000000000"),
    (5e-6, "0.000005"), (1e-6, "0.000001"), (9.999999999999999e-6, "0.000009999999999999999"),
    (1e-7, "1e-7"), (1.5e-10, "1.5e-10"), (5e-324, "5e-324"), (1e21, "1e+21"), (1.5e300, "1.5e+300"),
])
def test_go_float(value: float, go: str) -> None:
    assert jsonutil.go_float(value) == go.encode()


def test_every_encoder_writes_go_floats() -> None:
    obj = {"a": 1.0, "b": [2.0, 0.5, 5e-6], "c": 1e20, "d": {"e": -0.0}}
    assert jsonutil.dumps(obj) == b'{"a":1,"b":[2,0.5,0.000005],"c":100000000000000000000,"d":{"e":-0}}'
    assert jsonutil.dumps_go_encoder({"z": 1e-6, "a": 3.0}) == '{"a":3,"z":0.000001}\n'
    assert jsonutil.dumps_go_indent({"a": [1.0]}) == b'{\n  "a": [\n    1\n  ]\n}'


def test_strings_that_look_like_floats_stay() -> None:
    obj = {"s": "x:1.0,", "t": ",5e-6]", "n": 1, "f": 1.5e-7, "big": 1e21}
    assert jsonutil.dumps(obj) == b'{"s":"x:1.0,","t":",5e-6]","n":1,"f":1.5e-7,"big":1e+21}'
