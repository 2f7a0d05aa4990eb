"""Small helpers over Kubernetes objects as dicts, and the resource rows the loops use."""

from __future__ import annotations

import datetime
from typing import Any

from kapi.resources import REGISTRY, Resource


def row(group: str, resource: str) -> Resource:
    """The served resource row (KeyError if kapi does not serve it)."""
    found = REGISTRY.get(group, "v1", resource)
    if found is None:
        raise KeyError(f"{resource}.{group}")
    return found


NAMESPACES = row("", "namespaces")
SERVICEACCOUNTS = row("", "serviceaccounts")
CONFIGMAPS = row("", "configmaps")
SECRETS = row("", "secrets")
RESOURCEQUOTAS = row("", "resourcequotas")
ROLEBINDINGS = row("rbac.authorization.k8s.io", "rolebindings")
CLUSTERROLEBINDINGS = row("rbac.authorization.k8s.io", "clusterrolebindings")


def meta(obj: dict[str, Any] | None) -> dict[str, Any]:
    """``obj["metadata"]`` or {}."""
    value = (obj or {}).get("metadata")
    return value if isinstance(value, dict) else {}


def deleting(obj: dict[str, Any] | None) -> bool:
    """True if ``metadata.deletionTimestamp`` is set."""
    return bool(meta(obj).get("deletionTimestamp"))


def namespace_active(ns: dict[str, Any] | None) -> bool:
    """True for a Namespace that exists, is not being deleted and is not Terminating."""
    if ns is None or deleting(ns):
        return False
    return ((ns.get("status") or {}).get("phase") or "Active") != "Terminating"


def now_text(now: datetime.datetime | None = None) -> str:
    """metav1.Time text (RFC 3339 seconds, UTC, Z)."""
    return (now or datetime.datetime.now(datetime.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime.datetime | None:
    """An RFC 3339 time as an aware datetime, or None if unparsable."""
    try:
        value = datetime.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)
