"""Field ownership through the ``scale`` subresource: kube's managedfields ScaleHandler and the Scale's apply.

A write to ``<workload>/scale`` works on an ``autoscaling/v1`` Scale whose
managedFields are the parent's, translated (:func:`to_subresource`): every
parent entry that owns the parent's replicas path owns ``.spec.replicas`` of
the Scale, at apiVersion ``autoscaling/v1``. After the Scale's field manager
ran, :func:`to_parent` writes the Scale's entries back onto the parent.
Sources: k8s.io/apimachinery ``pkg/util/managedfields/scalehandler.go``
(ScaleHandler.ToSubresource / ToParent), ``pkg/registry/apps/deployment/storage/storage.go``
(and the statefulset, replicaset and replicationcontroller storages: ScaleREST,
scaleUpdatedObjectInfo, ``replicasPathIn<Kind>``).
"""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi import managedfields as mf
from services.gateway import patch as patching

SCALE_VERSION = "autoscaling/v1"
REPLICAS_IN_SCALE: mf.Path = ("f:spec", "f:replicas")
_SPEC_REPLICAS: mf.Path = ("f:spec", "f:replicas")

# kube's replicasPathIn<Kind> mappings: the parent apiVersions whose managedFields entries the ScaleHandler knows
# (an entry at another apiVersion is dropped when the Scale is written back, as ToParent does).
REPLICAS_PATHS: dict[tuple[str, str], dict[str, mf.Path | None]] = {
    ("apps", "deployments"): dict.fromkeys(("apps/v1beta1", "apps/v1beta2", "apps/v1"), _SPEC_REPLICAS),
    ("apps", "statefulsets"): dict.fromkeys(("apps/v1beta1", "apps/v1beta2", "apps/v1"), _SPEC_REPLICAS),
    ("apps", "replicasets"): dict.fromkeys(("apps/v1beta2", "apps/v1"), _SPEC_REPLICAS),
    ("", "replicationcontrollers"): {"v1": _SPEC_REPLICAS},
}


def _key(entry: mf.Entry) -> tuple[str, str, str, str]:
    """kube's manager identifier (BuildManagerIdentifier): manager, operation, the apiVersion of an Update (an
    Apply's is left out) and subresource. An Update entry's identifier on the Scale names ``autoscaling/v1``
    and on the parent the parent's version, so the two never match (ToParent then splits such an entry)."""
    return (entry.manager, entry.operation, "" if entry.operation == mf.APPLY else entry.api_version,
            entry.subresource)


def to_subresource(parent: list[mf.Entry], mappings: dict[str, mf.Path | None]) -> list[mf.Entry]:
    """ScaleHandler.ToSubresource: the Scale's managedFields from the ``parent`` object's entries.

    ``mappings``: parent apiVersion -> the parent's replicas path (None: that version has no scale). Each parent
    entry at a known apiVersion that owns the replicas path becomes an entry owning only ``.spec.replicas`` at
    ``autoscaling/v1`` (same manager, operation, subresource and time); the others are left out.
    """
    out: dict[tuple[str, str, str, str], mf.Entry] = {}
    for entry in parent:
        path = mappings.get(entry.api_version)
        if path is None or path not in entry.fields:
            continue
        out[_key(entry)] = mf.Entry(entry.manager, entry.operation, SCALE_VERSION, frozenset({REPLICAS_IN_SCALE}),
                                    entry.time, entry.subresource)
    return list(out.values())


