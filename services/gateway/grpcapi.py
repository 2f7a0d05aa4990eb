"""The public gRPC API (``kapi.api.v1.Resources``, protos/kapi/api/v1/api.proto): each call is its REST request.

A call becomes the HTTP request a REST client would send — method, path
(``/api/v1/namespaces/demo/configmaps/app``), query (selectors, limit,
continue, resourceVersion, dryRun, fieldManager, force, watch), headers
(the call's metadata: ``authorization``, ``impersonate-user``,
``impersonate-group``, ``x-forwarded-client-cert`` from Envoy, ``user-agent``,
...) and body — and runs through the gateway's own handler chain in the
process (services/gateway/inprocess.py). So authentication, impersonation,
APF, authorization (same attributes: ``kubectl auth can-i`` answers the
same), admission, the one write path, audit and metrics are the REST ones.

Answers: below 400, :class:`Response` with the body byte for byte, the
HTTP code and the Warning texts; from 400 on, the gRPC status of the one
table (:func:`kapi.errors.grpc_code`) with the Status JSON in the details
(``grpc-status-details-bin``: google.rpc.Status, one Any of
``kapi.api.v1.StatusDetail``), and in that detail the Warning texts the
refusal carried (kube-apiserver sends the warnings a request gathered with
its error: services/gateway/warning.py). A watch streams one :class:`WatchEvent` per
line the REST watch writes; 410 Expired and other failures after the
stream started are the ERROR event REST sends (kube's cacher and etcd
watchers do the same), and the call ends OK. ``audit-id`` and the APF
headers come back as initial metadata. docs/grpc.md.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Iterable
from typing import Any
from urllib.parse import quote, urlencode

import grpc
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from google.protobuf import any_pb2
from google.rpc import status_pb2
from grpc_status import rpc_status

from kapi import errors, jsonutil
from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc
from services.gateway.context import Handler
from services.gateway.inprocess import Exchange

log = logging.getLogger(__name__)

SERVICE_NAME = api_pb2.DESCRIPTOR.services_by_name["Resources"].full_name  # "kapi.api.v1.Resources"
PATCH_CONTENT_TYPES = {
    api_pb2.JSON_PATCH: "application/json-patch+json",
    api_pb2.MERGE_PATCH: "application/merge-patch+json",
    api_pb2.STRATEGIC_MERGE_PATCH: "application/strategic-merge-patch+json",
    api_pb2.APPLY_PATCH: "application/apply-patch+yaml",
}
JSON = "application/json"
# Metadata that is gRPC's or HTTP/2's own, not a request header a REST client could send.
_TRANSPORT_KEYS = frozenset({"content-type", "content-length", "te", "host", "accept", "accept-encoding",
                             "connection", "transfer-encoding", "upgrade", "expect"})
# Response headers handed back as initial metadata.
_ECHOED_HEADERS = ("audit-id", "x-kubernetes-pf-flowschema-uid", "x-kubernetes-pf-prioritylevel-uid")


# What an RPC does with ref.name and ref.subresource (rest_path's ``names``).
ONE = "one"  # Get, Update, Patch, Delete: the object ``name`` (and its ``subresource``), name required
COLLECTION = "collection"  # List: the collection; a name or subresource is refused (a field selector selects)
WATCHED = "watched"  # Watch: the collection, ``name`` (optional) becomes a metadata.name field selector
CREATED = "created"  # Create: the collection, or NAME/SUBRESOURCE (binding, eviction, token...) when one is named


def rest_path(ref: api_pb2.ResourceRef, *, names: str = ONE) -> str:
    """The REST path of ``ref``: ``/api/v1[/namespaces/NS]/RESOURCE[/NAME[/SUB]]`` or ``/apis/GROUP/VERSION/...``.

    Each part is percent-encoded (a "/" in a name cannot reach another path).
    ``names`` says which of name and subresource the RPC takes (ONE,
    COLLECTION, WATCHED, CREATED above). Raises 400 BadRequest (gRPC
    INVALID_ARGUMENT) when version or resource is empty, when an RPC on one
    object has no name (a Delete without one would be a deletecollection,
    which this API does not offer), or when a name or subresource is given
    where the RPC takes none.
    """
    if not ref.version or not ref.resource:
        raise errors.bad_request("ref.version and ref.resource are required")
    if names == ONE and not ref.name:
        raise errors.bad_request("ref.name is required")
    if names == CREATED and ref.subresource and not ref.name:
        raise errors.bad_request("ref.name is required with ref.subresource")
    if names == CREATED and ref.name and not ref.subresource:
        raise errors.bad_request("ref.name must be empty for Create without ref.subresource: the name is the "
                                 "object's metadata.name")
    if names == COLLECTION and (ref.name or ref.subresource):
        raise errors.bad_request("ref.name and ref.subresource must be empty for List: select objects with "
                                 "field_selector (metadata.name=...)")
    if names == WATCHED and ref.subresource:
        raise errors.bad_request("ref.subresource must be empty for Watch")
    for field in ("group", "version", "namespace", "resource", "name", "subresource"):
        value = getattr(ref, field)
        # a path segment as kube's ValidatePathSegmentName: the router decodes %2F, so "/" would reach another path
        if "/" in value or "%" in value or value in (".", ".."):
            raise errors.bad_request(f"ref.{field}: Invalid value: {value!r}: a path segment may not be '.' or "
                                     "'..' and may not contain '/' or '%'")

    def seg(text: str) -> str:
        return quote(text, safe="")

    path = f"/apis/{seg(ref.group)}/{seg(ref.version)}" if ref.group else f"/api/{seg(ref.version)}"
    if ref.namespace:
        path += f"/namespaces/{seg(ref.namespace)}"
    path += f"/{seg(ref.resource)}"
    if names in (ONE, CREATED) and ref.name:
        path += f"/{seg(ref.name)}"
        if ref.subresource:
            path += f"/{seg(ref.subresource)}"
    return path


def _with_query(path: str, params: Iterable[tuple[str, str]]) -> str:
    pairs = [(k, v) for k, v in params if v != ""]
    return f"{path}?{urlencode(pairs)}" if pairs else path


def _write_params(options: api_pb2.WriteOptions) -> list[tuple[str, str]]:
    return [*(("dryRun", d) for d in options.dry_run), ("fieldManager", options.field_manager),
            ("fieldValidation", options.field_validation)]


def delete_body(options: api_pb2.DeleteOptions) -> bytes:
    """The meta/v1 DeleteOptions JSON of ``options`` (b"" when nothing is set: the REST default)."""
    body: dict[str, Any] = {}
    if options.HasField("grace_period_seconds"):
        body["gracePeriodSeconds"] = options.grace_period_seconds
    pre = options.preconditions
    if pre.HasField("uid") or pre.HasField("resource_version"):
        body["preconditions"] = {**({"uid": pre.uid} if pre.HasField("uid") else {}),
                                 **({"resourceVersion": pre.resource_version}
                                    if pre.HasField("resource_version") else {})}
    if options.propagation_policy:
        body["propagationPolicy"] = options.propagation_policy
    if options.dry_run:
        body["dryRun"] = list(options.dry_run)
    if not body:
        return b""
    return jsonutil.dumps({"kind": "DeleteOptions", "apiVersion": "v1", **body})


def warning_texts(values: Iterable[str]) -> list[str]:
    """The texts of ``Warning: 299 - "text"`` header values (RFC 7234 warn-text, ``\\"`` unescaped)."""
    out = []
    for value in values:
        code, _, rest = value.partition(" - ")
        text = rest.strip()
        if len(text) >= 2 and text[0] == text[-1] == '"':
            text = text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
        out.append(text if code.strip() == "299" else value)
    return out


@functools.lru_cache(maxsize=256)
def _der(pem: bytes) -> bytes:
    return x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)


