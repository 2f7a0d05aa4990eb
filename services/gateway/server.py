"""Gateway wiring: flags -> gRPC clients -> aiohttp HTTPS server running the handler chain.

``kapi gateway --secure-port 6444 --tls-cert-file ... --storage-address ... --authn-address ...``
serves kube-apiserver's REST surface over HTTPS (HTTP/1.1). It requests
(never requires) a client certificate verified against ``--client-ca-file``
or ``--requestheader-client-ca-file``; the ``x-forwarded-client-cert``
header counts only on connections whose certificate the latter issued and
whose CN is in ``--requestheader-allowed-names`` (Envoy).
With ``--grpc-listen-address`` it also serves the public gRPC API
(``kapi.api.v1.Resources``, services/gateway/grpcapi.py) there, over TLS with
the same serving certificate, requiring a client certificate from either CA
(Envoy's ``front-proxy-client``); its calls run through the same chain.
Shutdown (SIGTERM): /readyz fails first, then after
``--shutdown-delay-duration`` seconds (less once Envoy's health check has
read the failing /readyz, or when no request comes at all:
services/gateway/filters/health.py ``drain``) open watches end cleanly
(clients re-watch elsewhere), in-flight requests finish, and the process exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import ssl
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
from aiohttp import web

from kapi import errors, flags, grpcutil, jsonutil, limits
from kapi.kinds import networking, scheduling
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import aggregation, audit, authtrust, chain, dynamic, grpcapi, healthz, storageclient
from services.gateway.backends import AdmissionClient, AuthnClient, AuthzClient, Backends, Config
from services.gateway.context import Handler
from services.gateway.filters import health as health_filter
from services.gateway.flowcontrol import FlowControlClient, LocalLimiter
from services.gateway.registry import ipaddresses, ipallocator

log = logging.getLogger("kapi.gateway")

SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


# aiohttp's HTTP/1.1 parser limits (web.AppRunner keywords). The request line and each header field (name and
# value) up to Go's 1 MiB (kube accepts long URLs and OIDC tokens; aiohttp's 8190-byte default answered them with a
# plain-text 400), and any number of fields within it: Go's net/http counts bytes only (MaxHeaderBytes), and
# aiohttp's 128-field default answered more with a plain-text 400 (each field is at least one of those bytes).
# The fields Envoy passes (kapi.local.envoy: max_request_headers_kb, max_headers_count) are within these.
PARSER_LIMITS: dict[str, Any] = {"max_line_size": limits.MAX_HEADER_BYTES, "max_field_size": limits.MAX_HEADER_BYTES,
                                 "max_headers": limits.MAX_HEADER_BYTES}


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
    for ca_file in dict.fromkeys(f for f in (args.client_ca_file, args.requestheader_client_ca_file) if f):
        context.load_verify_locations(cafile=ca_file)  # clients' CA, and the front proxy's own
        context.verify_mode = ssl.CERT_OPTIONAL
    context.set_alpn_protocols(["http/1.1"])
    return context


@dataclass(frozen=True)
class _PublicTLS(grpcutil.TLSFiles):
    """The public gRPC port's TLS: the HTTPS serving pair, client certificates from the client or front-proxy CA."""

    ca_files: tuple[str, ...] = ()

    def read(self) -> tuple[bytes, bytes, bytes]:
        """(certificate, key, the CA bundles concatenated); raises OSError if a file is missing."""
        cas = b"".join(Path(f).read_bytes().rstrip(b"\n") + b"\n" for f in self.ca_files)
        return Path(self.cert_file).read_bytes(), Path(self.key_file).read_bytes(), cas


