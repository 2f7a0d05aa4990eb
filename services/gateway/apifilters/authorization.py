"""The authorization filter (kube's WithAuthorization): may the acting user do this, or 403.

The request's Attributes (user, verb, group/version/resource,
subresource, namespace, name; a list or watch with ``fieldSelector=
metadata.name=x`` names ``x``, as kube) go to the authz service, whose
decisions the gateway caches while the streamed policy revision is
unchanged (services/gateway/backends.py). Refusals use kube's 403 wording
(:func:`forbidden`); authz unreachable is 503 (fail closed).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from services.gateway import audit
from services.gateway.backends import Backends
from services.gateway.context import Handler, context
from services.gateway.requestinfo import RequestInfo

# The audit annotations of every authorized request (k8s.io/apiserver pkg/endpoints/filters/authorization.go).
DECISION_ANNOTATION = "authorization.k8s.io/decision"
REASON_ANNOTATION = "authorization.k8s.io/reason"
DECISION_ALLOW = "allow"
DECISION_FORBID = "forbid"
REASON_ERROR = "internal error"  # the authorizer failed (kapi: authz unreachable, 503)


def attributes(info: RequestInfo, user: UserInfo, query: Any) -> Attributes:
    """Authorization attributes; a list/watch with ``fieldSelector=metadata.name=x`` names ``x`` (as kube)."""
    name = info.name
    if info.verb in ("list", "watch") and not name:
        selector = query.get("fieldSelector", "")
        for term in selector.split(","):
            key, sep, value = term.partition("==") if "==" in term else term.partition("=")
            if sep and key.strip() == "metadata.name" and "!" not in key and value and "/" not in value:
                name = value.strip()
                break  # kube's RequiresExactMatch: the first such term
    return Attributes(user=user, verb=info.verb, resource_request=info.is_resource_request, path=info.path,
                      api_group=info.api_group, api_version=info.api_version, resource=info.resource,
                      subresource=info.subresource, namespace=info.namespace, name=name)


def forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
    """kube's 403: ``configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" ...``."""
    user = attrs.user.username
    if not attrs.resource_request:
        message = f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    else:
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        where = (f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope")
        message = f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" {where}'
    if reason:
        message = f"{message}: {reason}"
    if not attrs.resource_request:
        return errors.forbidden_message(f"forbidden: {message}")
    return errors.forbidden(attrs.resource, attrs.name, message, attrs.api_group)


def with_authorization(handler: Handler, backends: Backends) -> Handler:
    """``handler`` run only when authz allows the context's Attributes; raises 403 Forbidden or 503.

    Annotates the request's audit events as kube's WithAuthorization:
    ``authorization.k8s.io/decision`` ``allow``/``forbid`` and
    ``authorization.k8s.io/reason`` the authorizer's reason (RBAC: ``RBAC:
    allowed by ClusterRoleBinding "x" of ClusterRole "y" to Group "z"``), or
    only the reason ``internal error`` when authz could not decide.
    """

    async def authorized(request: web.Request) -> web.StreamResponse:
        attrs = context(request).attrs
        assert attrs is not None
        try:
            allowed, reason = await backends.authz.authorize(attrs, timeout=context(request).timeout)
        except errors.StatusError:
            audit.annotate(request, REASON_ANNOTATION, REASON_ERROR)
            raise
        audit.annotate(request, DECISION_ANNOTATION, DECISION_ALLOW if allowed else DECISION_FORBID)
        audit.annotate(request, REASON_ANNOTATION, reason)
        if not allowed:
            raise forbidden(attrs, reason)
        return await handler(request)

    return authorized
