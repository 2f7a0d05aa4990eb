"""The small built-in plugins (k8s.io/kubernetes plugin/pkg/admission/*), one class each.

- AlwaysAdmit / AlwaysDeny: admit everything / refuse every write
  (``admission control is denying all modifications``, 403).
- AlwaysPullImages: every container's imagePullPolicy becomes Always on
  Pod create and update; a Pod whose policy is not Always fails validation.
- DefaultTolerationSeconds: Pods get NoExecute tolerations for
  ``node.kubernetes.io/not-ready`` and ``node.kubernetes.io/unreachable``
  (tolerationSeconds 300) unless they tolerate them already.
- DenyServiceExternalIPs: a Service create (or update adding IPs) with
  ``spec.externalIPs`` -> 403 ``externalIPs are not allowed``... as kube.
- DefaultStorageClass: a PVC without ``spec.storageClassName`` gets the
  StorageClass annotated ``storageclass.kubernetes.io/is-default-class: "true"``
  (newest first when several).
- DefaultIngressClass: an Ingress without ``spec.ingressClassName`` gets
  the IngressClass annotated ``ingressclass.kubernetes.io/is-default-class``.
- Priority: a Pod's ``priorityClassName`` resolves to ``priority`` and
  ``preemptionPolicy``; a missing class -> 403 ``no PriorityClass with name
  X was found``; no name -> the globalDefault class, else priority 0. A
  PriorityClass create (or an update of another class) with ``globalDefault``
  while a default exists -> 403 ``PriorityClass X is already marked as
  default. Only one default can exist``.
"""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi.kinds import scheduling
from services.admission.chain import CREATE, UPDATE, AdmissionRequest
from services.admission.informers import Informers

_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"
DEFAULT_TOLERATION_SECONDS = 300
SYSTEM_PRIORITY_CLASSES = {name: value for name, (value, _) in scheduling.SYSTEM_PRIORITY_CLASSES.items()}


def _is_pod(request: AdmissionRequest) -> bool:
    res = request.resource
    return res.group == "" and res.resource == "pods" and not request.subresource and request.object is not None


def _all_containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for key in ("initContainers", "containers", "ephemeralContainers"):
        out += [c for c in spec.get(key) or [] if isinstance(c, dict)]
    return out


class AlwaysAdmit:
    """Admits everything."""

    name = "AlwaysAdmit"

    def handles(self, operation: str) -> bool:
        """Nothing to do."""
        return False


class AlwaysDeny:
    """Refuses every write (403)."""

    name = "AlwaysDeny"

    def handles(self, operation: str) -> bool:
        """Every operation."""
        return True

    async def validate(self, request: AdmissionRequest) -> None:
        """Always raises 403 ``admission control is denying all modifications``."""
        raise errors.forbidden_message("admission control is denying all modifications")


class AlwaysPullImages:
    """imagePullPolicy Always for every container of a Pod."""

    name = "AlwaysPullImages"

    def handles(self, operation: str) -> bool:
        """CREATE and UPDATE."""
        return operation in (CREATE, UPDATE)

    async def admit(self, request: AdmissionRequest) -> None:
        """Set imagePullPolicy Always."""
        if _is_pod(request):
            for c in _all_containers((request.object or {}).get("spec") or {}):
                c["imagePullPolicy"] = "Always"

    async def validate(self, request: AdmissionRequest) -> None:
        """422-like 403 when a container's policy is not Always (set after this plugin by someone else)."""
        if not _is_pod(request):
            return
        for c in _all_containers((request.object or {}).get("spec") or {}):
            if c.get("imagePullPolicy") != "Always":
                raise errors.forbidden("pods", request.name, "spec.containers.imagePullPolicy: Unsupported value: "
                                       f'"{c.get("imagePullPolicy", "")}": supported values: "Always"')


