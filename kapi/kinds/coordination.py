"""The coordination.k8s.io group's Lease (``pkg/apis/coordination/validation``, ``pkg/registry/coordination/lease``).

- The strategy keeps no ``metadata.generation`` (PrepareForCreate/Update do not set it), so a Lease has none;
  ``spec`` is a struct kube always encodes (``spec: {}``).
- CoordinatedLeaderElection is off by default in kube 1.37 (beta since 1.33), so ``spec.strategy`` and
  ``spec.preferredHolder`` are dropped on create, and on update each one the stored Lease does not have.
- ValidateLeaseSpec: ``leaseDurationSeconds`` greater than 0, ``leaseTransitions`` not negative,
  ``preferredHolder`` only with a ``strategy``.
"""

from __future__ import annotations

from datetime import datetime

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.objectmeta import forbidden, invalid
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int

GROUP = "coordination.k8s.io"
GATED = ("strategy", "preferredHolder")  # CoordinatedLeaderElection's fields


def validate_lease(obj: Obj) -> list[Cause]:
    """ValidateLeaseSpec: durations and transitions in range; a preferred holder needs a strategy."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    duration, transitions = _int(spec.get("leaseDurationSeconds")), _int(spec.get("leaseTransitions"))
    if duration is not None and duration <= 0:
        out.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    if transitions is not None and transitions < 0:
        out.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        out.append(forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return out


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


@register
class LeaseStrategy(Strategy):
    """Lease: no generation, the gated fields dropped, ValidateLease."""

    group, kind = GROUP, "Lease"
    tracks_generation = False

    def default(self, obj: Obj) -> None:
        """No defaults; the spec struct is always encoded."""
        _spec(obj)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """Drop the CoordinatedLeaderElection fields (the gate is off)."""
        spec = _spec(obj)
        for key in GATED:
            spec.pop(key, None)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """Drop each gated field the stored Lease does not have."""
        spec, old_spec = _spec(new), _dict(old.get("spec"))
        for key in GATED:
            if old_spec.get(key) is None:
                spec.pop(key, None)

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_lease`."""
        return validate_lease(obj)
