"""The whole stack from kapi.local.launcher: start, Envoy failover, restart on the same state, `kapi up` signals.

These drive the API with plain HTTPS (admin client certificate) through Envoy;
kubectl and client-library behaviour is tested in tests/e2e.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from kapi.local.launcher import Stack, StartupError


class Client:
    """HTTPS client of a stack's URL with the admin certificate."""

    def __init__(self, stack: Stack) -> None:
        self.url = stack.url
        self.context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
        self.context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
        req = urllib.request.Request(self.url + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=10) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as err:
            return err.code, err.read()


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


def envoy_endpoints(stack: Stack) -> dict[str, str]:
    """gateway host:port -> Envoy's health flags for it (from the admin API)."""
    admin = (stack.state_dir / "run" / "envoy-admin.address").read_text().strip()
    with urllib.request.urlopen(f"http://{admin}/clusters", timeout=5) as reply:
        lines = reply.read().decode().splitlines()
    out = {}
    for line in lines:
        parts = line.split("::")
        if len(parts) == 4 and parts[0] == "gateways" and parts[2] == "health_flags":
            out[parts[1]] = parts[3]
    return out


def processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line contains ``text`` (to prove nothing is left running)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            pids.append(int(entry.name))
    return pids


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("stack") / "state"


@pytest.fixture(scope="module")
def stack(state: Path) -> Iterator[Stack]:
    with Stack(state, port=0) as s:
        yield s


def test_ready_through_envoy_with_a_kubeconfig(stack: Stack) -> None:
    assert stack.url.startswith("https://127.0.0.1:")
    config = yaml.safe_load(stack.kubeconfig.read_text())
    assert config["clusters"][0]["cluster"]["server"] == stack.url
    status, body = Client(stack).request("GET", "/readyz")
    assert (status, body) == (200, b"ok")
    names = set(stack.processes)
    assert names == {"etcd", "storage-1", "authn", "authz", "flowcontrol", "admission", "gateway-1", "gateway-2",
                     "envoy", "controllers"}
    assert all(p.poll() is None for p in stack.processes.values())
    assert all(stack.log_path(n).stat().st_size > 0 for n in names)
    assert set(envoy_endpoints(stack)) == {stack.addresses["gateway-1"], stack.addresses["gateway-2"]}


def test_a_second_stack_runs_beside_the_first(stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # ... started from a directory whose files are named like standard modules (a kopf user's operator.py):
    # the services must not import them (python -P)
    for module in ("operator", "typing", "collections"):
        (tmp_path / f"{module}.py").write_text("raise SystemExit('imported the working directory')\n")
    monkeypatch.chdir(tmp_path)
    with Stack(tmp_path / "other", port=0, gateways=1) as other:
        assert other.url != stack.url
        assert Client(other).request("GET", "/readyz")[0] == 200
        assert Client(stack).request("GET", "/readyz")[0] == 200
    assert all(p.poll() is not None for p in other.processes.values())


def test_a_second_stack_on_a_taken_port_fails_instead_of_sharing_it(stack: Stack, tmp_path: Path) -> None:
    taken = int(stack.url.rsplit(":", 1)[1])
    with pytest.raises(StartupError):
        Stack(tmp_path / "clash", port=taken, gateways=1, timeout=30).start()
    assert Client(stack).request("GET", "/readyz")[0] == 200


def test_killed_gateway_is_routed_around_then_rejoins(stack: Stack) -> None:
    client = Client(stack)
    assert client.request("POST", "/api/v1/namespaces/default/configmaps", configmap("failover"))[0] == 201
    killed = stack.addresses["gateway-1"]
    stack.kill_process("gateway-1")
    # Every GET still succeeds: Envoy retries a refused connection on the other gateway.
    statuses = [client.request("GET", "/api/v1/namespaces/default/configmaps/failover")[0] for _ in range(40)]
    assert statuses == [200] * 40
    deadline = time.monotonic() + 10
    while envoy_endpoints(stack)[killed] == "healthy" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert envoy_endpoints(stack)[killed] != "healthy"  # the health check took it out
    stack.restart_process("gateway-1")
    assert stack.addresses["gateway-1"] == killed  # same address, so Envoy's static config still holds
    deadline = time.monotonic() + 10
    while envoy_endpoints(stack)[killed] != "healthy" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert envoy_endpoints(stack)[killed] == "healthy"


def test_client_cannot_forge_the_forwarded_client_cert_header(stack: Stack) -> None:
    # Envoy's SANITIZE_SET drops a client's own x-forwarded-client-cert: without a certificate it stays anonymous.
    pem = urllib.parse.quote(stack.pki.admin_cert.read_text(), safe="")
    forged = f'Hash=00;Cert="{pem}";Subject="O=system:masters,CN=kubernetes-admin"'
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    req = urllib.request.Request(stack.url + "/api/v1/namespaces/default/configmaps", method="POST",
                                 data=json.dumps(configmap("forged")).encode(),
                                 headers={"Content-Type": "application/json", "x-forwarded-client-cert": forged})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, context=context, timeout=10)
    assert err.value.code in (401, 403)
    assert Client(stack).request("GET", "/api/v1/namespaces/default/configmaps/forged")[0] == 404


def test_restart_on_the_same_state_keeps_objects_and_etcd_ports(stack: Stack, state: Path) -> None:
    client = Client(stack)
    assert client.request("POST", "/api/v1/namespaces/default/configmaps", configmap("keep"))[0] == 201
    etcd = stack.addresses["etcd"]
    stack.stop()
    assert all(p.poll() is not None for p in stack.processes.values())
    assert processes_mentioning(str(state)) == []
    again = Stack(state, port=0)
    with again:
        assert again.addresses["etcd"] == etcd
        status, body = Client(again).request("GET", "/api/v1/namespaces/default/configmaps/keep")
        assert status == 200 and json.loads(body)["data"] == {"k": "v"}


def test_kapi_up_reports_ready_and_stops_everything_on_ctrl_c(tmp_path: Path) -> None:
    state = tmp_path / "up"
    proc = subprocess.Popen([sys.executable, "-m", "kapi.local.cli", "up", "--state-dir", str(state), "--port", "0",
                             "--gateways", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()  # blocks until ready (or exit)
        assert line.startswith("kapi ready: https://127.0.0.1:"), line + proc.stderr.read()
        assert f"export KUBECONFIG={state.absolute() / 'admin.kubeconfig'}" in line
        url = line.split()[2]
        assert yaml.safe_load((state / "admin.kubeconfig").read_text())["clusters"][0]["cluster"]["server"] == url
        children = processes_mentioning(str(state))
        assert len(children) >= 8
        # A child dying later is reported and restarted (--restart-policy=on-failure, the default).
        gateway = int((state / "run" / "gateway-2.port").read_text())
        victim = [pid for pid in children if f"--port-file {state.absolute()}/run/gateway-2.port" in
                  (Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode())]
        assert len(victim) == 1 and gateway > 0
        os.kill(victim[0], signal.SIGKILL)
        deadline = time.monotonic() + 15
        log = state / "logs" / "gateway-2.log"
        while "gateway serving on" not in log.read_text().partition("starting (restart 1): ")[2]:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        assert int((state / "run" / "gateway-2.port").read_text()) == gateway  # the address Envoy dials
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
        err = proc.stderr.read()
        assert "gateway-2 exited with code -9 after" in err and "restarting in 0.5s" in err
        assert "restarted gateway-2 (pid" in err
        assert processes_mentioning(str(state)) == []  # the restarted gateway stopped too
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
