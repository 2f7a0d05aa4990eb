"""Long request lines and headers (kube-apiserver, Go net/http: up to 1 MiB of headers) pass Envoy and the gateways."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.test_http_options import _request


def test_long_token_and_long_selector_are_answered_not_refused(stack: Stack, namespace: str) -> None:
    # A 20 KB bearer token (an OIDC token with many groups) is read and judged: 401, not a 400 from the HTTP layer.
    status, _, body = _request(stack, "GET", "/api/v1/namespaces", {"Authorization": "Bearer " + "x" * 20_000})
    assert status in (200, 401), body[:200]  # the admin's client certificate may win: either way, not refused
    # A 12 KB label selector in the URL.
    selector = ",".join(f"k{i}!=v{i}" for i in range(1200))
    status, _, body = _request(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?labelSelector={selector}")
    assert status == 200, body[:200]
    assert json.loads(body)["kind"] == "ConfigMapList"