def _peer(context: grpc.aio.ServicerContext) -> tuple[bytes | None, tuple[str, int] | None]:
    """The TLS client certificate (DER) of the call's connection, and the peer's (host, port)."""
    pems = context.auth_context().get("x509_pem_cert") or []
    certificate = _der(pems[0]) if pems else None
    peer = context.peer() or ""  # "ipv4:127.0.0.1:5555", "ipv6:[::1]:5555"
    _, _, address = peer.partition(":")
    host, _, port = address.rpartition(":")
    return certificate, ((host.strip("[]"), int(port)) if port.isdigit() else None)


def _headers(context: grpc.aio.ServicerContext, content_type: str) -> list[tuple[str, str]]:
    """The call's metadata as request headers (binary and gRPC's own keys left out), plus Accept and Content-Type."""
    out = [(k, v) for k, v in context.invocation_metadata() or ()
           if isinstance(v, str) and not k.startswith((":", "grpc-")) and not k.endswith("-bin")
           and k not in _TRANSPORT_KEYS]
    out.append(("Accept", JSON))
    if content_type:
        out.append(("Content-Type", content_type))
    return out


def _timeout_param(context: grpc.aio.ServicerContext) -> tuple[str, str]:
    """``timeout`` from the call's deadline (the REST ``?timeout``, a Go duration), or nothing."""
    remaining = context.time_remaining()
    if remaining is None or remaining <= 0 or remaining > 1e6:
        return ("timeout", "")
    return ("timeout", f"{max(remaining, 0.001):.3f}s")


