"""Audit end to end: a stack started with --audit-policy-file/--audit-log-path, driven by kubectl and HTTPS."""

from __future__ import annotations

import json
import ssl
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, own_stack

POLICY = {
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy",
    "rules": [
        {"level": "None", "nonResourceURLs": ["/healthz*", "/readyz*", "/livez*"]},
        {"level": "None", "resources": [{"group": "", "resources": ["namespaces"]}], "verbs": ["get"]},
        {"level": "Metadata", "resources": [{"group": "", "resources": ["secrets"]}]},
        {"level": "RequestResponse", "resources": [{"group": "", "resources": ["configmaps"]}],
         "omitManagedFields": True},
        {"level": "Metadata"},
    ],
}


@pytest.fixture(scope="module")
def audited() -> Iterator[tuple[Stack, Path]]:
    with tempfile.TemporaryDirectory(prefix="kapi-audit-") as tmp:
        policy = Path(tmp) / "policy.yaml"
        policy.write_text(yaml.safe_dump(POLICY))
        log = Path(tmp) / "audit.log"
        with own_stack([f"--audit-policy-file={policy}", f"--audit-log-path={log}"]) as stack:
            yield stack, log


def events(log: Path, audit_id: str | None = None, wait: float = 5.0) -> list[dict[str, Any]]:
    deadline = time.monotonic() + wait
    while True:
        out = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        if audit_id is not None:
            out = [e for e in out if e["auditID"] == audit_id]
        if (out and (audit_id is None or out[-1]["stage"] in ("ResponseComplete", "Panic"))) \
                or time.monotonic() > deadline:
            return out
        time.sleep(0.1)


def admin_request(stack: Stack, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
                  ) -> tuple[int, Any, bytes]:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(stack.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def test_secret_metadata_only_and_configmap_bodies(audited):
    stack, log = audited
    kubectl = Kubectl(stack.kubeconfig)
    kubectl.run("create", "namespace", "audited")
    kubectl.run("-n", "audited", "create", "secret", "generic", "s1", "--from-literal=password=hunter2-secret")
    status, headers, _ = admin_request(stack, "POST", "/api/v1/namespaces/audited/configmaps",
                                       {"metadata": {"name": "c1"}, "data": {"k": "visible"}},
                                       headers={"User-Agent": "audit-test/1.0"})
    assert status == 201
    audit_id = headers["Audit-Id"]
    got = events(log, audit_id)
    assert [e["stage"] for e in got] == ["RequestReceived", "ResponseComplete"]
    done = got[-1]
    assert done["level"] == "RequestResponse" and done["verb"] == "create" and done["userAgent"] == "audit-test/1.0"
    assert done["objectRef"] == {"resource": "configmaps", "namespace": "audited", "apiVersion": "v1"}
    assert done["responseStatus"]["code"] == 201 and "127.0.0.1" in done["sourceIPs"]
    assert done["user"]["username"] == "kubernetes-admin" or "system:masters" in done["user"].get("groups", [])
    assert done["requestObject"]["data"] == {"k": "visible"}
    assert done["responseObject"]["metadata"]["name"] == "c1"
    assert "managedFields" not in done["responseObject"]["metadata"]
    text = log.read_text()
    assert "hunter2" not in text and "aHVudGVyMi1zZWNyZXQ=" not in text
    secret_events = [e for e in events(log) if e.get("objectRef", {}).get("resource") == "secrets"]
    assert secret_events and all(e["level"] == "Metadata" and "requestObject" not in e for e in secret_events)
    assert not [e for e in events(log) if e["requestURI"].startswith("/readyz")]


def test_forbidden_impersonation_and_watch(audited):
    stack, log = audited
    kubectl = Kubectl(stack.kubeconfig)
    denied = kubectl.run("--as=eve", "get", "pods", "-n", "default", check=False)
    assert denied.returncode != 0
    status, headers, _ = admin_request(stack, "GET", "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1")
    assert status == 200
    watch = events(log, headers["Audit-Id"])
    assert [e["stage"] for e in watch] == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    forbidden = [e for e in events(log) if e.get("impersonatedUser", {}).get("username") == "eve"
                 and e["stage"] == "ResponseComplete" and e["verb"] == "list"]
    assert forbidden and forbidden[-1]["responseStatus"]["code"] == 403
    assert forbidden[-1]["responseStatus"]["reason"] == "Forbidden"
    assert forbidden[-1]["user"]["username"] != "eve"


def test_grpc_calls_are_audited_as_their_rest_requests(audited):
    """A create and a watch over the public gRPC API (through Envoy) give the audit events of the REST requests
    they stand for: same stages, verb, objectRef, user, request and response objects (tests/e2e/test_grpc_api.py)."""
    import asyncio

    import grpc

    from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc

    stack, log = audited
    Kubectl(stack.kubeconfig).run("create", "namespace", "audited-grpc")
    pki = stack.pki
    creds = grpc.ssl_channel_credentials(pki.ca_cert.read_bytes(), pki.admin_key.read_bytes(),
                                         pki.admin_cert.read_bytes())
    ref = api_pb2.ResourceRef(version="v1", resource="configmaps", namespace="audited-grpc")

    async def calls() -> tuple[str, str]:
        async with grpc.aio.secure_channel(stack.url.removeprefix("https://"), creds,
                                           options=[("grpc.ssl_target_name_override", "localhost")]) as ch:
            api = api_pb2_grpc.ResourcesStub(ch)
            create = api.Create(api_pb2.CreateRequest(ref=ref, object=json.dumps(
                {"metadata": {"name": "g1"}, "data": {"k": "over-grpc"}}).encode()))
            assert (await create).code == 201
            # only g1: the controllers publish kube-root-ca.crt in the new namespace at their own time
            watch = api.Watch(api_pb2.WatchRequest(ref=ref, field_selector="metadata.name=g1", timeout_seconds=1))
            assert [e.type async for e in watch] == ["ADDED"]
            return dict(await create.initial_metadata())["audit-id"], dict(await watch.initial_metadata())["audit-id"]

    create_id, watch_id = asyncio.run(calls())
    got = events(log, create_id)
    assert [e["stage"] for e in got] == ["RequestReceived", "ResponseComplete"]
    done = got[-1]
    assert done["level"] == "RequestResponse" and done["verb"] == "create"
    assert done["requestURI"].startswith("/api/v1/namespaces/audited-grpc/configmaps")
    assert done["userAgent"].startswith("grpc-python")
    assert done["objectRef"] == {"resource": "configmaps", "namespace": "audited-grpc", "apiVersion": "v1"}
    assert done["responseStatus"]["code"] == 201 and "127.0.0.1" in done["sourceIPs"]
    assert done["user"]["username"] == "kubernetes-admin"
    assert done["requestObject"]["data"] == {"k": "over-grpc"}
    assert done["responseObject"]["metadata"]["name"] == "g1"
    watch = events(log, watch_id)
    assert [e["stage"] for e in watch] == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    assert watch[-1]["verb"] == "watch"
