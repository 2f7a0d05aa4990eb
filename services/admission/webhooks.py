"""Dynamic admission: MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins.

Follows "Dynamic Admission Control" (admissionregistration.k8s.io/v1) and
k8s.io/apiserver ``pkg/admission/plugin/webhook``:

- Configurations come from storage-fed caches, sorted by name; webhooks
  keep their order inside a configuration.
- A webhook is called when a rule matches (operations, apiGroups,
  apiVersions, resources incl. subresources, scope), the namespaceSelector
  matches the namespace's labels (a Namespace's own labels; cluster-scoped
  objects always match), the objectSelector matches the object's or the
  old object's labels, and every matchCondition (CEL) is true.
- The AdmissionReview v1 request carries uid, kind, resource, subResource,
  requestKind, requestResource, name, namespace, operation, userInfo,
  object, oldObject, dryRun and options, with Go's ``omitempty`` applied
  as kube encodes it (:func:`_review`).
- The POST is client-go's: ``User-Agent: kube-apiserver-admission``,
  ``Accept: application/json, */*``, the URL's path cleaned and
  ``?timeout=<seconds left>s`` (:func:`request_url`).
- Mutating webhooks run in order; a ``JSONPatch`` response is applied to
  the object; webhooks with ``reinvocationPolicy: IfNeeded`` are called
  once more when a later webhook changed the object. Validating webhooks
  run in parallel; the first refusal in configuration order wins.
- A refusal becomes ``admission webhook "<name>" denied the request:
  <message>`` (code from the response status, at least 400). A call
  failure (connection, TLS, timeout, bad response) under failurePolicy
  Fail is 500 ``Internal error occurred: failed calling webhook "<name>":
  failed to call webhook: Post "<url>?timeout=10s": <Go's error text>``
  (:func:`go_error`), the text also the Status's one cause; under Ignore
  the request proceeds.
- A dry-run request to a webhook whose sideEffects are not None or
  NoneOnDryRun -> 400 ``admission webhook "<name>" does not support dry run``.
- clientConfig.url, or clientConfig.service resolved through the
  Service's Endpoints (TLS server name ``<service>.<namespace>.svc``);
  caBundle (base64 PEM) is the trust root, else the system roots.
- Every call is measured (:mod:`services.admission.metrics`:
  ``apiserver_admission_webhook_admission_duration_seconds``,
  ``apiserver_admission_webhook_request_total``,
  ``apiserver_admission_webhook_rejection_count``) and, when tracing is on
  (kapi/observability.py), runs in a client span named as kube's
  (``Call mutating webhook`` / ``Call validating webhook``) with
  ``webhook.name``, ``webhook.configuration``, ``k8s.resource``,
  ``k8s.subresource``, ``k8s.operation``, ``webhook.rejected`` and
  ``http.response.status_code``; the POST carries its W3C ``traceparent``.
  With tracing off no span code runs.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import datetime
import errno
import ipaddress
import logging
import math
import os
import posixpath
import re
import socket
import ssl
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import jsonpatch

from kapi import errors, jsonutil, kinds, observability
from kapi.k8sproto import goorder
from kapi.objectmeta import go_quote
from services.admission import metrics
from services.admission.chain import AdmissionRequest
from services.admission.informers import Informers
from services.admission.matching import (
    SelectorInvalid,
    evaluate_cel,
    labels_of,
    request_variable,
    rule_matches,
    selector_matches,
)
from services.admission.namespaces import NamespaceCache

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

GROUP = "admissionregistration.k8s.io"
DEFAULT_TIMEOUT_SECONDS = 10
REVIEW_API_VERSION = "admission.k8s.io/v1"
# k8s.io/apiserver pkg/util/webhook authentication.go setGlobalDefaults: the webhook client's rest.Config UserAgent
USER_AGENT = "kube-apiserver-admission"
# client-go's Accept for a JSON client without AcceptContentTypes
ACCEPT = "application/json, */*"


class CallError(Exception):
    """A webhook could not be called or answered badly (subject to failurePolicy); ``code`` is the webhook's
    HTTP status when it answered with one other than 200, else 0."""

    def __init__(self, message: str, code: int = 0):
        super().__init__(message)
        self.code = code


@dataclass
class Webhook:
    """One webhook of a configuration, with kube's defaults applied."""

    name: str
    config_name: str
    spec: dict[str, Any]
    mutating: bool

    @property
    def failure_policy(self) -> str:
        """Fail (default) or Ignore."""
        return str(self.spec.get("failurePolicy") or "Fail")

    @property
    def timeout(self) -> float:
        """timeoutSeconds, default 10."""
        value = self.spec.get("timeoutSeconds")
        return float(value) if isinstance(value, int) and value > 0 else float(DEFAULT_TIMEOUT_SECONDS)

    @property
    def reinvoke(self) -> bool:
        """reinvocationPolicy IfNeeded."""
        return self.spec.get("reinvocationPolicy") == "IfNeeded"


