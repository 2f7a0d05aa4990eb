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


def pod_compute(pod: dict[str, Any]) -> Usage:
    """requests/limits of a Pod: max(sum of containers, each init container) per resource (kube PodRequests)."""
    spec = pod.get("spec") or {}
    out: Usage = {}
    for which in ("requests", "limits"):
        total: Usage = {}
        for c in containers(spec):
            for k, v in ((c.get("resources") or {}).get(which) or {}).items():
                total[k] = total.get(k, Fraction(0)) + quantity_or_zero(v)
        for c in spec.get("initContainers") or []:
            for k, v in (((c or {}).get("resources") or {}).get(which) or {}).items():
                total[k] = max(total.get(k, Fraction(0)), quantity_or_zero(v))
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
