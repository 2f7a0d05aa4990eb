"""One HTTP request run through the gateway's handler chain inside the process, its answer streamed back.

The public gRPC API (services/gateway/grpcapi.py) turns each call into the
REST request it stands for and runs it here through the very handler that
serves HTTPS (services/gateway/chain.py ``install``), so every stage —
authentication, impersonation, APF, authorization, admission, the one write
path, audit, metrics — is the REST one, not a copy. The request is an
ordinary ``aiohttp.web.Request`` on the real application (its response
hooks run: Audit-Id, APF headers, the end of a watch's seat); what differs
is only the connection under it:

- the transport reports the TLS client certificate of the gRPC connection
  (``ssl_object.getpeercert(binary_form=True)``), so the authentication
  filter decides exactly as for an HTTPS connection whether
  ``x-forwarded-client-cert`` comes from the front proxy (Envoy) or is a
  client's own certificate;
- the writer hands the status line, headers and body chunks to an
  :class:`Exchange` instead of a socket, as they are written: a watch
  streams, with backpressure (at most :data:`QUEUE_CHUNKS` chunks wait).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Iterable
from typing import Any

from aiohttp import abc, web
from aiohttp.streams import StreamReader
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict, CIMultiDictProxy

from kapi import limits
from services.gateway.context import Handler

QUEUE_CHUNKS = 64  # body chunks a slow consumer may leave unread before the handler waits (a watch's backpressure)
_MARKER_TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)  # the request is "secure" (https), as over Envoy's TLS


class _PeerCertificate:
    """The part of ``ssl.SSLObject`` the authentication filter reads: the client's certificate (DER)."""

    def __init__(self, der: bytes) -> None:
        self._der = der

    def getpeercert(self, binary_form: bool = False) -> Any:
        """The DER certificate with ``binary_form``, else {} (not validated here: the TLS handshake did)."""
        return self._der if binary_form else {}


class _Transport(asyncio.Transport):
    """A transport that only answers ``get_extra_info`` (peername, sockname, the peer certificate)."""

    def is_closing(self) -> bool:
        """Never closing: the gRPC call's end cancels the handler instead."""
        return False

    def close(self) -> None:
        """Nothing to close."""


class _Protocol:
    """The attributes aiohttp's request and payload reader take from the connection's protocol."""

    def __init__(self, transport: _Transport, writer: _Writer) -> None:
        self.transport = transport
        self.writer = writer
        self.peername = transport.get_extra_info("peername")
        self.sockname = transport.get_extra_info("sockname")
        self.ssl_context = _MARKER_TLS
        self.max_field_size = self.max_line_length = limits.MAX_HEADER_BYTES
        self.max_headers = 32768
        self._reading_paused = False

    def pause_reading(self, *_args: object, **_kwargs: object) -> None:
        """The body is in memory already: nothing to pause."""

    def resume_reading(self, *_args: object, **_kwargs: object) -> None:
        """See :meth:`pause_reading`."""


class _Writer(abc.AbstractStreamWriter):
    """Receives what the response writes: the status and headers once, then body chunks, then the end."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: CIMultiDict[str] = CIMultiDict()
        self.started = asyncio.Event()
        self.chunks: asyncio.Queue[bytes | None] = asyncio.Queue(QUEUE_CHUNKS)
        self.ended = False

    async def write_headers(self, status_line: str, headers: CIMultiDict[str]) -> None:
        """Note the status (from ``HTTP/1.1 200 OK``) and headers."""
        self.status = int(status_line.split(" ", 2)[1])
        self.headers = CIMultiDict(headers)
        self.started.set()

    async def write(self, chunk: bytes | bytearray | memoryview) -> None:
        """Queue one body chunk (waits while :data:`QUEUE_CHUNKS` are unread)."""
        if chunk:
            self.output_size += len(chunk)
            await self.chunks.put(bytes(chunk))

    async def write_eof(self, chunk: bytes = b"") -> None:
        """Queue the last chunk and the end."""
        if chunk:
            await self.write(chunk)
        self.end()

    def end(self) -> None:
        """Mark the end of the body (once; never waits)."""
        if not self.ended:
            self.ended = True
            self.started.set()
            try:
                self.chunks.put_nowait(None)
            except asyncio.QueueFull:  # the reader drains the queue and then sees ``ended``
                pass

    async def drain(self) -> None:
        """Nothing buffered below the queue."""

    def enable_compression(self, encoding: str = "deflate", strategy: int | None = None) -> None:
        """Never asked for: the request sends no Accept-Encoding."""

    def enable_chunking(self) -> None:
        """Chunks are framed by the queue, not by HTTP chunked encoding."""


class Exchange:
    """One request running through the chain; read its status, headers and body as they come.

    Use as an async context manager: leaving it cancels the handler if it still
    runs (the gRPC client went away), as aiohttp cancels a handler whose
    connection closed.
    """

    def __init__(self, handler: Handler, app: web.Application, method: str, path_qs: str,
                 headers: Iterable[tuple[str, str]], body: bytes, *, peer_certificate: bytes | None,
                 peername: tuple[str, int] | None) -> None:
        loop = asyncio.get_running_loop()
        extra: dict[str, Any] = {"peername": peername, "sockname": ("127.0.0.1", 0)}
        if peer_certificate:
            extra["ssl_object"] = _PeerCertificate(peer_certificate)
        transport = _Transport(extra)
        self._writer = _Writer()
        protocol = _Protocol(transport, self._writer)
        fields: CIMultiDict[str] = CIMultiDict(headers)
        fields["Content-Length"] = str(len(body))
        payload = StreamReader(protocol, max(len(body), 1) * 2 + 2, loop=loop)  # type: ignore[arg-type]
        if body:
            payload.feed_data(body)
        payload.feed_eof()
        self.request = make_mocked_request(
            method, path_qs, CIMultiDictProxy(fields), app=app, writer=self._writer, protocol=protocol,
            transport=transport, payload=payload, client_max_size=limits.MAX_BODY_BYTES + 1, loop=loop)
        self._task = loop.create_task(self._run(handler), name=f"inprocess {method} {path_qs[:80]}")

    async def _run(self, handler: Handler) -> None:
        request = self.request
        try:
            try:
                response = await handler(request)
            except web.HTTPException as exc:  # aiohttp's own answers (the chain renders Statuses itself)
                response = exc
            await response.prepare(request)
            await response.write_eof()
        finally:
            self._writer.end()

    async def __aenter__(self) -> Exchange:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if not self._task.done():
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def head(self) -> tuple[int, CIMultiDict[str]]:
        """(HTTP status, response headers) once written; re-raises what the handler raised before answering."""
        started = asyncio.ensure_future(self._writer.started.wait())
        try:
            await asyncio.wait({started, self._task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            started.cancel()
        if not self._writer.status:
            await self._task  # raises the handler's exception
            raise RuntimeError("the handler ended without a response")
        return self._writer.status, self._writer.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body chunks as the handler writes them, until it ends."""
        while True:
            chunk = await self._writer.chunks.get()
            if chunk is None:
                return
            yield chunk
            if self._writer.ended and self._writer.chunks.empty():
                return

    async def body(self) -> bytes:
        """The whole body (for answers that are not streams)."""
        return b"".join([chunk async for chunk in self.chunks()])
