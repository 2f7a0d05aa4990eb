"""Startup benchmark: N test clusters started from nothing, one after another (``python bench/startup.py -n 5``).

Each start is what the pytest plugin's ``kapi_cluster`` does: a fresh
temporary state directory (so the PKI is generated, etcd initialised and the
default objects created every time), :func:`kapi.testing.start` until
``/readyz`` answers through Envoy and the reset snapshot is taken, then a full
stop. Prints each start's time, then min/median/max in seconds, plus the
load average (the machine is shared: the numbers are only as quiet as it is)
and the CPU seconds the stack's processes used until ready, which the load
does not change (on N idle cores a start cannot take less than CPU / N).
``--phases`` prints, for the last start, when each process was started and
became ready (the launcher's own lines), to see what the time goes to.
Not a test: numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kapi import testing  # noqa: E402


def cpu_seconds(pids: Iterable[int]) -> float:
    """utime + stime (seconds) of the processes ``pids`` so far, from /proc (0 for one that is gone)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def main() -> int:
    """Run the starts; returns 0, or 1 if a start failed (its error printed)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-n", type=int, default=5, help="Number of starts.")
    parser.add_argument("--flag", action="append", default=[], help="A `kapi up` flag (repeatable).")
    parser.add_argument("--phases", action="store_true", help="Print the last start's timeline.")
    args = parser.parse_args()
    t0 = [0.0]
    lines: list[str] = []

    class Timeline(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(f"{time.monotonic() - t0[0]:6.2f}s  {record.getMessage()}")

    logger = logging.getLogger("kapi.testing")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Timeline())
    times: list[float] = []
    cpus: list[float] = []
    for i in range(args.n):
        state = Path(tempfile.mkdtemp(prefix="kapi-bench-startup-"))
        lines.clear()
        t0[0] = time.monotonic()
        try:
            c = testing.start(args.flag, state)
        except Exception as exc:  # noqa: BLE001 - reported, then the run fails
            print(f"start {i + 1}: failed: {exc}", file=sys.stderr)
            shutil.rmtree(state, ignore_errors=True)
            return 1
        elapsed = time.monotonic() - t0[0]
        lines.append(f"{elapsed:6.2f}s  ready (snapshot taken)")
        used = cpu_seconds(c.processes.values())
        c.stop()
        shutil.rmtree(state, ignore_errors=True)
        times.append(elapsed)
        cpus.append(used)
        print(f"start {i + 1}: {elapsed:.2f} s ({used:.1f} CPU s in the stack's processes)", flush=True)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{len(times)} starts on {os.cpu_count()} CPUs (load average {load}): min {min(times):.2f} s, "
          f"median {statistics.median(times):.2f} s, max {max(times):.2f} s; "
          f"CPU of the stack's processes at ready: median {statistics.median(cpus):.1f} s")
    if args.phases:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
