"""The ``scale`` subresource: an ``autoscaling/v1`` Scale view of a workload's replicas.

GET answers the Scale; PUT and PATCH change ``spec.replicas`` of the parent
object (Deployment, ReplicaSet, StatefulSet, ReplicationController) through
the normal admission and conditional-update path. A custom resource's
Scale follows its CRD version's ``subresources.scale``: ``spec.replicas``
from ``specReplicasPath`` (absent: 0), ``status.replicas`` from
``statusReplicasPath`` and ``status.selector`` from ``labelSelectorPath``
(absent: ""), and writes set ``specReplicasPath``. Sources: "API concepts:
Subresources", the autoscaling/v1 Scale reference and "Extend the
Kubernetes API with CustomResourceDefinitions" (Scale subresource).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import crd, errors, grpcutil, jsonutil, schema
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation, table
from services.gateway.handlers.patch import apply as apply_patch
from services.gateway.handlers.patch import read_patch
from services.gateway.registry import store
from services.gateway.scope import RequestScope, check_identity, parse_resource_version


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


ScalePaths = tuple[str, str, str]  # a CRD's specReplicasPath, statusReplicasPath, labelSelectorPath


def scale_paths(scope: RequestScope) -> ScalePaths | None:
    """The ``subresources.scale`` paths of a custom resource's version, or None for a built-in workload."""
    custom = scope.backends.custom_resources
    definition = custom.crd_of(scope.resource) if custom is not None else None
    if definition is None:
        return None
    scale = crd.subresources(definition, scope.resource.version).get("scale")
    scale = scale if isinstance(scale, dict) else {}
    return (str(scale.get("specReplicasPath") or ".spec.replicas"),
            str(scale.get("statusReplicasPath") or ".status.replicas"), str(scale.get("labelSelectorPath") or ""))


def _fields(path: str) -> list[str]:
    return path.lstrip(".").split(".")


def _nested(obj: dict[str, Any], path: str, type_: type, type_name: str) -> Any:
    """The value at a dotted ``path`` (None when absent); 500 when it has another type, as kube's accessors."""
    value: Any = obj
    for name in _fields(path):
        if not isinstance(value, dict) or name not in value:
            return None
        value = value[name]
    if value is None:
        return None
    if not isinstance(value, type_) or isinstance(value, bool) and type_ is not bool:
        go = {str: "string", int: "int64", float: "float64", bool: "bool", dict: "map[string]interface {}",
              list: "[]interface {}"}.get(type(value), type(value).__name__)
        raise errors.internal(f"{path} accessor error: {value} is of the type {go}, expected {type_name}")
    return value


def to_scale(obj: dict[str, Any], paths: ScalePaths | None = None) -> dict[str, Any]:
    """The Scale of a workload object, or of a custom resource with its CRD's scale ``paths``, encoded as
    autoscaling/v1 Scale's Go struct: ``spec.replicas`` and ``status.selector`` are omitempty (a zero or empty one
    is absent), ``status.replicas`` is always there."""
    meta = obj.get("metadata") or {}
    keep = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
    if paths is not None:
        spec_path, status_path, selector_path = paths
        spec = {"replicas": _nested(obj, spec_path, int, "int64") or 0}
        status = {"replicas": _nested(obj, status_path, int, "int64") or 0,
                  "selector": (_nested(obj, selector_path, str, "string") or "") if selector_path else ""}
    else:
        spec = {"replicas": (obj.get("spec") or {}).get("replicas", 0)}
        status = {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": _selector(obj)}
    if not spec["replicas"]:
        del spec["replicas"]
    if not status["selector"]:
        del status["selector"]
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {k: meta[k] for k in keep if k in meta},
            "spec": spec, "status": status}


def set_replicas(obj: dict[str, Any], replicas: int, paths: ScalePaths | None = None) -> None:
    """Write ``replicas`` into the parent object at ``spec.replicas`` or the CRD's ``specReplicasPath``."""
    *parents, last = _fields(paths[0]) if paths is not None else ["spec", "replicas"]
    target = obj
    for name in parents:
        child = target.get(name)
        if not isinstance(child, dict):
            child = target[name] = {}
        target = child
    target[last] = replicas


