"""Launched children die with the launcher, without Popen(preexec_fn=...) (unsafe in threaded parents)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from kapi.local.launcher import die_with_parent


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def test_child_gets_sigterm_when_its_parent_dies(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # A middle process starts a sleeping grandchild through die_with_parent, then exits.
    middle = (
        "import subprocess, sys\n"
        "from kapi.local.launcher import die_with_parent\n"
        f"p = subprocess.Popen(die_with_parent([{sys.executable!r}, '-c', 'import time; time.sleep(60)']))\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "import time; time.sleep(0.5)\n"
    )
    subprocess.run([sys.executable, "-c", middle], check=True, timeout=30)
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_wrapped_command_runs_normally() -> None:
    out = subprocess.run(die_with_parent([sys.executable, "-c", "print('hello')"]), capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0 and out.stdout == "hello\n"


# A parent that starts a Stack's processes from short-lived threads (the first start and a supervisor restart),
# then sleeps: PR_SET_PDEATHSIG is tied to the forking thread, so before the launcher forked every child from
# one long-lived thread these children got SIGTERM as soon as their thread returned.
_THREADED_PARENT = """
import os, signal, sys, threading, time
from pathlib import Path
from kapi.local.launcher import Process, Stack

state = Path(sys.argv[1])
stack = Stack(state)
p = stack._add(Process("authz", 2, lambda _l: [sys.executable, "-c", "import time; time.sleep(120)"],
                       state / "authz.log"))

def in_a_thread(fn):
    # The thread outlives the child's prctl (as restart_process does, waiting for readiness), then returns.
    t = threading.Thread(target=lambda: (fn(), time.sleep(0.5)))
    t.start()
    t.join()

in_a_thread(lambda: stack._spawn(p, ""))
first = p.popen
time.sleep(0.5)  # the thread is gone; its child must still run
(state / "first").write_text(f"{first.pid} {first.poll()}")
os.kill(first.pid, signal.SIGKILL)
first.wait()
in_a_thread(lambda: stack.supervise_once(time.monotonic()))  # notices the crash
in_a_thread(lambda: stack.supervise_once(time.monotonic() + 60))  # restarts it from another short thread
time.sleep(0.5)
(state / "restarted").write_text(f"{p.popen.pid} {p.popen.poll()}")
time.sleep(120)
"""


def test_children_started_from_short_lived_threads_live_until_the_parent_dies(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", _THREADED_PARENT, str(tmp_path)])
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "restarted").exists() and parent.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        first_pid, first_status = (tmp_path / "first").read_text().split()
        assert first_status == "None", "the first child died when the thread that started it exited"
        pid, status = (tmp_path / "restarted").read_text().split()
        assert status == "None" and _alive(int(pid)), "the restarted child died with the supervisor's thread"
        assert int(pid) != int(first_pid)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 5
    while _alive(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(int(pid)), "the child outlived its parent process"
