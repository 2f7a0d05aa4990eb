"""ResourceQuota: usage charged to quota status before a write is admitted (plugin/pkg/admission/resourcequota).

For each ResourceQuota of the namespace whose scopes match the object and
whose ``spec.hard`` names a resource the object uses:

- usage: object counts (``pods``, ``services``, ``configmaps``,
  ``secrets``, ``persistentvolumeclaims``, ``replicationcontrollers``,
  ``resourcequotas`` and ``count/<resource>[.<group>]`` for anything),
  Pod compute (``requests.cpu|memory|ephemeral-storage``, ``cpu``,
  ``memory``, ``limits.*``; terminal Pods use nothing), Services
  (``services.loadbalancers``, ``services.nodeports``), PVC storage
  (``requests.storage``, ``<class>.storageclass.storage.k8s.io/...``).
- scopes: BestEffort, NotBestEffort, Terminating, NotTerminating,
  PriorityClass (``scopeSelector``), CrossNamespacePodAffinity (never).
- a Pod missing a constrained compute resource -> 403 ``failed quota:
  <quota>: must specify limits.cpu for: <containers>``.
- new usage above hard -> 403 ``exceeded quota: <quota>, requested:
  pods=1, used: pods=2, limited: pods=2``.
- the new ``status.used`` (and ``status.hard``) is written with a
  conditional storage update; on a Conflict the quota is re-read and the
  check repeated, so concurrent creates across replicas never overshoot.
  Dry-run requests check without charging. A quota whose status lacks a
  constrained resource has that usage computed from a live list first
  (kapi has no quota controller yet); DELETE of a charged object refunds
  its usage the same way.
"""

from __future__ import annotations

import asyncio
import logging
from fractions import Fraction
from typing import Any

from kapi import errors
from services.admission import quantity
from services.admission.chain import CREATE, DELETE, UPDATE, AdmissionRequest
from services.admission.informers import Informers

log = logging.getLogger(__name__)

MAX_RETRIES = 20
_LEGACY_COUNTS = {"pods", "services", "configmaps", "secrets", "persistentvolumeclaims", "replicationcontrollers",
                  "resourcequotas"}
_COMPUTE = ("cpu", "memory", "ephemeral-storage")
_BINARY = ("memory", "storage", "ephemeral-storage")
Usage = dict[str, Fraction]


def count_name(group: str, resource: str) -> str:
    """``count/<resource>`` for the core group, else ``count/<resource>.<group>``."""
    return f"count/{resource}" if not group else f"count/{resource}.{group}"


def _q(value: Any) -> Fraction:
    try:
        return quantity.parse(value)
    except ValueError:
        return Fraction(0)


def _containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in spec.get("containers") or [] if isinstance(c, dict)]


def pod_compute(pod: dict[str, Any]) -> Usage:
    """requests/limits of a Pod: max(sum of containers, each init container) per resource (kube PodRequests)."""
    spec = pod.get("spec") or {}
    out: Usage = {}
    for which in ("requests", "limits"):
        total: Usage = {}
        for c in _containers(spec):
            for k, v in ((c.get("resources") or {}).get(which) or {}).items():
                total[k] = total.get(k, Fraction(0)) + _q(v)
        for c in spec.get("initContainers") or []:
            for k, v in (((c or {}).get("resources") or {}).get(which) or {}).items():
                total[k] = max(total.get(k, Fraction(0)), _q(v))
        for k, v in total.items():
            out[f"{which}.{k}"] = v
            if which == "requests" and k in ("cpu", "memory"):
                out[k] = v
    return out


def usage(obj: dict[str, Any] | None, group: str, resource: str) -> Usage:
    """Everything ``obj`` counts against quota."""
    if obj is None:
        return {}
    out: Usage = {count_name(group, resource): Fraction(1)}
    if not group and resource in _LEGACY_COUNTS:
        out[resource] = Fraction(1)
    spec = obj.get("spec") or {}
    if not group and resource == "pods":
        if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            return {}
        out.update(pod_compute(obj))
    elif not group and resource == "services":
        kind = spec.get("type") or "ClusterIP"
        ports = len(spec.get("ports") or [])
        if kind == "LoadBalancer":
            out["services.loadbalancers"] = Fraction(1)
            if spec.get("allocateLoadBalancerNodePorts", True) is not False:
                out["services.nodeports"] = Fraction(ports)
        elif kind == "NodePort":
            out["services.nodeports"] = Fraction(ports)
    elif not group and resource == "persistentvolumeclaims":
        storage = _q(((spec.get("resources") or {}).get("requests") or {}).get("storage", 0))
        out["requests.storage"] = storage
        cls = spec.get("storageClassName")
        if cls:
            out[f"{cls}.storageclass.storage.k8s.io/requests.storage"] = storage
            out[f"{cls}.storageclass.storage.k8s.io/persistentvolumeclaims"] = Fraction(1)
    return out


