"""Webhook authorization: ask a remote service with a SubjectAccessReview ("Webhook Mode").

Mirrors kube's ``k8s.io/apiserver/plugin/pkg/authorizer/webhook``. The
configuration is a kubeconfig (``--authorization-webhook-config-file``,
read by :func:`kapi.kubeconfig.load_webhook_config`). Each decision POSTs an
``authorization.k8s.io/v1`` (or ``v1beta1``, ``--authorization-webhook-version``)
SubjectAccessReview whose spec carries the user (name, uid, groups, extra)
and either ``resourceAttributes`` (namespace, verb, group, version,
resource, subresource, name) or ``nonResourceAttributes`` (path, verb).
The answer's ``status`` decides: ``denied`` -> Deny, ``allowed`` -> Allow,
neither -> NoOpinion, with ``status.reason`` as the reason; both is Deny
with an evaluation error.

Answers are cached keyed by the review's spec: allowed ones for
``--authorization-webhook-cache-authorized-ttl`` (default 5m), the others for
``--authorization-webhook-cache-unauthorized-ttl`` (default 30s). A
webhook that cannot be used (timeout, connection failure, non-2xx, an
answer that is not a SubjectAccessReview) gives NoOpinion with the failure
as evaluation error (kube's ``failurePolicy: NoOpinion``; Deny with
``failurePolicy: Deny`` from ``--authorization-config``), never Allow, and
nothing is cached. HTTP 429/5xx and connection failures are retried with
kube's backoff (0.5s, x1.5) within the one ``timeout``. Every answer is
marked not cacheable by the gateway, whose cache follows the RBAC policy
revision rather than these TTLs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kapi import jsonutil
from kapi.attributes import Attributes
from kapi.kubeconfig import WebhookConfig
from services.authz.authorizer import Decision, Result

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

GROUP = "authorization.k8s.io"
VERSIONS = ("v1", "v1beta1")
DEFAULT_AUTHORIZED_TTL = 300.0  # seconds (kube-apiserver --authorization-webhook-cache-authorized-ttl 5m)
DEFAULT_UNAUTHORIZED_TTL = 30.0  # seconds (--authorization-webhook-cache-unauthorized-ttl 30s)
DEFAULT_TIMEOUT = 30.0  # seconds: what kube-apiserver sets for the legacy webhook flags
MAX_RESPONSE_BYTES = 1 << 20
BACKOFF_INITIAL, BACKOFF_FACTOR, BACKOFF_STEPS = 0.5, 1.5, 5  # DefaultAuthWebhookRetryBackoff


class WebhookError(Exception):
    """The webhook could not be used; ``retry`` for 429/5xx and connection failures."""

    def __init__(self, message: str, retry: bool = False):
        super().__init__(message)
        self.retry = retry


def review(attributes: Attributes, version: str = "v1") -> dict[str, Any]:
    """The SubjectAccessReview kube sends for ``attributes`` (``version`` v1 or v1beta1)."""
    user = attributes.user
    spec: dict[str, Any] = {}
    if attributes.resource_request:
        resource = {"namespace": attributes.namespace, "verb": attributes.verb, "group": attributes.api_group,
                    "version": attributes.api_version, "resource": attributes.resource,
                    "subresource": attributes.subresource, "name": attributes.name}
        spec["resourceAttributes"] = {k: v for k, v in resource.items() if v}
    else:
        spec["nonResourceAttributes"] = {k: v for k, v in (("path", attributes.path), ("verb", attributes.verb))
                                         if v}
    if user.username:
        spec["user"] = user.username
    if user.groups:
        spec["groups" if version == "v1" else "group"] = list(user.groups)
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra}
    if user.uid:
        spec["uid"] = user.uid
    return {"apiVersion": f"{GROUP}/{version}", "kind": "SubjectAccessReview",
            "metadata": {"creationTimestamp": None}, "spec": spec, "status": {"allowed": False}}


def decide(status: dict[str, Any]) -> Result:
    """Decision from a SubjectAccessReview status (kube's switch on denied/allowed)."""
    allowed, denied = status.get("allowed") is True, status.get("denied") is True
    raw = status.get("reason")
    reason = raw if isinstance(raw, str) else ""
    if allowed and denied:
        return Result(Decision.DENY, reason, "webhook subject access review returned both allow and deny response",
                      cacheable=False)
    if denied:
        return Result(Decision.DENY, reason, cacheable=False)
    if allowed:
        return Result(Decision.ALLOW, reason, cacheable=False)
    return Result(Decision.NO_OPINION, reason, cacheable=False)


class WebhookAuthorizer:
    """``--authorization-mode=Webhook`` (see the module docstring).

    TTLs and ``timeout`` are seconds; ``clock`` is monotonic seconds and
    ``sleep`` the backoff sleep (both injectable for tests); at most
    ``max_entries`` answers are cached (least recently used dropped).
    """

    # The union's rules review is incomplete with a webhook (kube: "webhook authorizer does not support user
    # rule resolution").
    incomplete_rules = True

    def __init__(self, config: WebhookConfig, *, version: str = "v1",
                 authorized_ttl: float = DEFAULT_AUTHORIZED_TTL, unauthorized_ttl: float = DEFAULT_UNAUTHORIZED_TTL,
                 timeout: float = DEFAULT_TIMEOUT, failure_policy: str = "NoOpinion", max_entries: int = 10_000,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], Any] = asyncio.sleep):
        if version not in VERSIONS:
            raise ValueError(f"unsupported webhook version {version!r}; supported: {', '.join(VERSIONS)}")
        if failure_policy not in ("NoOpinion", "Deny"):
            raise ValueError(f"unsupported failure policy {failure_policy!r}")
        self._on_error = Decision.DENY if failure_policy == "Deny" else Decision.NO_OPINION
        self._config = config
        self._version = version
        self._authorized_ttl = authorized_ttl
        self._unauthorized_ttl = unauthorized_ttl
        self._timeout = timeout
        self._max = max_entries
        self._clock = clock
        self._sleep = sleep
        self._cache: OrderedDict[bytes, tuple[float, dict[str, Any]]] = OrderedDict()
        self._session: aiohttp.ClientSession | None = None
        self.calls = 0

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _http(self) -> aiohttp.ClientSession:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(ssl=self._config.ssl_context or False))
        return self._session

    async def _post(self, body: bytes, timeout: float) -> dict[str, Any]:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._config.token:
            headers["Authorization"] = f"Bearer {self._config.token}"
        self.calls += 1
        try:
            async with self._http().post(self._config.server, data=body, headers=headers,
                                         timeout=aiohttp.ClientTimeout(total=timeout)) as response:
                data = b""
                while len(data) <= MAX_RESPONSE_BYTES:
                    chunk = await response.content.read(MAX_RESPONSE_BYTES + 1 - len(data))
                    if not chunk:
                        break
                    data += chunk
                if response.status == 429 or response.status >= 500:
                    raise WebhookError(f"the webhook answered HTTP {response.status}", retry=True)
                if response.status // 100 != 2:
                    raise WebhookError(f"the webhook answered HTTP {response.status}")
        except aiohttp.ClientConnectionError as exc:
            raise WebhookError(f"cannot reach the webhook: {exc}", retry=True) from None
        if len(data) > MAX_RESPONSE_BYTES:
            raise WebhookError("the webhook's answer is too large")
        try:
            answer = jsonutil.loads(data)
        except ValueError as exc:
            raise WebhookError(f"the webhook's answer is not JSON: {exc}") from None
        if not isinstance(answer, dict) or answer.get("kind", "SubjectAccessReview") != "SubjectAccessReview" \
                or not isinstance(answer.get("status"), dict):
            raise WebhookError("the webhook's answer is not a SubjectAccessReview with a status")
        status: dict[str, Any] = answer["status"]
        return status

    async def _ask(self, body: bytes) -> dict[str, Any]:
        deadline = self._clock() + self._timeout
        delay = BACKOFF_INITIAL
        for step in range(BACKOFF_STEPS):
            remaining = deadline - self._clock()
            try:
                async with asyncio.timeout(remaining):
                    return await self._post(body, remaining)
            except WebhookError as exc:
                if not exc.retry or step == BACKOFF_STEPS - 1 or self._clock() + delay >= deadline:
                    raise
                log.info("authorization webhook failed (%s); retrying in %.1fs", exc, delay)
            await self._sleep(delay)
            delay *= BACKOFF_FACTOR
        raise AssertionError("unreachable")

    async def authorize(self, attributes: Attributes) -> Result:
        """The webhook's decision (cached per the TTLs); NoOpinion plus an evaluation error when it cannot answer."""
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        sar = review(attributes, self._version)
        key = jsonutil.dumps(sar["spec"])
        now = self._clock()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(key)
            return decide(hit[1])
        try:
            status = await self._ask(jsonutil.go_escape(jsonutil.dumps(sar)))
        except TimeoutError:
            error = f"the authorization webhook did not answer within {self._timeout:g}s"
            log.error("Failed to make webhook authorizer request to %s: %s", self._config.server, error)
            return Result(self._on_error, "", error, cacheable=False)
        except (WebhookError, aiohttp.ClientError, OSError) as exc:
            log.error("Failed to make webhook authorizer request to %s: %s", self._config.server, exc)
            return Result(self._on_error, "", f"the authorization webhook failed: {exc}", cacheable=False)
        ttl = self._authorized_ttl if status.get("allowed") is True else self._unauthorized_ttl
        if ttl > 0:
            self._cache[key] = (now + ttl, status)
            self._cache.move_to_end(key)
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return decide(status)
