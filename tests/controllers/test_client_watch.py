"""The controllers' REST client reads watch events as large as the objects the API accepts."""

from __future__ import annotations

import json

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from services.controllers.client import MAX_WATCH_EVENT_BYTES, ApiError, Client, Config


async def _serve(events: list[bytes]) -> TestServer:
    async def watch(request: web.Request) -> web.StreamResponse:
        reply = web.StreamResponse(headers={"Content-Type": "application/json"})
        await reply.prepare(request)
        for event in events:
            await reply.write(event)
        await reply.write_eof()
        return reply

    app = web.Application()
    app.router.add_get("/api/v1/configmaps", watch)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


async def test_watch_event_over_a_mebibyte() -> None:
    """A ~1 MiB ConfigMap's MODIFIED event reaches the watcher whole (aiohttp's default stopped at 512 KiB)."""
    data = "x" * (1024 * 1024)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big", "resourceVersion": "7"},
          "data": {"blob": data}}
    line = json.dumps({"type": "MODIFIED", "object": cm}).encode() + b"\n"
    server = await _serve([line[:300_000], line[300_000:], b'{"type":"BOOKMARK","object":{}}\n'])
    client = Client(Config(server=str(server.make_url(""))))
    try:
        events = [e async for e in client.watch("/api/v1/configmaps", "1")]
    finally:
        await client.close()
        await server.close()
    assert [e["type"] for e in events] == ["MODIFIED", "BOOKMARK"]
    assert events[0]["object"]["data"]["blob"] == data


async def test_watch_event_over_the_bound_is_a_503() -> None:
    """A line beyond MAX_WATCH_EVENT_BYTES ends the watch as ApiError 503, as other stream failures do."""
    server = await _serve([b'{"type":"ADDED","object":"' + b"y" * (MAX_WATCH_EVENT_BYTES + 10) + b'"}\n'])
    client = Client(Config(server=str(server.make_url(""))))
    try:
        with pytest.raises(ApiError) as err:
            _ = [e async for e in client.watch("/api/v1/configmaps", "1")]
    finally:
        await client.close()
        await server.close()
    assert err.value.code == 503