@dataclass
class _Outcome:
    response: dict[str, Any] | None = None
    failure: errors.StatusError | None = None
    warnings: list[str] = field(default_factory=list)
    code: int = 0  # the webhook's HTTP status (0 = not called or no answer)


def webhooks_of(configs: list[dict[str, Any]], mutating: bool) -> list[Webhook]:
    """The webhooks of configurations sorted by configuration name, in their listed order."""
    out: list[Webhook] = []
    for config in sorted(configs, key=lambda c: (c.get("metadata") or {}).get("name", "")):
        config_name = (config.get("metadata") or {}).get("name", "")
        for spec in config.get("webhooks") or []:
            if isinstance(spec, dict) and spec.get("name"):
                out.append(Webhook(str(spec["name"]), config_name, spec, mutating))
    return out


class WebhookClient:
    """HTTP(S) POSTs of AdmissionReviews, with one SSL context per caBundle."""

    def __init__(self, informers: Informers | None = None):
        self._informers = informers
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}
        # OpenTelemetry tracer of the webhook call spans; None = no spans (tracing off).
        self.tracer: Any = _tracer() if observability.STATE.tracing else None

    def _ssl(self, ca_bundle: str) -> ssl.SSLContext:
        ctx = self._contexts.get(ca_bundle)
        if ctx is None:
            if ca_bundle:
                try:
                    pem = base64.b64decode(ca_bundle, validate=True).decode()
                    ctx = ssl.create_default_context(cadata=pem)
                except (binascii.Error, ValueError, ssl.SSLError) as exc:
                    raise CallError(f"could not load caBundle: {exc}") from None
            else:
                ctx = ssl.create_default_context()
            self._contexts[ca_bundle] = ctx
        return ctx

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _resolve(self, client_config: dict[str, Any], timeout: float) -> tuple[str, str, str | None]:
        """(URL to dial, URL kube shows and sends as Host, TLS server name or None) for clientConfig.url or
        clientConfig.service; a service's URL is ``https://<service>.<namespace>.svc:<port><path>`` (kube's
        HookClient), dialled at one of its ready endpoints."""
        url = client_config.get("url")
        if isinstance(url, str) and url:
            return url, url, None
        service = client_config.get("service")
        if not isinstance(service, dict) or self._informers is None:
            raise CallError("webhook has no clientConfig url or service")
        ns, name = service.get("namespace", ""), service.get("name", "")
        port = service.get("port") or 443
        path = service.get("path") or ""
        svc = await self._informers.lookup("", "services", ns, name, timeout)
        if svc is None:
            raise CallError(f'service "{name}" not found')
        port_name = ""
        for p in (svc.get("spec") or {}).get("ports") or []:
            if p.get("port") == port:
                port_name = p.get("name") or ""
                break
        else:
            raise CallError(f'service "{name}" has no port {port}')
        endpoints = await self._informers.lookup("", "endpoints", ns, name, timeout)
        for subset in (endpoints or {}).get("subsets") or []:
            addresses = subset.get("addresses") or []
            ports = subset.get("ports") or []
            target = next((p.get("port") for p in ports if (p.get("name") or "") == port_name), None)
            if addresses and target:
                server_name = f"{name}.{ns}.svc"
                return (f"https://{_join_host_port(str(addresses[0].get('ip')), target)}{path}",
                        f"https://{server_name}:{port}{path}", server_name)
        raise CallError(f'service "{name}" has no ready endpoints for port {port}')

    async def post(self, webhook: Webhook, review: dict[str, Any], timeout: float) -> dict[str, Any]:
        """POST ``review`` and return the decoded AdmissionReview reply; raises CallError."""
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        client_config = webhook.spec.get("clientConfig") or {}
        url, kube_url, server_name = await self._resolve(client_config, timeout)
        dial, shown = request_url(url, timeout), request_url(kube_url, timeout)
        ctx = self._ssl(str(client_config.get("caBundle") or "")) if url.startswith("https://") else None
        if self._session is None:
            self._session = aiohttp.ClientSession()
        kwargs: dict[str, Any] = {"ssl": ctx} if ctx is not None else {}
        # client-go's headers (aiohttp's own Accept-Encoding and User-Agent replaced)
        headers = {"Accept": ACCEPT, "Content-Type": "application/json", "User-Agent": USER_AGENT,
                   "Accept-Encoding": "gzip"}
        if server_name:
            kwargs["server_hostname"] = server_name
            headers["Host"] = urllib.parse.urlsplit(shown).netloc
        if self.tracer is not None:
            from opentelemetry import propagate

            propagate.inject(headers)
        try:
            async with asyncio.timeout(timeout):
                async with self._session.post(dial, data=jsonutil.go_escape(jsonutil.dumps(review)), headers=headers,
                                              **kwargs) as resp:
                    body = await resp.read()
                    status = resp.status
                    content_type = resp.headers.get("Content-Type", "")
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            split = urllib.parse.urlsplit(dial)
            peer = await _peer_certificate(split.hostname or "", split.port or 443, server_name, exc)
            raise CallError(f'failed to call webhook: Post "{shown}": '
                            f"{go_error(exc, split.hostname or '', split.port or 443, server_name, peer)}") from None
        if not 200 <= status <= 206:  # client-go's success range
            raise CallError(f"failed to call webhook: {server_response_error(status, content_type, body)}", status)
        try:
            reply = jsonutil.loads(body)
        except ValueError as exc:
            raise CallError(f"received invalid webhook response: {exc}") from None
        if not isinstance(reply, dict):
            raise CallError("received invalid webhook response: not an object")
        return reply


