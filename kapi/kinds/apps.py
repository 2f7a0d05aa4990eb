"""The apps group's kinds: Deployment, ReplicaSet, StatefulSet, DaemonSet.

Defaults from ``pkg/apis/apps/v1/defaults.go``; validation from
``pkg/apis/apps/validation/validation.go`` (the workload checks shared with
core and batch are :func:`kapi.kinds.podspec.validate_workload`); update
rules from ``pkg/registry/apps/<kind>/strategy.go`` ``ValidateUpdate``:

- Deployment, ReplicaSet, DaemonSet: ``spec.selector`` is immutable in
  apps/v1 (kube allows it only for the removed extensions/v1beta1 and
  apps/v1beta1/v1beta2): ``spec.selector: Invalid value:
  &LabelSelector{...}: field is immutable``.
- StatefulSet (``ValidateStatefulSetUpdate``): only replicas, ordinals,
  template, updateStrategy, revisionHistoryLimit,
  persistentVolumeClaimRetentionPolicy and minReadySeconds may change;
  anything else -> ``spec: Forbidden: updates to statefulset spec ...``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from kapi import errors, jsonutil
from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.gofmt import go_quote
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import go_value, immutable_shown, selector_string
from kapi.kinds.podspec import default_claim_spec, default_template, name_warnings, spec_of, validate_workload
from kapi.kinds.podwarnings import template_warnings, template_warnings_on_update
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import regex_error
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

GROUP = "apps"
STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                       "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
STATEFULSET_UPDATE_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")


def _struct(spec: Obj, key: str) -> Any:
    """``spec[key]``, an empty object when absent or null (a struct in kube's Go types, defaulted as empty)."""
    if spec.get(key) is None:
        spec[key] = {}
    return spec[key]


def _rolling(strategy: Any, key: str, defaults: dict[str, Any]) -> None:
    """``type`` RollingUpdate when unset and, for RollingUpdate, ``rollingUpdate``'s ``defaults``."""
    if not isinstance(strategy, dict):
        return
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault(key, {})
        if isinstance(rolling, dict):
            for name, value in defaults.items():
                rolling.setdefault(name, value)


NEGATIVE = "must be greater than or equal to 0"  # apimachinery validation.IsNegativeErrorMsg
PERCENT_FMT = "[0-9]+%"
PERCENT_MSG = "a valid percent string must be a numeric string followed by an ending '%'"
_PERCENT = re.compile(PERCENT_FMT)


def nonnegative(spec: Obj, name: str, prefix: str = "spec") -> list[Cause]:
    """apivalidation.ValidateNonnegativeField of the integer ``<prefix>.<name>`` when set."""
    value = _int(spec.get(name))
    return [invalid(f"{prefix}.{name}", value, NEGATIVE)] if value is not None and value < 0 else []


GREATER_THAN_REPLICAS = "cannot be greater than status.replicas"


def validate_replica_status(new: Obj, old: Obj, counts: tuple[str, ...], at_most_replicas: tuple[str, ...] = (),
                            ready_name: str | None = "readyReplicas") -> list[Cause]:
    """The apps status updates under ``status`` (ValidateDeploymentStatusUpdate, ValidateReplicaSetStatusUpdate,
    ValidateStatefulSetStatusUpdate, ValidateDaemonSetStatusUpdate): each of ``counts`` (and ``collisionCount``)
    >= 0; each of ``at_most_replicas`` ``cannot be greater than status.replicas``; ``availableReplicas``
    ``cannot be greater than <ready_name>`` (None: no such check); a ``collisionCount`` that goes down
    ``cannot be decremented``. Absent counts are 0 (Go's zero value)."""
    status, old_status = _dict(new.get("status")), _dict(old.get("status"))
    out = [c for name in (*counts, "collisionCount") for c in nonnegative(status, name, "status")]
    replicas = _int(status.get("replicas")) or 0
    for name in at_most_replicas:
        value = _int(status.get(name)) or 0
        if value > replicas:
            out.append(invalid(f"status.{name}", value, GREATER_THAN_REPLICAS))
    available, ready = _int(status.get("availableReplicas")) or 0, _int(status.get("readyReplicas")) or 0
    if ready_name and available > ready:
        out.append(invalid("status.availableReplicas", available, f"cannot be greater than {ready_name}"))
    collisions, old_collisions = _int(status.get("collisionCount")), _int(old_status.get("collisionCount"))
    if old_collisions is not None and (collisions is None or collisions < old_collisions):
        out.append(invalid("status.collisionCount", collisions or 0, "cannot be decremented"))
    return out


# terminatingReplicas (DeploymentReplicaSetTerminatingReplicas, on by default since 1.35): >= 0 when set, after the
# other counts and before collisionCount, as ValidateDeploymentStatus / ValidateReplicaSetStatus check it
DEPLOYMENT_COUNTS = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                     "unavailableReplicas", "terminatingReplicas")
REPLICASET_COUNTS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration",
                     "terminatingReplicas")
