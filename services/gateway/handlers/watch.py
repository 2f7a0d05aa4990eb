"""WATCH: stream changes as newline-delimited JSON events (k8s.io/apiserver pkg/endpoints/handlers/watch.go).

Each line is ``{"type": "ADDED"|"MODIFIED"|"DELETED"|"BOOKMARK"|"ERROR", "object": ...}``.
With protobuf negotiated (``Accept: application/vnd.kubernetes.protobuf;stream=watch``, a built-in kind) the
stream is ``application/vnd.kubernetes.protobuf;stream=watch``: each event a 4-byte big-endian length and a
meta/v1 ``WatchEvent{type, object: RawExtension{raw: the object's protobuf envelope}}`` (kube's
streaming framer; :func:`kapi.k8sproto.watch_event`).
A watch that cannot start or continue (e.g. a compacted resourceVersion)
sends one ERROR event carrying the Status (410 Expired) and ends, as
kube-apiserver does; clients then re-list. A watch whose storage replica
dies is resumed on another replica from the last resourceVersion it
delivered (storage replicas are interchangeable: resourceVersion is the
etcd revision), unseen by the client. Table output sends each object
as a one-row Table (headers only in the first). The watch ends after
``timeoutSeconds`` (default: a random 30-60 minutes, like kube's
--min-request-timeout of 1800 s) or when the gateway shuts down.
A watch asked for with a WebSocket upgrade (``Upgrade: websocket``, ``Connection: upgrade``) is served over
WebSocket instead (:class:`_WebSocketOut`): the same events, one message each.
Source: "API concepts: Efficient detection of changes".
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import Mapping
from typing import Any

import grpc
from aiohttp import web

from kapi import errors, gofmt, jsonutil, k8sproto, listoptions
from kapi.k8sproto import goorder, zero
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import metrics, negotiation, table
from services.gateway.backends import Backends
from services.gateway.requestinfo import query_bool
from services.gateway.scope import RequestScope, parse_resource_version
from services.gateway.watchfanout import Client, Fanout

log = logging.getLogger(__name__)

MIN_REQUEST_TIMEOUT = 1800.0  # seconds, kube-apiserver --min-request-timeout default
MAX_WATCH_TIMEOUT = 1e9  # seconds (31 years): a larger timeoutSeconds overflowed the loop's timer and ended at once
RESUME_SECONDS = 10.0  # how long a watch whose storage replica went away keeps trying to resume on another
RESUME_BACKOFF_SECONDS = 0.05  # first wait between resume attempts while no replica answers; doubles up to 1 s


def _timeout(scope: RequestScope) -> float:
    """The watch's length in seconds, as ListResource computes it (handlers/get.go): ``timeoutSeconds`` (an int64:
    Go's parse, 400 past it; capped where the event loop's clock still holds it), 0 or absent: a random
    --min-request-timeout to twice it; a negative one is a deadline already past: 0 (the watch ends at once)."""
    text = scope.param("timeoutSeconds")
    if text:
        try:
            seconds = float(gofmt.parse_int64(text))
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None
        if seconds < 0:
            return 0.0
        if seconds:
            return min(seconds, MAX_WATCH_TIMEOUT)
    return MIN_REQUEST_TIMEOUT * (1 + random.random())


def _flag(scope: RequestScope, name: str) -> bool:
    return query_bool(scope.query.get(name))


def initial_events(query: Mapping[str, str]) -> tuple[bool, bool]:
    """(send, skip): whether a (validated) watch's ``query`` sends the initial state, and whether it was told not
    to (``sendInitialEvents=false``: with resourceVersion ""/"0", a watch from now instead of the current state).

    ``sendInitialEvents`` is a ``*bool``: absent is unset, and SetListOptionsDefaults (WatchList on, ListResource,
    meta/internalversion/defaults.go) sets it to true, with resourceVersionMatch=NotOlderThan, for a watch from
    "" or "0" that gave neither it nor a match (so ``allowWatchBookmarks`` gets the ``k8s.io/initial-events-end``
    bookmark). ``check_list_options`` already refused a match without ``sendInitialEvents``."""
    value = query.get("sendInitialEvents")
    if value is None:
        return not query.get("resourceVersionMatch") and query.get("resourceVersion", "") in ("", "0"), False
    send = query_bool(value)
    return send, not send


class _Encoder:
    """Turns storage WatchEvents into the bytes of one JSON line each (or one protobuf frame each)."""

    def __init__(self, scope: RequestScope):
        self.scope = scope
        self.protobuf = scope.output.mime == negotiation.PROTOBUF
        self.content_type = negotiation.PROTOBUF + ";stream=watch" if self.protobuf else negotiation.JSON
        self.headers_sent = False
        self.resource = scope.resource

    @property
    def unencodable(self) -> bool:
        """Whether no object event of this watch can be encoded: ``as=PartialObjectMetadataList``.

        kube's watchEmbeddedEncoder transforms each event's object (doTransformObject); asPartialObjectMetadataList
        refuses one object (``...is not a list``), the untransformed object goes to the meta.k8s.io encoder
        (targetEncodingForTransform), which has no kind for it, and serveWatch ends the stream at that first event
        (``unable to encode watch object``): a 200 whose body ends before any event (handlers/watch.go)."""
        return self.scope.output.partial_list

    def encode(self, event: storage_pb2.WatchEvent) -> bytes:
        """One JSON line (or protobuf frame) for ``event``. As kube's watchEmbeddedEncoder, every event's object is
        transformed to the negotiated form, a BOOKMARK's too (its object: the kind with only the resourceVersion,
        and the storage's annotations): a PartialObjectMetadata, or a one-row Table whose columnDefinitions only
        the first event carries (``null`` after it: TableOptions.NoHeaders leaves them nil). JSON lines are
        HTML-escaped as Go's encoder writes the WatchEvent (:func:`kapi.jsonutil.go_escape`: it re-compacts the
        embedded RawExtension with escaping on)."""
        output = self.scope.output
        if self.protobuf:
            return self._protobuf(event)
        bookmark = event.type == "BOOKMARK"
        if bookmark:
            obj = self._bookmark(event)
        if output.table:
            if not bookmark:
                obj = jsonutil.loads(event.object)
            body: Any = table.table(self.resource, [obj], {"resourceVersion": str(event.resource_version)},
                                    negotiation.include_object(self.scope.param("includeObject")), output.version,
                                    headers=not self.headers_sent)
            if self.headers_sent:
                body["columnDefinitions"] = None
            self.headers_sent = True
            return jsonutil.go_escape(jsonutil.dumps({"type": event.type, "object": body})) + b"\n"
        if output.partial_metadata:
            if not bookmark:
                obj = jsonutil.loads(event.object)
            body = {"kind": "PartialObjectMetadata", "apiVersion": output.meta_api_version,
                    "metadata": obj.get("metadata")}
            return jsonutil.go_escape(jsonutil.dumps({"type": event.type, "object": body})) + b"\n"
        if bookmark:
            return jsonutil.go_escape(jsonutil.dumps({"type": "BOOKMARK", "object": obj})) + b"\n"
        return b'{"type":"' + event.type.encode() + b'","object":' + jsonutil.go_escape(event.object) + b"}\n"

    def _bookmark(self, event: storage_pb2.WatchEvent) -> dict[str, Any]:
        """A BOOKMARK's object as kube's watch cache makes it: a new zero object of the kind (``c.newFunc()``)
        with storage's metadata (its annotations) and the event's resourceVersion, i.e. the zero typed object as
        encoding/json writes it (``{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"314"},
        "spec":{"containers":null},"status":{}}``, :func:`kapi.k8sproto.zero.zero_object`); a custom resource's
        is an Unstructured with apiVersion, kind and metadata, keys sorted; a built-in kind outside the
        protobuf table: kind, apiVersion, metadata."""
        stored = jsonutil.loads(event.object) if event.object else {}
        stored_meta = stored.get("metadata")
        meta = dict(stored_meta) if isinstance(stored_meta, dict) else {}
        meta["resourceVersion"] = str(event.resource_version)
        kind, api_version = self.resource.kind, self.resource.group_version
        obj = zero.zero_object(api_version, kind, meta)
        if obj is not None:
            return obj
        typed = {"kind": kind, "apiVersion": api_version, "metadata": meta}
        if goorder.is_unstructured(typed):
            return zero.unstructured_object(api_version, kind, meta)
        return goorder.wire_order(typed)

    def _protobuf(self, event: storage_pb2.WatchEvent) -> bytes:
        if event.type == "BOOKMARK":
            obj = self._bookmark(event)
        else:
            obj = jsonutil.loads(event.object) if event.object else {}
        if self.scope.output.partial_metadata:
            obj = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata")}
        try:
            return k8sproto.watch_event(event.type, k8sproto.encode(obj))
        except k8sproto.EncodeError as exc:  # a stored object the schema cannot encode: its ERROR event, not a hang
            log.warning("watch of %s: cannot encode an event as protobuf: %s", self.resource.resource, exc)
            return error_event(errors.internal(f"unable to encode watch object: {exc}"), protobuf=True)


def error_event(err: errors.StatusError, protobuf: bool = False) -> bytes:
    """The ERROR event (a JSON line, or a protobuf frame) that carries ``err``'s Status."""
    if protobuf:
        return k8sproto.watch_event("ERROR", k8sproto.encode(err.status()))
    return jsonutil.go_escape(jsonutil.dumps({"type": "ERROR", "object": err.status()})) + b"\n"