def _replicas(scale: Any, name: str) -> int:
    replicas = (scale.get("spec") or {}).get("replicas") if isinstance(scale, dict) else None
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid("Scale", name, [errors.Cause("FieldValueInvalid", f"Invalid value: {replicas}: must be "
                                                          "greater than or equal to 0", "spec.replicas")],
                             "autoscaling")
    return replicas


def _check_scale(scope: RequestScope, scale: dict[str, Any]) -> None:
    """400 BadRequest for a Scale body (PUT, or a patch's result) of another kind or another object than the
    URL's, as kube's update and patch handlers check (checkName) for subresources too."""
    kind, api_version = scale.get("kind") or "", scale.get("apiVersion") or ""
    if api_version and api_version != "autoscaling/v1":
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 "version (autoscaling/v1)")
    if kind and kind != "Scale":
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind (Scale)")
    meta: dict[str, Any] = scale["metadata"] if isinstance(scale.get("metadata"), dict) else {}
    check_identity(scope, meta, empty_name_ok=True)


def _respond(scope: RequestScope, obj: dict[str, Any] | bytes, paths: ScalePaths | None) -> web.Response:
    parent = jsonutil.loads(obj) if isinstance(obj, bytes) else obj
    body, output = to_scale(parent, paths), scope.output
    # kube's %T of the Scale: the internal autoscaling.Scale of a workload's, the autoscaling/v1 one of a CR's
    negotiation.check_partial(output, False, "*autoscaling.Scale" if paths is None else "*v1.Scale")
    if output.table and paths is None:  # a built-in workload's Scale: kube's printScale Table
        body = table.scale_table(body, negotiation.include_object(scope.param("includeObject")), output.version)
    elif output.table:  # a custom resource's: its CRD's printer columns over the Scale (the scale scope's convertor)
        body = table.table(scope.resource, [body], {"resourceVersion": body["metadata"].get("resourceVersion", "")},
                           negotiation.include_object(scope.param("includeObject")), output.version)
    elif output.partial_metadata:
        body = {"kind": "PartialObjectMetadata", "apiVersion": output.meta_api_version, "metadata": body["metadata"]}
    data, content_type = negotiation.encode(body, output)
    return scope.send(data, content_type)  # newline-terminated or pretty, warnings, gzip: as every answer


async def scale(scope: RequestScope) -> web.Response:
    """GET, PUT or PATCH ``<workload>/scale``: a write sets the parent's replicas through the write path.

    A ``metadata.resourceVersion`` in the Scale pins the parent's (409
    Conflict when stale); 422 for negative replicas; 405 for other verbs.
    """
    verb = scope.info.verb
    paths = scale_paths(scope)
    if verb == "get":
        current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                           storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
        return _respond(scope, current.object, paths)
    if verb not in ("update", "patch"):
        raise errors.method_not_allowed(f"{scope.resource.resource}/scale", verb, scope.resource.group)
    body = await (read_patch(scope) if verb == "patch" else scope.request.read())
    decoded = negotiation.decode_body(body, scope.content_type)

    async def scaled(live: dict[str, Any] | None) -> dict[str, Any]:
        assert live is not None
        wanted = decoded if verb == "update" else apply_patch(scope.content_type, to_scale(live, paths), decoded,
                                                              scope, merge_schema=False)
        if isinstance(wanted, dict):
            _check_scale(scope, wanted)
        wanted = schema.check_types(wanted, "autoscaling", "v1", "Scale")
        pinned = str((wanted.get("metadata") or {}).get("resourceVersion") or "")
        if pinned and parse_resource_version(pinned) != parse_resource_version(
                str((live.get("metadata") or {}).get("resourceVersion") or "")):
            raise store.stale(scope)
        set_replicas(live, _replicas(wanted, scope.info.name), paths)
        return live

    stored, _ = await store.guaranteed_update(scope, scaled)
    return _respond(scope, stored, paths)
