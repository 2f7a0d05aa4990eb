"""Each stage fails alone (issue 18), on a stack of its own with two gateways and two storage replicas:

- etcd stopped (SIGSTOP): every gateway's ``/readyz`` fails its ``etcd`` checks in kube's format, Envoy keeps
  routing to them (panic routing), ``/version`` and discovery answer, a request that needs etcd is answered
  504 at its deadline, and all is back within seconds of SIGCONT;
- admission SIGKILLed and started again: each gateway's first write succeeds within a few hundred ms of
  admission serving again (gRPC reconnect backoff, kapi/grpcutil.py);
- a storage replica SIGKILLed under open watches: they go on from the last resourceVersion they delivered,
  on the other replica, with no gap, no duplicate and no ERROR event;
- SIGTERM to each gateway in turn under load: 0 failed requests (kube's --shutdown-delay-duration).

Real processes, real signals; every wait is bounded.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import ssl
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kapi.local import envoy
from kapi.local.launcher import Stack, grpc_healthy
from tests.e2e.conftest import compact_etcd
from tests.e2e.test_faults import Client

NS = "recovery"


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with tempfile.TemporaryDirectory(prefix="kapi-recovery-") as tmp:
        s = Stack(Path(tmp) / "state", port=0, gateways=2, storage_replicas=2)
        s.start()
        try:
            assert Client(s).request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
            yield s
        finally:
            s.stop()


def _context(stack: Stack) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    return context


def direct(stack: Stack, gateway: str, method: str, path: str, body: Any = None, timeout: float = 5
           ) -> tuple[int, str]:
    """(status, text) of one request straight to ``gateway`` (not through Envoy); (0, error) on a failure."""
    host, port = stack.addresses[gateway].rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=_context(stack), timeout=timeout)
    try:
        conn.request(method, path, body=json.dumps(body).encode() if body is not None else None,
                     headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        return reply.status, reply.read().decode()
    except (OSError, http.client.HTTPException) as exc:
        return 0, str(exc)
    finally:
        conn.close()


def until(check: Any, timeout: float, what: str, interval: float = 0.05) -> float:
    """Seconds until ``check()`` is true; AssertionError naming ``what`` after ``timeout`` seconds."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < timeout, f"{what} not within {timeout}s"
        time.sleep(interval)
    return time.monotonic() - start


GATEWAYS = ("gateway-1", "gateway-2")


def envoy_health(stack: Stack) -> str:
    """The health_flags lines of Envoy's REST cluster in its admin /clusters (``healthy`` or ``/failed_active_hc``
    per gateway; the gRPC API's cluster, health-checked the same way, has lines of its own)."""
    admin = (stack.state_dir / "run" / "envoy-admin.address").read_text().strip()
    with urllib.request.urlopen(f"http://{admin}/clusters", timeout=5) as reply:
        return "\n".join(line for line in reply.read().decode().splitlines()
                         if "health_flags" in line and line.startswith(f"{envoy.CLUSTER}::"))


