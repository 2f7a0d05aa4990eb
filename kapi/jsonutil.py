"""Fast JSON encoding shared by every service (orjson).

Kubernetes objects cross gRPC as JSON bytes (docs/architecture.md, "Layers": the contracts); every
service encodes and decodes them through these two functions.
"""

from __future__ import annotations

import decimal
import re
from typing import Any

import orjson


def dumps(obj: Any) -> bytes:
    """Encode ``obj`` as compact UTF-8 JSON bytes, floats as Go writes them (:func:`go_float`); raises TypeError
    for non-JSON values."""
    return _encode(obj, None)


def go_float(value: float) -> bytes:
    """A finite float64 as Go's encoding/json writes it (``floatEncoder``): the shortest digits that read back,
    in ``%f`` form unless the magnitude is below 1e-6 or from 1e21 up, then ``%e`` with the exponent's leading
    zero dropped (``1e-7``, ``1.5e+21``); no ``.0`` on a whole value (``1``, ``-0``, ``100000000000000000000``).
    orjson differs on whole values (``1.0``), on [1e-6, 1e-5) (``5e-6``, Go ``0.000005``) and on [1e16, 1e21)
    (``1e+20``). Source: encoding/json encode.go ``floatEncoder.encode``."""
    text = repr(value)
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        mantissa, _, exponent = text.partition("e")
        power = int(exponent)
        return f"{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}".replace("e-0", "e-").encode()
    plain = format(decimal.Decimal(text), "f")
    if "." in plain:
        plain = plain.rstrip("0").rstrip(".")
    return plain.encode()


# orjson's float forms that are not Go's: a whole value (``1.0``), an exponent of -6 or +16..+20; a number
# starts after ``:``, ``,`` or ``[`` in compact and indented output (`` `` before it when indented)
_WHOLE_ENDS = (b".0,", b".0}", b".0]", b".0\n")
_ODD_FLOAT = re.compile(rb"[:,\[ ]-?[0-9]+(?:\.0[,}\]\n]|(?:\.[0-9]+)?e(?:-6|\+1[6-9]|\+20)(?![0-9]))")


def _go_floats(value: Any) -> Any:
    """``value`` with every float whose orjson text is not Go's replaced by a raw fragment of Go's text (a copy
    of the containers holding one; the rest shared)."""
    if isinstance(value, float):
        return orjson.Fragment(go_float(value)) if value == value and abs(value) != float("inf") else value
    if isinstance(value, dict):
        return {k: _go_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_go_floats(v) for v in value]
    return value


def _encode(obj: Any, option: int | None) -> bytes:
    """orjson's encoding of ``obj``, floats as Go writes them: the object is walked again only when the bytes
    hold a float form Go writes otherwise."""
    out = orjson.dumps(obj, option=option)
    # ``+`` is rare in object JSON (a memchr); the other needles cost a scan each, about orjson's own time
    if ((b"+" in out and b"e+" in out) or b"e-6" in out or (b".0" in out and any(e in out for e in _WHOLE_ENDS))) \
            and _ODD_FLOAT.search(out):
        out = orjson.dumps(_go_floats(obj), option=option)
    return out


