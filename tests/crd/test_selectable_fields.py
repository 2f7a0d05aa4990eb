"""CRD selectableFields in storage's field selectors (services/storage/fields.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.selectors import SelectorError, parse_field_selector
from services.storage import fields

OBJ = {"metadata": {"name": "a", "namespace": "ns"},
       "spec": {"color": "red", "size": 3, "on": True, "tags": ["x"]}}
CUSTOM = ("spec.color", "spec.size", "spec.on", "spec.tags", "spec.missing")


def test_custom_fields_are_supported_only_when_given() -> None:
    assert "spec.color" in fields.supported_fields("example.com", "widgets", CUSTOM)
    assert "spec.color" not in fields.supported_fields("example.com", "widgets")
    with pytest.raises(SelectorError):
        parse_field_selector("spec.color=red", fields.supported_fields("example.com", "widgets"))


def test_custom_field_values_are_scalars_as_strings() -> None:
    values = fields.object_fields("example.com", "widgets", OBJ, CUSTOM)
    assert values == {"metadata.name": "a", "metadata.namespace": "ns", "spec.color": "red", "spec.size": "3",
                      "spec.on": "true", "spec.tags": "", "spec.missing": ""}


@pytest.mark.parametrize(("selector", "selected"), [
    ("spec.color=red", True), ("spec.color!=red", False), ("spec.color=blue", False),
    ("spec.size=3,metadata.name=a", True), ("spec.missing=", True),
])
def test_selectors_on_custom_fields(selector: str, selected: bool) -> None:
    parsed: Any = parse_field_selector(selector, fields.supported_fields("example.com", "widgets", CUSTOM))
    assert parsed.matches(fields.object_fields("example.com", "widgets", OBJ, CUSTOM)) is selected
