"""Three default-on kube plugins for objects kapi serves: RuntimeClass, TaintNodesByCondition and
PersistentVolumeClaimResize (k8s.io/kubernetes ``plugin/pkg/admission/runtimeclass``, ``nodetaint``,
``storage/persistentvolume/resize``).

- RuntimeClass (Pod CREATE, main resource): a ``runtimeClassName`` naming no RuntimeClass is 403
  ``pod rejected: RuntimeClass "x" not found``; the class's ``overhead.podFixed`` becomes the Pod's
  ``overhead`` (a different one the Pod set: 403 ``pod rejected: Pod's Overhead doesn't match RuntimeClass's
  defined Overhead``; an overhead without a class that defines one: 403 ``pod rejected: Pod Overhead set
  without corresponding RuntimeClass defined Overhead``); the class's ``scheduling.nodeSelector`` is merged
  into the Pod's (a key the Pod sets to another value: 403 ``conflict:
  runtimeClass.scheduling.nodeSelector[k] = v; pod.spec.nodeSelector[k] = w``) and its tolerations merged
  with the Pod's as kube's MergeTolerations (``pkg/util/tolerations``) does: one tolerated by a superset, kept
  or later, is dropped.
- TaintNodesByCondition (Node CREATE): the ``node.kubernetes.io/not-ready:NoSchedule`` taint is added unless
  the Node has a taint of that key and effect.
- PersistentVolumeClaimResize (PVC UPDATE, main resource): growing ``spec.resources.requests.storage`` needs a
  bound claim (403 ``Only bound persistent volume claims can be expanded``) whose StorageClass (the
  ``volume.beta.kubernetes.io/storage-class`` annotation, else ``spec.storageClassName``) has
  ``allowVolumeExpansion: true`` (403 ``only dynamically provisioned pvc can be resized and the storageclass
  that provisions the pvc must support resize``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kapi import errors, quantity
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list
from services.admission.chain import CREATE, UPDATE, AdmissionRequest
from services.admission.informers import Informers

NOT_READY_TAINT = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}
STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
OVERHEAD_MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
OVERHEAD_WITHOUT_CLASS = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
NOT_BOUND = "Only bound persistent volume claims can be expanded"
NO_EXPANSION = ("only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc "
                "must support resize")


def _main(request: AdmissionRequest, group: str, resource: str) -> bool:
    res = request.resource
    return (res.group, res.resource) == (group, resource) and not request.subresource \
        and isinstance(request.object, dict)


def _quantities(resources: Any) -> dict[str, Fraction] | None:
    """A ResourceList's values parsed (Semantic.DeepEqual compares quantities by value); None if unparseable."""
    try:
        return {k: quantity.parse(v) for k, v in _dict(resources).items()}
    except ValueError:
        return None


class RuntimeClass:
    """A Pod's runtimeClassName: the class must exist; its overhead and scheduling constraints apply."""

    name = "RuntimeClass"

    def __init__(self, informers: Informers):
        self.informers = informers
        self.classes = informers.cache("node.k8s.io", "runtimeclasses")

    def handles(self, operation: str) -> bool:
        """CREATE."""
        return operation == CREATE

    async def _runtime_class(self, request: AdmissionRequest) -> dict[str, Any] | None:
        """prepareObjects: the Pod's class (None without a name); 403 when it names none that exists."""
        name = _dict(_dict(request.object).get("spec")).get("runtimeClassName")
        if not isinstance(name, str) or not name:
            return None
        await self.classes.wait_synced(min(request.timeout, 5.0))
        rc = self.classes.get("", name) or await self.informers.lookup(
            "node.k8s.io", "runtimeclasses", "", name, request.timeout)
        if rc is None:
            raise errors.forbidden("pods", request.name, f'pod rejected: RuntimeClass "{name}" not found')
        return rc

    async def admit(self, request: AdmissionRequest) -> None:
        """setOverhead, then setScheduling."""
        if not _main(request, "", "pods"):
            return
        rc = await self._runtime_class(request)
        if rc is None:
            return
        spec = request.object.setdefault("spec", {})  # type: ignore[union-attr]
        fixed = _dict(rc.get("overhead")).get("podFixed")
        if isinstance(rc.get("overhead"), dict) and fixed is not None:
            if spec.get("overhead") is not None and _quantities(spec["overhead"]) != _quantities(fixed):
                raise errors.forbidden("pods", request.name, OVERHEAD_MISMATCH)
            spec["overhead"] = dict(fixed)
        scheduling = rc.get("scheduling")
        if not isinstance(scheduling, dict):
            return
        selector = dict(_dict(spec.get("nodeSelector")))
        for key, value in _dict(scheduling.get("nodeSelector")).items():
            if key in selector and selector[key] != value:
                raise errors.forbidden("pods", request.name, f"conflict: runtimeClass.scheduling.nodeSelector[{key}]"
                                       f" = {value}; pod.spec.nodeSelector[{key}] = {selector[key]}")
            selector[key] = value
        if selector:
            spec["nodeSelector"] = selector
        tolerations = merge_tolerations(_list(spec.get("tolerations")), _list(scheduling.get("tolerations")))
        if tolerations:
            spec["tolerations"] = tolerations

    async def validate(self, request: AdmissionRequest) -> None:
        """validateOverhead: the Pod's overhead is its class's, and none without one."""
        if not _main(request, "", "pods"):
            return
        rc = await self._runtime_class(request)
        overhead = _dict(request.object).get("spec", {}).get("overhead")
        if rc is not None and isinstance(rc.get("overhead"), dict):
            if _quantities(_dict(rc["overhead"]).get("podFixed")) != _quantities(overhead) or (
                    (rc["overhead"].get("podFixed") is None) != (overhead is None)):
                raise errors.forbidden("pods", request.name, OVERHEAD_MISMATCH)
        elif overhead is not None:
            raise errors.forbidden("pods", request.name, OVERHEAD_WITHOUT_CLASS)


