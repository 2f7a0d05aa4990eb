"""What the handler chain learns about one request, filter by filter (kube's request context values).

The filters of services/gateway/chain.py fill one :class:`RequestContext`
kept on the aiohttp request: the audit ID (panic recovery), the
RequestInfo and timeout (request info), the authenticated and then the
acting user (authentication, impersonation) and the authorization
Attributes. Later filters and the routes read it; nothing re-parses the URL.
Its ``warnings`` are the request's warning recorder (services/gateway/warning.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from kapi.attributes import Attributes, UserInfo
from services.gateway.requestinfo import RequestInfo

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class RequestContext:
    """Per-request state; fields are set once, in chain order. ``timeout`` is in seconds. ``warnings`` is the
    warning recorder: texts added as the request runs, sent as ``Warning`` headers with whatever it answers
    (kube's ``warning.AddWarning`` on the request context)."""

    audit_id: str
    info: RequestInfo | None = None
    timeout: float = 0.0
    user: UserInfo | None = None
    attrs: Attributes | None = None
    warnings: list[str] = field(default_factory=list)


CONTEXT = web.RequestKey("kapi.context", RequestContext)


def context(request: web.Request) -> RequestContext:
    """The request's context (KeyError before the panic-recovery filter created it: a chain-order bug)."""
    return request[CONTEXT]
