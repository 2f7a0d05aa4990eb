"""kapi.safedecode: alias bombs, self-referential aliases and deep nesting are refused before anything expands."""

from __future__ import annotations

import time

import orjson
import pytest
import yaml

from kapi import safedecode


def _bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines)


@pytest.mark.parametrize(("text", "problem"), [
    (_bomb(4), "document contains excessive aliasing"),
    (_bomb(10), "document contains excessive aliasing"),
    (_bomb(40), "document contains excessive aliasing"),
    ("a: &a [*a]", "anchor 'a' value contains itself"),
    ("a: &a {b: {c: *a}}", "anchor 'a' value contains itself"),
    ("a:\n" + "".join("  " * i + "b:\n" for i in range(1, 200)), "exceeded max depth of 150"),
    ("[" * 151 + "]" * 151, "exceeded max depth of 150"),
])
def test_refused(text: str, problem: str):
    start = time.monotonic()
    with pytest.raises(safedecode.DecodeLimitError) as info:
        safedecode.load_yaml(text)
    assert info.value.problem == problem
    assert time.monotonic() - start < 1


@pytest.mark.parametrize(("text", "expected"), [
    ("x: &x {a: 1}\ny: *x\nz: [*x, *x]", {"x": {"a": 1}, "y": {"a": 1}, "z": [{"a": 1}, {"a": 1}]}),
    (_bomb(3), None),  # 9*9*9 nodes: small enough for go-yaml too
    ("base: &b {image: nginx}\nc:\n  <<: *b\n  name: web\n", {"base": {"image": "nginx"},
                                                             "c": {"image": "nginx", "name": "web"}}),
    ("[" * 150 + "]" * 150, None),
])
def test_accepted(text: str, expected: object):
    value = safedecode.load_yaml(text)
    if expected is not None:
        assert value == expected


def test_deep_yaml_is_a_yaml_error_not_a_recursion_error():
    with pytest.raises(yaml.YAMLError):
        safedecode.load_yaml("[" * 100_000)
    with pytest.raises(yaml.YAMLError):
        safedecode.load_yaml("a:\n" + "".join(" " * i + "b:\n" for i in range(1, 5000)))


@pytest.mark.parametrize(("depth", "message"), [
    (150, None),
    (151, "invalid character '[' exceeded max depth"),
    (250, "invalid character '[' exceeded max depth"),
])
def test_json_depth(depth: int, message: str | None):
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    body = orjson.dumps(value)
    assert safedecode.json_depth_error(body, value) == message


def test_json_depth_of_objects():
    value: object = {}
    for _ in range(200):
        value = {"a": value}
    assert safedecode.json_depth_error(orjson.dumps(value), value) == "invalid character '{' exceeded max depth"
