"""Gateway glue for field ownership: managedFields of every write, and the object an apply produces.

Every create, update and patch records an ``Update`` entry for its manager
(the ``fieldManager`` query parameter, else the User-Agent up to its first
"/", as kube-apiserver) — :func:`track_update`, called by the write path
(services/gateway/registry/store.py); server-side apply computes its result
with :func:`apply` (kapi.managedfields.apply), called by the apply handler
(services/gateway/handlers/apply.py). Source: "Server-Side Apply" and
k8s.io/apiserver pkg/endpoints/handlers/fieldmanager (last-applied
annotation sync and the client-side-apply upgrade path).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from kapi import crd, errors, gofmt, jsonutil, kinds
from kapi import managedfields as mf
from kapi.k8sproto import goshape, zero
from kapi.resources import REGISTRY
from services.gateway import patch as patching
from services.gateway.scope import RequestScope, dry_run_causes, field_validation_causes, invalid_options

MAX_MANAGER_LENGTH = 128
KUBECTL_SSA_MANAGER = "kubectl"
LAST_APPLIED_LIMIT = 256 * (1 << 10)  # bytes of all annotations (kube's totalAnnotationSizeLimitB)


def now() -> str:
    """The current time as kube writes managedFields times (RFC 3339, seconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def field_manager_causes(name: str) -> list[errors.Cause]:
    """ValidateFieldManager's causes for a ``fieldManager`` value: at most 128 bytes (``Too long: may not be more
    than 128 bytes``), every character printable (Go's unicode.IsPrint) else ``Invalid value: "a\\nb": invalid
    character U+000A (at position 1)`` (byte offset); ``[]`` when valid (``validation/validation.go``)."""
    causes = []
    if len(name.encode()) > MAX_MANAGER_LENGTH:
        causes.append(errors.Cause("FieldValueTooLong", f"Too long: may not be more than {MAX_MANAGER_LENGTH} bytes",
                                   "fieldManager"))
    position = 0
    for char in name:
        if not char.isprintable():  # Python's printable set is Go's unicode.IsPrint (L, M, N, P, S, ASCII space)
            causes.append(errors.Cause("FieldValueInvalid", f"Invalid value: {gofmt.go_quote(name)}: invalid "
                                       f"character U+{ord(char):04X} (at position {position})", "fieldManager"))
        position += len(char.encode())
    return causes


def check_write_options(scope: RequestScope) -> None:
    """ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions' common rules on the query, as the
    create, update and patch handlers check their options first, before the body is decoded or the object read:
    ValidateFieldManager (:func:`field_manager_causes`), ValidateDryRun and ValidateFieldValidation
    (:func:`scope.dry_run_causes`, :func:`scope.field_validation_causes`); all of them in one 422
    ``CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\nb": invalid character U+000A (at
    position 1)`` (UpdateOptions, PatchOptions by verb; :func:`scope.invalid_options`; ``validation/validation.go``,
    ``handlers/create.go``, ``update.go``)."""
    causes = field_manager_causes(scope.param("fieldManager"))
    causes += dry_run_causes(scope.query.getall("dryRun", []))
    causes += field_validation_causes(scope.param("fieldValidation"))
    if causes:
        raise invalid_options(scope.info.verb, causes)


def manager(scope: RequestScope, required: bool = False) -> str:
    """The request's field manager (:func:`check_write_options`' rules); derived from the User-Agent when
    absent. ``required`` (apply): absent is ValidatePatchOptions' 422 ``PatchOptions.meta.k8s.io "" is invalid:
    fieldManager: Required value: is required for apply patch`` (the PATCH handler checks it first, with the
    other PatchOptions rules: handlers/patch.py validate_patch_options)."""
    check_write_options(scope)
    name = scope.param("fieldManager")
    if not name:
        if required:
            raise errors.invalid("PatchOptions", "", [APPLY_MANAGER_REQUIRED], group="meta.k8s.io")
        name = mf.manager_from_user_agent(scope.request.headers.get("User-Agent", ""))
    return name


APPLY_MANAGER_REQUIRED = errors.Cause("FieldValueRequired", "Required value: is required for apply patch",
                                      "fieldManager")


OBJECT_META_REF = "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_CRD_TYPES_LIMIT = 256  # CRD version schemas whose Types crd_types remembers
_crd_types: dict[int, tuple[dict[str, Any], mf.Types]] = {}  # id(openAPIV3Schema) -> (schema kept alive, Types)


def crd_types(definition: dict[str, Any], version: str) -> mf.Types:
    """The list/map semantics of a custom resource at ``version`` of its CRD ``definition`` (a CRD JSON dict).

    kube builds the custom resource's structured-merge-diff type from the version's structural
    ``openAPIV3Schema`` (apiextensions-apiserver ``pkg/controller/openapi/builder`` BuildOpenAPIV3, then
    kube-openapi ``pkg/schemaconv`` ToSchemaFromOpenAPI): ``metadata`` is ObjectMeta (so ``ownerReferences`` are
    keyed by ``uid``, ``finalizers`` a set), ``apiVersion``/``kind`` strings; a list is associative by its
    ``x-kubernetes-list-map-keys`` with ``x-kubernetes-list-type: map``, a set with ``set``, else atomic (the
    default); an object is granular unless ``x-kubernetes-map-type: atomic``; an object without properties, the
    unknown fields of an ``x-kubernetes-preserve-unknown-fields`` subtree and a CRD version without a schema are
    structured-merge-diff's deduced type (maps granular, lists atomic) — :class:`kapi.managedfields.Types` reads
    all of these from the schema. Cached per schema object (the informer replaces, never mutates, CRD dicts).
    """
    sch = crd.schema(definition, version) or {}
    cached = _crd_types.get(id(sch))
    if cached is not None and cached[0] is sch:
        return cached[1]
    props = dict(sch.get("properties") or {})
    props["metadata"] = {"$ref": OBJECT_META_REF}
    props.setdefault("apiVersion", {"type": "string"})
    props.setdefault("kind", {"type": "string"})
    root = {**sch, "type": "object", "properties": props}
    if not sch:
        root["x-kubernetes-preserve-unknown-fields"] = True
    t = mf.Types(root, patching._definitions())
    if len(_crd_types) >= _CRD_TYPES_LIMIT:
        _crd_types.clear()
    _crd_types[id(sch)] = (sch, t)
    return t


def types(scope: RequestScope) -> mf.Types:
    """The list/map semantics of the request's kind: a built-in kind's OpenAPI definition, a custom resource's
    CRD version schema (:func:`crd_types`; a custom resource whose CRD is unknown here: deduced)."""
    r = scope.resource
    if not REGISTRY.is_static(r):
        custom = scope.backends.custom_resources
        definition = custom.crd_of(r) if custom is not None else None
        if definition is not None:
            return crd_types(definition, r.version)
    return mf.Types(patching.schema_for(r.group, r.version, r.kind), patching._definitions())


def check_declared(scope: RequestScope, config: dict[str, Any], namespace: str = "",
                   kind: tuple[str, str, str] | None = None) -> None:
    """structuredmerge's ObjectToTyped of an apply configuration: a configuration that does not fit its type
    refuses the apply whatever ``fieldValidation`` says, with kube's message:
    ``failed to create typed patch object (<namespace>/<name>; <group>/<version>, Kind=<Kind>): <errors>`` —
    one error as it is (``.spec.foo: field not declared in schema``, ``.spec.replicas: expected numeric (int or
    float), got string``: :func:`kapi.managedfields.type_errors`), several as ``errors:`` and one indented line
    each; ``namespace`` is the one the body sent (kube names the configuration as decoded; the core group is
    ``/v1``). Sources: ``managedfields/internal/structuredmerge.go`` (Apply), ``handlers/patch.go``
    (applyPatcher returns the field manager's error as it is). kube writes that plain error as a 500 without
    reason (``responsewriters`` ErrorToAPIStatus); kapi answers 400 BadRequest with the same message, as bad
    input never gets a 500 here (docs/kube-parity.md says so on the row).

    ``kind`` (group, version, kind): check against that built-in kind instead of the request's (an
    ``autoscaling/v1`` Scale applied through ``/scale``: services/gateway/handlers/scale.py). A custom resource
    is checked against its CRD version's schema (:func:`crd_types`: what ``x-kubernetes-preserve-unknown-fields``
    keeps is declared); one whose CRD is not known here is not checked."""
    r = scope.resource
    if kind is not None:
        group, version, name = kind
        t = mf.Types(patching.schema_for(group, version, name), patching._definitions())
    else:
        group, version, name = r.group, r.version, r.kind
        if not REGISTRY.is_static(r):
            custom = scope.backends.custom_resources
            if custom is None or custom.crd_of(r) is None:
                return
        t = types(scope)
    lines = mf.type_errors(config, t)
    if not lines:
        return
    detail = lines[0] if len(lines) == 1 else "\n".join(["errors:", *("  " + line for line in lines)])
    meta = config["metadata"] if isinstance(config.get("metadata"), dict) else {}
    raise errors.bad_request(f"failed to create typed patch object ({namespace}/{meta.get('name') or ''}; "
                             f"{group}/{version}, Kind={name}): {detail}")


def reset_fields(scope: RequestScope) -> tuple[str, ...]:
    """Top-level fields a write to this endpoint cannot own (the strategy's ``GetResetFields``): status on the main
    resource, on /status the kind's :attr:`~kapi.kinds.base.Strategy.status_reset_fields` (spec; a
    CustomResourceDefinition's metadata and spec)."""
    if scope.info.subresource == "status":
        r = scope.resource
        return tuple(kinds.strategy_for(r.group, r.kind).status_reset_fields)
    if "status" in scope.resource.subresources:
        return ("status",)
    return ()


def _requested_paths(scope: RequestScope, requested: dict[str, Any] | None, t: mf.Types) -> set[mf.Path] | None:
    """The paths of the request's object as kube's field manager sees it: decoded and defaulted (the kind's
    ``SetDefaults``), before mutating admission. None when unknown (no object, or a custom resource, whose
    schema defaults are the admission service's)."""
    if requested is None or not isinstance(requested, dict):
        return None
    r = scope.resource
    if not REGISTRY.is_static(r):
        return None
    defaulted = copy.deepcopy(requested)
    try:
        zero.omit_empty(defaulted, r.group, r.version, r.kind)  # the decoded struct keeps no empty omitempty field
        kinds.strategy_for(r.group, r.kind).default(defaulted)
    except Exception:  # noqa: BLE001 - malformed input: fall back to tracking the admitted object
        return None
    message = goshape.message_for(defaulted)
    if message is not None:
        defaulted = goshape.shaped(defaulted, message)
    return set(mf.flatten(defaulted, t, reset_fields(scope), message is not None)[0])


def track_update(scope: RequestScope, old: bytes | None, new: bytes, requested: dict[str, Any] | None = None
                 ) -> bytes:
    """``new`` (admitted object JSON) with managedFields updated for this request's Update (unless applying).

    ``requested`` is the object the request asked to store (before admission): as kube's create/update/patch
    handlers record managedFields before mutating admission runs, fields that admission or the strategy add
    (a Pod's service-account volume and mounts, default tolerations, priority) are owned by no manager.
    """
    if scope.applying:
        return new
    obj = jsonutil.loads(new)
    live = jsonutil.loads(old) if old else None
    subresource = scope.info.subresource if scope.info.subresource in ("status", "scale") else ""
    t = types(scope)
    # a built-in kind is compared as its Go struct holds it (kube's field manager; on create against the kind's
    # zero object), so only nodes that appear become the writer's; a custom resource as its JSON is
    static = REGISTRY.is_static(scope.resource)
    message = goshape.message_for(obj) if static else None
    compared = obj
    if message is not None:
        live = goshape.shaped(live, message) if live is not None else goshape.zero(message)
        compared = goshape.shaped(obj, message)
    fields = mf.update(live, compared, manager(scope), scope.resource.group_version, now(), t, subresource,
                       reset_fields(scope), only=_requested_paths(scope, requested, t),
                       typed=message is not None or not static)
    meta = obj.setdefault("metadata", {})
    if fields:
        meta["managedFields"] = fields
    else:
        meta.pop("managedFields", None)
    return jsonutil.dumps(obj)


def force(scope: RequestScope) -> bool:
    """PatchOptions ``force`` as kube's query conversion reads it (apimachinery ``runtime/conversion.go``
    Convert_Slice_string_To_Pointer_bool, as Convert_Slice_string_To_bool): absent is false; otherwise the first
    value is false when it is ``0`` or ``false`` under Unicode case folding (strings.EqualFold), and true for
    anything else (``force=``, ``force=yes``). Never an error."""
    values = scope.query.getall("force", [])
    if not values:
        return False
    return not (values[0] == "0" or values[0].casefold() == "false")


def _sync_last_applied(config: dict[str, Any], result: dict[str, Any], name: str) -> None:
    """kube's lastAppliedUpdater: kubectl's server-side apply keeps a last-applied annotation current.

    When the manager is ``kubectl`` and the applied object carries the annotation, it becomes the applied
    configuration without the annotation itself, encoded as kube's unstructured JSON encoder
    (:func:`kapi.jsonutil.dumps_go_encoder`); an annotation that would take the object's annotations past
    256 kB is dropped instead.
    """
    annotations = (result.get("metadata") or {}).get("annotations")
    if name != KUBECTL_SSA_MANAGER or not isinstance(annotations, dict) or not annotations.get(mf.LAST_APPLIED):
        return
    applied = jsonutil.loads(jsonutil.dumps(config))
    config_annotations = (applied.get("metadata") or {}).get("annotations")
    if isinstance(config_annotations, dict):
        config_annotations.pop(mf.LAST_APPLIED, None)  # an emptied map stays as {} (unstructured SetAnnotations)
    annotations[mf.LAST_APPLIED] = jsonutil.dumps_go_encoder(applied)
    if sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items()) > LAST_APPLIED_LIMIT:
        del annotations[mf.LAST_APPLIED]


