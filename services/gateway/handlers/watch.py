"""WATCH: stream changes as newline-delimited JSON events (k8s.io/apiserver pkg/endpoints/handlers/watch.go).

Each line is ``{"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR", "object": ...}``.
A watch that cannot start or continue (e.g. a compacted resourceVersion)
sends one ERROR event carrying the Status (410 Expired) and ends, as
kube-apiserver does; clients then re-list. Table output sends each object
as a one-row Table (headers only in the first). The watch ends after
``timeoutSeconds`` (default: a random 30-60 minutes, like kube's
--min-request-timeout of 1800 s) or when the gateway shuts down.
Source: "API concepts: Efficient detection of changes".
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
from aiohttp import web

from kapi import errors, gofmt, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import metrics, table
from services.gateway.requestinfo import query_bool
from services.gateway.scope import RequestScope, parse_resource_version

MIN_REQUEST_TIMEOUT = 1800.0  # seconds, kube-apiserver --min-request-timeout default


def _timeout(scope: RequestScope) -> float:
    text = scope.param("timeoutSeconds")
    if text:
        try:
            return max(float(int(text)), 0.0) or MIN_REQUEST_TIMEOUT
        except ValueError:
            raise errors.bad_request(gofmt.parse_int_error(text)) from None
    return MIN_REQUEST_TIMEOUT * (1 + random.random())


def _flag(scope: RequestScope, name: str) -> bool:
    return query_bool(scope.query.get(name))


class _Encoder:
    """Turns storage WatchEvents into the bytes of one JSON line each."""

    def __init__(self, scope: RequestScope):
        self.scope = scope
        self.headers_sent = False
        self.resource = scope.resource

    def encode(self, event: storage_pb2.WatchEvent) -> bytes:
        output = self.scope.output
        if event.type == "BOOKMARK":
            obj = jsonutil.loads(event.object) if event.object else {}
            obj["kind"] = self.resource.kind
            obj["apiVersion"] = self.resource.group_version
            obj.setdefault("metadata", {})["resourceVersion"] = str(event.resource_version)
            return jsonutil.dumps({"type": "BOOKMARK", "object": obj}) + b"\n"
        if output.table:
            obj = jsonutil.loads(event.object)
            body: Any = table.table(self.resource, [obj], {"resourceVersion": str(event.resource_version)},
                                    self.scope.param("includeObject", "Metadata"), output.table_version,
                                    headers=not self.headers_sent)
            self.headers_sent = True
            return jsonutil.dumps({"type": event.type, "object": body}) + b"\n"
        if output.partial_metadata:
            obj = jsonutil.loads(event.object)
            body = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata")}
            return jsonutil.dumps({"type": event.type, "object": body}) + b"\n"
        return b'{"type":"' + event.type.encode() + b'","object":' + event.object + b"}\n"


def error_event(err: errors.StatusError) -> bytes:
    """The ERROR event line that carries ``err``'s Status."""
    return jsonutil.dumps({"type": "ERROR", "object": err.status()}) + b"\n"


async def watch(scope: RequestScope) -> web.StreamResponse:
    """Stream events for the collection (or the one object named by a ``metadata.name`` field selector)."""
    rv = scope.param("resourceVersion")
    parse_resource_version(rv)
    timeout = _timeout(scope)
    request = storage_pb2.WatchRequest(
        key=scope.key(name=scope.info.name), resource_version=rv, label_selector=scope.param("labelSelector"),
        field_selector=scope.param("fieldSelector"), allow_bookmarks=_flag(scope, "allowWatchBookmarks"),
        send_initial_events=_flag(scope, "sendInitialEvents"), selectable_fields=scope.selectable_fields())
    call = scope.backends.storage.Watch(request, timeout=timeout)
    stream = call.__aiter__()
    encoder = _Encoder(scope)
    # Give storage a moment to refuse (bad selector, compacted revision) so a refusal that is not a
    # watch-time error can still be a plain error response. The read is never cancelled: it is awaited below.
    pending: asyncio.Future[Any] = asyncio.ensure_future(stream.__anext__())
    await asyncio.wait({pending}, timeout=0.5)
    if pending.done() and not pending.cancelled() and isinstance(pending.exception(), grpc.RpcError):
        err = errors.from_rpc_error(pending.exception(), "storage")  # type: ignore[arg-type]
        if err.code not in (410, 504):
            call.cancel()
            raise err
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                       "Cache-Control": "no-cache, private"})
    response.enable_chunked_encoding()
    await response.prepare(scope.request)
    scope.backends.watches.add(call)
    try:
        try:
            batch = await pending
            while True:
                data = b"".join(encoder.encode(e) for e in batch.events)
                metrics.watch_events(scope.resource.group, scope.resource.version, scope.resource.kind,
                                     len(batch.events), len(data))
                await response.write(data)
                batch = await stream.__anext__()
        except StopAsyncIteration:
            pass
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            if code not in (grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED):
                await response.write(error_event(errors.from_rpc_error(exc, "storage")))
        return response
    except (ConnectionResetError, asyncio.CancelledError):
        raise
    finally:
        scope.backends.watches.discard(call)
        call.cancel()
