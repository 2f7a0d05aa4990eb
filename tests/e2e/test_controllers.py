"""The controller manager end to end: per-namespace defaults, garbage collection, the bootstrap-token cleaner,
namespace termination conditions, and leader election handing over when the active replica is killed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from kapi.local.launcher import Stack, die_with_parent
from tests.e2e.conftest import Kubectl


def eventually(check: Callable[[], bool], timeout: float = 10.0, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s")
        time.sleep(interval)


def exists(k: Kubectl, *args: str) -> bool:
    return k.run("get", *args, check=False).returncode == 0


def test_default_service_account_and_root_ca(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    eventually(lambda: exists(kubectl, "-n", namespace, "serviceaccount", "default"))
    eventually(lambda: exists(kubectl, "-n", namespace, "configmap", "kube-root-ca.crt"))
    cm = json.loads(kubectl.run("-n", namespace, "get", "configmap", "kube-root-ca.crt", "-o", "json").stdout)
    assert cm["data"]["ca.crt"] == stack.pki.ca_cert.read_text()
    # deleted ones come back
    kubectl.run("-n", namespace, "delete", "serviceaccount", "default")
    eventually(lambda: exists(kubectl, "-n", namespace, "serviceaccount", "default"))


def _owned(kubectl: Kubectl, namespace: str, name: str, owner_uid: str, block: bool = False) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner_uid,
             "blockOwnerDeletion": block}]}}))


def test_garbage_collector_propagation(kubectl: Kubectl, namespace: str) -> None:
    def owner() -> str:
        return kubectl.run("-n", namespace, "create", "configmap", "owner", "-o", "jsonpath={.metadata.uid}").stdout

    # background (kubectl's default): the dependent follows its owner
    _owned(kubectl, namespace, "dep", owner())
    kubectl.run("-n", namespace, "delete", "configmap", "owner")
    eventually(lambda: not exists(kubectl, "-n", namespace, "configmap", "dep"))
    # foreground: the owner waits for blocking dependents, then goes
    _owned(kubectl, namespace, "dep", owner(), block=True)
    kubectl.run("-n", namespace, "delete", "configmap", "owner", "--cascade=foreground", "--timeout=20s")
    assert not exists(kubectl, "-n", namespace, "configmap", "dep")
    assert not exists(kubectl, "-n", namespace, "configmap", "owner")
    # orphan: the dependent stays, without the reference
    _owned(kubectl, namespace, "dep", owner())
    kubectl.run("-n", namespace, "delete", "configmap", "owner", "--cascade=orphan", "--timeout=20s")
    eventually(lambda: not exists(kubectl, "-n", namespace, "configmap", "owner"))
    dep = json.loads(kubectl.run("-n", namespace, "get", "configmap", "dep", "-o", "json").stdout)
    assert "ownerReferences" not in dep["metadata"]
    # a dependent whose owner never existed is collected too
    _owned(kubectl, namespace, "stray", "00000000-0000-0000-0000-000000000000")
    eventually(lambda: not exists(kubectl, "-n", namespace, "configmap", "stray"))


def test_expired_bootstrap_token_is_deleted(kubectl: Kubectl) -> None:
    def token(token_id: str, expiration: str) -> str:
        return json.dumps({"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
                           "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
                           "stringData": {"token-id": token_id, "token-secret": "0123456789abcdef",
                                          "expiration": expiration, "usage-bootstrap-authentication": "true"}})
    kubectl.run("create", "-f", "-", input=token("exp001", "2001-01-01T00:00:00Z"))
    kubectl.run("create", "-f", "-", input=token("liv001", "2099-01-01T00:00:00Z"))
    try:
        eventually(lambda: not exists(kubectl, "-n", "kube-system", "secret", "bootstrap-token-exp001"))
        assert exists(kubectl, "-n", "kube-system", "secret", "bootstrap-token-liv001")
    finally:
        kubectl.run("-n", "kube-system", "delete", "secret", "bootstrap-token-exp001", "bootstrap-token-liv001",
                    "--ignore-not-found", check=False)


def test_terminating_namespace_conditions(kubectl: Kubectl) -> None:
    kubectl.run("create", "namespace", "held")
    kubectl.run("-n", "held", "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}))
    kubectl.run("delete", "namespace", "held", "--wait=false")
    again = kubectl.run("delete", "namespace", "held", "--wait=false", check=False)
    assert "The system is ensuring all content is removed from this namespace" in again.stderr

    def remaining() -> bool:
        ns = json.loads(kubectl.run("get", "namespace", "held", "-o", "json").stdout)
        conds = {c["type"]: c for c in ns["status"].get("conditions") or []}
        return ns["status"]["phase"] == "Terminating" and conds.get("NamespaceFinalizersRemaining", {}).get(
            "message") == "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource " \
                          "instances"
    eventually(remaining)
    kubectl.run("-n", "held", "patch", "configmap", "held", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    eventually(lambda: not exists(kubectl, "namespace", "held"), 15)


def _controllers(stack: Stack, namespace: str, log: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "kapi.local.cli", "controllers",
            "--kubeconfig", str(stack.pki.controller_manager_kubeconfig), "--master", stack.url,
            "--controllers", "serviceaccount", "--leader-elect-resource-namespace", namespace,
            "--leader-elect-lease-duration", "2", "--leader-elect-renew-deadline", "1.5",
            "--leader-elect-retry-period", "0.25"]
    with open(log, "wb") as out:
        return subprocess.Popen(die_with_parent(argv), stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_leader_election_hands_over(stack: Stack, kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    logs = [tmp_path / "c1.log", tmp_path / "c2.log"]
    procs = [_controllers(stack, namespace, p) for p in logs]
    try:
        def leaders() -> list[int]:
            return [i for i, p in enumerate(logs) if "became leader" in p.read_text()]

        eventually(lambda: len(leaders()) == 1, 15)
        time.sleep(1.0)
        assert len(leaders()) == 1  # the other stays a standby
        first = leaders()[0]
        holder = re.search(r"leader election: (\S+) became leader", logs[first].read_text())
        lease = json.loads(kubectl.run("-n", namespace, "get", "lease", "kube-controller-manager", "-o",
                                       "json").stdout)
        assert holder and lease["spec"]["holderIdentity"] == holder.group(1)
        procs[first].send_signal(signal.SIGKILL)
        procs[first].wait()
        killed = time.monotonic()
        other = 1 - first
        eventually(lambda: "became leader" in logs[other].read_text(), 10, 0.1)
        assert time.monotonic() - killed < 6
        lease = json.loads(kubectl.run("-n", namespace, "get", "lease", "kube-controller-manager", "-o",
                                       "json").stdout)
        assert lease["spec"]["holderIdentity"] != holder.group(1)
        assert lease["spec"]["leaseTransitions"] >= 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
