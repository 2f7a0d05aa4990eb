"""The networking.k8s.io group's kinds with rules here: Ingress.

Ingress (``pkg/registry/networking/ingress/strategy.go``): PrepareForCreate
resets ``status`` to the zero ``IngressStatus``, whose ``loadBalancer`` is a
struct kube's typed encoding always writes (``status: {loadBalancer: {}}``).
"""

from __future__ import annotations

from typing import Any

from kapi.kinds.base import Strategy, register

GROUP = "networking.k8s.io"


@register
class IngressStrategy(Strategy):
    """Ingress: the status starts as ``{loadBalancer: {}}``."""

    group, kind = GROUP, "Ingress"
    status_zero: dict[str, Any] = {"loadBalancer": {}}