class _ClientGone(Exception):
    """The WebSocket client closed the connection (or it broke): the watch ends cleanly."""


class _HttpOut:
    """A watch's events as a chunked HTTP body: each batch written at once (kube's HandleHTTP)."""

    def __init__(self, scope: RequestScope, encoder: _Encoder) -> None:
        self.scope, self.encoder = scope, encoder
        self.response = web.StreamResponse(status=200, headers={"Content-Type": encoder.content_type,
                                                                "Cache-Control": "no-cache, private"})

    async def start(self) -> bool:
        """Send the 200 and its headers; True (the stream is open)."""
        self.response.enable_chunked_encoding()
        await self.response.prepare(self.scope.request)
        return True

    async def next(self, awaitable: Any) -> Any:
        """Await the watch's next batch (here nothing else can end the watch first)."""
        return await awaitable

    async def send(self, frames: list[bytes]) -> int:
        """Write encoded events (each as :class:`_Encoder` makes it); the number of bytes written. Raises
        :class:`_ClientGone` when the client hung up (the watch ends quietly, no traceback logged)."""
        data = b"".join(frames)
        try:
            await self.response.write(data)
        except ConnectionResetError:  # aiohttp's ClientConnectionResetError: "Cannot write to closing transport"
            raise _ClientGone from None
        return len(data)

    async def finish(self) -> None:
        """Nothing to do: the handler's return ends the chunked body."""


