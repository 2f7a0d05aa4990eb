"""The service-account issuer's OpenID discovery documents ("Service account issuer discovery", KEP-1393).

``GET /.well-known/openid-configuration`` (``application/json``) and
``GET /openid/v1/jwks`` (``application/jwk-set+json``), fetched from the
authn service (which holds the keys) and cached by the AuthnClient. They are
non-resource requests and go through authorization like any other path
(kube grants them with the ``system:service-account-issuer-discovery``
ClusterRole). 404 when no issuer is configured.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from kapi import errors

if TYPE_CHECKING:
    from services.gateway.backends import Backends

OPENID_CONFIGURATION = "/.well-known/openid-configuration"
JWKS = "/openid/v1/jwks"
PATHS = frozenset({OPENID_CONFIGURATION, JWKS})


def handles(path: str) -> bool:
    """True for the two discovery paths (a trailing slash allowed)."""
    return (path.rstrip("/") or "/") in PATHS


async def respond(path: str, backends: Backends, timeout: float) -> web.Response:
    """The document at ``path``; 404 Status when no issuer is configured, 503 if authn is unreachable."""
    reply = await backends.authn.issuer_discovery(timeout=timeout)
    if path.rstrip("/") == JWKS:
        body, content_type = reply.jwks, "application/jwk-set+json"
    else:
        body, content_type = reply.openid_configuration, "application/json"
    if not body:
        raise errors.StatusError(404, "NotFound", "the server could not find the requested resource")
    response = web.Response(body=body, status=200)
    response.headers["Content-Type"] = content_type
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response
