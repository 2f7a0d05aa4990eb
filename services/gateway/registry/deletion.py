"""Deletions that only mark an object: namespaces with spec.finalizers, propagation policies, and CRDs.

- Namespace (kube ``pkg/registry/core/namespace/storage``): while
  ``spec.finalizers`` is not empty, DELETE sets ``metadata.deletionTimestamp``
  and ``status.phase`` Terminating and answers the Namespace (200); the
  namespace controller empties it and removes its finalizer with
  ``PUT .../finalize``, which purges it. A DELETE of a namespace already
  terminating answers 409 Conflict ``The system is ensuring all content is
  removed from this namespace.  Upon completion, this namespace will
  automatically be purged by the system.``
- ``propagationPolicy: Foreground`` / ``Orphan`` (or ``orphanDependents:
  true``): the ``foregroundDeletion`` / ``orphan`` finalizer is added and the
  object marked for deletion (grace period 0), so the garbage collector
  deletes or orphans its dependents first, then removes the finalizer
  ("Use Cascading Deletion"). Background (the default) needs nothing here.
- Pod (kube ``pkg/registry/core/pod/strategy.go`` CheckGracefulDelete and
  ``rest.BeforeDelete``): a scheduled Pod that is neither Succeeded nor
  Failed is deleted gracefully: ``deletionTimestamp`` now + the grace period
  (DeleteOptions ``gracePeriodSeconds``, else ``terminationGracePeriodSeconds``)
  and ``deletionGracePeriodSeconds``; it stays until a DELETE with grace 0
  (the kubelet's, or ``--force --grace-period=0``); a later DELETE may only
  shorten the period. An unscheduled or finished Pod goes at once.
- CustomResourceDefinition (apiextensions-apiserver
  ``pkg/registry/customresourcedefinition/etcd.go`` ``REST.Delete``): the
  first DELETE sets ``deletionTimestamp``, adds the
  ``customresourcecleanup.apiextensions.k8s.io`` finalizer and the condition
  Terminating True ``InstanceDeletionPending`` ("CustomResourceDefinition
  marked for deletion; CustomResource deletion will begin soon") and
  answers the CRD (200); the CRD controller (services/gateway/dynamic.py)
  deletes its objects and removes the finalizer. A later DELETE is an
  ordinary one (propagation finalizers as above).

Every mark is a storage Update conditioned on the revision read, so a
concurrent change answers 409 Conflict; DeleteOptions ``preconditions``
are checked first (409 ``Precondition failed``).
"""

from __future__ import annotations

import datetime
from typing import Any

from kapi import crd, errors, gofmt, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway.scope import RequestScope, dry_run_causes

FOREGROUND, ORPHAN = "foregroundDeletion", "orphan"


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


POLICIES = ("Foreground", "Background", "Orphan")


def validate_delete_options(options: dict[str, Any]) -> None:
    """ValidateDeleteOptions, as kube's delete handlers and rest.BeforeDelete run it; ``options`` a decoded
    DeleteOptions dict. 422 ``DeleteOptions.meta.k8s.io "" is invalid: ...`` (errors.NewInvalid of GroupKind
    meta.k8s.io/DeleteOptions, no name) with, in kube's order:

    - ``orphanDependents`` and ``propagationPolicy`` both set (any values, false too): ``propagationPolicy:
      Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set``;
    - a ``propagationPolicy`` not Foreground/Background/Orphan: ``propagationPolicy: Unsupported value: "x":
      supported values: "Foreground", "Background", "Orphan", "nil"``;
    - a ``dryRun`` value other than ``All`` (:func:`services.gateway.scope.dry_run_causes`).

    Source: ``apimachinery/pkg/apis/meta/v1/validation/validation.go`` ValidateDeleteOptions."""
    causes = []
    policy = options.get("propagationPolicy")
    if options.get("orphanDependents") is not None and policy is not None:
        causes.append(errors.Cause("FieldValueInvalid", f"Invalid value: {gofmt.go_quote(policy)}: orphanDependents "
                                   "and deletionPropagation cannot be both set", "propagationPolicy"))
    if policy is not None and policy not in POLICIES:
        causes.append(errors.Cause("FieldValueNotSupported", f"Unsupported value: {gofmt.go_quote(policy)}: supported "
                                   'values: "Foreground", "Background", "Orphan", "nil"', "propagationPolicy"))
    causes += dry_run_causes(list(options.get("dryRun") or []))
    if causes:
        raise errors.invalid("DeleteOptions", "", causes, "meta.k8s.io")


def gc_finalizer(options: dict[str, Any]) -> str:
    """The garbage-collection finalizer a DeleteOptions asks for ("" for background propagation); 422 for
    options :func:`validate_delete_options` refuses (the handlers check them first)."""
    validate_delete_options(options)
    policy = options.get("propagationPolicy")
    if policy == "Foreground":
        return FOREGROUND
    if policy == "Orphan" or (policy is None and options.get("orphanDependents") is True):
        return ORPHAN
    return ""


