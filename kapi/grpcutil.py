"""gRPC plumbing shared by every service: mutual TLS, health, channels, serving.

Internal gRPC is mutual TLS with a certificate per service issued by the
cluster CA (docs/architecture.md, "Failure policy"). A server built by :func:`make_server`
requires a client certificate from that CA, and its :class:`CallerInterceptor`
admits to every RPC only the callers whose certificate common name
(``kapi-gateway``, ``kapi-authz`` ...; :func:`peer_identity`) is in the
server's ``allowed_callers`` (each service's ``--allowed-callers``): anyone
else gets PERMISSION_DENIED with a 403 Forbidden Status, whatever the RPC, so
no RPC can forget the check. The standard gRPC health protocol
(grpc.health.v1) and server reflection (grpc.reflection.v1alpha, so
``grpcurl list`` works) are on every server and open to any caller the TLS
layer accepted (docs/grpc-services.md). Without TLS files (unit tests only),
plain connections are used and there are no identities to check.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from kapi import errors, observability
from kapi.flags import SERVICES

log = logging.getLogger(__name__)

# Large objects (Secrets, ConfigMaps up to 1 MiB of data) plus list pages.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# Metadata a call may receive: errors travel as a Status in trailing metadata (kapi.errors), and one quoting
# user input is as large as the input (gRPC's default 8 KiB soft / 16 KiB hard limit made those a 429).
MAX_METADATA_BYTES = 16 * 1024 * 1024
_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_metadata_size", MAX_METADATA_BYTES),
    ("grpc.absolute_max_metadata_size", MAX_METADATA_BYTES),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
]
# Reconnect backoff of client channels (gRPC's connection-backoff.md: the next attempt after
# min(initial * 1.6^n, max) ms, jittered by +-20%). gRPC's defaults (1 s initial, 120 s max) left the gateways'
# channels in backoff 1.4-2.6 s after authn or admission came back, so a restart showed twice its length in 503s.
# A cap of 150 ms reaches a restarted peer within 180 ms (measured: tests/test_grpcutil.py, docs/benchmarks.md),
# and a dead peer sees at most about 7 connection attempts per second per channel: a refused connect on the
# same host, no storm. The connect timeout of one attempt (``min_reconnect_backoff_ms``, default 20 s) is 2 s:
# long enough for a TLS handshake with a busy peer, short enough to retry a peer that accepts but does not answer.
# RPCs stay fail-fast (no wait_for_ready): while a peer is down a request gets its 503 at once, as kube's
# failure policy wants, instead of waiting out its deadline.
RECONNECT_BACKOFF_MS = {"initial": 100, "max": 150, "connect_timeout": 2_000}
_CHANNEL_OPTIONS = [
    ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS["initial"]),
    ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MS["max"]),
    ("grpc.min_reconnect_backoff_ms", RECONNECT_BACKOFF_MS["connect_timeout"]),
]
# Servers accept the clients' keepalive pings (every 20 s, also on idle channels). gRPC's default server
# policy allows one ping per 5 minutes and answers more with GOAWAY "too_many_pings", which broke the
# long-lived streams (flowcontrol dispatch, authz policy revisions) about a minute after start.
_SERVER_OPTIONS = [
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 0),
]


@dataclass(frozen=True)
class TLSFiles:
    """PEM files of one service's gRPC identity: its certificate, key, and the cluster CA (paths)."""

    cert_file: str
    key_file: str
    ca_file: str

    def read(self) -> tuple[bytes, bytes, bytes]:
        """(certificate, key, CA) bytes; raises OSError if a file is missing."""
        return Path(self.cert_file).read_bytes(), Path(self.key_file).read_bytes(), Path(self.ca_file).read_bytes()


def tls_from_args(args: object) -> TLSFiles | None:
    """TLS files from parsed ``--grpc-cert-file/--grpc-key-file/--grpc-ca-file`` flags, or None if unset."""
    cert = getattr(args, "grpc_cert_file", "")
    key = getattr(args, "grpc_key_file", "")
    ca = getattr(args, "grpc_ca_file", "")
    if cert and key and ca:
        return TLSFiles(cert, key, ca)
    return None


