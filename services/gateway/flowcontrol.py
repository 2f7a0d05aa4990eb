"""The gateway's side of API Priority and Fairness: one long-lived stream to the flowcontrol service.

Every request sends a ``Start`` and waits for its Decision; when it
completes the gateway sends a ``Finish``. One bidirectional stream per
gateway process carries all of them (docs/architecture.md, "The request path": no unary
call per request). If the flowcontrol service is unreachable, the gateway falls back
to local max-in-flight limits (``--max-requests-inflight``,
``--max-mutating-requests-inflight``; docs/architecture.md, "Failure policy") and keeps trying
to reconnect; :attr:`FlowControlClient.connected` says which is in use
(``/readyz?verbose``). A :class:`Seat` carries the decision's FlowSchema and
PriorityLevel UIDs (the ``X-Kubernetes-PF-*-UID`` response headers) and can
be given back early: a long-running request (watch) holds its seat only
until its response starts. Source: KEP-1040 and k8s.io/apiserver
pkg/server/filters/maxinflight.go.

Seat leases (``--apf-seat-leases``, on by default; services/flowcontrol/leases.py
has the service's rules): each Start's Decision tells how the request was
classified; the gateway remembers it per :func:`classification_key`, tagged
with the service's configuration generation (a newer generation voids every
entry). A request whose key is remembered as exempt runs without a Start; one
remembered as leasable (width 1) and not long-running runs on a seat its level
leased to this stream while one is free, else it sends a Start as before.
Revocations stop the use of a level's lease at once; idle seats go back at
once, busy ones when their request finishes. What ran without a Start is
reported every ``REPORT_SECONDS`` (counts per flow schema and level, and the
peak in-flight demand per level). All of it belongs to one stream session: a
broken stream forgets the leases and classifications (the service frees the
seats) and the local fallback applies as without leases.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import grpc

from kapi import errors, grpcutil
from kapi.attributes import Attributes
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc

log = logging.getLogger(__name__)

TOO_MANY = "Too many requests, please try again later."
RETRY_SECONDS = 0.1  # the first wait after the Dispatch stream broke; doubles per failed attempt
RETRY_MAX_SECONDS = 5.0  # the cap of that wait (a channel that turns READY ends it sooner)
REPORT_SECONDS = 0.1  # how often what ran without a Start is reported (when something changed)
CLASSIFIED_MAX = 4096  # remembered classifications per stream session (cleared when full)
FLUSH_SECONDS = 1.0  # longest a Dump waits for the service to apply this gateway's report first
# The APF debug dumps list the requests holding seats, the dumping request included: those always send a Start.
SEAT_VIEWS = "/debug/api_priority_and_fairness/"

ClassificationKey = tuple[str, tuple[str, ...], str, bool, str, str, str, str, str]


def classification_key(attrs: Attributes) -> ClassificationKey:
    """Everything APF classification reads of a request, as a hashable tuple.

    FlowSchema subjects match the user name and groups; resource rules the
    verb, API group, ``resource/subresource`` and namespace (none: cluster
    scope); non-resource rules the verb and path; distinguishers use the user
    name or the namespace (services/flowcontrol/config.py, kube's rule.go).
    Name, API version, uid and extra are not read, so a GET of any object of
    a collection shares one key. The path counts only for a non-resource
    request.
    """
    user = attrs.user
    return (user.username, user.groups, attrs.verb, attrs.resource_request, attrs.api_group, attrs.resource,
            attrs.subresource, attrs.namespace, "" if attrs.resource_request else attrs.path)


@dataclass(frozen=True, slots=True)
class Classified:
    """A remembered classification: generation it was made at, names, UIDs, and whether it can skip the Start."""

    generation: int
    flow_schema: str
    priority_level: str
    flow_schema_uid: str
    priority_level_uid: str
    exempt: bool
    leasable: bool


class Lease:
    """This stream's seats of one priority level: ``held`` (granted, not returned), ``limit`` (may use), ``busy``.

    ``in_flight`` counts every leasable request of the level in progress on
    this gateway (leased or through a Start) and ``peak`` its maximum since
    the last report: the demand the service sizes the lease from.
    """

    __slots__ = ("held", "limit", "busy", "in_flight", "peak", "reported_peak")

    def __init__(self) -> None:
        self.held = self.limit = self.busy = self.in_flight = self.peak = 0
        self.reported_peak = -1

    def enter(self) -> None:
        """One more leasable request of the level in progress."""
        self.in_flight += 1
        if self.in_flight > self.peak:
            self.peak = self.in_flight

    def excess(self) -> int:
        """Seats to give back now: held beyond both the limit and the busy ones (subtracted from ``held``)."""
        extra = self.held - max(self.limit, self.busy)
        if extra <= 0:
            return 0
        self.held -= extra
        return extra


class Session:
    """One Dispatch stream's state: its outbox, remembered classifications, leases and what to report.

    ``open`` turns False when the stream ends; seats released after that
    send nothing (the service freed them with the stream).
    """

    def __init__(self, outbox: asyncio.Queue[flowcontrol_pb2.DispatchRequest | None], leases: bool,
                 sent: Counter[str]):
        self.outbox = outbox
        self.leases_on = leases
        self.open = True
        self.generation = 0
        self.classified: dict[ClassificationKey, Classified] = {}
        self.leases: dict[str, Lease] = {}
        # (flow schema, priority level) -> [dispatched, finished, executing, executing last reported]
        self.local: dict[tuple[str, str], list[int]] = {}
        self.acks: dict[int, asyncio.Future[None]] = {}  # report sequence -> resolved when the service applied it
        self._sent = sent

    def send(self, kind: str, message: flowcontrol_pb2.DispatchRequest) -> None:
        """Queue one message (counted by kind in the client's ``sent``)."""
        self._sent[kind] += 1
        self.outbox.put_nowait(message)

    def acknowledged(self, sequence: int) -> None:
        """The service applied every report up to ``sequence``."""
        for seq in [s for s in self.acks if s <= sequence]:
            fut = self.acks.pop(seq)
            if not fut.done():
                fut.set_result(None)

    def close(self) -> None:
        """The stream ended: nothing more is sent; flushes waiting for an answer stop waiting."""
        self.open = False
        self.acknowledged(max(self.acks, default=0))

    def new_generation(self, generation: int) -> None:
        """The service's configuration moved to ``generation``: forget older classifications."""
        if generation > self.generation:
            self.generation = generation
            self.classified.clear()

    def learn(self, key: ClassificationKey, reply: flowcontrol_pb2.DispatchResponse) -> None:
        """Remember a Decision's classification if it can skip a Start (exempt or leasable) and is current."""
        self.new_generation(reply.config_generation)
        if reply.config_generation != self.generation or not (reply.exempt or reply.leasable):
            return
        if len(self.classified) >= CLASSIFIED_MAX:
            self.classified.clear()
        self.classified[key] = Classified(reply.config_generation, reply.flow_schema, reply.priority_level,
                                          reply.flow_schema_uid, reply.priority_level_uid, reply.exempt,
                                          reply.leasable)

    def lease(self, level: str) -> Lease:
        """The lease of ``level`` (an empty one at first)."""
        lease = self.leases.get(level)
        if lease is None:
            lease = self.leases[level] = Lease()
        return lease

    def apply(self, change: flowcontrol_pb2.LeaseChange) -> None:
        """A grant adds seats (all usable); a revocation lowers the limit to ``keep`` and returns what is idle."""
        lease = self.lease(change.priority_level)
        if change.grant:
            lease.held += change.grant
            lease.limit = lease.held
        if change.revoke:
            lease.limit = min(change.keep, lease.held)
            self.give_back(change.priority_level, lease)

    def give_back(self, level: str, lease: Lease) -> None:
        """Return the seats of ``lease`` beyond its limit that no request uses."""
        extra = lease.excess()
        if extra and self.open:
            self.send("lease_return", flowcontrol_pb2.DispatchRequest(
                lease_return=flowcontrol_pb2.LeaseReturn(priority_level=level, seats=extra)))

    def count(self, entry: Classified) -> list[int]:
        """The report counters of ``entry``'s flow schema and level."""
        key = (entry.flow_schema, entry.priority_level)
        counts = self.local.get(key)
        if counts is None:
            counts = self.local[key] = [0, 0, 0, 0]
        return counts

    def report(self) -> flowcontrol_pb2.DispatchRequest | None:
        """The LocalReport of what changed since the last one (None: nothing did); resets the counters."""
        report = flowcontrol_pb2.LocalReport()
        for (schema, level), counts in list(self.local.items()):
            dispatched, finished, executing, reported = counts
            if dispatched or finished or executing != reported:
                report.counts.append(flowcontrol_pb2.LocalCount(
                    flow_schema=schema, priority_level=level, dispatched=dispatched, finished=finished,
                    executing=executing))
                counts[0] = counts[1] = 0
                counts[3] = executing
            if not executing and not counts[3]:
                del self.local[(schema, level)]
        for level, lease in self.leases.items():
            if lease.peak != lease.reported_peak and (lease.held or lease.reported_peak > 0):
                report.demand.append(flowcontrol_pb2.LevelDemand(priority_level=level, peak_in_flight=lease.peak))
                lease.reported_peak = lease.peak
            lease.peak = lease.in_flight
        if not report.counts and not report.demand:
            return None
        return flowcontrol_pb2.DispatchRequest(report=report)


class LocalLimiter:
    """max-in-flight fallback: separate limits for mutating and read-only requests (0 = unlimited)."""

    def __init__(self, max_readonly: int, max_mutating: int):
        self.limits = {False: max_readonly, True: max_mutating}
        self.in_flight = {False: 0, True: 0}

    def try_acquire(self, mutating: bool) -> bool:
        """Take a seat if one is free; returns False when the limit is reached."""
        limit = self.limits[mutating]
        if limit and self.in_flight[mutating] >= limit:
            return False
        self.in_flight[mutating] += 1
        return True

    def release(self, mutating: bool) -> None:
        """Give a seat back."""
        self.in_flight[mutating] = max(0, self.in_flight[mutating] - 1)


class Seat:
    """What one request got from flow control: classification UIDs and a seat that can be given back early.

    The chain creates it before asking for the seat so the PF headers can be
    set on every response, a 429 included. ``release`` frees the seat now
    (idempotent); otherwise it is freed when the request completes.
    """

    __slots__ = ("flow_schema_uid", "priority_level_uid", "long_running", "_release")

    def __init__(self, long_running: bool = False) -> None:
        self.flow_schema_uid = ""
        self.priority_level_uid = ""
        self.long_running = long_running
        self._release: Callable[[], None] | None = None

    def release(self) -> None:
        """Give the seat back now (a long-running request finished initialising); harmless when repeated."""
        release, self._release = self._release, None
        if release is not None:
            release()


def _run_local(session: Session, entry: Classified, seat: Seat, lease: Lease | None) -> None:
    """Start a request without a Start: on a seat of ``lease``, or (``lease`` None) exempt; counted for the report.

    ``seat.release`` ends it (the seat goes back to the lease, and to the
    service if the lease was revoked or shrunk meanwhile).
    """
    seat.flow_schema_uid, seat.priority_level_uid = entry.flow_schema_uid, entry.priority_level_uid
    counts = session.count(entry)
    counts[0] += 1
    counts[2] += 1
    if lease is not None:
        lease.busy += 1
        lease.enter()

    def done() -> None:
        counts[1] += 1
        counts[2] -= 1
        if lease is not None:
            lease.busy -= 1
            lease.in_flight -= 1
            if lease.held > lease.limit:
                session.give_back(entry.priority_level, lease)

    seat._release = done


class FlowControlClient:
    """Multiplexes request admission over one Dispatch stream, with a local fallback.

    ``leases`` (``--apf-seat-leases``) lets it take seat leases and skip the
    Start of requests it has seen classified (module docstring). ``sent``
    counts the messages queued on the stream by kind (start, finish,
    lease_return, report).
    """

    def __init__(self, channel: grpc.aio.Channel | None, fallback: LocalLimiter, leases: bool = False):
        self._channel = channel
        self._stub = flowcontrol_pb2_grpc.FlowControlStub(channel) if channel is not None else None
        self._fallback = fallback
        self._leases = leases
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[flowcontrol_pb2.DispatchResponse]] = {}
        self._session: Session | None = None
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sent: Counter[str] = Counter()
        self._report_sequence = itertools.count(1)

    @property
    def session(self) -> Session | None:
        """The current stream's state (None while the stream is down)."""
        return self._session

    @property
    def configured(self) -> bool:
        """True when a flowcontrol address was given."""
        return self._stub is not None

    @property
    def connected(self) -> bool:
        """True while the Dispatch stream is up (False: local max-in-flight limits are in use)."""
        return self._connected.is_set()

    def start(self) -> None:
        """Begin (re)connecting in the background."""
        if self._stub is not None and self._task is None:
            self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        """Stop the stream task."""
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def flush(self, timeout: float = FLUSH_SECONDS) -> None:
        """Report what ran without a Start now and wait, at most ``timeout`` seconds, until the service applied it.

        Nothing to do without leases or while the stream is down.
        """
        session = self._session
        if session is None or not session.leases_on or not session.open:
            return
        message = session.report() or flowcontrol_pb2.DispatchRequest(report=flowcontrol_pb2.LocalReport())
        sequence = next(self._report_sequence)
        message.report.sequence = sequence
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        session.acks[sequence] = fut
        session.send("report", message)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await fut

    async def dump(self, kind: str, include_request_details: bool, timeout: float) -> str:
        """One debug view from the flowcontrol service (``Dump`` RPC); StatusError 503 when unreachable.

        This gateway's report is flushed first (:meth:`flush`), so the counters
        include the requests it ran without a Start.
        """
        if self._stub is None:
            raise errors.unavailable("flowcontrol is not configured on this gateway")
        await self.flush(min(timeout, FLUSH_SECONDS))
        response = await grpcutil.call("flowcontrol", self._stub.Dump, flowcontrol_pb2.DumpRequest(
            kind=kind, include_request_details=include_request_details), timeout=timeout)
        assert isinstance(response, flowcontrol_pb2.DumpResponse)
        return response.text

    async def _requests(self, outbox: asyncio.Queue[flowcontrol_pb2.DispatchRequest | None]
                        ) -> AsyncIterator[flowcontrol_pb2.DispatchRequests]:
        async for batch in grpcutil.batches(outbox):
            yield flowcontrol_pb2.DispatchRequests(requests=batch)

    async def _run(self) -> None:
        """Keep the Dispatch stream up (:func:`kapi.grpcutil.keep_stream`): one log line when it breaks, one when
        it is back, a backoff from ``RETRY_SECONDS`` doubling to ``RETRY_MAX_SECONDS`` between attempts (less
        once the channel is READY), so a flowcontrol that is back is used within about 200 ms."""
        await grpcutil.keep_stream("flowcontrol", self._channel, self._stream, retry=RETRY_SECONDS,
                                   retry_max=RETRY_MAX_SECONDS, logger=log,
                                   while_broken="; local max-in-flight limits until it is back")

    async def _stream(self, connected: Callable[[], None]) -> None:
        """One Dispatch stream session: open it, read decisions, lease changes and acks until it ends or breaks;
        then forget the session and fail every pending Start (its requests fall back to the local limits)."""
        assert self._stub is not None
        outbox: asyncio.Queue[flowcontrol_pb2.DispatchRequest | None] = asyncio.Queue()
        session = self._session = Session(outbox, self._leases, self.sent)
        reporter: asyncio.Task[None] | None = None
        try:
            call = self._stub.Dispatch(self._requests(outbox))
            await grpcutil.stream_opened(call)  # the service sends its metadata at once: the stream is up
            self._connected.set()
            connected()
            if self._leases:
                reporter = asyncio.create_task(self._report(session))
            async for replies in call:
                if replies.config_generation:
                    session.new_generation(replies.config_generation)
                for reply in replies.responses:
                    fut = self._pending.pop(reply.request_id, None)
                    if fut is not None and not fut.done():
                        fut.set_result(reply)
                for change in replies.lease_changes:
                    session.apply(change)
                if replies.report_ack:
                    session.acknowledged(replies.report_ack)
        finally:
            self._connected.clear()
            session.close()
            self._session = None
            if reporter is not None:
                reporter.cancel()
            outbox.put_nowait(None)
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ConnectionError("flowcontrol stream closed"))
            self._pending.clear()

    async def _report(self, session: Session) -> None:
        """Every ``REPORT_SECONDS`` while the stream is up: what ran without a Start, if anything changed."""
        while session.open:
            await asyncio.sleep(REPORT_SECONDS)
            message = session.report()
            if message is not None and session.open:
                session.send("report", message)

    @contextlib.asynccontextmanager
    async def seat(self, attrs: Attributes, long_running: bool, timeout: float, holder: Seat | None = None,
                   list_limit: int = 0) -> AsyncIterator[Seat]:
        """Hold a seat for the body of the ``async with`` (or until ``Seat.release``).

        Raises 429 TooManyRequests (with Retry-After) when rejected. ``timeout``
        (seconds) is the request's deadline: it may wait in its APF queue for a
        fourth of it (at most 60 s; a long-running request 15 s) and is then
        rejected with 429, as kube-apiserver's getRequestWaitContext decides;
        a decision that has not come within ``timeout`` is a 504.
        ``holder`` receives the PF UIDs (also on rejection); ``list_limit`` is
        a LIST's ``?limit=`` for its width in seats. With leases, a request of
        a remembered exempt key, or of a leasable key while its level's lease
        has a free seat, runs without a Start (module docstring).
        """
        seat = holder if holder is not None else Seat(long_running)
        seat.long_running = long_running
        session = self._session
        if session is None or not self._connected.is_set():
            async with self._local(attrs.mutating, long_running, seat):
                yield seat
            return
        key: ClassificationKey | None = None
        lease: Lease | None = None
        if session.leases_on and (attrs.resource_request or not attrs.path.startswith(SEAT_VIEWS)):
            key = classification_key(attrs)
            entry = session.classified.get(key)
            if entry is not None and entry.generation == session.generation:
                local = entry.exempt
                if not local and entry.leasable and not long_running:
                    lease = session.lease(entry.priority_level)
                    local = lease.busy < lease.limit
                if local:
                    _run_local(session, entry, seat, lease if not entry.exempt else None)
                    try:
                        yield seat
                    finally:
                        seat.release()
                    return
        outbox = session.outbox
        request_id = next(self._ids)
        fut: asyncio.Future[flowcontrol_pb2.DispatchResponse] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = fut
        session.send("start", flowcontrol_pb2.DispatchRequest(start=flowcontrol_pb2.Start(
            request_id=request_id, attributes=attrs.to_proto(), mutating=attrs.mutating, long_running=long_running,
            list_limit=list_limit, accept_leases=session.leases_on,
            # kube's getRequestWaitContext: a fourth of the request's deadline; a watch has none (the default).
            queue_wait_limit_seconds=0.0 if long_running or timeout <= 0 else timeout / 4)))
        try:
            async with asyncio.timeout(timeout):
                reply = await fut
        except TimeoutError:
            self._pending.pop(request_id, None)
            session.send("finish", flowcontrol_pb2.DispatchRequest(finish=flowcontrol_pb2.Finish(
                request_id=request_id)))
            # The request's own deadline passed while it waited: kube's timeout filter, outside APF, answers 504.
            raise errors.request_timeout() from None
        except ConnectionError:
            async with self._local(attrs.mutating, long_running, seat):
                yield seat
            return
        seat.flow_schema_uid, seat.priority_level_uid = reply.flow_schema_uid, reply.priority_level_uid
        if key is not None and reply.config_generation:
            session.learn(key, reply)
        if not reply.execute:
            raise errors.too_many_requests(reply.reason or TOO_MANY, reply.retry_after_seconds or 1)
        demand = session.lease(reply.priority_level) if key is not None and reply.leasable and not long_running \
            else None
        if demand is not None:
            demand.enter()

        def finish() -> None:
            if demand is not None:
                demand.in_flight -= 1
            if session.open and session.outbox is outbox:
                session.send("finish", flowcontrol_pb2.DispatchRequest(finish=flowcontrol_pb2.Finish(
                    request_id=request_id)))

        seat._release = finish
        try:
            yield seat
        finally:
            seat.release()

    @contextlib.asynccontextmanager
    async def _local(self, mutating: bool, long_running: bool, seat: Seat) -> AsyncIterator[None]:
        if long_running:
            yield
            return
        if not self._fallback.try_acquire(mutating):
            raise errors.too_many_requests(TOO_MANY, 1)
        seat._release = lambda: self._fallback.release(mutating)
        try:
            yield
        finally:
            seat.release()
