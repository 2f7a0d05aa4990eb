"""EventRateLimit: token buckets on Event writes (k8s.io/kubernetes plugin/pkg/admission/eventratelimit).

Configured by an ``eventratelimit.admission.k8s.io/v1alpha1`` ``Configuration``
in the admission control config file ("Admission Controllers" reference,
EventRateLimit; "Event Rate Limit Configuration (v1alpha1)")::

    limits:
    - type: Namespace          # Server | Namespace | User | SourceAndObject
      qps: 50                  # tokens added per second
      burst: 100               # bucket size; a new bucket starts full
      cacheSize: 2000          # buckets kept (LRU), not for Server; default 4096

Every limit has its own bucket per key: one for the whole server, one per
namespace, per user name, or per event source + involved object. Each
CREATE or UPDATE of a core ``Event`` (not a dry run) takes one token from
every limit's bucket; if any bucket is empty the request is refused with
429 ``Too many requests: limit reached on type Namespace for key demo``
(several empty buckets: ``[..., ...]``), without a Retry-After, as kube.
A bucket evicted from the LRU cache comes back full.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kapi import errors
from services.admission.chain import CREATE, UPDATE, AdmissionRequest

API_VERSION = "eventratelimit.admission.k8s.io/v1alpha1"
SERVER, NAMESPACE, USER, SOURCE_AND_OBJECT = "Server", "Namespace", "User", "SourceAndObject"
LIMIT_TYPES = (NAMESPACE, SERVER, SOURCE_AND_OBJECT, USER)
DEFAULT_CACHE_SIZE = 4096

Clock = Callable[[], float]  # monotonic seconds


class TokenBucket:
    """``burst`` tokens, refilled at ``qps`` per second; starts full (client-go's token bucket rate limiter)."""

    def __init__(self, qps: float, burst: int, now: float):
        self.qps, self.burst = qps, burst
        self.tokens = float(burst)
        self.last = now

    def try_accept(self, now: float) -> bool:
        """Take one token at time ``now`` (seconds); False (nothing taken) when fewer than one is left."""
        self.tokens = min(float(self.burst), self.tokens + max(0.0, now - self.last) * self.qps)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass(frozen=True)
class Limit:
    """One configured limit: type, qps (tokens/second), burst (tokens), cacheSize (buckets)."""

    type: str
    qps: int
    burst: int
    cache_size: int = DEFAULT_CACHE_SIZE


def _go_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def parse_config(config: Any) -> list[Limit]:
    """The limits of a Configuration object (None or {} = no configuration).

    Raises ValueError with kube's validation messages, e.g.
    ``limits: Invalid value: []eventratelimit.Limit(nil): must not be empty`` or
    ``limits[0].qps: Invalid value: 0: must be positive``.
    """
    config = config if config is not None else {}
    if not isinstance(config, dict):
        raise ValueError("EventRateLimit configuration must be an object")
    if config.get("apiVersion") not in (None, "", API_VERSION) or config.get("kind") not in (None, "",
                                                                                              "Configuration"):
        raise ValueError(f'EventRateLimit configuration must be {API_VERSION}, Kind=Configuration, got '
                         f'{config.get("apiVersion", "")}, Kind={config.get("kind", "")}')
    raw = config.get("limits")
    problems: list[str] = []
    if not isinstance(raw, list) or not raw:
        # field.Invalid(limitsPath, config.Limits, ...): Go's %#v of the internal []Limit, nil or empty
        shown = "[]eventratelimit.Limit{}" if raw == [] else "[]eventratelimit.Limit(nil)"
        problems.append(f"limits: Invalid value: {shown}: must not be empty")
        raw = []
    limits: list[Limit] = []
    for i, item in enumerate(raw):
        path = f"limits[{i}]"
        item = item if isinstance(item, dict) else {}
        kind = item.get("type")
        if kind not in LIMIT_TYPES:
            supported = ", ".join(f'"{t}"' for t in LIMIT_TYPES)
            problems.append(f"{path}.type: Unsupported value: {_go_value(kind)}: supported values: {supported}")
        numbers: dict[str, int] = {}
        for key, minimum, rule in (("burst", 1, "must be positive"), ("qps", 1, "must be positive"),
                                   ("cacheSize", 0, "must not be negative")):
            value = item.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool):
                problems.append(f"{path}.{key}: Invalid value: {_go_value(value)}: must be an integer")
            elif value < minimum and (key != "cacheSize" or kind != SERVER):
                problems.append(f"{path}.{key}: Invalid value: {value}: {rule}")
            numbers[key] = value if isinstance(value, int) else 0
        limits.append(Limit(str(kind), numbers["qps"], numbers["burst"], numbers["cacheSize"] or DEFAULT_CACHE_SIZE))
    if problems:
        raise ValueError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")
    return limits


def _key(limit_type: str, request: AdmissionRequest) -> str:
    if limit_type == SERVER:
        return ""
    if limit_type == NAMESPACE:
        return request.namespace
    if limit_type == USER:
        return request.attributes.user.username
    event: dict[str, Any] = request.object if isinstance(request.object, dict) else {}
    source = event.get("source")
    source = source if isinstance(source, dict) else {}
    involved = event.get("involvedObject")
    involved = involved if isinstance(involved, dict) else {}
    parts = (source.get("component"), source.get("host"), involved.get("kind"), involved.get("namespace"),
             involved.get("name"), involved.get("uid"), involved.get("apiVersion"))
    return "".join(p for p in parts if isinstance(p, str))


class LimitEnforcer:
    """The buckets of one limit: a single one for Server, else an LRU of ``cache_size`` buckets by key."""

    def __init__(self, limit: Limit, clock: Clock):
        self.limit = limit
        self.clock = clock
        self.buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def accept(self, request: AdmissionRequest) -> str | None:
        """Take a token from the request's bucket; the refusal text, or None when accepted."""
        key = _key(self.limit.type, request)
        now = self.clock()
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.limit.qps, self.limit.burst, now)
            cap = 1 if self.limit.type == SERVER else self.limit.cache_size
            while len(self.buckets) > cap:
                self.buckets.popitem(last=False)
        else:
            self.buckets.move_to_end(key)
        if bucket.try_accept(now):
            return None
        return f"limit reached on type {self.limit.type} for key {key}"


class EventRateLimit:
    """Validating plugin: refuses Event writes beyond the configured rates (429).

    ``config`` is the plugin's Configuration object (ValueError if invalid or
    missing, as kube refuses to start); ``clock`` returns monotonic seconds
    (injected by tests).
    """

    name = "EventRateLimit"

    def __init__(self, config: Any, clock: Clock = time.monotonic):
        self.enforcers = [LimitEnforcer(limit, clock) for limit in parse_config(config)]

    def handles(self, operation: str) -> bool:
        """CREATE and UPDATE."""
        return operation in (CREATE, UPDATE)

    async def validate(self, request: AdmissionRequest) -> None:
        """Take a token from every limit's bucket; raises 429 TooManyRequests when any was empty."""
        if request.resource.group != "" or request.kind != "Event" or request.dry_run:
            return
        refusals = [text for enforcer in self.enforcers if (text := enforcer.accept(request)) is not None]
        if refusals:
            detail = refusals[0] if len(refusals) == 1 else "[" + ", ".join(refusals) + "]"
            raise errors.StatusError(429, "TooManyRequests", f"Too many requests: {detail}")
