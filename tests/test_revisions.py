"""kapi.revisions: the one resourceVersion parser the gateway and storage share (ParseUint within int64)."""

import pytest

from kapi import errors
from kapi.revisions import MAX_REVISION, as_revision, out_of_range
from services.gateway.scope import parse_resource_version as gateway_parse
from services.storage.versions import parse_list_resource_version, parse_resource_version


@pytest.mark.parametrize("text,want", [("0", 0), ("42", 42), ("007", 7), (str(MAX_REVISION), MAX_REVISION)])
def test_digits_within_int64_are_revisions(text, want):
    assert as_revision(text) == want
    assert not out_of_range(text)


@pytest.mark.parametrize("text", ["", "-1", "+1", " 1", "1 ", "1.0", "abc", "١٢", str(MAX_REVISION + 1)])
def test_anything_else_is_not(text):
    assert as_revision(text) is None


def test_out_of_range_only_for_digits_past_int64():
    assert out_of_range(str(MAX_REVISION + 1))
    assert not out_of_range("abc")


def test_every_caller_refuses_past_int64_with_its_own_message():
    huge = str(MAX_REVISION + 1)
    with pytest.raises(errors.StatusError) as gw:
        gateway_parse(huge)
    assert gw.value.message == f'invalid resource version "{huge}"'
    with pytest.raises(errors.StatusError) as st:
        parse_resource_version(huge)
    assert st.value.code == 400
    assert st.value.message == f'resourceVersion: Invalid value: "{huge}": invalid resource version'
    with pytest.raises(errors.StatusError) as ls:
        parse_list_resource_version(huge)
    assert ls.value.message.endswith(f'strconv.ParseUint: parsing "{huge}": value out of range')
