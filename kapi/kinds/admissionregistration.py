"""The admissionregistration.k8s.io group's webhook configurations and ValidatingAdmissionPolicy: v1 defaults,
the webhook configurations' validation.

From ``pkg/apis/admissionregistration/v1/defaults.go``: each webhook gets
failurePolicy Fail, matchPolicy Equivalent, empty namespace/object
selectors, timeoutSeconds 10, rule scope ``*`` and service port 443
(mutating ones also reinvocationPolicy Never); a ValidatingAdmissionPolicy
gets failurePolicy Fail and its matchConstraints the same matching defaults.

From ``pkg/apis/admissionregistration/validation/validation.go``
(validateValidatingWebhook / validateMutatingWebhook, as on create): a
webhook's name is fully qualified (three dot-separated segments), names are
unique, rules name operations, apiGroups, apiVersions and resources,
failurePolicy, matchPolicy, sideEffects (``Required value: must specify one
of None, NoneOnDryRun``), reinvocationPolicy and the scope are enums,
timeoutSeconds 1-30, the selectors valid, exactly one of ``clientConfig.url``
(https, no user, query or fragment) and ``clientConfig.service``, and
admissionReviewVersions non-empty with v1 or v1beta1. The URL and service
checks are the CRD conversion webhook's (:mod:`kapi.crd.validation`).
"""

from __future__ import annotations

from typing import Any

from kapi.crd.validation import webhook_service, webhook_url
from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import duplicate, go_strings, not_supported
from kapi.kinds.podspec import spec_of, validate_label_selector
from kapi.objectmeta import invalid, required
from kapi.validation import is_dns1123_subdomain
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

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


OPERATIONS = ("*", "CONNECT", "CREATE", "DELETE", "UPDATE")  # sets.List: sorted
FAILURE_POLICIES = ("Fail", "Ignore")
MATCH_POLICIES = ("Equivalent", "Exact")
SIDE_EFFECTS = ("None", "NoneOnDryRun")  # noSideEffectClasses: what v1 accepts on create
REINVOCATION_POLICIES = ("IfNeeded", "Never")
SCOPES = ("*", "Cluster", "Namespaced")
REVIEW_VERSIONS = ("v1", "v1beta1")  # webhook.AcceptedAdmissionReviewVersions


def fully_qualified_name(path: str, name: str) -> list[Cause]:
    """utilvalidation.IsFullyQualifiedName: required, a DNS subdomain, at least three segments."""
    if not name:
        return [required(path)]
    problems = is_dns1123_subdomain(name)
    if problems:
        return [invalid(path, name, ",".join(problems))]
    if len(name.split(".")) < 3:
        return [invalid(path, name, "should be a domain with at least three segments separated by dots")]
    return []


