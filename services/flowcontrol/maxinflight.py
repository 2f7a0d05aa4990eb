"""The max-in-flight filter: a fixed number of seats per class of request.

k8s.io/apiserver pkg/server/filters/maxinflight.go (``WithMaxInFlightLimit``),
the limiter kube-apiserver uses when API Priority and Fairness is off:
``--max-requests-inflight`` seats for read-only requests and
``--max-mutating-requests-inflight`` for mutating ones (0 = unlimited for
that class). Long-running requests (watch, exec, proxy...) are never
counted, and members of ``system:masters`` are never limited. A request
with no free seat is rejected at once with 429 "Too many requests, please
try again later." and ``Retry-After: 1``.
"""

from __future__ import annotations

from kapi.attributes import SYSTEM_PRIVILEGED_GROUP
from services.flowcontrol.dispatcher import TOO_MANY_REQUESTS, Decision, StartRequest

EXEMPT = "exempt"
GLOBAL_DEFAULT = "global-default"
RETRY_AFTER_SECONDS = 1


class _Seat:
    """One seat of one class; ``release`` gives it back once."""

    __slots__ = ("_limiter", "_mutating", "_held")

    def __init__(self, limiter: MaxInFlight, mutating: bool):
        self._limiter, self._mutating, self._held = limiter, mutating, True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._limiter._release(self._mutating)


class MaxInFlight:
    """A :class:`~services.flowcontrol.dispatcher.Dispatcher` with two fixed seat pools.

    ``max_requests`` (non-mutating) and ``max_mutating`` (mutating) are seat
    counts; 0 means that class is unlimited. Not thread-safe: use it from one
    event loop.
    """

    def __init__(self, max_requests: int, max_mutating: int):
        if max_requests < 0 or max_mutating < 0:
            raise ValueError("in-flight limits must be >= 0")
        self.max_requests = max_requests
        self.max_mutating = max_mutating
        self._in_flight = {False: 0, True: 0}

    def in_flight(self, mutating: bool) -> int:
        """Seats held now in one class."""
        return self._in_flight[mutating]

    def decide(self, request: StartRequest) -> Decision:
        """The decision, taken synchronously (no queueing in this filter)."""
        exempt = SYSTEM_PRIVILEGED_GROUP in request.attributes.user.groups
        level = EXEMPT if exempt else GLOBAL_DEFAULT
        if request.long_running or exempt:
            return Decision(True, level, level)
        limit = self.max_mutating if request.mutating else self.max_requests
        if limit and self._in_flight[request.mutating] >= limit:
            return Decision(False, level, level, RETRY_AFTER_SECONDS, TOO_MANY_REQUESTS)
        self._in_flight[request.mutating] += 1
        return Decision(True, level, level, release=_Seat(self, request.mutating).release)

    async def dispatch(self, request: StartRequest) -> Decision:
        """:meth:`decide`, as the Dispatcher protocol's coroutine."""
        return self.decide(request)

    def _release(self, mutating: bool) -> None:
        self._in_flight[mutating] -= 1
