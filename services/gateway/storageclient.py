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

The multiplexing itself is :mod:`kapi.grpcmux` (shared with the admission
client): ``timeout`` (seconds) enforced as DEADLINE_EXCEEDED (504), a call
its caller cancels withdrawn (``CallCancel``), the unary RPC while no stream
is up, with ``metadata`` (or any other keyword) or per-call interceptors, and
a broken stream failing its outstanding calls UNAVAILABLE (503) without
retry, then reconnecting with a capped backoff. This module only declares
storage's messages (:data:`kapi.grpcmux.STORAGE`) and the stub's five verbs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from kapi import grpcmux, grpcutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

PROTOCOL = grpcmux.STORAGE  # storage.proto's Call messages


class StorageClient(grpcmux.Client):
    """``backends.storage``: the Storage stub's interface, its five unary verbs on :class:`kapi.grpcmux.Stream` s.

    ``stub`` is the Storage stub over the gateway's round-robin channel to
    every replica (``Watch``, the unary fallback); ``streams`` one
    (address, channel) per replica (:func:`open_client` builds both).
    ``start`` begins connecting them; ``close`` stops them (outstanding calls
    fail UNAVAILABLE) and closes the channels this client made (``owned``).
    """

    def __init__(self, stub: Any, streams: Sequence[tuple[str, grpc.aio.Channel]] = (),
                 owned: Sequence[grpc.aio.Channel] = ()) -> None:
        self._stub = stub  # first: __getattr__ reads it
        super().__init__(PROTOCOL, streams, owned)

    def __getattr__(self, name: str) -> Any:  # Watch, and anything else the stub has
        return getattr(self._stub, name)

    async def Get(self, request: storage_pb2.GetRequest, timeout: float | None = None,  # noqa: N802 - stub names
                  metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Get``: the object, or AioRpcError (NOT_FOUND with a 404 Status, ...)."""
        return await self.call("get", self._stub.Get, request, timeout, metadata, kwargs)

    async def List(self, request: storage_pb2.ListRequest, timeout: float | None = None,  # noqa: N802
                   metadata: Any = None, **kwargs: Any) -> storage_pb2.ListResponse:
        """As the stub's unary ``List``."""
        return await self.call("list", self._stub.List, request, timeout, metadata, kwargs)

    async def Create(self, request: storage_pb2.CreateRequest, timeout: float | None = None,  # noqa: N802
                     metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Create`` (ALREADY_EXISTS with a 409 Status, INVALID_ARGUMENT 422, ...)."""
        return await self.call("create", self._stub.Create, request, timeout, metadata, kwargs)

    async def Update(self, request: storage_pb2.UpdateRequest, timeout: float | None = None,  # noqa: N802
                     metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Update`` (ABORTED with a 409 Conflict Status, NOT_FOUND, ...)."""
        return await self.call("update", self._stub.Update, request, timeout, metadata, kwargs)

    async def Delete(self, request: storage_pb2.DeleteRequest, timeout: float | None = None,  # noqa: N802
                     metadata: Any = None, **kwargs: Any) -> storage_pb2.ObjectResponse:
        """As the stub's unary ``Delete``."""
        return await self.call("delete", self._stub.Delete, request, timeout, metadata, kwargs)


def open_client(channel: grpc.aio.Channel, addresses: str, tls: grpcutil.TLSFiles | None,
                streams: bool | None = None) -> StorageClient:
    """The gateway's StorageClient: the stub over ``channel`` (the round-robin channel to ``addresses``, the
    comma-separated ``--storage-address``) and one Call stream per address (:func:`kapi.grpcmux.stream_channels`:
    over ``channel`` itself when there is one address, else over a channel of its own to each). ``streams``
    False (default: True unless the gateway's channels carry per-call interceptors) keeps every call unary.
    Call :meth:`StorageClient.start` on the running loop."""
    pairs, owned = grpcmux.stream_channels(channel, addresses, tls, streams)
    return StorageClient(storage_pb2_grpc.StorageStub(channel), pairs, owned)
