"""Kubernetes ``Status`` errors and the single table that maps them to gRPC and HTTP.

Every refusal in kapi is a :class:`StatusError` carrying a ``meta/v1 Status``
object (API conventions, "Response Status Kind"). Services raise it; the gRPC
layer turns it into a status code plus the Status JSON in the trailing
metadata key ``kapi-status-bin``; the gateway turns it back and renders the
Status unchanged with its ``code`` as the HTTP status. The warnings a request
gathered before it was refused ride along in ``kapi-warnings-bin``
(:attr:`StatusError.warnings`): kube-apiserver's warning recorder writes them
to the response headers whatever the answer (k8s.io/apiserver
``pkg/endpoints/filters/warning.go``). Its audit annotations (PodSecurity's
``enforce-policy`` and ``audit-violations`` of a refused pod) ride in
``kapi-audit-annotations-bin`` (:attr:`StatusError.audit_annotations`), as
kube's admission records them on the audit event of a refused request too.

The constructors mirror k8s.io/apimachinery/pkg/api/errors (NewNotFound,
NewAlreadyExists, NewConflict, NewInvalid, NewForbidden, ...), including
their message formats, because clients (kubectl) print those messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc

from kapi import jsonutil

STATUS_METADATA_KEY = "kapi-status-bin"
WARNINGS_METADATA_KEY = "kapi-warnings-bin"  # a JSON list of the refused request's warning texts
AUDIT_ANNOTATIONS_METADATA_KEY = "kapi-audit-annotations-bin"  # a JSON object: its audit annotations

# reason -> (HTTP code, gRPC code). The one mapping table (docs/architecture.md, "Failure policy").
_REASONS: dict[str, tuple[int, grpc.StatusCode]] = {
    "BadRequest": (400, grpc.StatusCode.INVALID_ARGUMENT),
    "Unauthorized": (401, grpc.StatusCode.UNAUTHENTICATED),
    "Forbidden": (403, grpc.StatusCode.PERMISSION_DENIED),
    "NotFound": (404, grpc.StatusCode.NOT_FOUND),
    "MethodNotAllowed": (405, grpc.StatusCode.UNIMPLEMENTED),
    "NotAcceptable": (406, grpc.StatusCode.INVALID_ARGUMENT),
    "AlreadyExists": (409, grpc.StatusCode.ALREADY_EXISTS),
    "Conflict": (409, grpc.StatusCode.ABORTED),
    "Gone": (410, grpc.StatusCode.OUT_OF_RANGE),
    "Expired": (410, grpc.StatusCode.OUT_OF_RANGE),
    "RequestEntityTooLarge": (413, grpc.StatusCode.INVALID_ARGUMENT),
    "UnsupportedMediaType": (415, grpc.StatusCode.INVALID_ARGUMENT),
    "Invalid": (422, grpc.StatusCode.INVALID_ARGUMENT),
    "TooManyRequests": (429, grpc.StatusCode.RESOURCE_EXHAUSTED),
    "InternalError": (500, grpc.StatusCode.INTERNAL),
    "ServiceUnavailable": (503, grpc.StatusCode.UNAVAILABLE),
    "Timeout": (504, grpc.StatusCode.DEADLINE_EXCEEDED),
}

# gRPC code -> reason, for RPC failures that carry no Status (transport errors).
_GRPC_FALLBACK: dict[grpc.StatusCode, str] = {
    grpc.StatusCode.UNAVAILABLE: "ServiceUnavailable",
    grpc.StatusCode.DEADLINE_EXCEEDED: "Timeout",
    grpc.StatusCode.CANCELLED: "ServiceUnavailable",
    grpc.StatusCode.UNAUTHENTICATED: "Unauthorized",
    grpc.StatusCode.PERMISSION_DENIED: "Forbidden",
    grpc.StatusCode.NOT_FOUND: "NotFound",
    grpc.StatusCode.ALREADY_EXISTS: "AlreadyExists",
    grpc.StatusCode.ABORTED: "Conflict",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "TooManyRequests",
    grpc.StatusCode.OUT_OF_RANGE: "Expired",
}


def grpc_code(code: int, reason: str) -> grpc.StatusCode:
    """The gRPC status code of a Status with HTTP ``code`` and ``reason`` (e.g. 404 NotFound -> NOT_FOUND).

    By ``reason`` from the one table; a reason it does not know (an admission
    webhook's own, or none) goes by the first reason with the same HTTP code
    (403 -> PERMISSION_DENIED); else INTERNAL for 5xx, INVALID_ARGUMENT below.
    """
    if reason in _REASONS:
        return _REASONS[reason][1]
    for http, grpc_status in _REASONS.values():
        if http == code:
            return grpc_status
    return grpc.StatusCode.INTERNAL if code >= 500 else grpc.StatusCode.INVALID_ARGUMENT


@dataclass(frozen=True)
class Cause:
    """One ``StatusCause``: ``type`` (e.g. FieldValueRequired), ``message``, ``field`` (JSON path)."""

    type: str
    message: str
    field: str = ""


# metav1.StatusDetails' field order, as kube-apiserver encodes it.
_DETAILS_ORDER = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")


class StatusError(Exception):
    """An error that is a Kubernetes ``Status`` (kind Status, apiVersion v1).

    ``code`` is the HTTP status, ``reason`` a StatusReason such as NotFound,
    ``details`` the optional ``StatusDetails`` (name, group, kind, causes,
    retryAfterSeconds). ``warnings`` are the Warning texts the request
    gathered before this refusal (admission webhooks' and policies',
    PrepareForCreate's, unknown fields under ``fieldValidation=Warn``); they
    are not part of the Status, travel beside it over gRPC
    (:func:`trailing_metadata`) and are sent as ``Warning`` headers with the
    error, as kube-apiserver's warning recorder does. ``audit_annotations``: the audit annotations admission
    gathered before the refusal (key -> value; ``kapi-audit-annotations-bin``). ``empty_details``: encode
    ``"details": {}`` even when nothing is in it (a Go Status whose Details pointer is set to an empty struct, as
    NewGenericServerResponse's).
    """

    def __init__(self, code: int, reason: str, message: str, details: Mapping[str, Any] | None = None, *,
                 empty_details: bool = False):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.empty_details = empty_details
        self.warnings: list[str] = []
        self.audit_annotations: dict[str, str] = {}
        # the Status's metadata (ListMeta): a list's new continue token when its own expired
        # (etcd3 errors.go handleCompactedErrorForPaging); empty for every other error
        self.list_meta: dict[str, Any] = {}

    def status(self) -> dict[str, Any]:
        """The Status object as a JSON-ready dict, in metav1.Status's field order (kind, apiVersion, metadata,
        status, message, reason, details, code; details: name, group, kind, uid, causes, retryAfterSeconds),
        with empty ``message``/``reason``/``details`` omitted as Go's ``omitempty`` does."""
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": dict(self.list_meta),
                                "status": "Failure"}
        if self.message:
            body["message"] = self.message
        if self.reason:
            body["reason"] = self.reason
        if self.details or self.empty_details:
            details = {k: self.details[k] for k in _DETAILS_ORDER if k in self.details}
            details.update((k, v) for k, v in self.details.items() if k not in details)
            body["details"] = details
        body["code"] = self.code
        return body

    @property
    def grpc_code(self) -> grpc.StatusCode:
        """The gRPC status code for this error (one table: :func:`grpc_code`)."""
        return grpc_code(self.code, self.reason)

    @property
    def retry_after(self) -> int | None:
        """Seconds for a Retry-After header, or None."""
        value = self.details.get("retryAfterSeconds")
        return int(value) if value else None

    @classmethod
    def from_status(cls, status: Mapping[str, Any]) -> StatusError:
        """Rebuild an error from a Status dict (as found in gRPC trailing metadata).

        An empty ``reason`` stays empty when the Status has a ``code`` (an admission webhook's denial keeps
        the webhook's code and no reason, as kube); only a Status with neither is an InternalError.
        """
        reason = str(status.get("reason") or ("" if status.get("code") else "InternalError"))
        code = int(status.get("code") or _REASONS.get(reason, (500,))[0])
        details = status.get("details")
        err = cls(code, reason, str(status.get("message", "")), details, empty_details=details == {})
        meta = status.get("metadata")
        if isinstance(meta, dict):
            err.list_meta = dict(meta)
        return err

    def __repr__(self) -> str:
        return f"StatusError({self.code}, {self.reason!r}, {self.message!r})"


def _details(name: str, group: str, kind: str) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    return details


def qualified(resource: str, group: str) -> str:
    """``resource.group`` as Kubernetes prints a GroupResource ("pods", "deployments.apps")."""
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, name: str, group: str = "") -> StatusError:
    """404 NotFound: ``configmaps "app" not found`` (apierrors.NewNotFound)."""
    return StatusError(404, "NotFound", f'{qualified(resource, group)} "{name}" not found',
                       _details(name, group, resource))


