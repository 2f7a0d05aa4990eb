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
from pathlib import Path
from typing import Any

import grpc
import yaml

from kapi import flags, grpcutil, schema
from kapi.resources import REGISTRY
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.admission import crd_schema, plugins
from services.admission.chain import Chain
from services.admission.informers import Informers
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
    context: plugins.PluginContext | None = None
    servicer: AdmissionServicer | None = None  # its stream_calls: the Call streams' running calls (tests)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop serving, the caches, the webhook client and the storage channel."""
        await self.server.stop(grace)
        await self.namespaces.stop()
        if self.context is not None:
            if self.context.informers is not None:
                await self.context.informers.stop()
            if self.context.webhook_client is not None:
                await self.context.webhook_client.close()
        await self.storage_channel.close()


def plugin_names(args: argparse.Namespace) -> list[str]:
    """The enabled plugins from the flags; raises ValueError for unknown or overlapping names."""
    return plugins.enabled_plugins(args.enable_admission_plugins, args.disable_admission_plugins)


def load_config(path: str) -> dict[str, Any]:
    """Plugin name -> configuration object from an AdmissionConfiguration file (YAML or JSON).

    Entries carry ``configuration`` inline or a ``path`` (relative to the
    file) to a separate file. Raises ValueError for an unreadable or
    malformed file.
    """
    if not path:
        return {}
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"reading {path}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "AdmissionConfiguration":
        raise ValueError(f"{path}: expected kind AdmissionConfiguration")
    out: dict[str, Any] = {}
    for entry in doc.get("plugins") or []:
        if not isinstance(entry, dict) or not entry.get("name"):
            raise ValueError(f"{path}: every plugins entry needs a name")
        config = entry.get("configuration")
        if config is None and entry.get("path"):
            other = Path(path).parent / str(entry["path"])
            try:
                config = yaml.safe_load(other.read_text())
            except (OSError, yaml.YAMLError) as exc:
                raise ValueError(f"reading {other}: {exc}") from None
        out[str(entry["name"])] = config or {}
    return out


async def start(args: argparse.Namespace, names: list[str], config: dict[str, Any] | None = None) -> Running:
    """Connect to storage, start the caches, build the chain, start serving."""
    schema.preload((r.group, r.version, r.kind) for r in REGISTRY.rows)
    tls = grpcutil.tls_from_args(args)
    storage_channel = grpcutil.channel(args.storage_address, tls)
    namespaces = NamespaceCache(storage_pb2_grpc.StorageStub(storage_channel))
    namespaces.start()
    context = plugins.PluginContext(namespaces=namespaces,
                                    informers=Informers(storage_pb2_grpc.StorageStub(storage_channel)),
                                    config=config if config is not None else load_config(
                                        getattr(args, "admission_control_config_file", "")))
    chain = Chain(plugins.build(names, context))
    if not await namespaces.wait_synced(CACHE_SYNC_WAIT):
        log.warning("namespace cache not synced after %.0fs; serving with live lookups", CACHE_SYNC_WAIT)
    server, health, port = grpcutil.make_server(
        args.listen_address, tls, allowed_callers=grpcutil.allowed_callers(args), services=[SERVICE_NAME])
    assert context.informers is not None
    admitter = Admitter(chain, custom_resources=crd_schema.CustomResources(context.informers))
    servicer = AdmissionServicer(admitter)
    admission_pb2_grpc.add_AdmissionServicer_to_server(servicer, server)
    grpcutil.set_serving(health, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("admission serving on port %d with plugins %s", port, ",".join(chain.names) or "(none)")
    return Running(server, port, storage_channel, namespaces, chain, context, servicer)


async def serve(args: argparse.Namespace, names: list[str], config: dict[str, Any], stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop with a short grace period."""
    await grpcutil.serve_until(stop, await start(args, names, config), GRACE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kapi admission``; returns the exit code (1 on a configuration error)."""
    args = flags.parse(flags.ADMISSION, argv)
    grpcutil.configure_logging(args.log_level)
    if not args.storage_address:
        log.error("--storage-address is required")
        return 1
    try:
        names = plugin_names(args)
        config = load_config(args.admission_control_config_file)
        plugins.validate_config(names, config)
    except ValueError as exc:
        log.error("invalid admission configuration: %s", exc)
        return 1
    grpcutil.run(lambda stop: serve(args, names, config, stop))
    return 0
