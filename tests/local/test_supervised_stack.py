"""A whole stack under its supervisor: SIGKILLed processes come back on their address and kubectl works again.

The kills come from outside (os.kill, as the OOM killer or a crash would); nothing in the test restarts
anything. Processes stopped with Stack.kill_process stay down until Stack.restart_process.
"""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from kapi.local import binaries
from kapi.local.launcher import Stack
from tests.local.test_stack import envoy_endpoints


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with Stack(tmp_path_factory.mktemp("supervised") / "state", port=0) as s:
        yield s


def kubectl(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binaries.kubectl()), "--kubeconfig", str(stack.kubeconfig), "--request-timeout=5s",
                           *args], capture_output=True, text=True, timeout=30,
                          env={**os.environ, "KUBECTL_KUBERC": "false"})


def serves_again(stack: Stack, name: str, within: float = 20.0) -> float:
    """Seconds until kubectl creates and gets a new ConfigMap (authn, flowcontrol, authz, admission, storage).

    The GET names a new object, so the gateway cannot answer authorization from its decision cache.
    """
    started = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        cm = f"after-{name}-{attempt}"
        out = kubectl(stack, "-n", "default", "create", "configmap", cm, "--from-literal=k=v")
        if out.returncode == 0:
            out = kubectl(stack, "-n", "default", "get", "configmap", cm, "-o", "name")
            if out.returncode == 0 and out.stdout.strip() == f"configmap/{cm}":
                return time.monotonic() - started
        assert time.monotonic() - started < within, f"kubectl still failing after {name} was killed: {out.stderr}"
        time.sleep(0.2)


@pytest.mark.parametrize("name", ["authz", "storage-1", "gateway-1", "etcd", "envoy"])
def test_a_sigkilled_process_comes_back_and_kubectl_works(stack: Stack, name: str) -> None:
    assert kubectl(stack, "get", "ns", "default").returncode == 0
    p = stack._procs[name]
    address, old, restarts = stack.addresses[name], stack.processes[name].pid, p.restarts
    os.kill(old, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while not (p.restarts > restarts and p.alive()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert p.restarts == restarts + 1 and stack.processes[name].pid != old
    assert stack.addresses[name] == address  # the address its peers (and Envoy) dial
    serves_again(stack, name)
    log = stack.log_path(name).read_text()
    assert "exited with code -9 after" in log and f"starting (restart {p.restarts}): " in log
    if name.startswith("gateway-"):  # Envoy's active health check takes it back
        deadline = time.monotonic() + 10
        while envoy_endpoints(stack)[address] != "healthy" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert envoy_endpoints(stack)[address] == "healthy"


def test_kill_process_keeps_it_down_until_restart_process(stack: Stack) -> None:
    p = stack._procs["authn"]
    restarts = p.restarts
    stack.kill_process("authn")
    time.sleep(1.5)  # three times the first backoff
    assert not p.alive() and p.restarts == restarts
    # A credential the gateway has not cached needs authn: 503 while it is down (fail closed), then 401.
    assert token_user(stack, "down") == 503
    stack.restart_process("authn")
    assert p.alive() and p.restarts == restarts
    deadline = time.monotonic() + 20
    while token_user(stack, "up") != 401:
        assert time.monotonic() < deadline, "the gateways did not reach authn again"
        time.sleep(0.2)
    serves_again(stack, "authn")


def token_user(stack: Stack, token: str) -> int:
    """HTTP status of GET /api with a bearer token never seen before (so the gateway must ask authn)."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    req = urllib.request.Request(f"{stack.url}/api", headers={"Authorization": f"Bearer {token}-{time.time()}"})
    try:
        with urllib.request.urlopen(req, context=context, timeout=10) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as err:
        return err.code
