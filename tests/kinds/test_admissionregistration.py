"""Webhook configuration updates: kube validates them with options derived from the stored object
(ValidateValidatingWebhookConfigurationUpdate / ValidateMutatingWebhookConfigurationUpdate)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.errors import Cause
from kapi.kinds import strategy_for
from kapi.kinds.admissionregistration import GROUP, WebhookOptions, update_options

KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


def _hook(name: str = "a.example.com", **fields: Any) -> dict[str, Any]:
    hook = {"name": name, "clientConfig": {"url": "https://hooks.example.com/check"}, "sideEffects": "None",
            "admissionReviewVersions": ["v1"]}
    return {**hook, **fields}


def _config(*hooks: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "cfg"}, "webhooks": list(hooks)}


def _causes(kind: str, new: dict[str, Any], old: dict[str, Any] | None = None) -> list[tuple[str, str, str]]:
    strategy = strategy_for(GROUP, kind)
    causes: list[Cause] = strategy.validate(new) if old is None else strategy.validate_again(new, old)
    return [(c.type, c.field, c.message) for c in causes]


@pytest.mark.parametrize("kind", KINDS)
def test_duplicate_names_stay_allowed_when_the_stored_object_had_them(kind: str) -> None:
    twins = _config(_hook(), _hook())
    duplicate = [("FieldValueDuplicate", "webhooks[1].name", 'Duplicate value: "a.example.com"')]
    assert _causes(kind, twins) == duplicate
    assert _causes(kind, twins, _config(_hook(), _hook("b.example.com"))) == duplicate
    assert _causes(kind, twins, twins) == []


@pytest.mark.parametrize("kind", KINDS)
def test_unrecognized_review_versions_stay_allowed_when_the_stored_object_had_them(kind: str) -> None:
    new = _config(_hook(admissionReviewVersions=["v2"]))
    refused = [("FieldValueInvalid", "webhooks[0].admissionReviewVersions",
                'Invalid value: []string{"v2"}: must include at least one of v1, v1beta1')]
    assert _causes(kind, new) == refused
    assert _causes(kind, new, _config(_hook())) == refused
    assert _causes(kind, new, _config(_hook(admissionReviewVersions=["v3"]))) == []


@pytest.mark.parametrize("kind", KINDS)
def test_side_effects_some_stays_allowed_when_the_stored_object_had_it(kind: str) -> None:
    some = _config(_hook(sideEffects="Some"))
    assert _causes(kind, some) == [("FieldValueNotSupported", "webhooks[0].sideEffects",
                                    'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"')]
    assert _causes(kind, some, some) == []
    assert _causes(kind, _config(_hook(sideEffects="Bogus")), some) == [
        ("FieldValueNotSupported", "webhooks[0].sideEffects",
         'Unsupported value: "Bogus": supported values: "None", "NoneOnDryRun", "Some", "Unknown"')]
    assert _causes(kind, _config(_hook(sideEffects=None)), some) == [
        ("FieldValueRequired", "webhooks[0].sideEffects",
         "Required value: must specify one of None, NoneOnDryRun, Some, Unknown")]


@pytest.mark.parametrize("kind", KINDS)
def test_unchanged_match_conditions_and_stored_invalid_selector_values_are_not_checked(kind: str) -> None:
    broken = _config(_hook(matchConditions=[{"name": "c", "expression": "1 +"}],
                           objectSelector={"matchExpressions": [{"key": "k", "operator": "In", "values": ["a b"]}]}))
    created = _causes(kind, broken)
    assert [c[1] for c in created] == ["webhooks[0].objectSelector.matchExpressions[0].values[0]",
                                       "webhooks[0].matchConditions[0].expression"], created
    assert _causes(kind, broken, broken) == []
    assert update_options(broken, broken) == WebhookOptions(ignore_match_conditions=True,
                                                            allow_invalid_label_values=True)
    assert update_options(broken, _config(_hook())) == WebhookOptions()
