"""Fault tests on a stack of their own: a gateway killed under read load, etcd restarted under write load
(with a watch open), flowcontrol stopped. authz down is tests/e2e/test_authz.py.

docs/architecture.md, "Failure policy": reads keep succeeding through the other gateway; storage/etcd
down -> 503/504 with nothing acknowledged lost and watches resumable; flowcontrol
down -> the gateways' local max-in-flight limits.
"""

from __future__ import annotations

import http.client
import json
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from kapi.local.launcher import Stack
from kapi.testing.rest import StackClient as Client

NS = "faults"


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with tempfile.TemporaryDirectory(prefix="kapi-faults-") as tmp:
        s = Stack(Path(tmp) / "state", port=0, gateways=2)
        s.start()
        try:
            client = Client(s)
            assert client.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
            assert client.request("POST", f"/api/v1/namespaces/{NS}/configmaps",
                                  {"metadata": {"name": "read-me"}, "data": {"k": "v"}})[0] == 201
            yield s
        finally:
            s.stop()


def load(stack: Stack, work: Any, threads: int, seconds: float, fault: Any = None, after: float = 1.0
         ) -> list[Counter[int]]:
    """Run ``work(client, n, i) -> status`` in ``threads`` threads for ``seconds``; per-thread status counters.

    ``fault()`` runs in this (the main) thread ``after`` seconds: processes the
    launcher starts get PR_SET_PDEATHSIG, which fires when the *thread* that
    spawned them exits, so restarts must not happen in a short-lived thread.
    """
    stop = time.monotonic() + seconds
    results: list[Counter[int]] = [Counter() for _ in range(threads)]

    def run(n: int) -> None:
        client, i = Client(stack), 0
        while time.monotonic() < stop:
            results[n][work(client, n, i)] += 1
            i += 1

    pool = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    try:
        if fault is not None:
            time.sleep(after)
            fault()
    finally:
        for t in pool:
            t.join()
    return results


