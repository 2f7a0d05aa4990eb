"""The benchmark report (``make bench``): kapi through Envoy next to raw etcd and Envoy -> a bare handler.

One run, all on 127.0.0.1, bounded in count and time, stops by itself:

1. starts a fresh :class:`kapi.local.launcher.Stack` (two gateways, Envoy) and
   records the startup time; starts a second Envoy in front of a minimal
   aiohttp HTTPS handler (same TLS, same generated config) as the HTTP baseline;
2. raw etcd (the stack's own etcd, grpc.aio): sequential and concurrent get and
   create, range of 100 and 5,000 keys;
3. kapi through Envoy with the admin's client certificate: GET at fixed offered
   loads (open loop; the same loads against the baseline), LIST of 100 and
   5,000 ConfigMaps (resourceVersion "0" and unset), CREATE, UPDATE, PATCH,
   DELETE (sequential and 16-way; CREATE also 64-way), WATCH fan-out (``--watchers``
   watches, each write's delivery latency to each); GET and CREATE also over the
   public gRPC API (``kapi.api.v1``, docs/grpc.md; target "kapi gRPC", one grpc.aio
   channel); GET and CREATE in an open loop at half their best closed-loop rate;
   ``--idle-watches`` watches held open, the stack's idle CPU before and with them;
4. CPU seconds per request of every stack process (utime+stime from
   ``/proc/<pid>/stat`` around each row), memory (RSS) per 10,000 ConfigMaps;
5. writes its section of docs/benchmarks.md (between report-bench markers)
   and PNG plots in docs/bench/ (matplotlib, the ``bench`` extra).

Not a test: numbers depend on the machine. ``--quick`` shrinks every row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from storage import free_port, timed, wait_port  # noqa: E402  (bench/storage.py)

from kapi.local import binaries, envoy  # noqa: E402
from kapi.local.launcher import Stack  # noqa: E402
from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc  # noqa: E402
from services.storage.etcd import EtcdClient, prefix_end  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
PLOTS = ROOT / "docs" / "bench"
BEGIN, END = "<!-- report-bench:begin -->", "<!-- report-bench:end -->"
CLK_TCK = os.sysconf("SC_CLK_TCK")
NS = "bench"

BARE_HANDLER = """
import ssl, sys
from aiohttp import web
async def ok(request):
    if request.path == "/readyz":
        return web.Response(text="ok")
    return web.Response(body=b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}',
                        content_type="application/json")
app = web.Application()
app.router.add_route("*", "/{tail:.*}", ok)
ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), ssl_context=ctx, access_log=None, print=None)
"""


def pct(samples: list[float], q: float) -> float:
    """The ``q`` quantile of ``samples`` (seconds) in milliseconds."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


@dataclass
class Row:
    """One measured operation: latency samples (seconds), wall time, errors, CPU seconds per process."""

    target: str
    operation: str
    samples: list[float]
    seconds: float
    errors: int = 0
    cpu: dict[str, float] = field(default_factory=dict)  # process -> CPU seconds during the row
    offered: float = 0.0  # requests/s (open-loop rows)

    @property
    def throughput(self) -> float:
        """Completed operations per second."""
        return len(self.samples) / self.seconds if self.seconds else 0.0

    def cells(self) -> list[str]:
        """The table cells of this row."""
        per_request = sum(self.cpu.values()) / len(self.samples) * 1000 if self.samples and self.cpu else 0.0
        hottest = max(self.cpu, key=self.cpu.__getitem__) if self.cpu else ""
        share = self.cpu[hottest] / sum(self.cpu.values()) if self.cpu and sum(self.cpu.values()) else 0.0
        return [self.target, self.operation, str(len(self.samples)), f"{pct(self.samples, .5):.2f}",
                f"{pct(self.samples, .9):.2f}", f"{pct(self.samples, .99):.2f}", f"{self.throughput:,.0f}",
                str(self.errors), f"{per_request:.2f}" if self.cpu else "", f"{hottest} {share:.0%}" if hottest else ""]