def already_exists(resource: str, name: str, group: str = "") -> StatusError:
    """409 AlreadyExists: ``configmaps "app" already exists`` (apierrors.NewAlreadyExists)."""
    return StatusError(409, "AlreadyExists", f'{qualified(resource, group)} "{name}" already exists',
                       _details(name, group, resource))


def conflict(resource: str, name: str, reason_text: str, group: str = "") -> StatusError:
    """409 Conflict: ``Operation cannot be fulfilled on configmaps "app": <reason>`` (apierrors.NewConflict)."""
    return StatusError(409, "Conflict",
                       f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {reason_text}',
                       _details(name, group, resource))


def invalid(kind: str, name: str, causes: Iterable[Cause], group: str = "") -> StatusError:
    """422 Invalid with field causes (apierrors.NewInvalid): ``ConfigMap "x" is invalid: [a: Required value, ...]``.

    Every cause is kept in ``details.causes``; the message lists each distinct one once (ErrorList.ToAggregate).
    """
    causes = list(causes)
    parts = list(dict.fromkeys(f"{c.field}: {c.message}" if c.field else c.message for c in causes))
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    details = _details(name, group, kind)
    details["causes"] = [{"reason": c.type, "message": c.message, "field": c.field} for c in causes]
    return StatusError(422, "Invalid", f'{kind}{"." + group if group else ""} "{name}" is invalid: {summary}', details)


