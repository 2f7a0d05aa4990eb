"""kapi.crd: CRD rows, conditions, validation (kapi.crd.validation), version priority, deprecations, JSONPath."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import crd
from kapi.crd import validation

SCHEMA = {"openAPIV3Schema": {"type": "object"}}


def definition(**over: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                 "versions": [{"name": "v1beta1", "served": True, "storage": False, "deprecated": True,
                               "schema": SCHEMA},
                              {"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": SCHEMA},
                              {"name": "v2alpha1", "served": False, "storage": False, "schema": SCHEMA}]},
    }
    out["spec"].update(over)
    return out


def test_rows_only_when_established_preferred_version_first() -> None:
    d = definition()
    assert crd.rows(d) == []
    crd.set_condition(d, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
    rows = crd.rows(d)
    assert [(r.version, r.subresources) for r in rows] == [("v1", ("status",)), ("v1beta1", ())]
    assert rows[0].short_names == ("wd",) and rows[0].namespaced and rows[0].list_kind == "WidgetList"


def test_set_condition_keeps_transition_time() -> None:
    d = definition()
    assert crd.set_condition(d, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
    first = crd.condition(d, "NamesAccepted")
    assert first is not None
    assert not crd.set_condition(d, "NamesAccepted", "True", "NoConflicts", "no conflicts found")
    assert crd.is_true(d, "NamesAccepted")


@pytest.mark.parametrize(("change", "field"), [
    ({"group": "example"}, "spec.group"),
    ({"scope": "Global"}, "spec.scope"),
    ({"names": {"plural": "Widgets", "kind": "Widget"}}, "spec.names.plural"),
    ({"versions": [{"name": "v1", "served": True, "storage": False}]}, "spec.versions"),
])
def test_validate(change: dict[str, Any], field: str) -> None:
    assert field in [c.field for c in validation.validate(definition(**change))]


def test_validate_name_and_valid() -> None:
    assert validation.validate(definition()) == []
    d = definition()
    d["metadata"]["name"] = "other.example.com"
    assert [c.field for c in validation.validate(d)] == ["metadata.name"]


def test_version_priority_and_deprecation() -> None:
    names = ["v1alpha1", "foo", "v1", "v2", "v1beta2", "v1beta1", "v10"]
    assert sorted(names, key=crd.version_priority) == ["v10", "v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]
    assert crd.deprecation_warning(definition(), "v1beta1") == (
        "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget")
    assert crd.deprecation_warning(definition(), "v1") is None


@pytest.mark.parametrize(("path", "found"), [
    (".spec.replicas", [3]),
    (".status.conditions[?(@.type==\"Ready\")].status", ["True"]),
    (".spec.items[1]", ["b"]),
    (".spec.items[*]", ["a", "b"]),
    ("{.metadata.name}", ["w"]),
    (".spec.missing", []),
])
def test_jsonpath(path: str, found: list[Any]) -> None:
    obj = {"metadata": {"name": "w"}, "spec": {"replicas": 3, "items": ["a", "b"]},
           "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}}
    assert crd.jsonpath(obj, path) == found
