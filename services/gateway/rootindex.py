"""``GET /``: the paths this server answers, as kube-apiserver's index handler lists them.

kube's IndexLister writes ``metav1.RootPaths`` with WriteRawJSON (``json.MarshalIndent`` with two spaces, no
trailing newline): every path its muxes list, sorted. kapi lists what it serves the same way: the discovery
roots and each group and version, the health endpoints with their named checks, the OpenAPI documents,
``/metrics``, ``/version`` and the service-account issuer documents. Authorization decides first, as for any
non-resource URL (only an administrator may read ``/`` under the default roles).
"""

from __future__ import annotations

import json

from aiohttp import web

from kapi.resources import REGISTRY
from services.gateway import issuerdiscovery
from services.gateway.backends import Backends
from services.gateway.filters.health import HEALTH_PATHS, named_checks


def paths(backends: Backends) -> list[str]:
    """The sorted list of served root paths."""
    out = {"/api", "/api/v1", "/apis", "/apis/", "/metrics", "/openapi/v2", "/openapi/v3", "/openapi/v3/",
           "/version", *issuerdiscovery.PATHS}
    for row in REGISTRY.rows:
        if row.group and REGISTRY.is_static(row):
            out.update((f"/apis/{row.group}", f"/apis/{row.group}/{row.version}"))
    for root in HEALTH_PATHS:
        out.add(root)
        out.update(f"{root}/{name}" for name, _ in named_checks(root.lstrip("/"), backends))
    return sorted(out)


def response(backends: Backends) -> web.Response:
    """The ``{"paths": [...]}`` answer, encoded as Go's json.MarshalIndent(object, "", "  ")."""
    return web.Response(body=json.dumps({"paths": paths(backends)}, indent=2).encode(), status=200,
                        content_type="application/json")
