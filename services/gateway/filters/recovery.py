"""Every failure becomes a Kubernetes ``Status`` (kube's WithPanicRecovery plus responsewriters.ErrorNegotiated).

Outermost filter but audit, metrics and tracing: it creates the request's
:class:`~services.gateway.context.RequestContext` with its audit ID (the
client's ``Audit-ID`` header when short and printable, else a new UUID), renders a StatusError as
its Status JSON with the matching code and ``Retry-After`` — and the
``Warning`` headers the request gathered before it was refused (the
context's warning recorder: services/gateway/warning.py) — and turns any
other exception into a 500 InternalError logged with the audit ID. Nothing
escapes as a bare 500.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os

from aiohttp import web

from kapi import errors, gofmt, jsonutil, limits
from services.gateway import audit, debug, negotiation
from services.gateway.context import CONTEXT, Handler, RequestContext
from services.gateway.warning import add_warnings

log = logging.getLogger("services.gateway.chain")


def status_response(err: errors.StatusError, audit_id: str = "", request: web.Request | None = None) -> web.Response:
    """Render a StatusError as its Status with the matching HTTP code and Retry-After, in the form kube's
    ErrorNegotiated writes for ``request`` (:func:`negotiation.error_output`): JSON as Go's json.Encoder writes it
    (HTML-escaped, newline-terminated), or its MarshalIndent form without the newline where the request asks for
    pretty output (:func:`negotiation.pretty`); protobuf or YAML when the Accept prefers one (every serializer set,
    a custom resource's too, can write a Status in protobuf; so can a 406 for protobuf-only); and where no media
    type of the Accept is acceptable (``text/html``), WriteRawJSON's ``json.MarshalIndent(status, "", "  ")``,
    ``application/json``, no newline (responsewriters/writers.go WriteObjectNegotiated). ``request`` None: JSON."""
    status = err.status()
    if request is None:
        body, content_type = jsonutil.go_escape(jsonutil.dumps(status)) + b"\n", negotiation.JSON
    elif (output := negotiation.error_output(request.headers.get("Accept", ""))) is None:
        body, content_type = jsonutil.dumps_go_indent(status), negotiation.JSON
    elif output.mime != negotiation.JSON:
        body, content_type = negotiation.encode(status, output)
    elif negotiation.pretty(request.rel_url.raw_query_string, request.query, request.headers.get("User-Agent", "")):
        body, content_type = jsonutil.dumps_go_indent(status), negotiation.JSON
    else:
        body, content_type = jsonutil.go_escape(jsonutil.dumps(status)) + b"\n", negotiation.JSON
    response = web.Response(body=body, status=err.code, content_type=content_type)
    if err.retry_after is not None and err.code in (429, 503, 504):
        response.headers["Retry-After"] = str(err.retry_after)
    if audit_id:
        response.headers["Audit-Id"] = audit_id
    return response


# An audit ID from the client is used (and echoed) only when it is this short and printable ASCII: sig-auth's
# resolution of kubernetes/kubernetes#127801. A 100 KB one made the response headers outgrow what Envoy relays (502).
MAX_AUDIT_ID_LENGTH = 256


def audit_id_of(request: web.Request) -> str:
    """The client's ``Audit-ID`` when it is 1-256 printable ASCII characters (no spaces), else a new UUID."""
    given = request.headers.get("Audit-ID", "")
    if 0 < len(given) <= MAX_AUDIT_ID_LENGTH and given.isascii() and given.isprintable() and " " not in given:
        return given
    return new_audit_id()


def new_audit_id() -> str:
    """A random (version 4, RFC 9562) UUID in its 36-character form, as ``str(uuid.uuid4())`` makes (kube's
    ``uuid.New()``) from the same 16 bytes of ``os.urandom``, in 1.8 us instead of 3.1 (one per request)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC variant
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


# How long an error answer waits for the rest of a request body it did not read (aiohttp's own lingering time).
DRAIN_SECONDS = 10.0


async def drain_body(request: web.Request) -> None:
    """Read and discard what is left of ``request``'s body, at most kube's body limit and DRAIN_SECONDS.

    An error answered before the body was read (404, 405, 403, ...) reached
    Envoy while it still sent the body upstream: Envoy then reset the client's
    HTTP/2 stream, often before the response got out (curl's "Stream error in
    the HTTP/2 framing layer"). Go's net/http reads up to 256 KiB of an unread
    body before it answers; draining to the body limit lets every such Status
    through. A body beyond the limit, or a client that stops sending, is left
    to aiohttp (it closes the connection).
    """
    if not request.body_exists or request.content.is_eof():
        return
    left = limits.MAX_BODY_BYTES + 1
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_SECONDS):
            while left > 0 and not request.content.is_eof():
                chunk = await request.content.read(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)


def with_panic_recovery(handler: Handler) -> Handler:
    """``handler`` whose StatusErrors and unexpected exceptions come back as Status responses with ``Audit-Id``."""

    async def recovered(request: web.Request) -> web.StreamResponse:
        audit_id = audit_id_of(request)
        request[audit.AUDIT_ID] = audit_id
        request[CONTEXT] = ctx = RequestContext(audit_id)
        try:
            response = await handler(request)
        except errors.StatusError as err:
            await drain_body(request)
            response = status_response(err, audit_id, request)
            add_warnings(response, ctx.warnings)  # kube's recorder wrote them to the headers as they came
            debug.set_pf_headers(request, response)
            return response
        except web.HTTPRequestEntityTooLarge:  # aiohttp's body limit: answer kube's Status, not text
            return status_response(errors.too_large(), audit_id)
        except (ConnectionResetError, web.HTTPException):
            raise
        except Exception as exc:  # noqa: BLE001 - the one place unknown errors become 500 Status
            request[audit.PANIC] = exc
            log.exception("audit-id %s: %s %s failed", audit_id, request.method, request.path)
            await drain_body(request)
            return status_response(errors.internal(f"{type(exc).__name__}"), audit_id, request)
        if not response.prepared:
            if response.status >= 400:
                await drain_body(request)
            response.headers["Audit-Id"] = audit_id
            debug.set_pf_headers(request, response)
        return response

    return recovered


async def expect_continue(request: web.Request) -> web.StreamResponse | None:
    """The ``Expect`` handler of the chain's route: ``100-continue`` is answered; any other expectation is a 417
    Status at once, before the body is read (Go's net/http answers 417 too; aiohttp's own answer was text)."""
    expect = request.headers.get("Expect", "")
    if expect.lower() == "100-continue":
        if request.version >= (1, 1):
            await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            request.writer.output_size = 0
        return None
    err = errors.StatusError(417, "ExpectationFailed", f"unsupported Expect header {gofmt.go_quote(expect[:256])}: "
                             "only 100-continue is supported")
    response = status_response(err, audit_id_of(request))
    response.force_close()
    return response
