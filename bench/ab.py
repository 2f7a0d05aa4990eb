"""Interleaved A/B of two checkouts: CPU per request of every stack process, both stacks up at once.

Sequential runs of one stack at a time differ by more than most changes on a
shared 2-core machine (the load of other work moves every number), so this
starts a stack from each checkout (kapi.local.launcher.Stack, 127.0.0.1,
two gateways), then loads them in alternating slices (A B, B A, A B, ...)
with the same closed loop, and prints per checkout: requests, requests/s,
latency p50/p99 (ms) and the CPU microseconds per request of each process
(utime + stime over the slices divided by the requests served).

Operations: ``get`` (one ConfigMap, 16-way), ``create`` (new ConfigMaps,
16-way), ``list`` (100 ConfigMaps, resourceVersion=0, 4-way). Make the base
checkout with ``git worktree add /tmp/kapi-base <commit>`` (and remove it with
``git worktree remove`` afterwards). Every slice is bounded in time; the
stacks stop at the end.

    python bench/ab.py BASE_CHECKOUT NEW_CHECKOUT [--op get] [--slices 8] [--seconds 2.5] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import report  # noqa: E402  (bench/report.py)

from kapi.local import launcher  # noqa: E402

NAMESPACE = "abbench"


def operation(op: str, http: report.Http, names: itertools.count[int]) -> Callable[[int], Awaitable[object]]:
    """The request one worker sends: ``op`` is get, create or list."""
    if op == "get":
        return lambda i: http.call("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps/o00000")
    if op == "list":
        return lambda i: http.call("GET", f"/api/v1/namespaces/{NAMESPACE}/configmaps?resourceVersion=0")
    return lambda i: http.call("POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps", report.cm(f"n{next(names)}"))


async def run(stacks: dict[str, launcher.Stack], op: str, slices: int, seconds: float, concurrency: int
              ) -> dict[str, report.Row]:
    """Warm each stack, then alternate slices; per checkout one Row: every slice's samples, seconds and CPU."""
    http = {tag: report.Http(s.url, s) for tag, s in stacks.items()}
    acct = {tag: report.Accounting(s) for tag, s in stacks.items()}
    names = itertools.count()
    try:
        for tag in stacks:
            await report.fill(http[tag], NAMESPACE, 100 if op == "list" else 1)
            await report.measured("kapi", "warm", operation(op, http[tag], names), 10**7, concurrency, 3, None)
        cpu: dict[str, collections.Counter[str]] = {tag: collections.Counter() for tag in stacks}
        samples: dict[str, list[float]] = {tag: [] for tag in stacks}
        wall: dict[str, float] = dict.fromkeys(stacks, 0.0)
        tags = list(stacks)
        for k in range(slices):
            for tag in (tags if k % 2 == 0 else tags[::-1]):
                row = await report.measured("kapi", op, operation(op, http[tag], names), 10**7, concurrency, seconds,
                                            acct[tag])
                cpu[tag].update(row.cpu)  # type: ignore[arg-type]
                samples[tag].extend(row.samples)
                wall[tag] += row.seconds
        return {tag: report.Row("kapi", op, samples[tag], wall[tag], 0, dict(cpu[tag])) for tag in stacks}
    finally:
        for h in http.values():
            await h.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="the base checkout (a git worktree)")
    parser.add_argument("new", help="the checkout with the change")
    parser.add_argument("--op", choices=("get", "create", "list"), default="get")
    parser.add_argument("--slices", type=int, default=8, help="slices per checkout")
    parser.add_argument("--seconds", type=float, default=2.5, help="length of one slice")
    parser.add_argument("--concurrency", type=int, default=0, help="closed-loop workers (default 16; list 4)")
    args = parser.parse_args(argv)
    concurrency = args.concurrency or (4 if args.op == "list" else 16)
    stacks: dict[str, launcher.Stack] = {}
    with tempfile.TemporaryDirectory(prefix="kapi-ab-") as tmp:
        try:
            for tag, checkout in (("base", args.base), ("new", args.new)):
                launcher._REPO_ROOT = str(Path(checkout).resolve())  # the services run from that checkout
                stack = launcher.Stack(Path(tmp) / tag, port=0, gateways=2, log_level="WARNING")
                stacks[tag] = stack
                stack.start()
            results = asyncio.run(run(stacks, args.op, args.slices, args.seconds, concurrency))
        finally:
            for stack in stacks.values():
                stack.stop()
    print(f"{args.op} {concurrency}-way, {args.slices} x {args.seconds} s slices per checkout, "
          f"load average {os.getloadavg()[0]:.1f}")
    for tag, row in results.items():
        n = max(1, len(row.samples))
        per = {name: round(v / n * 1e6) for name, v in sorted(row.cpu.items(), key=lambda kv: -kv[1])
               if v / n * 1e6 >= 1}
        print(f"{tag}: n={len(row.samples)} {row.throughput:.0f} req/s p50 {report.pct(row.samples, .5):.2f} ms "
              f"p99 {report.pct(row.samples, .99):.2f} ms CPU/req {sum(row.cpu.values()) / n * 1e3:.3f} ms "
              f"us/req by process {per}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
