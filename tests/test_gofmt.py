"""kapi.gofmt: Go's %v / %q of decoded JSON values, and the continue-token decode errors that use Go's words."""

from __future__ import annotations

import pytest

from kapi import errors, gofmt
from services.storage.keys import decode_continue


@pytest.mark.parametrize(("value", "expected"), [
    ({"image": "x"}, "map[image:x]"),
    ({"b": 1, "a": [1, "x"]}, "map[a:[1 x] b:1]"),
    ([], "[]"),
    (["All", "x"], "[All x]"),
    (None, "<nil>"),
    (True, "true"),
    (2.0, "2"),
    (2.5, "2.5"),
    ({"q": {"r": None}}, "map[q:map[r:<nil>]]"),
])
def test_go_value(value: object, expected: str):
    assert gofmt.go_value(value) == expected


@pytest.mark.parametrize(("value", "expected"), [
    ("Bogus", '"Bogus"'),
    ('a"b\n', '"a\\"b\\n"'),
    ({"a": 1}, '"map[a:1]"'),
])
def test_go_quote(value: object, expected: str):
    assert gofmt.go_quote(value) == expected


def test_parse_int_error():
    assert gofmt.parse_int_error("abc") == 'strconv.ParseInt: parsing "abc": invalid syntax'


@pytest.mark.parametrize(("token", "detail"), [
    ("garbage", "invalid character '\\u0081' looking for beginning of value"),
    ("@@@", "illegal base64 data at input byte 0"),
    ("aGVsbG8", "invalid character 'h' looking for beginning of value"),
    ("e30", "server does not recognize this encoded key"),
])
def test_continue_token_errors_use_go_words(token: str, detail: str):
    with pytest.raises(errors.StatusError) as info:
        decode_continue(token, b"/registry/x/")
    assert info.value.code == 400
    assert info.value.message == "invalid continue token: continue key is not valid: " + detail
