"""The generic create/update strategy shared by every service.

:func:`prepare_for_create` and :func:`prepare_for_update` follow
k8s.io/apiserver ``pkg/registry/rest`` ``BeforeCreate``/``BeforeUpdate``:
system fields (uid, creationTimestamp, generation) are the server's, status
is kept from the stored object on a main-resource update of a resource with
a status subresource. The per-kind ``PrepareForCreate``/``PrepareForUpdate``
hooks and update validation are each kind's :class:`kapi.kinds.Strategy`
(run after these by the admission pipeline). ObjectMeta validation is
:func:`kapi.objectmeta.validate_object_meta`.
"""

from __future__ import annotations

import copy
import random
import uuid
from datetime import UTC, datetime
from typing import Any

from kapi import errors, kinds, schema
from kapi.attributes import UserInfo
from kapi.k8sproto.zero import as_go_writes
from kapi.kinds.base import Strategy
from kapi.resources import Resource

# Generated names: names.SimpleNameGenerator (k8s.io/apiserver pkg/storage/names) and utilrand.String.
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
GENERATED_SUFFIX_LENGTH = 5
MAX_GENERATED_BASE_LENGTH = 63 - GENERATED_SUFFIX_LENGTH



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
    """True when the kind keeps metadata.generation: it has a spec (or its strategy's ``generation_without_spec``,
    EndpointSlice) and its strategy's ``tracks_generation`` (kube sets it for workloads, Pods since KEP-5067 and
    custom resources; not for Namespace, Service, Node, ...)."""
    kind = kinds.strategy_for(resource.group, resource.kind)
    return kind.tracks_generation and (kind.generation_without_spec or "spec" in
                                       schema.top_level_fields(resource.group, resource.version, resource.kind))


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


def _kind(resource: Resource, kind: Strategy | None) -> Strategy:
    return kind if kind is not None else kinds.strategy_for(resource.group, resource.kind)


