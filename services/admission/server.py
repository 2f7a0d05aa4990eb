"""Wiring of the admission service: flags -> namespace cache -> plugin chain -> gRPC server.

    kapi admission --listen-address 127.0.0.1:0 --storage-address 127.0.0.1:7001 \\
                   --enable-admission-plugins NamespaceLifecycle
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from kapi import flags, grpcutil, schema
from kapi.resources import REGISTRY
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.admission import plugins
from services.admission.chain import Chain
from services.admission.namespaces import NamespaceCache
from services.admission.pipeline import Admitter
from services.admission.servicer import AdmissionServicer

log = logging.getLogger(__name__)

SERVICE_NAME = admission_pb2.DESCRIPTOR.services_by_name["Admission"].full_name
GRACE_SECONDS = 2.0
CACHE_SYNC_WAIT = 5.0  # seconds to wait for the first namespace list before serving anyway


@dataclass
class Running:
    """A started admission server and what it owns."""

    server: grpc.aio.Server
    port: int
    storage_channel: grpc.aio.Channel
    namespaces: NamespaceCache
    chain: Chain

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop serving, the namespace cache and the storage channel."""
        await self.server.stop(grace)
        await self.namespaces.stop()
        await self.storage_channel.close()


def plugin_names(args: argparse.Namespace) -> list[str]:
    """The enabled plugins from the flags; raises ValueError for unknown or overlapping names."""
    return plugins.enabled_plugins(args.enable_admission_plugins, args.disable_admission_plugins)


async def start(args: argparse.Namespace, names: list[str]) -> Running:
    """Connect to storage, start the namespace cache, build the chain, start serving."""
    schema.preload((r.group, r.version, r.kind) for r in REGISTRY.rows)
    tls = grpcutil.tls_from_args(args)
    storage_channel = grpcutil.channel(args.storage_address, tls)
    namespaces = NamespaceCache(storage_pb2_grpc.StorageStub(storage_channel))
    namespaces.start()
    chain = Chain(plugins.build(names, plugins.PluginContext(namespaces=namespaces)))
    if not await namespaces.wait_synced(CACHE_SYNC_WAIT):
        log.warning("namespace cache not synced after %.0fs; serving with live lookups", CACHE_SYNC_WAIT)
    server, health, port = grpcutil.make_server(args.listen_address, tls)
    admission_pb2_grpc.add_AdmissionServicer_to_server(AdmissionServicer(Admitter(chain)), server)
    grpcutil.set_serving(health, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("admission serving on port %d with plugins %s", port, ",".join(chain.names) or "(none)")
    return Running(server, port, storage_channel, namespaces, chain)


async def serve(args: argparse.Namespace, names: list[str], stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop with a short grace period."""
    await grpcutil.serve_until(stop, await start(args, names), GRACE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kapi admission``; returns the exit code (1 on a configuration error)."""
    args = flags.parse(flags.ADMISSION, argv)
    grpcutil.configure_logging(args.log_level)
    if not args.storage_address:
        log.error("--storage-address is required")
        return 1
    try:
        names = plugin_names(args)
    except ValueError as exc:
        log.error("invalid admission configuration: %s", exc)
        return 1
    grpcutil.run(lambda stop: serve(args, names, stop))
    return 0