def invalid_patch(value: str, detail: str) -> StatusError:
    """The 422 kube's patchers answer when the patched object does not decode into the kind's Go struct
    (apiserver handlers/patch.go: ``NewInvalid(schema.GroupKind{}, "", [field.Invalid("patch", value,
    detail)])``): `` "" is invalid: patch: Invalid value: "<value>": <detail>`` with one ``FieldValueInvalid``
    cause on ``patch``. ``value`` is the patched object's JSON (JSON and merge patches) or the strategic merge
    patch as Go's %+v prints it; ``detail`` the decoder's error."""
    from kapi.gofmt import go_quote

    return invalid("", "", [Cause("FieldValueInvalid", f"Invalid value: {go_quote(value)}: {detail}", "patch")])


def bad_request(message: str) -> StatusError:
    """400 BadRequest with ``message`` (apierrors.NewBadRequest)."""
    return StatusError(400, "BadRequest", message)


def forbidden(resource: str, name: str, reason_text: str, group: str = "") -> StatusError:
    """403 Forbidden (apierrors.NewForbidden): ``pods "x" is forbidden: <reason>``.

    Without a name: ``pods is forbidden: <reason>``.
    """
    target = qualified(resource, group)
    prefix = f'{target} "{name}"' if name else target
    return StatusError(403, "Forbidden", f"{prefix} is forbidden: {reason_text}", _details(name, group, resource))


def forbidden_message(message: str) -> StatusError:
    """403 Forbidden with a message that is already complete (non-resource URLs)."""
    return StatusError(403, "Forbidden", message)


def unauthorized(message: str = "Unauthorized") -> StatusError:
    """401 Unauthorized (apierrors.NewUnauthorized)."""
    return StatusError(401, "Unauthorized", message)


def too_many_requests(message: str, retry_after_seconds: int = 1) -> StatusError:
    """429 TooManyRequests with ``details.retryAfterSeconds`` (sent as Retry-After by the gateway)."""
    return StatusError(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after_seconds})