HEADER = ["target", "operation", "n", "p50 ms", "p90 ms", "p99 ms", "ops/s", "errors", "CPU ms/req (all)",
          "hottest process"]


# ---------------------------------------------------------------------------
# process accounting


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` in seconds (0 if it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` in bytes."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Accounting:
    """CPU seconds of each stack process between :meth:`start` and :meth:`stop`."""

    def __init__(self, stack: Stack) -> None:
        self.pids = {name: p.pid for name, p in stack.processes.items()}
        self._start: dict[str, float] = {}

    def start(self) -> None:
        self._start = {n: cpu_seconds(p) for n, p in self.pids.items()}

    def stop(self) -> dict[str, float]:
        return {n: cpu_seconds(p) - self._start.get(n, 0.0) for n, p in self.pids.items()}

    def rss(self) -> dict[str, int]:
        return {n: rss_bytes(p) for n, p in self.pids.items()}


# ---------------------------------------------------------------------------
# load


class Http:
    """aiohttp session to one HTTPS endpoint as the stack's admin (client certificate)."""

    def __init__(self, url: str, stack: Stack, limit: int = 2000) -> None:
        context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
        self.url = url
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=limit),
                                             timeout=aiohttp.ClientTimeout(total=120))

    async def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                   ok: tuple[int, ...] = (200, 201)) -> bytes:
        data = json.dumps(body).encode() if body is not None else None
        async with self.session.request(method, self.url + path, data=data,
                                        headers={"Content-Type": content_type}) as reply:
            payload = await reply.read()
            if reply.status not in ok:
                raise RuntimeError(f"{method} {path}: {reply.status} {payload[:200]!r}")
            return payload

    async def close(self) -> None:
        await self.session.close()


class Grpc:
    """One grpc.aio channel to Envoy's API port as the admin (client certificate): the public gRPC API."""

    def __init__(self, stack: Stack) -> None:
        import grpc

        pki = stack.pki
        creds = grpc.ssl_channel_credentials(pki.ca_cert.read_bytes(), pki.admin_key.read_bytes(),
                                             pki.admin_cert.read_bytes())
        self.channel = grpc.aio.secure_channel(stack.url.removeprefix("https://"), creds,
                                               options=[("grpc.ssl_target_name_override", "localhost")])
        self.api = api_pb2_grpc.ResourcesStub(self.channel)

    async def get(self, namespace: str, name: str) -> bytes:
        ref = api_pb2.ResourceRef(version="v1", resource="configmaps", namespace=namespace, name=name)
        return (await self.api.Get(api_pb2.GetRequest(ref=ref), timeout=120)).object

    async def create(self, namespace: str, obj: dict[str, Any]) -> bytes:
        ref = api_pb2.ResourceRef(version="v1", resource="configmaps", namespace=namespace)
        return (await self.api.Create(api_pb2.CreateRequest(ref=ref, object=json.dumps(obj).encode()),
                                      timeout=120)).object

    async def close(self) -> None:
        await self.channel.close()


async def measured(target: str, operation: str, op: Callable[[int], Awaitable[object]], count: int,
                   concurrency: int, seconds: float, acct: Accounting | None) -> Row:
    """Closed loop: ``op(i)`` with ``concurrency`` workers, up to ``count`` times or ``seconds``; errors counted."""
    errors = 0

    async def guarded(i: int) -> None:
        nonlocal errors
        try:
            await op(i)
        except Exception:  # noqa: BLE001 - a benchmark counts failures
            errors += 1

    if acct:
        acct.start()
    samples, wall = await timed(guarded, count, concurrency, seconds)
    cpu = acct.stop() if acct else {}
    return Row(target, operation, samples, wall, errors, cpu)


