"""ImagePolicyWebhook: a remote backend approves Pod images (k8s.io/kubernetes plugin/pkg/admission/imagepolicy).

Configured in the admission control config file ("Admission Controllers"
reference, ImagePolicyWebhook)::

    imagePolicy:
      kubeConfigFile: /etc/kapi/image-policy.kubeconfig  # the backend: cluster server + CA, client cert/token
      allowTTL: 50        # seconds an approval is cached   (0 = 300, -1 = no caching; 1 < x <= 1800)
      denyTTL: 50         # seconds a denial is cached      (0 = 30,  -1 = no caching; 1 < x <= 1800)
      retryBackoff: 500   # milliseconds before the first retry (0 = 500, -1 = none; at most 5 minutes)
      defaultAllow: true  # admit when the backend cannot be asked

On Pod CREATE and UPDATE (and the ``ephemeralcontainers`` subresource) the
plugin POSTs an ``imagepolicy.k8s.io/v1alpha1`` ImageReview to the
backend: ``spec.containers`` (each ``{"image": ...}``; containers then
init containers, or the ephemeral containers for that subresource),
``spec.annotations`` (the pod's annotations whose key contains
``.image-policy.k8s.io/``) and ``spec.namespace``. The reply's
``status.allowed`` decides; ``status.reason`` becomes the 403 message
``pods "x" is forbidden: image policy webhook backend denied one or more
images: <reason>`` (without a reason: ``one or more images rejected by
webhook backend``); ``status.auditAnnotations`` are recorded with the
``imagepolicywebhook.image-policy.k8s.io/`` prefix. Answers are cached by
review spec for allowTTL/denyTTL (LRU of 1024). Transient failures (5xx,
429, a reset connection) are retried with exponential backoff (x1.5, at
most 5 attempts). When the backend cannot be asked, defaultAllow admits the
pod (annotated ``alpha.image-policy.k8s.io/failed-open: "true"``, audit
annotation ``imagepolicywebhook.image-policy.k8s.io/image-policy-failed-open``)
or refuses it with the error (403).
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kapi import errors, jsonutil
from kapi.kubeconfig import WebhookConfig, load_webhook_config
from services.admission.chain import CREATE, UPDATE, AdmissionRequest

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

API_VERSION = "imagepolicy.k8s.io/v1alpha1"
AUDIT_PREFIX = "imagepolicywebhook.image-policy.k8s.io/"
FAILED_OPEN_AUDIT_KEY = AUDIT_PREFIX + "image-policy-failed-open"
FAILED_OPEN_ANNOTATION = "alpha.image-policy.k8s.io/failed-open"
CACHE_SIZE = 1024
RETRY_STEPS = 5
RETRY_FACTOR = 1.5
REQUEST_TIMEOUT = 30.0  # seconds, at most; the admission deadline bounds it further

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class ImagePolicyConfig:
    """The normalised ``imagePolicy`` block: TTLs and backoff in seconds (0 = no caching / no wait)."""

    kube_config_file: str
    allow_ttl: float = 300.0
    deny_ttl: float = 30.0
    retry_backoff: float = 0.5
    default_allow: bool = False


def _go_duration(seconds: float) -> str:
    """Go's time.Duration.String for the values this module reports ("1s", "30m0s", "500ms", "1ns")."""
    ns = round(seconds * 1e9)
    if ns < 0:
        return "-" + _go_duration(-seconds)
    if ns < 1000:
        return f"{ns}ns"
    if ns < 1_000_000:
        return f"{ns / 1000:g}µs"
    if ns < 1_000_000_000:
        return f"{ns / 1e6:g}ms"
    hours, rest = divmod(ns, 3600 * 10**9)
    minutes, rest = divmod(rest, 60 * 10**9)
    secs = f"{rest / 1e9:g}s"
    if hours:
        return f"{hours}h{minutes}m{secs}"
    return f"{minutes}m{secs}" if minutes else secs


def _duration(name: str, value: Any, unit: float, low: float, high: float, default: float) -> float:
    if value is None or value == 0:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"image policy webhook {name} must be an integer, got {value!r}")
    if value == -1:
        return 0.0
    seconds = value * unit
    if seconds <= low or seconds > high:
        raise ValueError(f"valid value is between {_go_duration(low)} and {_go_duration(high)}, "
                         f"got {_go_duration(seconds)}")
    return seconds


