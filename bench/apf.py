"""Noisy-neighbour benchmark for API Priority and Fairness (``make bench-apf``).

Starts a whole stack (kapi.launcher.Stack, 127.0.0.1 only) with small
limits (``--max-requests-inflight=4 --max-mutating-requests-inflight=2``:
6 seats cluster-wide), then, through Envoy:

1. unloaded: user B (a token user) GETs one ConfigMap at a steady rate;
2. loaded: user A (another token user, same FlowSchema ``global-default``,
   its own flow ByUser) floods the same GET with many concurrent workers
   (several times the seats) while B keeps its trickle, and an admin
   (system:masters, the ``exempt`` level) sends a few requests too;
3. same-flow: the flood again, with B's requests sent as A (no fairness
   can help B then), to show what APF isolates B from.

Every loop is bounded by time and stops by itself. It prints and returns
B's p50/p99 latency per phase, 429 counts per user, A's throughput, and
whether the exempt level ever queued (from the flowcontrol service's wait
histogram, read over the Dump RPC with the gateway's gRPC identity).

    python bench/apf.py [--seconds 10] [--flood 48] [--rate 20] [--json out.json]
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kapi import grpcutil, jsonutil  # noqa: E402
from kapi.launcher import Stack  # noqa: E402
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc  # noqa: E402

TOKENS = {"user-a": "bench-token-user-a-0123456789", "user-b": "bench-token-user-b-0123456789"}
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
                "mean_ms": round(1000 * statistics.fmean(self.latencies), 2) if self.latencies else None}


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


def exempt_waits(metrics: dict[str, Any]) -> tuple[int, int]:
    """(exempt requests dispatched, how many of them waited at all)."""
    dispatched = waited = 0
    for entry in metrics["request_wait_duration_seconds"]:
        if entry["priority_level"] == "exempt" and entry["execute"] == "true":
            dispatched += entry["count"]
            waited += entry["count"] - entry["buckets"]["0.0"]
    return dispatched, waited


def _flood_process(url: str, ca: str, token: str, workers: int, seconds: float, out: Any) -> None:
    """Child-process body: the flood runs on its own event loop and core, so it cannot delay B's timings."""
    async def go() -> dict[str, Any]:
        context = ssl.create_default_context(cafile=ca)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=workers + 4),
                                         timeout=aiohttp.ClientTimeout(total=90)) as client:
            stats = await flood(client, url, {"Authorization": f"Bearer {token}"}, workers, seconds)
        return {**stats.summary(), "throughput_per_s": round(stats.codes.get(200, 0) / seconds, 1)}

    out.put(asyncio.run(go()))


async def flood_elsewhere(stack: Stack, token: str, workers: int, seconds: float) -> dict[str, Any]:
    """Run user A's flood in a separate process; returns its summary."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    process = context.Process(target=_flood_process, args=(stack.url + PATH, str(stack.pki.ca_cert), token,
                                                           workers, seconds, out), daemon=True)
    process.start()
    try:
        return await asyncio.get_running_loop().run_in_executor(None, out.get, True, seconds + 120)  # type: ignore
    finally:
        process.join(10)


async def run(stack: Stack, seconds: float, workers: int, rate: float) -> dict[str, Any]:
    url = stack.url + PATH
    b = {"Authorization": f"Bearer {TOKENS['user-b']}"}
    a = {"Authorization": f"Bearer {TOKENS['user-a']}"}
    results: dict[str, Any] = {"seconds": seconds, "flood_workers": workers, "trickle_rate_per_s": rate,
                               "seats": 6}
    async with session(stack, 4) as steady, session(stack, 4, client_cert=True) as admin:
        await trickle(steady, url, b, rate, 1.0)  # warm caches and connections
        unloaded = await trickle(steady, url, b, rate, seconds)
        results["unloaded"] = {"B": unloaded.summary()}

        before = exempt_waits(await counters(stack))
        flood_task = asyncio.ensure_future(flood_elsewhere(stack, TOKENS["user-a"], workers, seconds + 2))
        await asyncio.sleep(1.5)  # the flood is running (process start-up)
        b_stats, admin_stats = await asyncio.gather(trickle(steady, url, b, rate, seconds),
                                                    trickle(admin, url, {}, 5, seconds))
        a_summary = await flood_task
        after = exempt_waits(await counters(stack))
        results["loaded"] = {"A": a_summary, "B": b_stats.summary(), "admin": admin_stats.summary(),
                             "exempt_dispatched": after[0] - before[0], "exempt_waited": after[1] - before[1]}

        flood_task = asyncio.ensure_future(flood_elsewhere(stack, TOKENS["user-a"], workers, seconds + 2))
        await asyncio.sleep(1.5)
        b_same = await trickle(steady, url, a, rate, seconds)
        results["same_flow"] = {"A": await flood_task, "B_as_A": b_same.summary()}
    return results


def setup(stack: Stack) -> None:
    """The namespace, the ConfigMap, and view rights for both users (admin kubectl)."""
    import subprocess

    from kapi import binaries

    def kubectl(*args: str, stdin: str | None = None) -> None:
        subprocess.run([str(binaries.kubectl()), "--kubeconfig", str(stack.kubeconfig), *args], check=True,
                       capture_output=True, text=True, input=stdin)

    kubectl("create", "namespace", NAMESPACE)
    kubectl("create", "configmap", CONFIGMAP, "-n", NAMESPACE, "--from-literal=k=v")
    kubectl("create", "rolebinding", "bench-view", "-n", NAMESPACE, "--clusterrole=view", "--user=user-a",
            "--user=user-b")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase (seconds)")
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
            results = asyncio.run(run(stack, args.seconds, args.flood, args.rate))
    print(json.dumps(results, indent=2))
    unloaded, loaded = results["unloaded"]["B"], results["loaded"]["B"]
    ratio = loaded["p99_ms"] / unloaded["p99_ms"] if unloaded["p99_ms"] else float("nan")
    print(f"\nB p50/p99 unloaded {unloaded['p50_ms']}/{unloaded['p99_ms']} ms; loaded {loaded['p50_ms']}/"
          f"{loaded['p99_ms']} ms (p99 x{ratio:.2f}); B 429s {loaded['429']}; A 429s {results['loaded']['A']['429']}; "
          f"exempt waited {results['loaded']['exempt_waited']} of {results['loaded']['exempt_dispatched']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
