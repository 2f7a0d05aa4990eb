"""Wiring of the authorization service: flags -> authorizer union (+ RBAC policy sync, bootstrap, Node graph) -> gRPC.

    kapi authz --listen-address 127.0.0.1:0 --storage-address 127.0.0.1:7001 --authorization-mode Node,RBAC

With RBAC the service lists and watches the RBAC objects from storage and
creates the default roles (``bootstrap.py``); with Node it lists and
watches pods for the node graph (``node.py``). Its gRPC health is
NOT_SERVING until those are synced and the defaults exist (like
kube-apiserver's ``/readyz`` waiting for ``poststarthook/rbac/bootstrap-roles``),
and Authorize answers 503 until the first sync. ABAC reads
``--authorization-policy-file`` and Webhook ``--authorization-webhook-config-file``
once at start; a bad file makes the service exit 1. ``--authorization-config``
(an AuthorizationConfiguration, ``config.py``) replaces those flags.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health

from kapi import flags, grpcutil
from kapi.duration import parse_duration
from kapi.kubeconfig import load_webhook_config
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.authz import abac, bootstrap, node, union, webhook
from services.authz import config as authzconfig
from services.authz.aggregation import Aggregator
from services.authz.authorizer import Authorizer
from services.authz.config import WebhookSpec
from services.authz.escalation import EscalationChecker
from services.authz.node import NodeAuthorizer, NodeGraph
from services.authz.policy import PolicyIndex, PolicySync
from services.authz.rbac import RBACAuthorizer
from services.authz.servicer import AuthorizationServicer
from services.authz.webhook import WebhookAuthorizer

log = logging.getLogger(__name__)

SERVICE_NAME = authz_pb2.DESCRIPTOR.services_by_name["Authorization"].full_name
GRACE_SECONDS = 2.0


@dataclass(frozen=True)
class Config:
    """Validated authorization configuration: ordered modes, ABAC policies, webhooks by mode key.

    A webhook's mode key is ``Webhook`` (legacy flags) or ``Webhook/<name>``
    (``--authorization-config``).
    """

    modes: list[str]
    policies: list[abac.Policy] = field(default_factory=list)
    webhooks: dict[str, WebhookSpec] = field(default_factory=dict)


def check_args(args: argparse.Namespace) -> Config:
    """Validate the flags and load the files they name (kube-apiserver's authorization options validation).

    Raises :class:`union.ModeError`, :class:`abac.PolicyLoadError`,
    :class:`authzconfig.ConfigError` (all ValueErrors) or OSError.
    """
    config_file = getattr(args, "authorization_config", "")
    policy_file = getattr(args, "authorization_policy_file", "")
    webhook_file = getattr(args, "authorization_webhook_config_file", "")
    if config_file:
        for given, name in ((args.authorization_mode, "--authorization-mode"),
                            (policy_file, "--authorization-policy-file"),
                            (webhook_file, "--authorization-webhook-config-file")):
            if given:
                raise union.ModeError(f"--authorization-config can not be specified when {name} is specified")
        modes, webhooks = authzconfig.load(config_file)
        config = Config(modes, [], webhooks)
    else:
        config = _legacy(args, policy_file, webhook_file)
    for mode in (union.RBAC, union.NODE):
        if mode in config.modes and not args.storage_address:
            raise union.ModeError(f"--storage-address is required with --authorization-mode={mode}")
    return config


def _legacy(args: argparse.Namespace, policy_file: str, webhook_file: str) -> Config:
    modes = union.parse_modes(args.authorization_mode or union.RBAC)
    if union.ABAC in modes and not policy_file:
        raise union.ModeError("authorization-mode ABAC's authorization policy file not passed")
    if policy_file and union.ABAC not in modes:
        raise union.ModeError("cannot specify --authorization-policy-file without mode ABAC")
    if union.WEBHOOK in modes and not webhook_file:
        raise union.ModeError("authorization-mode Webhook's authorization config file not passed")
    if webhook_file and union.WEBHOOK not in modes:
        raise union.ModeError("cannot specify --authorization-webhook-config-file without mode Webhook")
    webhooks: dict[str, WebhookSpec] = {}
    if union.WEBHOOK in modes:
        version = getattr(args, "authorization_webhook_version", "v1")
        if version not in webhook.VERSIONS:
            raise union.ModeError(f"--authorization-webhook-version must be one of {', '.join(webhook.VERSIONS)}, "
                                  f"got {version!r}")
        spec = WebhookSpec(load_webhook_config(webhook_file), version,
                           parse_duration(args.authorization_webhook_cache_authorized_ttl),
                           parse_duration(args.authorization_webhook_cache_unauthorized_ttl),
                           parse_duration(args.authorization_webhook_timeout))
        if spec.timeout <= 0:
            raise union.ModeError("--authorization-webhook-timeout must be positive")
        webhooks[union.WEBHOOK] = spec
    return Config(modes, abac.load(policy_file) if policy_file else [], webhooks)


@dataclass
class AuthzService:
    """A running authz service: its server, bound port, policy index, node graph and background tasks."""

    server: grpc.aio.Server
    port: int
    health: health.HealthServicer
    index: PolicyIndex
    graph: NodeGraph = field(default_factory=NodeGraph)
    sync: PolicySync | None = None
    graph_sync: PolicySync | None = None
    aggregator: Aggregator | None = None
    webhooks: list[WebhookAuthorizer] = field(default_factory=list)
    channel: grpc.aio.Channel | None = None
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def stop(self, grace: float = GRACE_SECONDS) -> None:
        """Stop serving (``grace`` seconds for in-flight RPCs), cancel the syncs, close the channels."""
        await grpcutil.shutdown(self.server, grace, self.tasks, self.channel)
        for hook in self.webhooks:
            await hook.close()


async def start(args: argparse.Namespace) -> AuthzService:
    """Build and start the service from parsed flags (see :func:`check_args` for what is raised)."""
    config = check_args(args)
    modes = config.modes
    tls = grpcutil.tls_from_args(args)
    index = PolicyIndex()
    graph = NodeGraph()
    webhooks = {mode: WebhookAuthorizer(spec.config, version=spec.version, authorized_ttl=spec.authorized_ttl,
                                        unauthorized_ttl=spec.unauthorized_ttl, timeout=spec.timeout,
                                        failure_policy=spec.failure_policy)
                for mode, spec in config.webhooks.items()}
    factories: dict[str, Callable[[], Authorizer]] = {
        union.RBAC: lambda: RBACAuthorizer(index),
        union.NODE: lambda: NodeAuthorizer(graph),
        union.ABAC: lambda: abac.ABACAuthorizer(config.policies),
    }
    for mode, hook in webhooks.items():
        factories[mode] = lambda hook=hook: hook  # type: ignore[misc]
    authorizer = union.build(modes, factories)
    server, health_servicer, port = grpcutil.make_server(
        args.listen_address, tls, allowed_callers=grpcutil.allowed_callers(args), services=[SERVICE_NAME])
    escalation = EscalationChecker(authorizer, index) if union.RBAC in modes else None
    servicer = AuthorizationServicer(authorizer, index, escalation)
    authz_pb2_grpc.add_AuthorizationServicer_to_server(servicer, server)
    service = AuthzService(server, port, health_servicer, index, graph, webhooks=list(webhooks.values()))
    if union.RBAC in modes or union.NODE in modes:
        grpcutil.set_serving(health_servicer, [SERVICE_NAME], serving=False)
        service.channel = grpcutil.channel(args.storage_address, tls)
        stub = storage_pb2_grpc.StorageStub(service.channel)
        waits: list[asyncio.Event] = []
        if union.RBAC in modes:
            service.sync = PolicySync(stub, index)
            service.tasks.append(asyncio.create_task(service.sync.run(), name="rbac-sync"))
            service.aggregator = Aggregator(stub, index)
            service.tasks.append(asyncio.create_task(service.aggregator.run(service.sync.synced),
                                                     name="clusterrole-aggregation"))
            waits.append(service.sync.synced)
        if union.NODE in modes:
            service.graph_sync = PolicySync(stub, graph, group="", resources=(node.PODS,),
                                            what="node authorizer graph")
            service.tasks.append(asyncio.create_task(service.graph_sync.run(), name="node-graph-sync"))
            waits.append(service.graph_sync.synced)
        service.tasks.append(asyncio.create_task(
            _become_ready(service, stub if union.RBAC in modes else None, waits), name="authz-ready"))
    else:
        grpcutil.set_serving(health_servicer, [SERVICE_NAME])
    await grpcutil.start_serving(server, port, args.port_file)
    log.info("authz serving on port %d with modes %s", port, ",".join(modes))
    return service


async def _become_ready(service: AuthzService, stub: storage_pb2_grpc.StorageStub | None,
                        waits: Sequence[asyncio.Event]) -> None:
    """Create the default RBAC policy (with RBAC), wait for every first sync, then report SERVING."""
    if stub is not None:
        created = await bootstrap.ensure(stub)
        log.info("bootstrap RBAC policy ensured (%d objects created)", created)
    for event in waits:
        await event.wait()
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
    except (ValueError, OSError) as exc:
        log.error("invalid authorization configuration: %s", exc)
        return 1
    grpcutil.run(lambda stop: serve(args, stop))
    return 0
