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

from typing import Any

from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import immutable_shown, selector_string
from kapi.kinds.podspec import default_template, spec_of, validate_workload
from kapi.objectmeta import forbidden
from kapi.values import as_dict as _dict

GROUP = "apps"
STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                       "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
STATEFULSET_UPDATE_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")


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

    def default(self, obj: Obj) -> None:
        """SetDefaults_Deployment: replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10,
        progressDeadlineSeconds 600, the template's PodSpec defaults."""
        spec = spec_of(obj)
        spec.setdefault("replicas", 1)
        _rolling(spec.setdefault("strategy", {}), "rollingUpdate", {"maxUnavailable": "25%", "maxSurge": "25%"})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        default_template(spec)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateDeploymentSpec: the shared workload checks, template restartPolicy Always."""
        return validate_workload(_dict(obj.get("spec")), "deployment", ("Always",))

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """deploymentStrategy.ValidateUpdate: ``spec.selector`` immutable."""
        return selector_immutable(new, old, subresource)


@register
class ReplicaSetStrategy(Strategy):
    """ReplicaSet: replicas 1; selector immutable."""

    group, kind = GROUP, "ReplicaSet"

    def default(self, obj: Obj) -> None:
        """SetDefaults_ReplicaSet: replicas 1, the template's PodSpec defaults."""
        spec = spec_of(obj)
        spec.setdefault("replicas", 1)
        default_template(spec)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateReplicaSetSpec (kube's message names "deployment" for an empty selector here too)."""
        return validate_workload(_dict(obj.get("spec")), "deployment", ("Always",))

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """rsStrategy.ValidateUpdate: ``spec.selector`` immutable."""
        return selector_immutable(new, old, subresource)


@register
class StatefulSetStrategy(Strategy):
    """StatefulSet: replicas 1, OrderedReady, partition 0, PVC retention Retain; most of the spec frozen."""

    group, kind = GROUP, "StatefulSet"

    def default(self, obj: Obj) -> None:
        """SetDefaults_StatefulSet: replicas 1, OrderedReady, RollingUpdate partition 0, revisionHistoryLimit 10,
        PVC retention Retain/Retain, the template's PodSpec defaults."""
        spec = spec_of(obj)
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        _rolling(spec.setdefault("updateStrategy", {}), "rollingUpdate", {"partition": 0})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
        default_template(spec)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateStatefulSetSpec: the shared workload checks, template restartPolicy Always."""
        return validate_workload(_dict(obj.get("spec")), "statefulset", ("Always",))

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateStatefulSetUpdate: the spec without the mutable fields must equal the stored one."""
        if subresource == "status":
            return []
        spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
        rest = {k: v for k, v in spec.items() if k not in STATEFULSET_MUTABLE}
        old_rest = {k: v for k, v in old_spec.items() if k not in STATEFULSET_MUTABLE}
        return [forbidden("spec", STATEFULSET_UPDATE_FORBIDDEN)] if rest != old_rest else []


@register
class DaemonSetStrategy(Strategy):
    """DaemonSet: RollingUpdate maxUnavailable 1 / maxSurge 0, history 10; selector immutable."""

    group, kind = GROUP, "DaemonSet"

    def default(self, obj: Obj) -> None:
        """SetDefaults_DaemonSet: RollingUpdate maxUnavailable 1 / maxSurge 0, revisionHistoryLimit 10."""
        spec = spec_of(obj)
        _rolling(spec.setdefault("updateStrategy", {}), "rollingUpdate", {"maxUnavailable": 1, "maxSurge": 0})
        spec.setdefault("revisionHistoryLimit", 10)
        default_template(spec)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateDaemonSetSpec: the shared workload checks (no replicas), template restartPolicy Always."""
        return validate_workload(_dict(obj.get("spec")), "daemonset", ("Always",), replicas=False)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """daemonSetStrategy.ValidateUpdate: ``spec.selector`` immutable."""
        return selector_immutable(new, old, subresource)
