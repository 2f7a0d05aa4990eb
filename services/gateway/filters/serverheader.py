"""No ``Server`` response header, as kube-apiserver sends none.

aiohttp names itself in every response (``Server: Python/3.11
aiohttp/...``) unless a handler set the header; Go's net/http, which serves
kube-apiserver, writes no ``Server`` header at all. The hook runs after
aiohttp filled its defaults and before the headers are written, so it
drops the header from every response the gateway's application prepares
(Envoy passes the upstream's headers through: kapi/local/envoy.py,
``server_header_transformation: PASS_THROUGH``).
"""

from __future__ import annotations

from aiohttp import hdrs, web


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """aiohttp signal: remove the ``Server`` header aiohttp added by default."""
    response.headers.popall(hdrs.SERVER, None)