# Go's url.ParseRequestURI accepts "*", an absolute path, or a URI with a scheme; no ASCII control characters.
_REQUEST_URI = re.compile(r"(\*|/.*|[A-Za-z][A-Za-z0-9+.-]*:.*)", re.DOTALL)


def websocket_refusal(request: web.BaseRequest) -> web.Response | None:
    """kube's answer to a WebSocket handshake it refuses, or None to accept it.

    golang.org/x/net/websocket (kube's ``websocket.Handler(server.HandleWS)``) checks, after the watch started:
    no ``Sec-WebSocket-Key``: 400 ``mismatch challenge/response``; ``Sec-WebSocket-Version`` not ``13``: 400
    ``missing or bad WebSocket Version`` with ``Sec-WebSocket-Version: 13``; an ``Origin`` absent, ``null`` or
    not a request URI (``url.ParseRequestURI``; Handler's checkOrigin): 403 with an empty body; more than one
    ``Sec-WebSocket-Protocol``: 400 with an empty body (the server picks none). Bodies are plain text, never
    a Status (x/net writes them on the hijacked connection; hybi.go ReadHandshake/AcceptHandshake, server.go).
    """
    headers = request.headers
    if not headers.get("Sec-WebSocket-Key", ""):
        return web.Response(status=400, body=b"mismatch challenge/response")
    if headers.get("Sec-WebSocket-Version", "") != "13":
        return web.Response(status=400, body=b"missing or bad WebSocket Version",
                            headers={"Sec-WebSocket-Version": "13"})
    origin = headers.get("Origin", "")
    if origin == "null" or not _REQUEST_URI.fullmatch(origin) or any(ord(c) < 0x20 or c == "\x7f" for c in origin):
        return web.Response(status=403)
    if len(_protocols(request)) > 1:
        return web.Response(status=400)
    return None


def _protocols(request: web.BaseRequest) -> list[str]:
    text = request.headers.get("Sec-WebSocket-Protocol", "").strip()
    return [p.strip() for p in text.split(",")] if text else []


