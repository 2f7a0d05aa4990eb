"""``kapi.authz.v1.Authorization``: decode the request, run the authorizer union / rule resolvers, encode."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar, cast

import grpc

from kapi import errors, jsonutil
from kapi.attributes import UserInfo
from kapi.attributes import decode as decode_attributes
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from services.authz.authorizer import Authorizer, Decision, RuleResolver
from services.authz.escalation import EscalationChecker

log = logging.getLogger(__name__)

_DECISIONS = {
    Decision.ALLOW: authz_pb2.DECISION_ALLOW,
    Decision.DENY: authz_pb2.DECISION_DENY,
    Decision.NO_OPINION: authz_pb2.DECISION_NO_OPINION,
}
T = TypeVar("T")


async def _guard(context: grpc.aio.ServicerContext, work: Callable[[], Awaitable[T]], what: str) -> T:
    """Run ``work``; a StatusError fails the RPC with its Status, a bug fails it with 500 (never an allow)."""
    try:
        return await work()
    except errors.StatusError as err:
        await errors.abort(context, err)
    except Exception:  # an authorizer bug must never become an allow or a crash
        log.exception("%s failed", what)
        await errors.abort(context, errors.internal(f"{what} failed"))
    raise AssertionError("unreachable")


class AuthorizationServicer(authz_pb2_grpc.AuthorizationServicer):
    """Serves Authorize, RulesReview, CheckEscalation and WatchPolicyRevision over one authorizer union.

    ``revisions`` is the policy index (its revision is 0 and never changes
    when no mode reads policy); ``escalation`` is None without RBAC (every
    RBAC write then passes, as kube without the RBAC registry checks).
    """

    def __init__(self, authorizer: Authorizer, revisions: Any = None, escalation: EscalationChecker | None = None):
        self._authorizer = authorizer
        self._revisions = revisions
        self._escalation = escalation

    def _revision(self) -> int:
        return int(self._revisions.revision) if self._revisions is not None else 0

    async def Authorize(self, request: authz_pb2.AuthorizeRequest,  # noqa: N802 - gRPC method name
                        context: grpc.aio.ServicerContext) -> authz_pb2.AuthorizeResponse:
        """Allow, Deny or NoOpinion for one request's attributes.

        Fails with UNAVAILABLE (503) while the RBAC policy has not been
        synced from storage, so callers fail closed; never allows on error.
        """
        attributes = decode_attributes(request.attributes)
        revision = self._revision()
        result = await _guard(context, lambda: self._authorizer.authorize(attributes), "authorization")
        if result.error:
            log.warning("authorization evaluation error for %s: %s", attributes.user.username, result.error)
        return authz_pb2.AuthorizeResponse(decision=_DECISIONS[result.decision], reason=result.reason,
                                           evaluation_error=result.error, policy_revision=revision,
                                           no_cache=not result.cacheable,
                                           name_independent=result.cacheable and result.name_independent)

    async def RulesReview(self, request: authz_pb2.RulesReviewRequest,  # noqa: N802
                          context: grpc.aio.ServicerContext) -> authz_pb2.RulesReviewResponse:
        """The user's rules in ``namespace`` from every rule resolver (SelfSubjectRulesReview); 503 before sync."""
        user = UserInfo.from_proto(request.user)
        resolver = self._authorizer if hasattr(self._authorizer, "rules_for") else None

        async def work() -> authz_pb2.RulesReviewResponse:
            if resolver is None:
                return authz_pb2.RulesReviewResponse(incomplete=True)
            result = cast(RuleResolver, resolver).rules_for(user, request.namespace)
            return authz_pb2.RulesReviewResponse(
                resource_rules=[authz_pb2.ResourceRule(
                    verbs=r.get("verbs", []), api_groups=r.get("apiGroups", []), resources=r.get("resources", []),
                    resource_names=r.get("resourceNames", [])) for r in result.resource_rules],
                non_resource_rules=[authz_pb2.NonResourceRule(verbs=r.get("verbs", []),
                                                              non_resource_urls=r.get("nonResourceURLs", []))
                                    for r in result.non_resource_rules],
                incomplete=result.incomplete, evaluation_error=result.error)

        return await _guard(context, work, "rules review")

    async def CheckEscalation(self, request: authz_pb2.CheckEscalationRequest,  # noqa: N802
                              context: grpc.aio.ServicerContext) -> authz_pb2.CheckEscalationResponse:
        """Empty when the RBAC write may proceed; PERMISSION_DENIED (403), NOT_FOUND (404) or 503 otherwise."""
        attributes = decode_attributes(request.attributes)

        async def work() -> authz_pb2.CheckEscalationResponse:
            if self._escalation is not None:
                try:
                    obj = jsonutil.loads(request.object)
                    old = jsonutil.loads(request.old_object) if request.old_object else None
                except ValueError as exc:
                    raise errors.bad_request(f"undecodable object: {exc}") from None
                if not isinstance(obj, dict) or not isinstance(old, (dict, type(None))):
                    raise errors.bad_request("the object must be a JSON object")
                await self._escalation.check(attributes, obj, old)
            return authz_pb2.CheckEscalationResponse()

        return await _guard(context, work, "escalation check")

    async def WatchPolicyRevision(self, request: authz_pb2.WatchPolicyRevisionRequest,  # noqa: N802
                                  context: grpc.aio.ServicerContext) -> AsyncIterator[authz_pb2.PolicyRevision]:
        """The revision now, then each new revision until the client goes away."""
        seen = self._revision()
        yield authz_pb2.PolicyRevision(revision=seen)
        if self._revisions is None:  # no policy source: the revision never changes
            await asyncio.Event().wait()
        while True:
            seen = await self._revisions.wait_revision_change(seen)
            yield authz_pb2.PolicyRevision(revision=seen)
