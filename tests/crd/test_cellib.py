"""kapi.cel.library: kube's CEL libraries evaluated (services.admission.matching.evaluate_cel), compiled
(kapi.crd.rules) and applied to custom resources (services.admission.crd_schema: escaping, kube's evaluation errors).

Expected values follow "Common Expression Language in Kubernetes" (library reference tables).
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi.cel import library
from kapi.crd import rules
from services.admission import crd_schema
from services.admission.matching import evaluate_cel

# (expression, expected result) — a true and a false case per function
VALUES: list[tuple[str, Any]] = [
    # strings
    ("'hello'.charAt(1)", "e"),
    ("'hello'.indexOf('l')", 2),
    ("'hello'.indexOf('z')", -1),
    ("'hello'.lastIndexOf('l')", 3),
    ("'HeLLo'.lowerAscii()", "hello"),
    ("'hello'.upperAscii()", "HELLO"),
    ("'a-b-c'.replace('-', '.')", "a.b.c"),
    ("'a,b,c'.split(',')", ["a", "b", "c"]),
    ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
    ("'hello'.substring(1, 3)", "el"),
    ("'  x  '.trim()", "x"),
    ("['a', 'b'].join('-')", "a-b"),
    ("'abc'.reverse()", "cba"),
    ("'%s has %d items, %.2f%%'.format(['x', 3, 1.5])", "x has 3 items, 1.50%"),
    ("strings.quote('a\"b')", '"a\\"b"'),
    # Kubernetes list library
    ("[1, 2, 3].isSorted()", True),
    ("[2, 1].isSorted()", False),
    ("[1, 2, 3].sum()", 6),
    ("[].sum()", 0),
    ("[3, 1, 2].min()", 1),
    ("[3, 1, 2].max()", 3),
    ("[1, 2, 1].indexOf(1)", 0),
    ("[1, 2, 1].lastIndexOf(1)", 2),
    ("[1, 2].indexOf(5)", -1),
    # cel-go lists extension
    ("[1, 2, 1].distinct()", [1, 2]),
    ("[[1], [2, 3]].flatten()", [1, 2, 3]),
    ("[1, 2, 3, 4].slice(1, 3)", [2, 3]),
    ("[1, 2].reverse()", [2, 1]),
    ("[3, 1, 2].sort()", [1, 2, 3]),
    ("lists.range(3)", [0, 1, 2]),
    # regex
    ("'abc 123'.find('[0-9]+')", "123"),
    ("'abc'.find('[0-9]+')", ""),
    ("'1 22 333'.findAll('[0-9]+')", ["1", "22", "333"]),
    ("'1 22 333'.findAll('[0-9]+', 2)", ["1", "22"]),
    # Go's regexp (RE2): linear time, so a catastrophic pattern against a long near-match answers at once
    ("'" + "a" * 60 + "!'.find('^(a+)+$')", ""),
    # IP
    ("isIP('10.0.0.1')", True),
    ("isIP('fe80::1')", True),
    ("isIP('10.0.0')", False),
    ("isIP('::ffff:1.2.3.4')", False),  # IPv4-mapped IPv6 is refused
    ("isIP('fe80::1%eth0')", False),  # zones are refused
    ("ip('10.0.0.1').family()", 4),
    ("ip('::1').family()", 6),
    ("ip('::1') == ip('0:0::1')", True),
    ("ip('127.0.0.1').isLoopback()", True),
    ("ip('10.0.0.1').isLoopback()", False),
    ("ip('0.0.0.0').isUnspecified()", True),
    ("ip('224.0.0.1').isLinkLocalMulticast()", True),
    ("ip('224.0.1.1').isLinkLocalMulticast()", False),
    ("ip('10.0.0.1').isGlobalUnicast()", True),
    ("ip('255.255.255.255').isGlobalUnicast()", False),
    ("ip.isCanonical('2001:db8::1')", True),
    ("ip.isCanonical('2001:DB8::1')", False),
    # CIDR
    ("isCIDR('10.0.0.0/8')", True),
    ("isCIDR('10.0.0.0')", False),
    ("isCIDR('10.0.0.0/33')", False),
    ("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", True),
    ("cidr('10.0.0.0/8').containsIP('11.1.2.3')", False),
    ("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')", True),
    ("cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", False),
    ("cidr('192.168.1.5/24').ip() == ip('192.168.1.5')", True),
    ("cidr('192.168.1.5/24').masked() == cidr('192.168.1.0/24')", True),
    ("cidr('192.168.1.5/24').prefixLength()", 24),
    # URL
    ("isURL('https://example.com:8443/a/b?x=1')", True),
    ("isURL('/absolute/path')", True),
    ("isURL('example.com')", False),
    ("url('https://example.com:8443/a').getScheme()", "https"),
    ("url('https://example.com:8443/a').getHost()", "example.com:8443"),
    ("url('https://[::1]:8443/a').getHostname()", "::1"),
    ("url('https://example.com:8443/a').getPort()", "8443"),
    ("url('https://example.com/a%20b').getEscapedPath()", "/a%20b"),
    ("url('https://example.com/?k=a&k=b').getQuery()", {"k": ["a", "b"]}),
    # quantity
    ("isQuantity('1.5Gi')", True),
    ("isQuantity('1.5GB')", False),
    ("quantity('1Gi') == quantity('1024Mi')", True),
    ("quantity('1Gi').isLessThan(quantity('2Gi'))", True),
    ("quantity('1Gi').isGreaterThan(quantity('2Gi'))", False),
    ("quantity('1Gi').compareTo(quantity('1024Mi'))", 0),
    ("quantity('1').add(quantity('500m')) == quantity('1500m')", True),
    ("quantity('1').add(2) == quantity('3')", True),
    ("quantity('1').sub(quantity('500m')) == quantity('0.5')", True),
    ("quantity('2k').asInteger()", 2000),
    ("quantity('500m').asApproximateFloat()", 0.5),
    ("quantity('-1').sign()", -1),
    ("quantity('1.5').isInteger()", False),
    ("quantity('2').isInteger()", True),
    # semver
    ("isSemver('1.2.3')", True),
    ("isSemver('v1.2')", False),
    ("isSemver('v1.2', true)", True),
    ("semver('1.2.3').isLessThan(semver('1.10.0'))", True),
    ("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", True),
    ("semver('1.2.3').major() * 100 + semver('1.2.3').minor() * 10 + semver('1.2.3').patch()", 123),
    # sets, base64, math
    ("sets.contains([1, 2, 3], [2, 3])", True),
    ("sets.contains([1, 2], [3])", False),
    ("sets.equivalent([1, 2], [2, 1, 1])", True),
    ("sets.intersects([1, 2], [3])", False),
    ("base64.encode(b'hello')", "aGVsbG8="),
    ("base64.decode('aGVsbG8=') == b'hello'", True),
    ("math.greatest(1, 5, 3)", 5),
    ("math.least([4, 2])", 2),
    ("math.ceil(1.2)", 2.0),
    ("math.floor(1.8)", 1.0),
    ("math.round(1.5)", 2.0),
    ("math.abs(-3)", 3),
    ("math.sign(-2)", -1),
    ("math.isNaN(0.0 / 0.0)", True),
    # native optional values
    ("optional.of(1).hasValue()", True),
    ("optional.none().orValue(7)", 7),
]


@pytest.mark.parametrize(("expression", "expected"), VALUES)
def test_library_function(expression: str, expected: Any) -> None:
    assert evaluate_cel(expression, {}) == expected
    assert rules.compile_errors(expression, {"type": "object"}, resource_root=False) is None


# (expression, kube's error message)
REFUSED = [
    ("ip('10.0.0')", 'IP Address "10.0.0" parse error during conversion from string: ParseAddr("10.0.0"): '
                     "unable to parse IP"),
    ("ip('::ffff:1.2.3.4')", "IPv4-mapped IPv6 address '::ffff:1.2.3.4' is not allowed"),
    ("cidr('10.0.0.0')", 'network address "10.0.0.0" parse error during conversion from string: '
                         "netip.ParsePrefix(\"10.0.0.0\"): no '/'"),
    ("url('example.com')", 'URL parse error during conversion from string: parse "example.com": '
                           'invalid URI for request'),
    ("quantity('1GB')", "quantities must match the regular expression "
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("quantity('1.5').asInteger()", "cannot convert value to integer"),
    ("[].min()", "min called on empty list"),
    ("'%d'.format(['x'])", "error during formatting: decimal clause can only be used on integers, was given 'x'"),
]


@pytest.mark.parametrize(("expression", "message"), REFUSED)
def test_library_refusal_is_kubes_message(expression: str, message: str) -> None:
    with pytest.raises((ValueError, RuntimeError)) as err:
        evaluate_cel(expression, {})
    assert library.library_error(err.value) == message


STRING_SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


@pytest.mark.parametrize(("source", "error"), [
    ("isIP(self.a)", None),
    ("self.a.lowerAscii() == 'x'", None),
    ("self.a.sortBy(e, e)", None),  # a kube macro the cel package cannot evaluate: accepted as kube does
    ("bogus(self.a)", "ERROR: <input>:1:6: undeclared reference to 'bogus' (in container '')\n"
                      " | bogus(self.a)\n | .....^"),
    ("self.a.isIPv4()", "ERROR: <input>:1:14: undeclared reference to 'isIPv4' (in container '')\n"
                        " | self.a.isIPv4()\n | .............^"),
    ("math.nope(1) == 1", "ERROR: <input>:1:10: undeclared reference to 'math.nope' (in container '')\n"
                          " | math.nope(1) == 1\n | .........^"),
])
def test_unknown_functions_refused_at_crd_write(source: str, error: str | None) -> None:
    assert rules.compile_errors(source, STRING_SCHEMA, resource_root=False) == error


def test_names_registry_covers_every_evaluated_function() -> None:
    assert set(library.FUNCTIONS) <= library.NAMES
    assert {"isIP", "cidr", "url", "quantity", "find", "format", "isSorted", "lowerAscii"} <= library.NAMES


ESCAPE_SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "namespace": {"type": "string"}, "a-b": {"type": "string"}, "x.y": {"type": "string"}, "p/q": {"type": "string"},
    "a__b": {"type": "string"}, "if": {"type": "string"},
    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    "refs": {"type": "array", "items": {"type": "object", "properties": {"namespace": {"type": "string"}}}}}}


def test_escaped_value_renames_declared_properties_only() -> None:
    value = {"namespace": "ns", "a-b": "1", "x.y": "2", "p/q": "3", "a__b": "4", "if": "5",
             "labels": {"a-b": "kept"}, "refs": [{"namespace": "r"}]}
    assert library.escaped_value(value, ESCAPE_SCHEMA) == {
        "__namespace__": "ns", "a__dash__b": "1", "x__dot__y": "2", "p__slash__q": "3", "a__underscores__b": "4",
        "__if__": "5", "labels": {"a-b": "kept"}, "refs": [{"__namespace__": "r"}]}
    plain = {"labels": {"x": "y"}}
    assert library.escaped_value(plain, ESCAPE_SCHEMA) is plain


def _cr_schema(rule: str) -> dict[str, Any]:
    spec = dict(ESCAPE_SCHEMA, **{"x-kubernetes-validations": [{"rule": rule}]})
    return {"type": "object", "properties": {"spec": spec}}


@pytest.mark.parametrize(("rule", "spec", "messages"), [
    ("self.__namespace__ == 'ns'", {"namespace": "ns"}, []),
    ("self.__namespace__ == 'ns'", {"namespace": "other"},
     ["Invalid value: failed rule: self.__namespace__ == 'ns'"]),
    ("self.refs.all(r, r.__namespace__.startsWith('n'))", {"refs": [{"namespace": "nx"}]}, []),
    ("self.a__dash__b.lowerAscii() == 'x' && self.labels['a-b'] == 'y'", {"a-b": "X", "labels": {"a-b": "y"}}, []),
    ("isIP(self.__if__)", {"if": "10.0.0.1"}, []),
    ("ip(self.__if__).family() == 4", {"if": "nope"},
     ['Invalid value: "object": IP Address "nope" parse error during conversion from string: ParseAddr("nope"): '
      "unable to parse IP evaluating rule: ip(self.__if__).family() == 4"]),
])
def test_custom_resource_rules_use_escaped_names(rule: str, spec: dict[str, Any], messages: list[str]) -> None:
    causes = crd_schema.validate({"spec": spec}, _cr_schema(rule))
    assert [c.message for c in causes] == messages


REWRITE_ENV = {"self": {"a": {"b": 2}, "l": [10, 20, 30], "m": {"x": 1, "y": 2}}}


@pytest.mark.parametrize(("expression", "expected"), [
    # optional selection and indexing (kapi.cel.rewrite)
    ("self.?a.?b.orValue(0)", 2),
    ("self.?x.?b.orValue(7)", 7),
    ("self.?a.hasValue()", True),
    ("self.?x.hasValue()", False),
    ("self.l[?5].orValue(-1)", -1),
    ("self.m[?'x'].value()", 1),
    # two-variable comprehensions
    ("self.l.all(i, v, v == (i + 1) * 10)", True),
    ("self.l.all(i, v, v > 10)", False),
    ("self.l.exists(i, v, i == 1 && v == 20)", True),
    ("self.m.exists(k, v, k == 'x' && v == 2)", False),
    ("self.m.all(k, v, v > 0 && k != '')", True),
    ("self.l.existsOne(i, v, v > 15)", False),
    ("self.l.transformList(i, v, v + i)", [10, 21, 32]),
    ("self.l.transformList(i, v, i > 0, v)", [20, 30]),
    ("self.m.transformMap(k, v, v * 2)", {"x": 2, "y": 4}),
    ("self.m.transformMap(k, v, v > 1, v * 2)", {"y": 4}),
    ("self.l.all(i, v, self.m.exists(k, w, w == i))", False),
])
def test_rewritten_syntax(expression: str, expected: Any) -> None:
    assert evaluate_cel(expression, REWRITE_ENV) == expected
    assert rules.compile_errors(expression, {"type": "object", "additionalProperties": True},
                                 resource_root=False) is None


def test_rewrite_leaves_plain_expressions_alone() -> None:
    from kapi.cel.rewrite import rewrite

    assert rewrite("[1, 2].all(x, x > 0) && self.a.exists(y, y == 1)") == (
        "[1, 2].all(x, x > 0) && self.a.exists(y, y == 1)")
    assert rewrite("self.?a") == "kapi_optField(self, 'a')"
