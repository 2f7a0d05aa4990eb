"""``/healthz``, ``/livez``, ``/readyz`` and ``/<path>/<check>``, answered before authentication.

kube's named checks and answer format (services/gateway/healthz.py):
``ok`` or, with ``?verbose``, one ``[+]<check> ok`` line each; 500 with
``[-]<check> failed: reason withheld`` on any failure; ``?exclude=<check>``.
``/readyz`` fails while the gateway starts (post-start hooks not finished),
while storage cannot reach etcd (``etcd``, ``etcd-readiness``) and from
SIGTERM on (``shutdown``), so Envoy stops routing here (kube's
``--shutdown-delay-duration``). A path naming no check falls through to the
chain (404). Source: "Kubernetes API health endpoints".
"""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from services.gateway import healthz
from services.gateway.backends import Backends
from services.gateway.context import Handler

HEALTH_PATHS = ("/healthz", "/livez", "/readyz")


def named_checks(path: str, backends: Backends) -> list[tuple[str, healthz.Check]]:
    """The checks of ``path`` ("livez", "readyz" or "healthz") over this gateway's state."""
    def informers() -> str:
        crds = backends.custom_resources
        return "" if crds is not None and crds.synced else "CustomResourceDefinitions not listed yet"

    return healthz.checks(path, backends.storage_health, backends.post_start_hooks, informers,
                          backends.shutting_down)


def health(path: str, backends: Backends, request: web.Request | None = None) -> web.Response | None:
    """The answer of one health path (``/readyz``, ``/readyz/etcd``, ...), or None if it names no check."""
    root, slash, name = path[1:].partition("/")
    if slash and not name:
        return None  # "/readyz/": no such check (kube's mux answers 404)
    named = named_checks(root, backends)
    if name:
        answer = healthz.render_one(named, name)
        if answer is None:
            return None
    else:
        params = request.query if request is not None else None
        answer = healthz.render(root, named, params, params.getall("exclude", []) if params is not None else ())
    return web.Response(status=answer.status, text=answer.text, headers=healthz.HEADERS)


class Drain:
    """What the shutdown delay waits on: when the last request came, and when a failing ``/readyz`` went out.

    Times are ``time.monotonic()`` seconds (0 = never). Envoy's active health
    check stops routing here once it has read one failing ``/readyz``
    (``unhealthy_threshold`` 1), so the delay can end soon after that.
    """

    def __init__(self) -> None:
        self.last_request = 0.0
        self.readyz_failed = 0.0


DRAIN = Drain()
DRAIN_MARGIN_SECONDS = 0.5  # after a failing /readyz went out: requests the proxy routed just before it finish arriving
QUIET_SECONDS = 1.5  # no request at all for this long (more than Envoy's 1 s health-check interval): nobody to drain


async def drain(backends: Backends, delay: float, state: Drain = DRAIN) -> float:
    """kube's ``--shutdown-delay-duration``: with ``/readyz`` already failing, wait up to ``delay`` seconds for
    the load balancer to stop sending requests here; returns the seconds waited.

    Ends early DRAIN_MARGIN_SECONDS after a failing ``/readyz`` was answered
    (the health checker has seen it), or once no request arrived for
    QUIET_SECONDS (no proxy is sending: e.g. Envoy was stopped first).
    """
    assert backends.shutting_down
    start = time.monotonic()
    while True:
        now = time.monotonic()
        if now - start >= delay:
            break
        if state.readyz_failed and now - state.readyz_failed >= DRAIN_MARGIN_SECONDS:
            break
        if now - max(state.last_request, start) >= QUIET_SECONDS:
            break
        await asyncio.sleep(0.05)
    return time.monotonic() - start


def with_health(handler: Handler, backends: Backends, state: Drain = DRAIN) -> Handler:
    """``handler`` with the health paths answered first (no authentication, no seat)."""
    prefixes = tuple(p + "/" for p in HEALTH_PATHS)

    async def serve(request: web.Request) -> web.StreamResponse:
        path = request.path
        state.last_request = time.monotonic()
        if path in HEALTH_PATHS or path.startswith(prefixes):
            answer = health(path, backends, request)
            if answer is not None:
                if backends.shutting_down and answer.status != 200 and path.startswith("/readyz") \
                        and not state.readyz_failed:
                    state.readyz_failed = time.monotonic()
                return answer
        response = await handler(request)
        if backends.shutting_down and not response.prepared:
            # Draining: "Connection: close", so the proxy holds no idle connection here that closing at exit
            # could reset under a request it just sent (kube's --shutdown-send-retry-after closes them too).
            response.force_close()
        return response

    return serve
