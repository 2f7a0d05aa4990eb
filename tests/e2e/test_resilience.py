"""A stack of its own: losing a gateway, and a restart on the same state directory."""

from __future__ import annotations

import time
from pathlib import Path

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl


def test_gateway_loss_and_restart_keep_service_and_data(tmp_path: Path):
    state = tmp_path / "state"
    stack = Stack(state, port=0)
    stack.start()
    try:
        kubectl = Kubectl(Path(stack.kubeconfig))
        kubectl.run("create", "namespace", "keep")
        kubectl.run("-n", "keep", "create", "configmap", "survivor", "--from-literal=k=v")

        stack.kill_process("gateway-1")
        deadline = time.monotonic() + 10
        failures = 0
        ok_streak = 0
        while ok_streak < 10 and time.monotonic() < deadline:
            out = kubectl.run("-n", "keep", "get", "cm", "survivor", "-o", "name", check=False)
            if out.returncode == 0:
                ok_streak += 1
            else:
                failures += 1
                ok_streak = 0
        assert ok_streak >= 10, f"requests still failing after gateway-1 was killed ({failures} failures)"
    finally:
        stack.stop()

    restarted = Stack(state, port=0)
    restarted.start()
    try:
        kubectl = Kubectl(Path(restarted.kubeconfig))
        obj = yaml.safe_load(kubectl.run("-n", "keep", "get", "cm", "survivor", "-o", "yaml").stdout)
        assert obj["data"] == {"k": "v"}
    finally:
        restarted.stop()
