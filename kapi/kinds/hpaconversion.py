"""HorizontalPodAutoscaler autoscaling/v1 <-> v2 conversion, as kube's ``pkg/apis/autoscaling/v1/conversion.go``.

kube stores HPAs once, at autoscaling/v2: v1 ``spec.targetCPUUtilizationPercentage``
<-> a v2 ``Resource`` metric for ``cpu`` with an ``Utilization`` target
(status likewise); everything v1 cannot hold travels in the round-trip
annotations of the v1 object, in the autoscaling/v1 (v2beta1-shaped) metric
types, and is read back and dropped on the way to v2, so v2 -> v1 -> v2 is
lossless. Defaulting and validation are :mod:`kapi.kinds.autoscaling`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
KIND = "HorizontalPodAutoscaler"

METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP_ANNOTATIONS = (METRIC_SPECS_ANNOTATION, METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION,
                          BEHAVIOR_ANNOTATION)

Obj = dict[str, Any]


def _put(out: Obj, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


# ------------------------------------------------------------ metric types: v2 <-> autoscaling/v1 annotations

def _target_ref(ref: Any) -> Obj:
    ref = _dict(ref)
    out: Obj = {"kind": ref.get("kind", ""), "name": ref.get("name", "")}
    _put(out, "apiVersion", ref.get("apiVersion"))
    return out


def _metric_id(metric: Any) -> tuple[str, Any]:
    metric = _dict(metric)
    return str(metric.get("name") or ""), metric.get("selector")


def _spec_to_v1(metric: Obj) -> Obj:
    """A v2 MetricSpec as the autoscaling/v1 MetricSpec (Convert_autoscaling_MetricSpec_To_v1_MetricSpec)."""
    kind = metric.get("type")
    out: Obj = {"type": kind}
    if isinstance(metric.get("object"), dict):
        src = metric["object"]
        target = _dict(src.get("target"))
        name, selector = _metric_id(src.get("metric"))
        v1: Obj = {"target": _target_ref(src.get("describedObject")), "metricName": name,
                   "targetValue": target.get("value") or "0"}
        _put(v1, "selector", selector)
        _put(v1, "averageValue", target.get("averageValue"))
        out["object"] = v1
    if isinstance(metric.get("pods"), dict):
        src = metric["pods"]
        name, selector = _metric_id(src.get("metric"))
        v1 = {"metricName": name, "targetAverageValue": _dict(src.get("target")).get("averageValue") or "0"}
        _put(v1, "selector", selector)
        out["pods"] = v1
    for key in ("resource", "containerResource"):
        if isinstance(metric.get(key), dict):
            src = metric[key]
            target = _dict(src.get("target"))
            v1 = {"name": src.get("name", "")}
            _put(v1, "targetAverageUtilization", target.get("averageUtilization"))
            _put(v1, "targetAverageValue", target.get("averageValue"))
            if key == "containerResource":
                v1["container"] = src.get("container", "")
            out[key] = v1
    if isinstance(metric.get("external"), dict):
        src = metric["external"]
        target = _dict(src.get("target"))
        name, selector = _metric_id(src.get("metric"))
        v1 = {"metricName": name}
        _put(v1, "metricSelector", selector)
        _put(v1, "targetValue", target.get("value"))
        _put(v1, "targetAverageValue", target.get("averageValue"))
        out["external"] = v1
    return out


def _metric(name: Any, selector: Any) -> Obj:
    out: Obj = {"name": name or ""}
    _put(out, "selector", selector)
    return out


def _spec_from_v1(metric: Obj) -> Obj:
    """An autoscaling/v1 MetricSpec as v2 (Convert_v1_MetricSpec_To_autoscaling_MetricSpec)."""
    out: Obj = {"type": metric.get("type")}
    if isinstance(metric.get("object"), dict):
        src = metric["object"]
        target: Obj = {"type": "Value" if src.get("averageValue") is None else "AverageValue",
                       "value": src.get("targetValue") or "0"}
        _put(target, "averageValue", src.get("averageValue"))
        out["object"] = {"describedObject": _target_ref(src.get("target")),
                         "metric": _metric(src.get("metricName"), src.get("selector")), "target": target}
    if isinstance(metric.get("pods"), dict):
        src = metric["pods"]
        out["pods"] = {"metric": _metric(src.get("metricName"), src.get("selector")),
                       "target": {"type": "AverageValue", "averageValue": src.get("targetAverageValue") or "0"}}
    for key in ("resource", "containerResource"):
        if isinstance(metric.get(key), dict):
            src = metric[key]
            utilization = src.get("targetAverageUtilization")
            target = {"type": "AverageValue" if utilization is None else "Utilization"}
            _put(target, "averageUtilization", utilization)
            _put(target, "averageValue", src.get("targetAverageValue"))
            v2: Obj = {"name": src.get("name", ""), "target": target}
            if key == "containerResource":
                v2["container"] = src.get("container", "")
            out[key] = v2
    if isinstance(metric.get("external"), dict):
        src = metric["external"]
        target = {"type": "AverageValue" if src.get("targetValue") is None else "Value"}
        _put(target, "value", src.get("targetValue"))
        _put(target, "averageValue", src.get("targetAverageValue"))
        out["external"] = {"metric": _metric(src.get("metricName"), src.get("metricSelector")), "target": target}
    return out


def _status_to_v1(metric: Obj) -> Obj:
    """A v2 MetricStatus as the autoscaling/v1 MetricStatus."""
    out: Obj = {"type": metric.get("type")}
    if isinstance(metric.get("object"), dict):
        src = metric["object"]
        current = _dict(src.get("current"))
        name, selector = _metric_id(src.get("metric"))
        v1: Obj = {"target": _target_ref(src.get("describedObject")), "metricName": name,
                   "currentValue": current.get("value") or "0"}
        _put(v1, "selector", selector)
        _put(v1, "averageValue", current.get("averageValue"))
        out["object"] = v1
    if isinstance(metric.get("pods"), dict):
        src = metric["pods"]
        name, selector = _metric_id(src.get("metric"))
        v1 = {"metricName": name, "currentAverageValue": _dict(src.get("current")).get("averageValue") or "0"}
        _put(v1, "selector", selector)
        out["pods"] = v1
    for key in ("resource", "containerResource"):
        if isinstance(metric.get(key), dict):
            src = metric[key]
            current = _dict(src.get("current"))
            v1 = {"name": src.get("name", ""), "currentAverageValue": current.get("averageValue") or "0"}
            _put(v1, "currentAverageUtilization", current.get("averageUtilization"))
            if key == "containerResource":
                v1["container"] = src.get("container", "")
            out[key] = v1
    if isinstance(metric.get("external"), dict):
        src = metric["external"]
        current = _dict(src.get("current"))
        name, selector = _metric_id(src.get("metric"))
        v1 = {"metricName": name, "currentValue": current.get("value") or "0"}
        _put(v1, "metricSelector", selector)
        _put(v1, "currentAverageValue", current.get("averageValue"))
        out["external"] = v1
    return out


def _status_from_v1(metric: Obj) -> Obj:
    """An autoscaling/v1 MetricStatus as v2."""
    out: Obj = {"type": metric.get("type")}
    if isinstance(metric.get("object"), dict):
        src = metric["object"]
        current: Obj = {"value": src.get("currentValue") or "0"}
        _put(current, "averageValue", src.get("averageValue"))
        out["object"] = {"describedObject": _target_ref(src.get("target")),
                         "metric": _metric(src.get("metricName"), src.get("selector")), "current": current}
    if isinstance(metric.get("pods"), dict):
        src = metric["pods"]
        out["pods"] = {"metric": _metric(src.get("metricName"), src.get("selector")),
                       "current": {"averageValue": src.get("currentAverageValue") or "0"}}
    for key in ("resource", "containerResource"):
        if isinstance(metric.get(key), dict):
            src = metric[key]
            current = {"averageValue": src.get("currentAverageValue") or "0"}
            _put(current, "averageUtilization", src.get("currentAverageUtilization"))
            v2: Obj = {"name": src.get("name", ""), "current": current}
            if key == "containerResource":
                v2["container"] = src.get("container", "")
            out[key] = v2
    if isinstance(metric.get("external"), dict):
        src = metric["external"]
        current = {"value": src.get("currentValue") or "0"}
        _put(current, "averageValue", src.get("currentAverageValue"))
        out["external"] = {"metric": _metric(src.get("metricName"), src.get("metricSelector")),
                           "current": current}
    return out


# The behavior annotation holds the internal Go type, marshalled with its Go field names.
_RULES_FIELDS = ("StabilizationWindowSeconds", "SelectPolicy", "Policies", "Tolerance")
_POLICY_FIELDS = ("Type", "Value", "PeriodSeconds")


def _lower(name: str) -> str:
    return name[0].lower() + name[1:]


def _behavior_to_annotation(behavior: Obj) -> str:
    def rules(value: Any) -> Any:
        if not isinstance(value, dict):
            return None
        out: Obj = {f: value.get(_lower(f)) for f in _RULES_FIELDS}
        if isinstance(out["Policies"], list):
            out["Policies"] = [{f: _dict(p).get(_lower(f)) for f in _POLICY_FIELDS} for p in out["Policies"]]
        return out

    return json.dumps({"ScaleUp": rules(behavior.get("scaleUp")), "ScaleDown": rules(behavior.get("scaleDown"))},
                      separators=(",", ":"))


def _fold_keys(value: Any, names: tuple[str, ...]) -> Obj:
    """Go's case-insensitive field matching: keys of ``value`` matched to the JSON names ``names``; nulls dropped."""
    by_lower = {n.lower(): n for n in names}
    out: Obj = {}
    for key, item in _dict(value).items():
        name = by_lower.get(str(key).lower())
        if name is not None and item is not None:
            out[name] = item
    return out