def _best_effort(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    for c in [*_containers(spec), *(spec.get("initContainers") or [])]:
        res = (c or {}).get("resources") or {}
        if any(k in _COMPUTE[:2] for k in {**(res.get("requests") or {}), **(res.get("limits") or {})}):
            return False
    return True


def _scope_matches(scope: str, operator: str, values: list[str], obj: dict[str, Any], resource: str) -> bool:
    if resource != "pods" or (not obj):
        return scope not in ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "PriorityClass",
                             "CrossNamespacePodAffinity")
    spec = obj.get("spec") or {}
    if scope == "BestEffort":
        return _best_effort(obj)
    if scope == "NotBestEffort":
        return not _best_effort(obj)
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None
    if scope == "NotTerminating":
        return spec.get("activeDeadlineSeconds") is None
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        if operator == "In":
            return name in values
        if operator == "NotIn":
            return name not in values
        if operator == "Exists":
            return bool(name)
        return not name
    return False


def quota_matches(quota: dict[str, Any], obj: dict[str, Any], resource: str) -> bool:
    """Whether every scope and scopeSelector expression of ``quota`` matches ``obj``."""
    spec = quota.get("spec") or {}
    for scope in spec.get("scopes") or []:
        if not _scope_matches(scope, "Exists", [], obj, resource):
            return False
    for expr in (spec.get("scopeSelector") or {}).get("matchExpressions") or []:
        if not _scope_matches(expr.get("scopeName", ""), expr.get("operator", "Exists"), expr.get("values") or [],
                              obj, resource):
            return False
    return True


def _fmt(resource: str, value: Fraction) -> str:
    return quantity.format(value, binary=any(resource.endswith(b) for b in _BINARY))


def _list(items: Usage) -> str:
    return ",".join(f"{k}={_fmt(k, v)}" for k, v in sorted(items.items()))