def _tracer() -> Any:
    from opentelemetry import trace

    return trace.get_tracer("kapi.admission.webhooks")


def _join_host_port(host: str, port: int | str) -> str:
    """Go's net.JoinHostPort: an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _go_seconds(seconds: int) -> str:
    """time.Duration.String() of whole seconds: ``10s``, ``1m30s``, ``1h0m0s``."""
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def request_url(url: str, timeout: float) -> str:
    """The URL client-go POSTs an AdmissionReview to (and names in its errors): the path cleaned as Go's
    ``path.Join`` does (``/`` when empty, no trailing slash), then ``timeout=<the call's time left, rounded up to
    whole seconds>`` (kube's callHook ``r.Timeout``)."""
    split = urllib.parse.urlsplit(url)
    path = re.sub("^/+", "/", posixpath.normpath("/" + split.path))
    query = [split.query] if split.query else []
    if timeout > 0:
        query.append(f"timeout={_go_seconds(math.ceil(timeout))}")
    return f"{split.scheme}://{split.netloc}{path}" + (f"?{'&'.join(query)}" if query else "")


def _nameserver() -> str:
    """The DNS server Go's resolver names in a lookup error: the first of /etc/resolv.conf, port 53."""
    try:
        with open("/etc/resolv.conf") as f:
            for line in f:
                fields = line.split()
                if len(fields) >= 2 and fields[0] == "nameserver":
                    return _join_host_port(fields[1], 53)
    except OSError:
        pass
    return "127.0.0.1:53"


async def _peer_certificate(host: str, port: int, server_name: str | None, exc: BaseException) -> Any:
    """The webhook's leaf certificate (cryptography x509) after a verification failure, fetched by one
    unverified handshake, so that :func:`_x509_text` can report as Go does; else None."""
    import aiohttp

    if not isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return None
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        from cryptography import x509

        async with asyncio.timeout(2):
            _, writer = await asyncio.open_connection(host, port, ssl=ctx, server_hostname=server_name or host)
        try:
            der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        finally:
            writer.close()
        return x509.load_der_x509_certificate(der)
    except Exception:  # the text then follows OpenSSL's verdict alone
        return None


def _go_time(moment: Any) -> str:
    return str(moment.strftime("%Y-%m-%dT%H:%M:%SZ"))


def _hostname_error(cert: Any, name: str) -> str | None:
    """crypto/x509 VerifyHostname's HostnameError text, None when ``cert`` is valid for ``name``."""
    from cryptography import x509

    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        sans = None
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        ip = None
    if ip is not None:
        ips = list(sans.get_values_for_type(x509.IPAddress)) if sans else []
        if ip in ips:
            return None
        valid = ", ".join(str(i) for i in ips)
    else:
        wanted = name.lower().rstrip(".").split(".")
        dns = list(sans.get_values_for_type(x509.DNSName)) if sans else []
        for pattern in dns:
            labels = pattern.lower().rstrip(".").split(".")
            if labels == wanted or (labels[0] == "*" and len(labels) == len(wanted) and labels[1:] == wanted[1:]
                                    and wanted[0]):
                return None
        valid = ", ".join(dns)
    if sans is None:
        names = cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)
        if names and str(names[0].value).lower().rstrip(".") == name.lower().rstrip("."):
            return "x509: certificate relies on legacy Common Name field, use SANs instead"
    if ip is not None and not valid:
        return f"x509: cannot validate certificate for {name} because it doesn't contain any IP SANs"
    if not valid:
        return f"x509: certificate is not valid for any names, but wanted to match {name}"
    return f"x509: certificate is valid for {valid}, not {name}"


