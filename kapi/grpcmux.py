"""Unary calls multiplexed on one long-lived bidirectional ``Call`` stream per replica: both ends, for any service.

A unary gRPC call costs its server about 0.3-0.4 ms of CPU in grpc's per-call
machinery; a message on an open stream costs a fraction of that
(docs/architecture.md, "Performance design"; docs/benchmarks.md, issue 16).
A service that offers its unary RPCs on a stream declares one
:class:`Protocol` (its messages) and uses :class:`Client` on the caller's
side and :func:`serve` in its servicer's ``Call``. The protocol's messages
have one shape (storage.proto ``CallRequests``/``CallResponses``,
admission.proto ``AdmitCallRequests``/``AdmitCallResponses``):

- requests: ``repeated <Request> requests``; each ``uint64 id`` (chosen by
  the caller, unique among its outstanding calls), ``oneof call`` holding
  one unary request per call kind or ``cancel`` (withdraw the call with that
  id, no answer follows), ``double timeout_seconds`` (0 = none);
- responses: ``repeated <Response> responses``; each ``uint64 id`` and
  ``oneof result`` holding the unary RPC's answer or ``error``: ``int32
  code`` (grpc.StatusCode number), ``string message``, ``bytes status`` (the
  Kubernetes Status JSON of the ``kapi-status-bin`` trailer, kapi/errors.py)
  and, where the error message has it (kapi.common.v1 ``CallError``),
  ``repeated string warnings`` (the ``kapi-warnings-bin`` trailer: the
  warnings the refused call gathered) and ``map<string, string>
  audit_annotations`` (the ``kapi-audit-annotations-bin`` trailer).

A call fails exactly as the unary RPC would: :class:`grpc.aio.AioRpcError`
with the same code, details and trailing metadata, so
:func:`kapi.grpcutil.call` and :func:`kapi.errors.from_rpc_error` see no
difference. The caller's ``timeout`` (seconds) is enforced on both ends
(DEADLINE_EXCEEDED, 504); a call its caller cancels is withdrawn; a stream
that breaks fails its outstanding calls UNAVAILABLE (503) without retry (a
write may or may not have happened, as when a unary call's connection
breaks) and reconnects with a capped backoff (:func:`kapi.grpcutil.keep_stream`).
While no stream is up, for a call with ``metadata`` (or any other keyword),
and on processes whose channels carry per-call interceptors (JSON logs
propagate ``x-audit-id``, tracing its spans: kapi/observability.py) calls are
the unary RPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from kapi import errors, grpcutil, jsonutil, observability
from kapi_proto.kapi.admission.v1 import admission_pb2
from kapi_proto.kapi.common.v1 import common_pb2
from kapi_proto.kapi.storage.v1 import storage_pb2

log = logging.getLogger(__name__)

RETRY_SECONDS = 0.1  # the first wait after a Call stream broke; doubles per failed attempt
RETRY_MAX_SECONDS = 5.0  # the cap of that wait (a channel that turns READY ends it sooner)
# grpc.StatusCode by its number (the error's code).
_CODES = {code.value[0]: code for code in grpc.StatusCode}
_NO_METADATA = grpc.aio.Metadata()

# The server's work function of one call kind: (the unary request, the caller's timeout in seconds or None)
# -> the unary response; raises kapi.errors.StatusError for a refusal.
Work = Callable[[Any, float | None], Awaitable[Any]]


@dataclass(frozen=True)
class Protocol:
    """One service's ``Call`` stream: its method and messages (the shape in this module's docstring).

    ``results`` maps each call kind (the name of its field in the request's
    ``call`` oneof: "get", "admit") to the field of the response's
    ``result`` oneof carrying its answer ("object", "list", "admit").
    ``name`` names the peer in logs and UNAVAILABLE messages ("storage").
    """

    name: str
    method: str  # full method path, e.g. "/kapi.storage.v1.Storage/Call"
    requests: Any  # the batch of requests message class
    request: Any
    cancel: Any
    responses: Any
    response: Any
    error: Any
    results: Mapping[str, str]

    @property
    def carries_warnings(self) -> bool:
        """True when this protocol's error message has ``warnings`` and ``audit_annotations`` (kapi.common.v1
        CallError)."""
        return "warnings" in self.error.DESCRIPTOR.fields_by_name

    def rpc_error(self, error: Any) -> grpc.aio.AioRpcError:
        """The AioRpcError the unary RPC would have raised for ``error`` (the response's error message): its
        code, details and (if any) the Status JSON as trailing metadata ``kapi-status-bin`` and its warnings as
        ``kapi-warnings-bin``."""
        trailing = _NO_METADATA
        if error.status:
            pairs = [(errors.STATUS_METADATA_KEY, error.status)]
            if self.carries_warnings and error.warnings:
                pairs.append((errors.WARNINGS_METADATA_KEY, jsonutil.dumps(list(error.warnings))))
            if self.carries_warnings and error.audit_annotations:
                pairs.append((errors.AUDIT_ANNOTATIONS_METADATA_KEY, jsonutil.dumps(dict(error.audit_annotations))))
            trailing = grpc.aio.Metadata(*pairs)
        return grpc.aio.AioRpcError(_CODES.get(error.code, grpc.StatusCode.UNKNOWN), _NO_METADATA, trailing,
                                    details=error.message)

    def error_of(self, err: errors.StatusError) -> Any:
        """``err`` as the response's error: the gRPC code number, message, Status JSON and (where the message
        has the field) warnings its unary RPC's status and trailers would carry (:func:`kapi.errors.abort`)."""
        metadata = dict(errors.trailing_metadata(err))
        error = self.error(code=err.grpc_code.value[0], message=err.message[:errors.MAX_GRPC_MESSAGE_CHARS],
                           status=metadata.get(errors.STATUS_METADATA_KEY, b""))
        if self.carries_warnings and errors.WARNINGS_METADATA_KEY in metadata:
            error.warnings.extend(errors.warnings_of_metadata(metadata[errors.WARNINGS_METADATA_KEY]))
        if self.carries_warnings and errors.AUDIT_ANNOTATIONS_METADATA_KEY in metadata:
            error.audit_annotations.update(errors.annotations_of_metadata(
                metadata[errors.AUDIT_ANNOTATIONS_METADATA_KEY]))
        return error


