"""The autoscaling group's HorizontalPodAutoscaler: v1 <-> v2 conversion, defaults, strategy and validation.

kube-apiserver stores HPAs once, at autoscaling/v2, and serves them through
both versions (``pkg/apis/autoscaling/v1/conversion.go``):

- v1 ``spec.targetCPUUtilizationPercentage`` <-> a v2 ``Resource`` metric
  for ``cpu`` with an ``Utilization`` target; v1 ``status.currentCPUUtilizationPercentage``
  <-> the v2 current ``cpu`` utilization.
- Everything v1 cannot hold travels in annotations of the v1 object, in
  the autoscaling/v1 (v2beta1-shaped) metric types: the other metric specs
  (``autoscaling.alpha.kubernetes.io/metrics``), all current metrics
  (``.../current-metrics``), the conditions (``.../conditions``) and the
  behavior (``.../behavior``, the internal type's Go field names, which
  Go's case-insensitive JSON decoder reads back). Converting to v2 reads
  them back and drops them, so a v2 -> v1 -> v2 round trip is lossless
  (the CPU utilization metric moves to the end of ``spec.metrics``, as in kube).

Defaulting (``pkg/apis/autoscaling/v2/defaults.go``): ``minReplicas`` 1,
no metrics -> a CPU utilization target of 80%, and a ``behavior`` that is
present gets kube's scale-up/scale-down rules for its missing parts; v1
defaults ``minReplicas`` only. Validation is
``pkg/apis/autoscaling/validation`` on the v2 form (a v1 object is
converted first, so field paths are the v2 ones, as kube's internal ones).
The strategy (``pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go``)
resets the status on create; a ``status`` update keeps replica counts not
negative. :func:`format_targets` is kubectl's TARGETS column.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.kinds.base import Strategy, register
from kapi.kinds.fields import not_supported
from kapi.objectmeta import invalid, required
from kapi.validation import is_dns1123_label, is_valid_path_segment_name
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

GROUP = "autoscaling"
V1 = "autoscaling/v1"
V2 = "autoscaling/v2"
KIND = "HorizontalPodAutoscaler"

METRIC_SPECS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
METRIC_STATUSES_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP_ANNOTATIONS = (METRIC_SPECS_ANNOTATION, METRIC_STATUSES_ANNOTATION, CONDITIONS_ANNOTATION,
                          BEHAVIOR_ANNOTATION)

DEFAULT_CPU_UTILIZATION = 80  # percent, autoscaling.DefaultCPUUtilization
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")

Obj = dict[str, Any]


def _put(out: Obj, key: str, value: Any) -> None:
    if value is not None:
        out[key] = value


# ------------------------------------------------------------ defaults

def _scale_up_rules() -> Obj:
    return {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _scale_down_rules() -> Obj:
    return {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def _fill_rules(given: Any, defaults: Obj) -> Obj:
    """copyHPAScalingRules: the given rules' set fields over kube's defaults."""
    for key, value in _dict(given).items():
        if value is not None:
            defaults[key] = value
    return defaults


def default_v2(obj: Obj) -> None:
    """SetDefaults_HorizontalPodAutoscaler (v2), in place: minReplicas 1, a CPU 80% metric, behavior's gaps."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1
    if not spec.get("metrics"):
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": DEFAULT_CPU_UTILIZATION}}}]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        behavior["scaleUp"] = _fill_rules(behavior.get("scaleUp"), _scale_up_rules())
        behavior["scaleDown"] = _fill_rules(behavior.get("scaleDown"), _scale_down_rules())


