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
    # 300,000 aliases of one scalar (900 KB): go-yaml's ratio lets it through, kapi's alias bound does not
    ("a: &a x\nb: [" + ",".join(["*a"] * 300_000) + "]\n", "document contains excessive aliasing"),
    ("a: &a x\n" + "".join(f"b{i}: *a\n" for i in range(safedecode.MAX_ALIASES + 1)),
     "document contains excessive aliasing"),
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


def test_many_aliases_are_refused_in_milliseconds():
    text = "a: &a x\nb: [" + ",".join(["*a"] * 300_000) + "]\n"
    start = time.process_time()
    with pytest.raises(safedecode.DecodeLimitError):
        safedecode.load_yaml(text)
    assert time.process_time() - start < 0.3
    assert safedecode.load_yaml("a: &a x\nb: [" + ",".join(["*a"] * 9_000) + "]\n")["b"][0] == "x"


@pytest.mark.parametrize(("text", "expected"), [
    # go-yaml v2 into interface{}, then JSON (sigs.k8s.io/yaml): what JSON cannot hold becomes what Go writes
    ("a: !!binary aGVsbG8=", {"a": "hello"}),
    ("a: !!binary /w==", {"a": "\ufffd"}),
    ("a: !!set {x, y}", {"a": {"x": None, "y": None}}),
    ("a: 2024-01-01\nb: 2001-12-14 21:59:43.10 -5", {"a": "2024-01-01", "b": "2001-12-14 21:59:43.10 -5"}),
    ("{1: a, true: b, null: c, 1.5: d}", {"1": "a", "true": "b", "null": "c", "1.5": "d"}),
])
def test_tags_json_cannot_hold(text: str, expected: object):
    value = safedecode.load_yaml(text)
    assert value == expected
    orjson.dumps(value)


@pytest.mark.parametrize("text", ["a: !!binary 'not base64!'", "? [1, 2]\n: x", "a: !!python/object:os.system x"])
def test_tags_that_cannot_decode_are_yaml_errors(text: str):
    with pytest.raises(yaml.YAMLError):
        safedecode.load_yaml(text)
