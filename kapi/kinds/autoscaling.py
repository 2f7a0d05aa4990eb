"""The autoscaling group's HorizontalPodAutoscaler: defaults, strategy, validation, v1 <-> v2 ``convert``.

kube-apiserver stores HPAs once, at autoscaling/v2, and serves them through
both versions; the conversion itself (the CPU target, the round-trip
annotations) is :mod:`kapi.kinds.hpaconversion`, whose names this module
re-exports; :func:`convert` adds the v2 defaults kube applies when it
decodes the stored object.

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

from typing import Any

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.k8sproto.goorder import wire_order
from kapi.kinds.base import Strategy, register
from kapi.kinds.fields import not_supported
from kapi.kinds.hpaconversion import (  # noqa: F401  (the conversion's names, served here with the kind)
    BEHAVIOR_ANNOTATION,
    CONDITIONS_ANNOTATION,
    KIND,
    METRIC_SPECS_ANNOTATION,
    METRIC_STATUSES_ANNOTATION,
    ROUND_TRIP_ANNOTATIONS,
    V1,
    V2,
    to_v1,
    to_v2,
)
from kapi.objectmeta import invalid, required
from kapi.validation import is_dns1123_label, is_valid_path_segment_name
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

GROUP = "autoscaling"

DEFAULT_CPU_UTILIZATION = 80  # percent, autoscaling.DefaultCPUUtilization
MAX_PERIOD_SECONDS = 1800
MAX_STABILIZATION_WINDOW_SECONDS = 3600
METRIC_SOURCE_TYPES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SELECT_POLICIES = ("Disabled", "Max", "Min")
POLICY_TYPES = ("Percent", "Pods")

Obj = dict[str, Any]


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


def convert(obj: Obj, desired: str) -> Obj:
    """``obj`` (either version) as ``desired`` (V1 or V2); already there -> unchanged. To v2 applies v2 defaults,
    as kube's decoding of the stored object does. The result is in the encoder's key order
    (:func:`kapi.k8sproto.goorder.wire_order`): the round-trip annotations a v1 answer gains sit before
    ``managedFields``, where ObjectMeta's Go struct has them."""
    if obj.get("apiVersion") == desired:
        return obj
    if desired == V1:
        return wire_order(to_v1(obj))
    out = to_v2(obj)
    default_v2(out)
    return wire_order(out)


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
    #: autoscalerStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    status_zero = {"desiredReplicas": 0}  # v2 HorizontalPodAutoscalerStatus.DesiredReplicas has no omitempty
    # kube decodes into Go structs: only the validation below names missing fields (``scaleTargetRef.kind``, ...),
    # never the schema (v1's status ``currentReplicas`` is required there, yet a create resets the status)
    validates_required = True

    def default(self, obj: Obj) -> None:
        """v1 or v2 SetDefaults_HorizontalPodAutoscaler by the object's ``apiVersion`` (:func:`apply_defaults`)."""
        apply_defaults(obj)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """PrepareForCreate: the status is the controller's, the zero status of the object's version (v1:
        ``currentReplicas`` and ``desiredReplicas`` 0, neither ``omitempty``; v2: ``desiredReplicas`` 0 and
        ``currentMetrics`` null, a nil slice without ``omitempty``)."""
        obj["status"] = {"currentReplicas": 0, "desiredReplicas": 0} if obj.get("apiVersion") == V1 \
            else {"desiredReplicas": 0, "currentMetrics": None}

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
