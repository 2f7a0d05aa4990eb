"""User impersonation (k8s.io/apiserver pkg/endpoints/filters/impersonation.go; "Authenticating", "User impersonation").

Runs right after authentication (:func:`with_impersonation`). ``Impersonate-User``, ``Impersonate-Group``
(repeatable), ``Impersonate-Uid`` and ``Impersonate-Extra-<key>``
(repeatable; the key is lower-cased and percent-decoded) ask to act as
another user. Each requested item needs the ``impersonate`` verb, checked
with the authz service as the authenticated user, on:

==========================  =========================================================
``Impersonate-User``        ``users`` (name), or ``serviceaccounts`` (namespace, name)
                            for ``system:serviceaccount:<ns>:<name>``
``Impersonate-Group``       ``groups`` (name)
``Impersonate-Extra-<key>`` ``userextras/<key>`` (name = value), group authentication.k8s.io
``Impersonate-Uid``         ``uids`` (name), group authentication.k8s.io
==========================  =========================================================

The first refusal is kube's 403 (``users "bob" is forbidden: User "alice"
cannot impersonate resource "users" in API group "" at the cluster scope``).
Groups, extra or uid without a user are refused with 400 (kube answers 500
there; a bad request must not be a server error here). The impersonated
user gets ``system:authenticated`` (or ``system:unauthenticated`` for
``system:anonymous``) and, for a ServiceAccount without requested groups,
its fixed groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import unquote

from aiohttp import web
from multidict import CIMultiDictProxy

from kapi import errors
from kapi.attributes import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS,
    Attributes,
    UserInfo,
    split_service_account,
)
from services.gateway import audit
from services.gateway.apifilters.authorization import attributes, forbidden
from services.gateway.backends import Backends
from services.gateway.context import Handler, context

USER_HEADER = "Impersonate-User"
GROUP_HEADER = "Impersonate-Group"
UID_HEADER = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"


class Authorizer(Protocol):
    """The gateway's AuthzClient as this module uses it."""

    async def authorize(self, attrs: Attributes, timeout: float = ...) -> tuple[bool, str]:
        """(allowed, reason)."""
        ...


@dataclass(frozen=True)
class Impersonation:
    """The outcome: the user to act as and the authenticated user who asked (kept for the audit record)."""

    user: UserInfo
    impersonator: UserInfo


def requested(headers: Mapping[str, str]) -> bool:
    """True if any impersonation header is present."""
    return any(k.lower().startswith("impersonate-") for k in headers)


def _checks(user: UserInfo, headers: CIMultiDictProxy[str] | Mapping[str, Any]
            ) -> tuple[list[Attributes], UserInfo]:
    """The authorization checks and the resulting user (before group defaults), in kube's order."""
    getall = headers.getall if hasattr(headers, "getall") else (lambda k, d=(): [headers[k]] if k in headers else d)
    username = headers.get(USER_HEADER, "")
    groups: list[str] = list(getall(GROUP_HEADER, []))
    extra: dict[str, list[str]] = {}
    uid = headers.get(UID_HEADER, "")
    checks: list[Attributes] = []

    def check(resource: str, name: str, group: str = "", namespace: str = "", subresource: str = "") -> None:
        checks.append(Attributes(user=user, verb="impersonate", resource_request=True, api_group=group,
                                 api_version="v1", resource=resource, subresource=subresource,
                                 namespace=namespace, name=name))

    sa = split_service_account(username) if username else None
    if sa is not None:
        check("serviceaccounts", sa[1], namespace=sa[0])
    elif username:
        check("users", username)
    for group in groups:
        check("groups", group)
    for header in headers:
        if header.lower().startswith(EXTRA_PREFIX):
            key = unquote(header[len(EXTRA_PREFIX):].lower())
            if key in extra:
                continue
            values = list(getall(header, []))
            extra[key] = values
            for value in values:
                check("userextras", value, AUTHENTICATION_GROUP, subresource=key)
    if uid:
        check("uids", uid, AUTHENTICATION_GROUP)
    if (groups or extra or uid) and not username:
        asked = [*(f"Group {g}" for g in groups), *(f"UserExtra {k}" for k in extra), *([f"UID {uid}"] if uid else [])]
        raise errors.bad_request(f"requested [{', '.join(asked)}] without impersonating a user")
    if sa is not None and not groups:
        groups = ["system:serviceaccounts", f"system:serviceaccounts:{sa[0]}"]
    target = UserInfo(username, uid, tuple(groups), tuple(sorted((k, tuple(v)) for k, v in extra.items())))
    return checks, target


def _with_default_groups(user: UserInfo) -> UserInfo:
    groups = list(user.groups)
    if user.username != ANONYMOUS:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(user.username, user.uid, tuple(groups), user.extra)


async def impersonate(headers: CIMultiDictProxy[str] | Mapping[str, Any], user: UserInfo, authz: Authorizer,
                      timeout: float) -> Impersonation | None:
    """The impersonated user for a request's ``headers``, or None when none is requested.

    Raises 400 for groups/extra/uid without a user, kube's 403 on the first
    refused check, 503 when authz is unreachable.
    """
    if not requested(headers):
        return None
    checks, target = _checks(user, headers)
    if not checks:
        return None
    for attrs in checks:
        allowed, reason = await authz.authorize(attrs, timeout=timeout)
        if not allowed:
            raise forbidden(attrs, reason)
    return Impersonation(_with_default_groups(target), user)


def with_impersonation(handler: Handler, backends: Backends) -> Handler:
    """``handler`` with the context's ``user`` replaced by the impersonated one (when asked and allowed).

    The acting user is final after this filter, so it also fixes the
    request's authorization Attributes (``context.attrs``) and records the
    audit RequestReceived stage. Raises 400/403/503 as :func:`impersonate`.
    """

    async def acting(request: web.Request) -> web.StreamResponse:
        ctx = context(request)
        assert ctx.user is not None and ctx.info is not None
        impersonation = await impersonate(request.headers, ctx.user, backends.authz, ctx.timeout)
        if impersonation is not None:
            request["impersonator"], ctx.user = impersonation.impersonator, impersonation.user
        ctx.attrs = attributes(ctx.info, ctx.user, request.query)
        audit.received(request, ctx.attrs)
        return await handler(request)

    return acting
