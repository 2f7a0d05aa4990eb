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
    root, _, name = path.strip("/").partition("/")
    named = named_checks(root, backends)
    if name:
        answer = healthz.render_one(named, name)
        if answer is None:
            return None
    else:
        params = request.query if request is not None else None
        answer = healthz.render(root, named, params, params.getall("exclude", []) if params is not None else ())
    return web.Response(status=answer.status, text=answer.text, headers=healthz.HEADERS)


def with_health(handler: Handler, backends: Backends) -> Handler:
    """``handler`` with the health paths answered first (no authentication, no seat)."""
    prefixes = tuple(p + "/" for p in HEALTH_PATHS)

    async def serve(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in HEALTH_PATHS or path.startswith(prefixes):
            answer = health(path, backends, request)
            if answer is not None:
                return answer
        return await handler(request)

    return serve
