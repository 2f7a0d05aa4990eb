"""``kapi.authn.v1.Authentication``: decode the request, run the authenticator chain, encode the user."""

from __future__ import annotations

import logging

import grpc

from kapi import errors
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from services.authn.authenticator import Authenticator, Request

log = logging.getLogger(__name__)


class AuthenticationServicer(authn_pb2_grpc.AuthenticationServicer):
    """Serves ``Authenticate`` over one authenticator chain (see :func:`services.authn.union.build`)."""

    def __init__(self, authenticator: Authenticator):
        self._authenticator = authenticator

    async def Authenticate(self, request: authn_pb2.AuthenticateRequest,  # noqa: N802 - gRPC method name
                           context: grpc.aio.ServicerContext) -> authn_pb2.AuthenticateResponse:
        """The user of one HTTP request's credentials.

        Fails with UNAUTHENTICATED (401 Status, message "Unauthorized", as
        kube-apiserver) when a credential is present but invalid, or when
        nothing recognised the request and anonymous auth is off.
        """
        req = Request(request.authorization, request.client_certificate_chain, request.forwarded_client_cert)
        try:
            result = await self._authenticator.authenticate(req)
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