def loads(data: bytes | str) -> Any:
    """Decode JSON bytes or text; raises ``orjson.JSONDecodeError`` (a ValueError) on bad input."""
    return orjson.loads(data)


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def int64_floats(value: Any) -> Any:
    """``value`` with every integer outside int64 made a float, in place for dicts and lists; returns it.

    kube decodes request bodies into unstructured data, where a JSON number that does not fit int64 is a
    float64 (orjson keeps those up to 2^64-1 as Python ints, which neither Go nor orjson could encode back
    beyond uint64). Iterative; callers skip it unless the body has 19 digits in a row (:data:`LONG_DIGITS`).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value) if not INT64_MIN <= value <= INT64_MAX else value
    stack = [value]
    while stack:
        item = stack.pop()
        pairs: Any = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in pairs:
            if isinstance(child, (dict, list)):
                stack.append(child)
            elif isinstance(child, int) and not isinstance(child, bool) and not INT64_MIN <= child <= INT64_MAX:
                item[key] = float(child)
    return value


#: A run of 19 digits: the shortest text of an integer beyond int64 (2^63 is 9223372036854775808).
LONG_DIGITS = re.compile(rb"[0-9]{19}")


def go_escape(body: bytes) -> bytes:
    """``body`` (UTF-8 JSON) as Go's encoding/json writes it with HTML escaping on (its default; kube's JSON
    serializer, ``json.NewEncoder(w).Encode``, ``json.Marshal`` and ``json.MarshalIndent``): ``<``, ``>`` and ``&``
    become ``\\u003c``, ``\\u003e``, ``\\u0026`` and U+2028 / U+2029 ``\\u2028`` / ``\\u2029``; every other
    character, non-ASCII too, stays raw. A byte-level replace is exact: these bytes occur only inside JSON strings
    (the UTF-8 lead byte ``e2`` starts no other sequence ending ``80 a8`` / ``80 a9``), and no escape sequence
    contains them. The same object comes back when none occurs (four one-byte memchr scans: 0.3 us for a 2.5 KB
    Pod, no copy), the common case.
    Source: encoding/json encode.go ``appendString`` (``htmlSafeSet``, the U+2028/U+2029 case)."""
    out = body
    if 60 in out:  # <
        out = out.replace(b"<", b"\\u003c")
    if 62 in out:  # >
        out = out.replace(b">", b"\\u003e")
    if 38 in out:  # &
        out = out.replace(b"&", b"\\u0026")
    at = out.find(0xE2)  # the lead byte of U+2000..U+2FFF (memchr; a multi-byte search costs 1 ns a byte)
    while at >= 0:
        if out[at + 1:at + 3] in _LINE_SEPARATOR_TAILS:
            return out.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        at = out.find(0xE2, at + 3)
    return out


_LINE_SEPARATOR_TAILS = (b"\x80\xa8", b"\x80\xa9")  # U+2028 and U+2029 after their e2 lead byte


def dumps_go_encoder(obj: Any) -> str:
    """``obj`` as Go's ``json.NewEncoder(w).Encode`` writes a map (kube's unstructured JSON encoder): keys sorted,
    compact, ``<``, ``>``, ``&``, U+2028 and U+2029 escaped as ``\\u003c``... (:func:`go_escape`), and a trailing
    newline."""
    return go_escape(_encode(obj, orjson.OPT_SORT_KEYS)).decode() + "\n"


def dumps_go_indent(obj: Any) -> bytes:
    """``obj`` as Go's ``json.MarshalIndent(obj, "", "  ")`` writes it: two-space indent, ``"key": value``, ``{}`` and
    ``[]`` for empty ones, HTML-escaped (:func:`go_escape`), no trailing newline: the ``pretty=true`` form (kube's
    JSON serializer with Pretty writes MarshalIndent's bytes alone) and kube's WriteRawJSON."""
    return go_escape(_encode(obj, orjson.OPT_INDENT_2))


# orjson's message -> what Go's encoding/json says after "invalid character 'c' "
_CONTEXT = (
    ("expected a string key", "looking for beginning of object key string"),
    ("expected ':'", "after object key"),
    ("expected ',' or '}'", "after object key:value pair"),
    ("expected ',' or ']'", "after array element"),
    ("after document", "after top-level value"),
    ("control character", "in string literal"),
)


def _quote_char(char: str) -> str:
    """Go's ``quoteChar``: 'x', '\\'', '"', and escapes for control characters."""
    if char == "'":
        return "'\\''"
    if char == '"':
        return "'\"'"
    if char.isprintable():
        return f"'{char}'"
    return "'" + char.encode("unicode_escape").decode("ascii") + "'"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def loads_lenient(data: bytes, exc: ValueError) -> Any:
    """Go's encoding/json decode of ``data`` that :func:`loads` refused with ``exc`` for its text alone: bytes
    that are no UTF-8 and lone surrogate escapes (``"\\ud800"``) become U+FFFD, as Go replaces them, and the
    document decodes. Re-raises ``exc`` when the refusal was anything else (a real syntax error)."""
    message = str(exc)
    if "UTF-8" not in message and "surrogate" not in message:
        raise exc
    import json  # only for such bodies: the standard decoder accepts what orjson refuses here

    try:
        return _replace_surrogates(json.loads(data.decode("utf-8", errors="replace")))
    except (ValueError, RecursionError):
        raise exc from None


def syntax_error(data: bytes | str, exc: ValueError) -> str:
    """The message Go's encoding/json gives for the malformed JSON ``data`` that raised ``exc`` in :func:`loads`.

    kube-apiserver reports decode errors in Go's words (``unexpected end of
    JSON input``, ``invalid character 'x' looking for beginning of value``),
    and clients show them as they are, so Python's wording must not leak.
    """
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    message = str(getattr(exc, "msg", exc))
    pos = int(getattr(exc, "pos", len(text)) or 0)
    if "end of data" in message or "zero-length" in message or pos >= len(text):
        return "unexpected end of JSON input"
    if "trailing comma" in message:  # Go stops at the closing bracket after the comma
        rest = text[pos + 1:].lstrip(" \t\r\n")
        if not rest:
            return "unexpected end of JSON input"
        where = "looking for beginning of object key string" if rest[0] == "}" else \
            "looking for beginning of value"
        return f"invalid character {_quote_char(rest[0])} {where}"
    if "invalid literal" in message:  # true / false / null spelled wrong: the first wrong letter
        literal = next((w for w in ("true", "false", "null") if w in message), "")
        for i, expected in enumerate(literal):
            if pos + i >= len(text):
                return "unexpected end of JSON input"
            if text[pos + i] != expected:
                return f"invalid character {_quote_char(text[pos + i])} in literal {literal} " \
                       f"(expecting {_quote_char(expected)})"
    where = next((go for key, go in _CONTEXT if key in message), "looking for beginning of value")
    return f"invalid character {_quote_char(text[pos])} {where}"