def expired(message: str) -> StatusError:
    """410 Expired, e.g. ``too old resource version: 5 (10)`` (storage compaction)."""
    return StatusError(410, "Expired", message)


def gone(message: str) -> StatusError:
    """410 Gone (apierrors.NewGone)."""
    return StatusError(410, "Gone", message)


def method_not_allowed(resource: str, verb: str, group: str = "") -> StatusError:
    """405 MethodNotAllowed (apierrors.NewMethodNotSupported): ``watch is not supported on resources of kind
    "componentstatuses"`` (the qualified resource quoted, Go's %q)."""
    message = f'{verb} is not supported on resources of kind "{qualified(resource, group)}"'
    return StatusError(405, "MethodNotAllowed", message, _details("", group, resource))


def no_route() -> StatusError:
    """405 for a method no route serves at the path (the storage does not implement the verb, so kube's API
    installer registers no route for it): go-restful's ServiceError through kube's serviceErrorHandler
    (apiserver pkg/server/handler.go) as NewGenericServerResponse(405): reason MethodNotAllowed, ``the server
    does not allow this method on the requested resource``, ``details: {}``, no Allow header."""
    return StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource",
                       empty_details=True)


def not_acceptable(message: str) -> StatusError:
    """406 NotAcceptable for an Accept header no serializer matches."""
    return StatusError(406, "NotAcceptable", message)


def unsupported_media_type(content_type: str) -> StatusError:
    """415 UnsupportedMediaType for a request body content type with no decoder."""
    return StatusError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf; got {content_type}")  # noqa: E501


def too_large(message: str = "Request entity too large: limit is 3145728") -> StatusError:
    """413 RequestEntityTooLarge."""
    return StatusError(413, "RequestEntityTooLarge", message)


def internal(message: str) -> StatusError:
    """500 InternalError: ``Internal error occurred: <message>``."""
    return StatusError(500, "InternalError", f"Internal error occurred: {message}")


def request_timeout() -> StatusError:
    """504 Timeout of a request past its deadline (kube's WithTimeoutForNonLongRunningRequests)."""
    return StatusError(504, "Timeout", "Timeout: request did not complete within requested timeout - context "
                       "deadline exceeded", {})


def unavailable(message: str, retry_after_seconds: int = 1) -> StatusError:
    """503 ServiceUnavailable with Retry-After."""
    return StatusError(503, "ServiceUnavailable", message, {"retryAfterSeconds": retry_after_seconds})


def timeout(message: str, retry_after_seconds: int = 1) -> StatusError:
    """504 Timeout (apierrors.NewTimeoutError)."""
    return StatusError(504, "Timeout", message, {"retryAfterSeconds": retry_after_seconds})


# ---------------------------------------------------------------- gRPC glue


# The largest Status carried in trailing metadata. Every kapi channel and server accepts metadata up to
# kapi.grpcutil.MAX_METADATA_BYTES (16 MiB; gRPC's default of 8 KiB soft, 16 KiB hard turned a 422 quoting a long
# name into 429 "received metadata size exceeds hard limit"); a Status beyond this bound (more than a whole request
# body quoted several times) is cut down to fit, keeping its code, reason and details.
MAX_STATUS_METADATA_BYTES = 8 * 1024 * 1024
# The gRPC status message (grpc-message, percent-encoded) is only for logs: the Status travels in the trailers.
MAX_GRPC_MESSAGE_CHARS = 1024
# Warnings carried beside a Status: at most this many, each cut to this many characters (the gateway's recorder
# sends at most 4096 characters of them in all: services/gateway/warning.py).
MAX_METADATA_WARNINGS = 256
MAX_METADATA_WARNING_CHARS = 4096


