"""The request-info filter (kube's WithRequestInfo): resolve the URL once, and the request's timeout.

:func:`services.gateway.requestinfo.resolve` turns the method, path and
query into a RequestInfo; ``?timeout`` (a Go duration, 400 when
malformed) shortens ``--request-timeout``. Both go into the request
context; no later stage parses the URL again.
"""

from __future__ import annotations

from aiohttp import web

from kapi import errors
from kapi.duration import parse_duration
from services.gateway.backends import Config
from services.gateway.context import Handler, context
from services.gateway.requestinfo import resolve


def parse_go_duration(text: str) -> float:
    """A Go duration ("32s", "1m30s", "500ms") in seconds (:func:`kapi.duration.parse_duration`, strict);
    400 BadRequest if malformed."""
    try:
        return parse_duration(text, strict=True)
    except ValueError:
        raise errors.bad_request(f'invalid timeout "{text}"') from None  # noqa: B907


def with_request_info(handler: Handler, config: Config) -> Handler:
    """``handler`` with the context's ``info`` and ``timeout`` (seconds) set."""

    async def resolved(request: web.Request) -> web.StreamResponse:
        ctx = context(request)
        query = request.query
        ctx.info = resolve(request.method, request.path, query)
        ctx.timeout = config.request_timeout
        if query.get("timeout"):
            ctx.timeout = min(parse_go_duration(query["timeout"]), ctx.timeout) or ctx.timeout
        return await handler(request)

    return resolved
