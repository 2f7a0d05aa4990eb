"""The WebSocket handshake checks of a watch (services/gateway/handlers/watch.py), as golang.org/x/net/websocket
makes them for kube's websocket.Handler(server.HandleWS): hybi.go ReadHandshake/AcceptHandshake, server.go
checkOrigin (url.ParseRequestURI)."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from services.gateway.handlers import watch

GOOD = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": "https://localhost"}


def _refusal(**changes: str | None) -> tuple[int, bytes, str | None] | None:
    headers = CIMultiDict({k: v for k, v in {**GOOD, **changes}.items() if v is not None})
    response = watch.websocket_refusal(make_mocked_request("GET", "/api/v1/pods?watch=1", headers=headers))
    if response is None:
        return None
    assert response.body is None or isinstance(response.body, bytes)
    return response.status, response.body or b"", response.headers.get("Sec-WebSocket-Version")


@pytest.mark.parametrize("origin", ["https://localhost", "http://x:1/p", "/relative", "*", "chrome-extension:abc",
                                    "file:///tmp"])
def test_origins_x_net_accepts(origin: str) -> None:
    assert _refusal(Origin=origin) is None


@pytest.mark.parametrize("origin", [None, "", "null", "localhost", ":8080", "http://a\tb", "1http://x"])
def test_origins_x_net_refuses_with_an_empty_403(origin: str | None) -> None:
    assert _refusal(Origin=origin) == (403, b"", None)


def test_key_version_and_protocols() -> None:
    assert _refusal(**{"Sec-WebSocket-Key": None}) == (400, b"mismatch challenge/response", None)
    assert _refusal(**{"Sec-WebSocket-Version": "8"}) == (400, b"missing or bad WebSocket Version", "13")
    assert _refusal(**{"Sec-WebSocket-Version": None}) == (400, b"missing or bad WebSocket Version", "13")
    assert _refusal(**{"Sec-WebSocket-Protocol": "a, b"}) == (400, b"", None)
    assert _refusal(**{"Sec-WebSocket-Protocol": "v4.channel.k8s.io"}) is None
