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
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable

import grpc

from kapi import errors, grpcutil
from kapi.attributes import Attributes
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc

log = logging.getLogger(__name__)

TOO_MANY = "Too many requests, please try again later."
RETRY_SECONDS = 0.1  # the first wait after the Dispatch stream broke; doubles per failed attempt
RETRY_MAX_SECONDS = 5.0  # the cap of that wait (a channel that turns READY ends it sooner)


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


class FlowControlClient:
    """Multiplexes request admission over one Dispatch stream, with a local fallback."""

    def __init__(self, channel: grpc.aio.Channel | None, fallback: LocalLimiter):
        self._channel = channel
        self._stub = flowcontrol_pb2_grpc.FlowControlStub(channel) if channel is not None else None
        self._fallback = fallback
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[flowcontrol_pb2.DispatchResponse]] = {}
        self._outbox: asyncio.Queue[flowcontrol_pb2.DispatchRequest | None] | None = None
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

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

    async def dump(self, kind: str, include_request_details: bool, timeout: float) -> str:
        """One debug view from the flowcontrol service (``Dump`` RPC); StatusError 503 when unreachable."""
        if self._stub is None:
            raise errors.unavailable("flowcontrol is not configured on this gateway")
        response = await grpcutil.call("flowcontrol", self._stub.Dump, flowcontrol_pb2.DumpRequest(
            kind=kind, include_request_details=include_request_details), timeout=timeout)
        assert isinstance(response, flowcontrol_pb2.DumpResponse)
        return response.text

    async def _requests(self, outbox: asyncio.Queue[flowcontrol_pb2.DispatchRequest | None]
                        ) -> AsyncIterator[flowcontrol_pb2.DispatchRequests]:
        async for batch in grpcutil.batches(outbox):
            yield flowcontrol_pb2.DispatchRequests(requests=batch)

    async def _run(self) -> None:
        """Keep the Dispatch stream up: one log line when it breaks, one when it is back, a capped backoff between.

        The stream counts as up once the service's initial metadata arrives on a
        call still running (a call that failed to connect also "returns" empty
        metadata, already done). Between attempts it waits ``RETRY_SECONDS``,
        doubling per failed attempt up to ``RETRY_MAX_SECONDS``, or less if the
        channel reports READY first (the channel reconnects on its own backoff,
        kapi/grpcutil.py), so a flowcontrol that is back is used within about
        200 ms without a stream attempt every 100 ms while it is away.
        """
        assert self._stub is not None
        backoff, broken_since = RETRY_SECONDS, 0.0
        loop = asyncio.get_running_loop()
        while True:
            outbox: asyncio.Queue[flowcontrol_pb2.DispatchRequest | None] = asyncio.Queue()
            self._outbox = outbox
            try:
                call = self._stub.Dispatch(self._requests(outbox))
                await call.initial_metadata()  # the service sends it at once: the stream is up
                if call.done():  # never connected: the metadata of a failed call
                    raise ConnectionError(f"no stream: {await call.code()}")
                self._connected.set()
                backoff = RETRY_SECONDS
                if broken_since:
                    log.info("flowcontrol stream back after %.1fs", loop.time() - broken_since)
                    broken_since = 0.0
                else:
                    log.info("flowcontrol stream connected")
                async for replies in call:
                    for reply in replies.responses:
                        fut = self._pending.pop(reply.request_id, None)
                        if fut is not None and not fut.done():
                            fut.set_result(reply)
                raise ConnectionError("the flowcontrol service ended the stream")
            except asyncio.CancelledError:
                raise
            except (grpc.RpcError, ConnectionError) as exc:
                if not broken_since:
                    broken_since = loop.time()
                    log.warning("flowcontrol stream broke (%s); local max-in-flight limits until it is back",
                                exc.code() if isinstance(exc, grpc.RpcError) else exc)
                else:
                    log.debug("flowcontrol stream still down: %s", exc)
            finally:
                self._connected.clear()
                self._outbox = None
                outbox.put_nowait(None)
                for fut in self._pending.values():
                    if not fut.done():
                        fut.set_exception(ConnectionError("flowcontrol stream closed"))
                self._pending.clear()
            if self._channel is not None:
                await grpcutil.wait_ready(self._channel, backoff)
            else:
                await asyncio.sleep(backoff)
            backoff = min(backoff * 2, RETRY_MAX_SECONDS)

    @contextlib.asynccontextmanager
    async def seat(self, attrs: Attributes, long_running: bool, timeout: float, holder: Seat | None = None,
                   list_limit: int = 0) -> AsyncIterator[Seat]:
        """Hold a seat for the body of the ``async with`` (or until ``Seat.release``).

        Raises 429 TooManyRequests (with Retry-After) when rejected. ``timeout``
        (seconds) bounds the wait for a decision; past it the request is
        rejected with 429 as queued requests are in kube-apiserver.
        ``holder`` receives the PF UIDs (also on rejection); ``list_limit`` is
        a LIST's ``?limit=`` for its width in seats.
        """
        seat = holder if holder is not None else Seat(long_running)
        seat.long_running = long_running
        outbox = self._outbox
        if outbox is None or not self._connected.is_set():
            async with self._local(attrs.mutating, long_running, seat):
                yield seat
            return
        request_id = next(self._ids)
        fut: asyncio.Future[flowcontrol_pb2.DispatchResponse] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = fut
        outbox.put_nowait(flowcontrol_pb2.DispatchRequest(start=flowcontrol_pb2.Start(
            request_id=request_id, attributes=attrs.to_proto(), mutating=attrs.mutating, long_running=long_running,
            list_limit=list_limit)))
        try:
            reply = await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            self._pending.pop(request_id, None)
            outbox.put_nowait(flowcontrol_pb2.DispatchRequest(finish=flowcontrol_pb2.Finish(request_id=request_id)))
            # The request's own deadline passed while it waited: kube's timeout filter, outside APF, answers 504.
            raise errors.request_timeout() from None
        except ConnectionError:
            async with self._local(attrs.mutating, long_running, seat):
                yield seat
            return
        seat.flow_schema_uid, seat.priority_level_uid = reply.flow_schema_uid, reply.priority_level_uid
        if not reply.execute:
            raise errors.too_many_requests(reply.reason or TOO_MANY, reply.retry_after_seconds or 1)

        def finish() -> None:
            if self._outbox is outbox:
                outbox.put_nowait(flowcontrol_pb2.DispatchRequest(finish=flowcontrol_pb2.Finish(
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