class _WebSocketOut:
    """A watch's events over WebSocket (kube's WatchServer.HandleWS, handlers/watch.go): each event one message,
    a text message for a text encoding (JSON: the event's JSON line, newline included) and a binary one for
    protobuf (the WatchEvent without the HTTP stream's 4-byte length: websocketFramer writes each encoded event
    as a message of its own). What the client sends is read and ignored (wsstream.IgnoreReceives); its close
    ends the watch; the end of the watch (timeoutSeconds, storage, an ERROR event) closes with 1000 and no reason.
    One requested subprotocol is echoed, as x/net does; no extension (permessage-deflate) is negotiated.
    """

    def __init__(self, scope: RequestScope, encoder: _Encoder) -> None:
        self.scope, self.encoder = scope, encoder
        self.response: web.StreamResponse = web.WebSocketResponse(
            protocols=_protocols(scope.request), compress=False, max_msg_size=0, autoping=True)
        self.reader: asyncio.Future[None] | None = None

    async def start(self) -> bool:
        """Answer the handshake (101), or kube's refusal of it (:func:`websocket_refusal`: False, no stream)."""
        refusal = websocket_refusal(self.scope.request)
        if refusal is not None:
            self.response = refusal
            return False
        await self.response.prepare(self.scope.request)
        self.reader = asyncio.ensure_future(self._ignore())
        return True

    async def _ignore(self) -> None:
        assert isinstance(self.response, web.WebSocketResponse)
        async for _message in self.response:  # pings answered, a close answered and ending the loop
            pass

    async def next(self, awaitable: Any) -> Any:
        """Await the watch's next batch; raise :class:`_ClientGone` if the client closes first."""
        assert self.reader is not None
        pending = asyncio.ensure_future(awaitable)
        if not self.reader.done():
            await asyncio.wait({pending, self.reader}, return_when=asyncio.FIRST_COMPLETED)
        if not pending.done():
            pending.cancel()
            raise _ClientGone
        return pending.result()

    async def send(self, frames: list[bytes]) -> int:
        """Send each encoded event as one message; the number of bytes sent."""
        ws = self.response
        assert isinstance(ws, web.WebSocketResponse)
        if ws.closed:
            raise _ClientGone
        size = 0
        for frame in frames:
            if self.encoder.protobuf:
                await ws.send_bytes(frame[4:])
            else:
                await ws.send_str(frame.decode())
            size += len(frame)
        return size

    async def finish(self) -> None:
        """Close the connection (1000), and stop reading (nothing to do after a refused handshake)."""
        ws = self.response
        if isinstance(ws, web.WebSocketResponse) and not ws.closed:
            await ws.close()
        if self.reader is not None:
            self.reader.cancel()


def _output(scope: RequestScope, encoder: _Encoder) -> _HttpOut | _WebSocketOut:
    """Where the watch goes: WebSocket for a WebSocket upgrade request (kube's wsstream.IsWebSocketRequest:
    ``Upgrade: websocket`` in any case and an ``upgrade`` token in ``Connection``), else the chunked body."""
    headers = scope.request.headers
    connection = " ".join(headers.getall("Connection", ())).lower()  # httpstream.IsUpgradeRequest: a substring
    if headers.get("Upgrade", "").lower() == "websocket" and "upgrade" in connection:
        return _WebSocketOut(scope, encoder)
    return _HttpOut(scope, encoder)


class _Position:
    """Where a watch can be resumed from: the resourceVersion of the last event it delivered (bookmarks included).

    Known from the start for a watch from a revision N; a watch that begins
    with the current state ("" or "0", or ``sendInitialEvents``) knows it only
    from its first bookmark (after the initial events), since its synthetic
    ADDED events carry the objects' own revisions, not a place in the stream.
    """

    def __init__(self, request: storage_pb2.WatchRequest) -> None:
        initial = request.send_initial_events or request.resource_version in ("", "0")
        self.revision = 0 if initial else int(request.resource_version)

    def delivered(self, events: Any) -> None:
        """Note the events just written to the client."""
        for event in events:
            if event.type == "BOOKMARK" or self.revision:
                self.revision = max(self.revision, event.resource_version)


def _carries_status(exc: grpc.RpcError) -> bool:
    """True when storage ended the watch with a Status of its own (e.g. 504 Too large resource version, sent as
    DEADLINE_EXCEEDED), not when the call's own deadline (the watch's timeoutSeconds) ran out."""
    metadata = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
    return any(key == errors.STATUS_METADATA_KEY for key, _ in metadata or ())


def _resumable(exc: grpc.RpcError) -> bool:
    """True for the failures of the storage replica serving the watch (it died or went away), not of the watch."""
    return exc.code() == grpc.StatusCode.UNAVAILABLE if hasattr(exc, "code") else False


