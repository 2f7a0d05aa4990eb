"""resource.Quantity parsing and formatting (k8s.io/apimachinery pkg/api/resource), exact with Fractions.

Accepted: decimal numbers with an optional suffix: binary Ki Mi Gi Ti Pi Ei,
decimal n u m "" k M G T P E, or an exponent (``1e3``, ``2E-3``).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_RE = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


def parse(value: Any) -> Fraction:
    """A Quantity string or number as an exact Fraction; raises ValueError (``quantities must match ...``)."""
    if isinstance(value, bool):
        raise ValueError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
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
    return number * Fraction(10) ** int(suffix[1:])


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
