"""Audit events at the gateway (k8s.io/apiserver ``pkg/endpoints/filters/audit.go``).

With ``--audit-policy-file`` and a backend (``--audit-log-path`` and/or
``--audit-webhook-config-file``) every request the policy selects produces
``audit.k8s.io/v1`` Events, one per stage:

- ``RequestReceived`` once the user is known (after authentication and
  impersonation; the policy is evaluated against the authenticated user),
- ``ResponseStarted`` when a long-running response (a watch) sends its headers,
- ``ResponseComplete`` when the response is finished (for a watch: when it ends),
- ``Panic`` instead of ResponseComplete when the handler failed unexpectedly (500).

Requests refused before the user is known (401) are recorded at
ResponseComplete with an empty user, like kube's failed-authentication audit.
Level Metadata records who/what/when/outcome only; Request adds the request
body (``requestObject``), RequestResponse adds the response body
(``responseObject``). So a Secret's data is never written below level Request.
The ``Audit-Id`` response header carries ``auditID`` (a client may send its own).

Hooks, all no-ops without an :class:`Auditor`: :func:`with_audit` wraps the
chain, :func:`received` is called by the chain with the request's attributes,
:func:`on_response_prepare` is an aiohttp signal handler, :data:`PANIC` marks
a request whose handler raised. Source: "Auditing" (kubernetes.io) and the
audit.k8s.io/v1 Event reference.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import yaml
from aiohttp import web

from kapi import jsonutil, safedecode
from kapi.attributes import Attributes, UserInfo
from services.gateway.auditbackends import Backend, LogBackend, WebhookBackend
from services.gateway.auditpolicy import Decision, Level, Policy, load_policy
from services.gateway.requestinfo import resolve

log = logging.getLogger(__name__)

AUDIT_ID = web.RequestKey("kapi.audit.id", str)  # the audit ID (set by the chain)
PANIC = web.RequestKey("kapi.audit.panic", BaseException)  # the exception that became a 500
ATTRIBUTES = web.RequestKey("kapi.audit.attributes", Attributes)  # the request's Attributes once known
_BODY_VERBS = frozenset({"create", "update", "patch", "deletecollection", "delete"})
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def timestamp(seconds: float) -> str:
    """metav1.MicroTime text: ``2024-05-01T10:00:00.123456Z``."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def user_json(user: UserInfo) -> dict[str, Any]:
    """authentication/v1 UserInfo as audit events carry it (empty fields left out)."""
    out: dict[str, Any] = {"username": user.username}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra}
    return out


def source_ips(request: web.Request) -> list[str]:
    """X-Forwarded-For entries, then X-Real-Ip, then the peer address, without repeats (kube's SourceIPs)."""
    ips: list[str] = [ip.strip() for ip in request.headers.get("X-Forwarded-For", "").split(",") if ip.strip()]
    real = request.headers.get("X-Real-Ip", "").strip()
    for ip in (real, request.remote or ""):
        if ip and ip not in ips:
            ips.append(ip)
    return ips


def _strip_managed_fields(obj: Any) -> Any:
    if isinstance(obj, dict):
        meta = obj.get("metadata")
        if isinstance(meta, dict) and "managedFields" in meta:
            obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
        items = obj.get("items")
        if isinstance(items, list):
            obj = {**obj, "items": [_strip_managed_fields(i) for i in items]}
    return obj


def _decode(body: bytes, content_type: str) -> Any:
    """A request/response body as JSON data (JSON or YAML); None if it is neither (e.g. protobuf)."""
    if not body:
        return None
    try:
        return jsonutil.loads(body)
    except ValueError:
        pass
    if "yaml" in content_type:
        try:
            return safedecode.load_yaml(body)
        except yaml.YAMLError:
            return None
    return None


@dataclass
class _Context:
    """One request's audit state (kept on the request)."""

    auditor: Auditor
    audit_id: str
    received: float
    attrs: Attributes | None = None
    impersonator: UserInfo | None = None
    decision: Decision | None = None
    response: web.StreamResponse | None = None
    done: bool = False
    annotations: dict[str, str] = field(default_factory=dict)


_CONTEXT = web.RequestKey("kapi.audit.context", _Context)


def annotate(request: web.Request, key: str, value: str) -> None:
    """Add the audit annotation ``key: value`` to ``request``'s audit events (kube's ``audit.AddAuditAnnotation``).

    The first value of a key wins (a later, different one is logged and
    dropped, as kube's ``addAuditAnnotationLocked``); the annotations are
    kept in key order, the order Go's JSON encoding of the Event's
    ``annotations`` map writes them. They appear on the events emitted after
    this call (so ResponseComplete, not RequestReceived, for the authorization
    and admission annotations). A no-op when the request is not audited.
    Source: k8s.io/apiserver ``pkg/audit/context.go``.
    """
    ctx: _Context | None = request.get(_CONTEXT)
    if ctx is None:
        return
    old = ctx.annotations.get(key)
    if old is not None:
        if old != value:
            log.warning("audit %s: annotation %r already set to %r, not %r", ctx.audit_id, key, old, value)
        return
    ctx.annotations[key] = value
    ctx.annotations = dict(sorted(ctx.annotations.items()))


