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

Server-side apply of a Scale (``application/apply-patch+yaml``, client-go's
ApplyScale) runs the Scale's field manager over the parent's managedFields
as kube's ScaleHandler shows them (services/gateway/scalefields.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import crd, errors, grpcutil, jsonutil, schema
from kapi import managedfields as mf
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import fieldmanager, negotiation, scalefields, table
from services.gateway.handlers.apply import object_type
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
    Conflict when stale), a ``metadata.uid`` must be the parent's (409); 422 for negative replicas; 405 for
    other verbs. A built-in workload's managedFields go through the Scale's field manager
    (:func:`scalefields.track_update`); an apply patch is :func:`_apply`.
    """
    verb = scope.info.verb
    paths = scale_paths(scope)
    if verb == "get":
        current: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                           storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
        return _respond(scope, current.object, paths)
    if verb not in ("update", "patch"):
        raise errors.no_route()
    body = await (read_patch(scope) if verb == "patch" else scope.request.read())
    if verb == "patch" and scope.content_type == negotiation.APPLY_PATCH:
        return await _apply(scope, body, paths)
    decoded = negotiation.decode_body(body, scope.content_type)

    mappings = scalefields.REPLICAS_PATHS.get((scope.resource.group, scope.resource.resource))
    manager = fieldmanager.manager(scope)
    # a built-in workload's managedFields are the Scale field manager's (below), not the write path's tracking
    scope.applying = mappings is not None

    async def scaled(live: dict[str, Any] | None) -> dict[str, Any]:
        assert live is not None
        old = to_scale(live, paths)
        wanted = decoded if verb == "update" else apply_patch(scope.content_type, to_scale(live, paths), decoded,
                                                              scope, merge_schema=False)
        if isinstance(wanted, dict):
            _check_scale(scope, wanted)
        wanted = schema.check_types(wanted, "autoscaling", "v1", "Scale")
        replicas = _replicas(wanted, scope.info.name)  # kube's order: ValidateScale, the uid, then the store's rv
        _check_uid(scope, wanted, live)
        pinned = str((wanted.get("metadata") or {}).get("resourceVersion") or "")
        if pinned and parse_resource_version(pinned) != parse_resource_version(
                str((live.get("metadata") or {}).get("resourceVersion") or "")):
            raise store.stale(scope)
        set_replicas(live, replicas, paths)
        if mappings is not None:
            _set_fields(live, scalefields.track_update(mf.entries(live), old, wanted, manager, fieldmanager.now(),
                                                       mappings, scope.resource.group_version))
        return live

    stored, _ = await store.guaranteed_update(scope, scaled)
    return _respond(scope, stored, paths)


def _set_fields(obj: dict[str, Any], fields: list[dict[str, Any]]) -> None:
    """Store ``fields`` as ``obj``'s managedFields (none: the key goes, as kube encodes an empty list)."""
    meta = obj.setdefault("metadata", {})
    if fields:
        meta["managedFields"] = fields
    else:
        meta.pop("managedFields", None)


def _check_uid(scope: RequestScope, scale: dict[str, Any], live: dict[str, Any]) -> None:
    """scaleUpdatedObjectInfo's precondition: a Scale ``metadata.uid`` other than the parent's is 409 Conflict
    ``Operation cannot be fulfilled on deployments/scale.apps "x": Precondition failed: UID in precondition: <uid>,
    UID in object meta: <uid>``."""
    uid = str((scale.get("metadata") or {}).get("uid") or "")
    live_uid = str((live.get("metadata") or {}).get("uid") or "")
    if uid and uid != live_uid:
        raise errors.conflict(f"{scope.resource.resource}/scale", scope.info.name, f"Precondition failed: UID in "
                              f"precondition: {uid}, UID in object meta: {live_uid}", scope.resource.group)


