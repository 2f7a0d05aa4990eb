"""Label and field selector parsing and matching (kapi.selectors), table-driven.

Expected messages follow k8s.io/apimachinery pkg/labels and pkg/fields.
"""

from __future__ import annotations

import pytest

from kapi.selectors import SelectorError, parse_field_selector, parse_label_selector

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