async def start_grpc_api(args: argparse.Namespace, handler: Handler, app: web.Application
                         ) -> tuple[grpc.aio.Server, Any] | None:
    """Serve ``kapi.api.v1.Resources`` (with health and reflection) on ``--grpc-listen-address``; None if unset.

    Open to every caller the TLS layer accepts (``allowed_callers=None``):
    each call is authenticated and authorized by the handler chain.

    TLS as the HTTPS port: ``--tls-cert-file``, and a client certificate
    required, verified against ``--client-ca-file`` and
    ``--requestheader-client-ca-file`` (Envoy presents ``front-proxy-client``);
    without ``--tls-cert-file`` (unit tests) plain. Returns (server, health servicer).
    """
    if not args.grpc_listen_address:
        return None
    ca_files = tuple(dict.fromkeys(f for f in (args.client_ca_file, args.requestheader_client_ca_file) if f))
    tls = _PublicTLS(args.tls_cert_file, args.tls_private_key_file, ca_files[0], ca_files) \
        if args.tls_cert_file and ca_files else None
    # Any caller the TLS layer accepted: access control is the chain's, per call, as for HTTPS.
    server, health, port = grpcutil.make_server(args.grpc_listen_address, tls, allowed_callers=None,
                                                services=(grpcapi.SERVICE_NAME,))
    grpcapi.api_pb2_grpc.add_ResourcesServicer_to_server(grpcapi.ResourcesServicer(handler, app), server)
    await server.start()
    log.info("gateway serving the gRPC API on %s (port %d)", args.grpc_listen_address, port)
    return server, health


def front_proxy_cas(ca_file: str) -> tuple[bytes, ...]:
    """The certificates (DER) of ``--requestheader-client-ca-file``, a PEM bundle; () when unset."""
    if not ca_file:
        return ()
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    return tuple(c.public_bytes(Encoding.DER) for c in x509.load_pem_x509_certificates(Path(ca_file).read_bytes()))


def _namespace(name: str) -> bytes:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return jsonutil.dumps({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": now,
                     "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"},
    })


async def _create_absent(storage: Any, key: storage_pb2.ResourceKey, obj: bytes, what: str, stop: asyncio.Event,
                         before: Callable[[], Awaitable[None]] | None = None) -> bool:
    """Create ``obj`` at ``key`` unless it exists, retrying every 0.5 s while storage refuses (logged as ``what``).

    ``before`` runs before each attempt (a reservation the object needs). Returns True once the object exists
    (created now or before), False if ``stop`` was set first.
    """
    while not stop.is_set():
        try:
            if before is not None:
                await before()
            await grpcutil.call("storage", storage.Create, storage_pb2.CreateRequest(key=key, object=obj), timeout=5)
            return True
        except errors.StatusError as err:
            if err.reason == "AlreadyExists":
                return True
            log.info("waiting for storage to create %s: %s", what, err.message)
            await asyncio.sleep(0.5)
    return False


async def ensure_system_namespaces(storage: Any, stop: asyncio.Event) -> None:
    """Create default, kube-system, kube-public and kube-node-lease if absent (kube's system namespaces controller).

    Retries while storage is unavailable; returns once all exist or ``stop`` is set.
    """
    for name in SYSTEM_NAMESPACES:
        if not await _create_absent(storage, storage_pb2.ResourceKey(resource="namespaces", name=name),
                                    _namespace(name), f"namespace {name}", stop):
            return


async def ensure_system_priority_classes(storage: Any, stop: asyncio.Event) -> None:
    """Create ``system-node-critical`` and ``system-cluster-critical`` if absent (kube's
    ``scheduling/bootstrap-system-priority-classes`` post-start hook; values from
    :data:`kapi.kinds.scheduling.SYSTEM_PRIORITY_CLASSES`). Existing objects are kept; retries while storage is
    unavailable, returns once both exist or ``stop`` is set."""
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    for name, (value, _) in scheduling.SYSTEM_PRIORITY_CLASSES.items():
        obj = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
               "metadata": {"name": name, "uid": str(uuid.uuid4()), "creationTimestamp": now},
               "value": value, "description": scheduling.SYSTEM_PRIORITY_CLASS_DESCRIPTIONS[name],
               "preemptionPolicy": "PreemptLowerPriority"}
        key = storage_pb2.ResourceKey(group=scheduling.GROUP, resource="priorityclasses", name=name)
        if not await _create_absent(storage, key, jsonutil.dumps(obj), f"PriorityClass {name}", stop):
            return