async def open_loop(target: str, operation: str, op: Callable[[int], Awaitable[object]], rate: float,
                    seconds: float, acct: Accounting | None, max_inflight: int = 512) -> Row:
    """Open loop: start ``op`` ``rate`` times per second for ``seconds`` (late starts are not skipped).

    Each latency is measured from the request's scheduled start, so time spent waiting for one of the
    ``max_inflight`` slots counts.
    """
    samples: list[float] = []
    errors = 0
    gate = asyncio.Semaphore(max_inflight)

    async def one(i: int) -> None:
        nonlocal errors
        t0 = start + i / rate  # the scheduled start: waiting for the in-flight gate counts (no coordinated omission)
        async with gate:
            try:
                await op(i)
                samples.append(time.perf_counter() - t0)
            except Exception:  # noqa: BLE001
                errors += 1

    if acct:
        acct.start()
    start = time.perf_counter()
    tasks = []
    n = int(rate * seconds)
    for i in range(n):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.ensure_future(one(i)))
    await asyncio.gather(*tasks)
    wall = time.perf_counter() - start
    row = Row(target, operation, samples, wall, errors, acct.stop() if acct else {}, offered=rate)
    return row


def cm(name: str, i: int = 0) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"key": "value" * 20,
                                                                                         "i": str(i)}}


async def fill(http: Http, ns: str, count: int, prefix: str = "o") -> None:
    """Create ``count`` ConfigMaps in ``ns`` (32-way)."""
    await http.call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}}, ok=(201, 409))
    await timed(lambda i: http.call("POST", f"/api/v1/namespaces/{ns}/configmaps", cm(f"{prefix}{i:05d}", i),
                                    ok=(201, 409)), count, 32, 600)


# ---------------------------------------------------------------------------
# baselines


class Baseline:
    """Envoy (same renderer as the stack's) in front of a minimal aiohttp HTTPS handler."""

    def __init__(self, stack: Stack, tmp: Path) -> None:
        self.stack, self.tmp = stack, tmp
        self.procs: list[subprocess.Popen[bytes]] = []
        self.url = ""

    def start(self) -> None:
        pki = self.stack.pki
        upstream = free_port()
        self.procs.append(subprocess.Popen([sys.executable, "-c", BARE_HANDLER, str(upstream), str(pki.gateway_cert),
                                            str(pki.gateway_key)], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL))
        wait_port(upstream)
        port = free_port()
        tls = envoy.TlsFiles(ca=str(pki.ca_cert), serving_cert=str(pki.apiserver_cert),
                             serving_key=str(pki.apiserver_key), client_cert=str(pki.front_proxy_cert),
                             client_key=str(pki.front_proxy_key))
        config = self.tmp / "baseline-envoy.yaml"
        config.write_text(envoy.dump(envoy.render(gateways=[f"127.0.0.1:{upstream}"], tls=tls, port=port,
                                                  admin_port=0)))
        log = open(self.tmp / "baseline-envoy.log", "wb")  # noqa: SIM115
        self.procs.append(subprocess.Popen([str(binaries.envoy()), *envoy.args(
            str(config), log_level="warning", admin_address_path=str(self.tmp / "baseline-admin"))],
            stdout=log, stderr=subprocess.STDOUT))
        wait_port(port)
        self.url = f"https://127.0.0.1:{port}"
        time.sleep(1.5)  # first active health check marks the upstream healthy

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