STATEFULSET_COUNTS = ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas",
                      "observedGeneration")
DAEMONSET_COUNTS = ("currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
                    "observedGeneration", "updatedNumberScheduled", "numberAvailable", "numberUnavailable")
ACTIVE_DEADLINE_FORBIDDEN = "activeDeadlineSeconds in ReplicaSet is not Supported"
STATEFULSET_ACTIVE_DEADLINE_FORBIDDEN = "activeDeadlineSeconds in StatefulSet is not Supported"


def active_deadline_forbidden(spec: Obj) -> list[Cause]:
    """ValidatePodTemplateSpecForReplicaSet (Deployments and ReplicaSets): the template may not set
    ``activeDeadlineSeconds``."""
    pod_spec = _dict(_dict(spec.get("template")).get("spec"))
    if pod_spec.get("activeDeadlineSeconds") is None:
        return []
    return [forbidden("spec.template.spec.activeDeadlineSeconds", ACTIVE_DEADLINE_FORBIDDEN)]


def int_or_string(value: Any) -> str:
    """An ``intstr.IntOrString`` as field.Error prints it (``%#v``: the value type has no ``String()``)."""
    if isinstance(value, str):
        return f"intstr.IntOrString{{Type:1, IntVal:0, StrVal:{go_value(value)}}}"
    return f"intstr.IntOrString{{Type:0, IntVal:{_int(value) or 0}, StrVal:\"\"}}"


def _percent(value: Any) -> int | None:
    """getPercentValue: N for a valid ``"N%"``, else None."""
    return int(value[:-1]) if isinstance(value, str) and _PERCENT.fullmatch(value) else None


def _int_or_percent_value(value: Any) -> int:
    """getIntOrPercentValue: the percent, else the integer (a non-numeric string is 0, as ``IntValue``)."""
    percent = _percent(value)
    if percent is not None:
        return percent
    if isinstance(value, str):
        return int(value) if re.fullmatch(r"[+-]?[0-9]+", value) else 0
    return _int(value) or 0


def positive_int_or_percent(value: Any, path: str) -> list[Cause]:
    """ValidatePositiveIntOrPercent: a string must be ``[0-9]+%``, an integer >= 0."""
    if isinstance(value, str):
        if _PERCENT.fullmatch(value):
            return []
        return [Cause("FieldValueInvalid", f"Invalid value: {int_or_string(value)}: "
                      f"{regex_error(PERCENT_MSG, PERCENT_FMT, '1%', '93%')}", path)]
    number = _int(value)
    return [invalid(path, number, NEGATIVE)] if number is not None and number < 0 else []


def not_more_than_100_percent(value: Any, path: str) -> list[Cause]:
    """IsNotMoreThan100Percent: a percent string above 100% is ``must not be greater than 100%``."""
    percent = _percent(value)
    if percent is None or percent <= 100:
        return []
    return [Cause("FieldValueInvalid", f"Invalid value: {int_or_string(value)}: must not be greater than 100%", path)]


GO_POINTER = "0xc000000000"  # a set pointer field in %#v is an address; kapi shows this stand-in


