"""Wiring of the flow-control service: flags -> max-in-flight dispatcher -> gRPC server.

    kapi flowcontrol --listen-address 127.0.0.1:0 \\
                     --max-requests-inflight 400 --max-mutating-requests-inflight 200
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Sequence

import grpc

from kapi import flags, grpcutil
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc
from services.flowcontrol.dispatcher import Dispatcher
from services.flowcontrol.maxinflight import MaxInFlight
from services.flowcontrol.servicer import FlowControlServicer

log = logging.getLogger(__name__)

SERVICE_NAME = flowcontrol_pb2.DESCRIPTOR.services_by_name["FlowControl"].full_name
GRACE_SECONDS = 2.0


def build_dispatcher(args: argparse.Namespace) -> Dispatcher:
    """The dispatcher the flags describe; raises ValueError for a negative limit."""
    return MaxInFlight(args.max_requests_inflight, args.max_mutating_requests_inflight)


async def start(args: argparse.Namespace, dispatcher: Dispatcher) -> tuple[grpc.aio.Server, int]:
    """Build, register and start the gRPC server; returns (server, bound port)."""
    server, health, port = grpcutil.make_server(args.listen_address, grpcutil.tls_from_args(args))
    flowcontrol_pb2_grpc.add_FlowControlServicer_to_server(FlowControlServicer(dispatcher), server)
    grpcutil.set_serving(health, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("flowcontrol serving on port %d (max-requests-inflight=%d, max-mutating-requests-inflight=%d)",
             port, args.max_requests_inflight, args.max_mutating_requests_inflight)
    return server, port


async def serve(args: argparse.Namespace, dispatcher: Dispatcher, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop with a short grace period (open streams are cancelled)."""
    server, _ = await start(args, dispatcher)
    await grpcutil.serve_until(stop, server, GRACE_SECONDS)


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
