"""tokencleaner: deletes expired bootstrap-token Secrets (kube ``pkg/controller/bootstrap/tokencleaner.go``).

Watches Secrets in kube-system of type ``bootstrap.kubernetes.io/token``;
one whose ``data.expiration`` (base64 of an RFC 3339 time) is past is
deleted with a uid precondition; one that expires later is checked again
then ("Authenticating with Bootstrap Tokens": "Token cleaner"). Off by
default, as in kube-controller-manager.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import time
from collections.abc import Callable
from typing import Any

from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue, key_of, split_key
from services.controllers.objects import SECRETS, meta, parse_time

NAMESPACE = "kube-system"
SECRET_TYPE = "bootstrap.kubernetes.io/token"


def expiration(secret: dict[str, Any]) -> datetime.datetime | None:
    """The token's expiration, or None if it has none (or it is unreadable, as kube ignores it)."""
    raw = (secret.get("data") or {}).get("expiration")
    if not isinstance(raw, str):
        return None
    try:
        return parse_time(base64.b64decode(raw, validate=True).decode())
    except (binascii.Error, UnicodeDecodeError):
        return None


class TokenCleaner:
    """Deletes bootstrap-token Secrets past their expiration."""

    name = "tokencleaner"

    def __init__(self, ctx: Context, clock: Callable[[], float] = time.time):
        self.client = ctx.client
        self.clock = clock
        self.queue = WorkQueue(self.name)
        self.secrets = ctx.informer(SECRETS, NAMESPACE)
        self.secrets.on(add=self._enqueue, update=lambda _o, n: self._enqueue(n))

    def _enqueue(self, secret: dict[str, Any]) -> None:
        if secret.get("type") == SECRET_TYPE:
            self.queue.add(key_of(secret))

    async def run(self) -> None:
        """Process bootstrap-token Secrets until cancelled."""
        await self.queue.run(self.sync)

    async def sync(self, key: str) -> None:
        """Delete the Secret ``key`` if expired, else recheck at its expiration."""
        secret = self.secrets.get(key)
        if secret is None or secret.get("type") != SECRET_TYPE:
            return
        expires = expiration(secret)
        if expires is None:
            return
        left = expires.timestamp() - self.clock()
        if left > 0:
            self.queue.add_after(key, left + 0.05)
            return
        namespace, name = split_key(key)
        try:
            await self.client.delete(path_for(SECRETS, namespace, name),
                                     {"preconditions": {"uid": meta(secret).get("uid", "")}})
        except ApiError as err:
            if err.code not in (404, 409):
                raise