def test_etcd_stopped_gateways_answer_as_kube_and_envoy_keeps_routing(stack: Stack) -> None:
    """etcd hung (SIGSTOP): through Envoy every request still reaches a gateway, as a client would reach a
    kube-apiserver whose etcd hangs. /version and discovery answer from memory, /livez and /readyz fail their
    etcd checks in kube's format (etcd is in both: kube's Config.AddHealthChecks), a request that needs etcd is
    answered 504 on its own; after SIGCONT all is back within seconds."""
    etcd = stack.processes["etcd"]
    client = Client(stack)
    assert client.request("GET", f"/api/v1/namespaces/{NS}")[0] == 200
    assert client.request("POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "paused"}})[0] == 201
    for gateway in GATEWAYS:
        status, text = direct(stack, gateway, "GET", "/readyz?verbose")
        assert status == 200 and "[+]etcd ok\n[+]etcd-readiness ok\n" in text and text.endswith(
            "[+]shutdown ok\nreadyz check passed\n"), text
    os.kill(etcd.pid, signal.SIGSTOP)
    try:
        detected = max(until(lambda g=g: direct(stack, g, "GET", "/readyz")[0] == 500, 10, f"{g} /readyz failing")
                       for g in GATEWAYS)
        for gateway in GATEWAYS:
            status, text = direct(stack, gateway, "GET", "/readyz")
            assert status == 500, text
            assert "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n" \
                   "[-]etcd-readiness failed: reason withheld\n" in text, text
            assert text.endswith("[+]shutdown ok\nreadyz check failed\n"), text
            assert direct(stack, gateway, "GET", "/readyz/etcd") == (
                500, "internal server error: storage reports etcd unreachable (health NOT_SERVING)\n")
            assert direct(stack, gateway, "GET", "/readyz/ping") == (200, "ok")
        until(lambda: envoy_health(stack).count("failed_active_hc") == len(GATEWAYS), 5,
              "Envoy's active health check (every second) failing both gateways")
        time.sleep(1.5)  # a few more health-check rounds: Envoy must keep routing all along
        # Through Envoy (panic routing: no gateway passes /readyz): kube's answers, not "no healthy upstream".
        status, body = client.request("GET", "/version", timeout=5)
        assert status == 200 and isinstance(body, dict) and body["gitVersion"].startswith("v1."), (status, body)
        for path in ("/api", "/apis", "/api/v1", "/apis/apps/v1"):
            status, body = client.request("GET", path, timeout=5)
            assert status == 200 and isinstance(body, dict), (path, status, body)
        status, body = client.request("GET", "/readyz?verbose", timeout=5)
        assert status == 500 and isinstance(body, bytes), (status, body)
        text = body.decode()
        assert "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n" \
               "[-]etcd-readiness failed: reason withheld\n" in text and text.endswith(
                   "[+]shutdown ok\nreadyz check failed\n"), text
        status, body = client.request("GET", "/livez", timeout=5)
        assert status == 500 and isinstance(body, bytes) and b"[-]etcd failed: reason withheld\n" in body and \
            body.endswith(b"livez check failed\n"), (status, body)
        status, body = client.request("GET", "/livez?exclude=etcd&verbose", timeout=5)
        assert status == 200 and isinstance(body, bytes) and b"[+]etcd excluded: ok\n" in body and \
            body.endswith(b"livez check passed\n"), (status, body)
        # A request that needs etcd fails on its own with kube's 504 at its deadline (?timeout).
        for method, path, payload in (("GET", f"/api/v1/namespaces/{NS}/configmaps/paused?timeout=2s", None),
                                      ("POST", f"/api/v1/namespaces/{NS}/configmaps?timeout=2s",
                                       {"metadata": {"name": "while-paused"}})):
            start = time.monotonic()
            status, body = client.request(method, path, payload, timeout=15)
            took = time.monotonic() - start
            assert status == 504 and isinstance(body, dict), (method, status, body, took)
            assert (body["kind"], body["status"], body["reason"], body["code"], body["message"]) == (
                "Status", "Failure", "Timeout", 504,
                "Timeout: request did not complete within requested timeout - context deadline exceeded"), body
            assert took > 1.5 and took < 5, (method, took)  # ?timeout=2s: neither at once nor hung
        # Still routed afterwards: the gateways' 504s do not eject them.
        assert client.request("GET", "/version", timeout=5)[0] == 200
    finally:
        os.kill(etcd.pid, signal.SIGCONT)
    resumed = until(lambda: client.request("GET", f"/api/v1/namespaces/{NS}/configmaps/paused")[0] == 200, 15,
                    "GET through Envoy")
    print(f"\netcd SIGSTOP: /readyz failed after {detected:.1f}s; SIGCONT: served again after {resumed:.1f}s")
    until(lambda: all(direct(stack, g, "GET", "/readyz") == (200, "ok") for g in GATEWAYS), 10, "/readyz ok")
    until(lambda: client.request("GET", "/readyz")[0] == 200, 5, "/readyz through Envoy")
    status, body = client.request("POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": "resumed"}})
    assert status == 201, body
    assert client.request("GET", "/livez")[0] == 200