def test_gateway_killed_under_read_load(stack: Stack) -> None:
    def read(client: Client, _n: int, _i: int) -> int:
        return client.request("GET", f"/api/v1/namespaces/{NS}/configmaps/read-me")[0]

    try:
        totals = sum(load(stack, read, threads=4, seconds=4.0, fault=lambda: stack.kill_process("gateway-1")),
                     Counter())
    finally:
        stack.restart_process("gateway-1")
    failures = sum(v for k, v in totals.items() if k != 200)
    print(f"\nreads during gateway kill -9: {dict(totals)} (failures: {failures})")
    assert totals[200] > 100
    # Envoy retries reads on connect failure/reset and its health checks drop the dead gateway within ~1s.
    assert failures <= max(10, totals[200] // 50), totals


def test_no_gateway_left_envoy_answers_a_kubernetes_status(stack: Stack) -> None:
    client = Client(stack)
    try:
        stack.kill_process("gateway-1")
        stack.kill_process("gateway-2")
        status, body = client.request("GET", f"/api/v1/namespaces/{NS}/configmaps/read-me")
    finally:
        stack.restart_process("gateway-1")
        stack.restart_process("gateway-2")
    assert status == 503, body
    assert isinstance(body, dict), body  # JSON, not Envoy's plain text
    assert (body["kind"], body["apiVersion"], body["status"], body["reason"], body["code"]) == \
        ("Status", "v1", "Failure", "ServiceUnavailable", 503)
    # Connecting failed, or the health check / outlier detection already took both out (no panic routing).
    assert body["message"].startswith(("upstream connect error", "no healthy upstream")), body
    deadline = time.monotonic() + 15
    while client.request("GET", f"/api/v1/namespaces/{NS}/configmaps/read-me")[0] != 200:
        assert time.monotonic() < deadline, "the gateways did not come back"
        time.sleep(0.3)


def test_etcd_restarted_under_write_load_loses_nothing_and_watches_resume(stack: Stack) -> None:
    admin = Client(stack)
    status, listing = admin.request("GET", f"/api/v1/namespaces/{NS}/configmaps")
    assert status == 200
    watched: list[dict[str, Any]] = []
    ends: list[str] = []  # how each watch ended or was refused: the failure message names them
    watch_done = threading.Event()

    def watch(rv: str) -> None:
        # A client's watch loop: on a clean end re-watch from the last resourceVersion seen.
        while not watch_done.is_set():
            url = urlparse(stack.url)
            conn = http.client.HTTPSConnection(url.hostname or "", url.port or 443, context=admin.context, timeout=30)
            try:
                conn.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv}"
                                    "&allowWatchBookmarks=true&timeoutSeconds=20")
                reply = conn.getresponse()
                if reply.status != 200:
                    ends.append(f"from rv {rv}: HTTP {reply.status} {reply.read()[:200]!r}")
                    time.sleep(0.3)
                    continue
                for line in reply:
                    event = json.loads(line)
                    if event["type"] == "ERROR":
                        ends.append(f"from rv {rv}: ERROR {event['object'].get('code')} "
                                    f"{event['object'].get('message', '')[:200]}")
                        break
                    rv = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] == "ADDED":
                        watched.append(event["object"])
                    if watch_done.is_set():
                        break
            except (OSError, http.client.HTTPException, ValueError) as exc:
                ends.append(f"from rv {rv}: {type(exc).__name__} {exc}")
                time.sleep(0.3)
            finally:
                conn.close()

    watcher = threading.Thread(target=watch, args=(listing["metadata"]["resourceVersion"],), daemon=True)
    watcher.start()
    acknowledged: list[str] = []
    lock = threading.Lock()

    def write(client: Client, n: int, i: int) -> int:
        name = f"w-{n}-{i}"
        status, _ = client.request("POST", f"/api/v1/namespaces/{NS}/configmaps",
                                   {"metadata": {"name": name}, "data": {"i": str(i)}})
        if status == 201:
            with lock:
                acknowledged.append(name)
        elif status in (503, 504, 0):
            time.sleep(0.05)
        return status

    def bounce() -> None:
        stack.kill_process("etcd")
        time.sleep(2.0)
        stack.restart_process("etcd")

    totals = sum(load(stack, write, threads=3, seconds=7.0, fault=bounce), Counter())
    print(f"\nwrites across an etcd restart: {dict(totals)}")
    assert totals[201] > 20
    assert set(totals) <= {201, 500, 503, 504, 0}, totals
    assert totals[503] + totals[504] > 0, "the outage was not visible as 503/504"
    assert totals[500] == 0, totals
    # Nothing acknowledged is lost (storage may answer 503 a moment longer while it re-syncs).
    deadline = time.monotonic() + 15
    status, after = admin.request("GET", f"/api/v1/namespaces/{NS}/configmaps")
    while status != 200 and time.monotonic() < deadline:
        time.sleep(0.3)
        status, after = admin.request("GET", f"/api/v1/namespaces/{NS}/configmaps")
    assert status == 200, after.get("message") if isinstance(after, dict) else after
    stored = {item["metadata"]["name"] for item in after["items"]}
    missing = set(acknowledged) - stored
    assert not missing, f"acknowledged but lost: {sorted(missing)[:10]}"
    # The watch (resumed after the outage if it ended) saw every acknowledged create.
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not set(acknowledged) <= {o["metadata"]["name"] for o in watched}:
        time.sleep(0.2)
    watch_done.set()
    unseen = set(acknowledged) - {o["metadata"]["name"] for o in watched}
    assert not unseen, (f"{len(unseen)} acknowledged creates never reached the watch, e.g. {sorted(unseen)[:5]}; "
                        f"the watch's ends: {ends[-8:]}")


def test_flowcontrol_stopped_local_limits_take_over(stack: Stack) -> None:
    client = Client(stack)
    stack.kill_process("flowcontrol")

    def fallback() -> bytes:
        metrics = client.request("GET", "/metrics")[1]
        assert isinstance(metrics, bytes)
        return metrics

    try:
        deadline = time.monotonic() + 10
        while b"\nkapi_flowcontrol_local_fallback 1.0\n" not in (metrics := fallback()):
            assert time.monotonic() < deadline, "no gateway fell back to local max-in-flight limits"
            time.sleep(0.2)
        assert b"apiserver_flowcontrol_dispatched_requests_total" not in metrics  # nobody to ask: left out
        # The fallback keeps the gateways ready (docs/architecture.md, "Failure policy"): kube's checks all pass.
        status, text = client.request("GET", "/readyz?verbose")
        assert status == 200 and isinstance(text, bytes) and text.endswith(b"readyz check passed\n"), text
        statuses = Counter(client.request("GET", f"/api/v1/namespaces/{NS}/configmaps/read-me")[0] for _ in range(50))
        statuses += Counter(client.request("POST", f"/api/v1/namespaces/{NS}/configmaps",
                                           {"metadata": {"generateName": "fc-"}})[0] for _ in range(10))
        assert statuses == Counter({200: 50, 201: 10}), statuses
    finally:
        stack.restart_process("flowcontrol")
    deadline = time.monotonic() + 15
    while b"\nkapi_flowcontrol_local_fallback 1.0\n" in fallback() or \
            b"\nkapi_flowcontrol_local_fallback 1.0\n" in fallback():  # two gateways behind Envoy: ask twice
        assert time.monotonic() < deadline, "a gateway stayed on its local limits after flowcontrol came back"
        time.sleep(0.3)