def _x509_text(error: Any, name: str, cert: Any) -> str:
    """crypto/x509's text for a verification failure (``error`` an ssl.SSLCertVerificationError): with the
    peer's certificate in Go's order (the leaf's validity period, its names, then its authority), else from
    OpenSSL's verify code."""
    code = getattr(error, "verify_code", 0)
    expired = "x509: certificate has expired or is not yet valid"
    if cert is not None:
        now = datetime.datetime.now(datetime.UTC)
        if now > cert.not_valid_after_utc:
            return f"{expired}: current time {_go_time(now)} is after {_go_time(cert.not_valid_after_utc)}"
        if now < cert.not_valid_before_utc:
            return f"{expired}: current time {_go_time(now)} is before {_go_time(cert.not_valid_before_utc)}"
        return _hostname_error(cert, name) or "x509: certificate signed by unknown authority"
    if code in (9, 10):
        return expired
    if code in (62, 64):
        return f"x509: certificate is not valid for any names, but wanted to match {name}"
    return "x509: certificate signed by unknown authority"


def go_error(exc: BaseException, host: str, port: int, server_name: str | None = None, cert: Any = None) -> str:
    """Go's net/http error text (what follows ``Post "<url>": ``) for a failed webhook POST: ``context deadline
    exceeded``, ``dial tcp <ip>:<port>: connect: connection refused``, ``dial tcp: lookup <host> on <dns
    server>: no such host``, ``tls: failed to verify certificate: x509: ...``, ``http: server gave HTTP response
    to HTTPS client``, ``EOF``. ``cert`` is the peer's certificate when :func:`_peer_certificate` found one."""
    import aiohttp

    if isinstance(exc, TimeoutError):
        return "context deadline exceeded"
    os_error = getattr(exc, "os_error", exc)
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        os_error = exc.certificate_error
    if isinstance(os_error, ssl.SSLCertVerificationError):
        return f"tls: failed to verify certificate: {_x509_text(os_error, server_name or host, cert)}"
    if isinstance(os_error, ssl.SSLError):
        reason = str(getattr(os_error, "reason", None) or "HANDSHAKE_FAILURE")
        if reason in ("WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"):
            return "http: server gave HTTP response to HTTPS client"
        return f"remote error: tls: {reason.lower().replace('_', ' ')}"
    if isinstance(os_error, socket.gaierror):
        found = os_error.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", socket.EAI_NONAME))
        return f"dial tcp: lookup {host} on {_nameserver()}: {'no such host' if found else 'server misbehaving'}"
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(os_error, OSError) and os_error.errno:
        dialled = re.search(r"\('([^']+)', (\d+)", str(os_error))
        address = _join_host_port(dialled[1], dialled[2]) if dialled else _join_host_port(host, port)
        return f"dial tcp {address}: connect: {_errno_text(os_error.errno)}"
    if isinstance(exc, OSError) and exc.errno and not isinstance(exc, aiohttp.ServerDisconnectedError):
        return f"read: {_errno_text(exc.errno)}"
    return "EOF"


