"""``/healthz``, ``/livez``, ``/readyz`` and their ``/<check>`` forms, answered before authentication.

"ok", or 500 naming the failed check; ``?verbose`` lists the checks
(``/readyz`` adds the flow-control line of services/gateway/debug.py).
While starting or shutting down ``/readyz`` fails, so Envoy stops routing
here (kube's ``--shutdown-delay-duration``). Source: "Kubernetes API
health endpoints".
"""

from __future__ import annotations

from aiohttp import web

from services.gateway import debug
from services.gateway.backends import Backends
from services.gateway.context import Handler

HEALTH_PATHS = ("/healthz", "/livez", "/readyz")


def health(path: str, backends: Backends, verbose: bool = False) -> web.Response:
    """The answer of one health path (see the module docstring)."""
    if path.startswith("/readyz") and not backends.ready:
        reason = "shutdown" if backends.shutting_down else "bootstrap"
        return web.Response(status=500, text=f"[-]{reason} failed: reason withheld\nreadyz check failed\n")
    if verbose:
        lines = ["[+]ping ok", *(debug.readyz_lines(backends) if path.startswith("/readyz") else [])]
        return web.Response(text="\n".join(lines) + f"\n{path.strip('/').split('/')[0]} check passed\n")
    return web.Response(text="ok")


def with_health(handler: Handler, backends: Backends) -> Handler:
    """``handler`` with the health paths answered first (no authentication, no seat)."""
    prefixes = tuple(p + "/" for p in HEALTH_PATHS)

    async def serve(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in HEALTH_PATHS or path.startswith(prefixes):
            return health(path, backends, "verbose" in request.query)
        return await handler(request)

    return serve
