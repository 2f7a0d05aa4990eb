"""The pytest plugin as a user's session sees it, run in pytest subprocesses (pytester).

Each inner session that starts a cluster costs a cluster start, so the
sessions of one test run side by side: that is also the check that two
sessions do not collide (ports, state directories, processes).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kapi import testing
from kapi.testing import harness

pytest_plugins = ["pytester"]

SESSION = '''
import json, os, pathlib

RECORD = pathlib.Path(os.environ["KAPI_RECORD"])


def test_fixtures(kapi_cluster, kapi_namespace):
    RECORD.write_text(json.dumps({"state_dir": str(kapi_cluster.state_dir), "server": kapi_cluster.server,
                                  "pids": kapi_cluster.processes, "KUBECONFIG": os.environ.get("KUBECONFIG"),
                                  "kubeconfig": str(kapi_cluster.kubeconfig)}))
    out = kapi_cluster.kubectl("get", "namespace", kapi_namespace, "-o", "name").stdout
    assert out.strip() == f"namespace/{kapi_namespace}"


def test_flags_from_ini_and_command_line(kapi_cluster):
    assert "gateway-1" in kapi_cluster.processes and "gateway-2" not in kapi_cluster.processes  # ini --gateways=1
    whoami = kapi_cluster.kubectl("--kubeconfig=/dev/null", f"--server={kapi_cluster.server}",
                                  f"--certificate-authority={kapi_cluster.ca_file}", "--token=carol-token",
                                  "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami.stdout == "carol"  # --kapi-flag=--token-auth-file=...


def test_reset(kapi_cluster):
    kapi_cluster.kubectl("create", "namespace", "scratch")
    kapi_cluster.kubectl("-n", "default", "create", "configmap", "leftover")
    kapi_cluster.kubectl("create", "clusterrole", "leftover", "--verb=get", "--resource=pods")
    assert len(kapi_cluster.leftovers()) >= 3
    kapi_cluster.reset()
    assert kapi_cluster.leftovers() == []


def test_fails_on_purpose(kapi_cluster):
    assert False, "on purpose"
'''

DIE = '''
import json, os, pathlib, signal


def test_record_then_die(kapi_cluster):
    pathlib.Path(os.environ["KAPI_RECORD"]).write_text(json.dumps(
        {"state_dir": str(kapi_cluster.state_dir), "pids": kapi_cluster.processes}))
    os.kill(os.getpid(), getattr(signal, os.environ["KAPI_SIGNAL"]))
'''

REUSE = '''
def test_reused(kapi_cluster, kapi_namespace):
    assert kapi_cluster.stack is None and kapi_cluster.processes == {}
    bob = kapi_cluster.as_user("bob", ["qa"])  # a CertificateSigningRequest: no CA key here
    assert bob.kubectl("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").stdout == "bob"
    assert bob.kubectl("get", "configmaps", "-n", kapi_namespace, check=False).returncode != 0
    kapi_cluster.kubectl("-n", "default", "create", "configmap", "from-inner-session")
    kapi_cluster.reset()
    assert kapi_cluster.leftovers() == []
'''


def _run(pytester: pytest.Pytester, name: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    """Start ``pytest <args>`` in pytester's directory in the background, with its own basetemp."""
    return subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={name}-tmp",
                             "-q", *args], cwd=pytester.path, env={**os.environ, **env}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _finish(proc: subprocess.Popen[str], timeout: float = 240) -> pytest.RunResult:
    start = time.monotonic()
    out, _ = proc.communicate(timeout=timeout)
    return pytest.RunResult(proc.returncode, out.splitlines(), [], time.monotonic() - start)


def _alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                continue  # exited, not yet reaped by its new parent
        except OSError:
            continue
        out.append(pid)
    return out


