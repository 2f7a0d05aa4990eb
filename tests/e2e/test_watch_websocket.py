"""WATCH over WebSocket through the whole stack (Envoy, a gateway), as kube-apiserver serves it.

kube's serveWatchHandler (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/watch.go) answers a watch that asks
for a WebSocket upgrade with golang.org/x/net/websocket's Handler: each event one message (text for JSON, binary
for protobuf: the event without the HTTP stream's 4-byte length), what the client sends ignored, a close (1000)
when the watch ends (timeoutSeconds). Errors before the upgrade (authorization, bad parameters) are the usual
Status answers; x/net refuses a handshake without an Origin (403, empty body). Any other GET asking for an
upgrade is answered as without it (Go's net/http ignores the headers).
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import os
import ssl
import time
from typing import Any
from urllib.parse import urlparse

import aiohttp

from kapi.local.launcher import Stack
from tests.e2e.conftest import TOKENS, Kubectl

ORIGIN = "https://localhost"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def _context(stack: Stack, admin: bool = True) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    if admin:
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.set_alpn_protocols(["http/1.1"])
    return context


def _request(stack: Stack, path: str, headers: dict[str, str], admin: bool = True
             ) -> tuple[int, dict[str, str], bytes]:
    """GET ``path`` over HTTP/1.1 with ``headers``: (status, lower-cased headers, body)."""
    url = urlparse(stack.url)
    assert url.hostname and url.port
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=_context(stack, admin), timeout=30)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def _upgrade(origin: str | None = ORIGIN, version: str = "13") -> dict[str, str]:
    headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": version,
               "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode()}
    if origin is not None:
        headers["Origin"] = origin
    return headers


async def _ws_watch(stack: Stack, path: str, headers: dict[str, str] | None = None, send: str | None = None,
                    protocols: tuple[str, ...] = ()
                    ) -> tuple[list[aiohttp.WSMessage], float, aiohttp.ClientWebSocketResponse]:
    """Watch ``path`` over WebSocket as the admin: every message until the close (included), the seconds from
    the handshake to the close, and the client response (its handshake's headers)."""
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(stack.url + path, ssl=_context(stack), origin=ORIGIN, headers=headers or {},
                                      protocols=protocols, autoclose=False, compress=0) as ws:
            started = time.monotonic()
            if send is not None:
                await ws.send_str(send)  # read and ignored by the server
            messages = []
            while True:
                message = await asyncio.wait_for(ws.receive(), 30)
                messages.append(message)
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                    return messages, time.monotonic() - started, ws


def _configmaps(kubectl: Kubectl, namespace: str) -> None:
    for name in ("a", "b"):
        kubectl.run("create", "configmap", name, "-n", namespace, f"--from-literal=k={name}")
    kubectl.run("label", "configmap", "a", "b", "-n", namespace, "ws=1")  # not the namespace's kube-root-ca.crt


def test_json_watch_messages_are_the_http_watch_lines(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    _configmaps(kubectl, namespace)
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&labelSelector=ws%3D1&timeoutSeconds=2"
    status, headers, body = _request(stack, path, {})
    assert status == 200, body
    lines = body.splitlines(keepends=True)
    assert [json.loads(line)["object"]["metadata"]["name"] for line in lines] == ["a", "b"]

    messages, elapsed, ws = asyncio.run(_ws_watch(stack, path, send="ignored"))
    assert ws._response.status == 101
    *events, close = messages
    assert [m.type for m in events] == [aiohttp.WSMsgType.TEXT] * 2
    assert [m.data.encode() for m in events] == lines  # each one event's JSON line, newline included
    assert close.type == aiohttp.WSMsgType.CLOSE and close.data == 1000 and close.extra == ""
    assert elapsed > 1.5 and elapsed < 10, elapsed  # closed at timeoutSeconds (2 s), not at once, not hung


def test_protobuf_watch_messages_are_binary_events(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    _configmaps(kubectl, namespace)
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=true&labelSelector=ws%3D1&timeoutSeconds=1"
    accept = {"Accept": f"{PROTOBUF};stream=watch"}
    status, headers, body = _request(stack, path, accept)
    assert status == 200 and headers["content-type"] == f"{PROTOBUF};stream=watch"
    frames = []
    while body:
        size = int.from_bytes(body[:4], "big")
        frames.append(body[4:4 + size])
        body = body[4 + size:]
    assert len(frames) == 2

    messages, _, _ = asyncio.run(_ws_watch(stack, path, headers=accept))
    *events, close = messages
    assert [m.type for m in events] == [aiohttp.WSMsgType.BINARY] * 2
    assert [m.data for m in events] == frames  # no length prefix: the message is the frame
    assert close.type == aiohttp.WSMsgType.CLOSE and close.data == 1000


def test_watch_events_after_the_upgrade_and_one_subprotocol_echoed(stack: Stack, kubectl: Kubectl,
                                                                  namespace: str) -> None:
    async def run() -> tuple[list[Any], str | None]:
        path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&fieldSelector=metadata.name%3Dlate&timeoutSeconds=3"
        task = asyncio.ensure_future(_ws_watch(stack, path, protocols=("v4.channel.k8s.io",)))
        await asyncio.sleep(1)
        await asyncio.to_thread(kubectl.run, "create", "configmap", "late", "-n", namespace)
        messages, _, ws = await task
        return messages, ws.protocol

    messages, protocol = asyncio.run(run())
    assert protocol == "v4.channel.k8s.io"
    *events, close = messages
    assert [(json.loads(m.data)["type"], json.loads(m.data)["object"]["metadata"]["name"]) for m in events] == [
        ("ADDED", "late")]
    assert close.data == 1000


def test_unauthorized_watch_is_refused_before_the_upgrade(stack: Stack, namespace: str) -> None:
    headers = {**_upgrade(), "Authorization": f"Bearer {TOKENS['alice']}"}
    status, got, body = _request(stack, f"/api/v1/namespaces/{namespace}/configmaps?watch=1", headers, admin=False)
    assert status == 403 and got["content-type"] == "application/json"
    assert json.loads(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'configmaps is forbidden: User "alice" cannot watch resource "configmaps" in API group "" '
                   f'in the namespace "{namespace}"',
        "reason": "Forbidden", "details": {"kind": "configmaps"}, "code": 403}


def test_bad_watch_parameters_are_a_status_before_the_upgrade(stack: Stack, namespace: str) -> None:
    status, _, body = _request(stack, f"/api/v1/namespaces/{namespace}/configmaps?watch=1&timeoutSeconds=x",
                               _upgrade())
    assert status == 400
    assert json.loads(body)["message"] == 'strconv.ParseInt: parsing "x": invalid syntax'


def test_handshake_refusals_are_x_net_websockets(stack: Stack, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&timeoutSeconds=5"
    for origin in (None, "null", "localhost"):  # websocket.Handler's checkOrigin: 403, nothing else
        status, _, body = _request(stack, path, _upgrade(origin=origin))
        assert (status, body) == (403, b""), origin
    status, headers, body = _request(stack, path, _upgrade(version="8"))
    assert (status, body, headers["sec-websocket-version"]) == (400, b"missing or bad WebSocket Version", "13")
    status, _, body = _request(stack, path, {**_upgrade(), "Sec-WebSocket-Protocol": "a, b"})
    assert (status, body) == (400, b"")


def test_legacy_watch_path_over_websocket(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    _configmaps(kubectl, namespace)
    path = f"/api/v1/watch/namespaces/{namespace}/configmaps/a?timeoutSeconds=1"
    messages, _, _ = asyncio.run(_ws_watch(stack, path))
    *events, close = messages
    assert [(json.loads(m.data)["type"], json.loads(m.data)["object"]["metadata"]["name"]) for m in events] == [
        ("ADDED", "a")]
    assert close.data == 1000


def test_spdy_upgrade_of_a_watch_is_the_http_watch(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    _configmaps(kubectl, namespace)  # kube: not a WebSocket request, so HandleHTTP
    path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&labelSelector=ws%3D1&timeoutSeconds=1"
    status, headers, body = _request(stack, path, {"Connection": "Upgrade", "Upgrade": "SPDY/3.1"})
    assert status == 200 and headers["content-type"] == "application/json"
    assert [json.loads(line)["object"]["metadata"]["name"] for line in body.splitlines()] == ["a", "b"]


def test_other_gets_asking_for_websocket_are_refused_by_envoy(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """Differs from kube (which answers as without the upgrade): Envoy replaces a gateway's 2xx answer to a
    WebSocket upgrade with an empty local reply, so only watches are let upgrade (docs/kube-parity.md)."""
    _configmaps(kubectl, namespace)
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for path in (f"{base}/a", base, f"{base}?watch=false", f"{base}?watch=FALSE", f"{base}?watch=0"):
        status, _, body = _request(stack, path, _upgrade())
        assert status == 400, path
        assert json.loads(body)["message"] == ("the connection can be upgraded only for the connect subresources "
                                               "(exec, attach, portforward, proxy)")
        assert _request(stack, path, {})[0] == 200


def test_client_close_ends_the_watch(stack: Stack, namespace: str) -> None:
    async def run() -> tuple[float, int | None]:
        path = f"/api/v1/namespaces/{namespace}/configmaps?watch=1&timeoutSeconds=300"
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(stack.url + path, ssl=_context(stack), origin=ORIGIN, compress=0,
                                          timeout=aiohttp.ClientWSTimeout(ws_close=5)) as ws:
                await asyncio.sleep(0.5)
                started = time.monotonic()
                await ws.close()  # waits for the server's close frame
                return time.monotonic() - started, ws.close_code

    elapsed, code = asyncio.run(run())
    assert code == 1000 and elapsed < 2  # the server answered the close at once, not at timeoutSeconds
