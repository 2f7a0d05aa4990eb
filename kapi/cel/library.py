"""Kubernetes' CEL function libraries for the ``cel`` package: one registry used to compile and to evaluate.

kube-apiserver compiles CRD ``x-kubernetes-validations`` rules and admission
policy expressions in a CEL environment with cel-go's extension libraries
and Kubernetes' own ("Common Expression Language in Kubernetes", "CEL
options, language features, and libraries"): strings (``charAt``,
``indexOf``, ``lastIndexOf``, ``lowerAscii``, ``upperAscii``, ``replace``,
``split``, ``substring``, ``trim``, ``join``, ``reverse``, ``format``,
``strings.quote``), the Kubernetes list library (``isSorted``, ``sum``,
``min``, ``max``, ``indexOf``, ``lastIndexOf``) and cel-go's lists
(``distinct``, ``flatten``, ``slice``, ``reverse``, ``sort``,
``lists.range``), regex (``find``, ``findAll``), IP/CIDR, URL, quantity,
semver, sets, base64 and math. The ``cel`` package evaluates only the CEL
core; :data:`FUNCTIONS` registers the rest as Python functions (the
package's ``Context(functions=...)`` extension mechanism; ``x.f(a)`` calls
``f(x, a)``) and :data:`NAMES` is the set of function names
:mod:`kapi.crd.rules` accepts at compile time (anything else is cel-go's
``undeclared reference``).

Opaque kube types (``net.IP``, ``net.IPNet``, ``URL``, ``kubernetes.Quantity``,
``kubernetes.Semver``) cannot cross the package's Python boundary, so they
are CEL maps ``{"@type": <type>, "value": <canonical form>}``; equal values
compare equal with ``==``. Two-variable comprehensions and ``self.?x`` are
rewritten by :mod:`kapi.cel.rewrite`; ``sortBy``, ``transformMapEntry`` and
``cel.bind`` (macros whose arguments must stay unevaluated) are not
evaluated.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kapi import goregexp
from kapi import quantity as _quantity
from kapi.cel.engine import cel, stdlib
from kapi.cel.syntax import escape

Obj = dict[str, Any]
_TYPE = "@type"


class CelError(ValueError):
    """A kube library function refused its input; the message is kube's (``... evaluating rule: ...`` follows)."""


def _opaque(type_: str, value: Any) -> Obj:
    return {_TYPE: type_, "value": value}


def _unwrap(value: Any, type_: str, fn: str) -> Any:
    if isinstance(value, dict) and value.get(_TYPE) == type_:
        return value["value"]
    raise CelError(f"no such overload: {fn}")


def _kind(value: Any) -> str | None:
    return value.get(_TYPE) if isinstance(value, dict) else None


# --- escaping of property names (apiserver pkg/cel: "Escaping") ----------------------------------------------------

def escaped_value(value: Any, schema: Any) -> Any:
    """``value`` with the keys of schema-declared properties renamed as CEL sees them (``namespace`` ->
    ``__namespace__``, ``a-b`` -> ``a__dash__b``, ...); maps (``additionalProperties``) keep their keys.

    Returns ``value`` itself when nothing changes. Inaccessible property names stay as they are
    (CEL cannot name them).
    """
    if not isinstance(schema, dict):
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, dict):
            return value
        out_list = [escaped_value(v, items) for v in value]
        return value if all(a is b for a, b in zip(out_list, value, strict=True)) else out_list
    if not isinstance(value, dict):
        return value
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if not isinstance(props, dict):
        if isinstance(extra, dict):
            out_map = {k: escaped_value(v, extra) for k, v in value.items()}
            return value if all(out_map[k] is v for k, v in value.items()) else out_map
        return value
    changed = False
    out: Obj = {}
    for key, sub in value.items():
        sub_schema = props.get(key)
        new_key = key
        if isinstance(sub_schema, dict):
            new_key = escape(str(key)) or key
            new_sub = escaped_value(sub, sub_schema)
        else:
            new_sub = sub
        changed = changed or new_key != key or new_sub is not sub
        out[new_key] = new_sub
    return out if changed else value