def _errno_text(number: int) -> str:
    """syscall.Errno's text: the C library's, lower-cased (``connection refused``, ``no route to host``)."""
    return {errno.ECONNREFUSED: "connection refused", errno.EHOSTUNREACH: "no route to host",
            errno.ENETUNREACH: "network is unreachable", errno.ETIMEDOUT: "connection timed out",
            errno.ECONNRESET: "connection reset by peer"}.get(number, os.strerror(number).lower())


_SERVER_RESPONSE_MESSAGES = {
    400: "the server rejected our request for an unknown reason",
    401: "the server has asked for the client to provide credentials",
    404: "the server could not find the requested resource",
    405: "the server does not allow this method on the requested resource",
    409: "the server reported a conflict",
    422: "the server rejected our request due to an error in our request",
    429: "the server has received too many requests and has asked us to try again later",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}


def server_response_error(status: int, content_type: str, body: bytes) -> str:
    """client-go's error for a webhook's answer outside 200-206: a ``kind: Status`` body with ``status: Failure``
    gives its message; else apierrors.NewGenericServerResponse's text for the code, quoting a text body (at most
    2048 bytes, trimmed; ``unknown`` for a non-text Content-Type) where it does (403, 406, 415, other 5xx)."""
    try:
        decoded = jsonutil.loads(body)
    except ValueError:
        decoded = None
    if isinstance(decoded, dict) and decoded.get("kind") == "Status" and decoded.get("apiVersion") == "v1" \
            and decoded.get("status") == "Failure":
        return str(decoded.get("message") or "")
    media = content_type.split(";", 1)[0].strip().lower()
    text = body[:2048].decode(errors="replace").strip() if not media or media.startswith("text/") else "unknown"
    if status in _SERVER_RESPONSE_MESSAGES:
        return _SERVER_RESPONSE_MESSAGES[status]
    if status in (403, 415) or (status == 406 and text not in ("", "unknown")):
        return text
    if status == 406:
        return "the server was unable to respond with a content type that the client supports"
    if status >= 500:
        return f"an error on the server ({go_quote(text)}) has prevented the request from succeeding"
    return f"the server responded with the status code {status} but did not return more information"


def _internal(message: str) -> errors.StatusError:
    """apierrors.NewInternalError: 500 InternalError ``Internal error occurred: <message>``, the message also
    its one cause."""
    return errors.StatusError(500, "InternalError", f"Internal error occurred: {message}",
                              {"causes": [{"message": message}]})


