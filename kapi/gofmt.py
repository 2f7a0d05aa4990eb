"""Values formatted as Go's ``fmt`` ``%v`` prints decoded JSON, for error messages that kube-apiserver builds
with ``%v`` (``map[image:x]``, ``[a b]``, ``<nil>``), so Python reprs (``{'image': 'x'}``) never reach clients."""

from __future__ import annotations

from typing import Any


def go_value(value: Any) -> str:
    """``%v`` of a JSON value as Go holds it in ``interface{}``: maps print sorted ``map[k:v k2:v2]``, lists
    ``[a b]``, strings bare, null ``<nil>``, booleans ``true``/``false``, whole floats without a fraction."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{go_value(k)}:{go_value(v)}" for k, v in sorted(value.items(),
                                                                                 key=lambda kv: str(kv[0]))) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def go_quote(value: Any) -> str:
    """Go's ``%q`` of ``%v``: a double-quoted string with Go escapes (``"Bogus"``, ``"map[a:1]"``)."""
    text = go_value(value)
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else "\\ufffd")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def parse_int_error(text: str) -> str:
    """Go's ``strconv.ParseInt`` error for a query parameter that is not an int64 (kube's parameter codec)."""
    return f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax"


def parse_int64(text: str) -> int:
    """Go's ``strconv.ParseInt(text, 10, 64)``: an optional sign and decimal digits within int64.

    Raises ValueError with Go's message (``strconv.ParseInt: parsing "x": invalid syntax`` or ``...: value out of
    range``), which kube's parameter codec returns as a 400. Python's ``int`` also takes spaces and underscores and
    has no range.
    """
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isascii() or not digits.isdigit():
        raise ValueError(parse_int_error(text))
    value = int(text)
    if not -(1 << 63) <= value < (1 << 63):
        raise ValueError(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return value