def default_v1(obj: Obj) -> None:
    """SetDefaults_HorizontalPodAutoscaler (v1), in place: minReplicas 1."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    if spec.get("minReplicas") is None:
        spec["minReplicas"] = 1


def apply_defaults(obj: Obj) -> None:
    """Default an HPA of either version (by its ``apiVersion``; v2 when absent)."""
    (default_v1 if obj.get("apiVersion") == V1 else default_v2)(obj)


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
        v2_status["currentReplicas"] = status.get("currentReplicas", 0)
        v2_status["desiredReplicas"] = status.get("desiredReplicas", 0)
        current = _json_list(annotations.get(METRIC_STATUSES_ANNOTATION))
        if current is not None:
            v2_status["currentMetrics"] = [_status_from_v1(m) for m in current]
        elif status.get("currentCPUUtilizationPercentage") is not None:
            v2_status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": status["currentCPUUtilizationPercentage"]}}}]
        conditions = _json_list(annotations.get(CONDITIONS_ANNOTATION))
        if conditions:
            v2_status["conditions"] = conditions
        out["status"] = v2_status
    _drop_round_trip(meta)
    return out


def convert(obj: Obj, desired: str) -> Obj:
    """``obj`` (either version) as ``desired`` (V1 or V2); already there -> unchanged. To v2 applies v2 defaults,
    as kube's decoding of the stored object does."""
    if obj.get("apiVersion") == desired:
        return obj
    if desired == V1:
        return to_v1(obj)
    out = to_v2(obj)
    default_v2(out)
    return out


# ------------------------------------------------------------ validation (v2 form)

def _path_segment(path: str, value: Any) -> list[Cause]:
    return [invalid(path, value, msg) for msg in is_valid_path_segment_name(str(value))]


def _cross_version_ref(ref: Any, path: str) -> list[Cause]:
    ref = _dict(ref)
    out: list[Cause] = []
    for key in ("kind", "name"):
        if not ref.get(key):
            out.append(required(f"{path}.{key}"))
        else:
            out.extend(_path_segment(f"{path}.{key}", ref[key]))
    return out


def _quantity_sign(value: Any) -> int:
    """The sign of a Quantity string (kapi.schema already rejected unparsable ones); 1 when it cannot tell."""
    text = str(value).strip()
    if text.startswith("-"):
        return -1
    digits = "".join(ch for ch in text.split("e")[0].split("E")[0] if ch.isdigit())
    return 0 if digits and set(digits) == {"0"} else 1


def _target(target: Any, path: str) -> list[Cause]:
    target = _dict(target)
    out: list[Cause] = []
    kind = target.get("type")
    if not kind:
        out.append(required(f"{path}.type", "must specify a metric target type"))
    if kind not in ("Utilization", "Value", "AverageValue"):
        out.append(invalid(f"{path}.type", kind or "", "must be either Utilization, Value, or AverageValue"))
    for key in ("value", "averageValue"):
        if target.get(key) is not None and _quantity_sign(target[key]) != 1:
            out.append(invalid(f"{path}.{key}", str(target[key]), "must be positive"))
    utilization = _int(target.get("averageUtilization"))
    if utilization is not None and utilization < 1:
        out.append(invalid(f"{path}.averageUtilization", utilization, "must be greater than 0"))
    return out


def _metric_identifier(metric: Any, path: str) -> list[Cause]:
    name = _dict(metric).get("name")
    if not name:
        return [required(f"{path}.name", "must specify a metric name")]
    return _path_segment(f"{path}.name", name)


def _source(kind: str, src: Obj, path: str) -> list[Cause]:
    target = _dict(src.get("target"))
    out: list[Cause] = []
    if kind == "object":
        out += _cross_version_ref(src.get("describedObject"), f"{path}.describedObject")
        out += _metric_identifier(src.get("metric"), f"{path}.metric")
        out += _target(target, f"{path}.target")
        if target.get("value") is None and target.get("averageValue") is None:
            out.append(required(f"{path}.target.averageValue", "must set either a target value or averageValue"))
    elif kind == "pods":
        out += _metric_identifier(src.get("metric"), f"{path}.metric")
        out += _target(target, f"{path}.target")
        if target.get("averageValue") is None:
            out.append(required(f"{path}.target.averageValue", "must specify a positive target averageValue"))
    elif kind == "external":
        out += _metric_identifier(src.get("metric"), f"{path}.metric")
        out += _target(target, f"{path}.target")
        if target.get("value") is None and target.get("averageValue") is None:
            out.append(required(f"{path}.target.averageValue",
                                "must set either a target value for metric or a per-pod target"))
        if target.get("value") is not None and target.get("averageValue") is not None:
            out.append(Cause("FieldValueForbidden", "Forbidden: may not set both a target value for metric and a "
                             "per-pod target", f"{path}.target.value"))
    else:  # resource, containerResource
        if not src.get("name"):
            out.append(required(f"{path}.name", "must specify a resource name"))
        if kind == "containerResource":
            container = src.get("container")
            if not container:
                out.append(required(f"{path}.container", "must specify a container"))
            else:
                out.extend(invalid(f"{path}.container", container, m) for m in is_dns1123_label(str(container)))
        out += _target(target, f"{path}.target")
        if target.get("averageUtilization") is None and target.get("averageValue") is None:
            out.append(required(f"{path}.target.averageUtilization",
                                "must set either a target raw value or a target utilization"))
        if target.get("averageUtilization") is not None and target.get("averageValue") is not None:
            out.append(Cause("FieldValueForbidden", "Forbidden: may not set both a target raw value and a target "
                             "utilization", f"{path}.target.averageValue"))
    return out