# --- strings ---------------------------------------------------------------------------------------------------------

def _index_of(target: Any, item: Any, offset: int = 0) -> int:
    if isinstance(target, list):  # Kubernetes list library
        for i, v in enumerate(target):
            if v == item and type(v) is type(item):
                return i
        return -1
    return int(stdlib.index_of(target, item, offset))


def _last_index_of(target: Any, item: Any, *offset: int) -> int:
    if isinstance(target, list):
        for i in range(len(target) - 1, -1, -1):
            if target[i] == item and type(target[i]) is type(item):
                return i
        return -1
    return int(stdlib.last_index_of(target, item, *offset))


_VERB = re.compile(r"%(?:\.(\d+))?([sdfeEbxXo%])")


def _format_one(verb: str, precision: str | None, arg: Any) -> str:
    if verb == "s":
        if isinstance(arg, bool):
            return "true" if arg else "false"
        if isinstance(arg, list):
            return "[" + ", ".join(_format_one("s", None, a) for a in arg) + "]"
        if isinstance(arg, bytes):
            return arg.decode("utf-8", "replace")
        if arg is None:
            return "null"
        return str(arg)
    if verb == "d":
        if isinstance(arg, bool) or not isinstance(arg, int):
            raise CelError(f"error during formatting: decimal clause can only be used on integers, was given {arg!r}")
        return str(arg)
    if verb in "fFeE":
        if isinstance(arg, bool) or not isinstance(arg, int | float):
            raise CelError(f"error during formatting: fixed-point clause can only be used on doubles, "
                           f"was given {arg!r}")
        return f"{float(arg):.{int(precision) if precision else 6}{verb}}"
    if verb in "xXob":
        if isinstance(arg, str):
            data = arg.encode()
            return data.hex().upper() if verb == "X" else data.hex()
        if isinstance(arg, bytes):
            return arg.hex().upper() if verb == "X" else arg.hex()
        if isinstance(arg, bool) or not isinstance(arg, int):
            raise CelError(f"error during formatting: only integers, byte buffers, and strings can be formatted as "
                           f"hex, was given {arg!r}")
        return format(arg, verb)
    raise CelError(f"error during formatting: unrecognized formatting clause '{verb}'")


def _format(template: str, args: list[Any]) -> str:
    """cel-go's ``string.format(list)`` for %s %d %f %e %x %X %o %b and %% (``%.Nf`` precision)."""
    pos = 0

    def one(m: re.Match[str]) -> str:
        nonlocal pos
        if m.group(2) == "%":
            return "%"
        if pos >= len(args):
            raise CelError(f"index {pos} out of range")
        pos += 1
        return _format_one(m.group(2), m.group(1), args[pos - 1])

    return _VERB.sub(one, template)


# --- lists -----------------------------------------------------------------------------------------------------------