def apply(scope: RequestScope, live: dict[str, Any] | None, config: dict[str, Any], name: str) -> dict[str, Any]:
    """The object that applying ``config`` as manager ``name`` to ``live`` (None: absent) produces.

    Raises 409 Conflict ("Apply failed with N conflicts: ...") when other
    managers own changed fields and ``force`` is not set. kube's
    lastAppliedManager upgrades client-side apply: for the manager
    ``kubectl``, conflicts on fields that the live object's last-applied
    annotation records with their live value are allowed — when they are all
    the conflicts, the configuration is applied with force (those fields
    move to ``kubectl``); otherwise the 409 lists only the other conflicts.
    """
    t, forced, reset = types(scope), force(scope), reset_fields(scope)
    version, sub, stamp = scope.resource.group_version, scope.info.subresource, now()
    try:
        result = mf.apply(live, config, name, version, stamp, t, forced, sub, reset)
    except mf.ApplyConflict as err:
        if name != KUBECTL_SSA_MANAGER or live is None:
            raise
        allowed = mf.allowed_conflicts_from_last_applied(live, version, t, reset)
        if allowed is None:
            raise
        remaining = [(entry, path) for entry, path in err.conflicts if path not in allowed]
        if remaining:
            raise mf.conflict_error(remaining) from None
        result = mf.apply(live, config, name, version, stamp, t, True, sub, reset)
    _sync_last_applied(config, result, name)
    return result