def parse_config(config: Any) -> ImagePolicyConfig:
    """The plugin's configuration object (``{"imagePolicy": {...}}``) normalised as kube does.

    Raises ValueError for a missing configuration, a missing
    kubeConfigFile, or a TTL/backoff out of range (``valid value is between
    1s and 30m0s, got 1s``).
    """
    if not isinstance(config, dict) or not config:
        raise ValueError("no config specified")
    block = config.get("imagePolicy")
    if not isinstance(block, dict):
        raise ValueError("ImagePolicyWebhook configuration needs an imagePolicy object")
    kube_config = block.get("kubeConfigFile")
    if not isinstance(kube_config, str) or not kube_config:
        raise ValueError("ImagePolicyWebhook: imagePolicy.kubeConfigFile is required")
    return ImagePolicyConfig(
        kube_config_file=kube_config,
        retry_backoff=_duration("backoff", block.get("retryBackoff"), 1e-3, 1e-9, 300.0, 0.5),
        allow_ttl=_duration("allow cache", block.get("allowTTL"), 1.0, 1.0, 1800.0, 300.0),
        deny_ttl=_duration("deny cache", block.get("denyTTL"), 1.0, 1.0, 1800.0, 30.0),
        default_allow=block.get("defaultAllow") is True,
    )


def check_config(config: Any) -> None:
    """Validate the configuration and load its kubeconfig; raises ValueError (a start-up error, as kube)."""
    parsed = parse_config(config)
    try:
        load_webhook_config(parsed.kube_config_file)
    except OSError as exc:
        raise ValueError(f"ImagePolicyWebhook: reading kubeConfigFile {parsed.kube_config_file}: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"ImagePolicyWebhook: kubeConfigFile {parsed.kube_config_file}: {exc}") from None


class ExpiringLRU:
    """At most ``size`` entries, each valid until its own expiry (k8s.io/utils LRUExpireCache)."""

    def __init__(self, size: int, clock: Clock):
        self.size, self.clock = size, clock
        self._items: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()

    def get(self, key: str) -> dict[str, Any] | None:
        """The live value, or None (an expired entry is dropped)."""
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] <= self.clock():
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return item[1]

    def add(self, key: str, value: dict[str, Any], ttl: float) -> None:
        """Keep ``value`` for ``ttl`` seconds (not at all when ttl <= 0), evicting the least recently used."""
        if ttl <= 0:
            return
        self._items[key] = (self.clock() + ttl, value)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class _Failure(Exception):
    """The backend could not be asked; ``retry`` when kube's webhook client would try again."""

    def __init__(self, message: str, retry: bool = False):
        super().__init__(message)
        self.retry = retry


def _connect_error(url: str, exc: Exception) -> str:
    os_error = getattr(exc, "os_error", None)
    host, port = getattr(exc, "host", ""), getattr(exc, "port", "")
    if isinstance(os_error, OSError) and os_error.errno == errno.ECONNREFUSED:
        return f'Post "{url}": dial tcp {host}:{port}: connect: connection refused'
    return f'Post "{url}": {exc}'


