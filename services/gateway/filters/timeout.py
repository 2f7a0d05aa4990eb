"""The request deadline (kube's WithTimeoutForNonLongRunningRequests): 504 Timeout once it passes.

The deadline is the request's ``?timeout`` (capped by ``--request-timeout``),
parsed by the request-info filter; watches and other long-running requests
are not bounded. It wraps the routes only: authentication, impersonation,
flow control and authorization already bound their own RPCs by the same
timeout, and a request that waited its time in an APF queue is answered
429 there, as in kube.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from kapi import errors
from services.gateway.context import Handler, context


def with_timeout(handler: Handler) -> Handler:
    """``handler`` cancelled after the request's timeout (seconds) with 504 Timeout; long-running ones run free."""

    async def bounded(request: web.Request) -> web.StreamResponse:
        ctx = context(request)
        if ctx.info is None or ctx.info.long_running:
            return await handler(request)
        try:
            async with asyncio.timeout(ctx.timeout):
                return await handler(request)
        except TimeoutError:
            raise errors.request_timeout() from None

    return bounded
