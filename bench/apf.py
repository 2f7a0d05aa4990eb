"""Noisy-neighbour benchmark for API Priority and Fairness (``make bench-apf``).

Starts a whole stack (kapi.local.launcher.Stack, 127.0.0.1 only) with small
limits (``--max-requests-inflight=4 --max-mutating-requests-inflight=2``:
6 seats cluster-wide). User A is classified by the default
``global-default`` FlowSchema; user B by a ``bench-trickle`` FlowSchema the
benchmark adds, pointing at the same ``global-default`` priority level (so A
and B are two flows of one level, as two ByUser flows of one schema would be,
and the flowcontrol service's wait histogram tells B's queue wait apart).
All requests are a GET of one ConfigMap through Envoy. Phases:

0. warm-up: B alone, discarded: the first seconds after start-up carry the
   controllers' initial sync, whose requests borrow every lendable seat
   (with 6 seats ``global-default`` has 1 nominal seat, lendable: 0
   guaranteed), so B would queue behind them;
1. unloaded: B (a token user) at a steady rate;
2. cpu-only control: an admin (system:masters, the ``exempt`` level: never
   queued) floods with as many closed-loop workers as there are seats while
   B keeps its rate: what CPU contention alone costs B, with no APF queueing;
3. loaded: A floods with many closed-loop workers (several times the seats)
   in a separate process while B keeps its rate and the admin sends 5/s;
4. same flow: the flood again, with B's requests sent as A (no fairness can
   help B then), to show what APF isolates B from;
5. overload (issue 16): four users (C-F, four ByUser flows of
   ``global-default``) each offer half of the loaded phase's measured
   throughput in an open loop (together twice the capacity, in two client
   processes) while B keeps its rate: how long every request takes to be
   answered (from its scheduled send time, so client-side waiting counts),
   how many are 429 and whether each 429 carries Retry-After, and the served
   p99;
6. overload, tuned: the same, with C-F moved to their own priority level
   ``bench-overload`` whose queues hold about 0.2 s of this stack's work
   (8 queues of 8, hand size 2), as an admin sizes APF to a server.

Every loop is bounded by time and stops by itself. It prints B's p50/p99
latency per phase, the slowest requests, 429 counts per user, A's
throughput, B's queue wait (from the ``request_wait_duration_seconds``
histogram of its FlowSchema), whether the exempt level ever queued, and the
CPU the stack's processes used (cores) per phase.

    python bench/apf.py [--seconds 20] [--warmup 10] [--flood 48] [--rate 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import ssl
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from report import Accounting  # noqa: E402  (bench/report.py)

from kapi import grpcutil, jsonutil  # noqa: E402
from kapi.local.launcher import Stack  # noqa: E402
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc  # noqa: E402

TOKENS = {"user-a": "bench-token-user-a-0123456789", "user-b": "bench-token-user-b-0123456789",
          **{f"user-{c}": f"bench-token-user-{c}-0123456789" for c in "cdef"}}
OVERLOAD_USERS = ("user-c", "user-d", "user-e", "user-f")
OVERLOAD_LEVEL = "bench-overload"  # the tuned level (and FlowSchema) of the second overload phase
OPEN_LOOP_CONNECTIONS = 256  # per client process: requests beyond it wait in the client (and that wait counts)
TRICKLE_SCHEMA, LEVEL, SEATS = "bench-trickle", "global-default", 6
NAMESPACE, CONFIGMAP = "apf-bench", "target"
PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps/{CONFIGMAP}"


@dataclass
class Stats:
    """Latencies (seconds) and status counts of one client during one phase."""

    latencies: list[float] = field(default_factory=list)
    codes: dict[int, int] = field(default_factory=dict)

    def add(self, code: int, seconds: float) -> None:
        self.codes[code] = self.codes.get(code, 0) + 1
        if code == 200:
            self.latencies.append(seconds)

    def percentile(self, p: float) -> float:
        """The p-th percentile latency in milliseconds (successful requests)."""
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

    def summary(self) -> dict[str, Any]:
        return {"requests": sum(self.codes.values()), "ok": self.codes.get(200, 0),
                "429": self.codes.get(429, 0), "other_errors": sum(v for k, v in self.codes.items()
                                                                   if k not in (200, 429)),
                "p50_ms": round(self.percentile(50), 2), "p99_ms": round(self.percentile(99), 2),
                "mean_ms": round(1000 * statistics.fmean(self.latencies), 2) if self.latencies else None,
                "slowest_ms": [round(1000 * v, 1) for v in sorted(self.latencies)[-5:][::-1]]}


async def one(session: aiohttp.ClientSession, url: str, headers: dict[str, str], stats: Stats) -> None:
    start = time.perf_counter()
    try:
        async with session.get(url, headers=headers) as response:
            await response.read()
            stats.add(response.status, time.perf_counter() - start)
    except aiohttp.ClientError:
        stats.add(0, time.perf_counter() - start)


async def trickle(session: aiohttp.ClientSession, url: str, headers: dict[str, str], rate: float,
                  seconds: float) -> Stats:
    """Sequential requests every 1/rate seconds for ``seconds``."""
    stats = Stats()
    end = time.monotonic() + seconds
    interval = 1.0 / rate
    next_at = time.monotonic()
    while time.monotonic() < end:
        await one(session, url, headers, stats)
        next_at += interval
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    return stats


async def flood(session: aiohttp.ClientSession, url: str, headers: dict[str, str], workers: int,
                seconds: float) -> Stats:
    """``workers`` closed loops sending back-to-back for ``seconds``."""
    stats = Stats()
    end = time.monotonic() + seconds

    async def worker() -> None:
        while time.monotonic() < end:
            await one(session, url, headers, stats)

    await asyncio.gather(*(worker() for _ in range(workers)))
    return stats


def session(stack: Stack, limit: int, client_cert: bool = False) -> aiohttp.ClientSession:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    if client_cert:
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=limit),
                                 timeout=aiohttp.ClientTimeout(total=90))


async def counters(stack: Stack) -> dict[str, Any]:
    """The flowcontrol service's counters (Dump RPC, as the gateway's gRPC identity)."""
    pki = stack.pki.dir
    tls = grpcutil.TLSFiles(f"{pki}/kapi-gateway.crt", f"{pki}/kapi-gateway.key", f"{pki}/ca.crt")
    channel = grpcutil.channel(stack.addresses["flowcontrol"], tls)
    try:
        stub = flowcontrol_pb2_grpc.FlowControlStub(channel)
        response = await stub.Dump(flowcontrol_pb2.DumpRequest(kind="counters"), timeout=10)
        return jsonutil.loads(response.text)  # type: ignore[no-any-return]
    finally:
        await channel.close()


def waits(metrics: dict[str, Any], level: str, schema: str | None = None) -> tuple[int, dict[str, int]]:
    """(dispatched count, cumulative bucket counts) of ``level``'s wait histogram (one schema, or all)."""
    count, buckets = 0, dict[str, int]()
    for entry in metrics["request_wait_duration_seconds"]:
        if entry["priority_level"] == level and entry["execute"] == "true" and schema in (None, entry["flow_schema"]):
            count += entry["count"]
            for bound, n in entry["buckets"].items():
                buckets[bound] = buckets.get(bound, 0) + n
    return count, buckets


