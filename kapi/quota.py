"""What an object charges against a ResourceQuota: shared by the ResourceQuota admission plugin and the
quota controller (kube's ``pkg/quota/v1/evaluator/core`` and ``pkg/quota/v1/generic``; "Resource Quotas").

- usage: object counts (``pods``, ``services``, ``configmaps``,
  ``secrets``, ``persistentvolumeclaims``, ``replicationcontrollers``,
  ``resourcequotas`` and ``count/<resource>[.<group>]`` for anything),
  Pod compute (``requests.cpu|memory|ephemeral-storage``, ``cpu``,
  ``memory``, ``limits.*``; terminal Pods use nothing), Services
  (``services.loadbalancers``, ``services.nodeports``), PVC storage
  (``requests.storage``, ``<class>.storageclass.storage.k8s.io/...``).
- scopes: BestEffort, NotBestEffort, Terminating, NotTerminating,
  PriorityClass (``scopeSelector``), CrossNamespacePodAffinity (never).

Usages are exact Fractions of the resource's unit (cores, bytes, objects).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from kapi import quantity

LEGACY_COUNTS = {"pods", "services", "configmaps", "secrets", "persistentvolumeclaims", "replicationcontrollers",
                  "resourcequotas"}
COMPUTE = ("cpu", "memory", "ephemeral-storage")
BINARY_SUFFIXED = ("memory", "storage", "ephemeral-storage")
Usage = dict[str, Fraction]


def count_name(group: str, resource: str) -> str:
    """``count/<resource>`` for the core group, else ``count/<resource>.<group>``."""
    return f"count/{resource}" if not group else f"count/{resource}.{group}"


def quantity_or_zero(value: Any) -> Fraction:
    """A Quantity as a Fraction; 0 when it does not parse (usage never fails on a bad stored value)."""
    try:
        return quantity.parse(value)
    except ValueError:
        return Fraction(0)


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The (dict) containers of a pod spec, init containers excluded."""
    return [c for c in spec.get("containers") or [] if isinstance(c, dict)]