def _unavailable(details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, _NO_METADATA, _NO_METADATA, details=details)


def _expire(pending: dict[int, asyncio.Future[Any]], call_id: int) -> None:
    fut = pending.pop(call_id, None)
    if fut is not None and not fut.done():  # as a unary call's deadline ("Deadline Exceeded", no trailers)
        fut.set_exception(grpc.aio.AioRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, _NO_METADATA, _NO_METADATA,
                                               details="Deadline Exceeded"))


class Stream:
    """The ``Call`` stream to one replica at ``address`` over ``channel``: its calls in flight by id."""

    def __init__(self, protocol: Protocol, address: str, channel: grpc.aio.Channel,
                 on_change: Callable[[Stream, bool], None]):
        self.protocol = protocol
        self.address = address
        self.channel = channel
        self._open = channel.stream_stream(protocol.method, request_serializer=protocol.requests.SerializeToString,
                                           response_deserializer=protocol.responses.FromString)
        self._on_change = on_change  # (stream, up) when it comes up or goes down
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._outbox: asyncio.Queue[Any] | None = None
        self.calls = 0  # calls sent on this stream, in all its sessions

    @property
    def up(self) -> bool:
        """True while the stream is open (calls may be sent)."""
        return self._outbox is not None

    @property
    def in_flight(self) -> int:
        """Calls sent and not yet answered."""
        return len(self._pending)

    async def run(self) -> None:
        """Keep the stream up until cancelled (:func:`kapi.grpcutil.keep_stream`)."""
        await grpcutil.keep_stream(f"{self.protocol.name} {self.address} call", self.channel, self._session,
                                   retry=RETRY_SECONDS, retry_max=RETRY_MAX_SECONDS)

    async def _requests(self, outbox: asyncio.Queue[Any]) -> AsyncIterator[Any]:
        wrap = self.protocol.requests
        async for batch in grpcutil.batches(outbox):
            yield wrap(requests=batch)

    async def _session(self, connected: Callable[[], None]) -> None:
        """One stream: open it, answer the futures of its replies until it ends; then fail what is left 503."""
        outbox: asyncio.Queue[Any] = asyncio.Queue()
        call = self._open(self._requests(outbox))
        why = "the stream ended"
        try:
            await grpcutil.stream_opened(call)
            self._outbox = outbox
            self._on_change(self, True)
            connected()
            pending = self._pending
            async for replies in call:
                for reply in replies.responses:
                    fut = pending.pop(reply.id, None)
                    if fut is not None and not fut.done():
                        fut.set_result(reply)
        except grpc.RpcError as exc:
            why = f"{exc.code()}: {exc.details()}" if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
            raise
        except asyncio.CancelledError:
            why = "the client is closing it"
            raise
        finally:
            was_up = self._outbox is outbox
            self._outbox = None
            if was_up:
                self._on_change(self, False)
            outbox.put_nowait(None)
            call.cancel()
            pending, self._pending = self._pending, {}
            for fut in pending.values():
                if not fut.done():
                    fut.set_exception(_unavailable(f"the {self.protocol.name} stream to {self.address} broke "
                                                   f"({why})"))

    async def call(self, kind: str, request: Any, timeout: float | None) -> Any:
        """Send ``request`` as a ``kind`` call (a field of the protocol's request ``call`` oneof) and return its
        answer (the unary response). Raises AioRpcError as the unary RPC: the service's failure,
        DEADLINE_EXCEEDED after ``timeout`` seconds, UNAVAILABLE if the stream is down or breaks meanwhile."""
        outbox = self._outbox
        protocol = self.protocol
        if outbox is None:
            raise _unavailable(f"the {protocol.name} stream to {self.address} is down")
        loop = asyncio.get_running_loop()
        call_id = next(self._ids)
        fut: asyncio.Future[Any] = loop.create_future()
        pending = self._pending
        pending[call_id] = fut
        message = protocol.request(id=call_id, timeout_seconds=timeout or 0.0)
        getattr(message, kind).CopyFrom(request)
        outbox.put_nowait(message)
        self.calls += 1
        timer = loop.call_later(timeout, _expire, pending, call_id) if timeout is not None else None
        try:
            reply = await fut
        except asyncio.CancelledError:
            if pending.pop(call_id, None) is not None and self._outbox is outbox:
                outbox.put_nowait(protocol.request(id=call_id, cancel=protocol.cancel()))
            raise
        finally:
            if timer is not None:
                timer.cancel()
        field = reply.WhichOneof("result")
        if field == "error":
            raise protocol.rpc_error(reply.error)
        return getattr(reply, protocol.results[kind])


