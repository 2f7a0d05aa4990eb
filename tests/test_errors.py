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


def test_a_status_without_reason_keeps_its_code_and_no_reason() -> None:
    """webhookerrors.ToStatusErr: a webhook's denial with code 403 and no reason crosses gRPC unchanged."""
    denied = errors.StatusError(403, "", 'admission webhook "w" denied the request: no')
    again = errors.StatusError.from_status(denied.status())
    assert (again.code, again.reason, again.message) == (403, "", denied.message)
    assert "reason" not in again.status()
    assert errors.StatusError.from_status({"message": "boom"}).reason == "InternalError"


def test_method_not_allowed_quotes_the_resource_as_go_s_percent_q() -> None:
    err = errors.method_not_allowed("componentstatuses", "watch")
    assert err.code == 405 and err.reason == "MethodNotAllowed"
    assert err.message == 'watch is not supported on resources of kind "componentstatuses"'
    grouped = errors.method_not_allowed("tokenreviews", "list", "authentication.k8s.io")
    assert grouped.message == 'list is not supported on resources of kind "tokenreviews.authentication.k8s.io"'
