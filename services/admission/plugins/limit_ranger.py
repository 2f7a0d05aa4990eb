"""LimitRanger: LimitRange defaults and constraints (plugin/pkg/admission/limitranger).

For each LimitRange of the namespace (item types Container, Pod,
PersistentVolumeClaim):

- Pod CREATE and ``pods/resize`` UPDATE: every container (and init container) missing a limit gets
  ``default``, missing a request gets ``defaultRequest`` (LimitRange
  defaulting: defaultRequest falls back to default, default to max); the
  Pod is annotated ``kubernetes.io/limit-ranger: LimitRanger plugin set:
  cpu, memory request for container nginx; cpu limit for container nginx``
  (on a resize the annotation goes with the rest of the metadata:
  dropNonResizeUpdates keeps the stored Pod's).
- Validation (Pod CREATE and resize, PVC CREATE/UPDATE): ``min``, ``max`` and
  ``maxLimitRequestRatio`` per Container, summed per Pod, and min/max of
  ``requests.storage`` per PVC; failures -> 403 ``pods "x" is forbidden:
  [minimum cpu usage per Container is 100m, but request is 50m, ...]``
  with kube's wording (a single failure without brackets).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kapi import errors, quantity
from kapi.kinds.core import default_limit_range_item
from kapi.quota import pod_resources
from services.admission.chain import CREATE, UPDATE, AdmissionRequest
from services.admission.informers import Informers

ANNOTATION = "kubernetes.io/limit-ranger"
RESIZE = "resize"
_BINARY = ("memory", "ephemeral-storage", "storage")


def _items(limit_ranges: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    out = []
    for lr in limit_ranges:
        for item in (lr.get("spec") or {}).get("limits") or []:
            if isinstance(item, dict) and item.get("type") == kind:
                out.append(_defaulted(item))
    return out


def _defaulted(item: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``item`` with the LimitRange defaults (a stored LimitRange has them; one from before may not)."""
    item = dict(item)
    default_limit_range_item(item)
    return item


def _q(value: Any) -> Fraction | None:
    try:
        return quantity.parse(value)
    except ValueError:
        return None


def _check(kind: str, item: dict[str, Any], requests: dict[str, Any], limits: dict[str, Any]) -> list[str]:
    errs: list[str] = []
    for res, enforced in sorted((item.get("min") or {}).items()):
        req, lim, want = _q(requests.get(res)), _q(limits.get(res)), _q(enforced)
        if want is None:
            continue
        if req is None:
            errs.append(f"minimum {res} usage per {kind} is {enforced}.  No request is specified")
        elif req < want:
            errs.append(f"minimum {res} usage per {kind} is {enforced}, but request is {requests[res]}")
        elif lim is not None and lim < want:
            errs.append(f"minimum {res} usage per {kind} is {enforced}, but limit is {limits[res]}")
    for res, enforced in sorted((item.get("max") or {}).items()):
        req, lim, want = _q(requests.get(res)), _q(limits.get(res)), _q(enforced)
        if want is None:
            continue
        if kind == "PersistentVolumeClaim":
            if req is not None and req > want:
                errs.append(f"maximum {res} usage per {kind} is {enforced}, but request is {requests[res]}")
            continue
        if lim is None:
            errs.append(f"maximum {res} usage per {kind} is {enforced}.  No limit is specified")
        elif lim > want:
            errs.append(f"maximum {res} usage per {kind} is {enforced}, but limit is {limits[res]}")
        elif req is not None and req > want:
            errs.append(f"maximum {res} usage per {kind} is {enforced}, but request is {requests[res]}")
    for res, enforced in sorted((item.get("maxLimitRequestRatio") or {}).items()):
        req, lim, want = _q(requests.get(res)), _q(limits.get(res)), _q(enforced)
        if want is None:
            continue
        if not req:
            errs.append(f"{res} max limit to request ratio per {kind} is {enforced}, but no request is specified "
                        "or request is 0")
        elif not lim:
            errs.append(f"{res} max limit to request ratio per {kind} is {enforced}, but no limit is specified "
                        "or limit is 0")
        elif lim / req > want:
            errs.append(f"{res} max limit to request ratio per {kind} is {enforced}, but provided ratio is "
                        f"{float(lim / req):f}")
    return errs


