"""The authentication filter (kube's WithAuthentication): who sent the request, or 401.

The credentials a request presents — ``Authorization`` (bearer token or
basic), the TLS client certificate, or, on a connection from the
configured front proxy (Envoy: a certificate from the front-proxy CA with
an allowed CN), the ``x-forwarded-client-cert`` header — go to the authn service (cached
briefly by the gateway's client, services/gateway/backends.py). 401 when
nothing authenticates and anonymous access is off; 503 when authn is
unreachable (fail closed).
"""

from __future__ import annotations

import ssl

from aiohttp import web
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.serialization import Encoding

from services.gateway import metrics
from services.gateway.backends import Backends, Credentials
from services.gateway.context import Handler, context

# (client certificate DER, CA DERs) -> issued by one of them; per-connection certificates repeat, so the
# signature check runs once per certificate, not per request. Bounded: cleared when full.
_ISSUED: dict[tuple[bytes, tuple[bytes, ...]], bool] = {}
_ISSUED_MAX = 1024


def issued_by(cert: x509.Certificate, der: bytes, cas: tuple[bytes, ...]) -> bool:
    """True if one of ``cas`` (DER certificates) signed ``cert`` (whose DER is ``der``)."""
    key = (der, cas)
    if key not in _ISSUED:
        if len(_ISSUED) >= _ISSUED_MAX:
            _ISSUED.clear()
        ok = False
        for ca in cas:
            try:
                cert.verify_directly_issued_by(x509.load_der_x509_certificate(ca))
                ok = True
                break
            except (ValueError, TypeError, InvalidSignature):
                continue
        _ISSUED[key] = ok
    return _ISSUED[key]


def credentials(request: web.Request, front_proxy_names: frozenset[str],
                front_proxy_cas: tuple[bytes, ...] = ()) -> Credentials:
    """What the request presents, trusting x-forwarded-client-cert only from the front proxy.

    The front proxy is a connection whose client certificate was issued by
    the front-proxy CA (``front_proxy_cas``, ``--requestheader-client-ca-file``)
    and whose CN is in ``front_proxy_names`` (``--requestheader-allowed-names``;
    empty: any), as kube's request-header authenticator requires. Any other
    certificate is the client's own: a cluster-CA certificate with CN
    ``front-proxy-client`` (an approved CSR) is that user, its header ignored.
    """
    authorization = request.headers.get("Authorization", "")
    ssl_object: ssl.SSLObject | None = request.transport.get_extra_info("ssl_object") if request.transport else None
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return Credentials(authorization=authorization)
    front_proxy, pem = peer_certificate(der, front_proxy_names, front_proxy_cas)
    if front_proxy:
        return Credentials(authorization=authorization,
                           forwarded_client_cert=request.headers.get("x-forwarded-client-cert", ""))
    return Credentials(authorization=authorization, client_certificate_chain=pem)


# (peer certificate DER, allowed names, front-proxy CA DERs) -> what peer_certificate answers. A connection's
# certificate repeats on every request it carries: parsed once per certificate, not per request (the parse, the
# CN lookup and the PEM encoding were about 4% of a GET's gateway CPU). Bounded: cleared when full.
_PEERS: dict[tuple[bytes, frozenset[str], tuple[bytes, ...]], tuple[bool, str]] = {}
_PEERS_MAX = 1024


def peer_certificate(der: bytes, front_proxy_names: frozenset[str],
                     front_proxy_cas: tuple[bytes, ...]) -> tuple[bool, str]:
    """(the connection is the front proxy's, the certificate as PEM) for the peer certificate ``der``.

    The front proxy's certificate was issued by one of ``front_proxy_cas`` and
    its first CN is in ``front_proxy_names`` (empty: any CN), as kube's
    request-header authenticator requires (k8s.io/apiserver
    pkg/authentication/request/headerrequest). A pure function of its
    arguments, remembered per certificate. Raises ValueError for a DER that
    does not parse (the TLS layer accepted it, so it does not happen).
    """
    key = (der, front_proxy_names, front_proxy_cas)
    known = _PEERS.get(key)
    if known is None:
        cert = x509.load_der_x509_certificate(der)
        names = [a.value for a in cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)]
        allowed = not front_proxy_names or bool(names and names[0] in front_proxy_names)
        front_proxy = bool(allowed and front_proxy_cas and issued_by(cert, der, front_proxy_cas))
        known = (front_proxy, "" if front_proxy else cert.public_bytes(Encoding.PEM).decode())
        if len(_PEERS) >= _PEERS_MAX:
            _PEERS.clear()
        _PEERS[key] = known
    return known


def with_authentication(handler: Handler, backends: Backends) -> Handler:
    """``handler`` with the context's ``user`` set; raises 401 Unauthorized or 503 (authn unreachable)."""

    async def authenticated(request: web.Request) -> web.StreamResponse:
        ctx = context(request)
        creds = credentials(request, backends.config.front_proxy_names, backends.config.front_proxy_cas)
        with metrics.authentication():
            ctx.user = await backends.authn.authenticate(creds, timeout=ctx.timeout)
        return await handler(request)

    return authenticated