def trailing_metadata(err: StatusError) -> tuple[tuple[str, bytes], ...]:
    """The trailing metadata that carries ``err``'s Status to the caller (at most MAX_STATUS_METADATA_BYTES) and,
    when it has any, its warnings (``kapi-warnings-bin``: a JSON list of strings, at most
    :data:`MAX_METADATA_WARNINGS` of :data:`MAX_METADATA_WARNING_CHARS` characters), and its audit annotations
    (``kapi-audit-annotations-bin``: a JSON object of strings)."""
    body = jsonutil.dumps(err.status())
    if len(body) > MAX_STATUS_METADATA_BYTES:
        status = err.status()
        keep = MAX_STATUS_METADATA_BYTES // 8  # JSON escapes may grow a character to 6 bytes
        status["message"] = status["message"][:keep] + "..."
        details = dict(status.get("details") or {})
        if details.get("causes"):
            details["causes"] = [{**c, "message": str(c.get("message", ""))[:1024]} for c in details["causes"]
                                 ][:100]
            status["details"] = details
        body = jsonutil.dumps(status)
    pairs: tuple[tuple[str, bytes], ...] = ((STATUS_METADATA_KEY, body),)
    if err.warnings:
        warnings = [w[:MAX_METADATA_WARNING_CHARS] for w in err.warnings[:MAX_METADATA_WARNINGS]]
        pairs += ((WARNINGS_METADATA_KEY, jsonutil.dumps(warnings)),)
    if err.audit_annotations:
        pairs += ((AUDIT_ANNOTATIONS_METADATA_KEY, jsonutil.dumps(err.audit_annotations)),)
    return pairs


def annotations_of_metadata(value: bytes) -> dict[str, str]:
    """The audit annotations of a ``kapi-audit-annotations-bin`` value (a JSON object; anything else or
    non-string entries: ignored)."""
    try:
        decoded = jsonutil.loads(value)
    except ValueError:
        return {}
    if not isinstance(decoded, dict):
        return {}
    return {k: v for k, v in decoded.items() if isinstance(k, str) and isinstance(v, str)}


def warnings_of_metadata(value: bytes) -> list[str]:
    """The warning texts of a ``kapi-warnings-bin`` value (a JSON list; anything else or non-strings: ignored)."""
    try:
        decoded = jsonutil.loads(value)
    except ValueError:
        return []
    return [w for w in decoded if isinstance(w, str)][:MAX_METADATA_WARNINGS] if isinstance(decoded, list) else []


async def abort(context: grpc.aio.ServicerContext, err: StatusError) -> None:
    """Fail the current RPC with ``err`` (gRPC code from the table, Status in trailers). Never returns."""
    context.set_trailing_metadata(trailing_metadata(err))
    await context.abort(err.grpc_code, err.message[:MAX_GRPC_MESSAGE_CHARS])


def from_rpc_error(exc: grpc.RpcError, service: str) -> StatusError:
    """Turn a failed RPC into a StatusError.

    If the server attached a Status (``kapi-status-bin``), it is returned as
    is, with the warnings of ``kapi-warnings-bin`` as its ``warnings`` and the annotations of
    ``kapi-audit-annotations-bin`` as its ``audit_annotations``.
    Otherwise the failure is the transport's: UNAVAILABLE -> 503,
    DEADLINE_EXCEEDED -> 504, anything else -> 500, naming ``service``.
    """
    metadata = exc.trailing_metadata() if hasattr(exc, "trailing_metadata") else None
    status = warnings = annotations = None
    for key, value in metadata or ():
        if key == STATUS_METADATA_KEY:
            status = value
        elif key == WARNINGS_METADATA_KEY:
            warnings = value
        elif key == AUDIT_ANNOTATIONS_METADATA_KEY:
            annotations = value
    if status is not None:
        err = StatusError.from_status(jsonutil.loads(status))
        if warnings is not None:
            err.warnings = warnings_of_metadata(warnings)
        if annotations is not None:
            err.audit_annotations = annotations_of_metadata(annotations)
        return err
    code = exc.code() if hasattr(exc, "code") else None
    details = exc.details() if hasattr(exc, "details") else str(exc)
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return timeout(f"The {service} service did not answer in time")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        return unavailable(f"The {service} service is unavailable: {details}")
    reason = _GRPC_FALLBACK.get(code) if code is not None else None
    if reason is not None:
        http, _ = _REASONS[reason]
        return StatusError(http, reason, details or reason)
    return internal(f"{service}: {details}")