def go_strategy(go_type: str, rolling_type: str, strategy: Obj) -> str:
    """A ``{type, rollingUpdate}`` strategy struct as ``%#v`` prints it (the rolling update is a pointer)."""
    pointer = "nil" if strategy.get("rollingUpdate") is None else GO_POINTER
    return (f"apps.{go_type}{{Type:{go_value(str(strategy.get('type') or ''))}, "
            f"RollingUpdate:(*apps.{rolling_type})({pointer})}}")


def validate_deployment_strategy(strategy: Any) -> list[Cause]:
    """ValidateDeploymentStrategy and ValidateRollingUpdateDeployment under ``spec.strategy``.

    Recreate forbids ``rollingUpdate``; for RollingUpdate ``maxUnavailable`` and ``maxSurge`` are
    non-negative integers or ``N%``, not both 0 (``may not be 0 when `maxSurge` is 0``) and
    ``maxUnavailable`` at most 100%.
    """
    strategy = _dict(strategy)
    path = "spec.strategy"
    if strategy.get("type") == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            return [forbidden(f"{path}.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'")]
        return []
    if strategy.get("type") != "RollingUpdate":
        shown = go_strategy("DeploymentStrategy", "RollingUpdateDeployment", strategy)
        return [Cause("FieldValueNotSupported", f'Unsupported value: {shown}: supported values: "Recreate", '
                      '"RollingUpdate"', path)]
    if not isinstance(strategy.get("rollingUpdate"), dict):
        return []
    rolling, rpath = strategy["rollingUpdate"], f"{path}.rollingUpdate"
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    out = positive_int_or_percent(unavailable, f"{rpath}.maxUnavailable")
    out.extend(positive_int_or_percent(surge, f"{rpath}.maxSurge"))
    if _int_or_percent_value(unavailable) == 0 and _int_or_percent_value(surge) == 0:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {int_or_string(unavailable)}: may not be 0 when "
                         "`maxSurge` is 0", f"{rpath}.maxUnavailable"))
    out.extend(not_more_than_100_percent(unavailable, f"{rpath}.maxUnavailable"))
    return out


def validate_daemonset_update_strategy(strategy: Any) -> list[Cause]:
    """ValidateDaemonSetUpdateStrategy / ValidateRollingUpdateDaemonSet under ``spec.updateStrategy``.

    RollingUpdate needs ``rollingUpdate``; both values are non-negative integers or ``N%`` at most 100%, and
    exactly one is non-zero (``maxSurge: may not be set when maxUnavailable is non-zero``; ``maxUnavailable:
    Required value: cannot be 0 when maxSurge is 0``).
    """
    strategy = _dict(strategy)
    path = "spec.updateStrategy.rollingUpdate"
    if strategy.get("type") == "OnDelete":
        return []
    if strategy.get("type") != "RollingUpdate":
        shown = go_strategy("DaemonSetUpdateStrategy", "RollingUpdateDaemonSet", strategy)
        return [Cause("FieldValueNotSupported", f'Unsupported value: {shown}: supported values: "RollingUpdate", '
                      '"OnDelete"', "spec.updateStrategy")]
    rolling = strategy.get("rollingUpdate")
    if not isinstance(rolling, dict):
        return [required(path)]
    unavailable, surge = rolling.get("maxUnavailable"), rolling.get("maxSurge")
    out = positive_int_or_percent(unavailable, f"{path}.maxUnavailable")
    out.extend(positive_int_or_percent(surge, f"{path}.maxSurge"))
    for name, value in (("maxUnavailable", unavailable), ("maxSurge", surge)):
        out.extend(not_more_than_100_percent(value, f"{path}.{name}"))
    has_unavailable, has_surge = _int_or_percent_value(unavailable) != 0, _int_or_percent_value(surge) != 0
    if has_unavailable and has_surge:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {int_or_string(surge)}: may not be set when "
                         "maxUnavailable is non-zero", f"{path}.maxSurge"))
    elif not has_unavailable and not has_surge:
        out.append(required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return out


def validate_statefulset_policies(spec: Obj) -> list[Cause]:
    """ValidateStatefulSetSpec's first checks: ``podManagementPolicy`` (``must be 'OrderedReady' or
    'Parallel'``) and a RollingUpdate's ``partition`` >= 0 and ``maxUnavailable`` (int or percent, ``cannot
    be 0``, at most 100%)."""
    out: list[Cause] = []
    policy = spec.get("podManagementPolicy")
    if isinstance(policy, str) and policy and policy not in ("OrderedReady", "Parallel"):
        out.append(invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
    strategy = _dict(spec.get("updateStrategy"))
    rolling = strategy.get("rollingUpdate")
    if strategy.get("type") == "OnDelete" and rolling is not None:
        unavailable = "nil" if _dict(rolling).get("maxUnavailable") is None else GO_POINTER
        shown = (f"apps.RollingUpdateStatefulSetStrategy{{Partition:{_int(_dict(rolling).get('partition')) or 0}, "
                 f"MaxUnavailable:(*intstr.IntOrString)({unavailable})}}")
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: only allowed for updateStrategy "
                         "'RollingUpdate'", "spec.updateStrategy.rollingUpdate"))
    elif strategy.get("type") not in ("OnDelete", "RollingUpdate"):
        shown = go_strategy("StatefulSetUpdateStrategy", "RollingUpdateStatefulSetStrategy", strategy)
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: must be 'RollingUpdate' or 'OnDelete'",
                         "spec.updateStrategy"))
    if strategy.get("type") == "RollingUpdate" and isinstance(rolling, dict):
        path = "spec.updateStrategy.rollingUpdate"
        partition = _int(rolling.get("partition"))
        if partition is not None and partition < 0:
            out.append(invalid(f"{path}.partition", partition, NEGATIVE))
        if rolling.get("maxUnavailable") is not None:
            value = rolling["maxUnavailable"]
            out.extend(positive_int_or_percent(value, f"{path}.maxUnavailable"))
            if _int_or_percent_value(value) == 0:
                out.append(Cause("FieldValueInvalid", f"Invalid value: {int_or_string(value)}: cannot be 0",
                                 f"{path}.maxUnavailable"))
            out.extend(not_more_than_100_percent(value, f"{path}.maxUnavailable"))
    return out


