"""A small async REST client for the Kubernetes API on aiohttp, configured from a kubeconfig.

The controllers are ordinary API clients (docs/architecture.md, "Processes"): they reach
the API through Envoy over HTTPS with their own credential (a client
certificate, or a bearer token) exactly as kube-controller-manager does
with ``--kubeconfig`` (and ``--master`` overriding the server). Errors come
back as :class:`ApiError` carrying the HTTP code and the ``Status`` body's
reason and message ("API concepts": "Responses", "Status").
"""

from __future__ import annotations

import base64
import contextlib
import os
import ssl
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import yaml
from aiohttp.http_exceptions import LineTooLong

from kapi import jsonutil, limits
from kapi.resources import Resource

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"

# The longest watch event line accepted: an event wraps one object, which can
# be as large as a request body the API accepts (kapi.limits), so twice that
# leaves room for the envelope and JSON escaping. aiohttp's default (twice its
# read buffer) dropped any event over 512 KiB.
MAX_WATCH_EVENT_BYTES = 2 * limits.MAX_BODY_BYTES


class ApiError(Exception):
    """A non-2xx answer: ``code`` (HTTP status), ``reason`` (Status.reason, e.g. NotFound) and ``message``."""

    def __init__(self, code: int, reason: str, message: str, body: dict[str, Any] | None = None):
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.body = body or {}


@dataclass(frozen=True)
class Config:
    """Where the API is and how to authenticate: ``server`` URL, CA PEM, client cert/key PEM or a token."""

    server: str
    ca_pem: bytes = b""
    cert_pem: bytes = b""
    key_pem: bytes = b""
    token: str = ""
    insecure: bool = False


def _data(entry: dict[str, Any], key: str, base: Path) -> bytes:
    if entry.get(f"{key}-data"):
        return base64.b64decode(entry[f"{key}-data"])
    if entry.get(key):
        path = Path(entry[key])
        return (path if path.is_absolute() else base / path).read_bytes()
    return b""


def load_kubeconfig(path: str | os.PathLike[str], master: str = "") -> Config:
    """Read the current context of a kubeconfig file (``clusters``/``users``/``contexts``, v1 Config).

    ``master`` overrides the cluster's server (kube-controller-manager
    ``--master``). Raises ValueError for a kubeconfig without a usable
    context, OSError if a referenced file is unreadable.
    """
    file = Path(path)
    doc = yaml.safe_load(file.read_text()) or {}
    contexts = {c["name"]: c.get("context") or {} for c in doc.get("contexts") or []}
    name = doc.get("current-context") or (next(iter(contexts)) if contexts else "")
    context = contexts.get(name)
    if context is None:
        raise ValueError(f"kubeconfig {file}: no context {name!r}")
    clusters = {c["name"]: c.get("cluster") or {} for c in doc.get("clusters") or []}
    users = {u["name"]: u.get("user") or {} for u in doc.get("users") or []}
    cluster = clusters.get(context.get("cluster", ""))
    if cluster is None:
        raise ValueError(f"kubeconfig {file}: context {name!r} names no known cluster")
    user = users.get(context.get("user", ""), {})
    base = file.parent
    server = (master or cluster.get("server") or "").rstrip("/")
    if not server:
        raise ValueError(f"kubeconfig {file}: no server (give --master)")
    return Config(server=server, ca_pem=_data(cluster, "certificate-authority", base),
                  cert_pem=_data(user, "client-certificate", base), key_pem=_data(user, "client-key", base),
                  token=str(user.get("token") or ""), insecure=bool(cluster.get("insecure-skip-tls-verify")))


def ssl_context(config: Config) -> ssl.SSLContext:
    """A TLS client context: the kubeconfig's CA (else the system's) and its client certificate if any."""
    context = ssl.create_default_context(cadata=config.ca_pem.decode() if config.ca_pem else None)
    if config.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.cert_pem and config.key_pem:
        # load_cert_chain reads files only: a private temporary directory, removed at once.
        with tempfile.TemporaryDirectory(prefix="kapi-controllers-") as tmp:
            cert, key = Path(tmp) / "client.crt", Path(tmp) / "client.key"
            cert.write_bytes(config.cert_pem)
            key.touch(mode=0o600)
            key.write_bytes(config.key_pem)
            context.load_cert_chain(str(cert), str(key))
    return context


def path_for(resource: Resource, namespace: str = "", name: str = "", subresource: str = "") -> str:
    """The URL path of a collection or object: ``/api/v1/namespaces/<ns>/pods/<name>[/<sub>]``."""
    root = f"/apis/{resource.group}/{resource.version}" if resource.group else f"/api/{resource.version}"
    if resource.namespaced and namespace:
        root += f"/namespaces/{quote(namespace, safe='')}"
    out = f"{root}/{resource.resource}"
    if name:
        out += f"/{quote(name, safe='')}"
        if subresource:
            out += f"/{subresource}"
    return out


