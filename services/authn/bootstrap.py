"""Bootstrap token authentication (kube's plugin/pkg/auth/authenticator/token/bootstrap; "Authenticating with
Bootstrap Tokens").

Enabled by ``--enable-bootstrap-token-auth``. A token ``<id>.<secret>``
(``[a-z0-9]{6}.[a-z0-9]{16}``) names the Secret ``bootstrap-token-<id>`` in
kube-system of type ``bootstrap.kubernetes.io/token``. As kube, every
mismatch (no such Secret, being deleted, wrong type, wrong ``token-secret``
(constant-time compare) or ``token-id``, past ``expiration``, no
``usage-bootstrap-authentication: "true"``) means "not my token" (the
request then gets 401 from the bearer authenticator); only malformed
``auth-extra-groups`` is an error. The user is ``system:bootstrap:<id>`` in
``system:bootstrappers`` plus the extra groups; the answer is cached at most
until the token expires.
"""

from __future__ import annotations

import base64
import datetime
import hmac
import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any

from kapi import errors
from kapi.attributes import UserInfo
from services.authn.authenticator import DEFAULT_CACHE_TTL_SECONDS, NOT_MINE, Result, failed, succeeded
from services.authn.objects import SECRETS, ObjectLookup

log = logging.getLogger(__name__)

NAME = "bootstrap-token"
NAMESPACE = "kube-system"
SECRET_TYPE = "bootstrap.kubernetes.io/token"
SECRET_PREFIX = "bootstrap-token-"
GROUP = "system:bootstrappers"
USER_PREFIX = "system:bootstrap:"
TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
EXTRA_GROUP = re.compile(r"^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$")


def secret_data(secret: Mapping[str, Any], key: str) -> str:
    """The decoded ``data[key]`` of a Secret as text ("" if absent or undecodable)."""
    value = (secret.get("data") or {}).get(key)
    if not isinstance(value, str):
        return ""
    try:
        return base64.b64decode(value, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return ""


def expiration(secret: Mapping[str, Any]) -> float | None:
    """The ``expiration`` (RFC 3339) as Unix seconds, None if absent; raises ValueError if malformed."""
    text = secret_data(secret, "expiration")
    if not text:
        return None
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class BootstrapTokenAuthenticator:
    """Token authenticator over kube-system bootstrap-token Secrets; ``clock`` returns Unix seconds."""

    def __init__(self, lookup: ObjectLookup, clock: Callable[[], float] = time.time):
        self._lookup = lookup
        self._clock = clock

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> Result:
        """NOT_MINE for anything that is not a live, usable bootstrap token; the bootstrap user otherwise."""
        match = TOKEN.match(token)
        if match is None:
            return NOT_MINE
        token_id, token_secret = match.groups()
        name = SECRET_PREFIX + token_id
        try:
            ref = await self._lookup.get(SECRETS, NAMESPACE, name)
        except errors.StatusError as err:
            return failed(f"bootstrap token could not be checked: {err.message}")
        if ref is None or ref.obj is None or ref.deleting:
            log.debug("no usable bootstrap token secret %s/%s", NAMESPACE, name)
            return NOT_MINE
        secret = ref.obj
        if secret.get("type") != SECRET_TYPE:
            return NOT_MINE
        if not hmac.compare_digest(secret_data(secret, "token-secret").encode(), token_secret.encode()):
            log.info("bootstrap token %s: token-secret does not match", token_id)
            return NOT_MINE
        if secret_data(secret, "token-id") != token_id:
            return NOT_MINE
        now = self._clock()
        try:
            expires = expiration(secret)
        except ValueError:
            return NOT_MINE
        if expires is not None and now >= expires:
            log.info("expired bootstrap token %s", token_id)
            return NOT_MINE
        if secret_data(secret, "usage-bootstrap-authentication") != "true":
            return NOT_MINE
        extra = [g.strip() for g in secret_data(secret, "auth-extra-groups").split(",") if g.strip()]
        bad = [g for g in extra if not EXTRA_GROUP.match(g)]
        if bad:
            return failed(f"bootstrap secret {name} has invalid auth-extra-groups {bad}")
        ttl = DEFAULT_CACHE_TTL_SECONDS if expires is None else max(0, min(DEFAULT_CACHE_TTL_SECONDS,
                                                                           int(expires - now)))
        return succeeded(UserInfo(USER_PREFIX + token_id, "", (GROUP, *extra)), NAME, ttl)
