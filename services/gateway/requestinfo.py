"""Resolve a URL into a :class:`RequestInfo`, as k8s.io/apiserver's RequestInfoFactory does.

Paths under ``/api`` (the core group) and ``/apis/<group>`` are resource
requests: ``/api/v1/namespaces/demo/configmaps/app`` is verb ``get``,
resource ``configmaps``, namespace ``demo``, name ``app``. Everything else
(``/version``, ``/healthz``, ``/api``, ``/apis/<group>/<version>`` discovery
documents) is a non-resource request whose verb is the lower-cased HTTP
method. Source: k8s.io/apiserver pkg/endpoints/request/requestinfo.go and the
"Authorization: Review your request attributes" reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_SPECIAL_VERBS = frozenset({"proxy", "watch"})
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


@dataclass(frozen=True)
class RequestInfo:
    """What a request addresses: resource vs non-resource, verb, group/version/resource, namespace, name."""

    path: str
    verb: str
    is_resource_request: bool = False
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: tuple[str, ...] = ()

    @property
    def long_running(self) -> bool:
        """Watches and proxies are long-running (not bounded by --request-timeout, no seat held)."""
        return self.verb in ("watch", "proxy") or self.subresource in ("exec", "attach", "portforward", "proxy", "log")


def query_bool(value: str | None) -> bool:
    """A boolean query parameter as metav1's conversion reads it: absent is false, "0" and "false" (any case)
    are false, anything else (``watch=1``, ``watch=yes``, ``watch=``) is true."""
    return value is not None and value != "0" and value.lower() != "false"


def resolve(method: str, path: str, query: Mapping[str, str]) -> RequestInfo:
    """Build the RequestInfo of ``method path?query``.

    ``query`` maps parameter names to their (first) values. A GET without a
    name becomes ``list`` (or ``watch`` with ``watch=true``); a DELETE without
    a name becomes ``deletecollection``.
    """
    parts = [p for p in path.strip("/").split("/") if p]
    non_resource = RequestInfo(path=path, verb=method.lower())
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    prefix, rest = parts[0], parts[1:]
    group = ""
    if prefix == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    if rest[0] in _SPECIAL_VERBS:
        if len(rest) < 2:
            return non_resource
        verb, rest = rest[0], rest[1:]
        via_method = False
    else:
        verb = _METHOD_VERBS.get(method.upper(), "")
        via_method = True
    namespace = ""
    if rest[0] == "namespaces":
        if len(rest) > 1:
            namespace = rest[1]
            if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
                rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) >= 2 else ""
    subresource = rest[2] if len(rest) >= 3 and verb != "proxy" else ""
    if via_method and not name and verb == "get":
        verb = "watch" if query_bool(query.get("watch")) else "list"
    if via_method and not name and verb == "delete":
        verb = "deletecollection"
    return RequestInfo(path=path, verb=verb, is_resource_request=True, api_prefix=prefix, api_group=group,
                       api_version=version, namespace=namespace, resource=resource, subresource=subresource,
                       name=name, parts=tuple(rest))