async def _abort(context: grpc.aio.ServicerContext, body: bytes, code: int, headers: Any) -> None:
    """Fail the call with the gRPC code of the Status in ``body`` (HTTP ``code``) and that Status in the details,
    with the texts of the answer's ``Warning`` headers (``headers``, None for a refusal made here: none)."""
    try:
        status = jsonutil.loads(body)
        if not isinstance(status, dict) or status.get("kind") != "Status":
            raise ValueError("not a Status")
    except ValueError:
        status = errors.StatusError(code, "", body.decode(errors="replace")[:errors.MAX_GRPC_MESSAGE_CHARS]).status()
        body = jsonutil.dumps(status)
    grpc_status = errors.grpc_code(int(status.get("code") or code), str(status.get("reason") or ""))
    detail = any_pb2.Any()
    warnings = warning_texts(headers.getall("Warning", [])) if headers is not None else []
    detail.Pack(api_pb2.StatusDetail(status=body, warnings=warnings))
    message = str(status.get("message") or "")[:errors.MAX_GRPC_MESSAGE_CHARS]
    rich = rpc_status.to_status(status_pb2.Status(code=grpc_status.value[0], message=message, details=[detail]))
    trailers = [*rich.trailing_metadata, *((k, headers[k]) for k in _ECHOED_HEADERS if headers and k in headers)]
    await context.abort(rich.code, rich.details, trailing_metadata=tuple(trailers))


def _split_event(line: bytes) -> api_pb2.WatchEvent:
    """One REST watch line (``{"type":"ADDED","object":{...}}``) as a WatchEvent, the object's bytes kept as sent."""
    prefix, marker = b'{"type":"', b'","object":'
    if line.startswith(prefix) and line.endswith(b"}"):
        end = line.find(marker, len(prefix))
        if end > 0:
            return api_pb2.WatchEvent(type=line[len(prefix):end].decode(), object=line[end + len(marker):-1])
    event = jsonutil.loads(line)  # another encoder's spacing: decode and re-encode the object
    return api_pb2.WatchEvent(type=str(event.get("type", "")), object=jsonutil.dumps(event.get("object")))