def _resource_list(value: Any) -> Usage:
    return {k: quantity_or_zero(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _add(into: Usage, other: Usage) -> None:
    for k, v in other.items():
        into[k] = into.get(k, Fraction(0)) + v


def _maximum(into: Usage, other: Usage) -> None:
    for k, v in other.items():
        if k not in into or v > into[k]:
            into[k] = v


def _resize_infeasible(pod: dict[str, Any]) -> bool:
    """IsPodResizeInfeasible: the first ``PodResizePending`` condition has reason ``Infeasible``."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "PodResizePending":
            return cond.get("reason") == "Infeasible"
    return False


def _container_resources(pod: dict[str, Any], container: dict[str, Any], which: str,
                         statuses: dict[str, dict[str, Any]] | None) -> Usage:
    """A container's ``which`` (requests or limits) as PodRequests/PodLimits count it with UseStatusResources
    (InPlacePodVerticalScaling): with a status ``resources``, determineContainerReqs is the largest of the spec's,
    the status's and ``allocatedResources`` (only the status's and allocated when the resize is Infeasible);
    determineContainerLimits the larger of the spec's and the status's (only the status's when Infeasible)."""
    spec = _resource_list((container.get("resources") or {}).get(which))
    status = statuses.get(container.get("name", "")) if statuses is not None else None
    if not status or not isinstance(status.get("resources"), dict):
        return spec
    actual = _resource_list(status["resources"].get(which))
    out = {} if _resize_infeasible(pod) else dict(spec)
    _maximum(out, actual)
    if which == "requests":
        _maximum(out, _resource_list(status.get("allocatedResources")))
    return out


POD_LEVEL = ("cpu", "memory")  # resourcehelper.IsSupportedPodLevelResource, with hugepages-*


def pod_resources(pod: dict[str, Any], which: str, *, use_status: bool = True, overhead: bool = True) -> Usage:
    """resourcehelper.PodRequests / PodLimits (component-helpers ``resource/helpers.go``) as the pod evaluator calls
    them (UseStatusResources, InPlacePodVerticalScaling GA): regular and sidecar (``restartPolicy: Always``) init
    containers summed, each other init container with the sidecars before it, the larger of the two per resource;
    the pod-level ``spec.resources`` override (cpu, memory, hugepages-*; PodLevelResources); ``spec.overhead``
    added to every request and to every non-zero limit. Quantities as exact Fractions. ``use_status=False,
    overhead=False`` is the LimitRanger's spec-only podRequests/podLimits (``plugin/pkg/admission/limitranger``)."""
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    statuses = {s.get("name", ""): s for key in ("containerStatuses", "initContainerStatuses")
                for s in status.get(key) or [] if isinstance(s, dict)} if use_status else None
    total: Usage = {}
    for c in containers(spec):
        _add(total, _container_resources(pod, c, which, statuses))
    sidecars: Usage = {}
    init: Usage = {}
    for c in spec.get("initContainers") or []:
        if not isinstance(c, dict):
            continue
        if c.get("restartPolicy") == "Always":
            own = _container_resources(pod, c, which, statuses)
            _add(total, own)
            _add(sidecars, own)
            _maximum(init, sidecars)
        else:
            own = _resource_list((c.get("resources") or {}).get(which))
            _add(own, sidecars)
            _maximum(init, own)
    _maximum(total, init)
    for k, v in _resource_list((spec.get("resources") or {}).get(which)).items():
        if k in POD_LEVEL or k.startswith("hugepages-"):
            total[k] = v
    for k, v in (_resource_list(spec.get("overhead")) if overhead else {}).items():
        if which == "requests":
            total[k] = total.get(k, Fraction(0)) + v
        elif total.get(k):
            total[k] += v
    return total


def pod_compute(pod: dict[str, Any]) -> Usage:
    """podComputeUsageHelper over :func:`pod_resources`: ``requests.<r>`` and ``limits.<r>`` for every resource,
    and the bare ``cpu``, ``memory``, ``ephemeral-storage`` and ``hugepages-*`` names for their requests."""
    out: Usage = {}
    for which in ("requests", "limits"):
        for k, v in pod_resources(pod, which).items():
            out[f"{which}.{k}"] = v
            if which == "requests" and (k in COMPUTE or k.startswith("hugepages-")):
                out[k] = v
    return out


def usage(obj: dict[str, Any] | None, group: str, resource: str) -> Usage:
    """Everything ``obj`` counts against quota."""
    if obj is None:
        return {}
    out: Usage = {count_name(group, resource): Fraction(1)}
    if not group and resource in LEGACY_COUNTS:
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
        storage = quantity_or_zero(((spec.get("resources") or {}).get("requests") or {}).get("storage", 0))
        out["requests.storage"] = storage
        cls = spec.get("storageClassName")
        if cls:
            out[f"{cls}.storageclass.storage.k8s.io/requests.storage"] = storage
            out[f"{cls}.storageclass.storage.k8s.io/persistentvolumeclaims"] = Fraction(1)
    return out


def _best_effort(pod: dict[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    for c in [*containers(spec), *(spec.get("initContainers") or [])]:
        res = (c or {}).get("resources") or {}
        if any(k in COMPUTE[:2] for k in {**(res.get("requests") or {}), **(res.get("limits") or {})}):
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


def counted_resources(names: Iterable[str]) -> set[tuple[str, str]]:
    """(group, resource) pairs whose objects the quota resource names ``names`` count (pods for compute names)."""
    out: set[tuple[str, str]] = set()
    for name in names:
        if name.startswith("count/"):
            res, _, group = name[len("count/"):].partition(".")
            out.add((group, res))
        elif name in LEGACY_COUNTS:
            out.add(("", name))
        elif name.startswith("services."):
            out.add(("", "services"))
        elif "storage" in name or name == "persistentvolumeclaims":
            out.add(("", "persistentvolumeclaims"))
        else:
            out.add(("", "pods"))
    return out


def add_usage(totals: Usage, quota: dict[str, Any], objects: Iterable[dict[str, Any]], group: str,
              resource: str) -> None:
    """Add to ``totals`` (only the names it already has) the usage of every object ``quota``'s scopes match."""
    for obj in objects:
        if not quota_matches(quota, obj, resource):
            continue
        for name, value in usage(obj, group, resource).items():
            if name in totals:
                totals[name] += value


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


def format_usage(resource: str, value: Fraction) -> str:
    """A usage as the API prints it in quota status (binary suffixes for memory and storage)."""
    return quantity.format(value, binary=any(resource.endswith(b) for b in BINARY_SUFFIXED))