class ResourceQuota:
    """The validating ResourceQuota plugin (the last one to run)."""

    name = "ResourceQuota"

    def __init__(self, informers: Informers):
        self.informers = informers
        self.cache = informers.cache("", "resourcequotas")

    def handles(self, operation: str) -> bool:
        """CREATE, UPDATE and DELETE."""
        return operation in (CREATE, UPDATE, DELETE)

    async def validate(self, request: AdmissionRequest) -> None:
        """Charge the request's usage to every matching quota; raises 403 when a quota would be exceeded."""
        res = request.resource
        if not request.namespace or request.subresource not in ("",) or request.kind != res.kind:
            return
        await self.cache.wait_synced(min(request.timeout, 5.0))
        if not self.cache.list(request.namespace):
            return
        new = usage(request.object, res.group, res.resource) if request.operation != DELETE else {}
        old = usage(request.old_object, res.group, res.resource) if request.operation != CREATE else {}
        delta = {k: new.get(k, Fraction(0)) - old.get(k, Fraction(0)) for k in set(new) | set(old)}
        subject = request.object if request.object is not None else (request.old_object or {})
        charged: list[tuple[str, Usage]] = []
        try:
            for quota in self.cache.list(request.namespace):
                name = quota["metadata"]["name"]
                if not quota_matches(quota, subject, res.resource):
                    continue
                hard = (quota.get("spec") or {}).get("hard") or {}
                self._must_specify(name, hard, request)
                relevant = {k: v for k, v in delta.items() if k in hard and v != 0}
                if not relevant:
                    continue
                await self._charge(name, relevant, request)
                charged.append((name, relevant))
        except errors.StatusError:
            for name, amount in charged:  # refund what earlier quotas took
                try:
                    await self._charge(name, {k: -v for k, v in amount.items()}, request, check=False)
                except errors.StatusError as exc:
                    log.warning("could not refund quota %s/%s: %s", request.namespace, name, exc.message)
            raise

    @staticmethod
    def _must_specify(name: str, hard: dict[str, Any], request: AdmissionRequest) -> None:
        res = request.resource
        if res.group or res.resource != "pods" or request.operation != CREATE or request.object is None:
            return
        missing: list[str] = []
        spec = request.object.get("spec") or {}
        for constrained in sorted(hard):
            which, _, compute = constrained.partition(".")
            if which not in ("requests", "limits") or compute not in ("cpu", "memory"):
                continue
            lacking = [c.get("name", "") for c in _containers(spec)
                       if compute not in (((c.get("resources") or {}).get(which)) or {})]
            if lacking:
                missing.append(f"{constrained} for: {','.join(lacking)}")
        if missing:
            raise errors.forbidden("pods", request.name, f"failed quota: {name}: must specify {'; '.join(missing)}")

    async def _charge(self, name: str, amount: Usage, request: AdmissionRequest, check: bool = True) -> None:
        """Add ``amount`` to quota ``name``'s status.used with a conditional update, retrying on Conflict."""
        ns = request.namespace
        for attempt in range(MAX_RETRIES):
            quota, revision = await self.informers.get("", "resourcequotas", ns, name, request.timeout)
            if quota is None:
                return
            spec_hard = (quota.get("spec") or {}).get("hard") or {}
            status = quota.setdefault("status", {})
            used = dict(status.get("used") or {})
            missing = [k for k in spec_hard if k not in used]
            if missing:
                used.update(await self._recount(missing, quota, request))
            hard = {k: _q(v) for k, v in spec_hard.items()}
            current = {k: _q(used.get(k, 0)) for k in amount}
            after = {k: max(current[k] + v, Fraction(0)) for k, v in amount.items()}
            if check:
                exceeded = [k for k, v in amount.items() if v > 0 and k in hard and after[k] > hard[k]]
                if exceeded:
                    raise errors.forbidden(
                        request.resource.resource, request.name,
                        f"exceeded quota: {name}, requested: {_list({k: amount[k] for k in exceeded})}, "
                        f"used: {_list({k: current[k] for k in exceeded})}, "
                        f"limited: {_list({k: hard[k] for k in exceeded})}", request.resource.group)
            if request.dry_run:
                return
            for k, v in after.items():
                used[k] = _fmt(k, v)
            status["used"] = used
            status["hard"] = dict(spec_hard)
            try:
                await self.informers.update("", "resourcequotas", quota, revision, request.timeout)
                return
            except errors.StatusError as err:
                if err.code != 409:
                    raise
                await asyncio.sleep(0.001 * attempt)
        raise errors.StatusError(409, "Conflict", f"Operation cannot be fulfilled on resourcequotas \"{name}\": "
                                 "too many concurrent quota updates, please retry")

    async def _recount(self, resources: list[str], quota: dict[str, Any], request: AdmissionRequest
                       ) -> dict[str, str]:
        """Usage of ``resources`` by the namespace's existing objects (what the quota controller would compute)."""
        totals = {k: Fraction(0) for k in resources}
        wanted: set[tuple[str, str]] = set()
        for k in resources:
            if k.startswith("count/"):
                name = k[len("count/"):]
                res, _, group = name.partition(".")
                wanted.add((group, res))
            elif k in _LEGACY_COUNTS:
                wanted.add(("", k))
            elif k.startswith("services."):
                wanted.add(("", "services"))
            elif "storage" in k or k == "persistentvolumeclaims":
                wanted.add(("", "persistentvolumeclaims"))
            else:
                wanted.add(("", "pods"))
        for group, res in sorted(wanted):
            try:
                objects = await self.informers.list_live(group, res, request.namespace, request.timeout)
            except errors.StatusError as err:
                if err.code == 404:
                    continue
                raise
            for obj in objects:
                if not quota_matches(quota, obj, res):
                    continue
                for k, v in usage(obj, group, res).items():
                    if k in totals:
                        totals[k] += v
        return {k: _fmt(k, v) for k, v in totals.items()}

