"""API Priority and Fairness: classification -> priority level -> queue set -> seat (KEP-1040).

:class:`Controller` is the synchronous core (clock injected, no sleeping
in tests); :class:`services.flowcontrol.apfdispatch.APFDispatcher` wraps it as the Dispatch stream's
:class:`~services.flowcontrol.dispatcher.Dispatcher` (waiting on an
asyncio future with a queue-wait limit).

Concurrency ("API Priority and Fairness", "Seats"; KEP-1040 borrowing):
the server's limit is ``--max-requests-inflight`` +
``--max-mutating-requests-inflight``; a Limited level's nominal limit is
``ceil(total * shares / sum of all levels' shares)``, of which
``round(nominal * lendablePercent / 100)`` seats may be lent. kube
re-divides seats every 10 s from measured demand; kapi lends instantly
instead: a level may run more than its nominal seats (up to
``borrowingLimitPercent`` of it more, unlimited when unset) while every
other level's unlent seats stay reserved, i.e. while
``sum over levels of max(seats in use, nominal - lendable) <= sum of nominals``.
Exempt requests never wait and take no seat from anyone.

Seat leases (:mod:`services.flowcontrol.leases`): seats a gateway holds to
run requests without a Start count in ``seats_in_use`` of their level
(``Level.leased``) like executing requests; :meth:`Controller.take_leased`
grants them only while nothing waits, :meth:`Controller.give_back_leased`
frees them, and ``on_contention`` is called whenever a request has to
queue or is refused for lack of seats so the leases can be revoked.
``generation`` counts configuration changes (a classification remembered
at an older one is void); ``on_reconfigure`` is called when it moves.

Requests: a Queue level enqueues by shuffle sharding and serves its queues
fairly (:mod:`~services.flowcontrol.queueset`); a full queue or a wait past
:func:`wait_limit` seconds (a fourth of its deadline) is a 429; a Reject level rejects at once when
no seat is free. A request's width (seats) comes from
:func:`services.flowcontrol.config.width`, at most its level's nominal limit.
Retry-After is the time the level's measured drain rate (seats finished
per second over the last ``DRAIN_WINDOW`` seconds) needs to serve the
seats waiting ahead, in [1, 60] seconds (kube always says 1).
"""

from __future__ import annotations

import math
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kapi.attributes import Attributes
from services.flowcontrol import config as cfg
from services.flowcontrol import defaults
from services.flowcontrol.dispatcher import TOO_MANY_REQUESTS
from services.flowcontrol.queueset import ESTIMATED_SERVICE_SECONDS, QueueSet, Request

QUEUE_WAIT_LIMIT = 15.0  # seconds; kube: --request-timeout / 4, for a request without a deadline
MAX_QUEUE_WAIT = 60.0  # seconds; kube's hard limit on any request's queue wait


def wait_limit(asked: float, default: float = QUEUE_WAIT_LIMIT) -> float:
    """Seconds a queued request may wait before its 429: ``asked`` (a fourth of its deadline, from the gateway)
    or, when 0, ``default``; never above MAX_QUEUE_WAIT (kube's getRequestWaitContext)."""
    return min(asked if asked > 0 else default, MAX_QUEUE_WAIT)
DRAIN_WINDOW = 10.0  # seconds of finished requests that measure the drain rate
MAX_RETRY_AFTER = 60

EXECUTING, QUEUED, REJECTED = "executing", "queued", "rejected"
QUEUE_FULL, TIME_OUT, CONCURRENCY_LIMIT, CANCELLED = "queue-full", "time-out", "concurrency-limit", "cancelled"
_WAIT_BUCKETS = (0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0, math.inf)  # kube's + +Inf


