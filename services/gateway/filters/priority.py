"""API Priority and Fairness: a seat for every request (kube's WithPriorityAndFairness).

The gateway asks the flowcontrol service over its long-lived stream
(services/gateway/flowcontrol.py) for a seat for the request's Attributes:
queued, admitted, or refused with 429 and Retry-After; long-running
requests (watches) hold a seat only while they start. When flowcontrol is
unreachable the gateway's local max-in-flight limits apply (docs/architecture.md,
"Failure policy"). With ``--apf-seat-leases`` a request whose classification
the gateway remembers may run on a seat leased to it instead of a Start
(docs/architecture.md, "API Priority and Fairness"). The ``X-Kubernetes-PF-*-UID`` headers and the debug
seat bookkeeping are services/gateway/debug.py.
"""

from __future__ import annotations

import time

from aiohttp import web

from services.gateway import debug
from services.gateway.backends import Backends
from services.gateway.context import Handler, context
from services.gateway.filters import servertiming


def with_priority_and_fairness(handler: Handler, backends: Backends) -> Handler:
    """``handler`` run while holding an APF seat; 429 TooManyRequests when the priority level is full."""

    async def seated(request: web.Request) -> web.StreamResponse:
        ctx = context(request)
        assert ctx.info is not None and ctx.attrs is not None
        seat = debug.new_seat(request, ctx.info.long_running)
        start = time.perf_counter()
        async with backends.flowcontrol.seat(ctx.attrs, ctx.info.long_running, ctx.timeout, seat,
                                             debug.list_limit(request.query)):
            servertiming.record("apf", time.perf_counter() - start)  # the queue wait, for Server-Timing
            return await handler(request)

    return seated