async def raw_etcd_rows(address: str, seconds: float, count: int) -> list[Row]:
    """The stack's etcd directly: get/create sequential and 16-way, create 64-way, range of 100 and 5,000 keys."""
    etcd = EtcdClient([address])
    rows: list[Row] = []
    value = json.dumps(cm("x")).encode()
    rows_64 = await measured("etcd", "create (64-way)", lambda i: etcd.create(f"/bench-raw/c64/o{i}".encode(), value),
                             count * 4, 64, seconds, None)
    for conc in (1, 16):
        rows.append(await measured("etcd", f"create ({conc}-way)", lambda i, c=conc: etcd.create(
            f"/bench-raw/c{c}/o{i}".encode(), value), count, conc, seconds, None))
        made = max(1, len(rows[-1].samples))
        rows.append(await measured("etcd", f"get ({conc}-way)", lambda i, c=conc, m=made: etcd.range(
            f"/bench-raw/c{c}/o{i % m}".encode()), count, conc, seconds, None))
    for size in (100, 5000):
        prefix = f"/bench-raw/list{size}/".encode()
        await timed(lambda i, p=prefix: etcd.create(p + f"o{i:05d}".encode(), value), size, 32, 120)
        rows.append(await measured("etcd", f"range {size:,}", lambda i, p=prefix: etcd.range(p, prefix_end(p)),
                                   max(10, count // (10 if size == 100 else 50)), 1, seconds, None))
    rows.append(rows_64)
    await etcd.close()
    return rows


# ---------------------------------------------------------------------------
# kapi


async def watch_fanout(http: Http, watchers: int, events: int, seconds: float, acct: Accounting) -> Row:
    """Delivery latency of ``events`` creates to each of ``watchers`` watches through Envoy."""
    ns = "watched"
    await http.call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}}, ok=(201, 409))
    listing = json.loads(await http.call("GET", f"/api/v1/namespaces/{ns}/configmaps"))
    rv = listing["metadata"]["resourceVersion"]
    received: list[list[float]] = [[] for _ in range(events)]
    started = asyncio.Event()
    opened = 0

    async def consume() -> None:
        nonlocal opened
        url = (f"{http.url}/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}"
               f"&timeoutSeconds={int(seconds) + 60}")
        while True:  # as client-go: a watch refused with 429 (APF: too many starting at once) is retried
            reply = await http.session.get(url)
            if reply.status == 200:
                break
            retry = float(reply.headers.get("Retry-After") or 1)
            reply.release()
            await asyncio.sleep(retry * random.random())
        async with reply:
            opened += 1
            if opened == watchers:
                started.set()
            got = 0
            async for line in reply.content:
                now = time.perf_counter()
                event = json.loads(line)
                name = event["object"]["metadata"]["name"]
                if event["type"] == "ADDED" and name.startswith("e"):
                    received[int(name[1:])].append(now)
                    got += 1
                    if got >= events:
                        return

    consumers = [asyncio.ensure_future(consume()) for _ in range(watchers)]
    try:
        await asyncio.wait_for(started.wait(), 120)
    except TimeoutError:
        pass
    await asyncio.sleep(1.0)
    acct.start()
    sent: list[float] = []
    t0 = time.perf_counter()
    for i in range(events):
        sent.append(time.perf_counter())
        await http.call("POST", f"/api/v1/namespaces/{ns}/configmaps", cm(f"e{i}", i))
        await asyncio.sleep(0.1)
    await asyncio.wait(consumers, timeout=seconds + 20)
    wall = time.perf_counter() - t0
    cpu = acct.stop()
    for c in consumers:
        c.cancel()
    samples = [t - sent[i] for i in range(events) for t in received[i]]
    missing = watchers * events - len(samples)
    return Row("kapi", f"watch: {events} creates -> {opened:,} watchers (delivery)", samples, wall, missing, cpu)


@dataclass
class Extra:
    """Issue 16's other measurements: open loops at half the best closed-loop rate, idle watches' CPU."""

    half_load: list[Row] = field(default_factory=list)
    idle_watches: int = 0
    idle_cores_before: float = 0.0  # the stack's cores while idle, before the watches were opened
    idle_cores_with: float = 0.0  # the same with ``idle_watches`` watches held open
    idle_open_seconds: float = 0.0  # wall time to open them
    idle_rss_per_watch: dict[str, float] = field(default_factory=dict)  # bytes per watch by process


