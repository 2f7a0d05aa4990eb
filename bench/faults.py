"""Fault matrix under mixed load (``make bench-faults``): issue 18's "each stage fails alone".

Starts a stack (kapi.local.launcher.Stack, 127.0.0.1 only) over a local
3-member etcd cluster (``--etcd-members 3``), two storage replicas and two
gateways, then runs writers (creates through Envoy), readers (consistent
LISTs, ``limit=1``) and one watcher (a client's watch loop: on a clean end
re-watch from the last resourceVersion) while it injects, one after the
other, with a quiet spell between:

1. etcd leader SIGKILLed, restarted after ``--down`` seconds;
2. an etcd follower SIGKILLed, restarted likewise;
3. storage-1 SIGKILLed, restarted likewise;
4. gateway-1 SIGKILLed, restarted likewise;
5. storage-2 and gateway-2 SIGKILLed at once, restarted likewise.

Per fault it prints: errors by HTTP status (0 = connection failure), the
seconds to recovery (the longest spell with no acknowledged write, from the
fault on), when the first write sent after the fault was acknowledged
(seconds from the fault), acknowledged writes lost (created with a 201 but absent from a
final consistent LIST), stale reads (a reader's LIST resourceVersion lower
than one it already got), watch gaps (acknowledged creates the watcher never
saw) and how often the watcher had to re-watch. Every loop is bounded.

    python bench/faults.py [--down 3] [--settle 4] [--writers 4] [--readers 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kapi.local.launcher import Stack  # noqa: E402
from kapi.testing.rest import StackClient as Client  # noqa: E402

NS = "faults"


@dataclass
class Record:
    """What the load saw, shared by its threads (append-only lists; Counter under the lock)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    writes: list[tuple[float, str]] = field(default_factory=list)  # (time, name) of each 201
    sent: list[tuple[float, float]] = field(default_factory=list)  # (sent, acknowledged) times of each 201
    statuses: list[tuple[float, int]] = field(default_factory=list)  # (time, status) of each failed request
    stale: list[float] = field(default_factory=list)  # times of reads older than one already returned
    watched: set[str] = field(default_factory=set)
    rewatches: list[tuple[float, str]] = field(default_factory=list)


def writer(stack: Stack, n: int, record: Record, stop: threading.Event) -> None:
    client, i = Client(stack), 0
    while not stop.is_set():
        i += 1
        name = f"w-{n}-{i}"
        sent = time.monotonic()
        status, _ = client.request("POST", f"/api/v1/namespaces/{NS}/configmaps", {"metadata": {"name": name}})
        now = time.monotonic()
        with record.lock:
            if status == 201:
                record.writes.append((now, name))
                record.sent.append((sent, now))
            else:
                record.statuses.append((now, status))
        if status != 201:
            time.sleep(0.05)


def reader(stack: Stack, record: Record, stop: threading.Event) -> None:
    client, newest = Client(stack), 0
    while not stop.is_set():
        status, body = client.request("GET", f"/api/v1/namespaces/{NS}/configmaps?limit=1")
        now = time.monotonic()
        if status == 200 and isinstance(body, dict):
            rv = int(body["metadata"]["resourceVersion"])
            if rv < newest:
                with record.lock:
                    record.stale.append(now)
            newest = max(newest, rv)
        else:
            with record.lock:
                record.statuses.append((now, status))
            time.sleep(0.05)


def watcher(stack: Stack, record: Record, stop: threading.Event, rv: str) -> None:
    client = Client(stack, timeout=30)
    while not stop.is_set():
        conn = http.client.HTTPSConnection(client.host, client.port, context=client.context, timeout=30)
        try:
            conn.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&resourceVersion={rv}"
                                "&allowWatchBookmarks=true&timeoutSeconds=60")
            reply = conn.getresponse()
            if reply.status != 200:
                record.rewatches.append((time.monotonic(), f"status {reply.status}"))
                time.sleep(0.2)
                continue
            for line in reply:
                event = json.loads(line)
                if event["type"] == "ERROR":
                    record.rewatches.append((time.monotonic(), f"ERROR {event['object'].get('code')}"))
                    if event["object"].get("code") == 410:  # nothing to resume from: start again from now
                        rv = client.request("GET", f"/api/v1/namespaces/{NS}/configmaps?limit=1")[1][
                            "metadata"]["resourceVersion"]
                    break
                rv = event["object"]["metadata"]["resourceVersion"]
                if event["type"] == "ADDED":
                    record.watched.add(event["object"]["metadata"]["name"])
                if stop.is_set():
                    break
            else:
                record.rewatches.append((time.monotonic(), "ended"))
        except (OSError, http.client.HTTPException, ValueError, TypeError, KeyError) as exc:
            record.rewatches.append((time.monotonic(), type(exc).__name__))
            time.sleep(0.2)
        finally:
            conn.close()