class HealthServicer(health.HealthServicer):
    """grpc_health's servicer with ``Check`` and ``Watch`` as coroutines of the aio server's loop.

    The library's ``Watch`` blocks a thread of the aio server's executor per
    stream until the client goes away; a gateway's Watch of storage's health
    (services/gateway/healthz.py) then kept a stopped storage process alive
    (asyncio.run waits for that thread). These end with the server. ``set``
    stays synchronous (call it on the server's loop).
    """

    def __init__(self) -> None:
        super().__init__()
        self._changed: set[asyncio.Event] = set()

    def set(self, service: str, status: health_pb2.HealthCheckResponse.ServingStatus) -> None:
        """Set ``service``'s status ("" = the whole server) and wake every Watch."""
        super().set(service, status)
        for event in self._changed:
            event.set()

    async def Check(self, request: health_pb2.HealthCheckRequest,  # type: ignore[override]  # noqa: N802
                    context: grpc.aio.ServicerContext) -> health_pb2.HealthCheckResponse:
        """The status of ``request.service``; NOT_FOUND for a name never set."""
        status = self._server_status.get(request.service)
        if status is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return health_pb2.HealthCheckResponse(status=status)

    async def Watch(self, request: health_pb2.HealthCheckRequest,  # type: ignore[override]  # noqa: N802
                    context: grpc.aio.ServicerContext) -> AsyncIterator[health_pb2.HealthCheckResponse]:
        """The status of ``request.service`` now (SERVICE_UNKNOWN if never set) and after every change."""
        changed = asyncio.Event()
        self._changed.add(changed)
        last = None
        try:
            while True:
                status = self._server_status.get(request.service, health_pb2.HealthCheckResponse.SERVICE_UNKNOWN)
                if status != last:
                    last = status
                    yield health_pb2.HealthCheckResponse(status=status)
                await changed.wait()
                changed.clear()
        finally:
            self._changed.discard(changed)


# kapi's own gRPC identities (kapi.local.pki issues ``kapi-<service>`` per service): the callers a server admits
# when it does not say (make_server), and the only ones storage may admit (services/storage/server.py).
SERVICE_IDENTITIES = frozenset(f"kapi-{s}" for s in SERVICES)
# Services every caller the TLS layer accepted may use, on every server: health (launchers, compose, Envoy-less
# probes) and reflection (grpcurl). Both say only what the server serves, never what it stores.
OPEN_SERVICES = frozenset({
    health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
    reflection.SERVICE_NAME,  # grpc.reflection.v1alpha.ServerReflection
})


def _caller(context: grpc.aio.ServicerContext) -> str | None:
    """The caller's certificate CN ("" if it has none), or None on a plaintext connection (no identities: its
    auth context has no certificate and transport security type "insecure"). One read of the auth context
    (about 9 us of CPU, measured: the dict grpc builds per call)."""
    auth = context.auth_context()
    names = auth.get("x509_common_name") or []
    if names:
        return str(names[0].decode())
    return None if (auth.get("transport_security_type") or []) in ([], [b"insecure"]) else ""


def _refusal(name: str, method: str) -> errors.StatusError:
    """403 Forbidden for caller ``name`` on ``method`` (kube's non-resource wording: ``User "x" cannot ...``)."""
    return errors.forbidden_message(f'forbidden: User "{name}" cannot call "{method}": the service\'s '
                                    "--allowed-callers does not include it")


