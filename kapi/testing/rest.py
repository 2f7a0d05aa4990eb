"""A small synchronous Kubernetes REST client for kapi.testing's own housekeeping (reset, namespaces, users).

It reads a kubeconfig's current context (server, CA, client certificate or
bearer token; data embedded or as files) and talks HTTPS/1.1 over one
keep-alive connection with :mod:`http.client`, so kapi.testing needs neither
the official ``kubernetes`` client nor kubectl for its own work. Tests use
the real clients (:meth:`kapi.testing.Credentials.api_client`, ``kubectl``).
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import shutil
import ssl
import tempfile
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


class ApiError(RuntimeError):
    """A non-2xx answer: ``status`` is the HTTP code, ``body`` the decoded Status (or {})."""

    def __init__(self, method: str, path: str, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{method} {path}: {status} {body.get('reason', '')} {body.get('message', '')}".rstrip())
        self.status = status
        self.body = body


@dataclass(frozen=True)
class KubeconfigContext:
    """The parts of a kubeconfig's current context kapi.testing uses (PEM bytes, not paths)."""

    server: str
    ca_pem: bytes | None
    insecure: bool
    cert_pem: bytes | None
    key_pem: bytes | None
    token: str | None


def _data(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    """``<key>-data`` (base64) or the file named by ``<key>`` (relative to the kubeconfig's folder)."""
    if entry.get(f"{key}-data"):
        return base64.b64decode(entry[f"{key}-data"])
    if entry.get(key):
        return (base / entry[key]).read_bytes()
    return None


def read_kubeconfig(path: str | os.PathLike[str]) -> KubeconfigContext:
    """Parse ``path``'s current context; raises ValueError if it has no usable cluster or credentials.

    Supported credentials: a client certificate and key, ``token`` or ``tokenFile``
    (exec and auth-provider plugins are not: use a certificate or a token).
    """
    path = Path(path)
    config = yaml.safe_load(path.read_text()) or {}
    name = config.get("current-context")
    contexts = {c["name"]: c.get("context", {}) for c in config.get("contexts") or []}
    if name not in contexts:
        raise ValueError(f"{path}: no current-context")
    context = contexts[name]
    clusters = {c["name"]: c.get("cluster", {}) for c in config.get("clusters") or []}
    users = {u["name"]: u.get("user", {}) for u in config.get("users") or []}
    cluster, user = clusters.get(context.get("cluster"), {}), users.get(context.get("user"), {}) or {}
    if not cluster.get("server"):
        raise ValueError(f"{path}: context {name!r} has no cluster server")
    base = path.parent
    token = user.get("token")
    if not token and user.get("tokenFile"):
        token = (base / user["tokenFile"]).read_text().strip()
    cert, key = _data(user, "client-certificate", base), _data(user, "client-key", base)
    if not token and not (cert and key):
        raise ValueError(f"{path}: user {context.get('user')!r} has neither a client certificate nor a token")
    return KubeconfigContext(server=str(cluster["server"]).rstrip("/"), ca_pem=_data(cluster, "certificate-authority",
                             base), insecure=bool(cluster.get("insecure-skip-tls-verify")), cert_pem=cert,
                             key_pem=key, token=token)


class Rest:
    """JSON over HTTPS to one API server as one user; thread-safe (one connection, one lock).

    ``request`` returns the decoded body (a dict) or raises :class:`ApiError`
    for a non-2xx status; connection errors (OSError) are retried once on a
    fresh connection, then raised.
    """

    def __init__(self, kubeconfig: str | os.PathLike[str], timeout: float = 30.0,
                 _context: KubeconfigContext | None = None, _ssl: ssl.SSLContext | None = None) -> None:
        self.context = _context or read_kubeconfig(kubeconfig)
        url = urllib.parse.urlsplit(self.context.server)
        if url.scheme != "https" or not url.hostname:
            raise ValueError(f"{kubeconfig}: server must be an https URL, not {self.context.server!r}")
        self._kubeconfig = kubeconfig
        self._host, self._port = url.hostname, url.port or 443
        self._prefix = url.path.rstrip("/")
        self._timeout = timeout
        self._ssl = _ssl or self._ssl_context()
        self._conn: http.client.HTTPSConnection | None = None
        self._lock = threading.Lock()

    def fork(self) -> Rest:
        """Another client with the same credentials and its own connection (for requests in parallel)."""
        return Rest(self._kubeconfig, self._timeout, _context=self.context, _ssl=self._ssl)

    def _ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context()
        if self.context.insecure:
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        elif self.context.ca_pem:
            ctx = ssl.create_default_context(cadata=self.context.ca_pem.decode())
        if self.context.cert_pem and self.context.key_pem:
            # load_cert_chain reads files only: a private directory that lives as long as this call.
            tmp = tempfile.mkdtemp(prefix="kapi-rest-")
            try:
                cert, key = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
                cert.write_bytes(self.context.cert_pem)
                key.write_bytes(self.context.key_pem)
                ctx.load_cert_chain(str(cert), str(key))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return ctx

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                query: dict[str, str] | None = None) -> dict[str, Any]:
        """``method path`` (e.g. ``"GET", "/api/v1/namespaces"``) with a JSON ``body``; the decoded answer."""
        target = self._prefix + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        headers = {"Accept": "application/json", "User-Agent": "kapi.testing"}
        if self.context.token:
            headers["Authorization"] = f"Bearer {self.context.token}"
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        with self._lock:
            for attempt in (1, 2):
                if self._conn is None:
                    self._conn = http.client.HTTPSConnection(self._host, self._port, context=self._ssl,
                                                             timeout=self._timeout)
                try:
                    self._conn.request(method, target, body=payload, headers=headers)
                    reply = self._conn.getresponse()
                    data = reply.read()
                    break
                except (OSError, http.client.HTTPException):
                    self._conn.close()
                    self._conn = None
                    if attempt == 2:
                        raise
        try:
            decoded = json.loads(data) if data else {}
        except ValueError:
            decoded = {"message": data[:200].decode(errors="replace")}
        if not 200 <= reply.status < 300:
            raise ApiError(method, path, reply.status, decoded if isinstance(decoded, dict) else {})
        return decoded if isinstance(decoded, dict) else {"items": decoded}

    def get(self, path: str, **query: str) -> dict[str, Any]:
        """GET ``path``; raises ApiError (e.g. ``status == 404``)."""
        return self.request("GET", path, query=query or None)

    def close(self) -> None:
        """Close the connection (a later request opens a new one)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class StackClient:
    """One persistent HTTPS connection through a stack's Envoy as its admin, for fault tests and benchmarks.

    ``stack`` is a :class:`kapi.local.launcher.Stack` (its ``url`` and admin
    PKI). :meth:`request` never raises for transport trouble: it answers
    (HTTP status, decoded JSON body or raw bytes), and (0, None) when the
    connection failed (it reconnects on the next call). ``timeout`` is in
    seconds per request.
    """

    def __init__(self, stack: Any, timeout: float = 10) -> None:
        url = urllib.parse.urlparse(stack.url)
        self.host, self.port, self.timeout = url.hostname or "127.0.0.1", url.port or 443, timeout
        self.context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
        self.context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
        self.conn: http.client.HTTPSConnection | None = None

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> tuple[int, Any]:
        """(status, body) of one request; status 0 for a connection failure. ``timeout`` (seconds) overrides
        the client's for this request."""
        try:
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.context,
                                                        timeout=self.timeout)
            self.conn.timeout = self.timeout if timeout is None else timeout
            if self.conn.sock is not None:
                self.conn.sock.settimeout(self.conn.timeout)
            data = json.dumps(body).encode() if body is not None else None
            self.conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            reply = self.conn.getresponse()
            raw = reply.read()
            try:
                return reply.status, json.loads(raw) if raw else None
            except ValueError:
                return reply.status, raw
        except (OSError, http.client.HTTPException):
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return 0, None