def wait_summary(before: dict[str, Any], after: dict[str, Any], level: str, schema: str | None = None
                 ) -> dict[str, Any]:
    """Queue waits between two snapshots: count, how many waited at all, and the p50/p99 bucket bounds (ms)."""
    n0, b0 = waits(before, level, schema)
    n1, b1 = waits(after, level, schema)
    count = n1 - n0
    delta = {bound: b1[bound] - b0.get(bound, 0) for bound in b1}

    def bound_of(q: float) -> str:
        for bound, n in delta.items():
            if count and n >= q * count:
                return "<= " + (f"{1000 * float(bound):g}" if bound != "inf" else "inf")
        return "-"

    return {"dispatched": count, "waited": count - delta.get("0.0", 0), "p50_ms": bound_of(0.5),
            "p99_ms": bound_of(0.99)}


def _flood_process(url: str, ca: str, token: str, cert: tuple[str, str] | None, workers: int, seconds: float,
                   out: Any) -> None:
    """Child-process body: the flood runs on its own event loop, so it cannot delay B's timings."""
    async def go() -> dict[str, Any]:
        context = ssl.create_default_context(cafile=ca)
        if cert:
            context.load_cert_chain(*cert)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=workers + 4),
                                         timeout=aiohttp.ClientTimeout(total=90)) as client:
            await one(client, url, headers, Stats())  # connected and served once: the flood starts now
            out.put("started")
            stats = await flood(client, url, headers, workers, seconds)
        return {**stats.summary(), "throughput_per_s": round(stats.codes.get(200, 0) / seconds, 1)}

    out.put(asyncio.run(go()))