def _review(request: AdmissionRequest, webhook: Webhook, uid: str) -> dict[str, Any]:
    """The AdmissionReview v1 kube's CreateV1AdmissionReview encodes: Go's ``omitempty`` leaves out an empty
    name, namespace, subResource and requestSubResource, and userInfo's empty uid, groups and extra; object and
    oldObject are ``null`` when absent; dryRun is always there; options are the operation's options
    (:meth:`AdmissionRequest.operation_options`: the request's dryRun, fieldManager and fieldValidation, or its
    DeleteOptions), ``null`` for a CONNECT (kube passes the connect options as the object)."""
    req = request_variable(request, uid)  # name: AdmissionRequest.review_name, never the generateName
    for key in ("name", "namespace", "subResource", "requestSubResource"):
        if not req.get(key):
            req.pop(key, None)
    # encoded from the Go object (or unstructured map) as kube does: in its wire key order
    req["object"] = None if request.object is None else goorder.wire_order(request.object)
    req["oldObject"] = None if request.old_object is None else goorder.wire_order(request.old_object)
    req["dryRun"] = bool(request.dry_run)
    req["options"] = request.operation_options()
    return {"kind": "AdmissionReview", "apiVersion": REVIEW_API_VERSION, "request": req}


def _verify(reply: dict[str, Any], uid: str, mutating: bool) -> dict[str, Any]:
    """The reply's ``response`` after kube's VerifyAdmissionResponse checks; raises CallError."""
    if reply.get("apiVersion") != REVIEW_API_VERSION or reply.get("kind") != "AdmissionReview":
        raise CallError(f"received invalid webhook response: expected webhook response of "
                        f"admission.k8s.io/v1, Kind=AdmissionReview, got {reply.get('apiVersion', '')}, "
                        f"Kind={reply.get('kind', '')}")
    response = reply.get("response")
    if not isinstance(response, dict):
        raise CallError("received invalid webhook response: response is missing")
    if response.get("uid") != uid:
        raise CallError(f'received invalid webhook response: expected response.uid="{uid}", '
                        f'got "{response.get("uid", "")}"')
    if not isinstance(response.get("allowed"), bool):
        raise CallError("received invalid webhook response: response.allowed is missing")
    if response.get("patch") and not mutating:
        raise CallError("received invalid webhook response: validating webhooks may not return patches")
    if response.get("patch") and response.get("patchType") != "JSONPatch":
        raise CallError(f'received invalid webhook response: webhook returned response.patch but not '
                        f'response.patchType "JSONPatch" (got "{response.get("patchType", "")}")')
    return response


def denied(name: str, status: Any) -> errors.StatusError:
    """webhookerrors.ToStatusErr: kube's refusal naming the webhook (code at least 400)."""
    status = status if isinstance(status, dict) else {}
    code = status.get("code") if isinstance(status.get("code"), int) else 0
    code = code if code >= 400 else 400
    prefix = f'admission webhook "{name}" denied the request'
    if status.get("message"):
        message = f"{prefix}: {status['message']}"
    elif status.get("reason"):
        message = f"{prefix}: {status['reason']}"
    else:
        message = f"{prefix} without explanation"
    reason = status.get("reason") or ""
    return errors.StatusError(code, str(reason), message, status.get("details"))


