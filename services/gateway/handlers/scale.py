"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a workload's replicas.

GET answers the Scale; PUT and PATCH change ``spec.replicas`` of the parent
object (Deployment, ReplicaSet, StatefulSet, ReplicationController) through
the normal admission and conditional-update path. Source: "API concepts:
Subresources" and the autoscaling/v1 Scale reference.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation
from services.gateway.handlers.patch import RETRIES
from services.gateway.handlers.patch import apply as apply_patch
from services.gateway.handlers.update import store_update
from services.gateway.scope import RequestScope, parse_resource_version


def _selector(obj: dict[str, Any]) -> str:
    sel = (obj.get("spec") or {}).get("selector") or {}
    labels = sel.get("matchLabels", {}) if "matchLabels" in sel or "matchExpressions" in sel else sel
    parts = [f"{k}={v}" for k, v in (labels or {}).items()]
    for expr in sel.get("matchExpressions") or []:
        op = str(expr.get("operator", "")).lower()
        if op in ("exists", "doesnotexist"):
            parts.append(expr.get("key", "") if op == "exists" else "!" + expr.get("key", ""))
        else:
            parts.append(f"{expr.get('key')} {op} ({','.join(expr.get('values') or [])})")
    return ",".join(parts)


def to_scale(obj: dict[str, Any]) -> dict[str, Any]:
    """The Scale of a workload object."""
    meta = obj.get("metadata") or {}
    keep = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {k: meta[k] for k in keep if k in meta},
            "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": _selector(obj)}}


def _replicas(scale: Any) -> int:
    replicas = (scale.get("spec") or {}).get("replicas") if isinstance(scale, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid("Scale", "", [errors.Cause("FieldValueInvalid", f"Invalid value: {replicas}: must be "
                                                        "greater than or equal to 0", "spec.replicas")],
                             "autoscaling")
    return replicas


def _respond(scope: RequestScope, obj: dict[str, Any] | bytes) -> web.Response:
    parent = jsonutil.loads(obj) if isinstance(obj, bytes) else obj
    data, content_type = negotiation.encode(to_scale(parent), scope.output)
    return web.Response(body=data, content_type=content_type)


async def scale(scope: RequestScope) -> web.Response:
    """GET, PUT or PATCH ``<workload>/scale``."""
    verb = scope.info.verb
    for attempt in range(RETRIES):
        current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                           storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
        if verb == "get":
            return _respond(scope, current.object)
        parent = jsonutil.loads(current.object)
        body = await scope.request.read()
        if verb == "update":
            wanted = negotiation.decode_body(body, scope.content_type)
        elif verb == "patch":
            wanted = apply_patch(scope.content_type, to_scale(parent), negotiation.decode_body(
                body, scope.content_type), scope, merge_schema=False)
        else:
            raise errors.method_not_allowed(f"{scope.resource.resource}/scale", verb, scope.resource.group)
        pinned = str(((wanted or {}).get("metadata") or {}).get("resourceVersion") or "")
        if pinned and parse_resource_version(pinned) != current.resource_version:
            raise errors.conflict(scope.resource.resource, scope.info.name, "the object has been modified; please "
                                  "apply your changes to the latest version and try again", scope.resource.group)
        parent.setdefault("spec", {})["replicas"] = _replicas(wanted)
        try:
            response = await store_update(scope, parent, current, current.resource_version)
        except errors.StatusError as err:
            if err.reason != "Conflict" or pinned or attempt == RETRIES - 1:
                raise
            continue
        return _respond(scope, response.body if isinstance(response.body, bytes) else b"{}")
    raise AssertionError("unreachable")
