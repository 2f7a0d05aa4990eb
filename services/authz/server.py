"""Wiring of the authorization service: flags -> authorizer union (+ RBAC policy sync, bootstrap) -> gRPC.

    kapi authz --listen-address 127.0.0.1:0 --storage-address 127.0.0.1:7001 --authorization-mode RBAC

With RBAC the service lists and watches the RBAC objects from storage and
creates the default roles (``bootstrap.py``); its gRPC health is
NOT_SERVING until the policy is synced and the defaults exist (like
kube-apiserver's ``/readyz`` waiting for ``poststarthook/rbac/bootstrap-roles``),
and Authorize answers 503 until the first sync.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health

from kapi import flags, grpcutil
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.authz import bootstrap, union
from services.authz.aggregation import Aggregator
from services.authz.escalation import EscalationChecker
from services.authz.policy import PolicyIndex, PolicySync
from services.authz.rbac import RBACAuthorizer
from services.authz.servicer import AuthorizationServicer

log = logging.getLogger(__name__)

SERVICE_NAME = authz_pb2.DESCRIPTOR.services_by_name["Authorization"].full_name
GRACE_SECONDS = 2.0


def check_args(args: argparse.Namespace) -> list[str]:
    """Validate the flags; returns the ordered modes. Raises :class:`union.ModeError` (a ValueError)."""
    modes = union.parse_modes(args.authorization_mode)
    if union.RBAC in modes and not args.storage_address:
        raise union.ModeError("--storage-address is required with --authorization-mode=RBAC")
    return modes


@dataclass
class AuthzService:
    """A running authz service: its server, bound port, policy index and background tasks."""

    server: grpc.aio.Server
    port: int
    health: health.HealthServicer
    index: PolicyIndex
    sync: PolicySync | None = None
    aggregator: Aggregator | None = None
    channel: grpc.aio.Channel | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop serving (``grace`` seconds for in-flight RPCs), cancel the sync, close the storage channel."""
        await self.server.stop(grace)
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.channel is not None:
            await self.channel.close()


async def start(args: argparse.Namespace) -> AuthzService:
    """Build and start the service from parsed flags (see :func:`check_args` for what is raised)."""
    modes = check_args(args)
    tls = grpcutil.tls_from_args(args)
    index = PolicyIndex()
    factories = {union.RBAC: lambda: RBACAuthorizer(index)}
    authorizer = union.build(modes, factories)
    server, health_servicer, port = grpcutil.make_server(args.listen_address, tls)
    escalation = EscalationChecker(authorizer, index) if union.RBAC in modes else None
    servicer = AuthorizationServicer(authorizer, index, escalation)
    authz_pb2_grpc.add_AuthorizationServicer_to_server(servicer, server)
    service = AuthzService(server, port, health_servicer, index)
    if union.RBAC in modes:
        grpcutil.set_serving(health_servicer, [SERVICE_NAME], serving=False)
        service.channel = grpcutil.channel(args.storage_address, tls)
        stub = storage_pb2_grpc.StorageStub(service.channel)
        service.sync = PolicySync(stub, index)
        service.tasks.append(asyncio.create_task(service.sync.run(), name="rbac-sync"))
        service.tasks.append(asyncio.create_task(_become_ready(service, stub), name="rbac-bootstrap"))
        service.aggregator = Aggregator(stub, index)
        service.tasks.append(asyncio.create_task(service.aggregator.run(service.sync.synced),
                                                 name="clusterrole-aggregation"))
    else:
        grpcutil.set_serving(health_servicer, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("authz serving on port %d with modes %s", port, ",".join(modes))
    return service


async def _become_ready(service: AuthzService, stub: storage_pb2_grpc.StorageStub) -> None:
    """Create the default policy, wait for the first sync, then report SERVING."""
    created = await bootstrap.ensure(stub)
    log.info("bootstrap RBAC policy ensured (%d objects created)", created)
    assert service.sync is not None
    await service.sync.synced.wait()
    grpcutil.set_serving(service.health, [SERVICE_NAME])


async def serve(args: argparse.Namespace, stop: asyncio.Event) -> None:
    """Serve until ``stop`` is set, then stop gracefully."""
    await grpcutil.serve_until(stop, await start(args), GRACE_SECONDS)


def main(argv: Sequence[str]) -> int:
    """Entry point of ``kapi authz``; returns the exit code (1 on an invalid configuration)."""
    args = flags.parse(flags.AUTHZ, argv)
    grpcutil.configure_logging(args.log_level)
    try:
        check_args(args)
    except ValueError as exc:
        log.error("invalid authorization configuration: %s", exc)
        return 1
    grpcutil.run(lambda stop: serve(args, stop))
    return 0
