"""Pod subresources that rewrite the spec: ``pods/ephemeralcontainers`` (kube's podEphemeralContainersStrategy) and
``pods/resize`` (podResizeStrategy, InPlacePodVerticalScaling).

``kubectl debug <pod> --image=...`` patches ``pods/<name>/ephemeralcontainers``: the only part of the request
that counts is ``spec.ephemeralContainers``; the rest of the spec, the status and the metadata
ResetObjectMetaForStatus names come from the stored Pod (dropNonEphemeralContainerUpdates,
``pkg/registry/core/pod/strategy.go``). ValidatePodEphemeralContainersUpdate
(``pkg/apis/core/validation/validation.go``) then lets ephemeral containers be added only: an existing one may be
neither removed nor changed, and a static (mirror) Pod takes none.

``kubectl patch pod <pod> --subresource resize`` patches ``pods/<name>/resize``: only the containers' and init
containers' ``resources`` and ``resizePolicy`` count, matched by index (dropNonResizeUpdates); ValidatePodResize
then lets only cpu and memory of regular and sidecar containers change, keeping the QoS class.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from kapi.errors import Cause
from kapi.kinds.base import RESET_OBJECT_META_FOR_STATUS, Obj
from kapi.kinds.podfields import MIRROR_POD_ANNOTATION
from kapi.kinds.podqos import pod_qos_class
from kapi.objectmeta import forbidden, invalid

EPHEMERAL_CONTAINERS = "ephemeralcontainers"
RESIZE = "resize"


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
    _keep_stored_status_and_meta(new, old)


def _keep_stored_status_and_meta(new: Obj, old: Obj) -> None:
    """``newPod.Status = oldPod.Status`` and metav1.ResetObjectMetaForStatus, in place."""
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


# pods/resize


def _list_of(spec: dict[str, Any], key: str) -> list[Any]:
    items = spec.get(key)
    return items if isinstance(items, list) else []


def _merge_resize_fields(given: list[Any], stored: list[Any]) -> list[Any]:
    """dropNonResizeUpdatesForContainers: the stored containers with the request's ``resources`` and
    ``resizePolicy`` (by index; absent in the request is absent in the result); the request's own list when a
    name differs at some index (a rename or reorder, left for validation to refuse)."""
    if not given:
        return given
    merged = copy.deepcopy(stored)
    for index, container in enumerate(given):
        container, target = _dict(container), merged[index]
        if not isinstance(target, dict) or target.get("name") != container.get("name"):
            return given
        for key in ("resources", "resizePolicy"):
            if key in container:
                target[key] = copy.deepcopy(container[key])
            else:
                target.pop(key, None)
    return merged


def prepare_resize_update(new: Obj, old: Obj) -> None:
    """dropNonResizeUpdates, in place: the stored Pod's spec with the request's containers' and init containers'
    ``resources`` and ``resizePolicy`` (:func:`_merge_resize_fields`), the stored status and
    ResetObjectMetaForStatus's metadata. When the request adds or removes a container or an init container, it is
    left as sent for ValidatePodResize to refuse. Pod-level ``spec.resources`` stays the stored one
    (InPlacePodLevelResourcesVerticalScaling is off by default)."""
    given, stored = _dict(new.get("spec")), _dict(old.get("spec"))
    keys = ("containers", "initContainers")
    if any(len(_list_of(given, key)) != len(_list_of(stored, key)) for key in keys):
        return
    merged = {key: _merge_resize_fields(_list_of(given, key), _list_of(stored, key)) for key in keys}
    spec = copy.deepcopy(stored)
    for key, items in merged.items():
        if key in stored:  # the lengths match: a list the stored spec lacks is empty in the request too
            spec[key] = items
    new["spec"] = spec
    _keep_stored_status_and_meta(new, old)


def _semantic(value: Any) -> Any:
    """A value as apiequality.Semantic.DeepEqual sees it: empty maps and lists (and nulls) are as absent."""
    if isinstance(value, dict):
        out = {k: _semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _restartable(container: Any) -> bool:
    """isRestartableInitContainer: ``restartPolicy: Always`` (a sidecar)."""
    return _dict(container).get("restartPolicy") == "Always"


def _resources_removed(given: Any, stored: Any) -> bool:
    """resourcesRemoved: a resource name of the stored list is missing from the request's."""
    given, stored = _dict(given), _dict(stored)
    return len(stored) > len(given) or any(name not in given for name in stored)


def _container_resize_causes(given: Any, stored: Any, path: str) -> list[Cause]:
    """validateContainerResize: requests and limits may change but not go (``<path>.requests: Forbidden: resource
    requests cannot be removed``, ``<path>.limits: ... resource limits cannot be removed``). Since 1.34 memory
    limits may be decreased (or added) whatever the resize policy."""
    given, stored = _dict(given), _dict(stored)
    out = []
    if _resources_removed(given.get("requests"), stored.get("requests")):
        out.append(forbidden(f"{path}.requests", "resource requests cannot be removed"))
    if _resources_removed(given.get("limits"), stored.get("limits")):
        out.append(forbidden(f"{path}.limits", "resource limits cannot be removed"))
    return out