async def flood_elsewhere(stack: Stack, token: str, workers: int, seconds: float, started: asyncio.Event,
                          admin: bool = False) -> dict[str, Any]:
    """Run a flood (as the token's user, or the admin's client certificate) in a separate process.

    ``started`` is set once the child is connected and flooding; returns the flood's summary.
    """
    cert = (str(stack.pki.admin_cert), str(stack.pki.admin_key)) if admin else None
    return await elsewhere(_flood_process, (stack.url + PATH, str(stack.pki.ca_cert), token, cert, workers, seconds),
                           seconds, started)


async def elsewhere(target: Callable[..., None], args: tuple[Any, ...], seconds: float, started: asyncio.Event) -> Any:
    """Run ``target(*args, out)`` in a spawned process: it puts "started" on ``out`` once loading (then
    ``started`` is set here), then its result, which is returned (waits at most ``seconds`` + 120 s)."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    process = context.Process(target=target, args=(*args, out), daemon=True)
    process.start()
    loop = asyncio.get_running_loop()
    try:
        assert await loop.run_in_executor(None, out.get, True, 120) == "started"
        started.set()
        return await loop.run_in_executor(None, out.get, True, seconds + 120)
    finally:
        process.join(10)


def _open_loop_process(url: str, ca: str, tokens: list[str], rate: float, seconds: float, out: Any) -> None:
    """Child-process body: each token's user sends ``rate`` requests/s on a fixed schedule for ``seconds``.

    Open loop: a request is sent at its scheduled time whatever happened to the
    earlier ones; its latency is measured from that time (so waiting for a free
    connection in the client counts, no coordinated omission). Puts a summary
    per token: the Stats summary plus the slowest answer of any status
    (``max_any_ms``), and how many 429s lacked a Retry-After header.
    """
    async def go() -> list[dict[str, Any]]:
        context = ssl.create_default_context(cafile=ca)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=OPEN_LOOP_CONNECTIONS),
                                         timeout=aiohttp.ClientTimeout(total=30)) as client:
            await one(client, url, {}, Stats())  # connected once: the load starts now
            out.put("started")

            async def user(token: str) -> dict[str, Any]:
                stats, slowest, no_retry_after = Stats(), 0.0, 0
                headers = {"Authorization": f"Bearer {token}"}

                async def send(at: float) -> None:
                    nonlocal slowest, no_retry_after
                    try:
                        async with client.get(url, headers=headers) as response:
                            await response.read()
                            code = response.status
                            if code == 429 and "Retry-After" not in response.headers:
                                no_retry_after += 1
                    except (aiohttp.ClientError, TimeoutError):
                        code = 0
                    took = time.monotonic() - at
                    slowest = max(slowest, took)
                    stats.add(code, took)

                tasks, start, k = [], time.monotonic(), 0
                while (at := start + k / rate) < start + seconds:
                    await asyncio.sleep(max(0.0, at - time.monotonic()))
                    tasks.append(asyncio.ensure_future(send(at)))
                    k += 1
                await asyncio.gather(*tasks)
                elapsed = time.monotonic() - start  # until the last answer: what was served per second
                return {**stats.summary(), "max_any_ms": round(1000 * slowest, 1), "no_retry_after": no_retry_after,
                        "offered_per_s": rate, "answered_after_s": round(elapsed, 1),
                        "throughput_per_s": round(stats.codes.get(200, 0) / elapsed, 1),
                        "rejected_per_s": round(stats.codes.get(429, 0) / elapsed, 1)}

            return list(await asyncio.gather(*(user(t) for t in tokens)))

    out.put(asyncio.run(go()))


async def open_loop_elsewhere(stack: Stack, users: list[str], rate: float, seconds: float,
                              started: asyncio.Event) -> list[dict[str, Any]]:
    """Run :func:`_open_loop_process` for ``users`` (each at ``rate``/s) in a separate process; per-user summaries."""
    return await elsewhere(_open_loop_process, (stack.url + PATH, str(stack.pki.ca_cert), [TOKENS[u] for u in users],
                                                rate, seconds), seconds, started)


class Cpu:
    """Cores the stack's processes (and the benchmark's client processes) used during a phase."""

    def __init__(self, stack: Stack) -> None:
        self._accounting = Accounting(stack)
        self._start = 0.0

    def __enter__(self) -> Cpu:
        self._accounting.start()
        self._start = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        used = self._accounting.stop()
        self.cores = round(sum(used.values()) / (time.monotonic() - self._start), 2)


async def run(stack: Stack, seconds: float, warmup: float, workers: int, rate: float) -> dict[str, Any]:
    url = stack.url + PATH
    b = {"Authorization": f"Bearer {TOKENS['user-b']}"}
    a = {"Authorization": f"Bearer {TOKENS['user-a']}"}
    results: dict[str, Any] = {"seconds": seconds, "warmup_seconds": warmup, "flood_workers": workers,
                               "trickle_rate_per_s": rate, "seats": SEATS}
    async with session(stack, 4) as steady, session(stack, 4, client_cert=True) as admin:
        await trickle(steady, url, b, rate, warmup)
        before = await counters(stack)
        with Cpu(stack) as cpu:
            unloaded = await trickle(steady, url, b, rate, seconds)
        after = await counters(stack)
        results["unloaded"] = {"B": unloaded.summary(), "B_queue_wait": wait_summary(before, after, LEVEL,
                                                                                    TRICKLE_SCHEMA),
                               "stack_cores": cpu.cores}

        async def with_flood(token: str, admin_flood: bool, flood_workers: int, *trickles: Any) -> list[Any]:
            started = asyncio.Event()
            task = asyncio.ensure_future(flood_elsewhere(stack, token, flood_workers, seconds + 3, started,
                                                         admin_flood))
            await started.wait()
            await asyncio.sleep(1.0)  # queues filled
            return [*await asyncio.gather(*trickles), await task]

        before = await counters(stack)
        with Cpu(stack) as cpu:
            b_control, control = await with_flood("", True, SEATS, trickle(steady, url, b, rate, seconds))
        after = await counters(stack)
        results["cpu_only"] = {"admin_flood": control, "B": b_control.summary(),
                               "B_queue_wait": wait_summary(before, after, LEVEL, TRICKLE_SCHEMA),
                               "stack_cores": cpu.cores}

        before = await counters(stack)
        with Cpu(stack) as cpu:
            b_stats, admin_stats, a_summary = await with_flood(
                TOKENS["user-a"], False, workers, trickle(steady, url, b, rate, seconds),
                trickle(admin, url, {}, 5, seconds))
        after = await counters(stack)
        exempt = wait_summary(before, after, "exempt")
        results["loaded"] = {"A": a_summary, "B": b_stats.summary(), "admin": admin_stats.summary(),
                             "B_queue_wait": wait_summary(before, after, LEVEL, TRICKLE_SCHEMA),
                             "A_queue_wait": wait_summary(before, after, LEVEL, LEVEL),
                             "exempt_dispatched": exempt["dispatched"], "exempt_waited": exempt["waited"],
                             "stack_cores": cpu.cores}

        with Cpu(stack) as cpu:
            b_same, a_same = await with_flood(TOKENS["user-a"], False, workers, trickle(steady, url, a, rate, seconds))
        results["same_flow"] = {"A": a_same, "B_as_A": b_same.summary(), "stack_cores": cpu.cores}

        # Overload: four users offer together twice what the A flood got served, in an open loop: first in
        # global-default as configured (128 queues of 50), then in a level whose queues hold ~0.2 s of work.
        capacity = float(a_summary["throughput_per_s"])
        results["overload"] = await overload(stack, steady, url, b, rate, seconds, capacity)
        await asyncio.get_running_loop().run_in_executor(None, tuned_level, stack)
        await asyncio.sleep(2.0)  # the flowcontrol service has the new configuration
        results["overload_tuned"] = await overload(stack, steady, url, b, rate, seconds, capacity)
    return results


async def overload(stack: Stack, steady: aiohttp.ClientSession, url: str, b: dict[str, str], rate: float,
                   seconds: float, capacity: float) -> dict[str, Any]:
    """Users C-F each offer ``capacity / 2`` requests/s (open loop, two client processes) while B trickles."""
    per_user = max(1.0, capacity / 2)
    halves = [list(OVERLOAD_USERS[:2]), list(OVERLOAD_USERS[2:])]
    with Cpu(stack) as cpu:
        events = [asyncio.Event(), asyncio.Event()]
        loads = [asyncio.ensure_future(open_loop_elsewhere(stack, users, per_user, seconds, ev))
                 for users, ev in zip(halves, events, strict=True)]
        await asyncio.gather(*(ev.wait() for ev in events))
        b_over = await trickle(steady, url, b, rate, seconds)
        per_user_results = [r for load in loads for r in await load]
    return {"capacity_per_s": capacity, "offered_per_user_per_s": per_user,
            "users": dict(zip(OVERLOAD_USERS, per_user_results, strict=True)), "B": b_over.summary(),
            "stack_cores": cpu.cores}


def kubectl(stack: Stack, *args: str, stdin: str | None = None) -> None:
    """Run the pinned kubectl as the stack's admin; raises CalledProcessError when it fails."""
    import subprocess

    from kapi.local import binaries

    subprocess.run([str(binaries.kubectl()), "--kubeconfig", str(stack.kubeconfig), *args], check=True,
                   capture_output=True, text=True, input=stdin)


