"""The admissionregistration.k8s.io group's webhook configurations and ValidatingAdmissionPolicy: v1 defaults.

From ``pkg/apis/admissionregistration/v1/defaults.go``: each webhook gets
failurePolicy Fail, matchPolicy Equivalent, empty namespace/object
selectors, timeoutSeconds 10, rule scope ``*`` and service port 443
(mutating ones also reinvocationPolicy Never); a ValidatingAdmissionPolicy
gets failurePolicy Fail and its matchConstraints the same matching defaults.
"""

from __future__ import annotations

from typing import Any

from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.podspec import spec_of

GROUP = "admissionregistration.k8s.io"


def _webhook(hook: Any, mutating: bool) -> None:
    if not isinstance(hook, dict):
        return
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    hook.setdefault("namespaceSelector", {})
    hook.setdefault("objectSelector", {})
    hook.setdefault("timeoutSeconds", 10)
    if mutating:
        hook.setdefault("reinvocationPolicy", "Never")
    for rule in hook.get("rules") or ():
        if isinstance(rule, dict):
            rule.setdefault("scope", "*")
    service = (hook.get("clientConfig") or {}).get("service") if isinstance(hook.get("clientConfig"), dict) else None
    if isinstance(service, dict):
        service.setdefault("port", 443)


@register
class MutatingWebhookConfigurationStrategy(Strategy):
    """MutatingWebhookConfiguration: SetDefaults_MutatingWebhook for each webhook."""

    group, kind = GROUP, "MutatingWebhookConfiguration"

    def default(self, obj: Obj) -> None:
        """failurePolicy Fail, matchPolicy Equivalent, selectors {}, timeoutSeconds 10, reinvocationPolicy Never."""
        for hook in obj.get("webhooks") or ():
            _webhook(hook, True)


@register
class ValidatingWebhookConfigurationStrategy(Strategy):
    """ValidatingWebhookConfiguration: SetDefaults_ValidatingWebhook for each webhook."""

    group, kind = GROUP, "ValidatingWebhookConfiguration"

    def default(self, obj: Obj) -> None:
        """failurePolicy Fail, matchPolicy Equivalent, selectors {}, timeoutSeconds 10, rule scope "*"."""
        for hook in obj.get("webhooks") or ():
            _webhook(hook, False)


@register
class ValidatingAdmissionPolicyStrategy(Strategy):
    """ValidatingAdmissionPolicy: SetDefaults_ValidatingAdmissionPolicySpec and its MatchResources."""

    group, kind = GROUP, "ValidatingAdmissionPolicy"
    status_zero: dict[str, Any] = {}  # ValidatingAdmissionPolicyStatus: every field omitempty, reset on create

    def default(self, obj: Obj) -> None:
        """failurePolicy Fail; matchConstraints matchPolicy Equivalent, selectors {}, rule scope "*"."""
        spec = spec_of(obj)
        spec.setdefault("failurePolicy", "Fail")
        constraints = spec.get("matchConstraints")
        if isinstance(constraints, dict):
            constraints.setdefault("matchPolicy", "Equivalent")
            constraints.setdefault("namespaceSelector", {})
            constraints.setdefault("objectSelector", {})
            for rule in constraints.get("resourceRules") or ():
                if isinstance(rule, dict):
                    rule.setdefault("scope", "*")