_SOURCE_FIELD = {"Object": "object", "Pods": "pods", "Resource": "resource", "External": "external",
                 "ContainerResource": "containerResource"}


def _metric_spec(metric: Obj, path: str) -> list[Cause]:
    out: list[Cause] = []
    kind = metric.get("type")
    if not kind:
        out.append(required(f"{path}.type", "must specify a metric source type"))
    present = [f for f in ("object", "pods", "resource", "external", "containerResource")
               if isinstance(metric.get(f), dict)]
    if present:
        out.extend(_source(present[0], metric[present[0]], f"{path}.{present[0]}"))
    expected = _SOURCE_FIELD.get(str(kind))
    if expected is None:
        out.append(not_supported(f"{path}.type", kind or "", METRIC_SOURCE_TYPES))
    elif expected not in present:
        out.append(required(f"{path}.{expected}", "must populate information for the given metric source"))
    if len(present) != 1:
        out.extend(Cause("FieldValueForbidden", "Forbidden: must populate the given metric source only",
                         f"{path}.{f}") for f in present if f != expected)
    return out


def _scaling_rules(rules: Any, path: str) -> list[Cause]:
    if not isinstance(rules, dict):
        return []
    out: list[Cause] = []
    window = _int(rules.get("stabilizationWindowSeconds"))
    if window is not None and window < 0:
        out.append(invalid(f"{path}.stabilizationWindowSeconds", window, "must be greater than or equal to zero"))
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        out.append(invalid(f"{path}.stabilizationWindowSeconds", window,
                           f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"))
    policy = rules.get("selectPolicy")
    if policy is not None and policy not in SELECT_POLICIES:
        out.append(not_supported(f"{path}.selectPolicy", policy, SELECT_POLICIES))
    policies = _list(rules.get("policies"))
    if not policies:
        out.append(required(f"{path}.policies", "must specify at least one Policy"))
    for i, item in enumerate(policies):
        item = _dict(item)
        ipath = f"{path}.policies[{i}]"
        if item.get("type") not in POLICY_TYPES:
            out.append(not_supported(f"{ipath}.type", item.get("type") or "", POLICY_TYPES))
        value, period = _int(item.get("value")) or 0, _int(item.get("periodSeconds")) or 0
        if value <= 0:
            out.append(invalid(f"{ipath}.value", value, "must be greater than zero"))
        if period <= 0:
            out.append(invalid(f"{ipath}.periodSeconds", period, "must be greater than zero"))
        if period > MAX_PERIOD_SECONDS:
            out.append(invalid(f"{ipath}.periodSeconds", period, f"must be less than or equal to {MAX_PERIOD_SECONDS}"))
    return out


def validate(obj: Obj) -> list[Cause]:
    """ValidateHorizontalPodAutoscaler of an HPA of either version (a v1 object is converted to v2 first)."""
    if obj.get("apiVersion") == V1:
        obj = to_v2(obj)
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    minimum = _int(spec.get("minReplicas"))
    maximum = _int(spec.get("maxReplicas")) or 0
    if minimum is not None and minimum < 1:
        out.append(invalid("spec.minReplicas", minimum, "must be greater than or equal to 1"))
    if maximum < 1:
        out.append(invalid("spec.maxReplicas", maximum, "must be greater than 0"))
    if minimum is not None and maximum < minimum:
        out.append(invalid("spec.maxReplicas", maximum, "must be greater than or equal to `minReplicas`"))
    out.extend(_cross_version_ref(spec.get("scaleTargetRef"), "spec.scaleTargetRef"))
    for i, metric in enumerate(_list(spec.get("metrics"))):
        out.extend(_metric_spec(_dict(metric), f"spec.metrics[{i}]"))
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        out.extend(_scaling_rules(behavior.get("scaleUp"), "spec.behavior.scaleUp"))
        out.extend(_scaling_rules(behavior.get("scaleDown"), "spec.behavior.scaleDown"))
    return out


def validate_status(obj: Obj) -> list[Cause]:
    """ValidateHorizontalPodAutoscalerStatusUpdate: currentReplicas and desiredReplicas are not negative."""
    status = _dict(obj.get("status"))
    out: list[Cause] = []
    for key in ("currentReplicas", "desiredReplicas"):
        value = _int(status.get(key))
        if value is not None and value < 0:
            out.append(invalid(f"status.{key}", value, "must be greater than or equal to 0"))
    return out


@register
class HorizontalPodAutoscalerStrategy(Strategy):
    """HorizontalPodAutoscaler of either served version (v1 objects are validated in their v2 form)."""

    group, kind = GROUP, KIND

    def default(self, obj: Obj) -> None:
        """v1 or v2 SetDefaults_HorizontalPodAutoscaler by the object's ``apiVersion`` (:func:`apply_defaults`)."""
        apply_defaults(obj)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate: the status is the controller's (``desiredReplicas`` 0)."""
        obj["status"] = {"desiredReplicas": 0}

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateHorizontalPodAutoscaler (:func:`validate`)."""
        return validate(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """The ``status`` subresource's ValidateHorizontalPodAutoscalerStatusUpdate (:func:`validate_status`)."""
        return validate_status(new) if subresource == "status" else []


# ------------------------------------------------------------ kubectl get columns

def _current(statuses: list[Any], i: int, kind: str) -> Obj | None:
    if len(statuses) > i and isinstance(statuses[i], dict) and isinstance(statuses[i].get(kind), dict):
        return _dict(statuses[i][kind].get("current"))
    return None


def format_targets(obj: Obj) -> str:
    """kube's formatHPAMetrics: the TARGETS column (``cpu: 10%/80%``, ``<unknown>``, ``+ N more...``)."""
    if obj.get("apiVersion") == V1:
        obj = to_v2(obj)
    specs = _list(_dict(obj.get("spec")).get("metrics"))
    statuses = _list(_dict(obj.get("status")).get("currentMetrics"))
    if not specs:
        return "<none>"
    shown: list[str] = []
    for i, spec in enumerate(specs):
        spec = _dict(spec)
        kind = spec.get("type")
        field = _SOURCE_FIELD.get(str(kind), "")
        src = _dict(spec.get(field))
        target = _dict(src.get("target"))
        current = _current(statuses, i, field)
        if kind in ("External", "Object"):
            if target.get("averageValue") is not None:
                now = (current or {}).get("averageValue") or "<unknown>"
                shown.append(f"{now}/{target['averageValue']} (avg)")
            else:
                now = (current or {}).get("value", "0") if current is not None else "<unknown>"
                shown.append(f"{now}/{target.get('value', '0')}")
        elif kind == "Pods":
            now = (current or {}).get("averageValue", "0") if current is not None else "<unknown>"
            shown.append(f"{now}/{target.get('averageValue', '0')}")
        elif kind in ("Resource", "ContainerResource"):
            name = src.get("name", "")
            if kind == "ContainerResource":
                name = f"{name} of container \"{src.get('container', '')}\""
            if target.get("averageValue") is not None:
                now = (current or {}).get("averageValue", "0") if current is not None else "<unknown>"
                shown.append(f"{name}: {now}/{target['averageValue']}")
            else:
                utilization = (current or {}).get("averageUtilization")
                now = f"{utilization}%" if utilization is not None else "<unknown>"
                goal = f"{target['averageUtilization']}%" if target.get("averageUtilization") is not None \
                    else "<auto>"
                shown.append(f"{name}: {now}/{goal}")
        else:
            shown.append("<unknown type>")
    if len(shown) > 2:
        return ", ".join(shown[:2]) + f" + {len(shown) - 2} more..."
    return ", ".join(shown)
