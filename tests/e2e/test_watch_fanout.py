"""Shared storage watches end to end (services/gateway/watchfanout.py): many client watches of the same thing
on one gateway ride one storage stream, and each still gets exactly kube's events — in order, none missing, no
duplicate, a late joiner from its own resourceVersion on."""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from typing import Any

from kapi.local.launcher import Stack
from tests.e2e.test_fault_recovery import _context, direct, until

NS = "fanout"
WATCHERS = 12
GATEWAY = "gateway-1"


def gauge(stack: Stack, name: str) -> float:
    status, text = direct(stack, GATEWAY, "GET", "/metrics")
    assert status == 200, text
    match = re.search(rf"^{name} (\S+)$", text, re.M)
    assert match, f"{name} not in {GATEWAY}'s /metrics"
    return float(match.group(1))


def watch(stack: Stack, rv: str, result: dict[str, Any], until_name: str) -> None:
    host, port = stack.addresses[GATEWAY].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=_context(stack), timeout=30)
    try:
        conn.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=30")
        reply = conn.getresponse()
        result["status"] = reply.status
        for line in reply:
            event = json.loads(line)
            meta = event["object"]["metadata"]
            result["events"].append((event["type"], meta["name"], int(meta["resourceVersion"])))
            if meta["name"] == until_name and event["type"] == "DELETED":
                return
    finally:
        conn.close()


def test_watchers_of_one_namespace_share_a_storage_stream_and_each_gets_every_event(stack: Stack) -> None:
    assert direct(stack, GATEWAY, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] in (201, 409)
    until(lambda: direct(stack, GATEWAY, "GET", f"/api/v1/namespaces/{NS}/configmaps/kube-root-ca.crt")[0] == 200,
          10, "the namespace's kube-root-ca.crt (published by the controllers)")
    status, text = direct(stack, GATEWAY, "GET", f"/api/v1/namespaces/{NS}/configmaps")
    assert status == 200, text
    rv = json.loads(text)["metadata"]["resourceVersion"]
    upstreams, clients = gauge(stack, "kapi_watch_shared_upstreams"), gauge(stack, "kapi_watch_shared_clients")

    results = [{"events": [], "status": 0} for _ in range(WATCHERS)]
    threads = [threading.Thread(target=watch, args=(stack, rv, r, "last"), daemon=True) for r in results]
    for t in threads:
        t.start()
    until(lambda: gauge(stack, "kapi_watch_shared_clients") >= clients + WATCHERS, 10, "every watch open")
    # one stream for the twelve (a controller's own watch may restart meanwhile: at most one more)
    assert gauge(stack, "kapi_watch_shared_upstreams") - upstreams <= 2

    created = []
    for i in range(5):
        status, text = direct(stack, GATEWAY, "POST", f"/api/v1/namespaces/{NS}/configmaps",
                              {"metadata": {"name": f"cm-{i}"}, "data": {"i": str(i)}})
        assert status == 201, text
        created.append(json.loads(text)["metadata"]["resourceVersion"])
    late: dict[str, Any] = {"events": [], "status": 0}  # joins from the third create's revision
    late_thread = threading.Thread(target=watch, args=(stack, created[2], late, "last"), daemon=True)
    late_thread.start()
    time.sleep(0.5)
    for name in ("cm-0", "last"):
        if name == "last":
            assert direct(stack, GATEWAY, "POST", f"/api/v1/namespaces/{NS}/configmaps",
                          {"metadata": {"name": "last"}})[0] == 201
        assert direct(stack, GATEWAY, "DELETE", f"/api/v1/namespaces/{NS}/configmaps/{name}")[0] == 200
    for t in [*threads, late_thread]:
        t.join(20)

    expected = [("ADDED", f"cm-{i}") for i in range(5)] + [("DELETED", "cm-0"), ("ADDED", "last"),
                                                           ("DELETED", "last")]
    for result in results:
        assert result["status"] == 200
        assert [(t, n) for t, n, _ in result["events"]] == expected
        revisions = [r for _, _, r in result["events"]]
        assert revisions == sorted(revisions)
    assert results[0]["events"] == results[-1]["events"]
    assert late["status"] == 200
    assert [(t, n) for t, n, _ in late["events"]] == expected[3:]  # after its revision: cm-3 on, nothing before
    until(lambda: gauge(stack, "kapi_watch_shared_clients") <= clients, 10, "every watch closed")