async def idle_watches(stack: Stack, acct: Accounting, count: int, seconds: float, extra: Extra) -> None:
    """Hold ``count`` watches without bookmarks on one quiet namespace; stack cores idle before vs with them."""
    ns = "idle-watched"
    http = Http(stack.url, stack, limit=count + 16)
    try:
        await http.call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}}, ok=(201, 409))
        acct.start()
        await asyncio.sleep(seconds)
        extra.idle_cores_before = sum(acct.stop().values()) / seconds
        rss_before = acct.rss()
        url = f"{http.url}/api/v1/namespaces/{ns}/configmaps?watch=1&timeoutSeconds={int(seconds) * 4 + 120}"
        replies: list[aiohttp.ClientResponse] = []
        t0 = time.perf_counter()

        async def open_one() -> None:
            for _ in range(20):  # as client-go: a watch refused with 429 (too many starting at once) is retried
                reply = await http.session.get(url)
                if reply.status == 200:
                    replies.append(reply)
                    return
                retry = float(reply.headers.get("Retry-After") or 1)
                reply.release()
                await asyncio.sleep(retry * random.random())

        await asyncio.gather(*(open_one() for _ in range(count)), return_exceptions=True)
        extra.idle_open_seconds = time.perf_counter() - t0
        extra.idle_watches = len(replies)
        await asyncio.sleep(2.0)  # settled
        acct.start()
        await asyncio.sleep(seconds)
        extra.idle_cores_with = sum(acct.stop().values()) / seconds
        rss = acct.rss()
        extra.idle_rss_per_watch = {n: (rss[n] - rss_before.get(n, 0)) / max(1, len(replies)) for n in rss}
        for reply in replies:
            reply.close()
    finally:
        await http.close()