@dataclass(eq=False)
class Ticket:
    """One request's passage: classification, state, and (for 429s) reason and Retry-After seconds.

    ``notify`` is called once when a queued ticket is dispatched or rejected.
    """

    attrs: Attributes
    flow_schema: cfg.FlowSchema
    level: Level
    request: Request
    wall_arrival: float
    state: str = QUEUED
    reason: str = ""
    retry_after: int = 0
    notify: Callable[[], None] | None = None
    generation: int = 0  # the Controller's configuration generation when it was classified

    @property
    def rejected_message(self) -> str:
        """The 429 message."""
        return TOO_MANY_REQUESTS


class DrainMeter:
    """Seats finished per second over the last ``window`` seconds."""

    def __init__(self, clock: Callable[[], float], window: float = DRAIN_WINDOW):
        self._clock, self._window = clock, window
        self._events: deque[tuple[float, int]] = deque()
        self._start = clock()

    def record(self, seats: int) -> None:
        """A request holding ``seats`` finished now."""
        self._events.append((self._clock(), seats))
        self._trim()

    def rate(self) -> float:
        """Seats per second (0 when nothing finished in the window)."""
        self._trim()
        if not self._events:
            return 0.0
        now = self._clock()
        span = max(min(self._window, now - self._start), 1e-3)
        return sum(s for _, s in self._events) / span

    def _trim(self) -> None:
        horizon = self._clock() - self._window
        while self._events and self._events[0][0] < horizon:
            self._events.popleft()


@dataclass(eq=False)
class Level:
    """The live state of one priority level: its config, limits, queue set and executing requests."""

    config: cfg.PriorityLevel
    queueset: QueueSet | None
    drain: DrainMeter
    nominal: int = 0
    lendable: int = 0
    borrow_limit: int | None = None
    executing: dict[int, Ticket] = field(default_factory=dict)
    seats_in_use: int = 0  # executing requests' seats plus leased seats
    quiescing: bool = False
    leased: int = 0  # seats gateways hold as leases (part of seats_in_use)

    @property
    def name(self) -> str:
        """The level's name."""
        return self.config.name

    @property
    def guaranteed(self) -> int:
        """Seats never lent."""
        return self.nominal - self.lendable

    @property
    def waiting(self) -> int:
        """Requests waiting."""
        return self.queueset.waiting if self.queueset else 0

    @property
    def idle(self) -> bool:
        """Nothing waiting or executing, and no seat leased."""
        return not self.executing and not self.waiting and not self.leased


