"""``kapi.authn.v1.Authentication``: decode the request, run the authenticators or the issuer, encode the answer."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc

from kapi import errors, grpcutil
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from services.authn.authenticator import Authenticator, Request
from services.authn.serviceaccount import BoundObject, TokenIssuer

log = logging.getLogger(__name__)

# Narrower than the server's --allowed-callers: only the gateway asks for tokens to be signed (TokenRequest).
ISSUE_CALLERS = frozenset({"kapi-gateway"})


@dataclass(frozen=True)
class Authn:
    """What the servicer serves with (built from flags by :func:`services.authn.server.build_authn`).

    ``request`` is the whole request chain; ``tokens`` the bearer-token
    chain TokenReview uses (None: no token authenticator configured);
    ``api_audiences`` the default target audiences; ``issuer`` signs
    service-account tokens (None: no signing key); ``discovery`` the
    (openid-configuration, jwks) JSON documents (None: no issuer).
    """

    request: Authenticator
    tokens: Authenticator | None = None
    api_audiences: tuple[str, ...] = ()
    issuer: TokenIssuer | None = None
    discovery: tuple[bytes, bytes] | None = None


class AuthenticationServicer(authn_pb2_grpc.AuthenticationServicer):
    """Serves the Authentication RPCs over one :class:`Authn`."""

    def __init__(self, authn: Authn | Authenticator):
        self._authn = authn if isinstance(authn, Authn) else Authn(request=authn)

    async def Authenticate(self, request: authn_pb2.AuthenticateRequest,  # noqa: N802 - gRPC method name
                           context: grpc.aio.ServicerContext) -> authn_pb2.AuthenticateResponse:
        """The user of one HTTP request's credentials, valid for the API audiences.

        Fails with UNAUTHENTICATED (401 Status, message "Unauthorized", as
        kube-apiserver) when a credential is present but invalid, or when
        nothing recognised the request and anonymous auth is off.
        """
        req = Request(request.authorization, request.client_certificate_chain, request.forwarded_client_cert,
                      self._authn.api_audiences)
        try:
            result = await self._authn.request.authenticate(req)
        except Exception:  # an authenticator bug must not become an allow or a crash
            log.exception("authenticator failed")
            await errors.abort(context, errors.internal("authentication failed"))
            raise AssertionError("unreachable") from None
        if not result.ok or result.response is None:
            if result.error:
                log.info("Unable to authenticate the request: %s", result.error)
            await errors.abort(context, errors.unauthorized())
        response = result.response
        assert response is not None
        return authn_pb2.AuthenticateResponse(user=response.user.to_proto(), authenticator=response.authenticator,
                                              cache_ttl_seconds=response.cache_ttl_seconds)

    async def ReviewToken(self, request: authn_pb2.ReviewTokenRequest,  # noqa: N802 - gRPC method name
                          context: grpc.aio.ServicerContext) -> authn_pb2.ReviewTokenResponse:
        """TokenReview: the bearer-token authenticators over ``token`` for ``audiences`` (default: API audiences).

        Answers authenticated false (with the reason in ``error``) for a bad
        token, as kube's TokenReview REST; never fails for bad input.
        """
        audiences = tuple(request.audiences) or self._authn.api_audiences
        if self._authn.tokens is None or not request.token:
            return authn_pb2.ReviewTokenResponse(authenticated=False)
        try:
            result = await self._authn.tokens.authenticate(Request(f"Bearer {request.token}", audiences=audiences))
        except Exception:  # noqa: BLE001 - a bug in one authenticator is a refusal, not a 500
            log.exception("token authenticator failed")
            return authn_pb2.ReviewTokenResponse(authenticated=False, error="authentication failed")
        if not result.ok or result.response is None:
            return authn_pb2.ReviewTokenResponse(authenticated=False, error=result.error or "")
        response = result.response
        return authn_pb2.ReviewTokenResponse(authenticated=True, user=response.user.to_proto(),
                                             audiences=list(response.audiences))

    async def IssueServiceAccountToken(  # noqa: N802 - gRPC method name
            self, request: authn_pb2.IssueServiceAccountTokenRequest,
            context: grpc.aio.ServicerContext) -> authn_pb2.IssueServiceAccountTokenResponse:
        """Sign a service-account token (TokenRequest); 403 for callers other than the gateway.

        422 Invalid for an expiration below 10 minutes or above 2^32
        seconds; 503 when no ``--service-account-signing-key-file`` is set.
        """
        await grpcutil.require_peer(context, ISSUE_CALLERS)
        issuer = self._authn.issuer
        if issuer is None:
            await errors.abort(context, errors.unavailable("service account token signing is not configured "
                                                           "(--service-account-signing-key-file)"))
        assert issuer is not None
        ref = request.bound_object if request.HasField("bound_object") else None
        bound = BoundObject(ref.kind, ref.name, ref.uid, ref.api_version or "v1") if ref is not None else None
        try:
            issued = issuer.issue(request.namespace, request.name, request.uid, tuple(request.audiences),
                                  int(request.expiration_seconds), bound)
        except errors.StatusError as err:
            await errors.abort(context, err)
            raise AssertionError("unreachable") from None
        return authn_pb2.IssueServiceAccountTokenResponse(
            token=issued.token, expiration_timestamp=issued.expiration_timestamp, audiences=list(issued.audiences),
            expiration_seconds=issued.expiration_seconds)

    async def GetIssuerDiscovery(self, request: authn_pb2.GetIssuerDiscoveryRequest,  # noqa: N802
                                 context: grpc.aio.ServicerContext) -> authn_pb2.GetIssuerDiscoveryResponse:
        """The issuer's openid-configuration and JWKS documents (both empty without an issuer)."""
        if self._authn.discovery is None:
            return authn_pb2.GetIssuerDiscoveryResponse()
        config, jwks = self._authn.discovery
        return authn_pb2.GetIssuerDiscoveryResponse(openid_configuration=config, jwks=jwks)
