"""Webhook token authentication (``--authentication-token-webhook-config-file``; k8s.io/apiserver
plugin/pkg/authenticator/token/webhook; "Authenticating", "Webhook Token Authentication").

The configuration file is a kubeconfig: the cluster is the remote service
(``server``, ``certificate-authority[-data]``, ``insecure-skip-tls-verify``),
the user is how authn authenticates to it (``client-certificate[-data]``
and ``client-key[-data]``, or ``token``); the current context (else the
first entry) is used. Each token is POSTed as an
``authentication.k8s.io/v1`` TokenReview with the target audiences; the
answer's ``status`` decides. Answers (authenticated or not) are cached for
``--authentication-token-webhook-cache-ttl`` (default 2m, kube's default),
keyed by a digest of the token and audiences. A webhook that times out,
fails to connect, answers non-2xx or garbage makes the token fail (401),
never a 500, and such failures are not cached.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kapi import jsonutil
from kapi.attributes import UserInfo
from kapi.kubeconfig import WebhookConfig, load_webhook_config
from services.authn.authenticator import DEFAULT_CACHE_TTL_SECONDS, NOT_MINE, Result, failed, succeeded

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

NAME = "webhook"
DEFAULT_TIMEOUT_SECONDS = 10.0
MAX_RESPONSE_BYTES = 1 << 20
def load_config(path: str) -> WebhookConfig:
    """Parse a webhook kubeconfig file (kapi.kubeconfig); raises OSError or ValueError."""
    return load_webhook_config(path)


def _user(status: Mapping[str, Any]) -> UserInfo:
    user = status.get("user") or {}
    if not isinstance(user, dict) or not isinstance(user.get("username", ""), str):
        raise ValueError("status.user is not a UserInfo")
    groups = user.get("groups") or []
    extra = user.get("extra") or {}
    if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups) or not isinstance(extra, dict):
        raise ValueError("status.user groups/extra are malformed")
    return UserInfo(user.get("username") or "", str(user.get("uid") or ""), tuple(groups),
                    tuple(sorted((str(k), tuple(str(x) for x in (v or []))) for k, v in extra.items())))


class WebhookTokenAuthenticator:
    """Asks a remote TokenReview service about tokens (see the module docstring).

    ``api_audiences`` are the audiences a webhook answer without
    ``status.audiences`` is taken to mean (kube's implicit audiences);
    ``cache_ttl`` and ``timeout`` are seconds; ``clock`` is monotonic seconds.
    """

    def __init__(self, config: WebhookConfig, api_audiences: tuple[str, ...], cache_ttl: float = 120.0,
                 timeout: float = DEFAULT_TIMEOUT_SECONDS, max_entries: int = 10_000,
                 clock: Callable[[], float] = time.monotonic):
        self._config = config
        self._api_audiences = api_audiences
        self._cache_ttl = cache_ttl
        self._timeout = timeout
        self._max = max_entries
        self._clock = clock
        self._cache: OrderedDict[bytes, tuple[float, Result]] = OrderedDict()
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=self._config.ssl_context
                                                                                 or False))
        return self._session

    async def _ask(self, token: str, audiences: tuple[str, ...]) -> dict[str, Any]:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        spec: dict[str, Any] = {"token": token}
        if audiences:
            spec["audiences"] = list(audiences)
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                  "metadata": {"creationTimestamp": None}, "spec": spec, "status": {"user": {}}}
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._config.token:
            headers["Authorization"] = f"Bearer {self._config.token}"
        body = jsonutil.go_escape(jsonutil.dumps(review))  # as Go's encoding/json writes it (HTML-escaped)
        async with self._http().post(self._config.server, data=body, headers=headers,
                                     timeout=aiohttp.ClientTimeout(total=self._timeout)) as response:
            body = await response.content.read(MAX_RESPONSE_BYTES + 1)
            if response.status // 100 != 2:
                raise ValueError(f"the webhook answered HTTP {response.status}")
        if len(body) > MAX_RESPONSE_BYTES:
            raise ValueError("the webhook's answer is too large")
        answer = jsonutil.loads(body)
        if not isinstance(answer, dict) or not isinstance(answer.get("status"), dict):
            raise ValueError("the webhook's answer is not a TokenReview with a status")
        status: dict[str, Any] = answer["status"]
        return status

    def _decide(self, status: Mapping[str, Any], audiences: tuple[str, ...]) -> Result:
        if status.get("authenticated") is not True:
            error = status.get("error")
            return failed(str(error)) if error else NOT_MINE
        user = _user(status)
        if not user.username:
            raise ValueError("the webhook authenticated a user without a username")
        answered = status.get("audiences")
        token_auds = tuple(a for a in answered if isinstance(a, str)) if isinstance(answered, list) and answered \
            else self._api_audiences
        common = tuple(a for a in token_auds if a in audiences) if audiences else token_auds
        if audiences and not common:
            return failed(f"token audiences {list(token_auds)} is invalid for the target audiences "
                          f"{list(audiences)}")
        return succeeded(user, NAME, min(DEFAULT_CACHE_TTL_SECONDS, int(self._cache_ttl)), common)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> Result:
        """The webhook's verdict on ``token`` (cached); an error when the webhook cannot be used."""
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        key = hashlib.sha256(jsonutil.dumps([token, list(audiences)])).digest()
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(key)
            return hit[1]
        try:
            result = self._decide(await self._ask(token, audiences), audiences)
        except TimeoutError:
            return failed("the authentication webhook did not answer in time")
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            log.warning("authentication webhook %s failed: %s", self._config.server, exc)
            return failed(f"the authentication webhook failed: {exc}")
        if self._cache_ttl > 0:
            self._cache[key] = (now + self._cache_ttl, result)
            self._cache.move_to_end(key)
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return result
