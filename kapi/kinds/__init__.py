"""Per-kind rules of the built-in kinds, one module per API group (contract: :mod:`kapi.kinds.base`).

Importing this package registers every group's strategies; callers use
:func:`strategy_for`. Shared helpers with no per-kind knowledge:
:mod:`kapi.kinds.fields` (field errors, Go value rendering) and
:mod:`kapi.kinds.podspec` (PodSpec defaults and validation).
"""

from kapi.kinds import (  # noqa: F401  (registration)
    admissionregistration,
    apiextensions,
    apiregistration,
    apps,
    autoscaling,
    base,
    batch,
    certificates,
    coordination,
    core,
    discovery,
    events,
    flowcontrol,
    networking,
    node,
    policy,
    rbac,
    resource,
    scheduling,
    storage,
)
from kapi.kinds.base import Strategy, register, strategy_for

__all__ = ["Strategy", "base", "register", "strategy_for"]
