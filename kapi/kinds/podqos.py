"""A Pod's QoS class (kube's qos.ComputePodQOS), shared by the Pod strategy and the ``pods/resize`` rules."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kapi import quantity
from kapi.kinds.base import Obj


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


QOS_RESOURCES = ("cpu", "memory")  # qos.supportedQoSComputeResources


def _positive_quantities(resources: Any) -> dict[str, Fraction]:
    out: dict[str, Fraction] = {}
    for name, raw in _dict(resources).items():
        if name not in QOS_RESOURCES:
            continue
        try:
            value = quantity.parse(raw)
        except ValueError:
            continue
        if value > 0:
            out[name] = value
    return out


def pod_qos_class(spec: Obj) -> str:
    """qos.ComputePodQOS of a defaulted PodSpec: BestEffort, Burstable or Guaranteed.

    Only cpu and memory count, and only positive quantities. With pod-level ``resources`` (PodLevelResources)
    those decide; else the containers' and init containers' (ephemeral containers have none), summed per
    resource. No requests and no limits: BestEffort. Guaranteed: every container (or the pod) limits both
    cpu and memory and the requests equal the limits resource by resource; else Burstable.
    """
    requests: dict[str, Fraction] = {}
    limits: dict[str, Fraction] = {}
    guaranteed = True
    pod_level = spec.get("resources")
    holders = [pod_level] if isinstance(pod_level, dict) else [
        _dict(c).get("resources") for key in ("containers", "initContainers") for c in _list(spec.get(key))]
    for resources in holders:
        resources = _dict(resources)
        for name, value in _positive_quantities(resources.get("requests")).items():
            requests[name] = requests.get(name, Fraction(0)) + value
        found = _positive_quantities(resources.get("limits"))
        for name, value in found.items():
            limits[name] = limits.get(name, Fraction(0)) + value
        if resources is pod_level and not _dict(pod_level).get("limits"):
            continue  # pod-level requests alone: kube checks the limits only when some are given
        if not all(name in found for name in QOS_RESOURCES):
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(limits.get(name) == value for name, value in requests.items()) \
            and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
