"""Launched children die with the launcher, without Popen(preexec_fn=...) (unsafe in threaded parents)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from kapi.launcher import die_with_parent


def _alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()


def test_child_gets_sigterm_when_its_parent_dies(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    # A middle process starts a sleeping grandchild through die_with_parent, then exits.
    middle = (
        "import subprocess, sys\n"
        "from kapi.launcher import die_with_parent\n"
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