def _is_sorted(items: list[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _min(*args: Any) -> Any:
    if len(args) == 1 and isinstance(args[0], list) and not args[0]:
        raise CelError("min called on empty list")
    return stdlib.min_(*args)


def _max(*args: Any) -> Any:
    if len(args) == 1 and isinstance(args[0], list) and not args[0]:
        raise CelError("max called on empty list")
    return stdlib.max_(*args)


def _reverse(value: Any) -> Any:
    return stdlib.reverse(value)


# --- regex -----------------------------------------------------------------------------------------------------------

def _regex(pattern: str) -> Any:
    """``pattern`` compiled by RE2 (linear-time matching, Go's syntax: :mod:`kapi.goregexp`); raises CelError
    ``error parsing regexp: ...`` when it does not compile."""
    regexp = goregexp.compiled(pattern)
    if regexp is not None:
        return regexp
    try:
        re.compile(pattern)
        detail = "invalid or unsupported Perl syntax"  # RE2 and Go refuse what Python would take (lookaround, \1)
    except re.error as err:
        detail = str(err)
    raise CelError(f"error parsing regexp: {detail}")


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    if limit == 0:
        return []
    found = [m.group(0) for m in _regex(pattern).finditer(s)]
    return found if limit < 0 else found[:limit]


# --- IP and CIDR (library/ip.go, library/cidr.go) ------------------------------------------------------------------

_IP, _CIDR = "net.IP", "net.IPNet"


def _parse_ip(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """netip.ParseAddr plus kube's refusals; raises CelError with kube's message."""
    if "%" in s:
        raise CelError(f"IP address {s!r} with zone value is not allowed")
    try:
        addr = ipaddress.ip_address(s)
    except ValueError:
        raise CelError(f'IP Address "{s}" parse error during conversion from string: ParseAddr("{s}"): '
                       f"unable to parse IP") from None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CelError(f"IPv4-mapped IPv6 address {s!r} is not allowed")
    return addr


def _parse_cidr(s: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    if "/" not in s:
        raise CelError(f'network address "{s}" parse error during conversion from string: '
                       f'netip.ParsePrefix("{s}"): no \'/\'')
    addr, _, bits = s.partition("/")
    ip = _parse_ip(addr)
    if not bits.isdigit() or (len(bits) > 1 and bits[0] == "0") or int(bits) > ip.max_prefixlen:
        raise CelError(f'network address "{s}" parse error during conversion from string: '
                       f'netip.ParsePrefix("{s}"): bad bits after slash: "{bits}"')
    return ipaddress.ip_interface(f"{ip}/{int(bits)}")


def _is_ip(s: str) -> bool:
    try:
        _parse_ip(s)
    except CelError:
        return False
    return True


def _ip(value: Any) -> Obj:
    if _kind(value) == _CIDR:
        return _opaque(_IP, str(ipaddress.ip_interface(value["value"]).ip))
    return _opaque(_IP, str(_parse_ip(str(value))))


def _addr(value: Any, fn: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    return ipaddress.ip_address(_unwrap(value, _IP, fn))


def _global_unicast(value: Any) -> bool:
    a = _addr(value, "isGlobalUnicast")
    if a.is_unspecified or a.is_loopback or a.is_multicast or a.is_link_local:
        return False
    return not (isinstance(a, ipaddress.IPv4Address) and a == ipaddress.IPv4Address("255.255.255.255"))


def _is_cidr(s: str) -> bool:
    try:
        _parse_cidr(s)
    except CelError:
        return False
    return True


def _cidr(s: str) -> Obj:
    iface = _parse_cidr(str(s))
    return _opaque(_CIDR, f"{iface.ip}/{iface.network.prefixlen}")


def _net(value: Any, fn: str) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    return ipaddress.ip_interface(_unwrap(value, _CIDR, fn))


def _contains_ip(net: Any, ip: Any) -> bool:
    addr = _addr(ip, "containsIP") if _kind(ip) == _IP else _parse_ip(str(ip))
    return addr.version == _net(net, "containsIP").version and addr in _net(net, "containsIP").network


def _contains_cidr(net: Any, other: Any) -> bool:
    sub = _net(other, "containsCIDR") if _kind(other) == _CIDR else _parse_cidr(str(other))
    outer = _net(net, "containsCIDR").network
    return sub.version == outer.version and sub.network.subnet_of(outer)  # type: ignore[arg-type]


def _masked(net: Any) -> Obj:
    return _opaque(_CIDR, str(_net(net, "masked").network))


# --- URL (library/urls.go) -------------------------------------------------------------------------------------------

_URL = "kubernetes.URL"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")


def _parse_url(s: str) -> str:
    """url.ParseRequestURI's acceptance: an absolute URL or an absolute path; raises CelError."""
    ok = bool(s) and (s.startswith("/") or _SCHEME.match(s) is not None) and not any(c in s for c in " \x7f") and (
        all(ord(c) >= 0x20 for c in s))
    if ok:
        try:
            urlsplit(s)
        except ValueError:
            ok = False
    if not ok:
        raise CelError(f"URL parse error during conversion from string: parse \"{s}\": invalid URI for request")
    return s


def _is_url(s: str) -> bool:
    try:
        _parse_url(s)
    except CelError:
        return False
    return True


def _url_part(value: Any, part: str) -> Any:
    parts = urlsplit(_unwrap(value, _URL, part))
    netloc = parts.netloc.rpartition("@")[2]
    if part == "getScheme":
        return parts.scheme
    if part == "getHost":
        return netloc
    if part == "getHostname":
        host = netloc
        if host.startswith("["):
            return host[1:host.find("]")] if "]" in host else host[1:]
        return host.partition(":")[0]
    if part == "getPort":
        if netloc.startswith("["):
            rest = netloc[netloc.find("]") + 1:] if "]" in netloc else ""
            return rest[1:] if rest.startswith(":") else ""
        return netloc.partition(":")[2]
    if part == "getEscapedPath":
        return parts.path
    return {k: v for k, v in parse_qs(parts.query, keep_blank_values=True).items()}


# --- quantity (library/quantity.go) ----------------------------------------------------------------------------------

_QTY = "kubernetes.Quantity"


def _frac(value: Any, fn: str) -> Fraction:
    return Fraction(_unwrap(value, _QTY, fn))


def _qty(f: Fraction) -> Obj:
    return _opaque(_QTY, str(f))


def _quantity_of(s: str) -> Obj:
    try:
        return _qty(_quantity.parse(str(s)))
    except ValueError as err:
        raise CelError(str(err)) from None


def _is_quantity(s: str) -> bool:
    try:
        _quantity.parse(str(s))
    except ValueError:
        return False
    return True


def _operand(value: Any, fn: str) -> Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    return _frac(value, fn)


_SEMVER = "kubernetes.Semver"
_SEMVER_RE = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.\-]+))?(?:\+([0-9A-Za-z.\-]+))?$")


def _parse_semver(s: str, normalize: bool = False) -> tuple[int, int, int, str]:
    text = str(s)
    if normalize:
        text = text[1:] if text.startswith("v") else text
        cut = min((i for i in (text.find("-"), text.find("+")) if i >= 0), default=len(text))
        nums = text[:cut].split(".")
        nums += ["0"] * (3 - len(nums))
        text = ".".join(str(int(n)) if n.isdigit() else n for n in nums) + text[cut:]
    m = _SEMVER_RE.match(text)
    if not m:
        raise CelError(f"No Major.Minor.Patch elements found in {s!r}" if "." not in str(s)
                       else f"Invalid character(s) found in version {s!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4) or ""


def _semver(s: str, normalize: bool = False) -> Obj:
    major, minor, patch, pre = _parse_semver(s, normalize)
    return _opaque(_SEMVER, f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else ""))


def _is_semver(s: str, normalize: bool = False) -> bool:
    try:
        _parse_semver(s, normalize)
    except CelError:
        return False
    return True


def _semver_key(value: Any, fn: str) -> tuple[int, int, int, int, list[tuple[int, int | str]]]:
    major, minor, patch, pre = _parse_semver(_unwrap(value, _SEMVER, fn))
    ids: list[tuple[int, int | str]] = [(0, int(p)) if p.isdigit() else (1, p) for p in pre.split(".")] if pre else []
    return major, minor, patch, 0 if pre else 1, ids


def _compare(a: Any, b: Any, fn: str) -> int:
    if _kind(a) == _SEMVER:
        ka, kb = _semver_key(a, fn), _semver_key(b, fn)
        return (ka > kb) - (ka < kb)
    fa, fb = _frac(a, fn), _frac(b, fn)
    return (fa > fb) - (fa < fb)


def _add(a: Any, b: Any) -> Obj:
    return _qty(_frac(a, "add") + _operand(b, "add"))


def _sub(a: Any, b: Any) -> Obj:
    return _qty(_frac(a, "sub") - _operand(b, "sub"))


def _as_integer(a: Any) -> int:
    f = _frac(a, "asInteger")
    if f.denominator != 1 or not -(2**63) <= f.numerator < 2**63:
        raise CelError("cannot convert value to integer")
    return f.numerator


def _is_integer(a: Any) -> bool:
    f = _frac(a, "isInteger")
    return f.denominator == 1 and -(2**63) <= f.numerator < 2**63


def _sign(a: Any) -> int:
    f = _frac(a, "sign")
    return (f > 0) - (f < 0)


def _semver_part(index: int, fn: str) -> Callable[[Any], int]:
    return lambda v: _semver_key(v, fn)[index]  # type: ignore[return-value]


def _math_sign(x: Any) -> Any:
    if _kind(x) == _QTY:
        return _sign(x)
    return stdlib.math_sign(x)


def _math_round(x: Any) -> float:
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return x
    return float(stdlib.math_round(x))


def _string_or_list_reverse(x: Any) -> Any:
    return _reverse(x)


_KUBE: dict[str, Callable[..., Any]] = {
    # strings (cel-go ext.Strings v2) and the Kubernetes list library share indexOf/lastIndexOf/reverse
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "reverse": _string_or_list_reverse,
    "format": _format,
    # Kubernetes list library
    "isSorted": _is_sorted,
    "min": _min,
    "max": _max,
    # regex
    "find": _find,
    "findAll": _find_all,
    # IP / CIDR
    "isIP": _is_ip,
    "ip": _ip,
    "ip.isCanonical": lambda s: _is_ip(s) and str(_parse_ip(s)) == s,
    "family": lambda v: _addr(v, "family").version,
    "isUnspecified": lambda v: _addr(v, "isUnspecified").is_unspecified,
    "isLoopback": lambda v: _addr(v, "isLoopback").is_loopback,
    "isLinkLocalMulticast": lambda v: (a := _addr(v, "isLinkLocalMulticast")).is_multicast and (
        a in ipaddress.ip_network("224.0.0.0/24") if a.version == 4 else a in ipaddress.ip_network("ff02::/16")),
    "isLinkLocalUnicast": lambda v: (a := _addr(v, "isLinkLocalUnicast")).is_link_local and not a.is_multicast,
    "isGlobalUnicast": _global_unicast,
    "isCIDR": _is_cidr,
    "cidr": _cidr,
    "containsIP": _contains_ip,
    "containsCIDR": _contains_cidr,
    "masked": _masked,
    "prefixLength": lambda v: _net(v, "prefixLength").network.prefixlen,
    # URL
    "isURL": _is_url,
    "url": lambda s: _opaque(_URL, _parse_url(str(s))),
    **{fn: (lambda v, _fn=fn: _url_part(v, _fn))
       for fn in ("getScheme", "getHost", "getHostname", "getPort", "getEscapedPath", "getQuery")},
    # quantity and semver (isLessThan/isGreaterThan/compareTo are shared)
    "isQuantity": _is_quantity,
    "quantity": _quantity_of,
    "isLessThan": lambda a, b: _compare(a, b, "isLessThan") < 0,
    "isGreaterThan": lambda a, b: _compare(a, b, "isGreaterThan") > 0,
    "compareTo": lambda a, b: _compare(a, b, "compareTo"),
    "add": _add,
    "sub": _sub,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: float(_frac(a, "asApproximateFloat")),
    "sign": _sign,
    "isInteger": _is_integer,
    "isSemver": _is_semver,
    "semver": _semver,
    "major": _semver_part(0, "major"),
    "minor": _semver_part(1, "minor"),
    "patch": _semver_part(2, "patch"),
    "math.sign": _math_sign,
    "math.round": _math_round,
}

#: Every function kapi adds to the ``cel`` package: name (``x.f()`` and ``f(x)`` alike, or ``ns.f``) -> callable.
FUNCTIONS: dict[str, Callable[..., Any]] = {**stdlib.STDLIB_FUNCTIONS, **_KUBE}
FUNCTIONS.pop("first", None)  # not in kube's environment (cel-go lists v1 has no first/last)
FUNCTIONS.pop("last", None)

#: Functions the ``cel`` package evaluates natively (CEL core, macros, timestamp/duration accessors, optional).
BUILTINS = frozenset({
    "size", "has", "int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration", "type", "dyn",
    "contains", "startsWith", "endsWith", "matches", "all", "exists", "exists_one", "map", "filter",
    "getFullYear", "getMonth", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getHours",
    "getMinutes", "getSeconds", "getMilliseconds", "optional.of", "optional.none", "optional.ofNonZeroValue",
    "hasValue", "value", "orValue", "or",
})

#: Function names that compile in kube's CRD/admission CEL environment and evaluate here.
NAMES = frozenset(FUNCTIONS) | BUILTINS


def context(variables: dict[str, Any]) -> cel.Context:
    """A ``cel.Context`` with ``variables`` and every function of :data:`FUNCTIONS`."""
    return cel.Context(variables, functions=FUNCTIONS)


_FAILED = re.compile(r"Python function call failed: CelError: (.*?)(?:\. Check function arguments and their types\.)?$",
                     re.DOTALL)


def library_error(exc: BaseException) -> str | None:
    """kube's message when ``exc`` is a library function's refusal (:class:`CelError`) raised through ``cel``."""
    if isinstance(exc, CelError):
        return str(exc)
    m = _FAILED.search(str(exc))
    return m.group(1) if m else None


_OVERLOAD_ERRORS = ("No such overload", "Unsupported operation")

#: The ``cel`` package's failed string conversions -> the CEL type cel-go names (``common/types/types.go``).
_CONVERSION = re.compile(r"Function '(int|uint|double|duration|timestamp)' error: (?!integer overflow|unsigned "
                         r"integer overflow)")
_CONVERSION_TYPES = {"int": "int", "uint": "uint", "double": "double", "duration": "google.protobuf.Duration",
                     "timestamp": "google.protobuf.Timestamp"}


def conversion_error(exc: BaseException) -> str | None:
    """cel-go's text for ``int()``, ``uint()``, ``double()``, ``duration()`` or ``timestamp()`` of a string it
    cannot parse, or None if ``exc`` is not such a failure.

    cel-go's ``String.ConvertToType`` (``common/types/string.go``) drops the strconv/time error and answers
    ``type conversion error from 'string' to '<type>'``, the type as cel-go prints it: ``int``, ``uint``,
    ``double``, ``google.protobuf.Duration``, ``google.protobuf.Timestamp``; a timestamp that parses but lies
    outside years 1-9999 (``0000-01-01T00:00:00Z``) is ``timestamp overflow`` (``common/types/err.go``).
    """
    m = _CONVERSION.match(str(exc)) if isinstance(exc, RuntimeError) else None
    if m:
        return f"type conversion error from 'string' to '{_CONVERSION_TYPES[m.group(1)]}'"
    if isinstance(exc, ValueError) and str(exc) == "year 0 is out of range":
        return "timestamp overflow"
    return None


def runtime_error(exc: BaseException) -> str | None:
    """cel-go's text for an evaluation error the ``cel`` package raised, or None if ``exc`` is no runtime error.

    cel-go words them ``division by zero``, ``modulus by zero``, ``integer overflow`` (``unsigned integer
    overflow`` for a ``uint()`` out of range), ``no such key: <key>``, ``index out of bounds: <index>`` and
    ``no such overload`` (common/types/err.go); a string conversion that fails is ``type conversion error from
    'string' to '<type>'`` (:func:`conversion_error`); a kube library function's refusal keeps its own message
    (:func:`library_error`). A parse error or an undeclared name (which kube rejects when the rule is compiled)
    gives None.
    """
    library = library_error(exc) or conversion_error(exc)
    if library is not None:
        return library
    if isinstance(exc, ZeroDivisionError):
        return "modulus by zero" if "modulo" in str(exc) else "division by zero"
    if isinstance(exc, OverflowError):  # cel-go's errUintOverflow for uint results, else errIntOverflow
        return "unsigned integer overflow" if "unsigned" in str(exc) else "integer overflow"
    if isinstance(exc, KeyError):
        return f"no such key: {exc.args[0]}" if exc.args else "no such key"
    if isinstance(exc, IndexError):
        return str(exc)  # the package already says "index out of bounds: <index>"
    if isinstance(exc, TypeError) and str(exc).startswith(_OVERLOAD_ERRORS):
        return "no such overload"
    if isinstance(exc, ValueError) and str(exc).startswith("Failed to parse expression"):
        return None
    if isinstance(exc, RuntimeError) and str(exc).startswith("Undefined variable or function"):
        return None
    return str(exc)