def etcd_leader(stack: Stack) -> tuple[str, list[str]]:
    """(leader, followers) among the etcd members, by each member's Maintenance Status (etcd's JSON gateway)."""
    ids: dict[str, int] = {}
    leader = 0
    for name, address in stack.addresses.items():
        if not name.startswith("etcd-"):
            continue
        request = urllib.request.Request(f"http://{address}/v3/maintenance/status", data=b"{}",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as reply:
            status = json.loads(reply.read())
        ids[name] = int(status["header"]["member_id"])
        leader = int(status["leader"])
    names = sorted(ids)
    lead = next(n for n in names if ids[n] == leader)
    return lead, [n for n in names if n != lead]


def recovery(writes: list[float], start: float, end: float) -> float:
    """The longest spell in [start, end] with no acknowledged write (seconds)."""
    times = [start, *sorted(t for t in writes if start <= t <= end), end]
    return max(b - a for a, b in zip(times, times[1:], strict=False))


def main(argv: list[str] | None = None) -> int:
    """Run the fault matrix; returns 1 if an acknowledged write was lost, a read went back, or the watch gapped."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--down", type=float, default=3.0, help="Seconds each killed process stays down.")
    parser.add_argument("--settle", type=float, default=4.0, help="Seconds of load before and after each fault.")
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--json", help="Write the per-fault results here.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kapi-bench-faults-") as tmp:
        stack = Stack(Path(tmp) / "state", port=0, gateways=2, storage_replicas=2, etcd_members=3,
                      echo=lambda line: print(line, file=sys.stderr))
        stack.start()
        try:
            return run(stack, args)
        finally:
            stack.stop()


def run(stack: Stack, args: argparse.Namespace) -> int:
    admin = Client(stack)
    assert admin.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
    rv = admin.request("GET", f"/api/v1/namespaces/{NS}/configmaps")[1]["metadata"]["resourceVersion"]
    record, stop, stop_watch = Record(), threading.Event(), threading.Event()
    threads = [threading.Thread(target=writer, args=(stack, n, record, stop)) for n in range(args.writers)]
    threads += [threading.Thread(target=reader, args=(stack, record, stop)) for _ in range(args.readers)]
    watch_thread = threading.Thread(target=watcher, args=(stack, record, stop_watch, rv))
    for t in [*threads, watch_thread]:
        t.start()
    phases: list[tuple[str, float, float]] = []
    try:
        time.sleep(args.settle)
        for label, pick in (
                ("etcd leader", lambda: [etcd_leader(stack)[0]]),
                ("etcd follower", lambda: [etcd_leader(stack)[1][0]]),
                ("storage-1", lambda: ["storage-1"]),
                ("gateway-1", lambda: ["gateway-1"]),
                ("storage-2 + gateway-2", lambda: ["storage-2", "gateway-2"])):
            victims = pick()
            start = time.monotonic()
            for name in victims:  # in this (the main) thread: the launcher's children die with their spawner
                stack.kill_process(name)
            time.sleep(args.down)
            for name in victims:
                stack.restart_process(name)
            time.sleep(args.settle)
            phases.append((f"{label} ({', '.join(victims)})", start, time.monotonic()))
    finally:
        stop.set()
        for t in threads:
            t.join(60)
        # Everything acknowledged must reach the watch (the watcher goes on until it has, or for 15 s)...
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not {n for _, n in record.writes} <= record.watched:
            time.sleep(0.2)
        stop_watch.set()
        watch_thread.join(35)
    # ... and be stored.
    status, listing = admin.request("GET", f"/api/v1/namespaces/{NS}/configmaps")
    assert status == 200, listing
    stored = {item["metadata"]["name"] for item in listing["items"]}
    results = []
    for label, start, end in phases:
        acked = [n for t, n in record.writes if start <= t < end]
        results.append({
            "fault": label,
            "errors": dict(sorted(Counter(s for t, s in record.statuses if start <= t < end).items())),
            "recovery_s": round(recovery([t for t, _ in record.writes], start, end), 2),
            # the first write sent after the fault that was acknowledged, counted from the fault
            "first_new_write_s": round(min((done - start for sent, done in record.sent if sent >= start),
                                           default=end - start), 2),
            "writes": len(acked),
            "lost": len([n for n in acked if n not in stored]),
            "stale_reads": len([t for t in record.stale if start <= t < end]),
            "watch_gaps": len([n for n in acked if n not in record.watched]),
            "rewatches": [w for t, w in record.rewatches if start <= t < end],
        })
    print(f"{'fault':<46} {'errors by status':<20} {'recovery s':>10} {'1st new s':>9} {'writes':>7} {'lost':>5} "
          f"{'stale':>6} {'gaps':>5}  re-watches")
    for r in results:
        errors = ", ".join(f"{k}: {v}" for k, v in r["errors"].items()) or "none"
        print(f"{r['fault']:<46} {errors:<20} {r['recovery_s']:>10} {r['first_new_write_s']:>9} {r['writes']:>7} "
              f"{r['lost']:>5} {r['stale_reads']:>6} {r['watch_gaps']:>5}  {', '.join(r['rewatches']) or 'none'}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    bad = any(r["lost"] or r["stale_reads"] or r["watch_gaps"] for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