def to_parent(parent: list[mf.Entry], scale: list[mf.Entry], mappings: dict[str, mf.Path | None],
              version: str) -> list[mf.Entry]:
    """ScaleHandler.ToParent: the parent's managedFields after a write through its Scale.

    ``parent``: the parent's entries before the write; ``scale``: the Scale's entries after its field manager;
    ``version``: the parent apiVersion of the request. A parent entry at an apiVersion ``mappings`` does not know
    is dropped; one that does not own the replicas path is kept; one that owns it is kept as it is when its
    manager identifier (:func:`_key`) is among the Scale's, else it loses the replicas path (and goes when that
    was all it owned). Every remaining Scale entry owning ``.spec.replicas`` becomes a parent entry owning the
    replicas path at ``version``, with the time of the parent entry of that identifier — none for a new one, so
    kube writes the entries of ``scale`` writers without ``time``.
    """
    remaining = {_key(entry): entry for entry in scale}
    times = {_key(entry): entry.time for entry in parent}
    out: list[mf.Entry] = []
    for entry in parent:
        if entry.api_version not in mappings:
            continue
        path = mappings[entry.api_version]
        if path is None or path not in entry.fields:
            out.append(entry)
            continue
        key = _key(entry)
        if key in remaining:
            out.append(entry)
            del remaining[key]
            continue
        rest = entry.fields - {path}
        if rest:
            out.append(mf.Entry(entry.manager, entry.operation, entry.api_version, rest, entry.time,
                                entry.subresource))
    target = mappings.get(version)
    for key, entry in remaining.items():
        if REPLICAS_IN_SCALE not in entry.fields or target is None:
            continue
        out.append(mf.Entry(entry.manager, entry.operation, version, frozenset({target}), times.get(key, ""),
                            entry.subresource))
    return out


def with_fields(scale: dict[str, Any], parent: list[mf.Entry], mappings: dict[str, mf.Path | None]
                ) -> dict[str, Any]:
    """``scale`` (a Scale dict, changed in place) carrying the parent's entries as :func:`to_subresource` shows
    them, as scaleUpdatedObjectInfo hands the old Scale to the request's field manager."""
    scale.setdefault("metadata", {})["managedFields"] = mf.encode(to_subresource(parent, mappings))
    return scale


def parent_fields(parent: list[mf.Entry], scale: dict[str, Any], mappings: dict[str, mf.Path | None],
                  version: str) -> list[dict[str, Any]]:
    """The parent's ``managedFields`` JSON after a write whose Scale (after its field manager) is ``scale``
    (:func:`to_parent`, in kube's order)."""
    return mf.encode(to_parent(parent, mf.entries(scale), mappings, version))


def track_update(parent: list[mf.Entry], old: dict[str, Any], new: dict[str, Any], manager: str, time: str,
                 mappings: dict[str, mf.Path | None], version: str) -> list[dict[str, Any]]:
    """The parent's ``managedFields`` after a PUT or non-apply PATCH of its Scale by ``manager``: the Scale's field
    manager records an ``Update`` (subresource ``scale``, at autoscaling/v1) of ``old`` -> ``new`` over the parent's
    entries (:func:`with_fields`), and :func:`parent_fields` writes it back — so a writer that changes the
    replicas owns the parent's replicas path in an entry without ``time``."""
    before = with_fields(dict(old), parent, mappings)
    fields = mf.update(before, new, manager, SCALE_VERSION, time, scale_types(), "scale")
    return parent_fields(parent, {"metadata": {"managedFields": fields}}, mappings, version)


def scale_types() -> mf.Types:
    """The list/map semantics of ``autoscaling/v1`` Scale (its OpenAPI definition)."""
    return mf.Types(patching.schema_for("autoscaling", "v1", "Scale"), patching._definitions())


def refuse_custom_resource(config: dict[str, Any], namespace: str) -> None:
    """kube 1.37 cannot apply a custom resource's Scale: the CRD handler gives the scale scope a field manager
    for autoscaling/v1 Scale over the CRD's type converter (apiextensions-apiserver customresource_handler.go
    ``scopeWithFieldManager(typeConverter, scaleScope, nil, "scale")``), whose models hold the CRD's versions and
    the apiextensions server's static spec but not Scale, so structuredMergeManager.Apply fails typing the
    configuration (kubernetes#116311, open). kube's plain error is a 500 without reason; kapi answers it as a
    400 BadRequest (a request kapi cannot serve is not a server failure), same message: ``failed to create typed
    patch object (<namespace>/<name>; autoscaling/v1, Kind=Scale): no corresponding type for autoscaling/v1,
    Kind=Scale`` (namespace and name as the body sent them)."""
    meta = config["metadata"] if isinstance(config.get("metadata"), dict) else {}
    raise errors.bad_request(f"failed to create typed patch object ({namespace}/{meta.get('name') or ''}; "
                             "autoscaling/v1, Kind=Scale): no corresponding type for autoscaling/v1, Kind=Scale")
