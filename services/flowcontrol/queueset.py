"""Shuffle-sharded fair queuing for one priority level (KEP-1040; k8s.io/apiserver fairqueuing/queueset).

A :class:`QueueSet` orders the requests of one Limited priority level; it
does not decide *whether* a seat is free (the level and its borrowing do,
in :mod:`services.flowcontrol.apf`), only *which* waiting request goes next:

- Shuffle sharding: a flow's hash deals ``hand_size`` distinct queues out
  of ``queues``; the request joins the one holding the fewest seats
  (waiting + executing). A full queue (``queue_length_limit`` requests)
  rejects it.
- Fair queuing by virtual time: the virtual clock R advances at
  ``seats in use / active queues`` per real second (a queue is active
  while it has requests waiting or executing). Each queue keeps the
  virtual start of its next dispatch; dispatching a request of width
  ``w`` advances it by ``w * G`` (G, the estimated service time, 1 s),
  and when the request finishes the estimate is corrected by
  ``w * (G - actual)``. An idle queue that gets a request starts at the
  current R, so a newly active flow neither inherits debt nor credit.
  The next request is the head with the smallest virtual finish
  ``next_dispatch_r + w * G`` (ties: round robin from the last queue).

The clock is injected (``clock()`` returns seconds) so tests run without
sleeping. Not thread-safe: one event loop.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

ESTIMATED_SERVICE_SECONDS = 1.0  # G


def flow_hash(flow_schema: str, distinguisher: str) -> int:
    """A stable 64-bit hash of a flow (FlowSchema name + distinguisher)."""
    digest = hashlib.sha256(f"{flow_schema}\x00{distinguisher}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def deal(hash_value: int, deck_size: int, hand_size: int) -> list[int]:
    """``hand_size`` distinct queue indexes in [0, deck_size) chosen from ``hash_value`` (shuffle sharding).

    Card i is ``hash mod (deck_size - i)`` among the cards not yet dealt,
    as kube's shufflesharding Dealer does; the same hash always deals the
    same hand.
    """
    hand: list[int] = []
    for i in range(min(hand_size, deck_size)):
        hash_value, position = divmod(hash_value, deck_size - i)
        for taken in sorted(hand):  # map the position among remaining cards to a card
            if position >= taken:
                position += 1
        hand.append(position)
    return hand


@dataclass(eq=False)
class Request:
    """One request in a queue set: its flow, width in seats, arrival time (clock seconds) and payload."""

    flow_schema: str
    distinguisher: str
    width: int
    arrival: float = 0.0
    payload: Any = None
    queue: Queue | None = None
    started: float | None = None

    @property
    def hash(self) -> int:
        """The flow hash."""
        return flow_hash(self.flow_schema, self.distinguisher)


@dataclass(eq=False)
class Queue:
    """One fair queue: waiting requests, the virtual start of its next dispatch, seats executing."""

    index: int
    waiting: deque[Request] = field(default_factory=deque)
    next_dispatch_r: float = 0.0
    executing: int = 0
    seats_in_use: int = 0

    @property
    def waiting_seats(self) -> int:
        """Seats the waiting requests will take."""
        return sum(r.width for r in self.waiting)

    @property
    def active(self) -> bool:
        """Has requests waiting or executing."""
        return bool(self.waiting) or self.executing > 0


class QueueSet:
    """Fair queues of one priority level (see module docstring). ``queues`` 0 makes a queue-less (Reject) set."""

    def __init__(self, queues: int, hand_size: int, queue_length_limit: int,
                 clock: Callable[[], float]) -> None:
        self.queues = [Queue(i) for i in range(queues)]
        self.hand_size = hand_size
        self.queue_length_limit = queue_length_limit
        self.clock = clock
        self.virtual_time = 0.0
        self._last = clock()
        self._robin = -1
        self.seats_in_use = 0
        self.executing = 0
        # Kept by enqueue/remove/start/finish (the only writers of a queue's waiting and executing), so the
        # per-request reads below do not walk every queue: that walk was ~6% of flowcontrol's CPU per GET.
        self._waiting = 0
        self._active = 0

    # ------------------------------------------------------------ reading

    @property
    def waiting(self) -> int:
        """Requests waiting in all queues."""
        return self._waiting

    @property
    def waiting_seats(self) -> int:
        """Seats the waiting requests will take."""
        return sum(q.waiting_seats for q in self.queues)

    @property
    def active_queues(self) -> int:
        """Queues with requests waiting or executing."""
        return self._active

    def waiting_requests(self) -> Iterator[tuple[Queue, int, Request]]:
        """(queue, position in queue, request) of every waiting request."""
        for queue in self.queues:
            for position, request in enumerate(queue.waiting):
                yield queue, position, request

    # ------------------------------------------------------------ virtual time

    def advance(self) -> float:
        """Bring the virtual clock up to ``clock()``; returns it (seat-seconds per active queue)."""
        now = self.clock()
        elapsed, self._last = max(0.0, now - self._last), now
        active = self.active_queues
        if active and self.seats_in_use:
            self.virtual_time += elapsed * self.seats_in_use / active
        return self.virtual_time

    # ------------------------------------------------------------ queuing

    def choose_queue(self, request: Request) -> Queue | None:
        """The queue of the flow's hand holding the fewest seats (None for a queue-less set)."""
        if not self.queues:
            return None
        hand = deal(request.hash, len(self.queues), self.hand_size)
        return min((self.queues[i] for i in hand), key=lambda q: (q.waiting_seats + q.seats_in_use, q.index))

    def enqueue(self, request: Request) -> bool:
        """Put ``request`` in its queue; False (not queued) if the set has no queues or the queue is full."""
        self.advance()
        queue = self.choose_queue(request)
        if queue is None or len(queue.waiting) >= self.queue_length_limit:
            return False
        if not queue.active:
            queue.next_dispatch_r = self.virtual_time
        request.arrival = self.clock()
        request.queue = queue
        if not queue.active:
            self._active += 1
        queue.waiting.append(request)
        self._waiting += 1
        return True

    def peek(self) -> Request | None:
        """The waiting request fair queuing serves next (smallest virtual finish of a queue head), or None."""
        best: tuple[float, int] | None = None
        chosen: Request | None = None
        count = len(self.queues)
        for step in range(1, count + 1):
            queue = self.queues[(self._robin + step) % count]
            if not queue.waiting:
                continue
            head = queue.waiting[0]
            finish = queue.next_dispatch_r + head.width * ESTIMATED_SERVICE_SECONDS
            if best is None or finish < best[0]:
                best, chosen = (finish, step), head
        return chosen

    def remove(self, request: Request) -> bool:
        """Take a waiting request out of its queue (timed out or cancelled); False if it was not waiting."""
        queue = request.queue
        if queue is None or request.started is not None or request not in queue.waiting:
            return False
        self.advance()
        queue.waiting.remove(request)
        self._waiting -= 1
        if not queue.active:
            self._active -= 1
        return True

    # ------------------------------------------------------------ execution

    def start(self, request: Request) -> None:
        """Begin executing ``request``: the head of its queue (from :meth:`peek`), or an unqueued request."""
        self.advance()
        queue = request.queue
        if queue is not None:
            if not queue.waiting or queue.waiting[0] is not request:
                raise ValueError("only the head of a queue can start")
            queue.waiting.popleft()  # the queue stays active: the request executes in it
            self._waiting -= 1
            queue.next_dispatch_r += request.width * ESTIMATED_SERVICE_SECONDS
            queue.executing += 1
            queue.seats_in_use += request.width
            self._robin = queue.index
        request.started = self.clock()
        self.executing += 1
        self.seats_in_use += request.width

    def finish(self, request: Request) -> None:
        """``request`` completed: free its seats and correct its queue's virtual start by the actual service time."""
        self.advance()
        if request.started is None:
            raise ValueError("request was not executing")
        actual = self.clock() - request.started
        queue = request.queue
        if queue is not None:
            queue.executing -= 1
            queue.seats_in_use -= request.width
            queue.next_dispatch_r -= request.width * (ESTIMATED_SERVICE_SECONDS - actual)
            if not queue.active:
                self._active -= 1
        self.executing -= 1
        self.seats_in_use -= request.width
