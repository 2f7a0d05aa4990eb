"""Label and field selector parsing and matching (kapi.selectors), table-driven.

Expected messages follow k8s.io/apimachinery pkg/labels and pkg/fields.
"""

from __future__ import annotations

import pytest

from kapi.selectors import SelectorError, label_selector_matches, parse_field_selector, parse_label_selector

LABELS = {"app": "web", "tier": "db", "n": "5", "example.com/owner": "team-a"}


@pytest.mark.parametrize(("selector", "matches"), [
    ("", True),
    ("   ", True),
    ("app=web", True),
    ("app==web", True),
    ("app=api", False),
    ("app!=api", True),
    ("app!=web", False),
    ("missing!=x", True),  # != matches objects without the label
    ("app in (web,api)", True),
    ("app in (api, batch)", False),
    ("app notin (api)", True),
    ("app notin (web)", False),
    ("missing notin (x)", True),
    ("missing in (x)", False),
    ("app", True),
    ("missing", False),
    ("!missing", True),
    ("!app", False),
    ("app=web,tier=db", True),
    ("app=web, tier=cache", False),
    ("app=web,!missing,tier", True),
    ("n>4", True),
    ("n>5", False),
    ("n<6", True),
    ("app>1", False),  # not an integer: no match
    ("example.com/owner=team-a", True),
    ("app in (in, notin)", False),  # keywords are values here
    ("app=", False),
    ("missing=", False),
    ("missing in ()", False),
])
def test_label_selector_matches(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector).matches(LABELS) is matches


@pytest.mark.parametrize(("selector", "empty_labels_match"), [
    ("", True), ("a!=b", True), ("!a", True), ("a", False), ("a=b", False), ("a notin (x)", True),
])
def test_label_selector_on_objects_without_labels(selector: str, empty_labels_match: bool) -> None:
    assert parse_label_selector(selector).matches(None) is empty_labels_match
    assert parse_label_selector(selector).matches({}) is empty_labels_match