class Auditor:
    """A policy plus backends; builds events and hands them to every backend."""

    def __init__(self, policy: Policy, backends: list[Backend], clock: Callable[[], float] = time.time) -> None:
        self.policy = policy
        self.backends = backends
        self.clock = clock

    def emit(self, event: dict[str, Any]) -> None:
        """Give one event to every backend; a failing backend is logged, never fails the request."""
        for backend in self.backends:
            try:
                backend.process([event])
            except Exception:  # noqa: BLE001 - auditing must not break serving
                log.exception("audit backend %s failed", type(backend).__name__)

    async def close(self) -> None:
        """Flush and close every backend."""
        for backend in self.backends:
            await backend.close()

    def event(self, ctx: _Context, stage: str, request: web.Request, response_status: dict[str, Any] | None = None,
              request_object: Any = None, response_object: Any = None) -> dict[str, Any]:
        """The Event of ``stage`` for the request in ``ctx`` (fields as audit.k8s.io/v1 Event)."""
        attrs, decision = ctx.attrs, ctx.decision
        assert attrs is not None and decision is not None
        user = ctx.impersonator or attrs.user
        event: dict[str, Any] = {
            "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": decision.level.text, "auditID": ctx.audit_id,
            "stage": stage, "requestURI": str(request.rel_url), "verb": attrs.verb, "user": user_json(user)}
        if ctx.impersonator is not None:
            event["impersonatedUser"] = user_json(attrs.user)
        event["sourceIPs"] = source_ips(request)
        if request.headers.get("User-Agent"):
            event["userAgent"] = request.headers["User-Agent"]
        if attrs.resource_request:
            ref = {"resource": attrs.resource, "namespace": attrs.namespace, "name": attrs.name,
                   "apiGroup": attrs.api_group, "apiVersion": attrs.api_version, "subresource": attrs.subresource}
            event["objectRef"] = {k: v for k, v in ref.items() if v}
        if response_status is not None:
            event["responseStatus"] = response_status
        if request_object is not None:
            event["requestObject"] = request_object
        if response_object is not None:
            event["responseObject"] = response_object
        event["requestReceivedTimestamp"] = timestamp(ctx.received)
        event["stageTimestamp"] = timestamp(self.clock())
        if ctx.annotations:
            event["annotations"] = dict(ctx.annotations)
        return event


def from_args(args: argparse.Namespace) -> Auditor | None:
    """The Auditor configured by the ``--audit-*`` flags, or None (auditing off).

    Auditing is on when ``--audit-policy-file`` and at least one backend are
    given (as kube-apiserver). Raises SystemExit with a message for an
    unreadable or invalid policy or webhook kubeconfig.
    """
    if not args.audit_policy_file:
        return None
    try:
        policy = load_policy(args.audit_policy_file)
        backends: list[Backend] = []
        if args.audit_log_path:
            backends.append(LogBackend(args.audit_log_path, args.audit_log_maxsize, args.audit_log_maxbackup,
                                       args.audit_log_maxage))
        if args.audit_webhook_config_file:
            backends.append(WebhookBackend(args.audit_webhook_config_file, args.audit_webhook_batch_max_size,
                                           args.audit_webhook_batch_max_wait, args.audit_webhook_batch_buffer_size,
                                           args.audit_webhook_initial_backoff))
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise SystemExit(f"kapi gateway: invalid audit configuration: {exc}") from None
    if not backends:
        log.warning("--audit-policy-file given without --audit-log-path or --audit-webhook-config-file: no auditing")
        return None
    return Auditor(policy, backends)


def _begin(ctx: _Context, request: web.Request, attrs: Attributes) -> None:
    ctx.attrs = attrs
    ctx.decision = ctx.auditor.policy.evaluate(
        Attributes(user=ctx.impersonator or attrs.user, verb=attrs.verb, resource_request=attrs.resource_request,
                   path=attrs.path, api_group=attrs.api_group, api_version=attrs.api_version,
                   resource=attrs.resource, subresource=attrs.subresource, namespace=attrs.namespace,
                   name=attrs.name))


