"""HTTP/1.0 through the whole stack (Envoy, a gateway): Go's net/http serves it, as ``curl --http1.0`` shows
against kube-apiserver; Envoy's default was a 426 Upgrade Required (tests/local/test_envoy_wire.py has the rest)."""

from __future__ import annotations

import json
import socket
import ssl
from urllib.parse import urlparse

from kapi.local.launcher import Stack


def _http10(stack: Stack, request: bytes) -> bytes:
    """Send raw ``request`` bytes as the admin; everything until the server closes the connection."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.set_alpn_protocols(["http/1.1"])
    url = urlparse(stack.url)
    assert url.hostname and url.port
    out = b""
    with socket.create_connection((url.hostname, url.port), timeout=20) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as sock:
        sock.sendall(request)
        while data := sock.recv(65536):
            out += data
    return out


def test_http10_version_is_answered_and_the_connection_closes(stack: Stack) -> None:
    head, _, body = _http10(stack, b"GET /version HTTP/1.0\r\n\r\n").partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 OK\r\n"), head
    assert b"connection: close" in head.lower()
    assert json.loads(body)["major"] == "1"


def test_http10_watch_streams_without_chunking(stack: Stack, namespace: str) -> None:
    path = f"/api/v1/namespaces?fieldSelector=metadata.name%3D{namespace}&watch=1&timeoutSeconds=1"
    out = _http10(stack, f"GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode())
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 200 OK\r\n"), head
    assert b"transfer-encoding" not in head.lower()  # the body ends where the connection does
    events = [json.loads(line) for line in body.splitlines() if line]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", namespace)]
