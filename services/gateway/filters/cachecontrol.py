"""``Cache-Control: no-cache, private`` on every response (k8s.io/apiserver filters.WithCacheControl).

Everything the API serves is behind authentication and authorization, so
kube-apiserver tells caches not to reuse an answer for someone else, unless
the handler chose its own policy (the hashed OpenAPI v3 documents are
``public, immutable``, the issuer discovery documents ``public, max-age=3600``, the aggregated
discovery documents and their 304s ``public``: discovery.aggregated_response).
401, 403 and 429 answers of the chain's filters carry it too.
"""

from __future__ import annotations

from aiohttp import web

HEADER = "Cache-Control"
VALUE = "no-cache, private"


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """aiohttp signal: set ``Cache-Control`` to ``no-cache, private`` when the handler set none."""
    if HEADER not in response.headers:
        response.headers[HEADER] = VALUE