def _behavior_from_annotation(text: str) -> Obj | None:
    try:
        raw = json.loads(text)
    except ValueError:
        return None
    behavior = _fold_keys(raw, ("scaleUp", "scaleDown"))
    out: Obj = {}
    for key, value in behavior.items():
        rules = _fold_keys(value, ("stabilizationWindowSeconds", "selectPolicy", "policies", "tolerance"))
        if isinstance(rules.get("policies"), list):
            rules["policies"] = [_fold_keys(p, ("type", "value", "periodSeconds")) for p in rules["policies"]]
        out[key] = rules
    return out or None


def _json_list(text: Any) -> list[Obj] | None:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else None


def _is_cpu_utilization(metric: Any) -> bool:
    metric = _dict(metric)
    resource = _dict(metric.get("resource"))
    return (metric.get("type") == "Resource" and resource.get("name") == "cpu"
            and _dict(resource.get("target")).get("averageUtilization") is not None)


def _drop_round_trip(meta: Obj) -> None:
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        annotations = {k: v for k, v in annotations.items() if k not in ROUND_TRIP_ANNOTATIONS}
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)


# ------------------------------------------------------------ conversion

def to_v1(obj: Obj) -> Obj:
    """A v2 HPA as autoscaling/v1 (a new dict); see the module doc."""
    out = copy.deepcopy(obj)
    out["apiVersion"], out["kind"] = V1, KIND
    meta = _dict(out.get("metadata"))
    out["metadata"] = meta
    _drop_round_trip(meta)
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    metrics = [m for m in _list(spec.get("metrics")) if isinstance(m, dict)]
    v1_spec: Obj = {"scaleTargetRef": _target_ref(spec.get("scaleTargetRef"))}
    _put(v1_spec, "minReplicas", spec.get("minReplicas"))
    v1_spec["maxReplicas"] = spec.get("maxReplicas", 0)
    for metric in metrics:
        resource = _dict(metric.get("resource"))
        if metric.get("type") == "Resource" and resource.get("name") == "cpu":
            _put(v1_spec, "targetCPUUtilizationPercentage", _dict(resource.get("target")).get("averageUtilization"))
            break
    out["spec"] = v1_spec
    annotations: dict[str, str] = {}
    others = [_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRIC_SPECS_ANNOTATION] = json.dumps(others, separators=(",", ":"))
    current = [m for m in _list(status.get("currentMetrics")) if isinstance(m, dict)]
    if current:
        annotations[METRIC_STATUSES_ANNOTATION] = json.dumps([_status_to_v1(m) for m in current],
                                                             separators=(",", ":"))
    if isinstance(spec.get("behavior"), dict):
        annotations[BEHAVIOR_ANNOTATION] = _behavior_to_annotation(spec["behavior"])
    conditions = _list(status.get("conditions"))
    if conditions:
        annotations[CONDITIONS_ANNOTATION] = json.dumps(conditions, separators=(",", ":"))
    if annotations:
        meta["annotations"] = {**_dict(meta.get("annotations")), **annotations}
    if "status" in obj:
        v1_status: Obj = {}
        for key in ("observedGeneration", "lastScaleTime"):
            _put(v1_status, key, status.get(key))
        v1_status["currentReplicas"] = status.get("currentReplicas", 0)
        v1_status["desiredReplicas"] = status.get("desiredReplicas", 0)
        for metric in current:
            resource = _dict(metric.get("resource"))
            if metric.get("type") == "Resource" and resource.get("name") == "cpu":
                _put(v1_status, "currentCPUUtilizationPercentage",
                     _dict(resource.get("current")).get("averageUtilization"))
        out["status"] = v1_status
    return out


