"""Gateway wiring: flags -> gRPC clients -> aiohttp HTTPS server running the handler chain.

``kapi gateway --secure-port 6444 --tls-cert-file ... --storage-address ... --authn-address ...``
serves kube-apiserver's REST surface over HTTPS (HTTP/1.1). It requests
(never requires) a client certificate verified against ``--client-ca-file``;
the ``x-forwarded-client-cert`` header counts only on connections whose
certificate CN is in ``--requestheader-allowed-names`` (Envoy).
Shutdown (SIGTERM): /readyz fails first, then after
``--shutdown-delay-duration`` seconds open watches end cleanly (clients
re-watch elsewhere) and in-flight requests finish.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import ssl
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
from aiohttp import web

from kapi import errors, flags, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation
from services.gateway.backends import AdmissionClient, AuthnClient, AuthzClient, storage_stub
from services.gateway.chain import build_handler_chain
from services.gateway.flowcontrol import FlowControlClient, LocalLimiter

log = logging.getLogger("kapi.gateway")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass(frozen=True)
class Config:
    """Gateway settings read from flags: front-proxy CNs and the default request timeout (seconds)."""

    front_proxy_names: frozenset[str]
    request_timeout: float


@dataclass
class Backends:
    """Everything a request handler calls, plus the gateway's lifecycle state."""

    config: Config
    authn: AuthnClient
    authz: AuthzClient
    admission: AdmissionClient
    storage: Any
    flowcontrol: FlowControlClient
    ready: bool = False
    shutting_down: bool = False
    watches: set[Any] = field(default_factory=set)


def _required(args: argparse.Namespace, *names: str) -> None:
    missing = [n for n in names if not getattr(args, n.replace("-", "_"))]
    if missing:
        raise SystemExit(f"kapi gateway: missing required flags: {', '.join('--' + n for n in missing)}")


def ssl_context(args: argparse.Namespace) -> ssl.SSLContext | None:
    """Server TLS: serving cert/key, optional client certificates verified against --client-ca-file."""
    if not args.tls_cert_file:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.tls_cert_file, args.tls_private_key_file)
    if args.client_ca_file:
        context.load_verify_locations(cafile=args.client_ca_file)
        context.verify_mode = ssl.CERT_OPTIONAL
    context.set_alpn_protocols(["http/1.1"])
    return context


def _namespace(name: str) -> bytes:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return jsonutil.dumps({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": now,
                     "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"},
    })


async def ensure_system_namespaces(storage: Any, stop: asyncio.Event) -> None:
    """Create default, kube-system, kube-public and kube-node-lease if absent (kube's system namespaces controller).

    Retries while storage is unavailable; returns once all exist or ``stop`` is set.
    """
    pending = list(SYSTEM_NAMESPACES)
    while pending and not stop.is_set():
        name = pending[0]
        try:
            await grpcutil.call("storage", storage.Create, storage_pb2.CreateRequest(
                key=storage_pb2.ResourceKey(resource="namespaces", name=name), object=_namespace(name)), timeout=5)
            pending.pop(0)
        except errors.StatusError as err:
            if err.reason == "AlreadyExists":
                pending.pop(0)
                continue
            log.info("waiting for storage to create namespace %s: %s", name, err.message)
            await asyncio.sleep(0.5)


async def serve(args: argparse.Namespace, stop: asyncio.Event) -> None:
    """Run the gateway until ``stop`` is set, then shut down gracefully."""
    _required(args, "storage-address", "authn-address", "authz-address", "admission-address")
    tls = grpcutil.tls_from_args(args)
    channels: list[grpc.aio.Channel] = []

    def chan(address: str) -> grpc.aio.Channel:
        channels.append(grpcutil.channel(address, tls))
        return channels[-1]

    fallback = LocalLimiter(args.max_requests_inflight, args.max_mutating_requests_inflight)
    flow_channel = chan(args.flowcontrol_address) if args.flowcontrol_address else None
    backends = Backends(
        config=Config(frozenset(n.strip() for n in args.requestheader_allowed_names.split(",") if n.strip()),
                      args.request_timeout),
        authn=AuthnClient(chan(args.authn_address)), authz=AuthzClient(chan(args.authz_address)),
        admission=AdmissionClient(chan(args.admission_address)), storage=storage_stub(chan(args.storage_address)),
        flowcontrol=FlowControlClient(flow_channel, fallback),
    )
    backends.flowcontrol.start()
    app = web.Application(client_max_size=negotiation.MAX_BODY_BYTES + 1)
    app.router.add_route("*", "/{tail:.*}", build_handler_chain(backends))
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=10.0)
    await runner.setup()
    site = web.TCPSite(runner, args.bind_address, args.secure_port, ssl_context=ssl_context(args),
                       backlog=1024, reuse_address=True)
    await site.start()
    port = runner.addresses[0][1]
    if args.port_file:
        Path(args.port_file).write_text(str(port))
    log.info("gateway serving on %s:%s", args.bind_address, port)
    await ensure_system_namespaces(backends.storage, stop)
    backends.ready = True
    await stop.wait()
    log.info("shutting down: /readyz fails for %.1fs, then watches end", args.shutdown_delay_duration)
    backends.ready, backends.shutting_down = False, True
    await asyncio.sleep(args.shutdown_delay_duration)
    for call in list(backends.watches):
        call.cancel()
    await runner.cleanup()
    await backends.flowcontrol.close()
    for channel in channels:
        with contextlib.suppress(Exception):
            await channel.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``kapi gateway``; returns the exit code."""
    args = flags.parse(flags.GATEWAY, argv)
    grpcutil.configure_logging(args.log_level)
    grpcutil.run(lambda stop: serve(args, stop))
    return 0
