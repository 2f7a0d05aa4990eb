"""kapi.crd.validation: CRD validation with kube-apiserver's field paths and messages, table-driven."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi import crd
from kapi.crd import validation

SCHEMA = {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "color": {"type": "string"}, "size": {"type": "integer"}, "on": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}}, "nested": {"type": "object", "properties": {
            "a": {"type": "string"}}},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}}}},
    "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}


def definition(*versions: dict[str, Any], **spec: Any) -> dict[str, Any]:
    vs = list(versions) or [{"name": "v1", "served": True, "storage": True, "schema": SCHEMA}]
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": vs, **spec}}


def version(name: str = "v1", storage: bool = True, **fields: Any) -> dict[str, Any]:
    return {"name": name, "served": True, "storage": storage, "schema": SCHEMA, **fields}


def errors(d: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [f"{c.field}: {c.message}" for c in validation.validate(d, old)]


def webhook(**client: Any) -> dict[str, Any]:
    return {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": client}}


def test_valid_definition_has_no_errors() -> None:
    assert errors(definition(version(selectableFields=[{"jsonPath": ".spec.color"}],
                                     subresources={"status": {}, "scale": {
                                         "specReplicasPath": ".spec.size", "statusReplicasPath": ".status.replicas",
                                         "labelSelectorPath": ".status.selector"}}),
                             conversion={"strategy": "None"})) == []
    assert errors(definition(conversion=webhook(url="https://conv.example.com/convert"))) == []
    assert errors(definition(conversion=webhook(service={"name": "conv", "namespace": "ns", "path": "/convert"}))) == []


WEBHOOK_ERRORS = [
    ({"strategy": "None", "webhook": {"clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}},
     ["spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
      "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"]),
    ({"strategy": "Magic"}, ['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", '
                             '"Webhook"']),
    ({"strategy": "Webhook"}, [
        "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
        "spec.conversion.conversionReviewVersions: Required value"]),
    (webhook(), ["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]),
    (webhook(url="https://x", service={"name": "a", "namespace": "b"}),
     ["spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required"]),
    (webhook(url="http://conv.example.com/convert"), [
        'spec.conversion.webhookClientConfig.url: Invalid value: "http": \'https\' is the only allowed URL scheme; '
        "desired format: https://host[/path]"]),
    (webhook(url="https:///convert?x=1"), [
        'spec.conversion.webhookClientConfig.url: Invalid value: "": host must be specified; desired format: '
        "https://host[/path]",
        'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query parameters are not permitted in the '
        "URL"]),
    (webhook(service={"namespace": "ns", "port": 70000, "path": "convert"}), [
        "spec.conversion.webhookClientConfig.service.name: Required value: service name is required",
        "spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be between "
        "1 and 65535, inclusive",
        "spec.conversion.webhookClientConfig.service.path: Invalid value: \"convert\": must start with a '/'"]),
    ({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x"},
                                         "conversionReviewVersions": ["v2", "v2"]}}, [
        'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate version',
        'spec.conversion.conversionReviewVersions: Invalid value: ["v2","v2"]: must include at least one of v1, '
        "v1beta1"]),
]


@pytest.mark.parametrize(("conversion", "expected"), WEBHOOK_ERRORS)
def test_conversion(conversion: dict[str, Any], expected: list[str]) -> None:
    assert errors(definition(conversion=conversion)) == expected


def test_unrecognized_review_versions_stay_allowed_on_update_when_they_already_were() -> None:
    old = definition(conversion={"strategy": "Webhook", "webhook": {"clientConfig": {"url": "https://x"},
                                                                    "conversionReviewVersions": ["v9"]}})
    assert errors(copy.deepcopy(old), old) == []


SELECTABLE = [
    ([{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"}, {"jsonPath": ".spec.on"}], []),
    ([{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.color"}],
     ['spec.selectableFields[1].jsonPath: Duplicate value: ".spec.color"']),
    ([{"jsonPath": ".spec.nested"}], [
        'spec.selectableFields[0].jsonPath: Invalid value: ".spec.nested": must point to a field of type string, '
        "boolean or integer. Enum string fields and strings with formats are allowed."]),
    ([{"jsonPath": ".spec.missing"}], [
        'spec.selectableFields[0].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a '
        "valid field"]),
    ([{"jsonPath": ".spec.tags[0]"}], [
        'spec.selectableFields[0].jsonPath: Invalid value: ".spec.tags[0]": is an invalid path: array notation is '
        "not allowed"]),
    ([{"jsonPath": "spec.color"}], [
        'spec.selectableFields[0].jsonPath: Invalid value: "spec.color": is an invalid path: expected [ or . but '
        "got: spec"]),
    ([{"jsonPath": ".spec.labels.team"}], []),
    ([{}], ["spec.selectableFields[0].jsonPath: Required value"]),
    ([{"jsonPath": f".spec.labels.k{i}"} for i in range(9)],
     ["spec.selectableFields: Too many: 9: must have at most 8 items"]),
]


@pytest.mark.parametrize(("fields", "expected"), SELECTABLE)
def test_selectable_fields(fields: list[dict[str, Any]], expected: list[str]) -> None:
    assert errors(definition(version(selectableFields=fields))) == expected


def test_per_version_fields_are_reported_per_version_unless_identical() -> None:
    bad = {"scale": {"specReplicasPath": ".status.size", "statusReplicasPath": "status.replicas",
                     "labelSelectorPath": ".metadata.labels"}}
    assert errors(definition(version("v1", subresources=bad), version("v2", False, subresources=bad))) == [
        'spec.subresources.scale.specReplicasPath: Invalid value: ".status.size": should be a json path under .spec',
        'spec.subresources.scale.statusReplicasPath: Invalid value: "status.replicas": must be a simple json path '
        "starting with .",
        'spec.subresources.scale.labelSelectorPath: Invalid value: ".metadata.labels": should be a json path under '
        "either .spec or .status"]
    assert errors(definition(version("v1", subresources={"scale": {}}), version("v2", False))) == [
        "spec.versions[0].subresources.scale.specReplicasPath: Required value",
        "spec.versions[0].subresources.scale.statusReplicasPath: Required value"]
    assert errors(definition(version("v1", selectableFields=[{"jsonPath": ".spec.nope"}]), version("v2", False))) == [
        'spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not '
        "refer to a valid field"]
    assert errors(definition(version("v1", additionalPrinterColumns=[{"name": "C", "type": "text",
                                                                       "jsonPath": "spec.x"}]))) == [
        'spec.additionalPrinterColumns[0].type: Invalid value: "text": must be one of boolean,date,integer,number,'
        "string",
        'spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must be a simple json path starting '
        "with ."]


DEFINITION_ERRORS: list[tuple[dict[str, Any], list[str]]] = [
    ({"scope": ""}, ["spec.scope: Required value"]),
    ({"scope": "Global"}, ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"']),
    ({"group": "example"}, ['metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+'
                            "spec.group",
                            'spec.group: Invalid value: "example": should be a domain with at least one dot']),
    ({"versions": [version(), version("v2")]},
     ["spec.versions: Invalid value: must have exactly one version marked as storage version"]),
    ({"versions": [{"name": "v1", "served": True, "storage": True}]},
     ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"]),
    ({"versions": [version(deprecationWarning="old")]},
     ['spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for deprecated versions']),
    ({"names": {"plural": "Widgets", "kind": "Widget", "listKind": "Widget"}}, [
        "metadata.name: Invalid value: \"widgets.example.com\": must be spec.names.plural+\".\"+spec.group",
        'spec.names.plural: Invalid value: "Widgets": a DNS-1035 label must consist of lower case alphanumeric '
        "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
        "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same']),
    ({"names": {"plural": "widgets", "kind": "Wid_get", "shortNames": ["w_1"]}}, [
        'spec.names.singular: Invalid value: "wid_get": a DNS-1035 label must consist of lower case alphanumeric '
        "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
        "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.names.kind: Invalid value: "Wid_get": may have mixed case, but should otherwise match: a DNS-1035 '
        "label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.names.listKind: Invalid value: "Wid_getList": may have mixed case, but should otherwise match: a '
        "DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
        'spec.names.shortNames[0]: Invalid value: "w_1": a DNS-1035 label must consist of lower case alphanumeric '
        "characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. "
        "'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]),
    ({"preserveUnknownFields": True}, [
        "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields "
        "to true in spec.versions[*].schema instead"]),
]


@pytest.mark.parametrize(("spec", "expected"), DEFINITION_ERRORS)
def test_definition(spec: dict[str, Any], expected: list[str]) -> None:
    d = definition()
    d["spec"].update(spec)
    assert errors(d) == expected


def test_update_rules() -> None:
    old = definition(version("v1"), version("v2", False))
    old["status"] = {"storedVersions": ["v1"]}
    new = copy.deepcopy(old)
    new["spec"]["versions"] = [version("v2")]
    new["spec"]["scope"] = "Cluster"
    new["spec"]["names"]["kind"] = "Gadget"
    assert errors(new, old) == [
        'status.storedVersions[0]: Invalid value: "v1": missing from spec.versions; v1 was previously a storage '
        "version, and must remain in spec.versions until a storage migration ensures no data remains persisted in "
        "v1 and removes v1 from status.storedVersions"]
    crd.set_condition(old, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
    assert errors(new, old)[:2] == ['spec.scope: Invalid value: "Cluster": field is immutable',
                                    'spec.names.kind: Invalid value: "Gadget": field is immutable']


def _protected(annotation: str | None) -> dict[str, Any]:
    d = definition()
    d["spec"]["group"] = "widgets.k8s.io"
    d["metadata"]["name"] = "widgets.widgets.k8s.io"
    if annotation is not None:
        d["metadata"]["annotations"] = {"api-approved.kubernetes.io": annotation}
    return d


def test_protected_groups_need_the_api_approval_annotation() -> None:
    path = "metadata.annotations[api-approved.kubernetes.io]"
    assert errors(_protected(None)) == [
        f'{path}: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", '
        "see https://github.com/kubernetes/enhancements/pull/1111"]
    assert errors(_protected("maybe")) == [
        f'{path}: Invalid value: "maybe": protected groups must have approval annotation '
        '"api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", '
        "see https://github.com/kubernetes/enhancements/pull/1111"]
    assert errors(_protected("unapproved, testing only")) == []
    assert errors(_protected("https://github.com/kubernetes/enhancements/pull/1111")) == []
    # an update that keeps the state (here: still missing) is never rejected; one that changes it is checked
    assert errors(_protected(None), _protected(None)) == []
    assert errors(_protected("maybe"), _protected("unapproved")) != []
    assert errors(_protected("maybe"), _protected("also-invalid")) == []
    assert errors(definition()) == []  # example.com is no protected group