async def kapi_rows(stack: Stack, baseline: Baseline, args: argparse.Namespace
                    ) -> tuple[list[Row], list[Row], dict[str, int], Extra]:
    """(table rows, GET offered-load rows for the plot, RSS bytes per 10,000 objects per process, Extra)."""
    acct = Accounting(stack)
    http = Http(stack.url, stack)
    base = Http(baseline.url, stack)
    rpc = Grpc(stack)
    rows: list[Row] = []
    seconds, count = args.seconds, args.count
    p = f"/api/v1/namespaces/{NS}/configmaps"
    rss_before = acct.rss()
    await fill(http, NS, 1)
    # memory per 10,000 objects: 100 + 5,000 listed below + the rest in a third namespace
    await fill(http, "list100", 100)
    await fill(http, "list5000", 5000)
    await fill(http, "filler", max(0, args.objects - 5100))
    await asyncio.sleep(2)
    rss_after = acct.rss()
    per_10k = {n: int((rss_after[n] - rss_before.get(n, 0)) * 10_000 / max(1, args.objects)) for n in rss_after}

    load_rows: list[Row] = []
    for rate in args.rates:
        load_rows.append(await open_loop("kapi", "GET", lambda i: http.call("GET", f"{p}/o00000"), rate,
                                         args.load_seconds, acct))
        load_rows.append(await open_loop("envoy+bare", "GET", lambda i: base.call("GET", f"{p}/o00000"), rate,
                                         args.load_seconds, None))
    for conc in (1, 16):
        rows.append(await measured("envoy+bare", f"GET ({conc}-way)", lambda i: base.call("GET", f"{p}/o00000"),
                                   count * (4 if conc > 1 else 1), conc, seconds, None))
        rows.append(await measured("kapi", f"GET ({conc}-way)", lambda i: http.call("GET", f"{p}/o00000"),
                                   count * (4 if conc > 1 else 1), conc, seconds, acct))
        rows.append(await measured("kapi gRPC", f"GET ({conc}-way)", lambda i: rpc.get(NS, "o00000"),
                                   count * (4 if conc > 1 else 1), conc, seconds, acct))
    for size in (100, 5000):
        reps = max(10, count // (10 if size == 100 else 50))
        for rv in ("0", ""):
            query = f"?resourceVersion={rv}" if rv else ""
            rows.append(await measured("kapi", f"LIST {size:,} (rv={rv or 'unset'})", lambda i, s=size, q=query:
                                       http.call("GET", f"/api/v1/namespaces/list{s}/configmaps{q}"), reps, 1,
                                       seconds, acct))
    for conc in (1, 16, 64):
        n = count * (4 if conc > 1 else 1)
        tag = f"w{conc}-"
        if conc == 64:  # only the create (issue 16's write-throughput target is CREATE at 64-way)
            rows.append(await measured("kapi", "CREATE (64-way)", lambda i, t=tag: http.call(
                "POST", p, cm(f"{t}{i}", i)), n, conc, seconds, acct))
            continue
        rows.append(await measured("kapi", f"CREATE ({conc}-way)", lambda i, t=tag: http.call(
            "POST", p, cm(f"{t}{i}", i)), n, conc, seconds, acct))
        made = len(rows[-1].samples)
        rows.append(await measured("kapi", f"UPDATE ({conc}-way)", lambda i, t=tag, m=made: http.call(
            "PUT", f"{p}/{t}{i % m}", cm(f"{t}{i % m}", i + 1)), min(n, made), conc, seconds, acct))
        rows.append(await measured("kapi", f"PATCH ({conc}-way)", lambda i, t=tag, m=made: http.call(
            "PATCH", f"{p}/{t}{i % m}", {"data": {"patched": str(i)}}, "application/merge-patch+json"),
            min(n, made), conc, seconds, acct))
        rows.append(await measured("kapi", f"DELETE ({conc}-way)", lambda i, t=tag: http.call(
            "DELETE", f"{p}/{t}{i}"), made, conc, seconds, acct))
        rows.append(await measured("kapi gRPC", f"CREATE ({conc}-way)", lambda i, t=f"g{conc}-": rpc.create(
            NS, cm(f"{t}{i}", i)), n, conc, seconds, acct))
    rows.append(await watch_fanout(http, args.watchers, args.events, seconds, acct))
    extra = Extra()
    # Open loop at half the best closed-loop rate (GET, CREATE), latency from each request's scheduled start.
    best_get = max(r.throughput for r in rows if r.target == "kapi" and r.operation.startswith("GET ("))
    best_create = max(r.throughput for r in rows if r.target == "kapi" and r.operation.startswith("CREATE ("))
    extra.half_load.append(await open_loop("kapi", "GET", lambda i: http.call("GET", f"{p}/o00000"), best_get / 2,
                                           args.load_seconds * 2, acct))
    extra.half_load.append(await open_loop("kapi", "CREATE", lambda i: http.call("POST", p, cm(f"h{i}", i)),
                                           best_create / 2, args.load_seconds * 2, acct))
    await http.close()
    await base.close()
    await rpc.close()
    if args.idle_watches:
        await idle_watches(stack, acct, args.idle_watches, args.idle_seconds, extra)
    return rows, load_rows, per_10k, extra


# ---------------------------------------------------------------------------
# report


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def plots(load_rows: list[Row], rows: list[Row]) -> list[str]:
    """Write the PNGs; returns their paths relative to docs/ ([] without matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing (pip install -e '.[bench]'): no plots", file=sys.stderr)
        return []
    PLOTS.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    for target, style in (("kapi", "o-"), ("envoy+bare", "s--")):
        mine = [r for r in load_rows if r.target == target]
        rates = [r.offered for r in mine]
        ax.plot(rates, [pct(r.samples, .5) for r in mine], style, label=f"{target} p50")
        ax.plot(rates, [pct(r.samples, .99) for r in mine], style, alpha=0.5, label=f"{target} p99")
    ax.set_xlabel("offered load (GET requests/s)")
    ax.set_ylabel("latency (ms)")
    ax.set_yscale("log")
    ax.set_title("GET one ConfigMap through Envoy: latency vs offered load")
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(PLOTS / "latency_vs_load.png", dpi=100)
    plt.close(fig)

    kapi = [r for r in rows if r.target == "kapi" and r.cpu and sum(r.cpu.values()) > 0 and r.samples]
    names = sorted({n for r in kapi for n in r.cpu}, key=lambda n: -sum(r.cpu.get(n, 0) for r in kapi))
    fig, ax = plt.subplots(figsize=(9, 5))
    bottom = [0.0] * len(kapi)
    for name in names:
        values = [100 * r.cpu.get(name, 0.0) / sum(r.cpu.values()) for r in kapi]
        ax.bar(range(len(kapi)), values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    labels = [f"{r.operation}\n{sum(r.cpu.values()) / len(r.samples) * 1000:.1f} ms/req" for r in kapi]
    ax.set_xticks(range(len(kapi)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("share of the stack's CPU (%)")
    ax.set_title("CPU share per process (label: total CPU ms per request)")
    ax.legend(fontsize=7, ncol=1, bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    fig.savefig(PLOTS / "cpu_share.png", dpi=100)
    plt.close(fig)
    return ["bench/latency_vs_load.png", "bench/cpu_share.png"]


def write_doc(text: str) -> None:
    body = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    section = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in body and END in body:
        body = body[:body.index(BEGIN)] + section + body[body.index(END) + len(END):]
    else:
        body = body.rstrip() + "\n\n## The whole stack (`make bench`)\n\n" + section + "\n"
    DOC.write_text(body)


HOPS = ("envoy", "gateways", "authn", "flowcontrol", "authz", "admission", "storage", "etcd", "controllers")


def hop_table(rows: list[Row]) -> str:
    """Per-hop CPU (us per request) of every kapi row that was accounted: the issue-16 table of docs/benchmarks.md."""
    body = []
    for r in rows:
        if not r.cpu or not r.samples:
            continue
        per_hop: dict[str, float] = {}
        for process, seconds in r.cpu.items():
            hop = process.rsplit("-", 1)[0]
            hop = {"gateway": "gateways"}.get(hop, hop)
            per_hop[hop] = per_hop.get(hop, 0.0) + seconds
        n = len(r.samples)
        body.append([f"{r.target} {r.operation}", *(f"{per_hop.get(h, 0.0) / n * 1e6:,.0f}" for h in HOPS),
                     f"{sum(per_hop.values()) / n * 1e6:,.0f}"])
    return table(["row", *HOPS, "all"], body)


def render(startup: float, etcd_rows: list[Row], rows: list[Row], load_rows: list[Row], per_10k: dict[str, int],
           images: list[str], args: argparse.Namespace, extra: Extra | None = None) -> str:
    out = [f"Measured by `make bench` ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs; stack, load generator "
           f"and baselines share the machine). Stack: etcd, one storage, authn, authz, flowcontrol, admission, "
           f"two gateways, Envoy; requests as the admin (client certificate) through Envoy over HTTPS/1.1.",
           "", f"**Startup** (fresh state directory to `/readyz` through Envoy): {startup:.1f} s.", "",
           "Raw etcd (the stack's etcd, grpc.aio, no kapi hop) and Envoy -> a bare aiohttp handler are the "
           "baselines. CPU ms/req sums utime+stime of every stack process over the row divided by the requests; "
           "the hottest process and its share of that CPU are named.", "",
           table(HEADER, [r.cells() for r in etcd_rows + rows]), "",
           "**GET at fixed offered loads** (open loop, "
           f"{args.load_seconds:.0f} s per load):", ""]
    load_table = []
    for r in load_rows:
        load_table.append([r.target, f"{r.offered:.0f}", f"{r.throughput:,.0f}", f"{pct(r.samples, .5):.2f}",
                           f"{pct(r.samples, .9):.2f}", f"{pct(r.samples, .99):.2f}", str(r.errors)])
    out += [table(["target", "offered req/s", "served req/s", "p50 ms", "p90 ms", "p99 ms", "errors"], load_table), ""]
    if extra is not None and extra.half_load:
        half = [[r.operation, f"{r.offered:.0f}", f"{r.throughput:,.0f}", f"{pct(r.samples, .5):.2f}",
                 f"{pct(r.samples, .9):.2f}", f"{pct(r.samples, .99):.2f}", str(r.errors)] for r in extra.half_load]
        out += ["**Open loop at half the best closed-loop rate** (latency from each request's scheduled start, "
                f"{args.load_seconds * 2:.0f} s each):", "",
                table(["operation", "offered req/s", "served req/s", "p50 ms", "p90 ms", "p99 ms", "errors"], half),
                ""]
    if extra is not None and extra.idle_watches:
        grown = ", ".join(f"{n} {v / 1024:.1f}" for n, v in sorted(extra.idle_rss_per_watch.items(),
                                                                   key=lambda kv: -kv[1])[:4])
        out += [f"**Idle watches**: {extra.idle_watches:,} watches held open on a quiet namespace (opened in "
                f"{extra.idle_open_seconds:.1f} s): the stack used {extra.idle_cores_with:.3f} cores over "
                f"{args.idle_seconds:.0f} s with them against {extra.idle_cores_before:.3f} before they were "
                f"opened; RSS KiB per watch: {grown}.", ""]
    out += ["**CPU per request by hop** (us of utime+stime per request of each stack process over the row; the "
            "gateways and storage replicas summed; the load generator is not counted):", "", hop_table(rows), ""]
    mem = [[n, f"{v / 2**20:.1f}"] for n, v in sorted(per_10k.items(), key=lambda kv: -kv[1])]
    out += [f"**Memory per 10,000 ConfigMaps** (RSS growth while {args.objects:,} ConfigMaps of ~150 bytes of data "
            "were created, scaled to 10,000):", "", table(["process", "MiB per 10,000 objects"], mem), ""]
    out += [f"![{Path(i).stem}]({i})" for i in images]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="time limit per closed-loop row")
    parser.add_argument("--count", type=int, default=400, help="requests per sequential row (x4 when 16-way)")
    parser.add_argument("--rates", type=float, nargs="+", default=[50, 100, 200, 400, 800],
                        help="offered GET loads (requests/s)")
    parser.add_argument("--load-seconds", type=float, default=4.0, help="seconds per offered load")
    parser.add_argument("--objects", type=int, default=10_000, help="ConfigMaps created (memory per 10,000)")
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--events", type=int, default=20)
    parser.add_argument("--idle-watches", type=int, default=5000, help="idle watches held open (0: skip)")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="idle CPU measured this long, before/with")
    parser.add_argument("--quick", action="store_true", help="small numbers everywhere (a smoke run)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.count, args.rates, args.load_seconds = 2.0, 40, [50, 200], 1.0
        args.objects, args.watchers, args.events = 5200, 50, 5
        args.idle_watches, args.idle_seconds = 100, 2.0
    with tempfile.TemporaryDirectory(prefix="kapi-bench-report-") as tmp:
        stack = Stack(Path(tmp) / "state", port=0, gateways=2, log_level="WARNING")
        t0 = time.monotonic()
        stack.start()
        startup = time.monotonic() - t0
        baseline = Baseline(stack, Path(tmp))
        try:
            baseline.start()
            etcd_rows = asyncio.run(raw_etcd_rows(stack.addresses["etcd"], args.seconds, args.count))
            rows, load_rows, per_10k, extra = asyncio.run(kapi_rows(stack, baseline, args))
        finally:
            baseline.stop()
            stack.stop()
    images = [] if args.no_write else plots(load_rows, rows)
    text = render(startup, etcd_rows, rows, load_rows, per_10k, images, args, extra)
    print(text)
    if not args.no_write:
        write_doc(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