def received(request: web.Request, attrs: Attributes) -> None:
    """Chain hook once the acting user is known: evaluate the policy, emit RequestReceived."""
    request[ATTRIBUTES] = attrs
    ctx: _Context | None = request.get(_CONTEXT)
    if ctx is None:
        return
    ctx.impersonator = request.get("impersonator")
    ctx.audit_id = request.get(AUDIT_ID, "")
    _begin(ctx, request, attrs)
    assert ctx.decision is not None
    if ctx.decision.level > Level.NONE and "RequestReceived" not in ctx.decision.omit_stages:
        ctx.auditor.emit(ctx.auditor.event(ctx, "RequestReceived", request))


def response_status(response: web.StreamResponse) -> dict[str, Any]:
    """metav1.Status of the response: code only for success; the Status body's fields for a failure."""
    status: dict[str, Any] = {"metadata": {}, "code": response.status}
    if response.status >= 400 and isinstance(response, web.Response) and isinstance(response.body, bytes):
        body = _decode(response.body, response.content_type)
        if isinstance(body, dict) and body.get("kind") == "Status":
            for key in ("status", "message", "reason", "details"):
                if body.get(key):
                    status[key] = body[key]
    return status


async def _complete(ctx: _Context, request: web.Request, response: web.StreamResponse | None) -> None:
    if ctx.done:
        return
    ctx.done = True
    if ctx.attrs is None:  # refused before the user was known (401, bad request path)
        info = resolve(request.method, request.path, request.query)
        _begin(ctx, request, Attributes(
            user=UserInfo(""), verb=info.verb, resource_request=info.is_resource_request, path=info.path,
            api_group=info.api_group, api_version=info.api_version, resource=info.resource,
            subresource=info.subresource, namespace=info.namespace, name=info.name))
    decision = ctx.decision
    assert decision is not None
    panic = request.get(PANIC)
    stage = "Panic" if panic is not None else "ResponseComplete"
    if decision.level == Level.NONE or stage in decision.omit_stages:
        return
    status = response_status(response) if response is not None else {"metadata": {}, "code": 500}
    if panic is not None:
        status = {"metadata": {}, "status": "Failure", "code": 500,
                  "message": f"APIServer panic'd: {type(panic).__name__}: {panic}"}
    request_object = response_object = None
    assert ctx.attrs is not None
    if decision.level >= Level.REQUEST and ctx.attrs.verb in _BODY_VERBS and request.body_exists:
        try:
            request_object = _decode(await request.read(), request.content_type)
        except (web.HTTPException, ConnectionError, asyncio.CancelledError):
            request_object = None
    if (decision.level >= Level.REQUEST_RESPONSE and isinstance(response, web.Response)
            and isinstance(response.body, bytes)):
        response_object = _decode(response.body, response.content_type)
    if decision.omit_managed_fields:
        request_object, response_object = _strip_managed_fields(request_object), _strip_managed_fields(response_object)
    ctx.auditor.emit(ctx.auditor.event(ctx, stage, request, status, request_object, response_object))


def with_audit(handler: Handler, auditor: Auditor | None) -> Handler:
    """``handler`` wrapped to emit the response stages (kube's WithAudit); ``handler`` itself if auditing is off."""
    if auditor is None:
        return handler

    async def audited(request: web.Request) -> web.StreamResponse:
        ctx = _Context(auditor, "", auditor.clock())
        request[_CONTEXT] = ctx
        try:
            response = await handler(request)
        except asyncio.CancelledError:  # the client went away (a watch usually ends so)
            ctx.audit_id = ctx.audit_id or request.get(AUDIT_ID, "")
            await asyncio.shield(_complete(ctx, request, ctx.response))
            raise
        except BaseException:
            ctx.audit_id = ctx.audit_id or request.get(AUDIT_ID, "")
            await _complete(ctx, request, ctx.response)
            raise
        ctx.audit_id = ctx.audit_id or request.get(AUDIT_ID, "")
        await _complete(ctx, request, response)
        return response

    return audited


async def on_response_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """aiohttp signal: ``Audit-Id`` on every response (streams too); ResponseStarted for long-running ones."""
    audit_id = request.get(AUDIT_ID)
    if audit_id and "Audit-Id" not in response.headers:
        response.headers["Audit-Id"] = audit_id
    ctx: _Context | None = request.get(_CONTEXT)
    if ctx is None or ctx.decision is None or ctx.attrs is None:
        return
    ctx.response = response
    ctx.audit_id = ctx.audit_id or audit_id or ""
    if not isinstance(response, web.Response) and ctx.decision.level > Level.NONE \
            and "ResponseStarted" not in ctx.decision.omit_stages:
        ctx.auditor.emit(ctx.auditor.event(ctx, "ResponseStarted", request, {"metadata": {}, "code": response.status}))


def cleanup(auditor: Auditor | None) -> Callable[[web.Application], Awaitable[None]]:
    """An aiohttp ``on_cleanup`` handler that flushes and closes ``auditor`` (if any)."""

    async def close(_app: web.Application) -> None:
        if auditor is not None:
            await auditor.close()

    return close