async def _apply(scope: RequestScope, body: bytes, paths: ScalePaths | None) -> web.Response:
    """Server-side apply of an ``autoscaling/v1`` Scale to a workload's ``/scale``; 200 with the Scale.

    As kube: the Scale's field manager (manager ``fieldManager``, required) applies the configuration to the
    parent's Scale, whose managedFields are the parent's entries owning ``spec.replicas``
    (:func:`scalefields.to_subresource`); the result's entries go back onto the parent
    (:func:`scalefields.to_parent`: the applier gets an ``Apply`` entry with ``subresource: scale`` owning
    ``f:spec.f:replicas``, without ``time``). Errors, in kube's order: 400 without ``fieldManager`` or for a body
    that is no YAML object; 404 when the parent does not exist; 400 ``invalid object type: <group>/<version>,
    Kind=<kind>`` unless the body is an autoscaling/v1 Scale (versionCheckManager), ``metadata.managedFields
    must be nil``, a configuration that does not fit Scale (kube's 500, :func:`fieldmanager.check_declared`), a
    name or namespace other than the URL's; 409 ``Apply failed with 1 conflict: conflict with "<manager>" using
    autoscaling/v1: .spec.replicas`` when another manager owns a replicas value it changes (``force=true`` takes
    it); 422 for negative replicas; 409 for a stale ``metadata.resourceVersion`` or another ``metadata.uid``; then
    what the write path answers (authorization of ``patch`` on ``<resource>/scale`` came first, admission runs as for
    every write). A custom resource's Scale cannot be applied: kube's 500 once the body passed the checks above
    (:func:`scalefields.refuse_custom_resource`).
    """
    name = fieldmanager.manager(scope, required=True)
    force = fieldmanager.force(scope)
    sent = negotiation.decode_body(body, negotiation.APPLY_PATCH)
    if sent is not None and not isinstance(sent, dict):
        raise errors.bad_request("error decoding YAML: error unmarshaling JSON: json: cannot unmarshal "
                                 f"{'array' if isinstance(sent, list) else 'string'} into Go value of type "
                                 "map[string]interface {}")
    config: dict[str, Any] = sent if isinstance(sent, dict) else {}
    sent_type = object_type(config)
    meta = config.get("metadata")
    sent_namespace = str(meta.get("namespace") or "") if isinstance(meta, dict) else ""
    mappings = scalefields.REPLICAS_PATHS.get((scope.resource.group, scope.resource.resource), {})
    scope.applying = True  # the managedFields are the Scale's field manager's, not Update tracking's

    async def applied(live: dict[str, Any] | None) -> dict[str, Any]:
        assert live is not None
        if sent_type != ("autoscaling", "v1", "Scale"):
            raise errors.bad_request(f"invalid object type: {sent_type[0]}/{sent_type[1]}, Kind={sent_type[2]}")
        if isinstance(meta, dict) and meta.get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        if paths is not None:
            scalefields.refuse_custom_resource(config, sent_namespace)
        fieldmanager.check_declared(scope, config, sent_namespace, ("autoscaling", "v1", "Scale"))
        parent = mf.entries(live)
        current = scalefields.with_fields(to_scale(live), parent, mappings)
        result = mf.apply(current, config, name, scalefields.SCALE_VERSION, fieldmanager.now(),
                          scalefields.scale_types(), force, "scale")
        _check_scale(scope, result)
        result = schema.check_types(result, "autoscaling", "v1", "Scale")
        spec = result.get("spec")
        replicas = _replicas(result, scope.info.name) if isinstance(spec, dict) and "replicas" in spec else 0
        # the configuration's uid and resourceVersion are merged into the Scale as any field (kube's merge; the
        # stripped identity fields are only owned by nobody)
        for key in ("uid", "resourceVersion"):
            if isinstance(meta, dict) and meta.get(key):
                result.setdefault("metadata", {})[key] = meta[key]
        _check_uid(scope, result, live)
        pinned = str((result.get("metadata") or {}).get("resourceVersion") or "")
        if pinned and parse_resource_version(pinned) != parse_resource_version(
                str((live.get("metadata") or {}).get("resourceVersion") or "")):
            raise store.stale(scope)
        set_replicas(live, replicas)
        _set_fields(live, scalefields.parent_fields(parent, result, mappings, scope.resource.group_version))
        return live

    stored, _ = await store.guaranteed_update(scope, applied)
    return _respond(scope, stored, paths)
