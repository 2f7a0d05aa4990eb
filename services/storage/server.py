"""Wiring of the storage service: flags -> etcd client -> store -> gRPC server.

    kapi storage --listen-address 127.0.0.1:0 --etcd-servers http://127.0.0.1:2379 \\
                 --etcd-prefix /registry --port-file /tmp/storage.port

The health status of the Storage service (and of the server, "") follows
etcd: NOT_SERVING while a linearizable read of etcd fails or takes more than
HEALTH_TIMEOUT seconds (kube's ``--etcd-healthcheck-timeout``), checked every
HEALTH_INTERVAL seconds. The gateways follow it over the standard health
``Watch`` and fail their ``etcd`` checks of ``/livez`` and ``/readyz`` with it
(services/gateway/healthz.py), so Envoy stops routing to a stack that cannot
reach etcd.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health

from kapi import errors, flags, grpcutil
from kapi.duration import parse_duration
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage.compactor import Compactor
from services.storage.etcd import EtcdClient, parse_endpoints
from services.storage.etcd_watch import WatchMux
from services.storage.servicer import StorageServicer
from services.storage.store import Store
from services.storage.watchcache import WatchCaches, parse_watch_cache_sizes

log = logging.getLogger(__name__)

SERVICE_NAME = storage_pb2.DESCRIPTOR.services_by_name["Storage"].full_name
GRACE_SECONDS = 2.0
HEALTH_INTERVAL = 1.0  # seconds between etcd health checks
HEALTH_TIMEOUT = 2.0  # seconds an etcd health check may take (kube's --etcd-healthcheck-timeout default)
BOOKMARK_INTERVAL = 30.0  # seconds between etcd progress requests (bookmarks at least every 60 s)


def allowed_callers(args: argparse.Namespace) -> frozenset[str]:
    """``--allowed-callers`` (or the deprecated ``--storage-allowed-clients`` when given non-empty) as a set of
    certificate CNs; raises ValueError for a name that is not a kapi service identity (storage does no access
    control, so it stays closed to anyone but kapi's own services)."""
    if args.storage_allowed_clients:
        log.warning("--storage-allowed-clients is deprecated; use --allowed-callers")
        args = argparse.Namespace(allowed_callers=args.storage_allowed_clients)
    return grpcutil.allowed_callers(args, services_only=True)


@dataclass
class StorageService:
    """A running storage server and what it owns."""

    server: grpc.aio.Server
    port: int
    etcd: EtcdClient
    watches: WatchMux
    store: Store
    health: health.HealthServicer
    compactor: Compactor
    servicer: StorageServicer
    _health_task: asyncio.Task[None] | None = None

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop serving (``grace`` seconds for in-flight RPCs), then close the etcd watch stream and channels."""
        if self._health_task is not None:
            self._health_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._health_task
        await self.compactor.stop()
        if self.store.caches is not None:
            await self.store.caches.stop()
        await self.watches.close()
        await self.server.stop(grace)
        await self.etcd.close()


async def _watch_health(service: StorageService) -> None:
    serving = True
    while True:
        try:
            await service.etcd.health(HEALTH_TIMEOUT)
            ok = True
        except errors.StatusError as err:
            ok = False
            if serving:
                log.warning("etcd is unhealthy: %s", err.message)
        if ok != serving:
            serving = ok
            grpcutil.set_serving(service.health, [SERVICE_NAME], serving=ok)
            if ok:
                log.info("etcd is healthy again")
        await asyncio.sleep(HEALTH_INTERVAL)


async def start(args: argparse.Namespace, *, bookmark_interval: float = BOOKMARK_INTERVAL) -> StorageService:
    """Build and start the storage server from parsed flags; raises ValueError for bad ``--etcd-servers``,
    ``--watch-cache-sizes``, ``--etcd-compaction-interval`` or ``--allowed-callers``."""
    callers = allowed_callers(args)
    etcd = EtcdClient(parse_endpoints(args.etcd_servers))
    watches = WatchMux(etcd, progress_interval=bookmark_interval)
    caches = WatchCaches(etcd, watches, parse_watch_cache_sizes(args.watch_cache_sizes))
    store = Store(etcd, watches, args.etcd_prefix, caches)
    server, health_servicer, port = grpcutil.make_server(args.listen_address, grpcutil.tls_from_args(args),
                                                         allowed_callers=callers, services=[SERVICE_NAME])
    servicer = StorageServicer(store)
    storage_pb2_grpc.add_StorageServicer_to_server(servicer, server)
    grpcutil.set_serving(health_servicer, [SERVICE_NAME])
    compactor = Compactor(etcd, parse_duration(args.etcd_compaction_interval), store.compacted)
    await grpcutil.start_serving(server, port, args.port_file)
    compactor.start()
    service = StorageService(server, port, etcd, watches, store, health_servicer, compactor, servicer)
    service._health_task = asyncio.get_running_loop().create_task(_watch_health(service))
    log.info("storage serving on port %d (etcd %s, prefix %s)", port, ",".join(etcd.targets), args.etcd_prefix)
    return service


async def serve(args: argparse.Namespace, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop gracefully."""
    await grpcutil.serve_until(stop, await start(args), GRACE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kapi storage``; returns the exit code (1 on a configuration error)."""
    args = flags.parse(flags.STORAGE, argv)
    grpcutil.configure_logging(args.log_level)
    try:
        parse_endpoints(args.etcd_servers)
    except ValueError as exc:
        log.error("invalid --etcd-servers: %s", exc)
        return 1
    checks: tuple[tuple[str, object, Callable[[Any], object]], ...] = (
        ("--watch-cache-sizes", args.watch_cache_sizes, parse_watch_cache_sizes),
        ("--etcd-compaction-interval", args.etcd_compaction_interval, parse_duration),
        ("--allowed-callers", args, allowed_callers))
    for name, value, parse in checks:
        try:
            parse(value)
        except ValueError as exc:
            log.error("invalid %s: %s", name, exc)
            return 1
    grpcutil.run(lambda stop: serve(args, stop))
    return 0
