"""The ``kapi.storage.v1.Storage`` gRPC servicer: proto <-> :class:`services.storage.store.Store`.

Each RPC decodes the request, calls the store and encodes the answer; the
server's caller check (``--allowed-callers``, :class:`kapi.grpcutil.CallerInterceptor`)
has admitted the caller before any of them runs. Failures end the
RPC with the Kubernetes Status in trailing metadata (:func:`kapi.errors.abort`);
a body that is not a JSON object is 400 BadRequest; anything unexpected is
logged and returned as 500 InternalError.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc

from kapi import errors, grpcmux, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage.keys import ObjectKey
from services.storage.store import ListOptions, Store, StoredObject, WatchOptions

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


def _key(key: storage_pb2.ResourceKey) -> ObjectKey:
    return ObjectKey(key.group, key.resource, key.namespace, key.name)


def _body(data: bytes) -> dict[str, Any]:
    try:
        obj = jsonutil.loads(data)
    except ValueError as exc:
        raise errors.bad_request(f"the object is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise errors.bad_request("the object must be a JSON object")
    return obj


def _failure(exc: Exception) -> errors.StatusError:
    """The StatusError a failed RPC answers: ``exc`` itself, else (never a crash) 500 InternalError, logged."""
    if isinstance(exc, errors.StatusError):
        return exc
    log.error("storage RPC failed", exc_info=exc)
    return errors.internal(f"{type(exc).__name__}: {exc}")


def _object_response(stored: StoredObject) -> storage_pb2.ObjectResponse:
    return storage_pb2.ObjectResponse(object=jsonutil.dumps(stored.object), resource_version=stored.resource_version,
                                      deletion_pending=stored.deletion_pending)


class StorageServicer(storage_pb2_grpc.StorageServicer):
    """Serves the Storage RPCs from ``store``.

    Each verb has one work function (``_create``, ``_get``, ``_list``,
    ``_update``, ``_delete``: request proto and timeout -> response proto,
    raising :class:`kapi.errors.StatusError`) that both its unary RPC and the
    multiplexed ``Call`` stream (:func:`kapi.grpcmux.serve`) run, so the two
    answer alike. The timeout (seconds) is unused: a call past it is
    cancelled, on either path.
    """

    def __init__(self, store: Store):
        self._store = store
        # Calls of Call streams still running (all streams): what a stream's end must cancel; read by tests.
        self.stream_calls: set[asyncio.Task[None]] = set()
        self._work: dict[str, grpcmux.Work] = {
            "get": self._get, "list": self._list, "create": self._create, "update": self._update,
            "delete": self._delete}

    async def _unary(self, context: grpc.aio.ServicerContext, work: Callable[[T, float | None], Awaitable[R]],
                     request: T) -> R:
        try:
            return await work(request, None)
        except Exception as exc:
            await errors.abort(context, _failure(exc))
        raise AssertionError("unreachable: abort raises")

    async def _create(self, request: storage_pb2.CreateRequest,
                      timeout: float | None = None) -> storage_pb2.ObjectResponse:
        return _object_response(await self._store.create(_key(request.key), _body(request.object)))

    async def _get(self, request: storage_pb2.GetRequest,
                   timeout: float | None = None) -> storage_pb2.ObjectResponse:
        return _object_response(await self._store.get(_key(request.key), request.resource_version))

    async def _list(self, request: storage_pb2.ListRequest,
                    timeout: float | None = None) -> storage_pb2.ListResponse:
        result = await self._store.list(_key(request.key), ListOptions(
            label_selector=request.label_selector, field_selector=request.field_selector,
            limit=request.limit, continue_=getattr(request, "continue"),
            resource_version=request.resource_version,
            resource_version_match=request.resource_version_match,
            selectable_fields=tuple(request.selectable_fields)))
        items = result.encoded if result.encoded is not None else [jsonutil.dumps(i) for i in result.items]
        response = storage_pb2.ListResponse(items=items, resource_version=result.resource_version)
        setattr(response, "continue", result.continue_)  # noqa: B010 - "continue" is a Python keyword
        if result.remaining_item_count is not None:
            response.remaining_item_count = result.remaining_item_count
            response.has_remaining_item_count = True
        return response

    async def _update(self, request: storage_pb2.UpdateRequest,
                      timeout: float | None = None) -> storage_pb2.ObjectResponse:
        return _object_response(await self._store.update(_key(request.key), _body(request.object),
                                                         request.expected_resource_version))

    async def _delete(self, request: storage_pb2.DeleteRequest,
                      timeout: float | None = None) -> storage_pb2.ObjectResponse:
        return _object_response(await self._store.delete(_key(request.key), request.expected_resource_version,
                                                         request.expected_uid))

    async def Create(self, request: storage_pb2.CreateRequest,  # noqa: N802 - gRPC method name
                     context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        """Create an absent object; 409 AlreadyExists if present. The answer carries its resourceVersion."""
        return await self._unary(context, self._create, request)

    async def Get(self, request: storage_pb2.GetRequest,  # noqa: N802
                  context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        """Read one object; 404 NotFound if absent."""
        return await self._unary(context, self._get, request)

    async def List(self, request: storage_pb2.ListRequest,  # noqa: N802
                   context: grpc.aio.ServicerContext) -> storage_pb2.ListResponse:
        """List a collection (selectors, limit/continue, resourceVersion semantics of :meth:`Store.list`)."""
        return await self._unary(context, self._list, request)

    async def Update(self, request: storage_pb2.UpdateRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        """Replace an object; 409 Conflict on a stale expected_resource_version, 404 if absent."""
        return await self._unary(context, self._update, request)

    async def Delete(self, request: storage_pb2.DeleteRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        """Delete an object (optional resourceVersion / UID preconditions); answers its last state, or, for an
        object with finalizers, its state marked for deletion with ``deletion_pending`` set."""
        return await self._unary(context, self._delete, request)

    async def Call(self, request_iterator: AsyncIterator[storage_pb2.CallRequests],  # noqa: N802
                   context: grpc.aio.ServicerContext) -> AsyncIterator[storage_pb2.CallResponses]:
        """Serve Get/List/Create/Update/Delete calls multiplexed on one stream (storage.proto ``Call``).

        :func:`kapi.grpcmux.serve`: each call runs as its own task through the
        verb's work function (as the unary RPC); answers go out batched
        in completion order, each with its request's id: the response proto,
        or a ``CallError`` with the gRPC code, message and Status JSON the
        unary RPC would have failed with. A call past its
        ``timeout_seconds``, or cancelled by the caller, is cancelled and not
        answered. The request stream's end lets the running calls finish, then
        ends the responses; a cancelled or broken stream cancels them.
        """
        # aclosing: the stream's end (grpc closes this generator) cancels the running calls at once, not when
        # the inner generator is collected.
        async with contextlib.aclosing(grpcmux.serve(grpcmux.STORAGE, self._work, request_iterator, context,
                                                     failure=_failure, running=self.stream_calls)) as answers:
            async for responses in answers:
                yield responses

    async def Watch(self, request: storage_pb2.WatchRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> AsyncIterator[storage_pb2.WatchResponse]:
        """Stream event batches (see :meth:`Store.watch`); errors end the stream with a Status in trailers."""
        options = WatchOptions(resource_version=request.resource_version, label_selector=request.label_selector,
                               field_selector=request.field_selector, allow_bookmarks=request.allow_bookmarks,
                               send_initial_events=request.send_initial_events,
                               selectable_fields=tuple(request.selectable_fields),
                               skip_initial_events=request.skip_initial_events, timeout=context.time_remaining())
        try:
            async with contextlib.aclosing(self._store.watch(_key(request.key), options)) as stream:
                async for events in stream:
                    yield storage_pb2.WatchResponse(events=[
                        storage_pb2.WatchEvent(type=e.type,
                                               object=e.encoded if e.encoded is not None else jsonutil.dumps(e.object),
                                               resource_version=e.resource_version) for e in events])
        except Exception as exc:
            await errors.abort(context, _failure(exc))