def prepare_for_create(obj: dict[str, Any], resource: Resource, namespace: str, now: datetime, *,
                       rng: random.Random | None = None, user: UserInfo | None = None,
                       kind: Strategy | None = None) -> dict[str, Any]:
    """Return a copy of ``obj`` ready to store as a new object (rest.BeforeCreate, then the kind's
    PrepareForCreate: ``kind``, by default the registered :class:`kapi.kinds.Strategy` of the resource's
    group and kind, called with ``user``, the requester).

    - namespace: namespaced kinds take ``namespace`` (the request's); an
      object naming another namespace -> 400 BadRequest ``the namespace of
      the provided object does not match the namespace sent on the
      request``; cluster-scoped kinds have it cleared.
    - ``generateName`` with an empty name -> name = prefix + 5 random
      characters (``rng`` injectable for tests).
    - uid (uuid4), creationTimestamp (``now``, RFC 3339 seconds, UTC),
      generation 1 for kinds that track it (:func:`tracks_generation`) and set it on create
      (``Strategy.generation_on_create``);
      deletionTimestamp, deletionGracePeriodSeconds, resourceVersion and
      selfLink cleared; managedFields kept as given.
    - apiVersion/kind filled in when absent.

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
    strategy = _kind(resource, kind)
    if tracks_generation(resource) and strategy.generation_on_create:
        meta["generation"] = 1
    else:
        meta.pop("generation", None)
    if strategy.status_zero is not None and not strategy.keeps_status_on_create:
        out["status"] = copy.deepcopy(dict(strategy.status_zero))
    strategy.prepare_for_create(out, user=user)
    fill_status(out, strategy, resource)
    return out


def fill_status(obj: dict[str, Any], kind: Strategy, resource: Resource | None = None) -> None:
    """Give ``obj`` the ``status`` kube's typed encoding writes, in place: the kind's
    :attr:`~kapi.kinds.base.Strategy.status_zero` when ``status`` is absent or null, else its fields
    without ``omitempty`` that ``status`` lacks (nested structs alike). Kinds without a status struct are
    untouched; a non-object status is left to the schema to refuse.

    With the built-in ``resource`` it is written too as encoding/json writes the decoded Go struct
    (:func:`kapi.k8sproto.zero.as_go_writes`), list items alike: a condition's zero ``metav1.Time``
    (``lastProbeTime``, ``lastTransitionTime``) is ``null`` when a client left it out, as kube's
    decode-and-encode stores a Pod condition applied through ``/status`` (``kubectl apply --server-side
    --subresource=status``). A kind the protobuf table lacks (custom resources) is unchanged."""
    if kind.status_zero is None:
        return
    status = obj.get("status")
    if status is None:
        obj["status"] = copy.deepcopy(dict(kind.status_zero))
    elif isinstance(status, dict):
        _fill_zero(status, kind.status_zero)
    if resource is not None and isinstance(obj.get("status"), dict):
        api_version = f"{resource.group}/{resource.version}" if resource.group else resource.version
        written = as_go_writes({"apiVersion": api_version, "kind": resource.kind, "status": obj["status"]})
        obj["status"] = written.get("status", obj["status"])


def _fill_zero(target: dict[str, Any], zero: Any) -> None:
    for key, value in zero.items():
        if target.get(key) is None:
            target[key] = copy.deepcopy(value)
        elif isinstance(value, dict) and value and isinstance(target[key], dict):
            _fill_zero(target[key], value)


def prepare_for_update(new: dict[str, Any], old: dict[str, Any], resource: Resource, *,
                       subresource: str = "", now: datetime | None = None,
                       kind: Strategy | None = None) -> dict[str, Any]:
    """Return a copy of ``new`` ready to replace ``old`` (rest.BeforeUpdate with the kind's PrepareForUpdate:
    ``kind``, by default the registered :class:`kapi.kinds.Strategy`, called with ``subresource`` and ``now``
    before the generation is computed, as kube's strategies bump it after their resets).

    - uid from ``old`` when ``new`` has none (a different one fails
      validation as immutable); creationTimestamp, deletionTimestamp and
      deletionGracePeriodSeconds from ``old``; resourceVersion from ``old``
      when absent (an unconditional update).
    - generation: ``old``'s, plus 1 on a main-resource or scale update the
      kind's ``bumps_generation`` names (``spec`` changed; a Deployment's
      annotations too), for kinds that track it.
    - namespace: ``old``'s when absent (namespaced kinds); cleared for
      cluster-scoped ones.
    - Main resource (``subresource`` "" or "scale"): status kept from ``old``
      for resources with a status subresource (kapi.resources).
      ``subresource="status"``: spec kept from ``old``, and the metadata
      fields the kind's statusStrategy resets
      (:attr:`~kapi.kinds.base.Strategy.status_reset_metadata`: a Pod its
      deletionTimestamp and ownerReferences, a Deployment its labels, most
      kinds none) taken from ``old`` (dropped when ``old`` has none); the
      request's other metadata is kept. ``subresource="finalize"``
      (namespaces): status kept from ``old``.

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

    strategy = _kind(resource, kind)
    if subresource == "status":
        if "spec" in old:
            out["spec"] = old["spec"]
        else:
            out.pop("spec", None)
        for key in strategy.status_reset_metadata:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
    elif subresource == "finalize" or (subresource in ("", "scale") and "status" in resource.subresources):
        if "status" in old:
            out["status"] = old["status"]
        else:
            out.pop("status", None)
    strategy.prepare_for_update(out, old, subresource, now=now)
    fill_status(out, strategy, resource)

    if tracks_generation(resource):
        old_generation = old_meta.get("generation")
        generation = old_generation if isinstance(old_generation, int) else 0
        if subresource in strategy.generation_subresources and strategy.bumps_generation(out, old):
            generation += 1
        if generation:
            meta["generation"] = generation
        else:  # omitempty: a kind whose create leaves it at 0 (CSIDriver) shows none until the first bump
            meta.pop("generation", None)
    elif "generation" in old_meta:
        meta["generation"] = old_meta["generation"]
    else:
        meta.pop("generation", None)
    return out