class TaintNodesByCondition:
    """New Nodes start tainted not-ready (NoSchedule) until the node lifecycle controller says otherwise."""

    name = "TaintNodesByCondition"

    def handles(self, operation: str) -> bool:
        """CREATE."""
        return operation == CREATE

    async def admit(self, request: AdmissionRequest) -> None:
        """addNotReadyTaint: unless a taint matches (MatchTaint: same key and effect)."""
        if not _main(request, "", "nodes"):
            return
        spec = request.object.setdefault("spec", {})  # type: ignore[union-attr]
        taints = spec.get("taints") if isinstance(spec.get("taints"), list) else []
        if any(isinstance(t, dict) and t.get("key") == NOT_READY_TAINT["key"]
               and t.get("effect") == NOT_READY_TAINT["effect"] for t in taints):
            return
        spec["taints"] = [*taints, dict(NOT_READY_TAINT)]


class PersistentVolumeClaimResize:
    """A PVC may grow only when bound and its StorageClass allows volume expansion."""

    name = "PersistentVolumeClaimResize"

    def __init__(self, informers: Informers):
        self.informers = informers
        self.classes = informers.cache("storage.k8s.io", "storageclasses")

    def handles(self, operation: str) -> bool:
        """UPDATE."""
        return operation == UPDATE

    @staticmethod
    def _storage(claim: Any) -> Fraction | None:
        value = _dict(_dict(_dict(_dict(claim).get("spec")).get("resources")).get("requests")).get("storage")
        try:
            return None if value is None else quantity.parse(value)
        except ValueError:
            return None

    async def validate(self, request: AdmissionRequest) -> None:
        """Refuse (403) growing a claim that is not bound or whose class does not allow expansion."""
        if not _main(request, "", "persistentvolumeclaims") or not isinstance(request.old_object, dict):
            return
        new, old = self._storage(request.object), self._storage(request.old_object)
        if new is None or new <= (old or Fraction(0)):
            return
        if _dict(request.old_object.get("status")).get("phase") != "Bound":
            raise errors.forbidden("persistentvolumeclaims", request.name, NOT_BOUND)
        meta = _dict(request.old_object.get("metadata"))
        class_name = _dict(meta.get("annotations")).get(STORAGE_CLASS_ANNOTATION)
        if class_name is None:
            class_name = _dict(request.old_object.get("spec")).get("storageClassName")
        sc = None
        if isinstance(class_name, str) and class_name:
            await self.classes.wait_synced(min(request.timeout, 5.0))
            sc = self.classes.get("", class_name) or await self.informers.lookup(
                "storage.k8s.io", "storageclasses", "", class_name, request.timeout)
        if sc is None or sc.get("allowVolumeExpansion") is not True:
            raise errors.forbidden("persistentvolumeclaims", request.name, NO_EXPANSION)


def _toleration(value: Any) -> tuple[Any, ...]:
    t = _dict(value)
    return (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "",
            t.get("tolerationSeconds"))


def _is_superset(ss: tuple[Any, ...], t: tuple[Any, ...]) -> bool:
    """isSuperset: whether the toleration ``ss`` tolerates everything ``t`` does (both :func:`_toleration`
    tuples: key, operator, value, effect, tolerationSeconds)."""
    if ss == t:
        return True
    key, operator, value, effect, seconds = ss
    if t[0] != key and (key != "" or operator != "Exists"):
        return False
    if t[3] != effect and effect != "":
        return False
    if effect == "NoExecute" and seconds is not None:
        if t[4] is None or not isinstance(t[4], int) or not isinstance(seconds, int) or t[4] > seconds:
            return False
    if operator in ("Equal", ""):
        return t[1] == "Equal" and t[2] == value
    return operator == "Exists"


def merge_tolerations(first: list[Any], second: list[Any]) -> list[Any]:
    """MergeTolerations (``pkg/util/tolerations/tolerations.go``): ``first + second`` without the tolerations
    another one covers (:func:`_is_superset`), whether that one was kept already or comes later (of equal ones
    the first stays). Lists of toleration dicts in, a new list out (the dicts are not copied)."""
    everything = first + second
    keys = [_toleration(t) for t in everything]
    merged: list[Any] = []
    kept: list[tuple[Any, ...]] = []
    for i, t in enumerate(keys):
        if any(_is_superset(k, t) for k in kept):
            continue
        if any(later != t and _is_superset(later, t) for later in keys[i + 1:]):
            continue
        merged.append(everything[i])
        kept.append(t)
    return merged
