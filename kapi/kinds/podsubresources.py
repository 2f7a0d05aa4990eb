"""Pod subresources that rewrite the spec: ``pods/ephemeralcontainers`` (kube's podEphemeralContainersStrategy).

``kubectl debug <pod> --image=...`` patches ``pods/<name>/ephemeralcontainers``: the only part of the request
that counts is ``spec.ephemeralContainers``; the rest of the spec, the status and the metadata
ResetObjectMetaForStatus names come from the stored Pod (dropNonEphemeralContainerUpdates,
``pkg/registry/core/pod/strategy.go``). ValidatePodEphemeralContainersUpdate
(``pkg/apis/core/validation/validation.go``) then lets ephemeral containers be added only: an existing one may be
neither removed nor changed, and a static (mirror) Pod takes none.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kapi.errors import Cause
from kapi.kinds.base import RESET_OBJECT_META_FOR_STATUS, Obj
from kapi.kinds.podfields import MIRROR_POD_ANNOTATION
from kapi.objectmeta import forbidden

EPHEMERAL_CONTAINERS = "ephemeralcontainers"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _containers(obj: Obj) -> list[dict[str, Any]]:
    items = _dict(obj.get("spec")).get("ephemeralContainers")
    return [c for c in items if isinstance(c, dict)] if isinstance(items, list) else []


def prepare_ephemeral_containers_update(new: Obj, old: Obj) -> None:
    """dropNonEphemeralContainerUpdates, in place: ``new`` keeps its ``spec.ephemeralContainers`` and the metadata
    the request may set; spec, status and ResetObjectMetaForStatus's metadata are the stored Pod's."""
    ephemeral = _dict(new.get("spec")).get("ephemeralContainers")
    spec = copy.deepcopy(_dict(old.get("spec")))
    if ephemeral is None:
        spec.pop("ephemeralContainers", None)
    else:
        spec["ephemeralContainers"] = ephemeral
    new["spec"] = spec
    if "status" in old:
        new["status"] = copy.deepcopy(old["status"])
    else:
        new.pop("status", None)
    meta, old_meta = new.setdefault("metadata", {}), _dict(old.get("metadata"))
    for key in RESET_OBJECT_META_FOR_STATUS:
        if key in old_meta:
            meta[key] = copy.deepcopy(old_meta[key])
        else:
            meta.pop(key, None)


def _diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The changed fields of one container, ``- field: old`` / ``+ field: new`` lines in field order (kube prints
    go-cmp's Diff of the two structs here; kapi shows the same fields, not its layout)."""
    lines = []
    for key in dict.fromkeys([*old, *new]):
        if old.get(key) != new.get(key):
            if key in old:
                lines.append(f"- {key}: {json.dumps(old[key], separators=(',', ':'))}")
            if key in new:
                lines.append(f"+ {key}: {json.dumps(new[key], separators=(',', ':'))}")
    return "\n".join(lines)


def validate_ephemeral_containers_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidatePodEphemeralContainersUpdate's part 2 (the caller adds ValidatePodSpec of ``new``): a mirror Pod
    takes none (``[]: Forbidden: static pods do not support ephemeral containers``, alone); an existing
    ephemeral container gone is ``spec.ephemeralContainers: Forbidden: existing ephemeral containers "<name>" may
    not be removed``, one that differs ``... may not be changed`` followed by the changed fields."""
    if MIRROR_POD_ANNOTATION in _dict(_dict(old.get("metadata")).get("annotations")):
        return [forbidden("[]", "static pods do not support ephemeral containers")]
    path = "spec.ephemeralContainers"
    current = {c.get("name"): c for c in _containers(new)}
    out = []
    for stored in _containers(old):
        name = stored.get("name")
        given = current.get(name)
        if given is None:
            out.append(forbidden(path, f"existing ephemeral containers {json.dumps(name)} may not be removed\n"))
        elif given != stored:
            out.append(forbidden(path, f"existing ephemeral containers {json.dumps(name)} may not be changed\n"
                                       + _diff(stored, given)))
    return out
