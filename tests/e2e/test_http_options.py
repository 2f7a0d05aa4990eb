"""HTTP-level options of kube-apiserver's REST surface: pretty, gzip, request timeout, missing Content-Type."""

from __future__ import annotations

import gzip
import http.client
import json
import ssl
from urllib.parse import urlparse

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl


def _request(stack: Stack, method: str, path: str, headers: dict[str, str] | None = None,
             body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_pretty_output(stack: Stack):
    status, _, body = _request(stack, "GET", "/api/v1/namespaces/default?pretty=true")
    assert status == 200
    assert body.startswith(b'{\n  "') and body.endswith(b"\n}")  # MarshalIndent alone: no trailing newline


def test_large_lists_are_gzipped_when_asked(stack: Stack, kubectl: Kubectl, namespace: str):
    for i in range(3):
        kubectl.run("-n", namespace, "create", "configmap", f"big{i}", f"--from-literal=v={'x' * 60_000}")
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    status, headers, body = _request(stack, "GET", path, {"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("content-encoding") == "gzip"
    # (kube-root-ca.crt, published by the controllers in every namespace, is left out of the count)
    assert len([i for i in json.loads(gzip.decompress(body))["items"] if i["metadata"]["name"].startswith("big")]) == 3
    status, headers, body = _request(stack, "GET", path)
    assert status == 200 and "content-encoding" not in headers
    assert len([i for i in json.loads(body)["items"] if i["metadata"]["name"].startswith("big")]) == 3


def test_request_timeout_is_a_504_status(stack: Stack):
    status, headers, body = _request(stack, "GET", "/api/v1/namespaces?timeout=1ms")
    assert status == 504
    reply = json.loads(body)
    assert reply["kind"] == "Status" and reply["reason"] == "Timeout" and reply["code"] == 504


def test_body_without_content_type_is_json(stack: Stack, namespace: str):
    cm = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}}).encode()
    status, _, body = _request(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", body=cm)
    assert status == 201, body
    assert json.loads(body)["metadata"]["name"] == "plain"


def test_malformed_json_is_400(stack: Stack, namespace: str):
    status, _, body = _request(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", {
        "Content-Type": "application/json"}, b'{"apiVersion": "v1", ')
    assert status == 400
    assert json.loads(body)["reason"] == "BadRequest"


def test_concurrent_patches_without_resource_version_all_succeed(stack: Stack, kubectl: Kubectl, namespace: str):
    """Like kube's GuaranteedUpdate, unpinned patches retry on conflict instead of answering 409."""
    from concurrent.futures import ThreadPoolExecutor

    kubectl.run("-n", namespace, "create", "configmap", "counter")
    path = f"/api/v1/namespaces/{namespace}/configmaps/counter"

    def writer(w: int) -> list[int]:
        codes = []
        for i in range(8):
            body = json.dumps({"data": {f"w{w}-{i}": "x"}}).encode()
            status, _, _ = _request(stack, "PATCH", path, {"Content-Type": "application/merge-patch+json"}, body)
            codes.append(status)
        return codes

    with ThreadPoolExecutor(8) as pool:
        codes = [c for result in pool.map(writer, range(8)) for c in result]
    assert codes == [200] * 64
    status, _, body = _request(stack, "GET", path)
    assert len(json.loads(body)["data"]) == 64


def test_wrong_methods_bad_delete_options_and_huge_bodies_get_status(stack: Stack, kubectl: Kubectl, namespace: str):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    cm = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}).encode()
    json_type = {"Content-Type": "application/json"}
    assert _request(stack, "POST", f"{base}/x", json_type, cm)[0] == 405
    assert _request(stack, "PUT", base, json_type, cm)[0] == 405
    kubectl.run("-n", namespace, "create", "configmap", "keep")
    status, _, body = _request(stack, "DELETE", f"{base}/keep?propagationPolicy=Sideways")
    assert status == 422
    assert json.loads(body)["message"] == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported '
                                           'value: "Sideways": supported values: "Foreground", "Background", "Orphan", '
                                           '"nil"')
    kubectl.run("-n", namespace, "get", "configmap", "keep")  # not deleted
    huge = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"},
                       "data": {"a": "x" * (3 * 1024 * 1024 + 10)}}).encode()
    status, headers, body = _request(stack, "POST", base, json_type, huge)
    assert status == 413 and headers["content-type"].startswith("application/json")
    assert json.loads(body)["reason"] == "RequestEntityTooLarge"


def test_duplicate_fields_follow_field_validation(stack: Stack, namespace: str):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    body = b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dup"}, "data": {"a": "1", "a": "2"}}'
    json_type = {"Content-Type": "application/json"}
    status, _, reply = _request(stack, "POST", f"{base}?fieldValidation=Strict", json_type, body)
    assert status == 400
    assert json.loads(reply)["message"] == ('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict '
                                            'decoding error: duplicate field "data.a"')
    status, headers, _ = _request(stack, "POST", base, json_type, body)
    assert status == 201 and headers.get("warning") == '299 - "duplicate field \\"data.a\\""'