def _check_preconditions(scope: RequestScope, obj: dict[str, Any], revision: int, options: dict[str, Any]) -> None:
    """DeleteOptions preconditions, refused with storage's 409 text (storage.NewInvalidObjError in a Conflict)."""
    pre = options.get("preconditions") or {}
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    uid, rv = str(pre.get("uid") or ""), str(pre.get("resourceVersion") or "")
    for what, wanted, actual in (("UID", uid, str(meta.get("uid") or "")), ("ResourceVersion", rv, str(revision))):
        if wanted and wanted != actual:
            key = scope.resource.storage_key(scope.info.namespace, name)
            raise errors.conflict(scope.resource.resource, name, (
                f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: "
                f"Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {actual}"),
                scope.resource.group)


def _mark_definition(obj: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """The first DELETE's changes to a CRD, in place: deletionTimestamp, the cleanup finalizer, Terminating."""
    meta["deletionTimestamp"] = _now()
    if crd.CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
        meta["finalizers"] = [*(meta.get("finalizers") or []), crd.CLEANUP_FINALIZER]
    obj["metadata"] = meta
    crd.set_condition(obj, "Terminating", "True", "InstanceDeletionPending",
                      "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon")
    return obj


def _is_pod(scope: RequestScope) -> bool:
    return scope.resource.group == "" and scope.resource.resource == "pods"


def pod_grace_period(pod: dict[str, Any], options: dict[str, Any]) -> int:
    """podStrategy.CheckGracefulDelete: DeleteOptions ``gracePeriodSeconds``, else the Pod's
    ``spec.terminationGracePeriodSeconds`` (else 0); 0 for a Pod not scheduled (no ``spec.nodeName``) or
    already Succeeded/Failed; a negative period is 1. Seconds."""
    spec: dict[str, Any] = pod["spec"] if isinstance(pod.get("spec"), dict) else {}
    asked = options.get("gracePeriodSeconds")
    period = asked if isinstance(asked, int) and not isinstance(asked, bool) else spec.get(
        "terminationGracePeriodSeconds")
    period = period if isinstance(period, int) and not isinstance(period, bool) else 0
    if not spec.get("nodeName") or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        period = 0
    return 1 if period < 0 else period


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def admission_options(scope: RequestScope, obj: dict[str, Any], options: dict[str, Any]
                      ) -> tuple[dict[str, Any], bool]:
    """The DeleteOptions validating and mutating admission see on a DELETE of ``obj`` (the stored object), and
    whether admission runs at all; ``options`` is left as it is (kube's DeleteCollection deletes each item with
    its own copy).

    kube's registries fill the options in before the delete validation (admission) runs and the admission
    attributes hold that same DeleteOptions:

    - Namespaces and CustomResourceDefinitions (namespace storage and apiextensions ``etcd.go`` REST.Delete):
      ``preconditions.uid`` is set to the object's UID when the client gave none.
    - ``rest.BeforeDelete`` (``apiserver/pkg/registry/rest/delete.go``), first in generic ``Store.Delete``
      (for a namespace or CRD only once it is already being deleted: their first DELETE updates it
      without): a negative ``gracePeriodSeconds`` becomes 1; for a Pod (podStrategy, the one graceful
      strategy) not yet being deleted, CheckGracefulDelete sets ``gracePeriodSeconds`` to the period used
      (:func:`pod_grace_period`: the asked one, else terminationGracePeriodSeconds, 0 unscheduled or
      Succeeded/Failed). A Pod whose graceful deletion is pending and that the request does not shorten
      (no ``gracePeriodSeconds``, or one not below ``deletionGracePeriodSeconds``) is ``gracefulPending``:
      Store.Delete answers it through finalizeDelete without calling admission (False)."""
    out = dict(options)
    meta = obj.get("metadata") or {}
    named = scope.resource.group == "" and scope.resource.resource == "namespaces" or (
        scope.resource.group == crd.GROUP and scope.resource.resource == crd.RESOURCE)
    if named:
        pre = dict(out.get("preconditions") or {})
        if not pre.get("uid"):
            out["preconditions"] = {"uid": str(meta.get("uid") or ""),
                                    **{k: v for k, v in pre.items() if k != "uid"}}
        if not meta.get("deletionTimestamp"):
            return out, True
    asked = _int(out.get("gracePeriodSeconds"))
    if asked is not None and asked < 0:
        out["gracePeriodSeconds"] = asked = 1
    if not _is_pod(scope):
        return out, True
    if meta.get("deletionTimestamp"):
        current = _int(meta.get("deletionGracePeriodSeconds"))
        if not current:
            return out, True  # grace 0 (or none) already: deleted at once
        current = 1 if current < 0 else current
        return out, asked is not None and asked < current
    out["gracePeriodSeconds"] = pod_grace_period(obj, out)
    return out, True


def _shifted(stamp: Any, seconds: int) -> str:
    """An RFC 3339 time ``seconds`` later (earlier when negative); now + seconds if unparsable."""
    try:
        base = datetime.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        base = datetime.datetime.now(datetime.UTC)
    return (base + datetime.timedelta(seconds=seconds)).astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _mark_pod(obj: dict[str, Any], meta: dict[str, Any], options: dict[str, Any], finalizer: str
              ) -> tuple[str, dict[str, Any] | None]:
    """rest.BeforeDelete with the pod strategy's grace period, in place on ``obj``: ("mark", obj) to store a
    graceful deletion (deletionTimestamp now + grace, deletionGracePeriodSeconds; a pending one shortened by a
    shorter ``gracePeriodSeconds``), ("pending", None) when a graceful deletion is already pending and the
    request does not shorten it, ("delete", None) to delete at once (grace 0, or a pending deletion whose
    grace is already 0)."""
    if meta.get("deletionTimestamp"):
        current = meta.get("deletionGracePeriodSeconds")
        if not isinstance(current, int) or current == 0:
            return "delete", None
        asked = options.get("gracePeriodSeconds")
        if not isinstance(asked, int) or isinstance(asked, bool) or asked >= current:
            return "pending", None
        asked = max(asked, 0)
        if asked == 0:
            return "delete", None
        meta["deletionTimestamp"] = _shifted(meta["deletionTimestamp"], asked - current)
        meta["deletionGracePeriodSeconds"] = asked
    else:
        grace = pod_grace_period(obj, options)
        if grace == 0:
            return "delete", None
        meta["deletionTimestamp"] = _shifted(_now(), grace)
        meta["deletionGracePeriodSeconds"] = grace
        generation = meta.get("generation")
        if isinstance(generation, int) and generation > 0:
            meta["generation"] = generation + 1
        if finalizer and finalizer not in (meta.get("finalizers") or []):
            meta["finalizers"] = [*(meta.get("finalizers") or []), finalizer]
    obj["metadata"] = meta
    return "mark", obj


def dry_run_mark(scope: RequestScope, current: Any, options: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """What a dry-run DELETE answers when the real one would only mark: the marked CRD (kube's REST.Delete
    runs its update in dry-run mode) or gracefully deleted Pod; None when the stored object is the answer."""
    obj = dict(jsonutil.loads(current.object))
    meta = dict(obj.get("metadata") or {})
    if _is_pod(scope):
        action, marked = _mark_pod(obj, meta, options or {}, gc_finalizer(options or {}))
        return marked if action == "mark" else (obj if action == "pending" else None)
    if scope.resource.group != crd.GROUP or scope.resource.resource != crd.RESOURCE or meta.get("deletionTimestamp"):
        return None
    return _mark_definition(obj, meta)


async def mark(scope: RequestScope, name: str, current: Any, options: dict[str, Any]) -> dict[str, Any] | None:
    """Mark ``current`` (a storage ObjectResponse) for deletion if it must only be marked; returns the marked
    object, or None when the caller should delete it outright. Raises StatusError 409 as described above."""
    obj = dict(jsonutil.loads(current.object))
    meta = dict(obj.get("metadata") or {})
    namespace = scope.resource.group == "" and scope.resource.resource == "namespaces"
    spec_finalizers = (obj.get("spec") or {}).get("finalizers") if namespace else None
    finalizer = gc_finalizer(options)
    if namespace and spec_finalizers and meta.get("deletionTimestamp"):
        raise errors.conflict("namespaces", name, "The system is ensuring all content is removed from this "
                              "namespace.  Upon completion, this namespace will automatically be purged by the "
                              "system.")
    if _is_pod(scope):  # graceful deletion: kept, marked, until a delete with grace 0 (the kubelet's)
        _check_preconditions(scope, obj, current.resource_version, options)
        action, marked = _mark_pod(obj, meta, options, finalizer)
        if action == "pending":
            return obj
        if marked is not None:
            return await _write(scope, name, marked, current.resource_version)
        if not finalizer or meta.get("deletionTimestamp"):
            return None
    definition = scope.resource.group == crd.GROUP and scope.resource.resource == crd.RESOURCE
    if definition and not meta.get("deletionTimestamp"):
        _check_preconditions(scope, obj, current.resource_version, options)
        return await _write(scope, name, _mark_definition(obj, meta), current.resource_version)
    if meta.get("deletionTimestamp") or not (spec_finalizers or finalizer):
        return None
    _check_preconditions(scope, obj, current.resource_version, options)
    meta["deletionTimestamp"] = _now()
    if namespace:
        obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
    if finalizer:
        finalizers = list(meta.get("finalizers") or [])
        if finalizer not in finalizers:
            finalizers.append(finalizer)
        meta["finalizers"] = finalizers
        meta["deletionGracePeriodSeconds"] = 0
    obj["metadata"] = meta
    return await _write(scope, name, obj, current.resource_version)


async def _write(scope: RequestScope, name: str, obj: dict[str, Any], revision: int) -> dict[str, Any]:
    """Store the marked ``obj`` conditioned on ``revision`` (409 Conflict when it moved); the stored object."""
    obj.get("metadata", {}).pop("resourceVersion", None)
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Update, storage_pb2.UpdateRequest(
        key=scope.key(name=name), object=jsonutil.dumps(obj), expected_resource_version=revision),
        timeout=scope.timeout)
    return dict(jsonutil.loads(reply.object))
