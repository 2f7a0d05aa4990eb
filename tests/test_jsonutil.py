"""Go encoding/json wording for malformed JSON (what kube-apiserver's decoders say)."""

from __future__ import annotations

import pytest

from kapi import jsonutil


@pytest.mark.parametrize("data,message", [
    (b'{"a":1,', "unexpected end of JSON input"),
    (b"", "unexpected end of JSON input"),
    (b'"abc', "unexpected end of JSON input"),
    (b"{bad", "invalid character 'b' looking for beginning of object key string"),
    (b'{"a" 1}', "invalid character '1' after object key"),
    (b'{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    (b"[1 2]", "invalid character '2' after array element"),
    (b"x", "invalid character 'x' looking for beginning of value"),
    (b"'", "invalid character '\\'' looking for beginning of value"),
    (b'{"a":1}x', "invalid character 'x' after top-level value"),
    (b'{"a":tru}', "invalid character '}' in literal true (expecting 'e')"),
    (b'{"a":"\x01"}', "invalid character '\\x01' in string literal"),
    (b"[1,]", "invalid character ']' looking for beginning of value"),
    (b'{"a":1,}', "invalid character '}' looking for beginning of object key string"),
])
def test_syntax_error_in_go_words(data: bytes, message: str) -> None:
    with pytest.raises(ValueError) as info:
        jsonutil.loads(data)
    assert jsonutil.syntax_error(data, info.value) == message
