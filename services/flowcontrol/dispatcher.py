"""The seam between the Dispatch stream and the policy that decides: :class:`Dispatcher`.

A dispatcher answers each started request with one :class:`Decision`:
execute now (holding a seat until ``release``), or reject with a 429. The
max-in-flight filter (:mod:`services.flowcontrol.maxinflight`) decides at
once; API Priority and Fairness (KEP-1040) will queue before deciding, so
``dispatch`` is a coroutine and may be cancelled while it waits (the
gateway gave up), in which case it must leave no seat behind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from kapi.attributes import Attributes

# kube-apiserver's 429 message (k8s.io/apiserver pkg/server/filters/maxinflight.go, tooManyRequests).
TOO_MANY_REQUESTS = "Too many requests, please try again later."


def _no_seat() -> None:
    return None


@dataclass(frozen=True)
class StartRequest:
    """A request asking to run: its attributes, whether it mutates, whether it is long-running (watch, exec...)."""

    attributes: Attributes
    mutating: bool
    long_running: bool
    list_limit: int = 0  # a LIST's ?limit= (0 = none), for its width in seats
    # The Dispatch stream's lease holder (services.flowcontrol.leases.Holder) when that stream takes seat
    # leases; a dispatcher that leases may grant it seats of the request's level.
    holder: Any = field(default=None, compare=False)
    queue_wait_limit: float = 0.0  # seconds it may wait in a queue (0 = the controller's default)


@dataclass(frozen=True)
class Decision:
    """The answer to one :class:`StartRequest`.

    ``execute`` False is a rejection: the gateway answers 429 with
    ``reason`` and ``Retry-After: retry_after_seconds``. ``flow_schema`` and
    ``priority_level`` name the classification; ``flow_schema_uid`` and
    ``priority_level_uid`` are the values of the ``X-Kubernetes-PF-*-UID``
    response headers.
    ``release`` frees the seat an executing request holds; calling it more
    than once is harmless. ``config_generation`` is the configuration
    generation the request was classified at (0: the dispatcher does not
    lease, the classification is not to be remembered); ``exempt`` marks
    the Exempt level, ``leasable`` a request of width 1 whatever its
    ``?limit=`` that is not long-running (it may run on a leased seat).
    """

    execute: bool
    flow_schema: str
    priority_level: str
    retry_after_seconds: int = 0
    reason: str = ""
    release: Callable[[], None] = field(default=_no_seat, compare=False)
    flow_schema_uid: str = ""
    priority_level_uid: str = ""
    config_generation: int = 0
    exempt: bool = False
    leasable: bool = False


class Dispatcher(Protocol):
    """Decides whether a request runs now (the APF queueset will implement the same method)."""

    async def dispatch(self, request: StartRequest) -> Decision:
        """Return the decision for ``request``; may wait (queueing); cancellation must free anything taken."""
        ...