class _Dispatcher:
    """What both webhook plugins share: selecting and calling webhooks."""

    mutating = False

    def __init__(self, informers: Informers, namespaces: NamespaceCache, client: WebhookClient):
        self.informers = informers
        self.namespaces = namespaces
        self.client = client
        resource = "mutatingwebhookconfigurations" if self.mutating else "validatingwebhookconfigurations"
        self.configs = informers.cache(GROUP, resource)

    def handles(self, operation: str) -> bool:
        """Every operation."""
        return True

    async def _namespace_labels(self, request: AdmissionRequest) -> dict[str, str] | None:
        if request.resource.group == "" and request.resource.resource == "namespaces":
            return labels_of(request.object if request.object is not None else request.old_object)
        if not request.namespace:
            return None
        ns = await self.namespaces.get(request.namespace, request.timeout)
        return labels_of(ns)

    async def matching(self, request: AdmissionRequest) -> list[Webhook]:
        """The webhooks to call for ``request`` (before matchConditions), in order."""
        if not self.configs.synced:
            await self.configs.wait_synced(min(request.timeout, 5.0))
        # Webhook configurations themselves are never intercepted (kube excludes them to avoid deadlocks).
        if request.resource.group == GROUP:
            return []
        hooks = webhooks_of(self.configs.list(), self.mutating)
        if not hooks:
            return []
        ns_labels = await self._namespace_labels(request)
        out = []
        for hook in hooks:
            if not any(rule_matches(rule, request) for rule in hook.spec.get("rules") or []):
                continue
            try:
                if ns_labels is not None and not selector_matches(hook.spec.get("namespaceSelector"), ns_labels):
                    continue
                obj_sel = hook.spec.get("objectSelector")
                if not (selector_matches(obj_sel, labels_of(request.object))
                        or (request.old_object is not None
                            and selector_matches(obj_sel, labels_of(request.old_object)))):
                    continue
            except SelectorInvalid as exc:
                raise _internal(f'failed calling webhook "{hook.name}": {exc}') from None
            out.append(hook)
        return out

    def _conditions_pass(self, hook: Webhook, request: AdmissionRequest) -> bool:
        """True when every matchCondition is true; a false one skips; an error raises CallError."""
        conditions = hook.spec.get("matchConditions") or []
        if not conditions:
            return True
        variables = {"object": request.object, "oldObject": request.old_object,
                     "request": request_variable(request)}
        for cond in conditions:
            try:
                result = evaluate_cel(str(cond.get("expression", "")), variables)
            except Exception as exc:
                raise CallError(f"matchCondition {cond.get('name', '')!r} error: {exc}") from None
            if result is not True:
                return False
        return True

    async def call(self, hook: Webhook, request: AdmissionRequest) -> _Outcome:
        """Call one webhook; a call failure under Fail becomes a 500 outcome, under Ignore an empty one.

        Measured into :mod:`services.admission.metrics`; in a span when tracing is on (module docstring).
        """
        tracer = self.client.tracer
        if tracer is None:
            return await self._call(hook, request)
        from opentelemetry.trace import SpanKind, Status, StatusCode

        kind = "mutating" if self.mutating else "validating"
        with tracer.start_as_current_span(f"Call {kind} webhook", kind=SpanKind.CLIENT) as span:
            for key, value in (("webhook.name", hook.name), ("webhook.configuration", hook.config_name),
                               ("k8s.resource", request.resource.resource),
                               ("k8s.subresource", request.attributes.subresource),
                               ("k8s.operation", request.operation)):
                if value:
                    span.set_attribute(key, value)
            outcome = await self._call(hook, request)
            span.set_attribute("webhook.rejected", outcome.failure is not None)
            if outcome.code:
                span.set_attribute("http.response.status_code", outcome.code)
            if outcome.failure is not None and outcome.failure.code >= 500:
                span.set_status(Status(StatusCode.ERROR, outcome.failure.message))
            return outcome

    async def _call(self, hook: Webhook, request: AdmissionRequest) -> _Outcome:
        start = time.perf_counter()
        type_ = "admit" if self.mutating else "validating"

        def observe(rejected: bool, code: int, error_type: str = "") -> None:
            metrics.observe_webhook(hook.name, type_, request.operation, time.perf_counter() - start,
                                    rejected=rejected, code=code, error_type=error_type)

        try:
            if not self._conditions_pass(hook, request):
                return _Outcome()
            if request.dry_run and hook.spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
                observe(True, 0, metrics.INTERNAL_ERROR)
                return _Outcome(failure=errors.bad_request(
                    f'admission webhook "{hook.name}" does not support dry run'))
            uid = str(uuid.uuid4())
            reply = await self.client.post(hook, _review(request, hook, uid), _post_timeout(hook, request))
            response = _verify(reply, uid, self.mutating)
        except CallError as exc:
            if hook.failure_policy == "Ignore":
                observe(False, exc.code)
                log.warning('failed calling webhook "%s" (failurePolicy Ignore): %s', hook.name, exc)
                return _Outcome(code=exc.code)
            observe(True, exc.code, metrics.CALLING_WEBHOOK_ERROR)
            return _Outcome(failure=_internal(f'failed calling webhook "{hook.name}": {exc}'), code=exc.code)
        warnings = [str(w) for w in response.get("warnings") or [] if isinstance(w, str)]
        for key, value in (response.get("auditAnnotations") or {}).items():
            request.audit_annotations[f"{hook.name}/{key}"] = str(value)
        if not response["allowed"]:
            refusal = denied(hook.name, response.get("status"))
            observe(True, refusal.code, metrics.NO_ERROR)
            return _Outcome(response, refusal, warnings, 200)
        observe(False, 200)
        return _Outcome(response, None, warnings, 200)


