"""Where did my request spend its time: a ``Server-Timing`` header on every response (W3C Server Timing).

:func:`with_server_timing` gives each request a table of seconds per
stage; every unary call to a peer adds its duration under the peer's name
(kapi.grpcutil.CALL_TIMINGS: authentication, authorization, admission,
storage) and the priority-and-fairness filter adds its queue wait
(:func:`record`). When the response is prepared (:func:`on_response_prepare`,
registered by services/gateway/chain.py) the header lists them in
milliseconds, plus the gateway's total so far:
``Server-Timing: authn;dur=0.41, apf;dur=0.03, authz;dur=0.22, admission;dur=2.10, storage;dur=1.35, total;dur=4.62``.
A stage that did not run (or was answered from the gateway's caches) is
absent. Costs two clock reads per call.
"""

from __future__ import annotations

import time

from aiohttp import web

from kapi import grpcutil
from services.gateway.context import Handler

HEADER = "Server-Timing"
# Peer service names (as passed to grpcutil.call) -> metric names in the header, in request-path order.
NAMES = (("authentication", "authn"), ("apf", "apf"), ("authorization", "authz"), ("admission", "admission"),
         ("storage", "storage"))
_TIMINGS = web.RequestKey("kapi.server_timing", dict)
_START = web.RequestKey("kapi.server_timing.start", float)


def record(stage: str, seconds: float) -> None:
    """Add ``seconds`` to ``stage`` of the current request (no-op outside one)."""
    timings = grpcutil.CALL_TIMINGS.get(None)
    if timings is not None:
        timings[stage] = timings.get(stage, 0.0) + seconds


def header_value(timings: dict[str, float], total: float) -> str:
    """The header's value for ``timings`` (seconds per stage) and ``total`` seconds."""
    parts = [f"{name};dur={timings[stage] * 1000:.2f}" for stage, name in NAMES if stage in timings]
    parts.append(f"total;dur={total * 1000:.2f}")
    return ", ".join(parts)


def with_server_timing(handler: Handler) -> Handler:
    """``handler`` with a per-request timing table that calls and filters fill."""

    async def timed(request: web.Request) -> web.StreamResponse:
        timings: dict[str, float] = {}
        request[_TIMINGS], request[_START] = timings, time.perf_counter()
        token = grpcutil.CALL_TIMINGS.set(timings)
        try:
            return await handler(request)
        finally:
            grpcutil.CALL_TIMINGS.reset(token)

    return timed


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """aiohttp signal: write the header (for a stream, with what its start cost)."""
    timings = request.get(_TIMINGS)
    if timings is not None and HEADER not in response.headers:
        response.headers[HEADER] = header_value(timings, time.perf_counter() - request[_START])