class ResourcesServicer(api_pb2_grpc.ResourcesServicer):
    """``kapi.api.v1.Resources`` over the gateway's handler chain ``handler`` on application ``app``."""

    def __init__(self, handler: Handler, app: web.Application) -> None:
        self._handler, self._app = handler, app

    def _exchange(self, context: grpc.aio.ServicerContext, method: str, path_qs: str, body: bytes = b"",
                  content_type: str = "") -> Exchange:
        certificate, peername = _peer(context)
        return Exchange(self._handler, self._app, method, path_qs, _headers(context, content_type), body,
                        peer_certificate=certificate, peername=peername)

    async def _unary(self, context: grpc.aio.ServicerContext, method: str, path: str,
                     params: list[tuple[str, str]], body: bytes = b"", content_type: str = "") -> api_pb2.Response:
        params.append(_timeout_param(context))
        async with self._exchange(context, method, _with_query(path, params), body, content_type) as exchange:
            code, headers = await exchange.head()
            data = await exchange.body()
        if code >= 400:
            await _abort(context, data, code, headers)
        await context.send_initial_metadata(tuple((k, headers[k]) for k in _ECHOED_HEADERS if k in headers))
        return api_pb2.Response(object=data, code=code, warnings=warning_texts(headers.getall("Warning", [])))

    async def _refuse(self, context: grpc.aio.ServicerContext, err: errors.StatusError) -> None:
        await _abort(context, jsonutil.dumps(err.status()), err.code, None)

    async def Get(self, request: api_pb2.GetRequest,  # noqa: N802 (gRPC method names)
                  context: grpc.aio.ServicerContext) -> api_pb2.Response:
        """GET ``ref`` (object or subresource); errors as in the module docstring."""
        try:
            path = rest_path(request.ref)
        except errors.StatusError as err:
            await self._refuse(context, err)
        return await self._unary(context, "GET", path, [("resourceVersion", request.resource_version)])

    async def List(self, request: api_pb2.ListRequest,  # noqa: N802
                   context: grpc.aio.ServicerContext) -> api_pb2.Response:
        """LIST the collection of ``ref`` (all namespaces when ``ref.namespace`` is "")."""
        try:
            path = rest_path(request.ref, names=COLLECTION)
        except errors.StatusError as err:
            await self._refuse(context, err)
        return await self._unary(context, "GET", path, [
            ("labelSelector", request.label_selector), ("fieldSelector", request.field_selector),
            ("limit", str(request.limit) if request.limit else ""), ("continue", getattr(request, "continue")),
            ("resourceVersion", request.resource_version),
            ("resourceVersionMatch", request.resource_version_match)])

    async def Create(self, request: api_pb2.CreateRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> api_pb2.Response:
        """POST ``object`` to the collection of ``ref`` (or to ``ref``'s subresource when it names one)."""
        try:
            path = rest_path(request.ref, names=CREATED)
        except errors.StatusError as err:
            await self._refuse(context, err)
        return await self._unary(context, "POST", path, _write_params(request.options), request.object, JSON)

    async def Update(self, request: api_pb2.UpdateRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> api_pb2.Response:
        """PUT ``object`` at ``ref``."""
        try:
            path = rest_path(request.ref)
        except errors.StatusError as err:
            await self._refuse(context, err)
        return await self._unary(context, "PUT", path, _write_params(request.options), request.object, JSON)

    async def Patch(self, request: api_pb2.PatchRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> api_pb2.Response:
        """PATCH ``ref`` with ``patch`` of ``type``; 400 BadRequest naming the PatchType values for another."""
        try:
            path = rest_path(request.ref)
            if request.type not in PATCH_CONTENT_TYPES:
                names = ", ".join(api_pb2.PatchType.Name(t) for t in PATCH_CONTENT_TYPES)
                raise errors.bad_request(f"unknown patch type {request.type}: the type must be one of {names}")
        except errors.StatusError as err:
            await self._refuse(context, err)
        params = [*_write_params(request.options), ("force", "true" if request.force else "")]
        return await self._unary(context, "PATCH", path, params, request.patch,
                                 PATCH_CONTENT_TYPES.get(request.type, ""))

    async def Delete(self, request: api_pb2.DeleteRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> api_pb2.Response:
        """DELETE ``ref`` with ``options`` as the DeleteOptions body."""
        try:
            path = rest_path(request.ref)
        except errors.StatusError as err:
            await self._refuse(context, err)
        body = delete_body(request.options)
        return await self._unary(context, "DELETE", path, [], body, JSON if body else "")

    async def Watch(self, request: api_pb2.WatchRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext) -> AsyncIterator[api_pb2.WatchEvent]:
        """WATCH the collection of ``ref`` (one object when ``ref.name`` is set); one WatchEvent per REST line."""
        try:
            path = rest_path(request.ref, names=WATCHED)
        except errors.StatusError as err:
            await self._refuse(context, err)
        fields = request.field_selector
        if request.ref.name:
            by_name = f"metadata.name={request.ref.name}"
            fields = f"{fields},{by_name}" if fields else by_name
        params = [("watch", "1"), ("labelSelector", request.label_selector), ("fieldSelector", fields),
                  ("resourceVersion", request.resource_version),
                  ("resourceVersionMatch", request.resource_version_match),
                  ("allowWatchBookmarks", "true" if request.allow_watch_bookmarks else ""),
                  ("sendInitialEvents", "true" if request.send_initial_events else ""),
                  ("timeoutSeconds", str(request.timeout_seconds) if request.timeout_seconds else "")]
        async with self._exchange(context, "GET", _with_query(path, params)) as exchange:
            code, headers = await exchange.head()
            if code >= 400:
                await _abort(context, await exchange.body(), code, headers)
            await context.send_initial_metadata(tuple((k, headers[k]) for k in _ECHOED_HEADERS if k in headers))
            pending = b""
            async for chunk in exchange.chunks():
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield _split_event(line)
