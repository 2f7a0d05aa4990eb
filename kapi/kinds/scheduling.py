"""The scheduling.k8s.io group's PriorityClass (``pkg/apis/scheduling/v1/defaults.go``,
``pkg/apis/scheduling/validation/validation.go``).

- SetDefaults_PriorityClass: ``preemptionPolicy: PreemptLowerPriority``.
- ValidatePriorityClass: a ``system-`` name must be one of the two system classes with their value and
  globalDefault; any other class at most 1,000,000,000; ``preemptionPolicy`` PreemptLowerPriority or Never.
- ValidatePriorityClassUpdate: ``value`` Forbidden to change, ``preemptionPolicy`` immutable.
"""

from __future__ import annotations

from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import immutable, not_supported
from kapi.objectmeta import forbidden, required
from kapi.values import as_int as _int

GROUP = "scheduling.k8s.io"
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PREFIX = "system-"
# schedulingapiv1.systemPriorityClasses: name -> (value, globalDefault)
SYSTEM_PRIORITY_CLASSES = {"system-node-critical": (2_000_001_000, False),
                           "system-cluster-critical": (2_000_000_000, False)}
SYSTEM_PRIORITY_CLASS_DESCRIPTIONS = {
    "system-node-critical": "Used for system critical pods that must not be moved from their current node.",
    "system-cluster-critical": "Used for system critical pods that must run in the cluster, but can be moved to "
                               "another node if necessary."}
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")  # ValidatePreemptionPolicy's order


def known_system_class_error(name: str, value: int, global_default: bool) -> str | None:
    """IsKnownSystemPriorityClass's error text; None when ``name`` is a system class with its value and
    globalDefault."""
    known = SYSTEM_PRIORITY_CLASSES.get(name)
    if known is None:
        return f"{name} is not a known system priority class"
    if known[0] != value:
        return f"value of {name} PriorityClass must be {known[0]}"
    if known[1] != global_default:
        return f"globalDefault of {name} PriorityClass must be {str(known[1]).lower()}"
    return None


def validate_preemption_policy(policy: object, path: str) -> list[Cause]:
    """apivalidation.ValidatePreemptionPolicy: PreemptLowerPriority or Never; "" is Required."""
    if policy in PREEMPTION_POLICIES:
        return []
    if policy == "":
        return [required(path)]
    return [not_supported(path, policy, PREEMPTION_POLICIES)]


def validate_priority_class(obj: Obj) -> list[Cause]:
    """ValidatePriorityClass (after ObjectMeta): the system prefix or the user maximum, the preemption policy."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    value = _int(obj.get("value")) or 0
    out: list[Cause] = []
    if name.startswith(SYSTEM_PREFIX):
        error = known_system_class_error(name, value, bool(obj.get("globalDefault")))
        if error is not None:
            out.append(forbidden("metadata.name", f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved "
                                 f"for system use only. error: {error}"))
    elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
        out.append(forbidden("value", f"maximum allowed value of a user defined priority is "
                             f"{HIGHEST_USER_DEFINABLE_PRIORITY}"))
    if obj.get("preemptionPolicy") is not None:
        out.extend(validate_preemption_policy(obj["preemptionPolicy"], "preemptionPolicy"))
    return out


@register
class PriorityClassStrategy(Strategy):
    """PriorityClass: SetDefaults_PriorityClass, ValidatePriorityClass, ValidatePriorityClassUpdate."""

    group, kind = GROUP, "PriorityClass"

    def default(self, obj: Obj) -> None:
        """``preemptionPolicy: PreemptLowerPriority`` when unset."""
        if obj.get("preemptionPolicy") is None:
            obj["preemptionPolicy"] = "PreemptLowerPriority"

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_priority_class`."""
        return validate_priority_class(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """``value: Forbidden: may not be changed in an update.``; ``preemptionPolicy`` immutable."""
        out: list[Cause] = []
        if (_int(new.get("value")) or 0) != (_int(old.get("value")) or 0):
            out.append(forbidden("value", "may not be changed in an update."))
        old_policy = old.get("preemptionPolicy") or "PreemptLowerPriority"  # stored before kapi defaulted it
        if new.get("preemptionPolicy") != old_policy:
            out.append(immutable("preemptionPolicy", new.get("preemptionPolicy")))
        return out
