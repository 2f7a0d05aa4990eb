"""The policy group's kinds with rules here: PodDisruptionBudget.

PodDisruptionBudget (``pkg/registry/policy/poddisruptionbudget/strategy.go``):
PrepareForCreate resets ``status``; ``PodDisruptionBudgetStatus`` has four
counts without ``omitempty`` (``disruptionsAllowed``, ``currentHealthy``,
``desiredHealthy``, ``expectedPods``), so kube writes them as 0 until the
disruption controller fills them.
"""

from __future__ import annotations

from kapi.kinds.base import Strategy, register

GROUP = "policy"


@register
class PodDisruptionBudgetStrategy(Strategy):
    """PodDisruptionBudget: the status starts as the four zero counts."""

    group, kind = GROUP, "PodDisruptionBudget"
    status_zero = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