class Client:
    """JSON over HTTPS to one API endpoint; one aiohttp session (keep-alive connections) per client."""

    def __init__(self, config: Config, user_agent: str = "kapi-controllers", timeout: float = 30.0):
        self.config = config
        self._ssl = ssl_context(config) if config.server.startswith("https") else None
        self._headers = {"User-Agent": user_agent, "Accept": JSON}
        if config.token:
            self._headers["Authorization"] = f"Bearer {config.token}"
        self._timeout = timeout
        self._session: aiohttp.ClientSession | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                headers=self._headers, connector=aiohttp.TCPConnector(ssl=self._ssl if self._ssl else False))
        return self._session

    async def close(self) -> None:
        """Close the session and its connections."""
        if self._session is not None:
            await self._session.close()

    async def request(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None,
                      content_type: str = JSON, timeout: float | None = None) -> dict[str, Any]:
        """One request; returns the decoded JSON body (``{}`` if empty).

        Raises ApiError for a non-2xx answer (reason/message from the
        Status body, else the HTTP reason), and ApiError 503
        ``ServiceUnavailable`` for connection failures and timeouts.
        """
        data = jsonutil.dumps(body) if body is not None else None
        headers = {"Content-Type": content_type} if data is not None else None
        try:
            async with self._get_session().request(
                    method, self.config.server + path, data=data, params=params, headers=headers,
                    timeout=aiohttp.ClientTimeout(total=timeout or self._timeout)) as reply:
                raw = await reply.read()
                status = reply.status
                http_reason = reply.reason or ""
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ApiError(503, "ServiceUnavailable", f"{method} {path}: {exc!r}") from exc
        decoded: Any = {}
        if raw:
            with contextlib.suppress(ValueError):
                decoded = jsonutil.loads(raw)
        if not isinstance(decoded, dict):
            decoded = {}
        if status >= 300:
            raise ApiError(status, str(decoded.get("reason") or http_reason), str(decoded.get("message") or
                                                                                   raw[:200].decode(errors="replace")),
                           decoded)
        return decoded

    async def get(self, path: str, params: dict[str, str] | None = None) -> dict[str, Any]:
        """GET ``path``."""
        return await self.request("GET", path, params=params)

    async def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        """POST ``obj`` to the collection ``path``."""
        return await self.request("POST", path, obj)

    async def update(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        """PUT ``obj`` to ``path`` (conditional on its metadata.resourceVersion if set)."""
        return await self.request("PUT", path, obj)

    async def patch(self, path: str, patch: Any, content_type: str = MERGE_PATCH) -> dict[str, Any]:
        """PATCH ``path`` (JSON merge patch by default)."""
        return await self.request("PATCH", path, patch, content_type=content_type)

    async def delete(self, path: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """DELETE ``path`` with an optional DeleteOptions body (propagationPolicy, preconditions)."""
        body = {"kind": "DeleteOptions", "apiVersion": "v1", **options} if options else None
        return await self.request("DELETE", path, body)

    async def list_all(self, path: str, page: int = 500) -> dict[str, Any]:
        """LIST ``path`` following ``continue`` tokens; returns ``{"items": [...], "metadata": {...}}`` of the
        first page's resourceVersion (the snapshot every page is read at)."""
        params = {"limit": str(page)}
        first: dict[str, Any] | None = None
        items: list[dict[str, Any]] = []
        while True:
            reply = await self.get(path, params)
            if first is None:
                first = reply
            items.extend(reply.get("items") or [])
            token = (reply.get("metadata") or {}).get("continue")
            if not token:
                break
            params = {"limit": str(page), "continue": token}
        assert first is not None
        return {**first, "items": items}

    async def watch(self, path: str, resource_version: str, timeout_seconds: int = 300
                    ) -> AsyncIterator[dict[str, Any]]:
        """Stream the watch events (``{"type", "object"}``) of ``path`` from ``resource_version``.

        Bookmarks are requested (``allowWatchBookmarks``). An ERROR event is
        raised as ApiError (410 Expired when the version was compacted);
        the stream ends when the server closes it (``timeoutSeconds``).
        """
        params = {"watch": "true", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                  "timeoutSeconds": str(timeout_seconds)}
        try:
            async with self._get_session().get(self.config.server + path, params=params,
                                               timeout=aiohttp.ClientTimeout(total=None, sock_connect=10,
                                                                             sock_read=timeout_seconds + 30)
                                               ) as reply:
                if reply.status >= 300:
                    raw = await reply.read()
                    body: Any = {}
                    with contextlib.suppress(ValueError):
                        body = jsonutil.loads(raw)
                    body = body if isinstance(body, dict) else {}
                    raise ApiError(reply.status, str(body.get("reason") or reply.reason),
                                   str(body.get("message") or ""), body)
                while line := await reply.content.readline(max_line_length=MAX_WATCH_EVENT_BYTES):
                    if not line.strip():
                        continue
                    event = jsonutil.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        raise ApiError(int(status.get("code") or 500), str(status.get("reason") or ""),
                                       str(status.get("message") or ""), status)
                    yield event
        except (aiohttp.ClientError, LineTooLong, TimeoutError, OSError) as exc:
            raise ApiError(503, "ServiceUnavailable", f"watch {path}: {exc!r}") from exc
