"""``kapi.authz.v1.Authorization``: decode the attributes, run the authorizer union, encode the decision."""

from __future__ import annotations

import logging
from collections.abc import Callable

import grpc

from kapi import errors
from kapi.attributes import Attributes
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from services.authz.authorizer import Authorizer, Decision

log = logging.getLogger(__name__)

_DECISIONS = {
    Decision.ALLOW: authz_pb2.DECISION_ALLOW,
    Decision.DENY: authz_pb2.DECISION_DENY,
    Decision.NO_OPINION: authz_pb2.DECISION_NO_OPINION,
}


class AuthorizationServicer(authz_pb2_grpc.AuthorizationServicer):
    """Serves ``Authorize`` over one authorizer (the union built from ``--authorization-mode``).

    ``policy_revision`` returns the revision the policy index is at (0 when
    no mode reads policy).
    """

    def __init__(self, authorizer: Authorizer, policy_revision: Callable[[], int] = lambda: 0):
        self._authorizer = authorizer
        self._policy_revision = policy_revision

    async def Authorize(self, request: authz_pb2.AuthorizeRequest,  # noqa: N802 - gRPC method name
                        context: grpc.aio.ServicerContext) -> authz_pb2.AuthorizeResponse:
        """Allow, Deny or NoOpinion for one request's attributes.

        Fails with UNAVAILABLE (503) while the RBAC policy has not been
        synced from storage, so callers fail closed; never allows on error.
        """
        attributes = Attributes.from_proto(request.attributes)
        revision = self._policy_revision()
        try:
            result = await self._authorizer.authorize(attributes)
        except errors.StatusError as err:
            await errors.abort(context, err)
            raise AssertionError("unreachable") from None
        except Exception:  # an authorizer bug must never become an allow or a crash
            log.exception("authorizer failed")
            await errors.abort(context, errors.internal("authorization failed"))
            raise AssertionError("unreachable") from None
        if result.error:
            log.warning("authorization evaluation error for %s: %s", attributes.user.username, result.error)
        return authz_pb2.AuthorizeResponse(decision=_DECISIONS[result.decision], reason=result.reason,
                                           evaluation_error=result.error, policy_revision=revision)
