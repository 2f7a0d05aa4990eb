"""Webhook client configuration from a kubeconfig file, and Go durations (kube's webhook flags).

kube-apiserver's authentication and authorization webhooks
(``--authentication-token-webhook-config-file``,
``--authorization-webhook-config-file``; "Webhook Mode") read a kubeconfig:
the cluster is the remote service (``server``,
``certificate-authority[-data]``, ``insecure-skip-tls-verify``), the user is
how the API server authenticates to it (``client-certificate[-data]`` and
``client-key[-data]``, or ``token``); the current context (else the first
entry) is used. Their TTL flags are Go durations (``5m``, ``30s``).
"""

from __future__ import annotations

import base64
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class WebhookConfig:
    """The remote service of a webhook kubeconfig: URL, TLS context (None for http), bearer token."""

    server: str
    ssl_context: ssl.SSLContext | None
    token: str = ""


def _material(entry: Mapping[str, Any], key: str, base: Path) -> bytes | None:
    if entry.get(f"{key}-data"):
        return base64.b64decode(entry[f"{key}-data"])
    if entry.get(key):
        path = Path(entry[key])
        return (path if path.is_absolute() else base / path).read_bytes()
    return None


def _pick(doc: Mapping[str, Any], kind: str, name: str) -> dict[str, Any]:
    items = doc.get(f"{kind}s") or []
    for item in items:
        if isinstance(item, dict) and item.get("name") == name:
            return dict(item.get(kind) or {})
    if not items or not isinstance(items[0], dict):
        raise ValueError(f"the kubeconfig has no {kind}s")
    return dict(items[0].get(kind) or {})


def load_webhook_config(path: str) -> WebhookConfig:
    """Parse a webhook kubeconfig file (see the module docstring).

    Relative certificate paths are relative to the file's folder. Raises
    OSError when a file cannot be read, ValueError (ssl.SSLError included)
    when the content is not a usable kubeconfig.
    """
    doc = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a kubeconfig")
    base = Path(path).resolve().parent
    context: dict[str, Any] = {}
    current = doc.get("current-context") or ""
    for item in doc.get("contexts") or []:
        if isinstance(item, dict) and (item.get("name") == current or not current):
            context = dict(item.get("context") or {})
            break
    cluster = _pick(doc, "cluster", context.get("cluster", ""))
    user = _pick(doc, "user", context.get("user", "")) if doc.get("users") else {}
    server = str(cluster.get("server") or "")
    if not server.startswith(("https://", "http://")):
        raise ValueError(f"{path}: the cluster server must be an http(s) URL, got {server!r}")
    context_ssl: ssl.SSLContext | None = None
    if server.startswith("https://"):
        ca = _material(cluster, "certificate-authority", base)
        context_ssl = ssl.create_default_context(cadata=ca.decode() if ca else None)
        if cluster.get("insecure-skip-tls-verify"):
            context_ssl.check_hostname = False
            context_ssl.verify_mode = ssl.CERT_NONE
        cert, key = _material(user, "client-certificate", base), _material(user, "client-key", base)
        if cert and key:
            with tempfile.TemporaryDirectory() as tmp:  # ssl loads client credentials only from files
                (Path(tmp) / "c.pem").write_bytes(cert)
                (Path(tmp) / "k.pem").write_bytes(key)
                context_ssl.load_cert_chain(str(Path(tmp) / "c.pem"), str(Path(tmp) / "k.pem"))
    return WebhookConfig(server, context_ssl, str(user.get("token") or ""))
