"""Storage test fixtures: the storage gRPC server in-process (insecure) over the session's real etcd."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from kapi import flags
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.storage import server

BOOKMARK_INTERVAL = 0.3  # seconds; tests wait for bookmarks


FRESH_TIMEOUT = 1.0  # seconds a read waits for the watch cache to reach a revision (tests: short)


async def start_storage(etcd_endpoint: str, prefix: str, *extra: str) -> server.StorageService:
    """A storage server on a free 127.0.0.1 port (insecure) for ``etcd_endpoint`` under ``prefix``;
    ``extra`` are more storage flags."""
    args = flags.parse(flags.STORAGE, ["--listen-address", "127.0.0.1:0", "--etcd-servers", etcd_endpoint,
                                       "--etcd-prefix", prefix, *extra])
    service = await server.start(args, bookmark_interval=BOOKMARK_INTERVAL)
    service.store.fresh_timeout = FRESH_TIMEOUT
    return service


@pytest.fixture(scope="session")
async def storage(etcd: Any) -> AsyncIterator[server.StorageService]:
    """The storage service for this session, under a unique etcd prefix."""
    service = await start_storage(etcd.endpoint, f"/kapi-test-{uuid.uuid4().hex[:8]}/registry")
    yield service
    await service.stop(0)


@pytest.fixture(scope="session")
async def stub(storage: server.StorageService) -> AsyncIterator[storage_pb2_grpc.StorageStub]:
    """A Storage stub connected to :func:`storage`."""
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{storage.port}")
    yield storage_pb2_grpc.StorageStub(channel)
    await channel.close()