def test_admission_restarted_each_gateway_writes_again_at_once(stack: Stack) -> None:
    address = stack.addresses["admission"]
    cert, key = stack.pki.service_cert("gateway")
    delays: dict[str, float] = {}
    ready_at: list[float] = []

    def first_write(gateway: str) -> None:
        until(lambda: bool(ready_at), 30, "admission serving", interval=0.005)
        n = 0
        while time.monotonic() - ready_at[0] < 10:
            n += 1
            status, _ = direct(stack, gateway, "POST", f"/api/v1/namespaces/{NS}/configmaps",
                               {"metadata": {"name": f"after-{gateway}-{n}"}}, timeout=2)
            if status == 201:
                delays[gateway] = time.monotonic() - ready_at[0]
                return
            time.sleep(0.005)

    def probe() -> None:
        until(lambda: grpc_healthy(address, str(cert), str(key), str(stack.pki.ca_cert), 0.2), 30,
              "admission serving", interval=0.005)
        ready_at.append(time.monotonic())

    stack.kill_process("admission")
    try:
        for gateway in GATEWAYS:
            status, text = direct(stack, gateway, "POST", f"/api/v1/namespaces/{NS}/configmaps",
                                  {"metadata": {"name": f"while-down-{gateway}"}})
            assert status == 503, text  # writes need admission: refused while it is away
        time.sleep(3.0)  # away long enough for gRPC's default backoff to have grown past 2 s
        threads = [threading.Thread(target=probe)] + [threading.Thread(target=first_write, args=(g,))
                                                      for g in GATEWAYS]
        for t in threads:
            t.start()
    finally:
        stack.restart_process("admission")  # in this thread: the launcher's children die with their spawner
    for t in threads:
        t.join(40)
    print(f"\nfirst write after admission was serving again: "
          f"{ {g: round(d * 1000) for g, d in delays.items()} } ms")
    assert set(delays) == set(GATEWAYS), delays
    assert max(delays.values()) < 0.5, delays  # gRPC's default backoff: 1.4-2.6 s


RESUMED = f"storage watch of configmaps in {NS} broke"


def _gateway_logs(stack: Stack) -> str:
    return "".join(stack.log_path(g).read_text(errors="replace") for g in GATEWAYS)


def test_storage_replica_killed_watches_resume_without_gap_duplicate_or_error(stack: Stack) -> None:
    client = Client(stack)
    status, listing = client.request("GET", f"/api/v1/namespaces/{NS}/configmaps?labelSelector=wave%3Dresume")
    assert status == 200
    start_rv = listing["metadata"]["resourceVersion"]
    resumed_before = _gateway_logs(stack).count(RESUMED)
    url = stack.url.removeprefix("https://").rsplit(":", 1)
    watches: list[dict[str, Any]] = [{"events": [], "ended": ""} for _ in range(8)]

    def watch(result: dict[str, Any]) -> None:
        # Each watch its own selector (same objects): watches that agree on every filter share one storage stream
        # per gateway (services/gateway/watchfanout.py), and eight streams are what spreads them over the replicas.
        selector = f"wave%3Dresume,w{id(result)}!%3Dx"
        conn = http.client.HTTPSConnection(url[0], int(url[1]), context=_context(stack), timeout=60)
        try:
            conn.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={start_rv}"
                                f"&allowWatchBookmarks=true&labelSelector={selector}&timeoutSeconds=60")
            reply = conn.getresponse()
            if reply.status != 200:
                result["ended"] = f"status {reply.status}"
                return
            for line in reply:
                event = json.loads(line)
                meta = event["object"].get("metadata", {})
                result["events"].append((event["type"], meta.get("name", ""), int(meta.get("resourceVersion") or 0)))
                if event["type"] == "ERROR":
                    result["ended"] = f"ERROR {event['object']}"
                    return
                if meta.get("name") == "sentinel":
                    result["ended"] = "sentinel"
                    return
            result["ended"] = "stream ended"
        except (OSError, http.client.HTTPException, ValueError) as exc:
            result["ended"] = f"failed: {exc!r}"
        finally:
            conn.close()

    acknowledged: list[str] = []
    writing = threading.Event()
    writing.set()

    def write() -> None:
        writer, n = Client(stack), 0
        while writing.is_set():
            n += 1
            if writer.request("POST", f"/api/v1/namespaces/{NS}/configmaps",
                              {"metadata": {"name": f"r-{n}", "labels": {"wave": "resume"}}})[0] == 201:
                acknowledged.append(f"r-{n}")
            time.sleep(0.02)

    threads = [threading.Thread(target=watch, args=(w,), daemon=True) for w in watches]
    for t in threads:
        t.start()
    time.sleep(1.0)  # every watch open (8 over two gateways: each gateway's channel alternates the replicas)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        time.sleep(1.5)
        stack.kill_process("storage-1")
        time.sleep(3.0)
    finally:
        stack.restart_process("storage-1")
        time.sleep(1.0)
        writing.clear()
        writer.join(30)
    assert Client(stack).request("POST", f"/api/v1/namespaces/{NS}/configmaps",
                                 {"metadata": {"name": "sentinel", "labels": {"wave": "resume"}}})[0] == 201
    for t in threads:
        t.join(30)
    resumed = _gateway_logs(stack).count(RESUMED) - resumed_before
    print(f"\nstorage-1 killed under 8 watches: {len(acknowledged)} creates acknowledged, {resumed} watches resumed, "
          f"endings {[w['ended'] for w in watches]}")
    assert len(acknowledged) > 50
    assert resumed >= 1, "no watch was served by the killed replica: the test proved nothing"
    for w in watches:
        assert w["ended"] == "sentinel", w["ended"]
        changes = [(t, n, rv) for t, n, rv in w["events"] if t != "BOOKMARK"]
        revisions = [rv for _, _, rv in w["events"]]
        assert revisions == sorted(revisions), "resourceVersions went backwards"
        assert len({rv for _, _, rv in changes}) == len(changes), "a duplicate event"
        names = [n for t, n, _ in changes if t == "ADDED"]
        assert len(names) == len(set(names)), "an object ADDED twice"
        missing = set(acknowledged) - set(names)
        assert not missing, f"acknowledged creates never delivered (a gap): {sorted(missing)[:5]}"


