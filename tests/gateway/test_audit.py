"""Audit: policy matching (table), event stages and levels through an aiohttp app, log rotation, webhook batching."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kapi.attributes import Attributes, UserInfo
from services.gateway import audit
from services.gateway.auditbackends import LogBackend, WebhookBackend
from services.gateway.auditpolicy import Level, parse_policy
from services.gateway.requestinfo import resolve

ALICE = UserInfo("alice", "uid-a", ("dev", "system:authenticated"))
ADMIN = UserInfo("admin", groups=("system:masters",))
NODE = UserInfo("system:node:n1", groups=("system:nodes",))

POLICY = parse_policy({
    "apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
    "rules": [
        {"level": "None", "users": ["system:kube-proxy"], "verbs": ["watch"]},
        {"level": "None", "nonResourceURLs": ["/healthz*", "/readyz", "/version"]},
        {"level": "None", "userGroups": ["system:nodes"], "verbs": ["get"]},
        {"level": "Metadata", "resources": [{"group": "", "resources": ["secrets", "configmaps"]}]},
        {"level": "Request", "resources": [{"group": "", "resources": ["pods/log", "*/scale"]}]},
        {"level": "RequestResponse", "resources": [{"group": "apps", "resources": ["deployments/*"]}]},
        {"level": "RequestResponse", "namespaces": ["kube-system"], "omitStages": ["ResponseStarted"]},
        {"level": "Request", "resources": [{"group": "", "resources": ["services"], "resourceNames": ["special"]}]},
        {"level": "Metadata", "resources": [{"group": "rbac.authorization.k8s.io"}]},
        {"level": "Metadata", "verbs": ["get", "list", "watch"]},
        {"level": "RequestResponse"},
    ],
})


def attrs_for(method: str, path: str, user: UserInfo = ALICE, query: dict[str, str] | None = None) -> Attributes:
    info = resolve(method, path, query or {})
    return Attributes(user=user, verb=info.verb, resource_request=info.is_resource_request, path=info.path,
                      api_group=info.api_group, api_version=info.api_version, resource=info.resource,
                      subresource=info.subresource, namespace=info.namespace, name=info.name)


@pytest.mark.parametrize("method,path,user,level", [
    ("GET", "/healthz", ALICE, "None"),
    ("GET", "/healthz/etcd", ALICE, "None"),
    ("GET", "/readyz", ALICE, "None"),
    ("GET", "/readyz/x", ALICE, "Metadata"),  # exact "/readyz" only; falls to the get/list/watch rule
    ("GET", "/api/v1/nodes/n1", NODE, "None"),
    ("POST", "/api/v1/namespaces/d/secrets", ALICE, "Metadata"),
    ("PUT", "/api/v1/namespaces/d/configmaps/c", ALICE, "Metadata"),
    ("GET", "/api/v1/namespaces/d/pods/p/log", ALICE, "Request"),
    ("PUT", "/api/v1/namespaces/d/replicationcontrollers/x/scale", ALICE, "Request"),  # */scale
    ("PUT", "/apis/apps/v1/namespaces/d/statefulsets/x/scale", ALICE, "RequestResponse"),  # other group
    ("PATCH", "/apis/apps/v1/namespaces/d/deployments/x/status", ALICE, "RequestResponse"),  # deployments/*
    ("PATCH", "/apis/apps/v1/namespaces/d/deployments/x", ALICE, "RequestResponse"),  # "r/*" matches r too (kube)
    ("POST", "/api/v1/namespaces/kube-system/services", ALICE, "RequestResponse"),
    ("PUT", "/api/v1/namespaces/d/services/special", ALICE, "Request"),
    ("PUT", "/api/v1/namespaces/d/services/other", ALICE, "RequestResponse"),
    ("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/x", ALICE, "Metadata"),
    ("GET", "/apis/apps/v1/replicasets", ALICE, "Metadata"),
    ("POST", "/apis/apps/v1/namespaces/d/deployments", ALICE, "RequestResponse"),
])
def test_policy_levels(method, path, user, level):
    assert POLICY.evaluate(attrs_for(method, path, user)).level.text == level


def test_policy_stages_and_managed_fields():
    decision = POLICY.evaluate(attrs_for("POST", "/api/v1/namespaces/kube-system/pods"))
    assert decision.omit_stages == {"RequestReceived", "ResponseStarted"}
    policy = parse_policy({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitManagedFields": True,
                           "rules": [{"level": "Request", "verbs": ["create"], "omitManagedFields": False},
                                     {"level": "Request"}]})
    assert not policy.evaluate(attrs_for("POST", "/api/v1/namespaces/d/pods")).omit_managed_fields
    assert policy.evaluate(attrs_for("PUT", "/api/v1/namespaces/d/pods/p")).omit_managed_fields


def test_no_matching_rule_is_level_none():
    policy = parse_policy({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
                           "rules": [{"level": "Metadata", "users": ["bob"]}]})
    assert policy.evaluate(attrs_for("GET", "/api/v1/pods")).level == Level.NONE


@pytest.mark.parametrize("doc,message", [
    ({"apiVersion": "audit.k8s.io/v1beta1", "kind": "Policy", "rules": [{"level": "None"}]}, "apiVersion"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": []}, "no rules"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "Everything"}]}, "unknown audit level"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"verbs": ["get"]}]}, "level is required"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["Later"], "rules": [{"level": "None"}]},
     "unknown stage"),
    ({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
      "rules": [{"level": "None", "namespaces": ["a"], "nonResourceURLs": ["/x"]}]}, "both"),
])
def test_invalid_policies(doc, message):
    with pytest.raises(ValueError, match=message):
        parse_policy(doc)


# --- events through a small aiohttp app that calls the hooks as chain.py does


class Collect:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def process(self, events):
        self.events.extend(events)

    async def close(self):
        pass


SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "d",
          "managedFields": [{"manager": "kubectl"}]}, "data": {"password": "aHVudGVyMg=="}}


async def app_client(policy_doc: dict[str, Any]) -> tuple[TestClient, Collect]:
    sink = Collect()
    auditor = audit.Auditor(parse_policy(policy_doc), [sink])

    async def handle(request: web.Request) -> web.StreamResponse:
        request[audit.AUDIT_ID] = request.headers.get("Audit-ID") or "generated-id"
        if request.path == "/api/v1/namespaces/d/secrets" and "Authorization" not in request.headers:
            return web.json_response({"kind": "Status", "status": "Failure", "reason": "Unauthorized",
                                      "message": "Unauthorized", "code": 401}, status=401)
        user = UserInfo("admin", groups=("system:masters",))
        if request.headers.get("Impersonate-User"):
            request["impersonator"], user = user, UserInfo(request.headers["Impersonate-User"])
        audit.received(request, attrs_for(request.method, request.path, user, dict(request.query)))
        if request.query.get("watch"):
            response = web.StreamResponse()
            await response.prepare(request)
            await response.write(b'{"type":"ADDED"}\n')
            return response
        if request.path.endswith("/boom"):
            request[audit.PANIC] = RuntimeError("kaboom")
            return web.json_response({"kind": "Status", "code": 500}, status=500)
        if request.method == "POST":
            body = await request.json()
            return web.json_response(body, status=201)
        return web.json_response(SECRET)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", audit.with_audit(handle, auditor))
    app.on_response_prepare.append(audit.on_response_prepare)
    client = TestClient(TestServer(app))
    await client.start_server()
    return client, sink


def policy(level: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", **extra, "rules": [{"level": level}]}


@pytest.mark.parametrize("level,has_request,has_response", [
    ("Metadata", False, False), ("Request", True, False), ("RequestResponse", True, True)])
async def test_levels_and_secret_contents(level, has_request, has_response):
    client, sink = await app_client(policy(level, omitManagedFields=True))
    try:
        reply = await client.post("/api/v1/namespaces/d/secrets", json=SECRET,
                                  headers={"Authorization": "Bearer x", "User-Agent": "kubectl/v1.37",
                                           "X-Forwarded-For": "10.0.0.7", "Audit-ID": "my-audit-id"})
        assert reply.status == 201 and reply.headers["Audit-Id"] == "my-audit-id"
    finally:
        await client.close()
    stages = [e["stage"] for e in sink.events]
    assert stages == ["RequestReceived", "ResponseComplete"]
    done = sink.events[-1]
    assert done["level"] == level and done["auditID"] == "my-audit-id" and done["verb"] == "create"
    assert done["user"] == {"username": "admin", "groups": ["system:masters"]}
    assert done["objectRef"] == {"resource": "secrets", "namespace": "d", "apiVersion": "v1"}
    assert done["responseStatus"] == {"metadata": {}, "code": 201}
    assert done["sourceIPs"][0] == "10.0.0.7" and done["userAgent"] == "kubectl/v1.37"
    assert done["requestURI"] == "/api/v1/namespaces/d/secrets"
    assert done["requestReceivedTimestamp"] <= done["stageTimestamp"]
    assert ("requestObject" in done) == has_request and ("responseObject" in done) == has_response
    if level == "Metadata":
        assert "aHVudGVyMg==" not in json.dumps(sink.events)
    else:
        assert done["requestObject"]["data"] == SECRET["data"]
        assert "managedFields" not in done["requestObject"]["metadata"]


async def test_watch_stages_impersonation_and_unauthenticated():
    client, sink = await app_client(policy("Metadata"))
    try:
        reply = await client.get("/api/v1/namespaces/d/pods?watch=true", headers={"Impersonate-User": "bob"})
        assert await reply.text() == '{"type":"ADDED"}\n' and reply.headers["Audit-Id"] == "generated-id"
        reply = await client.post("/api/v1/namespaces/d/secrets", json=SECRET)
        assert reply.status == 401
        reply = await client.get("/api/v1/namespaces/d/pods/boom")
        assert reply.status == 500
    finally:
        await client.close()
    watch = [e for e in sink.events if e["verb"] == "watch"]
    assert [e["stage"] for e in watch] == ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    assert watch[0]["user"]["username"] == "admin" and watch[0]["impersonatedUser"] == {"username": "bob"}
    unauth = [e for e in sink.events if e.get("responseStatus", {}).get("code") == 401]
    assert len(unauth) == 1 and unauth[0]["stage"] == "ResponseComplete" and unauth[0]["user"] == {"username": ""}
    assert unauth[0]["responseStatus"]["reason"] == "Unauthorized"
    panic = [e for e in sink.events if e["stage"] == "Panic"]
    assert len(panic) == 1 and panic[0]["responseStatus"]["code"] == 500 and "kaboom" in panic[0]["responseStatus"][
        "message"]


async def test_omit_stages_and_level_none():
    client, sink = await app_client({"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
                                     "omitStages": ["RequestReceived", "ResponseStarted"],
                                     "rules": [{"level": "None", "verbs": ["get"]}, {"level": "Metadata"}]})
    try:
        await client.get("/api/v1/namespaces/d/secrets/s")
        await client.get("/api/v1/namespaces/d/pods?watch=true")
    finally:
        await client.close()
    assert [(e["verb"], e["stage"]) for e in sink.events] == [("watch", "ResponseComplete")]


# --- log backend


def test_log_rotation_keeps_max_backups(tmp_path: Path):
    clock = [1_700_000_000.0]
    backend = LogBackend(str(tmp_path / "audit.log"), max_size_mb=1, max_backups=2, clock=lambda: clock[0])
    event = {"kind": "Event", "pad": "x" * 4000}
    for _ in range(6):  # ~1 MiB per round of 260 events -> rotations
        for _ in range(260):
            backend.process([event])
        clock[0] += 1.5
    asyncio.run(backend.close())
    backups = backend.backups()
    assert len(backups) == 2
    assert all(p.name.startswith("audit-2023-11-14T") and p.suffix == ".log" for p in backups)
    for path in [tmp_path / "audit.log", *backups]:
        assert path.stat().st_size <= 1024 * 1024
        lines = path.read_bytes().splitlines()
        assert lines and all(json.loads(line)["kind"] == "Event" for line in lines)


def test_log_rotation_max_age(tmp_path: Path):
    clock = [1_700_000_000.0]
    backend = LogBackend(str(tmp_path / "audit.log"), max_size_mb=1, max_age_days=1, clock=lambda: clock[0])
    old = tmp_path / "audit-2020-01-01T00-00-00.000.log"
    old.write_text("{}\n")
    os.utime(old, (clock[0] - 3 * 86400, clock[0] - 3 * 86400))
    for _ in range(300):
        backend.process([{"pad": "x" * 4000}])
    assert not old.exists() and len(backend.backups()) == 1


# --- webhook backend


async def test_webhook_batches(tmp_path: Path):
    received: list[list[dict[str, Any]]] = []
    failures = [1]

    async def sink(request: web.Request) -> web.Response:
        if failures[0]:
            failures[0] -= 1
            return web.Response(status=500)
        body = await request.json()
        assert body["kind"] == "EventList" and body["apiVersion"] == "audit.k8s.io/v1"
        assert request.headers["Authorization"] == "Bearer hook-token"
        received.append(body["items"])
        return web.Response(status=200)

    app = web.Application()
    app.router.add_post("/audit", sink)
    server = TestServer(app)
    await server.start_server()
    config = tmp_path / "webhook.kubeconfig"
    config.write_text(json.dumps({"clusters": [{"name": "c", "cluster": {"server": str(server.make_url("/audit"))}}],
                                  "users": [{"name": "u", "user": {"token": "hook-token"}}]}))
    backend = WebhookBackend(str(config), max_batch=3, max_wait=0.2, buffer_size=100, initial_backoff=0.05)
    try:
        backend.process([{"n": i} for i in range(7)])
        for _ in range(100):
            if sum(map(len, received)) == 7:
                break
            await asyncio.sleep(0.05)
        assert [len(b) for b in received] == [3, 3, 1]  # the first batch was retried after a 500
        assert [e["n"] for b in received for e in b] == list(range(7))
        backend.process([{"n": 7}])
    finally:
        await backend.close()  # flushes the pending event
        await server.close()
    # Delivery is at least once: a batch whose answer was lost (a pooled connection the sink closed under load)
    # is sent again, merged with what came since, so the last batch ends with event 7, maybe after event 6.
    assert received[-1][-1] == {"n": 7} and received[-1] in ([{"n": 7}], [{"n": 6}, {"n": 7}])