def _without_cpu_memory_changes(container: Any, stored: Any) -> dict[str, Any]:
    """dropCPUMemoryResourcesFromContainer: the container with its cpu and memory requests and limits put back to
    the stored ones; a list the stored container lacks is dropped, and ``resources`` keeps only requests and
    limits."""
    out = copy.deepcopy(_dict(container))
    given_res, stored_res = _dict(out.get("resources")), _dict(_dict(stored).get("resources"))
    resources = {}
    for key in ("limits", "requests"):
        old_list = stored_res.get(key)
        if not isinstance(old_list, dict):
            continue
        munged = {k: v for k, v in _dict(given_res.get(key)).items() if k not in ("cpu", "memory")}
        for name in ("cpu", "memory"):
            if name in old_list:
                munged[name] = old_list[name]
        resources[key] = munged
    out["resources"] = resources
    return out


def validate_resize_update(new: Obj, old: Obj, spec_causes: list[Cause],
                           qos_class: Callable[[Obj], str] | None = None) -> list[Cause]:
    """ValidatePodResize, given validatePodMetadataAndSpec's causes of ``new`` (``spec_causes``), in kube's order:

    - alone: pod-level resources (old or new) ``[]: Forbidden: pods with pod-level resources cannot be resized``,
      a mirror Pod ``[]: Forbidden: static pods cannot be resized``, a Windows Pod ``[]: Forbidden: windows pods
      cannot be resized``;
    - ``spec: Invalid value: "<status.qosClass>": Pod QOS Class may not change as a result of resizing`` (the stored
      class, else computed, against the new spec's);
    - ``spec: Forbidden: Pod running on node without support for resize`` (the first running container status
      has no ``resources``);
    - per sidecar init container, then per container (:func:`_container_resize_causes`);
    - ``spec: Forbidden: only cpu and memory resources are mutable`` per container that changed anything else,
      ``... only cpu and memory resources for sidecar containers are mutable`` per sidecar,
      ``... resources for non-sidecar init containers are immutable`` per other init container;
    - with none of these, one ``only cpu and memory resources are mutable`` when the rest of the spec differs.
    """
    if qos_class is None:
        qos_class = pod_qos_class
    new_spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))

    def pod_level(spec: dict[str, Any]) -> bool:
        resources = _dict(spec.get("resources"))
        return bool(_dict(resources.get("requests")) or _dict(resources.get("limits")))

    if pod_level(old_spec) or pod_level(new_spec):
        return [forbidden("[]", "pods with pod-level resources cannot be resized")]
    if MIRROR_POD_ANNOTATION in _dict(_dict(old.get("metadata")).get("annotations")):
        return [forbidden("[]", "static pods cannot be resized")]
    if _dict(old_spec.get("os")).get("name") == "windows":
        return [forbidden("[]", "windows pods cannot be resized")]

    out = list(spec_causes)
    old_status, new_status = _dict(old.get("status")), _dict(new.get("status"))
    if (old_status.get("qosClass") or qos_class(old_spec)) != qos_class(new_spec):
        out.append(invalid("spec", new_status.get("qosClass") or "",
                           "Pod QOS Class may not change as a result of resizing"))
    for status in _list_of(old_status, "containerStatuses"):
        if isinstance(status, dict) and _dict(status.get("state")).get("running") is not None:
            if status.get("resources") is None:
                out.append(forbidden("spec", "Pod running on node without support for resize"))
            break

    new_init, old_init = _list_of(new_spec, "initContainers"), _list_of(old_spec, "initContainers")
    new_ctrs, old_ctrs = _list_of(new_spec, "containers"), _list_of(old_spec, "containers")
    for key, given_list, stored_list in (("initContainers", new_init, old_init), ("containers", new_ctrs, old_ctrs)):
        for index, stored in enumerate(stored_list):
            if key == "initContainers" and not _restartable(stored):
                continue
            given = _dict(given_list[index]) if index < len(given_list) else {}
            out.extend(_container_resize_causes(given.get("resources"), _dict(stored).get("resources"),
                                                f"spec.{key}[{index}].resources"))

    rest = copy.deepcopy(new_spec)
    containers = []
    for index, container in enumerate(new_ctrs):
        stored = old_ctrs[index] if index < len(old_ctrs) else {}
        container = _without_cpu_memory_changes(container, stored)
        if _semantic(container) != _semantic(stored):
            out.append(forbidden("spec", "only cpu and memory resources are mutable"))
        containers.append(container)
    if "containers" in rest:
        rest["containers"] = containers
    init_containers = []
    for index, container in enumerate(new_init):
        stored = old_init[index] if index < len(old_init) else {}
        if _restartable(container):
            container = _without_cpu_memory_changes(container, stored)
            if _semantic(container) != _semantic(stored):
                out.append(forbidden("spec", "only cpu and memory resources for sidecar containers are mutable"))
        elif _semantic(container) != _semantic(stored):
            out.append(forbidden("spec", "resources for non-sidecar init containers are immutable"))
        init_containers.append(container)
    if "initContainers" in rest:
        rest["initContainers"] = init_containers
    if out:
        return out
    if _semantic(rest) != _semantic(old_spec) or len(new_ctrs) != len(old_ctrs):
        return [forbidden("spec", "only cpu and memory resources are mutable")]
    return []