def test_rolling_restart_of_both_gateways_under_load_fails_no_request(stack: Stack) -> None:
    """SIGTERM to each gateway in turn while clients read, write and watch through Envoy: /readyz fails first,
    Envoy stops sending, in-flight requests finish, watches end cleanly (clients re-watch), then the gateway
    exits; started again, it rejoins. kube-apiserver's --shutdown-delay-duration."""
    from collections import Counter

    from tests.e2e.test_faults import load

    lock = threading.Lock()
    acknowledged: list[str] = []
    failures: list[tuple[str, int, Any]] = []

    def work(client: Client, n: int, i: int) -> int:
        if i % 3 == 2:
            name = f"roll-{n}-{i}"
            status, body = client.request("POST", f"/api/v1/namespaces/{NS}/configmaps",
                                          {"metadata": {"name": name, "labels": {"wave": "roll"}}})
            if status == 201:
                with lock:
                    acknowledged.append(name)
        else:
            status, body = client.request("GET", f"/api/v1/namespaces/{NS}/configmaps?labelSelector=wave%3Droll"
                                                 "&limit=5")
        if status not in (200, 201):
            with lock:
                failures.append(("POST" if i % 3 == 2 else "GET", status, body))
        time.sleep(0.01)
        return status

    seen: list[str] = []
    errors_seen: list[Any] = []
    watch_runs: list[str] = []
    done = threading.Event()
    url = stack.url.removeprefix("https://").rsplit(":", 1)

    def watcher() -> None:
        rv = Client(stack).request("GET", f"/api/v1/namespaces/{NS}/configmaps?labelSelector=wave%3Droll")[1][
            "metadata"]["resourceVersion"]
        while not done.is_set():  # a client's watch loop: re-watch from the last resourceVersion on a clean end
            conn = http.client.HTTPSConnection(url[0], int(url[1]), context=_context(stack), timeout=30)
            try:
                conn.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv}"
                                    "&allowWatchBookmarks=true&labelSelector=wave%3Droll&timeoutSeconds=30")
                reply = conn.getresponse()
                if reply.status != 200:
                    watch_runs.append(f"status {reply.status}")
                    time.sleep(0.2)
                    continue
                watch_runs.append("open")
                for line in reply:
                    event = json.loads(line)
                    if event["type"] == "ERROR":
                        errors_seen.append(event["object"])
                        break
                    rv = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] == "ADDED":
                        seen.append(event["object"]["metadata"]["name"])
                    if done.is_set():
                        break
            except (OSError, http.client.HTTPException, ValueError) as exc:
                watch_runs.append(f"failed {exc!r}")
                time.sleep(0.2)
            finally:
                conn.close()

    watch_thread = threading.Thread(target=watcher, daemon=True)
    watch_thread.start()
    timings: dict[str, float] = {}

    def roll() -> None:
        for gateway in GATEWAYS:
            start = time.monotonic()
            code = stack.terminate_process(gateway, timeout=20)
            timings[f"{gateway} exit"] = time.monotonic() - start
            assert code == 0, f"{gateway} exited with {code}"
            stack.restart_process(gateway)
            until(lambda: "failed_active_hc" not in envoy_health(stack), 10, f"{gateway} healthy in Envoy again")
            time.sleep(0.5)

    drained_before = _gateway_logs(stack).count("drained after")
    totals = sum(load(stack, work, threads=4, seconds=20.0, fault=roll, after=1.0), Counter())
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not set(acknowledged) <= set(seen):
        time.sleep(0.2)
    done.set()
    print(f"\nrolling restart of both gateways under load: {dict(totals)}; gateway exits "
          f"{ {k: round(v, 1) for k, v in timings.items()} } s; watch runs {watch_runs}")
    assert len(timings) == 2, "the roll did not finish within the load"
    assert _gateway_logs(stack).count("drained after") - drained_before == 2  # each drained before closing
    assert totals[200] + totals[201] > 200
    assert not failures, f"{len(failures)} failed requests, e.g. {failures[:3]}"
    assert not errors_seen, f"the watch got ERROR events: {errors_seen[:2]}"
    missing = set(acknowledged) - set(seen)
    assert not missing, (f"{len(missing)} of {len(acknowledged)} acknowledged creates the watch never saw: "
                         f"{sorted(missing)[:5]}; watch runs {watch_runs}")


