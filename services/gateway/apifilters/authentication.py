"""The authentication filter (kube's WithAuthentication): who sent the request, or 401.

The credentials a request presents — ``Authorization`` (bearer token or
basic), the TLS client certificate, or, on a connection from the
configured front proxy (Envoy, by its certificate's CN), the
``x-forwarded-client-cert`` header — go to the authn service (cached
briefly by the gateway's client, services/gateway/backends.py). 401 when
nothing authenticates and anonymous access is off; 503 when authn is
unreachable (fail closed).
"""

from __future__ import annotations

import ssl

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding

from services.gateway import metrics
from services.gateway.backends import Backends, Credentials
from services.gateway.context import Handler, context


def credentials(request: web.Request, front_proxy_names: frozenset[str]) -> Credentials:
    """What the request presents, trusting x-forwarded-client-cert only from the front proxy (by its cert CN)."""
    authorization = request.headers.get("Authorization", "")
    ssl_object: ssl.SSLObject | None = request.transport.get_extra_info("ssl_object") if request.transport else None
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return Credentials(authorization=authorization)
    cert = x509.load_der_x509_certificate(der)
    names = [a.value for a in cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)]
    if names and names[0] in front_proxy_names:
        return Credentials(authorization=authorization,
                           forwarded_client_cert=request.headers.get("x-forwarded-client-cert", ""))
    return Credentials(authorization=authorization,
                       client_certificate_chain=cert.public_bytes(Encoding.PEM).decode())


def with_authentication(handler: Handler, backends: Backends) -> Handler:
    """``handler`` with the context's ``user`` set; raises 401 Unauthorized or 503 (authn unreachable)."""

    async def authenticated(request: web.Request) -> web.StreamResponse:
        ctx = context(request)
        creds = credentials(request, backends.config.front_proxy_names)
        with metrics.authentication():
            ctx.user = await backends.authn.authenticate(creds, timeout=ctx.timeout)
        return await handler(request)

    return authenticated