async def resume(backends: Backends, request: storage_pb2.WatchRequest, revision: int, deadline: float,
                 ) -> tuple[Any, Any, Any] | None:
    """A new storage watch from ``revision`` (on whichever replica answers), with its first batch.

    Retries while storage is unavailable, for up to RESUME_SECONDS after the
    last failure, and not past the watch's own ``deadline`` (loop time; None
    then: the watch ends cleanly, as at its timeout). Returns (call, stream
    iterator, first batch), the call registered in ``backends.watches``;
    raises the StatusError to send as the ERROR event: 410 Expired when no
    replica has ``revision`` any more, else the last failure.
    """
    loop = asyncio.get_running_loop()
    watches = backends.watches
    give_up = loop.time() + RESUME_SECONDS
    resumed = storage_pb2.WatchRequest()
    resumed.CopyFrom(request)
    resumed.resource_version, resumed.send_initial_events = str(revision), False
    delay = RESUME_BACKOFF_SECONDS
    while True:
        remaining = deadline - loop.time()
        if remaining <= 0 or backends.shutting_down:
            return None
        started = loop.time()
        call = backends.storage.Watch(resumed, timeout=remaining)
        watches.add(call)
        stream = call.__aiter__()
        try:
            return call, stream, await stream.__anext__()
        except grpc.RpcError as exc:
            watches.discard(call)
            call.cancel()
            if loop.time() - started > 1.0:  # it was up a while (waiting for the first event): a new break
                give_up, delay = loop.time() + RESUME_SECONDS, RESUME_BACKOFF_SECONDS
            code = exc.code() if hasattr(exc, "code") else None
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                return None
            if not _resumable(exc) or loop.time() + delay > give_up:
                raise errors.from_rpc_error(exc, "storage") from None
        except StopAsyncIteration:
            watches.discard(call)
            call.cancel()
            return None  # storage ended it (a watcher too slow for its cache): the client re-watches
        await asyncio.sleep(delay)
        delay = min(delay * 2, 1.0)


async def watch(scope: RequestScope) -> web.StreamResponse:
    """Stream events for the collection (or the one object named by a ``metadata.name`` field selector).

    When the storage replica serving it goes away (UNAVAILABLE) the watch is
    resumed on another one from the last resourceVersion delivered, so the
    client sees no gap, no duplicate and no ERROR; only when no replica can
    resume it within RESUME_SECONDS does it get the ERROR event (410 Expired
    if the revision was compacted meanwhile). See :class:`_Position` for
    watches not yet resumable.
    """
    timeout = _timeout(scope)
    listoptions.check_list_options(scope.query, watch=True)  # 422, as ListResource before it watches
    rv = scope.param("resourceVersion")
    parse_resource_version(rv)
    if scope.output.table:  # serveWatchHandler: TableOptions (400), then a stream serializer (406 for YAML)
        negotiation.include_object(scope.param("includeObject"))
    negotiation.check_watch(scope.output)
    if not timeout:  # a negative timeoutSeconds: the deadline passed already; serveWatch's timer fires at once
        out = _output(scope, _Encoder(scope))
        if await out.start():
            await out.finish()
        return out.response
    send_initial, skip_initial = initial_events(scope.query)
    request = storage_pb2.WatchRequest(
        key=scope.key(name=scope.info.name), resource_version=rv, label_selector=scope.param("labelSelector"),
        field_selector=scope.field_selector(), allow_bookmarks=_flag(scope, "allowWatchBookmarks"),
        send_initial_events=send_initial, skip_initial_events=skip_initial,
        selectable_fields=scope.selectable_fields())
    deadline = asyncio.get_running_loop().time() + timeout
    output = scope.output
    client = None if output.table or output.partial_metadata else fanout(scope.backends).subscribe(request)
    custom = scope.backends.custom_resources
    served = custom is not None and custom.crd_of(scope.resource) is not None
    if client is not None:
        forget = custom.on_unserved(scope.resource, client.end) if served and custom is not None else None
        try:
            return await _shared(scope, client, deadline)
        finally:
            if forget is not None:
                forget()
    call = scope.backends.storage.Watch(request, timeout=timeout)
    if served and custom is not None:
        forget = custom.on_unserved(scope.resource, call.cancel)
        try:
            return await _stream(scope, request, call, deadline)
        finally:
            forget()
    return await _stream(scope, request, call, deadline)


