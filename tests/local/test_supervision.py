"""The launcher's supervisor: restart on failure with backoff, processes stopped on purpose stay down.

Driven with sleeping stand-in processes and an injected clock (Stack.supervise_once(now=...)); the whole stack
under the real supervisor thread is tests/local/test_supervised_stack.py.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml

from kapi.local import launcher
from kapi.local.launcher import Process, Stack


@pytest.mark.parametrize(("failures", "delay"), [
    (0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (5, 16.0), (6, 30.0), (7, 30.0), (100, 30.0),
])
def test_restart_delay_doubles_from_half_a_second_to_thirty(failures: int, delay: float) -> None:
    assert launcher.restart_delay(failures) == delay


def stand_in(tmp_path: Path, name: str, code: str = "import time; time.sleep(600)") -> Process:
    """A supervised process running ``code`` (on the address 127.0.0.1:1, as a restarted service keeps it)."""
    p = Process(name, 2, lambda _listen: [sys.executable, "-c", code], tmp_path / "logs" / f"{name}.log")
    p.address = "127.0.0.1:1"
    return p


def started(tmp_path: Path, policy: str = "on-failure", code: str = "import time; time.sleep(600)"
            ) -> tuple[Stack, Process, list[str]]:
    echoed: list[str] = []
    stack = Stack(tmp_path, restart_policy=policy, echo=echoed.append)
    p = stack._add(stand_in(tmp_path, "authz", code))
    stack._spawn(p, p.address)
    return stack, p, echoed


def crash(p: Process) -> int:
    """SIGKILL ``p`` from outside (as the OOM killer would) and wait for it; returns the old PID."""
    assert p.popen is not None
    pid = p.popen.pid
    os.kill(pid, signal.SIGKILL)
    while p.popen.poll() is None:
        time.sleep(0.01)
    return pid


def test_a_crash_is_restarted_after_the_backoff_and_logged(tmp_path: Path) -> None:
    stack, p, echoed = started(tmp_path)
    try:
        now = p.started_at + 5
        old = crash(p)
        stack.supervise_once(now)
        assert p.restart_at == now + 0.5 and p.popen is not None and p.popen.pid == old
        assert echoed[-1].startswith("authz exited with code -9 after 5.0s; restarting in 0.5s; last lines of its log")
        stack.supervise_once(now + 0.4)
        assert p.popen.pid == old  # not yet
        stack.supervise_once(now + 0.5)
        assert p.popen.pid != old and p.alive() and p.restarts == 1 and p.restart_at is None
        assert echoed[-1] == f"restarted authz (pid {p.popen.pid}, restart 1) on 127.0.0.1:1"
        log = p.log_path.read_text()
        assert "exited with code -9 after 5.0s; restarting in 0.5s" in log
        assert "starting (restart 1): " in log
        # Failing again at once doubles the delay; a process that stayed up 60 s starts over at 0.5 s.
        crash(p)
        stack.supervise_once(p.started_at + 1)
        assert p.restart_at == p.started_at + 1 + 1.0
        stack.supervise_once(p.started_at + 2)
        assert p.restarts == 2
        crash(p)
        stack.supervise_once(p.started_at + 61)
        assert p.restart_at == p.started_at + 61 + 0.5
    finally:
        stack.stop()


def test_a_clean_exit_is_not_restarted_on_failure(tmp_path: Path) -> None:
    stack, p, echoed = started(tmp_path, code="pass")
    try:
        assert p.popen is not None
        p.popen.wait(30)
        stack.supervise_once(p.started_at + 100)
        stack.supervise_once(p.started_at + 200)
        assert p.restarts == 0 and p.restart_at is None
        assert [e for e in echoed if "exited" in e] == [
            f"authz exited with code 0 (not restarted); last lines of its log:\n{launcher.tail(p.log_path, 20)}"]
    finally:
        stack.stop()


def test_policy_no_only_reports_as_before(tmp_path: Path) -> None:
    stack, p, echoed = started(tmp_path, policy="no")
    try:
        old = crash(p)
        stack.supervise_once(p.started_at + 100)
        stack.supervise_once(p.started_at + 200)
        assert p.popen is not None and p.popen.pid == old and p.restarts == 0
        assert [e for e in echoed if "exited" in e] == [
            f"authz exited with code -9 (not restarted); last lines of its log:\n{launcher.tail(p.log_path, 20)}"]
    finally:
        stack.stop()


def test_killed_or_terminated_on_purpose_stays_down(tmp_path: Path) -> None:
    stack, p, echoed = started(tmp_path)
    try:
        stack.kill_process("authz")
        assert p.held
        stack.supervise_once(p.started_at + 100)
        assert not p.alive() and p.restarts == 0 and not any("exited" in e for e in echoed)
        # Unheld by a restart (restart_process's spawn), then terminated on purpose: down again.
        p.held = False
        stack._spawn(p, p.address)
        assert stack.terminate_process("authz") is not None
        stack.supervise_once(p.started_at + 100)
        assert not p.alive() and p.restarts == 0
    finally:
        stack.stop()


def test_a_pending_restart_is_cancelled_by_kill_process_and_by_stop(tmp_path: Path) -> None:
    stack, p, _ = started(tmp_path)
    crash(p)
    stack.supervise_once(p.started_at)
    assert p.restart_at is not None
    stack.kill_process("authz")
    assert p.restart_at is None
    p.held = False
    stack._spawn(p, p.address)
    crash(p)
    stack.supervise_once(p.started_at)
    stack.stop()
    stack.supervise_once(p.started_at + 100)  # after stop: nothing starts
    assert not p.alive() and p.restarts == 0


def test_the_supervisor_thread_restarts_on_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launcher, "SUPERVISE_INTERVAL_SECONDS", 0.05)
    monkeypatch.setattr(launcher, "RESTART_BACKOFF_SECONDS", 0.05)
    stack, p, _ = started(tmp_path)
    try:
        monkeypatch.setattr(stack, "_start", lambda: None)
        stack.start()  # starts the supervisor thread once the (empty) start succeeded
        old = crash(p)
        deadline = time.monotonic() + 10
        while not (p.restarts == 1 and p.alive()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert p.restarts == 1 and p.popen is not None and p.popen.pid != old and p.alive()
    finally:
        stack.stop()
    assert stack._supervisor is not None and not stack._supervisor.is_alive()
    assert not p.alive()


def test_unknown_restart_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="restart_policy"):
        Stack("/tmp/unused", restart_policy="always")
    with pytest.raises(SystemExit):
        launcher.build_parser().parse_args(["--restart-policy=always"])
    assert launcher.build_parser().parse_args([]).restart_policy == "on-failure"
    assert launcher.build_parser().parse_args(["--restart-policy", "no"]).restart_policy == "no"


def test_compose_restarts_what_the_launcher_restarts() -> None:
    # compose's counterpart of --restart-policy=on-failure: every long-running container restarts (unless
    # stopped on purpose, as Stack.kill_process); the one-shot certs job does not.
    services = yaml.safe_load((Path(__file__).resolve().parents[2] / "compose.yaml").read_text())["services"]
    launched = {"etcd-1", "etcd-2", "etcd-3", "storage", "authn", "authz", "flowcontrol", "admission", "gateway-1",
                "gateway-2", "envoy", "controllers"}
    assert launched <= set(services)
    for name, service in services.items():
        assert service.get("restart") == ("no" if name == "certs" else "unless-stopped"), name
