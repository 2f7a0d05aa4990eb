"""Values formatted as Go's ``fmt`` ``%v`` prints decoded JSON, for error messages that kube-apiserver builds
with ``%v`` (``map[image:x]``, ``[a b]``, ``<nil>``), so Python reprs (``{'image': 'x'}``) never reach clients."""

from __future__ import annotations

from decimal import Decimal
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


_INT64_RANGE = range(-(1 << 63), 1 << 63)


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64 (``strconv.FormatFloat(v, 'g', -1, 64)``): the shortest digits that round-trip,
    in ``%e`` form (``1e+06``, ``1.5e-05``) when the exponent is below -4 or at least 6, else plain (``1.5``,
    ``100000``, ``0.0001``); ``-0`` for negative zero."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    exponent = int(exponent) + len(digits) - len(text)  # value = int(text) * 10**exponent
    dp = len(text) + exponent  # where the decimal point falls in text
    neg = "-" if sign else ""
    x = dp - 1
    if x < -4 or x >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{neg}{mantissa}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if dp <= 0:
        return f"{neg}0.{'0' * -dp}{text}"
    if dp >= len(text):
        return neg + text + "0" * (dp - len(text))
    return f"{neg}{text[:dp]}.{text[dp:]}"


def go_json_v(value: Any) -> str:
    """Go's ``%v`` (and ``%+v``) of a JSON document as k8s.io/apimachinery ``util/json`` (sigs.k8s.io/json, which
    kube's patch handlers decode with) holds it: integers that fit an int64 stay int64 (decimal), every other
    number is a float64 (:func:`go_float`: ``1.5``, ``1e+21``, ``1`` for ``1.0``); maps print with sorted keys
    ``map[k:v k2:v2]``, lists ``[a b]``, strings bare, null ``<nil>``, booleans ``true``/``false``.

    Unlike :func:`go_value` (whole floats below 1e21 printed as integers), floats keep Go's ``%g`` form."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if value in _INT64_RANGE else go_float(float(value))
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_json_v(v)}" for k, v in sorted(value.items(),
                                                                        key=lambda kv: str(kv[0]))) + "]"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(go_json_v(v) for v in value) + "]"
    return str(value)
