"""An update or patch that leaves the object without a name, and merge patches that are not objects.

kube's checkName (apiserver handlers/rest.go) asks ContextBasedNaming.ObjectName, which answers
errEmptyName for an object without a name: 400 ``the name of the object (<url name> based on URL) was
undeterminable: name must be provided``. A merge patch that is null or a scalar is json-patch's
ErrBadJSONPatch (400 ``Invalid JSON Patch``); an array becomes the patched document, which the
serializer cannot read as an object (jsonPatcher's 422 ``patch: Invalid value``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from kapi.local.launcher import Stack
from tests.e2e.test_grpc_api import rest

NS = "reqmsg-names"
PATH = f"/api/v1/namespaces/{NS}/configmaps/p"
UNDETERMINABLE = "the name of the object (p based on URL) was undeterminable: name must be provided"
MERGE, JSON_PATCH, STRATEGIC = ("application/merge-patch+json", "application/json-patch+json",
                                "application/strategic-merge-patch+json")


@pytest.fixture(scope="module")
def configmap(stack: Stack) -> None:
    rest(stack, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    status, body = rest(stack, "POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "p"}})
    assert status in (201, 409), body


def answer(stack: Stack, method: str, body: Any, content_type: str = "application/json") -> tuple[int, Any]:
    status, raw = rest(stack, method, PATH, body, content_type=content_type)
    return status, json.loads(raw)


@pytest.mark.parametrize(("method", "body", "content_type"), [
    ("PUT", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}, "application/json"),
    ("PUT", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": None}, "application/json"),
    ("PATCH", {"metadata": {"name": None}}, MERGE),
    ("PATCH", {"metadata": None}, MERGE),
    ("PATCH", [{"op": "remove", "path": "/metadata"}], JSON_PATCH),
    ("PATCH", {"$patch": "replace", "data": {"a": "b"}}, STRATEGIC),
])
def test_no_name_is_undeterminable(stack: Stack, configmap: None, method: str, body: Any, content_type: str) -> None:
    status, status_body = answer(stack, method, body, content_type)
    assert (status, status_body["reason"], status_body["message"]) == (400, "BadRequest", UNDETERMINABLE)


@pytest.mark.parametrize("patch", [None, 1, "x"])
def test_merge_patch_not_an_object_or_array(stack: Stack, configmap: None, patch: Any) -> None:
    status, body = answer(stack, "PATCH", json.dumps(patch).encode(), MERGE)
    assert (status, body["reason"], body["message"]) == (400, "BadRequest", "Invalid JSON Patch")


def test_merge_patch_array_does_not_decode(stack: Stack, configmap: None) -> None:
    status, body = answer(stack, "PATCH", [1], MERGE)
    detail = ('couldn\'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type '
              'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }')
    assert status == 422
    assert body["reason"] == "Invalid"
    assert body["message"] == f' "" is invalid: patch: Invalid value: "[1]": {detail}'
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": f'Invalid value: "[1]": {detail}',
                                          "field": "patch"}]