# When the caller's deadline comes before the webhook's timeoutSeconds, the call is the caller's to end: the
# webhook gets this much longer, so the caller's deadline (504, DEADLINE_EXCEEDED) wins over a webhook failure
# (500 "context deadline exceeded") that would otherwise race it.
CALLER_DEADLINE_GRACE = 0.5


def _post_timeout(hook: Webhook, request: AdmissionRequest) -> float:
    """Seconds the webhook call may take: its ``timeoutSeconds``, unless the admission call's own budget
    (``request.timeout``) ends first, then a little past that budget (:data:`CALLER_DEADLINE_GRACE`)."""
    return hook.timeout if hook.timeout <= request.timeout else request.timeout + CALLER_DEADLINE_GRACE


class MutatingWebhooks(_Dispatcher):
    """The MutatingAdmissionWebhook plugin."""

    name = "MutatingAdmissionWebhook"
    mutating = True

    async def admit(self, request: AdmissionRequest) -> None:
        """Call matching webhooks in order, applying JSONPatch responses; reinvoke IfNeeded ones once."""
        hooks = await self.matching(request)
        if not hooks:
            return
        last_change = -1
        ran: list[tuple[int, Webhook]] = []
        for index, hook in enumerate(hooks):
            if await self._run_one(hook, request):
                last_change = index
            ran.append((index, hook))
        for index, hook in ran:
            if hook.reinvoke and index < last_change:
                await self._run_one(hook, request)

    async def _run_one(self, hook: Webhook, request: AdmissionRequest) -> bool:
        """Call ``hook`` and apply its patch; True if the object changed. Raises the refusal."""
        outcome = await self.call(hook, request)
        request.warnings.extend(outcome.warnings)
        if outcome.failure is not None:
            raise outcome.failure
        response = outcome.response or {}
        patch_b64 = response.get("patch")
        if not patch_b64 or request.object is None:
            return False
        try:
            ops = jsonutil.loads(base64.b64decode(patch_b64))
            patched = jsonpatch.apply_patch(copy.deepcopy(request.object), ops)
        except Exception as exc:
            failure = _internal(f'failed calling webhook "{hook.name}": received invalid webhook '
                                      f"response: invalid patch: {exc}")
            if hook.failure_policy == "Ignore":
                return False
            raise failure from None
        if not isinstance(patched, dict):
            raise _internal(f'failed calling webhook "{hook.name}": the patch did not produce an object')
        if patched == request.object:
            return False
        if request.kind == request.resource.kind:
            kinds.strategy_for(request.resource.group, request.resource.kind).default(patched)
        request.object = patched
        return True


class ValidatingWebhooks(_Dispatcher):
    """The ValidatingAdmissionWebhook plugin."""

    name = "ValidatingAdmissionWebhook"

    async def validate(self, request: AdmissionRequest) -> None:
        """Call matching webhooks in parallel; raise the first refusal in configuration order."""
        hooks = await self.matching(request)
        if not hooks:
            return
        outcomes = await asyncio.gather(*(self.call(hook, request) for hook in hooks))
        for outcome in outcomes:
            request.warnings.extend(outcome.warnings)
        for outcome in outcomes:
            if outcome.failure is not None:
                raise outcome.failure
