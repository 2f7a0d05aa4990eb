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
  ``requests.storage`` per PVC; the LimitRanges are checked one by one and
  the first with failures refuses alone (runLimitFunc returns at the first
  error) -> 403 ``pods "x" is forbidden: [minimum cpu usage per Container
  is 100m, but request is 50m, ...]`` with kube's wording, aggregated as
  utilerrors.NewAggregate (a repeated message once, a single one without
  brackets).
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


def _items(limit_range: dict[str, Any]) -> list[dict[str, Any]]:
    """One LimitRange's ``spec.limits`` items in order, each defaulted."""
    return [_defaulted(item) for item in (limit_range.get("spec") or {}).get("limits") or []
            if isinstance(item, dict)]


def aggregate(messages: list[str]) -> str:
    """utilerrors.NewAggregate(errs).Error(): the messages once each in order (a repeated one is dropped), one
    alone as it is, several as ``[a, b]``; "" for none."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]" if unique else ""


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
        if kind == "PersistentVolumeClaim":  # maxRequestConstraint: the request alone
            if req is None:
                errs.append(f"maximum {res} usage per {kind} is {enforced}.  No request is specified")
            elif req > want:
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
        """PodMutateLimitFunc for each LimitRange of the namespace in turn (by name): the LimitRange's
        Container defaults (a later Container item's ``default``/``defaultRequest`` of a resource replacing an
        earlier one's) fill what each container and init container lacks, so an earlier LimitRange's default
        wins; each LimitRange that set something writes the whole ``kubernetes.io/limit-ranger`` annotation
        anew (the last such one's list stays)."""
        if self._target(request) != "pods":
            return
        spec = request.object.setdefault("spec", {})  # type: ignore[union-attr]
        for limit_range in await self._ranges(request):
            defaults: dict[str, dict[str, Any]] = {"requests": {}, "limits": {}}
            for item in _items(limit_range):
                if item.get("type") == "Container":
                    defaults["requests"].update(item.get("defaultRequest") or {})
                    defaults["limits"].update(item.get("default") or {})
            notes: list[str] = []
            for prefix, c in _containers(spec):
                resources = c.setdefault("resources", {})
                for which, word in (("requests", "request"), ("limits", "limit")):
                    have = resources.get(which) or {}
                    added = sorted(k for k in defaults[which] if k not in have)
                    have.update((k, defaults[which][k]) for k in added)
                    if have:
                        resources[which] = have
                    if added:
                        notes.append(f"{', '.join(added)} {word} for {prefix} {c.get('name', '')}")
            if notes:
                meta = request.object.setdefault("metadata", {})  # type: ignore[union-attr]
                annotations = meta.setdefault("annotations", {})
                annotations[ANNOTATION] = "LimitRanger plugin set: " + "; ".join(notes)

    async def validate(self, request: AdmissionRequest) -> None:
        """runLimitFunc with PodValidateLimitFunc / PersistentVolumeClaimValidateLimitFunc: the namespace's
        LimitRanges in turn (by name; kube's lister order is its cache's), and the first one with violations
        refuses: 403 with that LimitRange's violations only, in its items' order (Container items: each
        container, then each init container: min, max, maxLimitRequestRatio, resources by name; Pod items:
        the pod's totals), aggregated as utilerrors.NewAggregate (a repeated message once; one bare, several
        in brackets)."""
        target = self._target(request)
        if not target:
            return
        ranges = await self._ranges(request)
        if not ranges:
            return
        obj = request.object or {}
        spec = obj.get("spec") or {}
        req_s: dict[str, str] = {}
        lim_s: dict[str, str] = {}
        if target == "pods":
            # podRequests / podLimits: sidecars summed with the containers, the pod-level override
            totals = {which: pod_resources(obj, which, use_status=False, overhead=False)
                      for which in ("requests", "limits")}
            req_s = {k: quantity.format(v, binary=k in _BINARY) for k, v in totals["requests"].items()}
            lim_s = {k: quantity.format(v, binary=k in _BINARY) for k, v in totals["limits"].items()}
        for limit_range in ranges:
            errs: list[str] = []
            for item in _items(limit_range):
                kind = item.get("type")
                if target == "pods" and kind == "Container":
                    for _, c in _containers(spec):
                        resources = c.get("resources") or {}
                        errs += _check("Container", item, resources.get("requests") or {},
                                       resources.get("limits") or {})
                elif target == "pods" and kind == "Pod":
                    errs += _check("Pod", item, req_s, lim_s)
                elif target == "pvcs" and kind == "PersistentVolumeClaim":
                    resources = spec.get("resources") or {}
                    errs += _check("PersistentVolumeClaim", item, resources.get("requests") or {}, {})
            if errs:
                raise errors.forbidden(request.resource.resource, request.name, aggregate(errs))