def test_watch_no_replica_can_resume_gets_410_expired(stack: Stack) -> None:
    """Both storage replicas die, etcd moves on and is compacted meanwhile: the watch cannot resume from its last
    resourceVersion anywhere, so the client gets kube's 410 Expired ERROR event (and re-lists)."""

    client = Client(stack)
    status, listing = client.request("GET", f"/api/v1/namespaces/{NS}/configmaps?labelSelector=wave%3Dexpire")
    assert status == 200
    url = stack.url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(url[0], int(url[1]), context=_context(stack), timeout=30)
    events: list[dict[str, Any]] = []
    try:
        conn.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&labelSelector=wave%3Dexpire"
                            f"&resourceVersion={listing['metadata']['resourceVersion']}&timeoutSeconds=30")
        reply = conn.getresponse()
        assert reply.status == 200
        time.sleep(0.5)
        stack.kill_process("storage-1")
        stack.kill_process("storage-2")
        # Two writes, compacted at the second: the watch's position (its last event or bookmark; a shared
        # upstream asks storage for bookmarks, services/gateway/watchfanout.py) is before the first of them at
        # best, so resuming needs a compacted revision (one write compacted at itself could still be watched
        # from, and the watch would rightly resume).
        compact_etcd(stack, b"/kapi-test/advance", writes=2)
        stack.restart_process("storage-1")  # within the gateway's 10 s of retrying
        for line in reply:
            events.append(json.loads(line))
            break
    finally:
        conn.close()
        for name in ("storage-1", "storage-2"):
            if stack.processes[name].poll() is not None:
                stack.restart_process(name)
    assert len(events) == 1 and events[0]["type"] == "ERROR", events
    status_obj = events[0]["object"]
    assert (status_obj["kind"], status_obj["code"], status_obj["reason"]) == ("Status", 410, "Expired"), status_obj
    assert status_obj["message"].startswith("too old resource version"), status_obj
