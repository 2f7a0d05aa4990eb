"""kapi.resources facts checked against the official Python client, which is generated from kube 1.37's OpenAPI."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import kubernetes.client.api

from kapi.resources import REGISTRY, RETURNS_DELETED_OBJECT

_DELETE = re.compile(r"    def (delete_\w+?)_with_http_info\(")
_PATH = re.compile(r"resource_path='(/apis?/[^']*)'")


def _client_delete_types() -> dict[tuple[str, str], str]:
    """{(group, resource): the 200 response type} of every single-object DELETE of the generated client."""
    out = {}
    for info in pkgutil.iter_modules(kubernetes.client.api.__path__):
        source = inspect.getsource(importlib.import_module(f"kubernetes.client.api.{info.name}"))
        for match in _DELETE.finditer(source):
            if "collection" in match.group(1):
                continue
            types = re.search(r"'200': (\"?[\w]+\"?)", source[match.end():])
            serialize = source.find(f"def _{match.group(1)}_serialize", match.end())
            path = _PATH.search(source[serialize:serialize + 8000])
            assert types and path, match.group(1)
            parts = path.group(1).strip("/").split("/")
            group = "" if parts[0] == "api" else parts[1]
            rest = parts[2:] if parts[0] == "api" else parts[3:]
            resource = rest[2] if rest[0] == "namespaces" and len(rest) > 2 else rest[0]
            out[(group, resource)] = types.group(1).strip('"')
    return out


def test_deletes_that_return_the_object_are_those_of_kubes_openapi() -> None:
    """Every resource kapi serves answers an immediate DELETE with the object exactly when kube's OpenAPI says so."""
    types = _client_delete_types()
    served = {(r.group, r.resource) for r in REGISTRY.rows if r.stored}
    returning = {key for key, rtype in types.items() if rtype != "object" and key in served}
    assert returning == RETURNS_DELETED_OBJECT
    assert {("", "pods"), ("", "services"), ("storage.k8s.io", "storageclasses")} <= returning
    assert types[("", "configmaps")] == "object" and types[("", "namespaces")] == "object"