def tuned_level(stack: Stack) -> None:
    """Users C-F to their own level ``bench-overload`` whose queues are sized to this stack (8 queues of 8,
    hand size 2: at most 16 requests of a flow wait, ~0.2 s of work at the measured capacity), as an admin
    tunes APF for a server's real capacity. ByUser: still four flows."""
    kubectl(stack, "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
        "metadata": {"name": OVERLOAD_LEVEL},
        "spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 100, "lendablePercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 8, "handSize": 2, "queueLengthLimit": 8}}}}}))
    kubectl(stack, "apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": OVERLOAD_LEVEL},
        "spec": {"priorityLevelConfiguration": {"name": OVERLOAD_LEVEL}, "matchingPrecedence": 9000,
                 "distinguisherMethod": {"type": "ByUser"},
                 "rules": [{"subjects": [{"kind": "User", "user": {"name": u}} for u in OVERLOAD_USERS],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                               "namespaces": ["*"]}]}]}}))


def setup(stack: Stack) -> None:
    """The namespace, the ConfigMap, view rights for every user, and B's FlowSchema (admin kubectl)."""

    def kubectl(*args: str, stdin: str | None = None) -> None:
        globals()["kubectl"](stack, *args, stdin=stdin)

    kubectl("create", "namespace", NAMESPACE)
    kubectl("create", "configmap", CONFIGMAP, "-n", NAMESPACE, "--from-literal=k=v")
    kubectl("create", "rolebinding", "bench-view", "-n", NAMESPACE, "--clusterrole=view",
            *(f"--user={u}" for u in TOKENS))
    kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": TRICKLE_SCHEMA},
        "spec": {"priorityLevelConfiguration": {"name": LEVEL}, "matchingPrecedence": 9000,
                 "distinguisherMethod": {"type": "ByUser"},
                 "rules": [{"subjects": [{"kind": "User", "user": {"name": "user-b"}}],
                            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                               "namespaces": ["*"]}]}]}}))