class Client:
    """The caller's side: one :class:`Stream` per replica, calls spread round robin over those that are up.

    ``streams`` are (address, channel) pairs, one per replica
    (:func:`stream_channels` builds them); ``owned`` the channels this client
    made and closes. ``start`` begins connecting; ``close`` stops the streams
    (outstanding calls fail UNAVAILABLE) and closes the owned channels.
    """

    def __init__(self, protocol: Protocol, streams: Sequence[tuple[str, grpc.aio.Channel]] = (),
                 owned: Sequence[grpc.aio.Channel] = ()) -> None:
        self.protocol = protocol
        self.streams = [Stream(protocol, address, channel, self._changed) for address, channel in streams]
        self._up: list[Stream] = []
        self._turn = 0
        self._owned = list(owned)
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def streams_up(self) -> int:
        """How many replicas' Call streams are up (0: every call is unary)."""
        return len(self._up)

    def _changed(self, stream: Stream, up: bool) -> None:
        if up:
            self._up.append(stream)
        elif stream in self._up:
            self._up.remove(stream)

    def start(self) -> None:
        """Begin (re)connecting every replica's stream in the background (idempotent; on the running loop)."""
        if not self._tasks:
            self._tasks = [asyncio.create_task(s.run()) for s in self.streams]

    async def close(self) -> None:
        """Stop the streams (outstanding calls fail UNAVAILABLE) and close the channels made for them."""
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for channel in self._owned:
            with contextlib.suppress(Exception):
                await channel.close()

    async def call(self, kind: str, rpc: Callable[..., Awaitable[Any]], request: Any, timeout: float | None,
                   metadata: Any = None, kwargs: Mapping[str, Any] | None = None) -> Any:
        """``rpc(request, timeout=, metadata=, **kwargs)`` (the unary stub method of call kind ``kind``) as a call
        on the next stream that is up; the unary RPC itself while none is, or when ``metadata`` or ``kwargs``
        must travel with the call. Answers and raises exactly as ``rpc`` (:meth:`Stream.call`)."""
        up = self._up
        if not up or metadata or kwargs:
            return await rpc(request, timeout=timeout, metadata=metadata, **(kwargs or {}))
        self._turn += 1
        return await up[self._turn % len(up)].call(kind, request, timeout)