class CallerInterceptor(grpc.aio.ServerInterceptor):
    """Refuses, on every RPC of the server but :data:`OPEN_SERVICES`, callers whose certificate CN is not in
    ``allowed`` (None: any caller the TLS layer accepted).

    A refused call ends with PERMISSION_DENIED and a 403 Forbidden ``Status`` in
    its trailers (:func:`kapi.errors.abort`) before the servicer runs; a stream
    is checked once, when it opens. Plaintext servers (unit tests) have no
    identities and admit everyone. Installed last (innermost) by
    :func:`make_server`, so a refusal is counted in ``grpc_server_handled_total``
    with code PERMISSION_DENIED.
    """

    def __init__(self, allowed: frozenset[str] | None) -> None:
        self.allowed = allowed
        # method -> (the server's handler, it wrapped): the same handler comes back for every call of a method,
        # so it is wrapped once (about 3 us per call saved), not per call; a different handler is wrapped anew.
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(self, continuation: Callable[..., Any],
                                details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        """The method's handler, wrapped in the caller check unless the method is open (all four kinds)."""
        handler = await continuation(details)
        method: str = details.method  # type: ignore[attr-defined]
        if handler is None or self.allowed is None:
            return handler
        known = self._wrapped.get(method)
        if known is not None and known[0] is handler:
            return known[1]
        wrapped = self._wrap(handler, method)
        if len(self._wrapped) >= 1024:  # methods are few; unknown ones have no handler and never get here
            self._wrapped.clear()
        self._wrapped[method] = (handler, wrapped)
        return wrapped

    def _wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        if method.lstrip("/").rpartition("/")[0] in OPEN_SERVICES:
            return handler

        async def check(context: grpc.aio.ServicerContext) -> None:
            allowed = self.allowed  # read per call, as when the handler was wrapped per call
            name = _caller(context)
            if name is not None and allowed is not None and name not in allowed:
                log.info("refused %s from %r (not in --allowed-callers)", method, name)
                await errors.abort(context, _refusal(name, method))

        for kind, factory in (("unary_unary", grpc.unary_unary_rpc_method_handler),
                              ("unary_stream", grpc.unary_stream_rpc_method_handler),
                              ("stream_unary", grpc.stream_unary_rpc_method_handler),
                              ("stream_stream", grpc.stream_stream_rpc_method_handler)):
            behavior = getattr(handler, kind)
            if behavior is not None:
                return factory(_guarded(behavior, check), request_deserializer=handler.request_deserializer,
                               response_serializer=handler.response_serializer)
        return handler


def _guarded(behavior: Callable[..., Any], check: Callable[[grpc.aio.ServicerContext], Awaitable[None]]
             ) -> Callable[..., Any]:
    """``behavior`` (a servicer method: coroutine or async generator) run only after ``check(context)``."""
    if inspect.isasyncgenfunction(behavior):
        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            await check(context)
            async for item in behavior(request, context):
                yield item
        return stream

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await check(context)
        result = behavior(request, context)
        return await result if inspect.isawaitable(result) else result
    return call


def allowed_callers(args: object, *, services_only: bool = False) -> frozenset[str]:
    """The certificate CNs of a service's ``--allowed-callers`` flag (comma-separated; "" = nobody but the open
    health and reflection services).

    With ``services_only`` (storage, which does no access control of its own)
    every name must be one of :data:`SERVICE_IDENTITIES`; raises ValueError
    naming the others.
    """
    names = frozenset(n.strip() for n in str(getattr(args, "allowed_callers", "") or "").split(",") if n.strip())
    if services_only and not names <= SERVICE_IDENTITIES:
        others = ", ".join(sorted(names - SERVICE_IDENTITIES))
        raise ValueError(f"storage answers only kapi's own service identities "
                         f"({', '.join(sorted(SERVICE_IDENTITIES))}), not {others}")
    return names


def make_server(address: str, tls: TLSFiles | None, *, allowed_callers: frozenset[str] | None = SERVICE_IDENTITIES,
                services: Sequence[str] = ()) -> tuple[grpc.aio.Server, health.HealthServicer, int]:
    """An aio server listening on ``address`` (host:port; port 0 = any) with health and reflection registered.

    ``allowed_callers`` are the certificate CNs that may call its RPCs (a
    :class:`CallerInterceptor` refuses anyone else with PERMISSION_DENIED);
    default: kapi's own service identities (:data:`SERVICE_IDENTITIES`), so a
    server that forgets to say fails closed; None = any caller with a
    certificate from the CA (a public API). ``services`` are the full names
    (``kapi.storage.v1.Storage``) the caller will add, listed by reflection
    next to health and reflection themselves.

    Returns (server, health servicer, bound port). The caller adds its
    servicers, sets health to SERVING, and starts the server.
    """
    # Last, so innermost: the metrics and tracing interceptors see a refusal as PERMISSION_DENIED.
    interceptors = [*observability.server_interceptors(), CallerInterceptor(allowed_callers)]
    server = grpc.aio.server(options=[*_OPTIONS, *_SERVER_OPTIONS], interceptors=interceptors)
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    _enable_reflection(server, [*services, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name])
    if tls is not None:
        cert, key, ca = tls.read()
        creds = grpc.ssl_server_credentials([(key, cert)], root_certificates=ca, require_client_auth=True)
        port = server.add_secure_port(address, creds)
    else:
        port = server.add_insecure_port(address)
    return server, health_servicer, port


def _enable_reflection(server: grpc.aio.Server, names: Sequence[str]) -> None:
    """Serve grpc.reflection.v1alpha (what grpcio-reflection implements; grpcurl falls back to it from v1) for
    ``names`` and the reflection service itself, from the default descriptor pool (``kapi_proto`` registers there)."""
    reflection.enable_server_reflection([*names, reflection.SERVICE_NAME], server)


def set_serving(health_servicer: health.HealthServicer, names: Iterable[str], serving: bool = True) -> None:
    """Mark the overall server ("") and each named service SERVING (or NOT_SERVING when ``serving`` is False)."""
    state = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
    for name in ("", *names):
        health_servicer.set(name, state)


async def start_serving(server: grpc.aio.Server, port: int, port_file: str = "") -> None:
    """Start ``server`` (servicers added, health set), then write its bound ``port`` to ``port_file`` if given.

    The file (``--port-file``; decimal text, no newline) appears only once the
    server accepts connections, so launchers and tests read it as "listening".
    """
    await server.start()
    if port_file:
        Path(port_file).write_text(str(port))


class Stoppable(Protocol):
    """A running gRPC server, or a service object owning one, stopped with a grace period."""

    async def stop(self, grace: float) -> None:
        """Stop serving, leaving in-flight RPCs ``grace`` seconds to finish; then release what it owns."""


async def serve_until(stop: asyncio.Event, running: Stoppable, grace: float) -> None:
    """Wait for ``stop`` (set by SIGTERM/SIGINT under :func:`run`), then stop ``running`` with ``grace`` seconds."""
    await stop.wait()
    await running.stop(grace)


def peer_identity(context: grpc.aio.ServicerContext) -> str:
    """The caller's certificate common name, or "" on an insecure connection."""
    auth = context.auth_context()
    names = auth.get("x509_common_name") or []
    return names[0].decode() if names else ""


async def require_peer(context: grpc.aio.ServicerContext, allowed: frozenset[str] | None) -> None:
    """Abort with 403 unless the caller's certificate CN is in ``allowed`` (None = anyone).

    For a check narrower than the server's :class:`CallerInterceptor` on one
    RPC (authn's token signing). Insecure servers (tests without TLS) have no
    identities and accept all.
    """
    if allowed is None:
        return
    name = _caller(context)
    if name is not None and name not in allowed:
        await errors.abort(context, errors.forbidden_message(f"service identity {name!r} may not call this service"))


def channel(addresses: str, tls: TLSFiles | None) -> grpc.aio.Channel:
    """A persistent channel to ``addresses`` (comma-separated host:port list), round robin over them.

    Several addresses use the ``ipv4:`` target form with the round_robin
    load-balancing policy, so calls spread over every replica. A peer that
    restarts is reconnected within about 180 ms (``RECONNECT_BACKOFF_MS``);
    calls while it is down fail at once with UNAVAILABLE.
    """
    hosts = [a.strip() for a in addresses.split(",") if a.strip()]
    if not hosts:
        raise ValueError("no address given")
    target = hosts[0] if len(hosts) == 1 else "ipv4:" + ",".join(hosts)
    options = [*_OPTIONS, *_CHANNEL_OPTIONS, ("grpc.lb_policy_name", "round_robin")]
    interceptors = observability.client_interceptors() or None  # none by default (kapi/observability.py)
    if tls is None:
        return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)
    cert, key, ca = tls.read()
    creds = grpc.ssl_channel_credentials(root_certificates=ca, private_key=key, certificate_chain=cert)
    # Service certificates carry SANs localhost/127.0.0.1 and the service name.
    options.append(("grpc.ssl_target_name_override", "localhost"))
    return grpc.aio.secure_channel(target, creds, options=options, interceptors=interceptors)


