"""kapi.validation: the apimachinery format checks shared by ObjectMeta validation and label selectors."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kapi import validation as v

QNAME = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
         "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@pytest.mark.parametrize(("check", "value", "expected"), [
    (v.is_dns1123_label, "my-name", []),
    (v.is_dns1123_label, "a.b", ["must not contain dots"]),  # a subdomain, not a label
    (v.is_dns1123_label, "a_b", [v.regex_error(v.DNS1123_LABEL_MSG, v.DNS1123_LABEL_FMT, "my-name", "123-abc")]),
    (v.is_dns1123_label, "a" * 64, ["must be no more than 63 characters"]),
    (v.is_dns1123_label, "abc\n", [v.regex_error(v.DNS1123_LABEL_MSG, v.DNS1123_LABEL_FMT, "my-name", "123-abc")]),
    (v.is_dns1123_subdomain, "example.com", []),
    (v.is_dns1123_subdomain, "a" * 254, ["must be no more than 253 characters"]),
    (v.is_dns1035_label, "1abc", [v.regex_error(v.DNS1035_LABEL_MSG, v.DNS1035_LABEL_FMT, "my-name", "abc-123")]),
    (v.is_dns1035_label, "abc-1", []),
    (v.is_valid_path_segment_name, "..", ["may not be '..'"]),
    (v.is_valid_path_segment_name, "a/b%", ["may not contain '/'", "may not contain '%'"]),
    (v.is_valid_path_segment_prefix, ".", []),
    (v.is_qualified_name, "example.com/My_name.1", []),
    (v.is_qualified_name, "x/", ["name part must be non-empty", "name part " + QNAME]),
    (v.is_qualified_name, "/x", ["prefix part must be non-empty"]),
    (v.is_qualified_name, "k" * 64, ["name part must be no more than 63 characters"]),
    (v.is_qualified_name, "a/b/c", ["a qualified name " + QNAME
                                    + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]),
    (v.is_valid_label_value, "", []),
    (v.is_valid_label_value, "-x", [v.regex_error(v.LABEL_VALUE_MSG, v.LABEL_VALUE_FMT, "MyValue", "my_value",
                                                  "12345")]),
])
def test_checks(check: Callable[[str], list[str]], value: str, expected: list[str]) -> None:
    assert check(value) == expected


def test_regex_error_wording() -> None:
    assert v.regex_error("bad", "x+") == "bad (regex used for validation is 'x+')"
    assert v.regex_error("bad", "x+", "a", "b") == "bad (e.g. 'a',  or 'b', regex used for validation is 'x+')"
    assert v.max_len_error(5) == "must be no more than 5 characters"