class ImagePolicyWebhook:
    """Validating plugin asking the configured backend about every Pod's images.

    ``config`` is the plugin's configuration object (ValueError when invalid;
    OSError/ValueError when the kubeconfig cannot be loaded). ``clock``
    (monotonic seconds) drives the cache; ``sleep`` the retry backoff.
    """

    name = "ImagePolicyWebhook"

    def __init__(self, config: Any, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep):
        self.config = parse_config(config)
        self.backend: WebhookConfig = load_webhook_config(self.config.kube_config_file)
        self.cache = ExpiringLRU(CACHE_SIZE, clock)
        self.sleep = sleep
        self._session: aiohttp.ClientSession | None = None

    def handles(self, operation: str) -> bool:
        """CREATE and UPDATE."""
        return operation in (CREATE, UPDATE)

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def validate(self, request: AdmissionRequest) -> None:
        """Ask the backend (or the cache); raises 403 when it denies, or when it fails and defaultAllow is off."""
        sub = request.subresource
        res = request.resource
        if res.group != "" or res.resource != "pods" or sub not in ("", "ephemeralcontainers"):
            return
        pod = request.object
        if not isinstance(pod, dict):
            raise errors.bad_request("Resource was marked with kind Pod but was unable to be converted")
        spec = _dict(pod.get("spec"))
        keys = ("containers", "initContainers") if sub == "" else ("ephemeralContainers",)
        containers = [{"image": c.get("image", "")} for key in keys for c in spec.get(key) or []
                      if isinstance(c, dict)]
        meta = _dict(pod.get("metadata"))
        annotations = _dict(meta.get("annotations"))
        review_spec: dict[str, Any] = {}
        if containers:
            review_spec["containers"] = containers
        matching = {k: v for k, v in annotations.items() if ".image-policy.k8s.io/" in k}
        if matching:
            review_spec["annotations"] = matching
        if request.namespace:
            review_spec["namespace"] = request.namespace
        key = json.dumps(review_spec, sort_keys=True)
        status = self.cache.get(key)
        if status is None:
            try:
                status = await self._ask(review_spec, request.timeout)
            except _Failure as failure:
                log.info("error contacting image policy webhook backend: %s", failure)
                if self.config.default_allow:
                    request.audit_annotations[FAILED_OPEN_AUDIT_KEY] = "true"
                    annotations[FAILED_OPEN_ANNOTATION] = "true"
                    meta["annotations"] = annotations
                    pod["metadata"] = meta
                    return
                raise errors.forbidden("pods", request.name, str(failure)) from None
            self.cache.add(key, status, self.config.allow_ttl if status.get("allowed") is True
                           else self.config.deny_ttl)
        audit = status.get("auditAnnotations")
        if isinstance(audit, dict):
            for k, v in audit.items():
                request.audit_annotations[AUDIT_PREFIX + str(k)] = str(v)
        if status.get("allowed") is not True:
            reason = status.get("reason")
            text = (f"image policy webhook backend denied one or more images: {reason}" if reason
                    else "one or more images rejected by webhook backend")
            raise errors.forbidden("pods", request.name, text)

    async def _ask(self, review_spec: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST the ImageReview, retrying transient failures; the reply's status. Raises _Failure."""
        body = jsonutil.dumps({"apiVersion": API_VERSION, "kind": "ImageReview", "metadata": {},
                               "spec": review_spec})
        deadline = time.monotonic() + min(timeout, REQUEST_TIMEOUT)
        wait = self.config.retry_backoff
        for attempt in range(RETRY_STEPS):
            try:
                return await self._post(body, deadline - time.monotonic())
            except _Failure as failure:
                if not failure.retry or attempt == RETRY_STEPS - 1 or time.monotonic() + wait >= deadline:
                    raise
            await self.sleep(wait)
            wait *= RETRY_FACTOR
        raise AssertionError("unreachable")

    async def _post(self, body: bytes, timeout: float) -> dict[str, Any]:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        url = self.backend.server
        if timeout <= 0:
            raise _Failure(f'Post "{url}": context deadline exceeded')
        if self._session is None:
            self._session = aiohttp.ClientSession()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.backend.token:
            headers["Authorization"] = f"Bearer {self.backend.token}"
        kwargs: dict[str, Any] = {"ssl": self.backend.ssl_context} if self.backend.ssl_context else {}
        try:
            async with asyncio.timeout(timeout):
                async with self._session.post(url, data=body, headers=headers, **kwargs) as resp:
                    data = await resp.read()
                    code = resp.status
        except TimeoutError:
            raise _Failure(f'Post "{url}": context deadline exceeded') from None
        except aiohttp.ClientConnectorError as exc:
            raise _Failure(_connect_error(url, exc)) from None
        except (aiohttp.ServerDisconnectedError, ConnectionResetError) as exc:
            raise _Failure(f'Post "{url}": {exc}', retry=True) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise _Failure(f'Post "{url}": {exc}') from None
        if code in (429, 500, 504):
            raise _Failure(f"Error contacting webhook: {code}", retry=True)
        if code < 200 or code >= 300:
            raise _Failure(f"Error contacting webhook: {code}")
        try:
            reply = jsonutil.loads(data)
        except ValueError as exc:
            raise _Failure(f"the webhook answered with a body that is not an ImageReview: {exc}") from None
        status = reply.get("status") if isinstance(reply, dict) else None
        return status if isinstance(status, dict) else {}
