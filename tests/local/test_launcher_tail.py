"""The launcher's log tail (kapi/local/launcher.py ``tail``): the file's last lines as they are at the exit."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from kapi.local import launcher


def test_tail_is_the_last_lines_of_a_log_far_larger_than_one_block(tmp_path: Path) -> None:
    log = tmp_path / "gateway-1.log"
    startup = "".join(f"startup line {i}\n" for i in range(50))
    later = "".join(f"request log line {i} " + "x" * 200 + "\n" for i in range(40_000))  # ~8 MiB
    log.write_text(startup + later + "\n==> 2026-12-03 15:00:00 exited with code -9\n")
    got = launcher.tail(log, 5).split("\n")
    assert got == [f"request log line {i} " + "x" * 200 for i in (39_997, 39_998, 39_999)] + [
        "", "==> 2026-12-03 15:00:00 exited with code -9"]


def test_tail_only_splits_at_newlines_and_counts_an_unterminated_last_line(tmp_path: Path) -> None:
    log = tmp_path / "p.log"
    log.write_bytes(b"one\r\ntwo \x1c three \x0c four\nfive\xff\nsix")
    assert launcher.tail(log, 3) == "two \x1c three \x0c four\nfive\ufffd\nsix"
    assert launcher.tail(log, 10) == "one\ntwo \x1c three \x0c four\nfive\ufffd\nsix"
    assert launcher.tail(log, 0) == ""
    assert launcher.tail(tmp_path / "absent.log", 5) == ""


def test_tail_keeps_a_line_longer_than_a_block_whole(tmp_path: Path) -> None:
    log = tmp_path / "p.log"
    long = "y" * (3 * launcher.TAIL_BLOCK_BYTES + 17)
    log.write_text(f"old\n{long}\nlast\n")
    assert launcher.tail(log, 2) == f"{long}\nlast"


def test_exit_report_shows_what_a_killed_process_wrote_last(tmp_path: Path) -> None:
    """A process that logged for a while and was SIGKILLed: the supervisor's report ends with its latest
    lines and the exit line, not with what it wrote at startup."""
    echoed: list[str] = []
    stack = launcher.Stack(tmp_path / "state", echo=echoed.append, restart_policy="no")
    log_path = stack.log_path("gateway-1")
    script = ("import sys, time\n"
              "print('startup line', flush=True)\n"
              "sys.stdout.write(''.join(f'serving line {i}\\n' for i in range(5000))); sys.stdout.flush()\n"
              "print('latest line', flush=True)\n"
              "time.sleep(60)\n")
    proc = launcher.Process("gateway-1", 3, lambda _listen: [sys.executable, "-c", script], log_path)
    stack._add(proc)
    stack._spawn(proc, "127.0.0.1:0")
    assert proc.popen is not None
    deadline = time.monotonic() + 20
    while "\nlatest line\n" not in log_path.read_text():
        assert time.monotonic() < deadline, log_path.read_text()[-500:]
        time.sleep(0.05)
    os.kill(proc.popen.pid, signal.SIGKILL)
    proc.popen.wait(10)
    stack.supervise_once()
    report = [line for line in echoed if "last lines of its log" in line]
    assert len(report) == 1, echoed
    head, _, shown = report[0].partition("; last lines of its log:\n")
    assert head == "gateway-1 exited with code -9 (not restarted)", head
    lines = shown.split("\n")
    assert len(lines) == 20 and "startup line" not in shown, shown
    assert lines[-4:-2] == ["serving line 4999", "latest line"], lines
    assert lines[-2] == "" and lines[-1].startswith("==> ") and lines[-1].endswith(
        " exited with code -9 (not restarted)"), lines
    assert shown == launcher.tail(log_path, 20)