def _containers(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(annotation prefix, container): the containers, then the init containers (kube's order)."""
    return [(prefix, c) for key, prefix in (("containers", "container"), ("initContainers", "init container"))
            for c in spec.get(key) or [] if isinstance(c, dict)]


class LimitRanger:
    """The mutating and validating LimitRanger plugin."""

    name = "LimitRanger"

    def __init__(self, informers: Informers):
        self.informers = informers
        self.cache = informers.cache("", "limitranges")

    def handles(self, operation: str) -> bool:
        """CREATE and UPDATE."""
        return operation in (CREATE, UPDATE)

    async def _ranges(self, request: AdmissionRequest) -> list[dict[str, Any]]:
        await self.cache.wait_synced(min(request.timeout, 5.0))
        return self.cache.list(request.namespace)

    @staticmethod
    def _target(request: AdmissionRequest) -> str:
        """``"pods"``, ``"pvcs"`` or ``""`` (not handled): SupportsAttributes of
        ``plugin/pkg/admission/limitranger/admission.go`` — a Pod CREATE, an UPDATE of ``pods/resize``
        (in-place resize: defaults and constraints as on create), a PVC CREATE or UPDATE; no other
        subresource and no plain Pod UPDATE. runLimitFunc skips an update of an object being deleted (the
        stored one has a ``deletionTimestamp``)."""
        res = request.resource
        if res.group != "" or request.object is None:
            return ""
        old_meta = (request.old_object or {}).get("metadata") or {}
        if request.old_object is not None and old_meta.get("deletionTimestamp"):
            return ""
        if res.resource == "pods" and request.subresource == RESIZE:
            return "pods" if request.operation == UPDATE else ""
        if request.subresource:
            return ""
        if res.resource == "pods" and request.operation == CREATE:
            return "pods"
        if res.resource == "persistentvolumeclaims":
            return "pvcs"
        return ""

    async def admit(self, request: AdmissionRequest) -> None:
        """Apply Container defaults to a new Pod and annotate what was set."""
        if self._target(request) != "pods":
            return
        items = _items(await self._ranges(request), "Container")
        if not items:
            return
        notes: list[str] = []
        spec = request.object.setdefault("spec", {})  # type: ignore[union-attr]
        for prefix, c in _containers(spec):
            resources = c.setdefault("resources", {})
            requests = resources.get("requests") or {}
            limits = resources.get("limits") or {}
            set_req: list[str] = []
            set_lim: list[str] = []
            for item in items:
                for k, v in (item.get("default") or {}).items():
                    if k not in limits:
                        limits[k] = v
                        set_lim.append(k)
                for k, v in (item.get("defaultRequest") or {}).items():
                    if k not in requests:
                        requests[k] = v
                        set_req.append(k)
            if requests:
                resources["requests"] = requests
            if limits:
                resources["limits"] = limits
            if set_req:
                notes.append(f"{', '.join(sorted(set_req))} request for {prefix} {c.get('name', '')}")
            if set_lim:
                notes.append(f"{', '.join(sorted(set_lim))} limit for {prefix} {c.get('name', '')}")
        if notes:
            meta = request.object.setdefault("metadata", {})  # type: ignore[union-attr]
            annotations = meta.setdefault("annotations", {})
            annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)

    async def validate(self, request: AdmissionRequest) -> None:
        """Enforce min/max/maxLimitRequestRatio; raises 403 with every violation."""
        target = self._target(request)
        if not target:
            return
        ranges = await self._ranges(request)
        if not ranges:
            return
        errs: list[str] = []
        obj = request.object or {}
        spec = obj.get("spec") or {}
        if target == "pods":
            for _, c in _containers(spec):
                resources = c.get("resources") or {}
                requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
                for item in _items(ranges, "Container"):
                    errs += _check("Container", item, requests, limits)
            # podRequests / podLimits: sidecars summed with the containers, the pod-level override
            totals = {which: pod_resources(obj, which, use_status=False, overhead=False)
                      for which in ("requests", "limits")}
            req_s = {k: quantity.format(v, binary=k in _BINARY) for k, v in totals["requests"].items()}
            lim_s = {k: quantity.format(v, binary=k in _BINARY) for k, v in totals["limits"].items()}
            for item in _items(ranges, "Pod"):
                errs += _check("Pod", item, req_s, lim_s)
        else:
            resources = spec.get("resources") or {}
            for item in _items(ranges, "PersistentVolumeClaim"):
                errs += _check("PersistentVolumeClaim", item, resources.get("requests") or {},
                               resources.get("limits") or {})
        if errs:
            text = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
            raise errors.forbidden(request.resource.resource, request.name, text)
