"""resource.Quantity parsing and formatting (k8s.io/apimachinery pkg/api/resource), exact with Fractions.

Accepted: decimal numbers with an optional suffix: binary Ki Mi Gi Ti Pi Ei,
decimal n u m "" k M G T P E, or an exponent (``1e3``, ``2E-3``).
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction
from typing import Any

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


# ParseQuantity clamps a magnitude above 2^63-1 to it and rounds a nonzero one below 1n up to 1n. A number's
# digits are at most 4,300 (Python's int() limit; more is a ValueError), so past an exponent of 5,000 the bound
# is certain and is taken without building the power (10**9999999 took minutes: a request could hang admission).
_MAX_ALLOWED = Fraction(2**63 - 1)
_NANO = Fraction(1, 10**9)
_EXPONENT_BOUND = 5000

_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def parse(value: Any) -> Fraction:
    """A Quantity string or number as an exact Fraction; raises ValueError (``quantities must match ...``)."""
    if isinstance(value, bool):
        raise ValueError(_FORMAT_ERROR)
    if isinstance(value, int | float):
        return Fraction(str(value))
    m = _RE.match(str(value).strip())
    if not m:
        raise ValueError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    number, suffix = Fraction(m.group(1)), m.group(2) or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    exponent = int(suffix[1:])
    if abs(exponent) > _EXPONENT_BOUND:  # never build 10**9999999: kube's bounds decide it at once
        if not number:
            return Fraction(0)
        sign = 1 if number > 0 else -1
        return sign * (_MAX_ALLOWED if exponent > 0 else _NANO)
    return number * Fraction(10) ** exponent


def parsed(raw: Any) -> tuple[Fraction, str] | None:
    """(amount, ``Quantity.String()``) of a decoded quantity value (a JSON string or number), None when it is not
    one or does not parse (the schema's to report). For validators that compare amounts and print kube's text."""
    if raw is None or isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        return None
    try:
        return parse(raw), canonical(raw)
    except ValueError:
        return None


def format(value: Fraction, binary: bool = False) -> str:  # noqa: A001 - mirrors Quantity.String
    """Canonical-ish form: integers plain (or Ki/Mi/Gi when ``binary`` and exact), fractions in m, u or n
    (rounded up to n)."""
    if value.denominator == 1:
        n = int(value)
        if binary and n:
            for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
                if n % _BINARY[suffix] == 0:
                    return f"{n // _BINARY[suffix]}{suffix}"
        return str(n)
    milli = value * 1000
    if milli.denominator == 1:
        return f"{int(milli)}m"
    micro = value * 10**6
    if micro.denominator == 1:
        return f"{int(micro)}u"
    nano = value * 10**9
    return f"{-(-nano.numerator // nano.denominator)}n"


# ------------------------------------------------------------ Quantity.String() of a decoded value

_BINARY_EXP = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_EXP = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {e: s for s, e in _DECIMAL_EXP.items()}
_BINARY_SUFFIX = {e // 10: s for s, e in _BINARY_EXP.items()}
_MAX_BINARY = 2**63 - 1  # ParseQuantity caps a BinarySI amount here (maxAllowed)
_BIN, _DSI, _DEXP = "BinarySI", "DecimalSI", "DecimalExponent"


def _ceil_scaled(u: int, k: int) -> int:
    """``u / 10**k`` rounded away from zero (inf.RoundUp), for k > 0, without building 10**k for a huge k."""
    if u == 0:
        return 0
    sign, mag = (-1 if u < 0 else 1), abs(u)
    if k > len(str(mag)):
        return sign
    return sign * -(-mag // 10**k)


def canonical(value: Any, *, milli: bool = False) -> str:
    """``Quantity.String()`` of a decoded JSON value (:func:`_canonical`), memoized: the same texts recur."""
    if isinstance(value, str) and len(value) <= 64:
        return _canonical_cached(value, milli)
    return _canonical(value, milli=milli)


@functools.lru_cache(maxsize=4096)
def _canonical_cached(value: str, milli: bool) -> str:
    return _canonical(value, milli=milli)


def _canonical(value: Any, *, milli: bool = False) -> str:
    """``Quantity.String()`` of a JSON value once decoded (``UnmarshalJSON``: the text, trimmed, or a number's).

    As k8s.io/apimachinery ``pkg/api/resource`` (quantity.go ``ParseQuantity``, ``CanonicalizeBytes``,
    amount.go): the format of the suffix is kept (BinarySI ``Ki``..``Ei``, DecimalSI ``n``..``E``,
    DecimalExponent ``e<n>``), the mantissa is an integer with the largest exponent (a multiple of 3, or of
    1024 for BinarySI): ``1.5Gi`` -> ``1536Mi``, ``0.5`` -> ``500m``, ``1000m`` -> ``1``; BinarySI below 1024 or
    not integral prints as DecimalSI; values finer than nano round away from zero to ``1n``; a BinarySI amount
    is capped at 2^63-1; DecimalSI past ``E`` falls back to ``e<n>``. A text ParseQuantity's fast path finds
    canonical already (scale a multiple of 3, no trailing ``000``, no leading zero; BinarySI: low bits set) is
    answered as sent (``1e3``, ``+1``, ``05k`` stay). ``milli``: first ``RoundUp(-3)``, as core/v1
    ``SetDefaults_ResourceList`` does to every ResourceList value (``0.0001`` -> ``1m``).

    Raises ValueError (the ``quantities must match ...`` text) when ``value`` does not parse. A JSON number
    arrives as a Python float, so ``1e3`` written as a number prints as ``1k`` (kube keeps the literal).
    """
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(_FORMAT_ERROR)
    text = (value if isinstance(value, str) else str(value)).strip()
    if text == "0":
        return text
    m = _RE.match(text)
    if not m:
        raise ValueError(_FORMAT_ERROR)
    number, suffix = m.group(1), m.group(2) or ""
    negative = number.startswith("-")
    whole, _, frac = number.lstrip("+-").partition(".")
    num = whole.lstrip("0") or "0"
    if suffix in _BINARY_EXP:
        fmt, exp = _BIN, _BINARY_EXP[suffix]
    elif suffix in _DECIMAL_EXP:
        fmt, exp = _DSI, _DECIMAL_EXP[suffix]
    else:
        fmt, exp = _DEXP, int(suffix[1:])
    sign = -1 if negative else 1
    cached: str | None = None
    fast = False  # ParseQuantity's int64Amount path
    if fmt == _BIN:
        precision = 15 - len(num) - exp * 3 // 10 - 1 if not frac else -1
    else:
        precision = 18 - len(num) - len(frac)
    u, e = 0, 0
    if precision >= 0:
        scale = (0 if fmt == _BIN else exp) - len(frac)
        shifted = num + frac
        digits = int(shifted)
        result = digits << exp if fmt == _BIN else digits
        if scale >= -9 and result <= _MAX_BINARY:
            fast, u, e = True, sign * result, scale
            if fmt == _BIN:
                cached = text if digits & 7 else None
            elif scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
                cached = text
    if not fast:
        digits = int((whole + frac) or "0")
        u, e = (sign * (digits << exp), -len(frac)) if fmt == _BIN else (sign * digits, exp - len(frac))
        if u and e < -9:
            u, e = _ceil_scaled(u, -9 - e), -9
        if fmt == _BIN:
            unit = 10 ** -e if e < 0 else 1
            if abs(u) > _MAX_BINARY * unit:
                u, e = sign * _MAX_BINARY, 0
            elif 0 < abs(u) < unit:
                fmt = _DSI
    if milli and (not fast or e < -3):
        cached = None
        if u and e < -3:
            u, e = _ceil_scaled(u, -3 - e), -3
    return cached if cached is not None else _canonical_string(u, e, fmt)


def _canonical_string(u: int, e: int, fmt: str) -> str:
    """CanonicalizeBytes of the amount ``u * 10**e`` in format ``fmt``."""
    if u == 0:
        return "0"
    if fmt == _BIN:
        unit = 10 ** -e if e < 0 else 1
        if abs(u) < 1024 * unit or u % unit:
            fmt = _DSI
        else:
            n = u // unit if e < 0 else u * 10**e
            times = 0
            while abs(n) >= 1024 and n % 1024 == 0:
                n, times = n // 1024, times + 1
            return f"{n}{_BINARY_SUFFIX.get(times, '')}"
    while u % 10 == 0:
        u, e = u // 10, e + 1
    r = e % 3
    u, e = u * 10**r, e - r
    suffix = _DECIMAL_SUFFIX.get(e) if fmt == _DSI else None
    if suffix is None:
        suffix = f"e{e}" if e else ""
    return f"{u}{suffix}"
