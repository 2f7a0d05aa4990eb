"""Wiring of the flow-control service: flags -> APF controller (+ config sync from storage) -> gRPC server.

    kapi flowcontrol --listen-address 127.0.0.1:0 --storage-address 127.0.0.1:7001 \\
                     --max-requests-inflight 400 --max-mutating-requests-inflight 200

With ``--storage-address`` the service runs API Priority and Fairness
(KEP-1040): it lists and watches FlowSchemas and PriorityLevelConfigurations,
creates and keeps the mandatory and suggested ones, and reports gRPC health
SERVING once both kinds are synced (kube-apiserver's
``poststarthook/apiserver/bootstrap-system-flowcontrol-configuration``);
until then it dispatches with the built-in defaults. Without a storage
address it falls back to plain max-in-flight limits.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health

from kapi import flags, flowcontrolmetrics, grpcutil
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.flowcontrol.apf import Controller
from services.flowcontrol.apfdispatch import APFDispatcher
from services.flowcontrol.dispatcher import Dispatcher
from services.flowcontrol.maxinflight import MaxInFlight
from services.flowcontrol.servicer import FlowControlServicer
from services.flowcontrol.sync import ConfigSync

log = logging.getLogger(__name__)

SERVICE_NAME = flowcontrol_pb2.DESCRIPTOR.services_by_name["FlowControl"].full_name
GRACE_SECONDS = 2.0


def build_dispatcher(args: argparse.Namespace) -> Dispatcher:
    """APF when ``--storage-address`` is set, else max-in-flight; raises ValueError for bad limits."""
    if args.max_requests_inflight < 0 or args.max_mutating_requests_inflight < 0:
        raise ValueError("in-flight limits must be >= 0")
    if getattr(args, "storage_address", ""):
        return APFDispatcher(Controller(args.max_requests_inflight + args.max_mutating_requests_inflight))
    return MaxInFlight(args.max_requests_inflight, args.max_mutating_requests_inflight)


@dataclass
class FlowControlService:
    """A running flowcontrol service: server, port, health, and the APF sync (when configured)."""

    server: grpc.aio.Server
    port: int
    health: health.HealthServicer
    sync: ConfigSync | None = None
    channel: grpc.aio.Channel | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop serving (open streams are cancelled after ``grace`` seconds) and the sync."""
        await grpcutil.shutdown(self.server, grace, self.tasks, self.channel)


async def start(args: argparse.Namespace, dispatcher: Dispatcher) -> FlowControlService:
    """Build, register and start the gRPC server (and the APF sync for an :class:`APFDispatcher`)."""
    tls = grpcutil.tls_from_args(args)
    server, health_servicer, port = grpcutil.make_server(
        args.listen_address, tls, allowed_callers=grpcutil.allowed_callers(args), services=[SERVICE_NAME])
    flowcontrol_pb2_grpc.add_FlowControlServicer_to_server(FlowControlServicer(dispatcher), server)
    service = FlowControlService(server, port, health_servicer)
    if isinstance(dispatcher, APFDispatcher):
        flowcontrolmetrics.register(dispatcher.controller.metrics)  # apiserver_flowcontrol_* on --metrics-address
        grpcutil.set_serving(health_servicer, [SERVICE_NAME], serving=False)
        service.channel = grpcutil.channel(args.storage_address, tls)
        service.sync = ConfigSync(storage_pb2_grpc.StorageStub(service.channel), dispatcher.controller)
        service.tasks.append(asyncio.create_task(service.sync.run(), name="apf-sync"))
        service.tasks.append(asyncio.create_task(_become_ready(service), name="apf-ready"))
    else:
        grpcutil.set_serving(health_servicer, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("flowcontrol serving on port %d (%s; max-requests-inflight=%d, max-mutating-requests-inflight=%d)",
             port, "APF" if service.sync else "max-in-flight", args.max_requests_inflight,
             args.max_mutating_requests_inflight)
    return service


async def _become_ready(service: FlowControlService) -> None:
    assert service.sync is not None
    await service.sync.synced.wait()
    grpcutil.set_serving(service.health, [SERVICE_NAME])


async def serve(args: argparse.Namespace, dispatcher: Dispatcher, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop with a short grace period (open streams are cancelled)."""
    await grpcutil.serve_until(stop, await start(args, dispatcher), GRACE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kapi flowcontrol``; returns the exit code (1 on a configuration error)."""
    args = flags.parse(flags.FLOWCONTROL, argv)
    grpcutil.configure_logging(args.log_level)
    try:
        dispatcher = build_dispatcher(args)
    except ValueError as exc:
        log.error("invalid flow-control configuration: %s", exc)
        return 1
    grpcutil.run(lambda stop: serve(args, dispatcher, stop))
    return 0