async def _stream(scope: RequestScope, request: storage_pb2.WatchRequest, call: Any, deadline: float
                  ) -> web.StreamResponse:
    """Stream a watch of its own (``call``, a storage Watch) until it ends, resuming on another storage replica
    when the one serving it goes away (see :func:`watch`)."""
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
    out = _output(scope, encoder)
    if not await out.start():
        pending.add_done_callback(lambda f: f.cancelled() or f.exception())  # read (CANCELLED), not awaited
        call.cancel()
        return out.response
    response = out.response
    position = _Position(request)
    watches = scope.backends.watches
    watches.add(call)
    try:
        try:
            next_batch: Any = pending
            while True:
                try:
                    batch = await out.next(next_batch)
                except grpc.RpcError as exc:
                    if not _resumable(exc) or not position.revision or scope.backends.shutting_down:
                        raise
                    log.info("storage watch of %s%s broke (%s); resuming from resourceVersion %d",
                             scope.resource.resource, f" in {scope.info.namespace}" if scope.info.namespace else "",
                             exc.code().name, position.revision)
                    watches.discard(call)
                    call.cancel()
                    try:
                        resumed = await resume(scope.backends, request, position.revision, deadline)
                    except errors.StatusError as err:
                        await out.send([error_event(err, encoder.protobuf)])
                        return response
                    if resumed is None:
                        return response
                    call, stream, batch = resumed
                if batch.events and encoder.unencodable:
                    log.info("watch of %s: unable to encode watch object as %s; ending the watch",
                             scope.resource.resource, "PartialObjectMetadataList")
                    return response
                size = await out.send([encoder.encode(e) for e in batch.events])
                metrics.watch_events(scope.resource.group, scope.resource.version, scope.resource.kind,
                                     len(batch.events), size)
                position.delivered(batch.events)
                next_batch = stream.__anext__()
        except (StopAsyncIteration, _ClientGone):
            pass
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else None
            if code not in (grpc.StatusCode.CANCELLED, grpc.StatusCode.DEADLINE_EXCEEDED) or _carries_status(exc):
                await out.send([error_event(errors.from_rpc_error(exc, "storage"), encoder.protobuf)])
        return response
    except _ClientGone:  # while sending the ERROR event
        return response
    except (ConnectionResetError, asyncio.CancelledError):
        raise
    finally:
        watches.discard(call)
        call.cancel()
        await out.finish()


def fanout(backends: Backends) -> Fanout:
    """The gateway's shared storage watches (services/gateway/watchfanout.py), made on first use."""
    if backends.watch_fanout is None:
        backends.watch_fanout = Fanout(lambda: backends.storage, backends.watches, lambda: backends.shutting_down,
                                       lambda request, revision, deadline: resume(backends, request, revision,
                                                                                  deadline))
        fan = backends.watch_fanout
        metrics.SHARED_WATCHES.set_function(lambda: fan.upstreams)
        metrics.SHARED_WATCH_CLIENTS.set_function(fan.clients)
    return backends.watch_fanout


async def _shared(scope: RequestScope, client: Client, deadline: float) -> web.StreamResponse:
    """Stream a watch served by a shared upstream (:mod:`services.gateway.watchfanout`) until ``deadline``.

    As for a watch of its own: a refusal within the first half second (a bad selector) is a plain error
    response, a 410 or 504 the ERROR event; later failures are the ERROR event; the end of the upstream,
    the deadline or a gateway drain end the stream cleanly.
    """
    encoder = _Encoder(scope)
    ending = asyncio.get_running_loop().call_at(deadline, client.end)  # one timer, not one per batch
    if client.bookmarks:
        client.schedule_bookmarks(deadline)
    pending: asyncio.Future[Any] = asyncio.ensure_future(client.next())
    try:
        await asyncio.wait({pending}, timeout=0.5)
        if pending.done() and isinstance(pending.exception(), errors.StatusError):
            err = pending.exception()
            assert isinstance(err, errors.StatusError)
            if err.code not in (410, 504):
                raise err
        out = _output(scope, encoder)
        if not await out.start():
            return out.response
        try:
            next_events: Any = pending
            while True:
                try:
                    events = await out.next(next_events)
                except errors.StatusError as err:
                    await out.send([error_event(err, encoder.protobuf)])
                    return out.response
                if events is None:
                    return out.response
                size = await out.send([encoder.encode(e) for e in events])
                metrics.watch_events(scope.resource.group, scope.resource.version, scope.resource.kind,
                                     len(events), size)
                next_events = client.next()
        except _ClientGone:
            return out.response
        finally:
            await out.finish()
    finally:
        ending.cancel()
        pending.cancel()  # no-op once it was awaited
        client.close()