class Controller:
    """The APF state of the whole cluster: configuration, levels, tickets and counters (see module docstring).

    ``server_concurrency_limit`` is total seats (max-requests-inflight +
    max-mutating-requests-inflight); ``clock`` returns monotonic seconds,
    ``wall`` wall-clock seconds (for arrival times in dumps).
    """

    def __init__(self, server_concurrency_limit: int, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time, queue_wait_limit: float = QUEUE_WAIT_LIMIT):
        if server_concurrency_limit < 1:
            raise ValueError("the server concurrency limit (max-requests-inflight + "
                             "max-mutating-requests-inflight) must be at least 1")
        self.server_concurrency_limit = server_concurrency_limit
        self.clock, self.wall = clock, wall
        self.queue_wait_limit = queue_wait_limit
        self.levels: dict[str, Level] = {}
        self.schemas: dict[str, cfg.FlowSchema] = {}
        self.classifier = cfg.Classifier((), ())
        self.counters: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
        # (priority level, flow schema, execute "true"/"false") -> cumulative bucket counts / sum of seconds
        self.wait_histogram: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0] * len(_WAIT_BUCKETS))
        self.wait_sum: dict[tuple[str, str, str], float] = defaultdict(float)
        self._ids = 0
        self.generation = 0  # bumped by each configure that changes schemas or levels
        self.on_contention: Callable[[Level], None] | None = None
        self.on_reconfigure: Callable[[], None] | None = None
        # (priority level, flow schema) -> requests gateways run without a Start now (their reports, summed)
        self.local_executing: dict[tuple[str, str], int] = defaultdict(int)
        self.configure([], [])

    # ------------------------------------------------------------ configuration

    def configure(self, flow_schemas: Iterable[cfg.FlowSchema], priority_levels: Iterable[cfg.PriorityLevel]) -> None:
        """Adopt a new configuration; levels gone from it finish what they hold (quiescing) and then vanish.

        The mandatory catch-all level always exists (kube's built-in copy when
        the object is missing).
        """
        configs = {pl.name: pl for pl in priority_levels}
        configs.setdefault(defaults.CATCH_ALL, cfg.FALLBACK_CATCH_ALL_LEVEL)
        schemas = {fs.name: fs for fs in flow_schemas}
        current = {name: lv.config for name, lv in self.levels.items() if not lv.quiescing}
        changed = schemas != self.schemas or configs != current or not self.generation
        for name, pl in configs.items():
            level = self.levels.get(name)
            if level is None or level.config != pl or level.quiescing:
                self.levels[name] = self._new_level(pl, level)
        for name, level in list(self.levels.items()):
            if name not in configs:
                level.quiescing = True
                if level.idle:
                    del self.levels[name]
        self.schemas = schemas
        self.classifier = cfg.Classifier(self.schemas.values(), configs)
        self._compute_limits()
        if changed:
            self.generation += 1
            if self.on_reconfigure is not None:
                self.on_reconfigure()
        self._dispatch()

    def _new_level(self, pl: cfg.PriorityLevel, old: Level | None) -> Level:
        queueset = None if pl.exempt else QueueSet(pl.queues, pl.hand_size, pl.queue_length_limit, self.clock)
        level = Level(pl, queueset, old.drain if old else DrainMeter(self.clock))
        if old is not None:  # keep what executes; requeue what waits (in arrival order)
            level.executing, level.seats_in_use, level.leased = old.executing, old.seats_in_use, old.leased
            for ticket in level.executing.values():
                ticket.level = level
            if level.queueset is not None:
                level.queueset.executing = len(level.executing)
                level.queueset.seats_in_use = level.seats_in_use - level.leased
            waiting = sorted((t for _, _, t in self._waiting_tickets(old)), key=lambda t: t.request.arrival)
            for ticket in waiting:
                ticket.level = level
                ticket.request.queue = None
                if level.queueset is None or not level.queueset.queues or not level.queueset.enqueue(ticket.request):
                    self._reject(ticket, QUEUE_FULL)
            # the old executing requests are finished against the new level's totals
            for ticket in level.executing.values():
                ticket.request.queue = None
        return level

    def _compute_limits(self) -> None:
        levels = [lv for lv in self.levels.values() if not lv.quiescing]
        shares = sum(lv.config.nominal_concurrency_shares for lv in levels) or 1
        for level in self.levels.values():
            pl = level.config
            nominal = math.ceil(self.server_concurrency_limit * pl.nominal_concurrency_shares / shares)
            level.nominal = nominal
            level.lendable = _round(nominal * pl.lendable_percent / 100)
            level.borrow_limit = (None if pl.borrowing_limit_percent is None
                                  else _round(nominal * pl.borrowing_limit_percent / 100))

    # ------------------------------------------------------------ requests

    def submit(self, attrs: Attributes, list_limit: int = 0) -> Ticket:
        """Classify and admit, queue or reject one request; the returned ticket's ``state`` says which."""
        classification = self.classifier.classify(attrs)
        schema = classification.flow_schema
        level = self.levels.get(schema.priority_level) or self.levels[defaults.CATCH_ALL]
        width = cfg.width(attrs, list_limit)
        if not level.config.exempt:
            width = max(1, min(width, level.nominal))
        request = Request(schema.name, classification.distinguisher, width, self.clock())
        ticket = Ticket(attrs, schema, level, request, self.wall(), generation=self.generation)
        request.payload = ticket
        self._count("arrived", level.name, schema.name)
        if level.config.exempt:
            self._execute(ticket)
            return ticket
        assert level.queueset is not None
        if not level.queueset.queues:  # Reject
            if level.waiting == 0 and self._fits(level, width):
                self._execute(ticket)
            else:
                self._reject(ticket, CONCURRENCY_LIMIT)
                self._contended(level)
            return ticket
        if not level.queueset.enqueue(request):
            self._reject(ticket, QUEUE_FULL)
            self._contended(level)
            return ticket
        self._dispatch()
        if ticket.state == QUEUED:
            self._contended(level)
        return ticket

    def _contended(self, level: Level) -> None:
        if self.on_contention is not None:
            self.on_contention(level)

    # ------------------------------------------------------------ leases and local reports

    def take_leased(self, level: Level, seats: int) -> bool:
        """Count ``seats`` more seats of ``level`` as leased if that takes nothing from a waiting request.

        True (and ``seats_in_use``/``leased`` raised) when no request waits at
        ``level``, the seats fit its limit and borrowing rules as a request of
        that width would (:meth:`_fits`), and, while a request waits at any
        other level, ``level`` stays within its guaranteed (unlendable) seats.
        False for the exempt level (it needs no seats) and a quiescing one.
        """
        if seats < 1 or level.config.exempt or level.quiescing or level.waiting:
            return False
        if not self._fits(level, seats):
            return False
        if level.seats_in_use + seats > level.guaranteed and any(lv.waiting for lv in self.levels.values()):
            return False
        level.seats_in_use += seats
        level.leased += seats
        return True

    def give_back_leased(self, level_name: str, seats: int) -> None:
        """``seats`` leased seats of the level named ``level_name`` are free again; dispatches what now fits.

        A level gone from the configuration has already forgotten them (nothing
        to do); at most the level's leased seats are given back.
        """
        level = self.levels.get(level_name)
        if level is None or seats < 1:
            return
        seats = min(seats, level.leased)
        level.leased -= seats
        level.seats_in_use -= seats
        if level.quiescing and level.idle:
            del self.levels[level.name]
        self._dispatch()

    def record_local(self, level_name: str, flow_schema: str, dispatched: int, finished: int) -> None:
        """Count requests a gateway ran without a Start (a leased seat, or exempt).

        ``dispatched`` requests arrived and were dispatched with a zero queue
        wait (``dispatched_requests_total``, ``request_wait_duration_seconds``
        execute="true"); ``finished`` ones completed (the level's drain rate,
        one seat each). A level not (or no longer) configured counts nothing.
        """
        level = self.levels.get(level_name)
        if level is None:
            return
        key = (level_name, flow_schema)
        if dispatched > 0:
            self.counters["arrived"][key] += dispatched
            self.counters["dispatched"][key] += dispatched
            histogram = self.wait_histogram[key + ("true",)]
            for i in range(len(_WAIT_BUCKETS)):  # 0 s is in every bucket
                histogram[i] += dispatched
        if finished > 0:
            level.drain.record(finished)

    def finish(self, ticket: Ticket) -> None:
        """The request completed (or its stream broke): free its seats and dispatch what now fits."""
        if ticket.state == QUEUED:
            self.cancel(ticket)
            return
        if ticket.state != EXECUTING:
            return
        ticket.state = "finished"
        level = ticket.level
        level.executing.pop(id(ticket), None)
        if not level.config.exempt:
            level.seats_in_use -= ticket.request.width
            assert level.queueset is not None
            level.queueset.finish(ticket.request)
        level.drain.record(ticket.request.width)
        if level.quiescing and level.idle and self.levels.get(level.name) is level:
            del self.levels[level.name]
        self._dispatch()

    def cancel(self, ticket: Ticket) -> None:
        """Withdraw a queued request (the client went away); counted as cancelled. Finishes an executing one."""
        if ticket.state == EXECUTING:
            self.finish(ticket)
            return
        if ticket.state != QUEUED:
            return
        queueset = ticket.level.queueset
        if queueset is not None:
            queueset.remove(ticket.request)
        ticket.state, ticket.reason = REJECTED, CANCELLED
        self._count("rejected:" + CANCELLED, ticket.level.name, ticket.flow_schema.name)

    def expire(self, ticket: Ticket) -> None:
        """The queue wait limit passed: a still-queued ticket is rejected (429, reason time-out)."""
        if ticket.state != QUEUED:
            return
        queueset = ticket.level.queueset
        if queueset is not None:
            queueset.remove(ticket.request)
        self._reject(ticket, TIME_OUT)

    # ------------------------------------------------------------ internals

    def _fits(self, level: Level, width: int) -> bool:
        if level.borrow_limit is not None and level.seats_in_use + width > level.nominal + level.borrow_limit:
            return False
        reserved = 0
        for other in self.levels.values():
            if other.config.exempt:
                continue
            use = other.seats_in_use + (width if other is level else 0)
            reserved += max(use, 0 if other.quiescing else other.guaranteed)
        return reserved <= self._total_seats()

    def _total_seats(self) -> int:
        return sum(lv.nominal for lv in self.levels.values() if not lv.config.exempt and not lv.quiescing)

    def _dispatch(self) -> None:
        """Start every waiting request that fits, least-loaded levels first."""
        progress = True
        while progress:
            progress = False
            candidates = [lv for lv in self.levels.values() if lv.queueset is not None and lv.waiting]
            candidates.sort(key=lambda lv: lv.seats_in_use / max(lv.nominal, 1))
            for level in candidates:
                assert level.queueset is not None
                request = level.queueset.peek()
                if request is not None and self._fits(level, request.width):
                    self._execute(request.payload)
                    progress = True
                    break

    def _execute(self, ticket: Ticket) -> None:
        level = ticket.level
        waited = 0.0 if level.config.exempt else self.clock() - ticket.request.arrival
        if level.queueset is not None:
            level.queueset.start(ticket.request)
            level.seats_in_use += ticket.request.width
        else:
            ticket.request.started = self.clock()
        ticket.state = EXECUTING
        level.executing[id(ticket)] = ticket
        self._count("dispatched", level.name, ticket.flow_schema.name)
        self._observe_wait((level.name, ticket.flow_schema.name, "true"), waited)
        if ticket.notify is not None:
            ticket.notify()

    def _reject(self, ticket: Ticket, reason: str) -> None:
        ticket.state, ticket.reason = REJECTED, reason
        ticket.retry_after = self.retry_after(ticket.level, ticket.request.width)
        self._count("rejected:" + reason, ticket.level.name, ticket.flow_schema.name)
        self._observe_wait((ticket.level.name, ticket.flow_schema.name, "false"),
                           self.clock() - ticket.request.arrival)
        if ticket.notify is not None:
            ticket.notify()

    def retry_after(self, level: Level, width: int) -> int:
        """Seconds until ``width`` more seats would likely be served at ``level`` (measured drain rate), in [1, 60]."""
        rate = level.drain.rate()
        if rate <= 0:
            return 1
        ahead = (level.queueset.waiting_seats if level.queueset else 0) + width
        return max(1, min(MAX_RETRY_AFTER, math.ceil(ahead / rate)))

    def _count(self, name: str, level: str, schema: str) -> None:
        self.counters[name][(level, schema)] += 1

    def _observe_wait(self, key: tuple[str, str, str], seconds: float) -> None:
        self.wait_sum[key] += seconds
        histogram = self.wait_histogram[key]
        for i, bound in enumerate(_WAIT_BUCKETS):
            if seconds <= bound:
                histogram[i] += 1

    def _waiting_tickets(self, level: Level) -> Iterable[tuple[int, int, Ticket]]:
        if level.queueset is None:
            return []
        return [(q.index, pos, r.payload) for q, pos, r in level.queueset.waiting_requests()]

    # ------------------------------------------------------------ views

    def metrics(self) -> dict[str, Any]:
        """Counters and gauges named after kube's apiserver_flowcontrol_* metrics (without the prefix).

        ``{"rejected_requests_total": [{"priority_level", "flow_schema", "reason", "value"}],
        "dispatched_requests_total": [{"priority_level", "flow_schema", "value"}],
        "current_inqueue_requests" / "current_executing_requests" / "current_executing_seats":
        [{"priority_level", "flow_schema", "value"}] (executing includes what gateways run on leased seats or
        exempt without a Start, one seat each, as last reported), "nominal_limit_seats" / "current_limit_seats":
        [{"priority_level", "value"}], "request_wait_duration_seconds": [{"priority_level", "flow_schema",
        "execute", "buckets", "sum", "count"}]}``; ``buckets`` maps upper bounds (seconds, as strings) to
        cumulative counts; ``execute`` is "true" for dispatched and "false" for rejected requests. Label sets
        follow k8s.io/apiserver pkg/util/flowcontrol/metrics.
        """
        out: dict[str, Any] = {"rejected_requests_total": [], "dispatched_requests_total": []}
        for name, by in sorted(self.counters.items()):
            for (level, schema), value in sorted(by.items()):
                if name.startswith("rejected:"):
                    out["rejected_requests_total"].append({"priority_level": level, "flow_schema": schema,
                                                           "reason": name.split(":", 1)[1], "value": value})
                elif name == "dispatched":
                    out["dispatched_requests_total"].append({"priority_level": level, "flow_schema": schema,
                                                             "value": value})
        levels = sorted(self.levels.values(), key=lambda lv: lv.name)
        inqueue: dict[tuple[str, str], int] = defaultdict(int)
        executing: dict[tuple[str, str], int] = defaultdict(int)
        seats: dict[tuple[str, str], int] = defaultdict(int)
        for lv in levels:
            for _, _, ticket in self._waiting_tickets(lv):
                inqueue[(lv.name, ticket.flow_schema.name)] += 1
            for ticket in lv.executing.values():
                executing[(lv.name, ticket.flow_schema.name)] += 1
                seats[(lv.name, ticket.flow_schema.name)] += ticket.request.width
        for key, value in self.local_executing.items():  # run on leased seats (one each) or exempt
            if value > 0:
                executing[key] += value
                seats[key] += value
        for name, table in (("current_inqueue_requests", inqueue), ("current_executing_requests", executing),
                            ("current_executing_seats", seats)):
            out[name] = [{"priority_level": level, "flow_schema": schema, "value": value}
                         for (level, schema), value in sorted(table.items())]
        out["nominal_limit_seats"] = [{"priority_level": lv.name, "value": lv.nominal} for lv in levels]
        out["current_limit_seats"] = [{"priority_level": lv.name, "value": self.current_limit(lv)} for lv in levels]
        out["request_wait_duration_seconds"] = [
            {"priority_level": level, "flow_schema": schema, "execute": execute,
             "buckets": {str(b): c for b, c in zip(_WAIT_BUCKETS, counts, strict=True)},
             "sum": self.wait_sum[(level, schema, execute)], "count": counts[-1]}
            for (level, schema, execute), counts in sorted(self.wait_histogram.items())]
        return out

    def current_limit(self, level: Level) -> int:
        """Seats ``level`` could hold right now: its in-use seats plus what it could still take (borrowing)."""
        if level.config.exempt:
            return level.nominal
        others = sum(max(o.seats_in_use, o.guaranteed) for o in self.levels.values()
                     if o is not level and not o.config.exempt and not o.quiescing)
        limit = self._total_seats() - others
        if level.borrow_limit is not None:
            limit = min(limit, level.nominal + level.borrow_limit)
        return max(limit, level.seats_in_use)

    def _level_totals(self, level: Level) -> tuple[int, int, int, int]:
        """(dispatched, rejected, timed out, cancelled) requests of ``level`` since it was first configured."""
        def total(name: str) -> int:
            return sum(v for (lv, _), v in self.counters.get(name, {}).items() if lv == level.name)
        return (total("dispatched"), total("rejected:" + QUEUE_FULL) + total("rejected:" + CONCURRENCY_LIMIT),
                total("rejected:" + TIME_OUT), total("rejected:" + CANCELLED))

    def dump_priority_levels(self) -> str:
        """kube's /debug/api_priority_and_fairness/dump_priority_levels (apf_controller_debug.go), by name.

        Columns: PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing,
        WaitingRequests, ExecutingRequests, DispatchedRequests,
        RejectedRequests (queue full or concurrency limit), TimedoutRequests,
        CancelledRequests; the exempt level has a queue-less set (0 active
        queues, nothing waiting) as in kube since exempt borrowing.
        ExecutingRequests includes what gateways run without a Start (leased
        seats, exempt) as last reported; a level holding leased seats is not idle.
        """
        rows = [["PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests", "ExecutingRequests",
                 "DispatchedRequests", "RejectedRequests", "TimedoutRequests", "CancelledRequests"]]
        local: dict[str, int] = defaultdict(int)
        for (name, _), value in self.local_executing.items():
            local[name] += value
        for level in sorted(self.levels.values(), key=lambda lv: lv.name):
            active = sum(1 for q in level.queueset.queues if q.waiting) if level.queueset else 0
            executing = len(level.executing) + local[level.name]
            rows.append([level.name, str(active), _bool(level.idle and not executing), _bool(level.quiescing),
                         str(level.waiting), str(executing), *map(str, self._level_totals(level))])
        return tabwrite(rows)

    def dump_queues(self) -> str:
        """kube's dump_queues: one row per queue of each level (queue-less levels have none).

        Columns: PriorityLevelName, Index, PendingRequests, ExecutingRequests,
        SeatsInUse, NextDispatchR, InitialSeatsSum, MaxSeatsSum, TotalWorkSum
        (seat-seconds as kube's ``SeatSeconds.String``).
        """
        rows = [["PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse", "NextDispatchR",
                 "InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum"]]
        for level in sorted(self.levels.values(), key=lambda lv: lv.name):
            for queue in level.queueset.queues if level.queueset else []:
                seats = sum(r.width for r in queue.waiting)
                rows.append([level.name, str(queue.index), str(len(queue.waiting)), str(queue.executing),
                             str(queue.seats_in_use), _seat_seconds(queue.next_dispatch_r), str(seats), str(seats),
                             _seat_seconds(seats * ESTIMATED_SERVICE_SECONDS)])
        return tabwrite(rows)

    def dump_requests(self, include_request_details: bool = False) -> str:
        """kube's dump_requests: per level, each queue's waiting requests (queue index, position), then its
        executing ones (position -1), then the level's queue-less executing requests (-1, -1).

        Columns: PriorityLevelName, FlowSchemaName, QueueIndex,
        RequestIndexInQueue, FlowDistingsher (kube's spelling), ArriveTime,
        InitialSeats, FinalSeats, AdditionalLatency, StartTime (zero time while
        waiting); ``includeRequestDetails`` adds UserName, Verb, APIPath,
        Namespace, Name, APIVersion, Resource, SubResource.
        """
        header = ["PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue", "FlowDistingsher",
                  "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency", "StartTime"]
        if include_request_details:
            header += ["UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource"]
        rows = [header]

        def add(level: Level, queue: int, position: int, ticket: Ticket) -> None:
            r = ticket.request
            start = _rfc3339_nano(ticket.wall_arrival + (r.started - r.arrival)) if r.started is not None \
                else ZERO_TIME
            row = [level.name, ticket.flow_schema.name, str(queue), str(position), r.distinguisher,
                   _rfc3339_nano(ticket.wall_arrival), str(r.width), "0", "0s", start]
            if include_request_details:
                a = ticket.attrs
                row += [a.user.username, a.verb, a.path, a.namespace, a.name, _gv(a), a.resource, a.subresource]
            rows.append(row)

        for level in sorted(self.levels.values(), key=lambda lv: lv.name):
            executing = sorted(level.executing.values(), key=lambda t: t.request.started or 0.0)
            for queue in level.queueset.queues if level.queueset else []:
                for position, request in enumerate(queue.waiting):
                    add(level, queue.index, position, request.payload)
                for ticket in executing:
                    if ticket.request.queue is queue:
                        add(level, queue.index, -1, ticket)
            for ticket in executing:
                if ticket.request.queue is None:
                    add(level, -1, -1, ticket)
        return tabwrite(rows)

    def dump_seats(self) -> str:
        """Requests holding seats now (kubernetes issue 118746; kapi's own dump), oldest first, in kube's layout.

        Columns: PriorityLevelName, FlowSchemaName, FlowDistingsher, Seats
        (0 on the exempt level), UserName, Verb, APIPath, AgeSeconds.
        """
        rows = [["PriorityLevelName", "FlowSchemaName", "FlowDistingsher", "Seats", "UserName", "Verb", "APIPath",
                 "AgeSeconds"]]
        now = self.clock()
        tickets = [t for lv in self.levels.values() for t in lv.executing.values()]
        tickets.sort(key=lambda t: t.request.started or 0.0)
        for t in tickets:
            seats = 0 if t.level.config.exempt else t.request.width
            age = now - (t.request.started or now)
            rows.append([t.level.name, t.flow_schema.name, t.request.distinguisher, str(seats),
                         t.attrs.user.username, t.attrs.verb, t.attrs.path, f"{age:.3f}"])
        return tabwrite(rows)