def to_v2(obj: Obj) -> Obj:
    """An autoscaling/v1 HPA as v2 (a new dict), the round-trip annotations read back and dropped."""
    out = copy.deepcopy(obj)
    out["apiVersion"], out["kind"] = V2, KIND
    meta = _dict(out.get("metadata"))
    out["metadata"] = meta
    annotations = _dict(meta.get("annotations"))
    spec, status = _dict(obj.get("spec")), _dict(obj.get("status"))
    v2_spec: Obj = {"scaleTargetRef": _target_ref(spec.get("scaleTargetRef"))}
    _put(v2_spec, "minReplicas", spec.get("minReplicas"))
    v2_spec["maxReplicas"] = spec.get("maxReplicas", 0)
    metrics: list[Obj] = []
    others = _json_list(annotations.get(METRIC_SPECS_ANNOTATION))
    if others is not None:
        metrics.extend(_spec_from_v1(m) for m in others)
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.append({"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": spec["targetCPUUtilizationPercentage"]}}})
    if metrics:
        v2_spec["metrics"] = metrics
    if BEHAVIOR_ANNOTATION in annotations:
        behavior = _behavior_from_annotation(str(annotations[BEHAVIOR_ANNOTATION]))
        if behavior:
            v2_spec["behavior"] = behavior
    out["spec"] = v2_spec
    if "status" in obj or METRIC_STATUSES_ANNOTATION in annotations or CONDITIONS_ANNOTATION in annotations:
        v2_status: Obj = {}
        for key in ("observedGeneration", "lastScaleTime"):
            _put(v2_status, key, status.get(key))
        if status.get("currentReplicas"):  # v2's CurrentReplicas is omitempty, v1's is not
            v2_status["currentReplicas"] = status["currentReplicas"]
        v2_status["desiredReplicas"] = status.get("desiredReplicas", 0)
        current = _json_list(annotations.get(METRIC_STATUSES_ANNOTATION))
        if current is not None:
            v2_status["currentMetrics"] = [_status_from_v1(m) for m in current]
        elif status.get("currentCPUUtilizationPercentage") is not None:
            v2_status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
        else:  # v2's CurrentMetrics has no omitempty: the nil slice is written null
            v2_status["currentMetrics"] = None
        conditions = _json_list(annotations.get(CONDITIONS_ANNOTATION))
        if conditions:
            v2_status["conditions"] = conditions
        out["status"] = v2_status
    _drop_round_trip(meta)
    return out