async def wait_ready(channel: grpc.aio.Channel, seconds: float) -> None:
    """Sleep ``seconds``, or less if ``channel`` turns READY meanwhile (it is asked to connect).

    For the retry loop of a long-lived stream: a peer that is back is used as
    soon as the channel has reconnected (on its own backoff, ``RECONNECT_BACKOFF_MS``),
    without a stream attempt per retry while it is away. A channel already
    READY at the start sleeps the whole time: the stream failed on a live
    connection, and retrying at once would spin.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    state = channel.get_state(try_to_connect=True)
    if state == grpc.ChannelConnectivity.READY:
        await asyncio.sleep(seconds)
        return
    while state != grpc.ChannelConnectivity.READY:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(remaining):
                await channel.wait_for_state_change(state)
        state = channel.get_state(try_to_connect=True)


async def stream_opened(call: Any) -> None:
    """Return once a just-started streaming ``call`` is up: its server sent initial metadata on a call still
    running (the server must send it at once, ``context.send_initial_metadata(())``). Raises ConnectionError
    if the call failed instead (a call that could not connect also "returns" empty metadata, already done)."""
    await call.initial_metadata()
    if call.done():
        raise ConnectionError(f"no stream: {await call.code()}")


async def keep_stream(name: str, channel: grpc.aio.Channel | None, session: Callable[[Callable[[], None]],
                      Awaitable[None]], *, retry: float = 0.1, retry_max: float = 5.0,
                      logger: logging.Logger | None = None, while_broken: str = "") -> None:
    """Keep one long-lived stream to the ``name`` service up, forever (cancel the task to stop).

    ``session(connected)`` opens the stream, calls ``connected()`` once it
    is up (:func:`stream_opened`) and reads it until it ends; a return or a
    ``grpc.RpcError`` / ``ConnectionError`` counts as broken (anything else
    propagates). One log line when it breaks, one when it is back. Between
    attempts it waits ``retry`` seconds, doubling per failed attempt up to
    ``retry_max``, or less once ``channel`` is READY (:func:`wait_ready`), so
    a peer that is back is used within about 200 ms without a stream attempt
    every 100 ms while it is away. The lines go to ``logger`` (default this
    module's); ``while_broken`` is appended to the "broke" line (what the
    caller does meanwhile).
    """
    loop = asyncio.get_running_loop()
    backoff, broken_since = retry, 0.0
    out = logger or log

    def connected() -> None:
        nonlocal backoff, broken_since
        backoff = retry
        if broken_since:
            out.info("%s stream back after %.1fs", name, loop.time() - broken_since)
            broken_since = 0.0
        else:
            out.info("%s stream connected", name)

    while True:
        try:
            await session(connected)
            raise ConnectionError(f"the {name} service ended the stream")
        except (grpc.RpcError, ConnectionError) as exc:
            if not broken_since:
                broken_since = loop.time()
                out.warning("%s stream broke (%s)%s", name, exc.code() if isinstance(exc, grpc.RpcError) else exc,
                            while_broken)
            else:
                out.debug("%s stream still down: %s", name, exc)
        if channel is not None:
            await wait_ready(channel, backoff)
        else:
            await asyncio.sleep(backoff)
        backoff = min(backoff * 2, retry_max)


# Where the current request (a task's context) adds the seconds each unary call took, by peer service name;
# unset outside a request. The gateway's Server-Timing filter sets it (services/gateway/filters/servertiming.py).
CALL_TIMINGS: contextvars.ContextVar[dict[str, float]] = contextvars.ContextVar("kapi_call_timings")


async def call(service: str, rpc: Callable[..., Awaitable[object]], request: object, *, timeout: float,
               metadata: tuple[tuple[str, str], ...] | None = None) -> object:
    """Invoke one unary RPC, turning any gRPC failure into a :class:`errors.StatusError`.

    ``timeout`` is in seconds (the RPC deadline). ``service`` names the peer in
    transport-failure messages (503/504). The call's duration (seconds) is
    added under ``service`` to :data:`CALL_TIMINGS` when a request set it.
    """
    timings = CALL_TIMINGS.get(None)
    start = time.perf_counter() if timings is not None else 0.0
    try:
        return await rpc(request, timeout=timeout, metadata=metadata)
    except grpc.RpcError as exc:
        raise errors.from_rpc_error(exc, service) from None
    finally:
        if timings is not None:
            timings[service] = timings.get(service, 0.0) + time.perf_counter() - start


def configure_logging(level: str = "INFO") -> None:
    """One log format for every kapi process on stderr: text (time, level, logger, [audit ID] message) or JSON.

    The format is ``--log-format`` as read by :func:`kapi.observability.setup`.
    """
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), handlers=[observability.log_handler()])


def run(main: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """Run ``main(stop)`` on uvloop; SIGTERM or SIGINT sets ``stop`` for a graceful shutdown."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - uvloop is a dependency; keep running without it
        pass

    async def _wrapper() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await main(stop)

    asyncio.run(_wrapper())


_Item = TypeVar("_Item")


async def batches(queue: asyncio.Queue[_Item | None], limit: int = 512) -> AsyncIterator[list[_Item]]:
    """Lists of the items put on ``queue``: each waits for one item, then takes what else is queued (<= ``limit``).

    For a gRPC stream whose per-message cost dominates: while one write is in
    flight the next items pile up and go out together, so a busy stream makes
    few writes and an idle one adds no delay. A ``None`` on the queue ends the
    iteration (items before it are yielded first).
    """
    while True:
        item = await queue.get()
        if item is None:
            return
        batch = [item]
        end = False
        while len(batch) < limit and not queue.empty():
            more = queue.get_nowait()
            if more is None:
                end = True
                break
            batch.append(more)
        yield batch
        if end:
            return


async def shutdown(server: grpc.aio.Server, grace: float, tasks: Iterable[asyncio.Task[None]],
                   channel: grpc.aio.Channel | None = None) -> None:
    """Stop a service: ``server`` with ``grace`` seconds for in-flight RPCs, then cancel and await its background
    ``tasks`` (their errors are dropped: the service is going away), then close its client ``channel``."""
    await server.stop(grace)
    pending = list(tasks)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    if channel is not None:
        await channel.close()
