"""Server-Timing: calls and the APF wait add to the request's table; the header lists them in milliseconds."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kapi import grpcutil
from services.gateway.filters import servertiming


def test_header_value_in_request_path_order() -> None:
    value = servertiming.header_value({"storage": 0.00135, "authentication": 0.0004, "apf": 0.0}, 0.0046)
    assert value == "authn;dur=0.40, apf;dur=0.00, storage;dur=1.35, total;dur=4.60"


async def test_calls_in_a_request_are_timed_and_headed() -> None:
    async def rpc(request: object, timeout: float, metadata: object) -> str:
        await asyncio.sleep(0.01)
        return "ok"

    async def handle(request: web.Request) -> web.StreamResponse:
        await grpcutil.call("storage", rpc, None, timeout=1)
        await grpcutil.call("storage", rpc, None, timeout=1)
        servertiming.record("apf", 0.002)
        if request.query.get("watch"):
            stream = web.StreamResponse()
            await stream.prepare(request)
            return stream
        return web.json_response({})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", servertiming.with_server_timing(handle))
    app.on_response_prepare.append(servertiming.on_response_prepare)
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        for query in ("", "?watch=1"):
            response = await client.get("/api/v1/namespaces/d/configmaps" + query)
            parts = dict(p.split(";dur=") for p in response.headers["Server-Timing"].split(", "))
            assert list(parts) == ["apf", "storage", "total"]
            assert float(parts["storage"]) >= 20 and float(parts["apf"]) == 2.0
            assert float(parts["total"]) >= float(parts["storage"])
    finally:
        await client.close()
    assert grpcutil.CALL_TIMINGS.get(None) is None  # nothing leaks outside a request