async def ensure_kubernetes_service(backends: Backends, port: int, stop: asyncio.Event) -> None:
    """Create the ``kubernetes`` Service in ``default`` with the range's first IP, its Endpoints and EndpointSlice.

    As kube's bootstrap controller: ClusterIP Service ``kubernetes`` (port
    443 "https" -> the serving port), label ``component=apiserver``,
    ``provider=kubernetes``; the first clusterIP is reserved in the shared
    allocation so no other Service gets it. The endpoint reconciler's Endpoints (label
    ``endpointslice.kubernetes.io/skip-mirror``) and EndpointSlice ``kubernetes`` (label
    ``kubernetes.io/service-name``, one ready IPv4 endpoint, port ``https``) name the serving port.
    Existing objects are kept.
    """
    assert backends.services is not None
    ips = backends.services.ips
    first = ips.range.value(ips.range.first)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    labels = {"component": "apiserver", "provider": "kubernetes"}
    svc = {"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "kubernetes", "namespace": "default", "uid": str(uuid.uuid4()),
                        "creationTimestamp": now, "labels": labels},
           "spec": {"type": "ClusterIP", "clusterIP": first, "clusterIPs": [first], "ipFamilies": ["IPv4"],
                    "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                    "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port or 6443}]},
           "status": {"loadBalancer": {}}}
    endpoints = {"apiVersion": "v1", "kind": "Endpoints",
                 "metadata": {"name": "kubernetes", "namespace": "default", "uid": str(uuid.uuid4()),
                              "creationTimestamp": now, "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
                 "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                              "ports": [{"name": "https", "port": port or 6443, "protocol": "TCP"}]}]}
    # the reconciler's EndpointSlice (pkg/controlplane/reconcilers/endpointsadapter.go updateEndpointSlice)
    endpoint_slice = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                      "metadata": {"name": "kubernetes", "namespace": "default", "uid": str(uuid.uuid4()),
                                   "generation": 1, "creationTimestamp": now,
                                   "labels": {"kubernetes.io/service-name": "kubernetes"}},
                      "addressType": "IPv4",
                      "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}],
                      "ports": [{"name": "https", "protocol": "TCP", "port": port or 6443}]}

    async def reserve_first_ip() -> None:
        with contextlib.suppress(ValueError):  # already reserved (another gateway, or a restart)
            await ips.allocate(first, timeout=5)

    for group, resource, obj, before in (("", "services", svc, reserve_first_ip), ("", "endpoints", endpoints, None),
                                         (DISCOVERY_GROUP, "endpointslices", endpoint_slice, None)):
        key = storage_pb2.ResourceKey(group=group, resource=resource, namespace="default", name="kubernetes")
        if not await _create_absent(backends.storage, key, jsonutil.dumps(obj), f"the kubernetes {resource}", stop,
                                    before):
            return
    key = storage_pb2.ResourceKey(group=networking.GROUP, resource="ipaddresses", name=first)
    await _create_absent(backends.storage, key, jsonutil.dumps(ipaddresses.ip_address_object(
        first, "default", "kubernetes", now)), f"IPAddress {first}", stop)


async def ensure_default_service_cidr(storage: Any, cidr: str, stop: asyncio.Event) -> None:
    """Create the ``kubernetes`` ServiceCIDR holding ``cidr`` (``--service-cluster-ip-range``) with condition
    Ready True, if absent (kube's default ServiceCIDR controller, ``pkg/controlplane/controller/defaultservicecidr``;
    an existing one is kept). Retries while storage is unavailable; returns once it exists or ``stop`` is set."""
    key = storage_pb2.ResourceKey(group=networking.GROUP, resource="servicecidrs",
                                  name=ipaddresses.DEFAULT_SERVICE_CIDR)
    await _create_absent(storage, key, jsonutil.dumps(ipaddresses.default_service_cidr(cidr)),
                         "the default ServiceCIDR", stop)


DISCOVERY_GROUP = "discovery.k8s.io"  # the kubernetes Service's EndpointSlice

DEFAULTS_INTERVAL = 10.0  # seconds; kube's default ServiceCIDR controller and kubernetes Service reconcile period


async def keep_defaults(backends: Backends, port: int, stop: asyncio.Event,
                        interval: float = DEFAULTS_INTERVAL) -> None:
    """Every ``interval`` seconds until ``stop``: re-create the default ServiceCIDR ``kubernetes`` and the
    ``kubernetes`` Service (with its Endpoints and IPAddress) when they were deleted, and its EndpointSlice when
    that was, as kube-apiserver's default ServiceCIDR controller (``sync`` every 10 s), its bootstrap controller's
    RunKubernetesService loop and its endpoint reconciler do. Existing objects are left as they are but for the
    default ServiceCIDR's status (:func:`ipaddresses.sync_default_service_cidr`); a storage error waits for the
    next round."""
    assert backends.services is not None
    cidr_key = storage_pb2.ResourceKey(group=networking.GROUP, resource="servicecidrs",
                                       name=ipaddresses.DEFAULT_SERVICE_CIDR)
    service_key = storage_pb2.ResourceKey(resource="services", namespace="default", name="kubernetes")
    slice_key = storage_pb2.ResourceKey(group=DISCOVERY_GROUP, resource="endpointslices", namespace="default",
                                        name="kubernetes")
    cidr = backends.services.ips.range.text
    reported: set[str] = set()  # what the default ServiceCIDR's status sync reported (once each)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(interval):
                await stop.wait()
        if stop.is_set():
            return
        for key, ensure in ((cidr_key, lambda: ensure_default_service_cidr(backends.storage, cidr, stop)),
                            (service_key, lambda: ensure_kubernetes_service(backends, port, stop)),
                            (slice_key, lambda: ensure_kubernetes_service(backends, port, stop))):
            try:
                await grpcutil.call("storage", backends.storage.Get, storage_pb2.GetRequest(key=key), timeout=5)
            except errors.StatusError as err:
                if err.reason == "NotFound":
                    log.info("re-creating %s/%s", key.resource, key.name)
                    await ensure()
        with contextlib.suppress(errors.StatusError):  # kube's syncStatus: Ready re-applied, mismatches reported
            await ipaddresses.sync_default_service_cidr(backends.storage, [cidr], reported, 5)


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
    storage_channel = chan(args.storage_address)
    backends = Backends(
        config=Config(frozenset(n.strip() for n in args.requestheader_allowed_names.split(",") if n.strip()),
                      args.request_timeout, front_proxy_cas(args.requestheader_client_ca_file)),
        authn=AuthnClient(chan(args.authn_address)), authz=AuthzClient(chan(args.authz_address)),
        admission=AdmissionClient.open(chan(args.admission_address), args.admission_address, tls),  # Call streams
        storage=storageclient.open_client(storage_channel, args.storage_address, tls),  # a Call stream per replica
        flowcontrol=FlowControlClient(flow_channel, fallback, args.apf_seat_leases),
    )
    backends.storage_health = healthz.StorageHealth(storage_channel)  # etcd's health as storage sees it
    backends.storage_health.start()
    backends.services = ipallocator.ServiceAllocations(
        ipallocator.Allocator(backends.storage, ipallocator.ip_range(args.service_cluster_ip_range)),
        ipallocator.Allocator(backends.storage, ipallocator.port_range(args.service_node_port_range)))
    backends.flowcontrol.start()
    backends.storage.start()
    backends.admission.start()
    backends.post_start_hooks.update((healthz.HOOK_INFORMERS, healthz.HOOK_APF, healthz.HOOK_APF_BOOTSTRAP))
    backends.audit = audit.from_args(args)
    app = web.Application(client_max_size=limits.MAX_BODY_BYTES + 1)
    handler = chain.install(app, backends)  # the handler chain and its response hooks (services/gateway/chain.py)
    # Bodies are read as sent: kube-apiserver decodes no request Content-Encoding (gzip, br), so neither does kapi
    # (aiohttp's decompression answered a garbage gzip body with a 500 and br with a text 400).
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=10.0,
                           **PARSER_LIMITS, auto_decompress=False)
    await runner.setup()
    site = web.TCPSite(runner, args.bind_address, args.secure_port, ssl_context=ssl_context(args),
                       backlog=1024, reuse_address=True)
    await site.start()
    port = runner.addresses[0][1]
    public_grpc = await start_grpc_api(args, handler, app)
    if args.port_file:
        Path(args.port_file).write_text(str(port))
    log.info("gateway serving on %s:%s", args.bind_address, port)
    await ensure_system_namespaces(backends.storage, stop)
    backends.post_start_hooks.add(healthz.HOOK_NAMESPACES)
    await ensure_default_service_cidr(backends.storage, backends.services.ips.range.text, stop)
    await ensure_kubernetes_service(backends, args.secure_port, stop)
    backends.post_start_hooks.add(healthz.HOOK_BOOTSTRAP)
    await ensure_system_priority_classes(backends.storage, stop)
    backends.post_start_hooks.add(healthz.HOOK_PRIORITY_CLASSES)
    backends.custom_resources = dynamic.CustomResourceRegistry(backends.storage)
    if not await backends.custom_resources.wait_synced(5.0):
        log.warning("CustomResourceDefinitions not listed after 5s; serving built-in resources meanwhile")
    backends.post_start_hooks.add(healthz.HOOK_CRD_SYNCED)  # informer-sync of /readyz waits for the list itself
    backends.aggregator = aggregation.Aggregator(backends.storage, args.proxy_client_cert_file,
                                                 args.proxy_client_key_file)
    backends.aggregator.start()  # Local APIServices themselves: the controllers' autoregister loop
    backends.post_start_hooks.add(healthz.HOOK_AGGREGATOR)
    trust = authtrust.TrustPublisher(backends.storage, authtrust.AuthenticationInfo.from_flags(
        args.client_ca_file, args.requestheader_client_ca_file, args.requestheader_allowed_names,
        args.requestheader_username_headers, args.requestheader_group_headers,
        args.requestheader_extra_headers_prefix))
    trust.start()
    backends.post_start_hooks.add(healthz.HOOK_AUTH_INFO)
    backends.ready = True
    if public_grpc is not None:
        grpcutil.set_serving(public_grpc[1], (grpcapi.SERVICE_NAME,))
    defaults = asyncio.create_task(keep_defaults(backends, args.secure_port, stop))
    await stop.wait()
    defaults.cancel()
    if public_grpc is not None:
        grpcutil.set_serving(public_grpc[1], (grpcapi.SERVICE_NAME,), serving=False)
    log.info("shutting down: /readyz fails for up to %.1fs, then watches end", args.shutdown_delay_duration)
    backends.ready, backends.shutting_down = False, True
    waited = await health_filter.drain(backends, args.shutdown_delay_duration)
    log.info("drained after %.1fs: closing %d watches, finishing in-flight requests", waited, len(backends.watches))

    async def close_watches() -> None:  # also those a proxy still started while this gateway drained
        while True:
            for call in list(backends.watches):
                call.cancel()
            await asyncio.sleep(0.1)

    closer = asyncio.create_task(close_watches())
    if public_grpc is not None:  # before the application's cleanup closes the audit backends its calls use
        await public_grpc[0].stop(10.0)
    await runner.cleanup()
    closer.cancel()
    if backends.custom_resources is not None:
        await backends.custom_resources.stop()
    await trust.stop()
    if backends.aggregator is not None:
        await backends.aggregator.stop()
    await backends.flowcontrol.close()
    await backends.storage_health.close()
    await backends.storage.close()
    await backends.admission.close()
    for channel in channels:
        with contextlib.suppress(Exception):
            await channel.close()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``kapi gateway``; returns the exit code."""
    args = flags.parse(flags.GATEWAY, argv)
    grpcutil.configure_logging(args.log_level)
    grpcutil.run(lambda stop: serve(args, stop))
    return 0