@pytest.mark.parametrize(("selector", "message"), [
    ("a in", "unable to parse requirement: found '' expected: '('"),
    ("a in (x", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("a in (x y)", "unable to parse requirement: found 'y', expected: ',' or ')'"),
    ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("a=b,", "found '', expected: identifier after ','"),
    (",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("=b", "found '=', expected: !, identifier, or 'end of string'"),
    ("!", "unable to parse requirement: found '', expected: identifier"),
    ("!a=b", "found '=', expected: ',' or 'end of string'"),
    ("a=(b)", "unable to parse requirement: found '(', expected: identifier"),
    ("-a=b", "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric"),
    ("a/b/c", "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist"),
    ("/a", "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty"),
    ("a/", "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; name part "
           "must consist of alphanumeric"),
    ("Example.com/a", "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a lowercase "
                      "RFC 1123 subdomain"),
    ("a=-b", "unable to parse requirement: values[0][a]: Invalid value: \"-b\": a valid label must be an empty string"),
    ("a=" + "x" * 64, f"unable to parse requirement: values[0][a]: Invalid value: \"{'x' * 64}\": must be no more "
                      "than 63 characters"),
    ("k" * 64, f"unable to parse requirement: <nil>: Invalid value: \"{'k' * 64}\": name part must be no more than "
               "63 characters"),
    ("a>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must "
            "be an integer"),
])
def test_label_selector_errors(selector: str, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_label_selector(selector)
    assert str(info.value).startswith(message)


def test_label_selector_round_trips_to_text() -> None:
    selector = parse_label_selector("b in (y,x), a!=1, !c, d")
    assert str(selector) == "b in (x,y),a!=1,!c,d"
    assert str(parse_label_selector(str(selector))) == str(selector)
    assert parse_label_selector("").empty and not selector.empty


SUPPORTED = frozenset({"metadata.name", "metadata.namespace", "status.phase"})
FIELDS = {"metadata.name": "web-1", "metadata.namespace": "demo", "status.phase": "Running"}


@pytest.mark.parametrize(("selector", "matches"), [
    ("", True),
    ("metadata.name=web-1", True),
    ("metadata.name==web-1", True),
    ("metadata.name!=web-1", False),
    ("metadata.name=web-2", False),
    ("metadata.namespace=demo,status.phase=Running", True),
    ("metadata.namespace=demo,status.phase!=Running", False),
    ("metadata.namespace=demo2", False),
    ("status.phase=", False),
    (",metadata.name=web-1,", True),  # empty terms are skipped
])
def test_field_selector_matches(selector: str, matches: bool) -> None:
    assert parse_field_selector(selector, SUPPORTED).matches(FIELDS) is matches


@pytest.mark.parametrize(("selector", "fields", "matches"), [
    (r"metadata.name=a\,b", {"metadata.name": "a,b"}, True),
    (r"metadata.name=a\=b", {"metadata.name": "a=b"}, True),
    (r"metadata.name=a\\b", {"metadata.name": "a\\b"}, True),
    ("metadata.name=", {}, True),  # an absent field is ""
    ("metadata.name!=", {}, False),
])
def test_field_selector_escapes_and_absent_fields(selector: str, fields: dict[str, str], matches: bool) -> None:
    assert parse_field_selector(selector, SUPPORTED).matches(fields) is matches


@pytest.mark.parametrize(("selector", "message"), [
    ("spec.nodeName=n1", "field label not supported: spec.nodeName"),
    ("metadata.name=a,spec.x=b", "field label not supported: spec.x"),
    ("metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"),
    ("metadata.name=a,oops", "invalid selector: 'metadata.name=a,oops'; can't understand 'oops'"),
    (r"metadata.name=a\x", "invalid field selector: invalid escape sequence: \\x"),
    ("metadata.name=a=b", "invalid field selector: unescaped character in value: 61"),
])
def test_field_selector_errors(selector: str, message: str) -> None:
    with pytest.raises(SelectorError) as info:
        parse_field_selector(selector, SUPPORTED)
    assert str(info.value) == message


def test_field_selector_exact_match() -> None:
    selector = parse_field_selector("metadata.name=a,status.phase!=x", SUPPORTED)
    assert selector.requires_exact_match("metadata.name") == "a"
    assert selector.requires_exact_match("status.phase") is None
    assert parse_field_selector("", SUPPORTED).empty and not selector.empty


# ---------------------------------------------------------------- property-based (hypothesis)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_KEYS = st.sampled_from(["app", "tier", "example.com/owner", "a.b-c_d", "n", "x"])
_VALUES = st.sampled_from(["web", "db", "", "5", "12", "v-1.2_x"])
_LABELS = st.dictionaries(_KEYS, _VALUES, max_size=6)


@st.composite
def _requirement(draw: st.DrawFn) -> tuple[str, str, tuple[str, ...]]:
    key = draw(_KEYS)
    op = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", ">", "<"]))
    if op in ("in", "notin"):
        values = tuple(draw(st.lists(_VALUES.filter(bool), min_size=1, max_size=3)))
    elif op in (">", "<"):
        values = (str(draw(st.integers(0, 20))),)
    elif op in ("exists", "!"):
        values = ()
    else:
        values = (draw(_VALUES),)
    return key, op, values


def _render(req: tuple[str, str, tuple[str, ...]]) -> str:
    key, op, values = req
    if op == "exists":
        return key
    if op == "!":
        return "!" + key
    if op in ("in", "notin"):
        return f"{key} {op} ({', '.join(values)})"
    return f"{key}{op}{values[0]}"


def _oracle(req: tuple[str, str, tuple[str, ...]], labels: dict[str, str]) -> bool:
    """An independent reading of "Labels and Selectors" (kubernetes.io concepts page)."""
    key, op, values = req
    has = key in labels
    if op in ("=", "==", "in"):
        return has and labels[key] in values
    if op in ("!=", "notin"):
        return not has or labels[key] not in values
    if op == "exists":
        return has
    if op == "!":
        return not has
    if not has or not labels[key].lstrip("-").isdigit():
        return False
    return int(labels[key]) > int(values[0]) if op == ">" else int(labels[key]) < int(values[0])


@settings(max_examples=300, deadline=None)
@given(st.lists(_requirement(), max_size=4), _LABELS)
def test_property_parse_and_match_agree_with_the_oracle(reqs: list[tuple[str, str, tuple[str, ...]]],
                                                        labels: dict[str, str]) -> None:
    text = ",".join(_render(r) for r in reqs)
    selector = parse_label_selector(text)
    assert selector.matches(labels) == all(_oracle(r, labels) for r in reqs)
    again = parse_label_selector(str(selector))  # the canonical form means the same
    assert again.matches(labels) == selector.matches(labels)
    assert parse_label_selector(str(again)) == again


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab=!(),<> in\\.-_/0x")), max_size=30))
def test_property_arbitrary_text_parses_or_raises_selector_error(text: str) -> None:
    for parse in (parse_label_selector, lambda t: parse_field_selector(t, frozenset({"metadata.name", "a"}))):
        try:
            parse(text)
        except SelectorError:
            pass


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["metadata.name", "metadata.namespace"]), st.sampled_from(["=", "==", "!="]),
       st.text(alphabet=st.sampled_from(list("abc-.,=\\")), max_size=8))
def test_property_field_selector_escaping_round_trips(field: str, op: str, value: str) -> None:
    escaped = value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")
    selector = parse_field_selector(f"{field}{op}{escaped}", frozenset({"metadata.name", "metadata.namespace"}))
    fields = {"metadata.name": value, "metadata.namespace": value}
    assert selector.matches(fields) == (op != "!=")


@pytest.mark.parametrize(("selector", "labels", "expected"), [
    ({}, {"a": "1"}, True),  # {} selects everything
    ({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"}, True),
    ({"matchLabels": {"a": "1"}}, {"a": "2"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1", "2"]}]}, {"a": "2"}, True),
    ({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}]}, {}, False),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {}, True),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["1"]}]}, {"a": "1"}, False),
    ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True),
    ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, {"a": ""}, False),
    ({"matchLabels": {"a": "1"}, "matchExpressions": [{"key": "b", "operator": "Exists"}]}, {"a": "1"}, False),
])
def test_label_selector_object_matches(selector, labels, expected):
    assert label_selector_matches(selector, labels) is expected


@pytest.mark.parametrize("selector", [
    {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
    {"matchExpressions": ["a"]},
])
def test_label_selector_object_that_cannot_be_built(selector):
    with pytest.raises(SelectorError):
        label_selector_matches(selector, {"a": "1"})
