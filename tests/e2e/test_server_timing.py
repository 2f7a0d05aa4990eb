"""Every response says where its time went (Server-Timing), through Envoy, for reads, writes and refusals."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl


def _timings(kubectl: Kubectl, *args: str, input: str | None = None) -> dict[str, float]:
    """The Server-Timing of the one request ``kubectl <args> -v=8`` sends, as {metric: milliseconds}."""
    proc = kubectl.run(*args, "-v=8", check=False, input=input)
    lines = [line for line in proc.stderr.splitlines() if "Server-Timing:" in line]
    assert len(lines) == 1, proc.stderr
    value = lines[0].split("Server-Timing:", 1)[1].strip()
    return {name: float(dur) for name, dur in (p.split(";dur=") for p in value.split(", "))}


def test_reads_and_writes_carry_server_timing(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = _timings(kubectl, "create", "--raw", path, "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "timed"}, "data": {"a": "b"}}))
    assert list(created)[-3:] == ["admission", "storage", "total"], created
    assert created["total"] >= created["admission"] + created["storage"] - 0.02
    read = _timings(kubectl, "get", "--raw", f"{path}/timed")
    assert "storage" in read and "admission" not in read, read
    refused = _timings(alice, "get", "--raw", f"{path}/timed")  # 403: authorization ran, storage never
    assert "authz" in refused and "storage" not in refused, refused
