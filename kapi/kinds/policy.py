"""The policy group's PodDisruptionBudget (``pkg/apis/policy/validation``, ``pkg/registry/policy/poddisruptionbudget``).

- PrepareForCreate resets ``status``; ``PodDisruptionBudgetStatus`` has four counts without ``omitempty``
  (``disruptionsAllowed``, ``currentHealthy``, ``desiredHealthy``, ``expectedPods``), so kube writes them as 0
  until the disruption controller fills them. Generation 1, bumped by spec changes; the spec struct is always
  encoded.
- ValidatePodDisruptionBudgetSpec: not both ``minAvailable`` and ``maxUnavailable``; each a non-negative
  integer or a percent of at most 100%; the selector; ``unhealthyPodEvictionPolicy`` IfHealthyBudget or
  AlwaysAllow. The spec may change (no immutable fields since kube 1.15).
- Status updates (ValidatePodDisruptionBudgetStatusUpdate): the conditions, the four counts not negative.
"""

from __future__ import annotations

from kapi.errors import Cause
from kapi.kinds.apps import NEGATIVE, not_more_than_100_percent, positive_int_or_percent
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import not_supported, validate_conditions
from kapi.kinds.podspec import validate_label_selector
from kapi.objectmeta import invalid
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int

GROUP = "policy"
EVICTION_POLICIES = ("AlwaysAllow", "IfHealthyBudget")  # sets.List: sorted
STATUS_COUNTS = ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")
GO_SPEC = "policy.PodDisruptionBudgetSpec{...}"  # kube prints the internal struct with pointer addresses


def validate_pdb(obj: Obj) -> list[Cause]:
    """ValidatePodDisruptionBudgetSpec in kube's order (the both-set error shows the spec as ``GO_SPEC``: Go's
    ``%#v`` of it holds pointer addresses, which no client can rely on)."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {GO_SPEC}: minAvailable and maxUnavailable cannot be "
                        "both set", "spec"))
    for key in ("minAvailable", "maxUnavailable"):
        if spec.get(key) is not None:
            out.extend(positive_int_or_percent(spec[key], f"spec.{key}"))
            out.extend(not_more_than_100_percent(spec[key], f"spec.{key}"))
    if spec.get("selector") is not None:
        out.extend(validate_label_selector(spec["selector"], "spec.selector"))
    policy = spec.get("unhealthyPodEvictionPolicy")
    if policy is not None and policy not in EVICTION_POLICIES:
        out.append(not_supported("spec.unhealthyPodEvictionPolicy", policy, EVICTION_POLICIES))
    return out


@register
class PodDisruptionBudgetStrategy(Strategy):
    """PodDisruptionBudget: the status starts as the four zero counts; ValidatePodDisruptionBudget."""

    group, kind = GROUP, "PodDisruptionBudget"
    #: podDisruptionBudgetStatusStrategy.PrepareForUpdate resets only spec: /status may change the metadata
    status_reset_metadata = ()
    validates_required = True  # only kube's rules name missing fields (a condition's reason, lastTransitionTime)
    status_zero = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}

    def default(self, obj: Obj) -> None:
        """No defaults; the spec struct is always encoded."""
        if not isinstance(obj.get("spec"), dict):
            obj["spec"] = {}

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_pdb`."""
        return validate_pdb(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """On ``status``: the conditions (metav1 ValidateConditions), then each of the four counts ``must be greater
        than or equal to 0``."""
        if subresource != "status":
            return []
        status = _dict(new.get("status"))
        out = validate_conditions(status.get("conditions"), "status.conditions")
        for key in STATUS_COUNTS:
            value = _int(status.get(key))
            if value is not None and value < 0:
                out.append(invalid(f"status.{key}", value, NEGATIVE))
        return out