def table(results: dict[str, Any]) -> str:
    """The markdown table of docs/benchmarks.md."""
    rows = [("unloaded", "B", results["unloaded"]["B"], results["unloaded"]),
            ("cpu-only control", "B", results["cpu_only"]["B"], results["cpu_only"]),
            ("cpu-only control", f"admin flood ({SEATS} workers, exempt)", results["cpu_only"]["admin_flood"], None),
            ("loaded", "B", results["loaded"]["B"], results["loaded"]),
            ("loaded", "admin (exempt, 5/s)", results["loaded"]["admin"], None),
            ("loaded", f"A flood ({results['flood_workers']} workers)", results["loaded"]["A"], None),
            ("same flow", "B sent as A", results["same_flow"]["B_as_A"], results["same_flow"])]
    lines = ["| phase | client | requests/s | p50 ms | p99 ms | slowest ms | 429s | B queue wait p99 | stack cores |",
             "|---|---|---|---|---|---|---|---|---|"]
    for phase, client, s, whole in rows:
        per_s = s.get("throughput_per_s", round(s["requests"] / results["seconds"], 1))
        wait = whole.get("B_queue_wait", {}).get("p99_ms", "") if whole and client == "B" else ""
        cores = whole.get("stack_cores", "") if whole else ""
        lines.append(f"| {phase} | {client} | {per_s} | {s['p50_ms']} | {s['p99_ms']} | "
                     f"{', '.join(str(v) for v in s['slowest_ms'][:3])} | {s['429']} | {wait} | {cores} |")
    return "\n".join(lines)


