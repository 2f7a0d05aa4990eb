"""kapi.errors: the Status body as kube-apiserver encodes it (metav1.Status field order, omitempty)."""

from __future__ import annotations

import json

from kapi import errors, jsonutil


def test_status_has_go_field_order() -> None:
    err = errors.already_exists("configmaps", "app")
    body = json.loads(jsonutil.dumps(err.status()))
    assert list(body) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert list(body["details"]) == ["name", "kind"]
    assert jsonutil.dumps(err.status()) == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"app\\" '
        b'already exists","reason":"AlreadyExists","details":{"name":"app","kind":"configmaps"},"code":409}')


def test_details_order_and_empty_fields_are_omitted() -> None:
    err = errors.StatusError(429, "", "", {"retryAfterSeconds": 1, "causes": [], "uid": "u", "kind": "pods",
                                           "group": "", "name": "p", "extra": True})
    body = err.status()
    assert "message" not in body and "reason" not in body
    assert list(body["details"]) == ["name", "group", "kind", "uid", "causes", "retryAfterSeconds", "extra"]
    assert list(body)[-1] == "code"
