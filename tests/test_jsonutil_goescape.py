"""Go's encoding/json HTML escaping as kube's JSON serializer writes every body (kapi.jsonutil.go_escape): ``<`` ``>``
``&`` and U+2028 / U+2029 as ``\\u`` escapes, everything else (non-ASCII too) raw; MarshalIndent's form."""

from __future__ import annotations

import json

import orjson
import pytest

from kapi import jsonutil


@pytest.mark.parametrize(("text", "wire"), [
    ("<", b'"\\u003c"'),
    (">", b'"\\u003e"'),
    ("&", b'"\\u0026"'),
    ("\u2028", b'"\\u2028"'),
    ("\u2029", b'"\\u2029"'),
    ('<a href="x">&</a>', b'"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"'),
    ("self.a < self.b", b'"self.a \\u003c self.b"'),
    ("must be <= 10", b'"must be \\u003c= 10"'),
    ("\\<", b'"\\\\\\u003c"'),  # a backslash before '<': the escaped backslash, then the escape
])
def test_each_character_is_escaped_as_go_does(text: str, wire: bytes) -> None:
    assert jsonutil.go_escape(orjson.dumps(text)) == wire
    assert json.loads(wire) == text  # the same string for every decoder


@pytest.mark.parametrize("text", ["é", "日本語", "\u2027", "\u202a", "\u2019", "—", "€", "😀", "\u00a0", "'\"+=%"])
def test_other_characters_stay_raw(text: str) -> None:
    # Go writes every other valid UTF-8 character as it is (U+2019, U+2014 and U+20AC share the e2 lead byte)
    body = orjson.dumps({"k": text})
    assert jsonutil.go_escape(body) == body


def test_keys_are_escaped_too() -> None:
    assert jsonutil.go_escape(orjson.dumps({"a<b": "&"})) == b'{"a\\u003cb":"\\u0026"}'


def test_the_same_object_comes_back_when_nothing_is_escaped() -> None:
    body = orjson.dumps({"kind": "Pod", "metadata": {"name": "web"}, "x": "é—€"})
    assert jsonutil.go_escape(body) is body
    assert jsonutil.go_escape(b"") == b""


def test_escaping_is_idempotent() -> None:
    once = jsonutil.go_escape(orjson.dumps({"m": "<&>\u2028\u2029"}))
    assert once == b'{"m":"\\u003c\\u0026\\u003e\\u2028\\u2029"}'
    assert jsonutil.go_escape(once) is once


def test_dumps_go_encoder_keeps_its_form() -> None:
    assert jsonutil.dumps_go_encoder({"b": "<", "a": 1}) == '{"a":1,"b":"\\u003c"}\n'


def test_dumps_go_indent_is_marshal_indent() -> None:
    # json.MarshalIndent(status, "", "  ") of a Status: empty structs and maps as {}, no trailing newline
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "a <b>",
              "reason": "NotFound", "details": {"causes": [{"message": "x"}], "empty": []}, "code": 404}
    assert jsonutil.dumps_go_indent(status) == (
        b'{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n'
        b'  "message": "a \\u003cb\\u003e",\n  "reason": "NotFound",\n  "details": {\n    "causes": [\n      {\n'
        b'        "message": "x"\n      }\n    ],\n    "empty": []\n  },\n  "code": 404\n}')