def _none_alive(pids: list[int], timeout: float = 15.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (alive := _alive(pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


def test_two_sessions_side_by_side(pytester: pytest.Pytester) -> None:
    """Fixtures start and stop cleanly, flags arrive, reset() empties the cluster, a failure keeps the
    state directory only when asked, no process survives, and two sessions do not collide."""
    pytester.makepyfile(test_session=SESSION)
    pytester.makeini("[pytest]\nkapi_flags = --gateways=1\n")
    tokens = pytester.path / "tokens.csv"
    tokens.write_text('carol-token,carol,uid-carol,"qa"\n')
    flag = f"--kapi-flag=--token-auth-file={tokens}"
    keep = _run(pytester, "keep", flag, "--kapi-keep-state", env={"KAPI_RECORD": str(pytester.path / "keep.json")})
    drop = _run(pytester, "drop", flag, env={"KAPI_RECORD": str(pytester.path / "drop.json")})
    kept, dropped = _finish(keep), _finish(drop)
    records = [json.loads((pytester.path / f"{n}.json").read_text()) for n in ("keep", "drop")]
    try:
        for result in (kept, dropped):
            result.assert_outcomes(passed=3, failed=1)
        kept.stdout.fnmatch_lines([f"kapi: state directory kept for inspection: {records[0]['state_dir']} *"])
        assert Path(records[0]["state_dir"], "logs", "etcd.log").exists()
        assert not Path(records[1]["state_dir"]).exists()
        assert records[0]["server"] != records[1]["server"]
        assert records[0]["state_dir"] != records[1]["state_dir"]
        assert all(r["KUBECONFIG"] == r["kubeconfig"] for r in records)
        pids = [pid for r in records for pid in r["pids"].values()]
        assert len(pids) == 2 * 9  # etcd, storage, 4 backends, 1 gateway, Envoy, the controllers
        assert _alive(pids) == []
    finally:
        shutil.rmtree(records[0]["state_dir"], ignore_errors=True)


def test_interrupt_and_crash_leave_no_process(pytester: pytest.Pytester) -> None:
    """Ctrl-C (SIGINT) stops the cluster through pytest's teardown; SIGKILL of pytest itself leaves nothing
    running either (the launcher's children die with their parent, PR_SET_PDEATHSIG)."""
    pytester.makepyfile(test_die=DIE)
    pytester.makeini("[pytest]\nkapi_flags = --gateways=1\n")
    runs = {sig: _run(pytester, sig.lower(), env={"KAPI_RECORD": str(pytester.path / f"{sig}.json"),
                                                  "KAPI_SIGNAL": sig}) for sig in ("SIGINT", "SIGKILL")}
    results = {sig: _finish(proc) for sig, proc in runs.items()}
    records = {sig: json.loads((pytester.path / f"{sig}.json").read_text()) for sig in runs}
    survivors: dict[str, int] = {}
    try:
        assert results["SIGINT"].ret == pytest.ExitCode.INTERRUPTED, results["SIGINT"].outlines[-20:]
        assert results["SIGKILL"].ret == -9
        assert all(len(record["pids"]) == 9 for record in records.values())
        assert _none_alive(list(records["SIGINT"]["pids"].values())) == []
        assert not Path(records["SIGINT"]["state_dir"]).exists()
        alive = _none_alive(list(records["SIGKILL"]["pids"].values()))
        # Every child gets SIGTERM at the same moment here, peers and etcd included: each must still exit
        # (storage once hung on a gateway's open gRPC health Watch, fixed in kapi/grpcutil.HealthServicer).
        survivors = {name: pid for name, pid in records["SIGKILL"]["pids"].items() if pid in alive}
        assert survivors == {}
        # the killed session could not remove its state directory (a CA key inside): the next one does
        abandoned = Path(records["SIGKILL"]["state_dir"])
        assert abandoned.exists()
        assert abandoned in harness.remove_abandoned_state_dirs(abandoned.parent) and not abandoned.exists()
    finally:
        for pid in survivors.values():  # started by this test's inner session: stopped by PID
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(records["SIGKILL"]["state_dir"], ignore_errors=True)


def test_reuse_a_running_cluster(pytester: pytest.Pytester, kapi_cluster: testing.Cluster) -> None:
    """--kapi-kubeconfig takes a running cluster: nothing started or stopped, users by CSR, reset works."""
    pytester.makepyfile(test_reuse=REUSE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--kapi-kubeconfig={kapi_cluster.kubeconfig}")
    result.assert_outcomes(passed=1)
    assert kapi_cluster.kubectl("get", "--raw", "/readyz").stdout == "ok"
    assert kapi_cluster.kubectl("-n", "default", "get", "configmap", "from-inner-session",
                                check=False).returncode != 0