def stream_channels(channel: grpc.aio.Channel, addresses: str, tls: grpcutil.TLSFiles | None,
                    streams: bool | None = None) -> tuple[list[tuple[str, grpc.aio.Channel]], list[grpc.aio.Channel]]:
    """(the (address, channel) of each replica's stream, the channels made for them) for :class:`Client`.

    ``channel`` is the round-robin channel to ``addresses`` (a comma-separated
    address flag); one address streams over ``channel`` itself, several get a
    channel of their own each (:func:`kapi.grpcutil.channel`). ``streams``
    False (default: True unless this process's channels carry per-call
    interceptors, :func:`kapi.observability.client_interceptors`) gives no
    streams: every call is unary.
    """
    if streams is None:
        streams = not observability.client_interceptors()
    if not streams:
        return [], []
    hosts = [a.strip() for a in addresses.split(",") if a.strip()]
    if len(hosts) <= 1:
        return [(addresses.strip(), channel)], []
    own = [grpcutil.channel(host, tls) for host in hosts]
    return list(zip(hosts, own, strict=True)), own


def _default_failure(exc: Exception) -> errors.StatusError:
    if isinstance(exc, errors.StatusError):
        return exc
    log.error("call on a Call stream failed", exc_info=exc)
    return errors.internal(f"{type(exc).__name__}: {exc}")


def _cancel_timer(timer: asyncio.TimerHandle, _task: asyncio.Task[None]) -> None:
    timer.cancel()


async def serve(protocol: Protocol, work: Mapping[str, Work], request_iterator: AsyncIterator[Any],
                context: grpc.aio.ServicerContext, *,
                failure: Callable[[Exception], errors.StatusError] = _default_failure,
                running: set[asyncio.Task[None]] | None = None) -> AsyncGenerator[Any, None]:
    """The server's side of ``Call``: the response batches to yield for the request batches of one stream.

    Sends the initial metadata at once (the caller's "stream is up",
    :func:`kapi.grpcutil.stream_opened`). Each call runs as its own task
    through ``work[kind](request, timeout_seconds or None)``, the function
    the unary RPC runs; answers go out batched (:func:`kapi.grpcutil.batches`)
    in completion order, each with its request's id: the unary response, or
    the error the unary RPC would have failed with (``failure(exc)``: the
    StatusError to answer for an exception; default: a StatusError itself,
    anything else logged and 500 InternalError). A call with no kind, or an
    id already running, is answered 400 BadRequest. A call past its
    ``timeout_seconds``, or cancelled by the caller, is cancelled and not
    answered. The request stream's end lets the running calls finish, then
    ends the responses; a cancelled or broken stream cancels them.
    ``running`` (if given) holds every call task while it runs (tests read it).
    A servicer that re-yields these batches must close this generator with
    its own (``contextlib.aclosing``), so its stream's end cancels the calls
    at once rather than when the generator is collected.
    """
    await context.send_initial_metadata(())
    calls = _Calls(protocol, work, failure, running)
    reader = asyncio.create_task(calls.read(request_iterator))
    wrap = protocol.responses
    try:
        async for responses in grpcutil.batches(calls.outbox):
            yield wrap(responses=responses)
    finally:
        calls.close()
        if not reader.done():
            reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, grpc.RpcError, Exception):
            await reader