class DefaultTolerationSeconds:
    """not-ready/unreachable NoExecute tolerations for 300 s."""

    name = "DefaultTolerationSeconds"

    def handles(self, operation: str) -> bool:
        """CREATE."""
        return operation == CREATE

    async def admit(self, request: AdmissionRequest) -> None:
        """Add the two tolerations unless the Pod tolerates the taints already."""
        if not _is_pod(request):
            return
        spec = request.object.setdefault("spec", {})  # type: ignore[union-attr]
        tolerations = spec.get("tolerations")
        tolerations = tolerations if isinstance(tolerations, list) else []
        for key in (_NOT_READY, _UNREACHABLE):
            covered = any(isinstance(t, dict) and (t.get("effect") in ("", None, "NoExecute"))
                          and (t.get("key") == key or (not t.get("key") and t.get("operator") == "Exists"))
                          for t in tolerations)
            if not covered:
                tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                    "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
        spec["tolerations"] = tolerations


class DenyServiceExternalIPs:
    """Refuses new externalIPs on Services (CVE-2020-8554 mitigation)."""

    name = "DenyServiceExternalIPs"

    def handles(self, operation: str) -> bool:
        """CREATE and UPDATE."""
        return operation in (CREATE, UPDATE)

    async def validate(self, request: AdmissionRequest) -> None:
        """403 when the Service's externalIPs grow."""
        res = request.resource
        if res.group != "" or res.resource != "services" or request.subresource or request.object is None:
            return
        new = set((request.object.get("spec") or {}).get("externalIPs") or [])
        old = set(((request.old_object or {}).get("spec") or {}).get("externalIPs") or [])
        if new - old:
            raise errors.forbidden("services", request.name, "spec.externalIPs: Forbidden: use of external IPs "
                                   "is denied by admission control")


def _default_class(objects: list[dict[str, Any]], annotation: str) -> dict[str, Any] | None:
    marked = [o for o in objects if ((o.get("metadata") or {}).get("annotations") or {}).get(annotation) == "true"]
    marked.sort(key=lambda o: ((o.get("metadata") or {}).get("creationTimestamp", ""),
                               (o.get("metadata") or {}).get("name", "")), reverse=True)
    return marked[0] if marked else None


class DefaultStorageClass:
    """storageClassName for PVCs that name none."""

    name = "DefaultStorageClass"
    annotation = "storageclass.kubernetes.io/is-default-class"

    def __init__(self, informers: Informers):
        self.classes = informers.cache("storage.k8s.io", "storageclasses")

    def handles(self, operation: str) -> bool:
        """CREATE."""
        return operation == CREATE

    async def admit(self, request: AdmissionRequest) -> None:
        """Fill ``spec.storageClassName`` from the default class."""
        res = request.resource
        if res.group != "" or res.resource != "persistentvolumeclaims" or request.object is None:
            return
        spec = request.object.setdefault("spec", {})
        if spec.get("storageClassName") is not None:
            return
        await self.classes.wait_synced(min(request.timeout, 5.0))
        chosen = _default_class(self.classes.list(), self.annotation)
        if chosen is not None:
            spec["storageClassName"] = chosen["metadata"]["name"]


class DefaultIngressClass:
    """ingressClassName for Ingresses that name none."""

    name = "DefaultIngressClass"
    annotation = "ingressclass.kubernetes.io/is-default-class"

    def __init__(self, informers: Informers):
        self.classes = informers.cache("networking.k8s.io", "ingressclasses")

    def handles(self, operation: str) -> bool:
        """CREATE."""
        return operation == CREATE

    async def admit(self, request: AdmissionRequest) -> None:
        """Fill ``spec.ingressClassName`` from the default class (unless the legacy annotation names one)."""
        res = request.resource
        if res.group != "networking.k8s.io" or res.resource != "ingresses" or request.object is None:
            return
        spec = request.object.setdefault("spec", {})
        annotations = (request.object.get("metadata") or {}).get("annotations") or {}
        if spec.get("ingressClassName") or "kubernetes.io/ingress.class" in annotations:
            return
        await self.classes.wait_synced(min(request.timeout, 5.0))
        chosen = _default_class(self.classes.list(), self.annotation)
        if chosen is not None:
            spec["ingressClassName"] = chosen["metadata"]["name"]


