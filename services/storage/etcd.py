"""A thin async etcd v3 client over the generated stubs (``kapi_proto.etcd``), grpc.aio only.

Only what the store needs: ranges (optionally at a revision, paginated),
create-if-absent, put-if-mod-revision, delete-if-mod-revision, compaction,
status, and watches (multiplexed over one shared stream, see
:mod:`services.storage.etcd_watch`). Every unary call has a deadline
(``timeout`` seconds, default 10). Failures become :class:`kapi.errors.StatusError`:
etcd unreachable -> 503 ServiceUnavailable (after retrying the other
endpoints and a short backoff), deadline -> 504 Timeout; a compacted or
future revision raises :class:`CompactedError` / :class:`FutureRevisionError`
so the store can word the 410/504 the way kube-apiserver does.

Several endpoints (``--etcd-servers``) get one channel each. Calls go to the
current endpoint; on UNAVAILABLE a read moves to the next one and retries,
a write retries only if the request never left (connection failure), as
etcd's clientv3 retry policy does for non-repeatable RPCs.

Every KV call is timed into ``etcd_request_duration_seconds`` (see
:mod:`services.storage.metrics`; ``type`` from :attr:`EtcdClient.request_type`)
and, when tracing is on (kapi/observability.py), runs in a client span
``etcd <operation>`` with ``db.system.name`` etcd, ``db.operation.name``,
``k8s.resource`` (the type), ``etcd.key``, ``etcd.range_end`` and
``etcd.revision`` (the response's header revision); a failure sets status
ERROR. With tracing off no span code runs.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import grpc

from kapi import errors, observability
from kapi.grpcutil import RECONNECT_BACKOFF_MS
from kapi_proto.etcd import rpc_pb2, rpc_pb2_grpc
from services.storage import metrics

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0  # seconds, per unary etcd call (including retries)
_RETRY_BACKOFF = (0.05, 0.2, 0.5)  # seconds between rounds over every endpoint
_MAX_MESSAGE = 256 * 1024 * 1024
# Above this many bytes an update does not carry the value twice (VALUE compare + put): etcd refuses requests over
# --max-request-bytes (1.5 MiB by default), which a ~750 KiB object already reaches that way.
VALUE_COMPARE_LIMIT = 512 * 1024
_CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", _MAX_MESSAGE),
    ("grpc.max_receive_message_length", _MAX_MESSAGE),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    # A restarted etcd member is reached again within ~180 ms, not after gRPC's default 1.4-2.6 s backoff.
    ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS["initial"]),
    ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MS["max"]),
    ("grpc.min_reconnect_backoff_ms", RECONNECT_BACKOFF_MS["connect_timeout"]),
]
# Fragments of transport errors meaning the request was never sent (safe to retry a write).
_NOT_SENT = ("failed to connect", "connection refused", "connections to all backends failing",
             "dns resolution failed", "no address", "name resolution")


class CompactedError(Exception):
    """etcd answered "required revision has been compacted" for a read at ``revision``."""

    def __init__(self, revision: int, compact_revision: int = 0):
        super().__init__(f"revision {revision} has been compacted")
        self.revision = revision
        self.compact_revision = compact_revision


class FutureRevisionError(Exception):
    """etcd answered "required revision is a future revision" for a read at ``revision``."""

    def __init__(self, revision: int):
        super().__init__(f"revision {revision} is a future revision")
        self.revision = revision


def parse_endpoints(servers: str) -> list[str]:
    """``--etcd-servers`` (comma-separated ``http://host:port`` URLs) -> ``host:port`` targets.

    Raises ValueError for an empty list or an ``https`` URL (client TLS to etcd is not configurable yet).
    """
    targets: list[str] = []
    for raw in servers.split(","):
        raw = raw.strip()
        if not raw:
            continue
        if "://" not in raw:
            targets.append(raw)
            continue
        url = urlsplit(raw)
        if url.scheme != "http":
            raise ValueError(f"unsupported etcd server URL {raw!r}: only http:// endpoints are supported")
        if not url.hostname or not url.port:
            raise ValueError(f"etcd server URL {raw!r} needs a host and a port")
        targets.append(url.netloc)
    if not targets:
        raise ValueError("no etcd servers given")
    return targets


def prefix_end(prefix: bytes) -> bytes:
    """The etcd ``range_end`` that covers every key starting with ``prefix`` (clientv3.GetPrefixRangeEnd)."""
    end = bytearray(prefix)
    for i in range(len(end) - 1, -1, -1):
        if end[i] < 0xFF:
            end[i] += 1
            return bytes(end[: i + 1])
    return b"\x00"


@dataclass
class _Endpoint:
    target: str
    channel: grpc.aio.Channel
    kv: rpc_pb2_grpc.KVStub
    watch: rpc_pb2_grpc.WatchStub
    maintenance: rpc_pb2_grpc.MaintenanceStub


def _precondition(key: bytes, mod_revision: int) -> rpc_pb2.Compare:
    """The Txn compare of a conditional write: ``key``'s mod revision is ``mod_revision``, or (0) ``key`` exists."""
    if mod_revision:
        return rpc_pb2.Compare(key=key, target=rpc_pb2.Compare.MOD, result=rpc_pb2.Compare.EQUAL,
                               mod_revision=mod_revision)
    return rpc_pb2.Compare(key=key, target=rpc_pb2.Compare.CREATE, result=rpc_pb2.Compare.GREATER, create_revision=0)


class EtcdClient:
    """Async etcd v3 client. ``endpoints`` are ``host:port`` targets (see :func:`parse_endpoints`).

    ``timeout`` is the deadline in seconds of each unary operation including retries.
    """

    def __init__(self, endpoints: Sequence[str], timeout: float = DEFAULT_TIMEOUT):
        if not endpoints:
            raise ValueError("no etcd endpoints")
        self.timeout = timeout
        self._endpoints: list[_Endpoint] = []
        for target in endpoints:
            channel = grpc.aio.insecure_channel(target, options=_CHANNEL_OPTIONS)
            self._endpoints.append(_Endpoint(target, channel, rpc_pb2_grpc.KVStub(channel),
                                             rpc_pb2_grpc.WatchStub(channel),
                                             rpc_pb2_grpc.MaintenanceStub(channel)))
        self._current = 0
        self.compaction_listeners: list[Callable[[int], None]] = []
        # etcd key -> the ``type`` label of etcd_request_duration_seconds (the Store sets KeySpace.type_of).
        self.request_type: Callable[[bytes], str] = _no_type
        # OpenTelemetry tracer of the etcd call spans; None = no spans (tracing off).
        self.tracer: Any = _tracer() if observability.STATE.tracing else None

    @property
    def targets(self) -> list[str]:
        """The ``host:port`` of every endpoint."""
        return [e.target for e in self._endpoints]

    def endpoint(self) -> _Endpoint:
        """The endpoint calls currently go to."""
        return self._endpoints[self._current]

    def rotate(self) -> None:
        """Move to the next endpoint (after a failure)."""
        self._current = (self._current + 1) % len(self._endpoints)

    async def close(self) -> None:
        """Close every channel."""
        for e in self._endpoints:
            await e.channel.close()

    # ------------------------------------------------------------ calls

    async def _call(self, service: str, method: str, request: Any, *, repeatable: bool, operation: str,
                    key: bytes, range_end: bytes = b"", revision: int = 0) -> Any:
        """One etcd call with retries (:meth:`_attempts`), timed into the metrics and traced when on."""
        type_ = self.request_type(key)
        start, failed = time.perf_counter(), True
        try:
            if self.tracer is None:
                result = await self._attempts(service, method, request, repeatable=repeatable, revision=revision)
            else:
                result = await self._traced(service, method, request, repeatable=repeatable, operation=operation,
                                            key=key, range_end=range_end, revision=revision, type_=type_)
            failed = False
            return result
        finally:
            metrics.observe_etcd(operation, type_, time.perf_counter() - start, failed)

    async def _traced(self, service: str, method: str, request: Any, *, repeatable: bool, operation: str,
                      key: bytes, range_end: bytes, revision: int, type_: str) -> Any:
        from opentelemetry.trace import SpanKind

        with self.tracer.start_as_current_span(f"etcd {operation}", kind=SpanKind.CLIENT) as span:
            span.set_attribute("db.system.name", "etcd")
            span.set_attribute("db.operation.name", operation)
            span.set_attribute("k8s.resource", type_)
            span.set_attribute("etcd.key", key.decode(errors="replace"))
            if range_end:
                span.set_attribute("etcd.range_end", range_end.decode(errors="replace"))
            result = await self._attempts(service, method, request, repeatable=repeatable, revision=revision)
            header = getattr(result, "header", None)
            if header is not None:
                span.set_attribute("etcd.revision", header.revision)
            return result

    async def _attempts(self, service: str, method: str, request: Any, *, repeatable: bool,
                        revision: int = 0) -> Any:
        deadline = time.monotonic() + self.timeout
        attempts = 0
        rounds = 0
        while True:
            ep = self.endpoint()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise errors.timeout(f"etcd did not answer within {self.timeout:g}s")
            try:
                return await getattr(getattr(ep, service), method)(request, timeout=remaining)
            except grpc.aio.AioRpcError as exc:
                code, details = exc.code(), exc.details() or ""
                if code == grpc.StatusCode.UNAVAILABLE and (repeatable or _not_sent(details)):
                    attempts += 1
                    self.rotate()
                    if attempts % len(self._endpoints) == 0:
                        if rounds >= len(_RETRY_BACKOFF):
                            raise errors.unavailable(f"etcd is unavailable ({ep.target}): {details}") from None
                        await asyncio.sleep(min(_RETRY_BACKOFF[rounds], max(0.0, deadline - time.monotonic())))
                        rounds += 1
                    continue
                raise _translate(exc, ep.target, revision, self.timeout) from None

    async def range(self, key: bytes, range_end: bytes = b"", *, revision: int = 0, limit: int = 0,
                    serializable: bool = False, count_only: bool = False, keys_only: bool = False,
                    ) -> rpc_pb2.RangeResponse:
        """Keys in ``[key, range_end)`` (or just ``key``) sorted by key, at ``revision`` (0 = latest).

        ``limit`` 0 = all; ``response.more`` tells whether keys remain and
        ``response.count`` counts every key in the range. ``serializable``
        allows a member-local (possibly stale) read. Raises CompactedError,
        FutureRevisionError, or StatusError (503/504/500).
        """
        request = rpc_pb2.RangeRequest(key=key, range_end=range_end, revision=revision, limit=limit,
                                       serializable=serializable, count_only=count_only, keys_only=keys_only)
        return await self._call("kv", "Range", request, repeatable=True, revision=revision,
                                operation="list" if range_end else "get", key=key, range_end=range_end)

    async def create(self, key: bytes, value: bytes) -> rpc_pb2.TxnResponse:
        """Put ``value`` at ``key`` if the key is absent (create_revision == 0).

        ``succeeded`` False means the key exists; ``header.revision`` is the new object's revision on success.
        """
        request = rpc_pb2.TxnRequest(
            compare=[rpc_pb2.Compare(key=key, target=rpc_pb2.Compare.CREATE, result=rpc_pb2.Compare.EQUAL,
                                     create_revision=0)],
            success=[rpc_pb2.RequestOp(request_put=rpc_pb2.PutRequest(key=key, value=value))],
        )
        return await self._call("kv", "Txn", request, repeatable=False, operation="create", key=key)

    async def update(self, key: bytes, value: bytes, mod_revision: int) -> rpc_pb2.TxnResponse:
        """Put ``value`` at an existing ``key`` whose mod revision is ``mod_revision`` (0 = any), unless unchanged.

        Success (``succeeded``) holds one nested TxnResponse: its ``succeeded``
        True means the stored value already equals ``value`` and nothing was
        written (kube's no-op update; the nested range holds the current
        pair), False means ``value`` was written at ``header.revision``.
        Failure holds a RangeResponse of the key (empty = absent -> 404,
        else the revision differs -> 409). A value over :data:`VALUE_COMPARE_LIMIT`
        bytes is compared by a read first instead of inside the transaction, so
        the request carries it once (etcd's request limit, 1.5 MiB by default).
        """
        same = rpc_pb2.Compare(key=key, target=rpc_pb2.Compare.VALUE, result=rpc_pb2.Compare.EQUAL, value=value)
        if len(value) > VALUE_COMPARE_LIMIT:  # large: find a no-op by reading, and send the value once
            current = await self.range(key)
            kv = current.kvs[0] if current.kvs else None
            if kv is not None and kv.value == value and mod_revision in (0, kv.mod_revision):
                inner = rpc_pb2.TxnResponse(header=current.header, succeeded=True,
                                            responses=[rpc_pb2.ResponseOp(response_range=current)])
                return rpc_pb2.TxnResponse(header=current.header, succeeded=True,
                                           responses=[rpc_pb2.ResponseOp(response_txn=inner)])
            # never true (no key has mod revision -1): the nested txn writes
            same = rpc_pb2.Compare(key=key, target=rpc_pb2.Compare.MOD, result=rpc_pb2.Compare.EQUAL, mod_revision=-1)
        unchanged = rpc_pb2.TxnRequest(
            compare=[same],
            success=[rpc_pb2.RequestOp(request_range=rpc_pb2.RangeRequest(key=key))],
            failure=[rpc_pb2.RequestOp(request_put=rpc_pb2.PutRequest(key=key, value=value))],
        )
        request = rpc_pb2.TxnRequest(
            compare=[_precondition(key, mod_revision)],
            success=[rpc_pb2.RequestOp(request_txn=unchanged)],
            failure=[rpc_pb2.RequestOp(request_range=rpc_pb2.RangeRequest(key=key))],
        )
        return await self._call("kv", "Txn", request, repeatable=False, operation="update", key=key)

    async def delete(self, key: bytes, mod_revision: int = 0) -> rpc_pb2.TxnResponse:
        """Delete ``key`` if its mod revision is ``mod_revision`` (0 = if it exists), returning its last pair.

        Success holds a DeleteRangeResponse with ``prev_kvs`` (deleted at
        ``header.revision``); failure holds a RangeResponse of the key (empty
        = absent).
        """
        request = rpc_pb2.TxnRequest(
            compare=[_precondition(key, mod_revision)],
            success=[rpc_pb2.RequestOp(request_delete_range=rpc_pb2.DeleteRangeRequest(key=key, prev_kv=True))],
            failure=[rpc_pb2.RequestOp(request_range=rpc_pb2.RangeRequest(key=key))],
        )
        return await self._call("kv", "Txn", request, repeatable=False, operation="delete", key=key)

    async def txn(self, request: rpc_pb2.TxnRequest) -> rpc_pb2.TxnResponse:
        """Run a transaction (not retried once sent, like every write); metrics operation ``txn``, the key of
        its first compare."""
        key = request.compare[0].key if request.compare else b""
        return await self._call("kv", "Txn", request, repeatable=False, operation="txn", key=key)

    async def compact(self, revision: int, physical: bool = True) -> rpc_pb2.CompactionResponse:
        """Compact history up to ``revision`` (:mod:`services.storage.compactor`); then calls every
        ``compaction_listeners`` entry with ``revision`` (the watch caches)."""
        request = rpc_pb2.CompactionRequest(revision=revision, physical=physical)
        response = await self._call("kv", "Compact", request, repeatable=False, revision=revision,
                                    operation="compact", key=b"")
        for listener in self.compaction_listeners:
            listener(revision)
        return response

    async def health(self, timeout: float) -> None:
        """etcd's health as kube-apiserver's ``etcd`` check and ``etcdctl endpoint health`` see it: a linearizable
        read of the key ``health``, which needs a leader and a quorum. Tries the endpoints in turn from the current
        one (``timeout`` seconds each), moving the current endpoint past each that failed; returns on the first
        answer, raises the last StatusError (503 unreachable, 504 no answer in time) if none answers."""
        failure: Exception | None = None
        for _ in self._endpoints:
            ep = self.endpoint()
            try:
                await ep.kv.Range(rpc_pb2.RangeRequest(key=b"health"), timeout=timeout)
                return
            except grpc.aio.AioRpcError as exc:
                failure = _translate(exc, ep.target, 0, timeout)
                self.rotate()
        assert failure is not None
        raise failure

    async def status(self, timeout: float | None = None) -> rpc_pb2.StatusResponse:
        """Maintenance Status of the current endpoint (health checks); ``timeout`` in seconds."""
        ep = self.endpoint()
        try:
            return await ep.maintenance.Status(rpc_pb2.StatusRequest(), timeout=timeout or self.timeout)
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.UNAVAILABLE:
                self.rotate()
            raise _translate(exc, ep.target, 0, timeout or self.timeout) from None


def _no_type(key: bytes) -> str:
    return ""


def _tracer() -> Any:
    from opentelemetry import trace

    return trace.get_tracer("kapi.storage.etcd")


def _not_sent(details: str) -> bool:
    lowered = details.lower()
    return any(fragment in lowered for fragment in _NOT_SENT)


def _translate(exc: grpc.aio.AioRpcError, target: str, revision: int, timeout: float) -> Exception:
    """Map an etcd RPC failure to CompactedError / FutureRevisionError / StatusError."""
    code, details = exc.code(), exc.details() or ""
    if "required revision has been compacted" in details:
        return CompactedError(revision)
    if "required revision is a future revision" in details:
        return FutureRevisionError(revision)
    if code == grpc.StatusCode.UNAVAILABLE:
        return errors.unavailable(f"etcd is unavailable ({target}): {details}")
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return errors.timeout(f"etcd did not answer within {timeout:g}s")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED or "request is too large" in details:
        return errors.too_large(f"etcd refused the request: {details}")
    log.warning("etcd %s failed: %s %s", target, code, details)
    return errors.internal(f"etcd: {details}")
