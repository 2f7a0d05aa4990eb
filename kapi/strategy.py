"""The generic create/update strategy shared by every service.

:func:`prepare_for_create` and :func:`prepare_for_update` follow
k8s.io/apiserver ``pkg/registry/rest`` ``BeforeCreate``/``BeforeUpdate``
plus the small per-kind ``PrepareForCreate``/``PrepareForUpdate`` hooks of
the served kinds (``pkg/registry/core/{namespace,pod,service}/strategy.go``):
system fields (uid, creationTimestamp, generation) are the server's, status
is reset on create and kept from the stored object on a main-resource update.
ObjectMeta validation is :func:`kapi.objectmeta.validate_object_meta`.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime
from typing import Any

from kapi import autoscaling, certificates, errors, jobs, morekinds, schema
from kapi.attributes import UserInfo
from kapi.resources import Resource

# Generated names: names.SimpleNameGenerator (k8s.io/apiserver pkg/storage/names) and utilrand.String.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
MAX_GENERATED_BASE_LENGTH = 63 - GENERATED_SUFFIX_LENGTH

# Kinds with a spec whose strategy does not track metadata.generation (kube sets it for workloads,
# Pods since KEP-5067, custom resources; not for these).
_NO_GENERATION_KINDS = frozenset({
    "Namespace", "Service", "Node", "PersistentVolume", "PersistentVolumeClaim", "ResourceQuota", "LimitRange",
    "Endpoints",
})
# Kinds whose main-resource update keeps the stored status (they have a status subresource).
_STATUS_SUBRESOURCE_KINDS = frozenset({"Namespace", "Pod", "Service"})


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def format_time(now: datetime) -> str:
    """RFC 3339 UTC with whole seconds and "Z" (metav1.Time's JSON form); naive datetimes are taken as UTC."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def generate_name(base: str, rng: random.Random | None = None) -> str:
    """names.SimpleNameGenerator: ``base`` (cut to 58 characters) plus 5 random characters from NAME_ALPHABET."""
    choice = (rng or random).choice
    return base[:MAX_GENERATED_BASE_LENGTH] + "".join(choice(NAME_ALPHABET) for _ in range(GENERATED_SUFFIX_LENGTH))


def tracks_generation(resource: Resource) -> bool:
    """True when the kind's strategy keeps metadata.generation: it has a spec and is not one of the untracked kinds."""
    return resource.kind not in _NO_GENERATION_KINDS and "spec" in schema.top_level_fields(
        resource.group, resource.version, resource.kind)


def _object_and_meta(obj: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    if not isinstance(obj, dict):
        raise errors.bad_request("the object must be a JSON object")
    metadata = obj.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise errors.bad_request("metadata: must be a JSON object")
    out = dict(obj)
    out["metadata"] = dict(metadata)
    return out, out["metadata"]


def _namespace_label(obj: dict[str, Any], meta: dict[str, Any]) -> None:
    # Namespace defaulting and Canonicalize: label kubernetes.io/metadata.name = name (KEP-2161).
    labels = meta.get("labels")
    labels = dict(labels) if isinstance(labels, dict) else {}
    name = _str(meta.get("name"))
    if name:
        labels["kubernetes.io/metadata.name"] = name
        meta["labels"] = labels


def prepare_for_create(obj: dict[str, Any], resource: Resource, namespace: str, now: datetime, *,
                       rng: random.Random | None = None, user: UserInfo | None = None) -> dict[str, Any]:
    """Return a copy of ``obj`` ready to store as a new object (rest.BeforeCreate + the kind's PrepareForCreate).

    - namespace: namespaced kinds take ``namespace`` (the request's); an
      object naming another namespace -> 400 BadRequest ``the namespace of
      the provided object does not match the namespace sent on the
      request``; cluster-scoped kinds have it cleared.
    - ``generateName`` with an empty name -> name = prefix + 5 random
      characters (``rng`` injectable for tests).
    - uid (uuid4), creationTimestamp (``now``, RFC 3339 seconds, UTC),
      generation 1 for kinds that track it (:func:`tracks_generation`);
      deletionTimestamp, deletionGracePeriodSeconds, resourceVersion and
      selfLink cleared; managedFields kept as given.
    - apiVersion/kind filled in when absent.
    - Namespace: ``spec.finalizers`` includes "kubernetes",
      ``status.phase`` "Active", label ``kubernetes.io/metadata.name``;
      Pod: status reset to phase Pending; Service: status reset; Secret:
      ``type`` defaults to Opaque; HorizontalPodAutoscaler: status reset;
      CertificateSigningRequest: ``spec.username``/``uid``/``groups``/``extra``
      from ``user`` (the requester), status reset (kapi.certificates); Job:
      the generated selector and template labels (kapi.jobs).

    Raises StatusError 400 for a non-object body or metadata.
    """
    out, meta = _object_and_meta(obj)
    out.setdefault("apiVersion", resource.group_version)
    out.setdefault("kind", resource.kind)
    if resource.namespaced:
        given = _str(meta.get("namespace"))
        if given and namespace and given != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        meta["namespace"] = namespace or given
    else:
        meta.pop("namespace", None)
    if not _str(meta.get("name")) and _str(meta.get("generateName")):
        meta["name"] = generate_name(meta["generateName"], rng)
    for key in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"):
        meta.pop(key, None)
    meta["uid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4)) if rng else str(uuid.uuid4())
    meta["creationTimestamp"] = format_time(now)
    if tracks_generation(resource):
        meta["generation"] = 1
    else:
        meta.pop("generation", None)
    if resource.group == "":
        _prepare_core_create(out, meta, resource.kind)
    elif (resource.group, resource.kind) == ("autoscaling", "HorizontalPodAutoscaler"):
        out["status"] = {"desiredReplicas": 0}
    elif (resource.group, resource.kind) == (certificates.GROUP, certificates.KIND):
        certificates.prepare_for_create(out, user)
    elif (resource.group, resource.kind) == ("batch", "Job"):
        jobs.prepare_for_create(out)  # generateSelector with the uid above (kapi.jobs)
    return out


def _prepare_core_create(out: dict[str, Any], meta: dict[str, Any], kind: str) -> None:
    if kind == "Namespace":
        spec = dict(out["spec"]) if isinstance(out.get("spec"), dict) else {}
        finalizers = list(spec.get("finalizers") or [])
        if "kubernetes" not in finalizers:
            finalizers.append("kubernetes")
        spec["finalizers"] = finalizers
        out["spec"] = spec
        out["status"] = {"phase": "Active"}
        _namespace_label(out, meta)
    elif kind == "Pod":
        out["status"] = {"phase": "Pending"}
    elif kind == "Service":
        out["status"] = {"loadBalancer": {}}
    elif kind == "Secret" and not out.get("type"):
        out["type"] = "Opaque"


def prepare_for_update(new: dict[str, Any], old: dict[str, Any], resource: Resource, *,
                       subresource: str = "", now: datetime | None = None) -> dict[str, Any]:
    """Return a copy of ``new`` ready to replace ``old`` (rest.BeforeUpdate + the kind's PrepareForUpdate).

    - uid from ``old`` when ``new`` has none (a different one fails
      validation as immutable); creationTimestamp, deletionTimestamp and
      deletionGracePeriodSeconds from ``old``; resourceVersion from ``old``
      when absent (an unconditional update).
    - generation: ``old``'s, plus 1 when ``spec`` changed, for kinds that
      track it.
    - namespace: ``old``'s when absent (namespaced kinds); cleared for
      cluster-scoped ones.
    - Main resource (``subresource`` "" or "scale"): status kept from ``old``
      for resources with a status subresource (kapi.resources); a Namespace also
      keeps ``spec.finalizers``. ``subresource="status"``: spec and the
      labels/annotations/finalizers/ownerReferences kept from ``old``
      (ResetObjectMetaForStatus). ``subresource="finalize"`` (namespaces):
      status kept from ``old``. CertificateSigningRequest: the spec is always
      ``old``'s; the main resource keeps the status, ``approval`` changes only
      the conditions, ``status`` keeps the Approved/Denied conditions;
      condition timestamps are ``now`` (kapi.certificates).

    Raises StatusError 400 for a non-object body or metadata.
    """
    out, meta = _object_and_meta(new)
    old_meta = _meta(old)
    out.setdefault("apiVersion", resource.group_version)
    out.setdefault("kind", resource.kind)
    if not _str(meta.get("uid")) and old_meta.get("uid"):
        meta["uid"] = old_meta["uid"]
    for key in ("creationTimestamp", "deletionTimestamp"):
        if old_meta.get(key):
            meta[key] = old_meta[key]
    if old_meta.get("deletionGracePeriodSeconds") is not None and meta.get("deletionGracePeriodSeconds") is None:
        meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
    if not meta.get("resourceVersion") and old_meta.get("resourceVersion"):
        meta["resourceVersion"] = old_meta["resourceVersion"]
    if resource.namespaced:
        if not _str(meta.get("namespace")) and old_meta.get("namespace"):
            meta["namespace"] = old_meta["namespace"]
    else:
        meta.pop("namespace", None)
    meta.pop("selfLink", None)

    if subresource == "status":
        if "spec" in old:
            out["spec"] = old["spec"]
        else:
            out.pop("spec", None)
        for key in ("labels", "annotations", "finalizers", "ownerReferences"):
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
    elif subresource == "finalize" or (subresource in ("", "scale") and "status" in resource.subresources):
        if "status" in old:
            out["status"] = old["status"]
        else:
            out.pop("status", None)
        if subresource == "" and resource.kind == "Namespace":
            spec = dict(out["spec"]) if isinstance(out.get("spec"), dict) else {}
            old_spec = old["spec"] if isinstance(old.get("spec"), dict) else {}
            if "finalizers" in old_spec:
                spec["finalizers"] = old_spec["finalizers"]
            else:
                spec.pop("finalizers", None)
            out["spec"] = spec
    if resource.group == "" and resource.kind == "Namespace":
        _namespace_label(out, meta)
    if (resource.group, resource.kind) == (certificates.GROUP, certificates.KIND):
        certificates.prepare_for_update(out, old, subresource, format_time(now or datetime.now(UTC)))

    if tracks_generation(resource):
        old_generation = old_meta.get("generation")
        generation = old_generation if isinstance(old_generation, int) else 0
        if subresource in ("", "scale") and out.get("spec") != old.get("spec"):
            generation += 1
        meta["generation"] = generation
    elif "generation" in old_meta:
        meta["generation"] = old_meta["generation"]
    else:
        meta.pop("generation", None)
    return out


IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)")
_POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")


def _forbidden(path: str, detail: str) -> errors.Cause:
    return errors.Cause("FieldValueForbidden", f"Forbidden: {detail}", path)


def _pod_spec_sans_mutable(spec: Any) -> Any:
    if not isinstance(spec, dict):
        return spec
    out = {k: v for k, v in spec.items() if k not in _POD_MUTABLE}
    for key in ("containers", "initContainers"):
        if isinstance(out.get(key), list):
            out[key] = [{k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c
                        for c in out[key]]
    return out


def validate_update(new: dict[str, Any], old: dict[str, Any], resource: Resource, *,
                    subresource: str = "") -> list[errors.Cause]:
    """Per-kind update rules beyond ObjectMeta (ValidateConfigMapUpdate, ValidateSecretUpdate, ValidatePodUpdate).

    - ConfigMap/Secret stored with ``immutable: true``: ``immutable``,
      ``data``, ``binaryData`` (ConfigMap) may not change -> Forbidden
      ``field is immutable when `immutable` is set``; a Secret's ``type``
      never changes (Invalid ``field is immutable``).
    - Pod main-resource update: only container/init-container images,
      activeDeadlineSeconds, tolerations, terminationGracePeriodSeconds and
      schedulingGates may change; else ``spec: Forbidden: pod updates may
      not change fields other than ...``; tolerations may only be added.
    - CertificateSigningRequest: conditions may not be removed, ``status``
      may not add Approved/Denied, only ``status`` sets the certificate, once
      (kapi.certificates; the whole object is validated again for subresources).
    - HorizontalPodAutoscaler ``status``: replica counts not negative.
    - EndpointSlice, RuntimeClass and the CSI kinds: immutable fields (kapi.morekinds).
    Returns the causes (empty when the update is allowed).
    """
    causes: list[errors.Cause] = []
    if (resource.group, resource.kind) == (certificates.GROUP, certificates.KIND):
        return certificates.validate_update(new, old, subresource, include_object=bool(subresource))
    if (resource.group, resource.kind) == ("autoscaling", "HorizontalPodAutoscaler"):
        return autoscaling.validate_status(new) if subresource == "status" else causes
    if resource.group in ("discovery.k8s.io", "node.k8s.io", "storage.k8s.io"):
        return morekinds.validate_update(new, old, resource.group, resource.kind, subresource)
    if resource.group != "" or subresource not in ("",):
        return causes
    if resource.kind in ("ConfigMap", "Secret") and old.get("immutable") is True:
        if new.get("immutable") is not True:
            causes.append(_forbidden("immutable", IMMUTABLE_WHEN_SET))
        fields = ("data", "binaryData") if resource.kind == "ConfigMap" else ("data",)
        for key in fields:
            if (new.get(key) or {}) != (old.get(key) or {}):
                causes.append(_forbidden(key, IMMUTABLE_WHEN_SET))
    if resource.kind == "Secret" and (new.get("type") or "Opaque") != (old.get("type") or "Opaque"):
        causes.append(errors.Cause("FieldValueInvalid",
                                   f'Invalid value: "{new.get("type", "")}": field is immutable', "type"))
    if resource.kind == "Pod":
        new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
        if _pod_spec_sans_mutable(new_spec) != _pod_spec_sans_mutable(old_spec):
            causes.append(_forbidden("spec", POD_UPDATE_FORBIDDEN))
        else:
            old_tol = old_spec.get("tolerations") or []
            new_tol = new_spec.get("tolerations") or []
            if isinstance(old_tol, list) and isinstance(new_tol, list) and any(t not in new_tol for t in old_tol):
                causes.append(_forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                         "tolerationSeconds"))
    return causes