class Priority:
    """priorityClassName -> priority (and preemptionPolicy)."""

    name = "Priority"

    def __init__(self, informers: Informers):
        self.informers = informers
        self.classes = informers.cache("scheduling.k8s.io", "priorityclasses")

    def handles(self, operation: str) -> bool:
        """CREATE (Pods, PriorityClasses) and UPDATE (PriorityClasses)."""
        return operation in (CREATE, UPDATE)

    def _default_class(self) -> dict[str, Any] | None:
        """The globalDefault class; of several (a create race), the lowest value's (getDefaultPriorityClass)."""
        defaults = [c for c in self.classes.list() if c.get("globalDefault") is True]
        return min(defaults, key=lambda c: c.get("value", 0)) if defaults else None

    async def admit(self, request: AdmissionRequest) -> None:
        """kube's admitPod. CREATE: resolve ``priorityClassName`` (or the global default class; none: priority 0 and
        PreemptLowerPriority) into ``priority`` and ``preemptionPolicy``. UPDATE: an unset ``priority`` or
        ``preemptionPolicy`` keeps the old Pod's (validation then rejects any other change to them).

        Raises 403 for a class that does not exist, or a given priority / preemptionPolicy that differs from the
        class's (plugin/pkg/admission/priority/admission.go).
        """
        if request.operation not in (CREATE, UPDATE) or not _is_pod(request):
            return
        spec = request.object.setdefault("spec", {})  # type: ignore[union-attr]
        if request.operation == UPDATE:
            old_spec = (request.old_object or {}).get("spec") or {}
            for key in ("priority", "preemptionPolicy"):
                if spec.get(key) is None and old_spec.get(key) is not None:
                    spec[key] = old_spec[key]
            return
        name = spec.get("priorityClassName") or ""
        await self.classes.wait_synced(min(request.timeout, 5.0))
        pc: dict[str, Any] | None
        if not name:
            pc = self._default_class()
            if pc is None:  # DefaultPriorityWhenNoDefaultClassExists
                pc = {"value": 0}
            else:
                spec["priorityClassName"] = pc["metadata"]["name"]
        else:
            pc = self.classes.get("", name) or await self.informers.lookup(
                "scheduling.k8s.io", "priorityclasses", "", name, request.timeout)
            if pc is None and name in SYSTEM_PRIORITY_CLASSES:
                pc = {"value": SYSTEM_PRIORITY_CLASSES[name]}
            if pc is None:
                raise errors.forbidden("pods", request.name, f"no PriorityClass with name {name} was found")
        value = pc.get("value", 0)
        if spec.get("priority") is not None and spec["priority"] != value:
            raise errors.forbidden("pods", request.name, "the integer value of priority "
                                   f"({spec['priority']}) must not be provided in pod spec; priority admission "
                                   "controller computed "
                                   f"{value} from the given PriorityClass name")
        spec["priority"] = value
        policy = pc.get("preemptionPolicy") or "PreemptLowerPriority"  # SetDefaults_PriorityClass
        if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
            raise errors.forbidden("pods", request.name, "the string value of PreemptionPolicy "
                                   f"({spec['preemptionPolicy']}) must not be provided in pod spec; priority "
                                   f"admission controller computed {policy} from the given PriorityClass name")
        spec["preemptionPolicy"] = policy

    async def validate(self, request: AdmissionRequest) -> None:
        """validatePriorityClass: one globalDefault class; 403 when another is already the default (on create,
        any existing default)."""
        res = request.resource
        if (res.group, res.resource) != (scheduling.GROUP, "priorityclasses") or request.subresource \
                or not isinstance(request.object, dict) or request.object.get("globalDefault") is not True:
            return
        await self.classes.wait_synced(min(request.timeout, 5.0))
        for pc in self.classes.list():
            other = (pc.get("metadata") or {}).get("name")
            if pc.get("globalDefault") is True and (request.operation == CREATE or other != request.name):
                raise errors.forbidden("priorityclasses", request.name, f"PriorityClass {other} is already marked "
                                       "as default. Only one default can exist", scheduling.GROUP)