class _Calls:
    """The calls of one Call stream: a task per call, answers on ``outbox`` (None ends it)."""

    def __init__(self, protocol: Protocol, work: Mapping[str, Work],
                 failure: Callable[[Exception], errors.StatusError], tracked: set[asyncio.Task[None]] | None) -> None:
        self.protocol = protocol
        self.work = work
        self.failure = failure
        self.tracked = tracked
        self.outbox: asyncio.Queue[Any] = asyncio.Queue()
        self.running: dict[int, asyncio.Task[None]] = {}
        self.closed = False

    async def read(self, request_iterator: AsyncIterator[Any]) -> None:
        """Start a task per call, cancel on ``cancel``; at the request stream's end wait for the running calls,
        then end the answers."""
        loop = asyncio.get_running_loop()
        work, protocol, tracked = self.work, self.protocol, self.tracked
        try:
            async for batch in request_iterator:
                for request in batch.requests:
                    kind = request.WhichOneof("call")
                    if kind == "cancel":
                        task = self.running.pop(request.id, None)
                        if task is not None:
                            task.cancel()
                        continue
                    if kind is None or request.id in self.running or kind not in work:
                        message = ("no call in the request" if kind is None else
                                   f"duplicate call id {request.id}" if request.id in self.running else
                                   f"{kind} is not served on this stream")
                        self.outbox.put_nowait(protocol.response(
                            id=request.id, error=protocol.error_of(errors.bad_request(message))))
                        continue
                    timeout = request.timeout_seconds if request.timeout_seconds > 0 else None
                    task = loop.create_task(self._answer(request.id, kind, work[kind], getattr(request, kind),
                                                         timeout))
                    self.running[request.id] = task
                    if tracked is not None:
                        tracked.add(task)
                        task.add_done_callback(tracked.discard)
                    if timeout is not None:  # the unary RPC's deadline: cancel the call past it
                        timer = loop.call_later(timeout, task.cancel)
                        task.add_done_callback(functools.partial(_cancel_timer, timer))
            while self.running:
                await asyncio.wait(list(self.running.values()))
        finally:
            self.outbox.put_nowait(None)

    async def _answer(self, call_id: int, kind: str, work: Work, request: Any, timeout: float | None) -> None:
        protocol = self.protocol
        try:
            result = await work(request, timeout)
        except asyncio.CancelledError:
            self.running.pop(call_id, None)
            return  # the caller gave up (cancel, timeout) or the stream ended: nobody waits for an answer
        except Exception as exc:
            response = protocol.response(id=call_id, error=protocol.error_of(self.failure(exc)))
        else:
            response = protocol.response(id=call_id)
            getattr(response, protocol.results[kind]).CopyFrom(result)
        self.running.pop(call_id, None)
        if not self.closed:
            self.outbox.put_nowait(response)

    def close(self) -> None:
        """The stream ended: cancel every running call."""
        self.closed = True
        for task in self.running.values():
            task.cancel()
        self.running.clear()


# Storage's Call stream (storage.proto): each verb's request in CallRequest's oneof under its lower-case name.
STORAGE = Protocol(
    name="storage", method="/kapi.storage.v1.Storage/Call", requests=storage_pb2.CallRequests,
    request=storage_pb2.CallRequest, cancel=storage_pb2.CallCancel, responses=storage_pb2.CallResponses,
    response=storage_pb2.CallResponse, error=storage_pb2.CallError,
    results={"get": "object", "list": "list", "create": "object", "update": "object", "delete": "object"})

# Admission's Call stream (admission.proto): Admit, with kapi.common.v1's CallCancel and CallError.
ADMISSION = Protocol(
    name="admission", method="/kapi.admission.v1.Admission/Call", requests=admission_pb2.AdmitCallRequests,
    request=admission_pb2.AdmitCallRequest, cancel=common_pb2.CallCancel,
    responses=admission_pb2.AdmitCallResponses, response=admission_pb2.AdmitCallResponse, error=common_pb2.CallError,
    results={"admit": "admit"})