def validate_deployment_spec(spec: Obj) -> list[Cause]:
    """ValidateDeploymentSpec: the workload checks, then strategy, minReadySeconds, revisionHistoryLimit and
    progressDeadlineSeconds (>= 0 and ``must be greater than minReadySeconds``)."""
    out = validate_workload(spec, "deployment", ("Always",), invalid_selector="invalid label selector")
    out.extend(active_deadline_forbidden(spec))
    out.extend(validate_deployment_strategy(spec.get("strategy")))
    out.extend(nonnegative(spec, "minReadySeconds"))
    out.extend(nonnegative(spec, "revisionHistoryLimit"))
    deadline = _int(spec.get("progressDeadlineSeconds"))
    if deadline is not None:
        out.extend(nonnegative(spec, "progressDeadlineSeconds"))
        if deadline <= (_int(spec.get("minReadySeconds")) or 0):
            out.append(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
    return out


def selector_immutable(new: Obj, old: Obj, subresource: str) -> list[Cause]:
    """apps/v1 ``spec.selector`` immutability (main resource and ``scale``; the status subresource keeps spec)."""
    if subresource == "status":
        return []
    selector, old_selector = _dict(new.get("spec")).get("selector"), _dict(old.get("spec")).get("selector")
    if selector == old_selector:
        return []
    return [immutable_shown("spec.selector", selector_string(selector))]


@register
class DeploymentStrategy(Strategy):
    """Deployment: replicas 1, RollingUpdate 25%/25%, history 10, deadline 600s; selector immutable."""

    group, kind = GROUP, "Deployment"
    #: deploymentStatusStrategy.PrepareForUpdate: spec and labels; /status may change annotations and finalizers
    status_reset_metadata = ("labels",)
    revalidates_first = True  # ValidateDeploymentUpdate validates the spec, then the strategy's selector check
    status_zero: dict[str, Any] = {}  # DeploymentStatus: every field omitempty

    def default(self, obj: Obj) -> None:
        """SetDefaults_Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10,
        progressDeadlineSeconds 600, the template's PodSpec defaults."""
        spec = spec_of(obj)
        spec.setdefault("replicas", 1)
        _rolling(_struct(spec, "strategy"), "rollingUpdate", {"maxUnavailable": "25%", "maxSurge": "25%"})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        default_template(spec, create=True)

    def bumps_generation(self, new: Obj, old: Obj) -> bool:
        """deploymentStrategy.PrepareForUpdate: a spec change, or an annotations change (the controller copies
        annotations to the ReplicaSets), bumps the generation."""
        annotations = _dict(new.get("metadata")).get("annotations") or {}
        old_annotations = _dict(old.get("metadata")).get("annotations") or {}
        return new.get("spec") != old.get("spec") or annotations != old_annotations

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the name warning (:func:`kapi.kinds.podspec.name_warnings`), then
        GetWarningsForPodTemplate of ``spec.template``."""
        return name_warnings(obj) + template_warnings(obj, "spec.template")

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForPodTemplate of ``spec.template`` when the generation moved on."""
        return template_warnings_on_update(new, old, "spec.template")

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateDeploymentSpec (:func:`validate_deployment_spec`)."""
        return validate_deployment_spec(_dict(obj.get("spec")))

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """deploymentStrategy.ValidateUpdate: ``spec.selector`` immutable; ``status``: ValidateDeploymentStatusUpdate
        (:func:`validate_replica_status`)."""
        if subresource == "status":
            return validate_replica_status(new, old, DEPLOYMENT_COUNTS,
                                           ("updatedReplicas", "readyReplicas", "availableReplicas"))
        return selector_immutable(new, old, subresource)


@register
class ReplicaSetStrategy(Strategy):
    """ReplicaSet: replicas 1; selector immutable."""

    group, kind = GROUP, "ReplicaSet"
    #: rsStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    revalidates_first = True  # ValidateReplicaSetUpdate validates the spec, then the strategy's selector check
    status_zero = {"replicas": 0}  # ReplicaSetStatus.Replicas has no omitempty

    def default(self, obj: Obj) -> None:
        """SetDefaults_ReplicaSet: replicas 1, the template's PodSpec defaults."""
        spec = spec_of(obj)
        spec.setdefault("replicas", 1)
        default_template(spec, create=True)

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: the name warning (:func:`kapi.kinds.podspec.name_warnings`), then
        GetWarningsForPodTemplate of ``spec.template``."""
        return name_warnings(obj) + template_warnings(obj, "spec.template")

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForPodTemplate of ``spec.template`` when the generation moved on."""
        return template_warnings_on_update(new, old, "spec.template")

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateReplicaSetSpec (kube's message names "deployment" for an empty selector here too), then
        ``minReadySeconds`` >= 0."""
        spec = _dict(obj.get("spec"))
        out = validate_workload(spec, "deployment", ("Always",), invalid_selector="invalid label selector")
        return out + active_deadline_forbidden(spec) + nonnegative(spec, "minReadySeconds")

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """rsStrategy.ValidateUpdate: ``spec.selector`` immutable; ``status``: ValidateReplicaSetStatusUpdate."""
        if subresource == "status":
            return validate_replica_status(new, old, REPLICASET_COUNTS,
                                           ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"))
        return selector_immutable(new, old, subresource)


def claim_type_meta(claim: Obj) -> None:
    """Give one ``spec.volumeClaimTemplates`` item (a PersistentVolumeClaim dict) the TypeMeta kube writes, in
    place: ``kind: PersistentVolumeClaim`` and ``apiVersion: v1`` first (the embedded TypeMeta's place in Go's
    struct order), replacing any the client sent. kube's conversion from the versioned StatefulSetSpec clears
    them and the conversion to it sets them on every template (pkg/apis/apps/v1, v1beta1 and v1beta2
    conversion.go, Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec; kubernetes#87583), so the stored object,
    a create's answer and every read have them."""
    rest = {k: v for k, v in claim.items() if k not in ("kind", "apiVersion")}
    claim.clear()
    claim.update({"kind": "PersistentVolumeClaim", "apiVersion": "v1", **rest})


def _without_claim_type_meta(spec: Obj) -> Obj:
    """``spec`` with its claims' kind/apiVersion left out: kube's update check compares internal specs, where
    conversion has cleared them (an object stored without them compares equal to its defaulted update)."""
    claims = spec.get("volumeClaimTemplates")
    if not isinstance(claims, list):
        return spec
    stripped = [{k: v for k, v in c.items() if k not in ("kind", "apiVersion")} if isinstance(c, dict) else c
                for c in claims]
    return {**spec, "volumeClaimTemplates": stripped}


@register
class StatefulSetStrategy(Strategy):
    """StatefulSet: replicas 1, OrderedReady, partition 0, PVC retention Retain; most of the spec frozen."""

    group, kind = GROUP, "StatefulSet"
    #: statefulSetStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    revalidates_first = True  # ValidateStatefulSetUpdate: ValidateStatefulSetSpec, then the forbidden-change check
    status_zero = {"replicas": 0, "availableReplicas": 0}  # StatefulSetStatus: the two without omitempty

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: GetWarningsForPodTemplate of ``spec.template``."""
        return template_warnings(obj, "spec.template")

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForPodTemplate of ``spec.template`` when the generation moved on."""
        return template_warnings_on_update(new, old, "spec.template")

    def default(self, obj: Obj) -> None:
        """SetDefaults_StatefulSet: replicas 1, OrderedReady, RollingUpdate partition 0, revisionHistoryLimit 10,
        PVC retention Retain/Retain, the template's PodSpec defaults; each ``volumeClaimTemplates`` claim gets a
        PersistentVolumeClaim's (``spec.volumeMode`` Filesystem, ``status.phase`` Pending) and the claim's TypeMeta,
        ``kind: PersistentVolumeClaim`` / ``apiVersion: v1``, whatever the client sent (see :func:`claim_type_meta`)."""
        spec = spec_of(obj)
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        _rolling(_struct(spec, "updateStrategy"), "rollingUpdate", {"partition": 0})
        spec.setdefault("revisionHistoryLimit", 10)
        retention = _struct(spec, "persistentVolumeClaimRetentionPolicy")  # a pointer, defaulted when nil
        if isinstance(retention, dict):
            for key in ("whenDeleted", "whenScaled"):
                if not retention.get(key):
                    retention[key] = "Retain"
        default_template(spec, create=True)
        for claim in _list(spec.get("volumeClaimTemplates")):
            if isinstance(claim, dict):  # each a PersistentVolumeClaim: its TypeMeta, spec and status defaults
                claim_type_meta(claim)
                default_claim_spec(claim.setdefault("spec", {}) if claim.get("spec") is None else claim["spec"])
                status = claim.get("status")
                if status is None:
                    status = claim["status"] = {}
                if isinstance(status, dict) and not status.get("phase"):
                    status["phase"] = "Pending"

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateStatefulSetSpec: podManagementPolicy and the rolling update, replicas and
        ``minReadySeconds`` >= 0, then the shared workload checks (a selector it cannot convert is
        ``spec.selector: Invalid value: &LabelSelector{...}`` with no detail) without ValidatePodSpec
        (ValidatePodTemplateSpecForStatefulSet's TODO: the template's PodSpec is not validated), the template's
        ``restartPolicy`` Always and no ``activeDeadlineSeconds`` (``Forbidden: activeDeadlineSeconds in
        StatefulSet is not Supported``)."""
        spec = _dict(obj.get("spec"))
        out = validate_statefulset_policies(spec) + nonnegative(spec, "replicas") + nonnegative(spec, "minReadySeconds")
        out += validate_workload(spec, "statefulset", ("Always",), replicas=False, invalid_selector="", pod_spec=False)
        if _dict(_dict(spec.get("template")).get("spec")).get("activeDeadlineSeconds") is not None:
            out.append(forbidden("spec.template.spec.activeDeadlineSeconds", STATEFULSET_ACTIVE_DEADLINE_FORBIDDEN))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateStatefulSetUpdate: the spec without the mutable fields must equal the stored one; ``status``:
        ValidateStatefulSetStatusUpdate."""
        if subresource == "status":
            return validate_replica_status(new, old, STATEFULSET_COUNTS, ("readyReplicas", "currentReplicas",
                                                                          "updatedReplicas", "availableReplicas"),
                                           "status.readyReplicas")
        spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
        rest = _without_claim_type_meta({k: v for k, v in spec.items() if k not in STATEFULSET_MUTABLE})
        old_rest = _without_claim_type_meta({k: v for k, v in old_spec.items() if k not in STATEFULSET_MUTABLE})
        return [forbidden("spec", STATEFULSET_UPDATE_FORBIDDEN)] if rest != old_rest else []


#: appsv1.DeprecatedTemplateGeneration: the apps/v1 form of the internal ``DaemonSetSpec.TemplateGeneration``
TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"
_GO_INT = re.compile(r"[+-]?[0-9]+")
_INT64 = 1 << 63


def template_generation(obj: Obj) -> int:
    """The internal ``spec.templateGeneration`` of an apps/v1 DaemonSet dict: its ``deprecated.daemonset.template.
    generation`` annotation as strconv.ParseInt(value, 10, 64) reads it, 0 when absent (kube's
    Convert_v1_DaemonSet_To_apps_DaemonSet, pkg/apis/apps/v1/conversion.go). A value ParseInt refuses is kube's
    decode error: StatusError 400 ``DaemonSet in version "v1" cannot be handled as a DaemonSet: strconv.ParseInt:
    parsing "<value>": invalid syntax`` (or ``value out of range`` past int64)."""
    value = _dict(_dict(obj.get("metadata")).get("annotations")).get(TEMPLATE_GENERATION)
    if not isinstance(value, str):
        return 0
    problem = "invalid syntax" if _GO_INT.fullmatch(value) is None else ""
    number = 0 if problem else int(value)
    if not problem and not -_INT64 <= number < _INT64:
        problem = "value out of range"
    if problem:
        raise errors.bad_request('DaemonSet in version "v1" cannot be handled as a DaemonSet: strconv.ParseInt: '
                                 f"parsing {go_quote(value)}: {problem}")
    return number


def set_template_generation(obj: Obj, generation: int) -> None:
    """Write ``generation`` as the ``deprecated.daemonset.template.generation`` annotation of ``obj``, in place,
    creating ``metadata.annotations`` if needed: kube's Convert_apps_DaemonSet_To_v1_DaemonSet writes it
    (strconv.FormatInt) on every apps/v1 DaemonSet it encodes, whatever the client sent."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = meta["annotations"] = {}
    annotations[TEMPLATE_GENERATION] = str(generation)


@register
class DaemonSetStrategy(Strategy):
    """DaemonSet: RollingUpdate maxUnavailable 1 / maxSurge 0, history 10; selector immutable."""

    group, kind = GROUP, "DaemonSet"
    #: daemonSetStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    revalidates_first = True  # ValidateDaemonSetUpdate validates the spec, then the strategy's selector check
    # DaemonSetStatus: the four counts without omitempty
    status_zero = {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
                   "numberReady": 0}

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """WarningsOnCreate: GetWarningsForPodTemplate of ``spec.template``."""
        return template_warnings(obj, "spec.template")

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """WarningsOnUpdate: GetWarningsForPodTemplate of ``spec.template`` when the generation moved on."""
        return template_warnings_on_update(new, old, "spec.template")

    def default(self, obj: Obj) -> None:
        """SetDefaults_DaemonSet: RollingUpdate maxUnavailable 1 / maxSurge 0, revisionHistoryLimit 10."""
        spec = spec_of(obj)
        _rolling(_struct(spec, "updateStrategy"), "rollingUpdate", {"maxUnavailable": 1, "maxSurge": 0})
        spec.setdefault("revisionHistoryLimit", 10)
        default_template(spec, create=True)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """daemonSetStrategy.PrepareForCreate: ``spec.templateGeneration`` (the annotation
        ``deprecated.daemonset.template.generation``, :func:`template_generation`) is the client's when at least
        1, else 1; written back as the annotation. Raises StatusError 400 for an annotation ParseInt refuses."""
        set_template_generation(obj, max(template_generation(obj), 1))

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """daemonSetStrategy.PrepareForUpdate: the client's ``spec.templateGeneration`` (annotation) is ignored for
        the stored one, plus 1 when ``spec.template`` changed (``!apiequality.Semantic.DeepEqual`` of the old and
        new templates); daemonSetStatusStrategy keeps the old spec, so a ``/status`` update keeps it. Written back
        as the annotation. The client's annotation is still parsed (kube decodes it before the strategy runs):
        StatusError 400 for a value ParseInt refuses."""
        template_generation(new)
        generation = template_generation(old)
        if subresource != "status" and _dict(new.get("spec")).get("template") != \
                _dict(old.get("spec")).get("template"):
            generation += 1
        set_template_generation(new, generation)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateDaemonSetSpec: the shared workload checks (no replicas), template restartPolicy Always,
        ``minReadySeconds`` >= 0, the update strategy, ``revisionHistoryLimit`` >= 0."""
        spec = _dict(obj.get("spec"))
        out = validate_workload(spec, "daemonset", ("Always",), replicas=False)
        if _dict(_dict(spec.get("template")).get("spec")).get("activeDeadlineSeconds") is not None:
            out.append(forbidden("spec.template.spec.activeDeadlineSeconds",
                                 "activeDeadlineSeconds in DaemonSet is not Supported"))
        out.extend(nonnegative(spec, "minReadySeconds"))
        out.extend(validate_daemonset_update_strategy(spec.get("updateStrategy")))
        return out + nonnegative(spec, "revisionHistoryLimit")

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """daemonSetStrategy.ValidateUpdate: ``spec.selector`` immutable; ``status``: ValidateDaemonSetStatusUpdate
        (counts >= 0, collisionCount not decremented)."""
        if subresource == "status":
            return validate_replica_status(new, old, DAEMONSET_COUNTS, ready_name=None)
        return selector_immutable(new, old, subresource)


def raw_unknown(value: Any) -> str:
    """A ControllerRevision's ``data`` as field.Invalid prints it. The internal type holds a ``*runtime.Unknown``
    (Convert_runtime_RawExtension_To_runtime_Object: ``Raw`` the JSON bytes, ContentType ``application/json``);
    field.ErrorBody keeps a pointer that implements fmt.Stringer and prints its generated String()
    (apimachinery ``pkg/runtime/generated.pb.go``: ``Raw:*[123 34 ...]``, the bytes in decimal). kapi's compact
    JSON of the parsed value stands for the request's bytes."""
    raw = " ".join(str(byte) for byte in jsonutil.dumps(value))
    return (f"&Unknown{{TypeMeta:TypeMeta{{APIVersion:,Kind:,}},Raw:*[{raw}],ContentEncoding:,"
            "ContentType:application/json,}")


@register
class ControllerRevisionStrategy(Strategy):
    """ControllerRevision (``pkg/registry/apps/controllerrevision/strategy.go``): ValidateControllerRevision and
    ValidateControllerRevisionUpdate."""

    group, kind = GROUP, "ControllerRevision"
    validates_required = True  # "data is mandatory" is the only missing field kube names (revision is 0)
    revalidates_first = True  # the update validates the new object, then data's immutability

    def default(self, obj: Obj) -> None:
        """``revision`` 0 when absent: ``Revision int64 `json:"revision"``` has no omitempty, so kube's decoded
        object always writes it."""
        if obj.get("revision") is None:
            obj["revision"] = 0

    def validate(self, obj: Obj) -> list[Cause]:
        """``data`` set (a RawExtension: absent or ``null`` is nil: ``data: Required value: data is mandatory``),
        ``revision`` >= 0."""
        out = [required("data", "data is mandatory")] if obj.get("data") is None else []
        revision = _int(obj.get("revision"))
        if revision is not None and revision < 0:
            out.append(invalid("revision", revision, NEGATIVE))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateImmutableField of ``data`` (compared as parsed JSON; kube's Semantic.DeepEqual compares the raw
        bytes)."""
        if new.get("data") is None or new.get("data") == old.get("data"):
            return []
        return [immutable_shown("data", raw_unknown(new["data"]))]
