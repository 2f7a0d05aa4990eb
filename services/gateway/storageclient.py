"""The gateway's storage client: Get, List, Create, Update and Delete multiplexed on one stream per storage replica.

A unary gRPC call costs the storage process about 0.9 ms of CPU in grpc's
per-call machinery and the gateway about a tenth of its CPU per GET; a
message on an open stream costs a fraction of that (docs/architecture.md,
"Performance design"). :class:`StorageClient` stands where the Storage stub
stood (``backends.storage``) with the stub's interface: ``Get``, ``List``,
``Create``, ``Update`` and ``Delete`` are async callables
``(request, timeout=seconds, metadata=None)`` returning the response protos,
and every other attribute (``Watch``) is the stub's. Each call goes as a
``CallRequest`` on the ``Call`` stream of one storage replica
(storage.proto), spread round robin over the replicas whose stream is up,
and fails exactly as the unary RPC would: a :class:`grpc.aio.AioRpcError`
with the same code, details and ``kapi-status-bin`` trailing metadata, so
:func:`kapi.grpcutil.call` and :func:`kapi.errors.from_rpc_error` see no
difference.

- ``timeout`` (seconds) is enforced here: past it the call fails with
  DEADLINE_EXCEEDED (504, as the unary deadline) and storage cancels it.
- A call cancelled by its caller (the HTTP client went away) is withdrawn
  on the stream (``CallCancel``).
- While no stream is up, for a call with ``metadata`` (or any other keyword),
  and on a gateway whose channels carry per-call interceptors (JSON logs
  propagate ``x-audit-id``, tracing its spans: kapi/observability.py) the
  call is the unary RPC, as before.
- A stream that breaks fails its outstanding calls with UNAVAILABLE (503):
  none is retried, a write may or may not have happened, as for a unary call
  whose connection broke. Each stream reconnects in the background with a
  capped backoff (:func:`kapi.grpcutil.keep_stream`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc

from kapi import errors, grpcutil, observability
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

log = logging.getLogger(__name__)

RETRY_SECONDS = 0.1  # the first wait after a Call stream broke; doubles per failed attempt
RETRY_MAX_SECONDS = 5.0  # the cap of that wait (a channel that turns READY ends it sooner)
# grpc.StatusCode by its number (CallError.code).
_CODES = {code.value[0]: code for code in grpc.StatusCode}
_NO_METADATA = grpc.aio.Metadata()


def rpc_error(error: storage_pb2.CallError) -> grpc.aio.AioRpcError:
    """The AioRpcError the unary RPC would have raised for ``error``: its code, details and (if any) the Status
    JSON as trailing metadata ``kapi-status-bin``."""
    trailing = grpc.aio.Metadata((errors.STATUS_METADATA_KEY, error.status)) if error.status else _NO_METADATA
    return grpc.aio.AioRpcError(_CODES.get(error.code, grpc.StatusCode.UNKNOWN), _NO_METADATA, trailing,
                                details=error.message)


def _unavailable(details: str) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, _NO_METADATA, _NO_METADATA, details=details)


def _expire(pending: dict[int, asyncio.Future[Any]], call_id: int) -> None:
    fut = pending.pop(call_id, None)
    if fut is not None and not fut.done():  # as a unary call's deadline ("Deadline Exceeded", no trailers)
        fut.set_exception(grpc.aio.AioRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, _NO_METADATA, _NO_METADATA,
                                               details="Deadline Exceeded"))


class CallStream:
    """The ``Call`` stream to one storage replica at ``address`` over ``channel``: its calls in flight by id."""

    def __init__(self, address: str, channel: grpc.aio.Channel, on_change: Callable[[CallStream, bool], None]):
        self.address = address
        self.channel = channel
        self._stub = storage_pb2_grpc.StorageStub(channel)
        self._on_change = on_change  # (stream, up) when it comes up or goes down
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[storage_pb2.CallResponse]] = {}
        self._outbox: asyncio.Queue[storage_pb2.CallRequest | None] | None = None
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
        await grpcutil.keep_stream(f"storage {self.address} call", self.channel, self._session,
                                   retry=RETRY_SECONDS, retry_max=RETRY_MAX_SECONDS)

    @staticmethod
    async def _requests(outbox: asyncio.Queue[storage_pb2.CallRequest | None]
                        ) -> AsyncIterator[storage_pb2.CallRequests]:
        async for batch in grpcutil.batches(outbox):
            yield storage_pb2.CallRequests(requests=batch)

    async def _session(self, connected: Callable[[], None]) -> None:
        """One stream: open it, answer the futures of its replies until it ends; then fail what is left 503."""
        outbox: asyncio.Queue[storage_pb2.CallRequest | None] = asyncio.Queue()
        call = self._stub.Call(self._requests(outbox))
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
            why = "the gateway is closing it"
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
                    fut.set_exception(_unavailable(f"the storage stream to {self.address} broke ({why})"))

    async def call(self, kind: str, request: Any, timeout: float | None) -> Any:
        """Send ``request`` as a ``kind`` call ("get", "list", "create", "update", "delete") and return its answer
        (ObjectResponse, or ListResponse for "list"). Raises AioRpcError as the unary RPC: the storage failure,
        DEADLINE_EXCEEDED after ``timeout`` seconds, UNAVAILABLE if the stream is down or breaks meanwhile."""
        outbox = self._outbox
        if outbox is None:
            raise _unavailable(f"the storage stream to {self.address} is down")
        loop = asyncio.get_running_loop()
        call_id = next(self._ids)
        fut: asyncio.Future[storage_pb2.CallResponse] = loop.create_future()
        pending = self._pending
        pending[call_id] = fut
        message = storage_pb2.CallRequest(id=call_id, timeout_seconds=timeout or 0.0)
        getattr(message, kind).CopyFrom(request)
        outbox.put_nowait(message)
        self.calls += 1
        timer = loop.call_later(timeout, _expire, pending, call_id) if timeout is not None else None
        try:
            reply = await fut
        except asyncio.CancelledError:
            if pending.pop(call_id, None) is not None and self._outbox is outbox:
                outbox.put_nowait(storage_pb2.CallRequest(id=call_id, cancel=storage_pb2.CallCancel()))
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if reply.WhichOneof("result") == "error":
            raise rpc_error(reply.error)
        return reply.list if kind == "list" else reply.object


class StorageClient:
    """``backends.storage``: the Storage stub's interface, its five unary verbs on :class:`CallStream` s.

    ``stub`` is the Storage stub over the gateway's round-robin channel to
    every replica (``Watch``, the unary fallback); ``streams`` one
    :class:`CallStream` per replica (:func:`open_client` builds both).
    ``start`` begins connecting them; ``close`` stops them (outstanding calls
    fail UNAVAILABLE) and closes the channels this client made.
    """

    def __init__(self, stub: Any, streams: Sequence[tuple[str, grpc.aio.Channel]] = (),
                 owned: Sequence[grpc.aio.Channel] = ()) -> None:
        self._stub = stub
        self.streams = [CallStream(address, channel, self._changed) for address, channel in streams]
        self._up: list[CallStream] = []
        self._turn = 0
        self._owned = list(owned)
        self._tasks: list[asyncio.Task[None]] = []

    def __getattr__(self, name: str) -> Any:  # Watch, and anything else the stub has
        return getattr(self._stub, name)

    @property
    def streams_up(self) -> int:
        """How many replicas' Call streams are up (0: every call is unary)."""
        return len(self._up)

    def _changed(self, stream: CallStream, up: bool) -> None:
        if up:
            self._up.append(stream)
        elif stream in self._up:
            self._up.remove(stream)

    def start(self) -> None:
        """Begin (re)connecting every replica's stream in the background (idempotent)."""
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

    async def _call(self, kind: str, rpc: Any, request: Any, timeout: float | None,
                    metadata: Any, kwargs: dict[str, Any]) -> Any:
        up = self._up
        if not up or metadata or kwargs:
            return await rpc(request, timeout=timeout, metadata=metadata, **kwargs)
        self._turn += 1
        return await up[self._turn % len(up)].call(kind, request, timeout)

    async def Get(self, request: storage_pb2.GetRequest, timeout: float | None = None,  # noqa: N802 - stub names
                  metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Get``: the object, or AioRpcError (NOT_FOUND with a 404 Status, ...)."""
        return await self._call("get", self._stub.Get, request, timeout, metadata, kwargs)

    async def List(self, request: storage_pb2.ListRequest, timeout: float | None = None,  # noqa: N802
                   metadata: Any = None, **kwargs: Any) -> storage_pb2.ListResponse:
        """As the stub's unary ``List``."""
        return await self._call("list", self._stub.List, request, timeout, metadata, kwargs)

    async def Create(self, request: storage_pb2.CreateRequest, timeout: float | None = None,  # noqa: N802
                     metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Create`` (ALREADY_EXISTS with a 409 Status, INVALID_ARGUMENT 422, ...)."""
        return await self._call("create", self._stub.Create, request, timeout, metadata, kwargs)

    async def Update(self, request: storage_pb2.UpdateRequest, timeout: float | None = None,  # noqa: N802
                     metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Update`` (ABORTED with a 409 Conflict Status, NOT_FOUND, ...)."""
        return await self._call("update", self._stub.Update, request, timeout, metadata, kwargs)

    async def Delete(self, request: storage_pb2.DeleteRequest, timeout: float | None = None,  # noqa: N802
                     metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Delete``."""
        return await self._call("delete", self._stub.Delete, request, timeout, metadata, kwargs)


def open_client(channel: grpc.aio.Channel, addresses: str, tls: grpcutil.TLSFiles | None,
                streams: bool | None = None) -> StorageClient:
    """The gateway's StorageClient: the stub over ``channel`` (the round-robin channel to ``addresses``, the
    comma-separated ``--storage-address``) and one Call stream per address (over ``channel`` itself when there
    is one address, else over a channel of its own to each). ``streams`` False (default: True unless the
    gateway's channels carry per-call interceptors, :func:`kapi.observability.client_interceptors`) keeps
    every call unary. Call :meth:`StorageClient.start` on the running loop."""
    stub = storage_pb2_grpc.StorageStub(channel)
    if streams is None:
        streams = not observability.client_interceptors()
    if not streams:
        return StorageClient(stub)
    hosts = [a.strip() for a in addresses.split(",") if a.strip()]
    if len(hosts) <= 1:
        return StorageClient(stub, [(addresses.strip(), channel)])
    own = [grpcutil.channel(host, tls) for host in hosts]
    return StorageClient(stub, list(zip(hosts, own, strict=True)), own)
