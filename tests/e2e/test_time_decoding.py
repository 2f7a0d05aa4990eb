"""A time field Go's time.Parse refuses is the decoder's 400 (metav1.Time: RFC 3339; MicroTime: RFC3339Micro),
a patched one the patcher's 422, as kube-apiserver answers (found by a new user: kapi stored the object)."""

from __future__ import annotations

import json
from typing import Any

from kapi.local.launcher import Stack
from tests.e2e.test_hostile_input import send

LAYOUT = "2006-01-02T15:04:05Z07:00"


def _json(reply: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(reply.body)
    return body


def test_an_unparseable_time_is_refused(stack: Stack, namespace: str) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    reply = send(stack, "POST", base, json.dumps({"metadata": {"name": "ts1", "creationTimestamp": "yesterday"}}))
    body = _json(reply)
    assert (reply.status, body["reason"]) == (400, "BadRequest")
    assert body["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: parsing time '
                               f'"yesterday" as "{LAYOUT}": cannot parse "yesterday" as "2006"')
    assert send(stack, "GET", f"{base}/ts1").status == 404  # nothing was stored
    assert send(stack, "POST", base, json.dumps({"metadata": {"name": "ts2"}})).status == 201
    reply = send(stack, "PATCH", f"{base}/ts2", json.dumps({"metadata": {"deletionTimestamp": "2026-13-01T00:00:00Z"}}),
                 {"Content-Type": "application/merge-patch+json"})
    body = _json(reply)
    assert reply.status == 422
    assert body["message"].startswith(' "" is invalid: patch: Invalid value: "{')
    assert body["message"].endswith(': parsing time "2026-13-01T00:00:00Z": month out of range')


def test_a_micro_time_needs_six_fraction_digits(stack: Stack, namespace: str) -> None:
    base = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    reply = send(stack, "POST", base, json.dumps({"metadata": {"name": "l1"},
                                                  "spec": {"renewTime": "2026-12-03T10:00:00Z"}}))
    assert reply.status == 400
    assert _json(reply)["message"] == (
        'Lease in version "v1" cannot be handled as a Lease: parsing time "2026-12-03T10:00:00Z" as '
        '"2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"')
    reply = send(stack, "POST", base, json.dumps({"metadata": {"name": "l1"},
                                                  "spec": {"renewTime": "2026-12-03T12:00:00.250000+02:00"}}))
    assert reply.status == 201
    assert _json(reply)["spec"]["renewTime"] == "2026-12-03T10:00:00.250000Z"