def overload_table(results: dict[str, Any], phase: str = "overload") -> str:
    """An overload phase's markdown table: per user offered/served/429 rates, latencies and Retry-After."""
    over = results[phase]
    lines = ["| client | offered req/s | served req/s (to the last answer) | 429/s | other errors | served p50 ms | "
             "served p99 ms | slowest answer ms (any status) | 429s without Retry-After |",
             "|---|---|---|---|---|---|---|---|---|"]
    for user, r in over["users"].items():
        lines.append(f"| {user} | {r['offered_per_s']:.0f} | {r['throughput_per_s']} | {r['rejected_per_s']} | "
                     f"{r['other_errors']} | {r['p50_ms']} | {r['p99_ms']} | {r['max_any_ms']} | "
                     f"{r['no_retry_after']} |")
    b = over["B"]
    lines.append(f"| B (trickle) | {results['trickle_rate_per_s']:.0f} | {b['ok'] / results['seconds']:.1f} | "
                 f"{b['429'] / results['seconds']:.1f} | {b['other_errors']} | {b['p50_ms']} | {b['p99_ms']} | "
                 f"{max(b['slowest_ms'], default=0)} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each phase (seconds)")
    parser.add_argument("--warmup", type=float, default=10.0, help="discarded trickle before the phases (seconds)")
    parser.add_argument("--flood", type=int, default=48, help="user A's concurrent workers")
    parser.add_argument("--rate", type=float, default=20.0, help="user B's requests per second")
    parser.add_argument("--json", default="", help="also write the results here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kapi-bench-apf-") as tmp:
        tokens = Path(tmp) / "tokens.csv"
        tokens.write_text("".join(f'{t},{u},uid-{u},"bench"\n' for u, t in TOKENS.items()))
        stack = Stack(Path(tmp) / "state", extra_flags=[
            f"--token-auth-file={tokens}", "--max-requests-inflight=4", "--max-mutating-requests-inflight=2"])
        with stack:
            setup(stack)
            results = asyncio.run(run(stack, args.seconds, args.warmup, args.flood, args.rate))
    print(json.dumps(results, indent=2))
    print()
    print(table(results))
    print()
    for phase, what in (("overload", "global-default as configured"), ("overload_tuned", OVERLOAD_LEVEL)):
        print(f"\n{phase} ({what}): capacity {results[phase]['capacity_per_s']} req/s (the loaded phase's A), "
              f"stack cores {results[phase]['stack_cores']}")
        print(overload_table(results, phase))
    unloaded, control, loaded = results["unloaded"]["B"], results["cpu_only"]["B"], results["loaded"]["B"]

    def ratio(x: float, y: float) -> str:
        return f"{x / y:.2f}" if y else "nan"

    print(f"\nB p99: unloaded {unloaded['p99_ms']} ms, cpu-only control {control['p99_ms']} ms "
          f"(x{ratio(control['p99_ms'], unloaded['p99_ms'])}), loaded {loaded['p99_ms']} ms "
          f"(x{ratio(loaded['p99_ms'], unloaded['p99_ms'])}; target <= x3); loaded vs control "
          f"x{ratio(loaded['p99_ms'], control['p99_ms'])}. B queue wait p99 "
          f"{results['loaded']['B_queue_wait']['p99_ms']} ms; B 429s {loaded['429']}; A 429s "
          f"{results['loaded']['A']['429']}; exempt waited {results['loaded']['exempt_waited']} of "
          f"{results['loaded']['exempt_dispatched']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