def _strings_cause(path: str, values: list[Any], detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {go_strings(values)}: {detail}", path)


def validate_rule(rule: Any, path: str) -> list[Cause]:
    """validateRuleWithOperations: operations (``*`` alone), apiGroups, apiVersions, resources, scope."""
    rule = _dict(rule)
    out: list[Cause] = []
    operations = _list(rule.get("operations"))
    if not operations:
        out.append(required(f"{path}.operations"))
    if len(operations) > 1 and "*" in operations:
        out.append(_strings_cause(f"{path}.operations", operations, "if '*' is present, must not specify other "
                                  "operations"))
    out.extend(not_supported(f"{path}.operations[{i}]", op, OPERATIONS)
               for i, op in enumerate(operations) if op not in OPERATIONS)
    for key, what in (("apiGroups", "API groups"), ("apiVersions", "API versions")):
        values = _list(rule.get(key))
        if not values:
            out.append(required(f"{path}.{key}"))
        if len(values) > 1 and "*" in values:
            out.append(_strings_cause(f"{path}.{key}", values, f"if '*' is present, must not specify other {what}"))
    out.extend(required(f"{path}.apiVersions[{i}]")
               for i, version in enumerate(_list(rule.get("apiVersions"))) if version == "")
    if not _list(rule.get("resources")):
        out.append(required(f"{path}.resources"))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        out.append(not_supported(f"{path}.scope", scope, SCOPES))
    return out


def validate_webhook(hook: Any, path: str, mutating: bool) -> list[Cause]:
    """validateValidatingWebhook / validateMutatingWebhook in kube's order, then admissionReviewVersions."""
    hook = _dict(hook)
    name = hook.get("name")
    out = fully_qualified_name(f"{path}.name", name if isinstance(name, str) else "")
    for i, rule in enumerate(_list(hook.get("rules"))):
        out.extend(validate_rule(rule, f"{path}.rules[{i}]"))
    for key, supported in (("failurePolicy", FAILURE_POLICIES), ("matchPolicy", MATCH_POLICIES)):
        value = hook.get(key)
        if value is not None and value not in supported:
            out.append(not_supported(f"{path}.{key}", value, supported))
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        out.append(required(f"{path}.sideEffects", f"must specify one of {', '.join(SIDE_EFFECTS)}"))
    elif side_effects not in SIDE_EFFECTS:
        out.append(not_supported(f"{path}.sideEffects", side_effects, SIDE_EFFECTS))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and not 1 <= timeout <= 30:
        out.append(invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"))
    reinvocation = hook.get("reinvocationPolicy")
    if mutating and reinvocation is not None and reinvocation not in REINVOCATION_POLICIES:
        out.append(not_supported(f"{path}.reinvocationPolicy", reinvocation, REINVOCATION_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if hook.get(key) is not None:
            out.extend(validate_label_selector(hook[key], f"{path}.{key}"))
    config = _dict(hook.get("clientConfig"))
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        out.append(required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif isinstance(url, str):
        out.extend(webhook_url(f"{path}.clientConfig.url", url))
    elif isinstance(service, dict):
        out.extend(webhook_service(f"{path}.clientConfig.service", service))
    versions = _list(hook.get("admissionReviewVersions"))
    if not versions:
        out.append(required(f"{path}.admissionReviewVersions", f"must specify one of {', '.join(REVIEW_VERSIONS)}"))
    elif not any(v in REVIEW_VERSIONS for v in versions):
        out.append(_strings_cause(f"{path}.admissionReviewVersions", versions,
                                  f"must include at least one of {', '.join(REVIEW_VERSIONS)}"))
    return out


def validate_webhooks(obj: Obj, mutating: bool) -> list[Cause]:
    """Every ``webhooks[i]`` (:func:`validate_webhook`), and ``Duplicate value`` for a repeated name."""
    out: list[Cause] = []
    seen: set[str] = set()
    for i, hook in enumerate(_list(obj.get("webhooks"))):
        out.extend(validate_webhook(hook, f"webhooks[{i}]", mutating))
        name = _dict(hook).get("name")
        if isinstance(name, str) and name:
            if name in seen:
                out.append(duplicate(f"webhooks[{i}].name", name))
            seen.add(name)
    return out


@register
class MutatingWebhookConfigurationStrategy(Strategy):
    """MutatingWebhookConfiguration: SetDefaults_MutatingWebhook for each webhook."""

    group, kind = GROUP, "MutatingWebhookConfiguration"
    validates_required = True

    def default(self, obj: Obj) -> None:
        """failurePolicy Fail, matchPolicy Equivalent, selectors {}, timeoutSeconds 10, reinvocationPolicy Never."""
        for hook in obj.get("webhooks") or ():
            _webhook(hook, True)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateMutatingWebhookConfiguration (:func:`validate_webhooks`)."""
        return validate_webhooks(obj, mutating=True)


@register
class ValidatingWebhookConfigurationStrategy(Strategy):
    """ValidatingWebhookConfiguration: SetDefaults_ValidatingWebhook for each webhook."""

    group, kind = GROUP, "ValidatingWebhookConfiguration"
    validates_required = True

    def default(self, obj: Obj) -> None:
        """failurePolicy Fail, matchPolicy Equivalent, selectors {}, timeoutSeconds 10, rule scope "*"."""
        for hook in obj.get("webhooks") or ():
            _webhook(hook, False)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateValidatingWebhookConfiguration (:func:`validate_webhooks`)."""
        return validate_webhooks(obj, mutating=False)


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