ZERO_TIME = "0001-01-01T00:00:00Z"  # Go's zero time.Time in RFC 3339


def tabwrite(rows: list[list[str]]) -> str:
    """Rows as kube's debug dumps write them: cells joined by ``",\t"`` through Go's
    ``tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)``.

    Every cell but a line's last is padded with spaces to its column's width
    (the widest such cell plus one, at least 8); each line ends with a
    newline. All rows have the same number of cells, so each column is one
    tabwriter block.
    """
    cells = [[c + "," for c in row[:-1]] + row[-1:] for row in rows]
    columns = max(len(r) for r in cells) - 1
    widths = [max([8] + [len(r[i]) + 1 for r in cells if i < len(r) - 1]) for i in range(columns)]
    return "".join("".join(c.ljust(widths[i]) if i < len(r) - 1 else c for i, c in enumerate(r)) + "\n"
                   for r in cells)


def _seat_seconds(value: float) -> str:
    """kube's ``SeatSeconds.String``: whole seat-seconds, a dot, 8 fractional digits, ``ss``."""
    scaled = max(0, round(value * 100_000_000))
    return f"{scaled // 100_000_000}.{scaled % 100_000_000:08d}ss"


def _rfc3339_nano(seconds: float) -> str:
    """Go's ``time.RFC3339Nano`` of a UTC wall time: trailing fractional zeros (and a bare dot) dropped."""
    whole = math.floor(seconds)
    nanos = int(round((seconds - whole) * 1e9))
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, nanos - 1_000_000_000
    fraction = f".{nanos:09d}".rstrip("0").rstrip(".")
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + fraction + "Z"


def _round(value: float) -> int:
    """Go's math.Round for non-negative values (half away from zero)."""
    return math.floor(value + 0.5)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _gv(attrs: Attributes) -> str:
    return f"{attrs.api_group}/{attrs.api_version}" if attrs.api_group else attrs.api_version
