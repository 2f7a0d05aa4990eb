"""An error answered before a request body is read reaches an HTTP/2 client through Envoy as its Status.

The gateways answered 404/405/403 without reading the body; Envoy, still
sending the body upstream, then reset the client's stream and about one
request in ten (more with larger bodies) ended in curl's "(92) Stream error
in the HTTP/2 framing layer" with no response at all. The gateway now drains
the body before its error answer (services/gateway/filters/recovery.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kapi.local.launcher import Stack
from tests.e2e.conftest import TOKENS


@pytest.fixture(autouse=True)
def _curl() -> None:
    """The HTTP/2 client here is curl (the system's, built with nghttp2 on Debian 12); its absence fails the test
    rather than skipping it."""
    assert shutil.which("curl") is not None, "these tests need curl with HTTP/2 (Debian: apt-get install curl)"


def _post_http2(stack: Stack, path: str, body: Path, auth: list[str]) -> tuple[int, dict[str, object], str]:
    """POST ``body`` to ``path`` through Envoy with curl --http2: (curl's exit code, the Status, curl's stderr)."""
    proc = subprocess.run(["curl", "-sS", "--http2", "--cacert", str(stack.pki.ca_cert), *auth, "-X", "POST",
                           "-H", "Content-Type: application/json", "--data-binary", f"@{body}",
                           stack.url + path], capture_output=True, text=True, timeout=30)
    try:
        status = json.loads(proc.stdout) if proc.returncode == 0 else {}
    except ValueError:
        status = {}
    return proc.returncode, status, proc.stderr


def test_http2_early_errors_with_a_body_all_get_their_status(stack: Stack, tmp_path: Path) -> None:
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"},
                                "data": {"blob": "x" * 200_000}}))
    admin = ["--cert", str(stack.pki.admin_cert), "--key", str(stack.pki.admin_key)]
    alice = ["-H", f"Authorization: Bearer {TOKENS['alice']}"]
    cases = [
        ("/api/v1/namespaces/default/nosuchresources", admin, 404, "NotFound"),
        ("/api/v1/namespaces/default/configmaps/app", admin, 405, "MethodNotAllowed"),
        ("/api/v1/namespaces/default/configmaps", alice, 403, "Forbidden"),
    ]
    failures = []
    for i in range(50):
        path, auth, code, reason = cases[i % len(cases)]
        rc, status, stderr = _post_http2(stack, path, body, auth)
        if rc != 0 or status.get("kind") != "Status" or (status.get("code"), status.get("reason")) != (code, reason):
            failures.append((path, rc, stderr.strip(), status))
    assert failures == []
