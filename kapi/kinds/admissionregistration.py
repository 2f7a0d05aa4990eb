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

An update is validated with options derived from the stored object (:func:`update_options`, kube's
ValidateValidatingWebhookConfigurationUpdate): what the stored webhooks already had stays allowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kapi.crd import rules
from kapi.crd.validation import webhook_service, webhook_url
from kapi.errors import Cause
from kapi.kinds.base import RESET_OBJECT_META_FOR_STATUS, Obj, Strategy, register
from kapi.kinds.fields import duplicate, go_strings, not_supported, too_many, validate_label_selector
from kapi.kinds.podspec import spec_of
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_dns1035_label, is_dns1123_subdomain, is_qualified_name, is_valid_path_segment_name
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list
from kapi.values import as_str as _text

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
ALL_SIDE_EFFECTS = ("None", "NoneOnDryRun", "Some", "Unknown")  # supportedSideEffectClasses (sorted)
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


def _resources(resources: list[Any], path: str) -> list[Cause]:
    """validateResources (subresources allowed): required, no empty entry, ``x/*`` and ``*/x`` exclude the
    entries they cover, ``*/*`` alone, ``*`` with no other resource without a subresource."""
    out = [required(path)] if not resources else []
    with_any_sub: set[str] = set()
    with_any_res: set[str] = set()
    double = single = plain = False
    for i, entry in enumerate(resources):
        entry = _text(entry)
        if not entry:
            out.append(required(f"{path}[{i}]"))
            continue
        double = double or entry == "*/*"
        single = single or entry == "*"
        res, sep, sub = entry.partition("/")
        if not sep:
            plain = entry != "*"
            continue
        if res in with_any_sub:
            out.append(invalid(f"{path}[{i}]", entry, f"if '{res}/*' is present, must not specify {entry}"))
        if sub in with_any_res:
            out.append(invalid(f"{path}[{i}]", entry, f"if '*/{sub}' is present, must not specify {entry}"))
        if sub == "*":
            with_any_sub.add(res)
        if res == "*":
            with_any_res.add(sub)
    if len(resources) > 1 and double:
        out.append(_strings_cause(path, resources, "if '*/*' is present, must not specify other resources"))
    if single and plain:
        out.append(_strings_cause(path, resources, "if '*' is present, must not specify other resources without "
                                  "subresources"))
    return out


def validate_rule(rule: Any, path: str) -> list[Cause]:
    """validateRuleWithOperations: operations (``*`` alone), apiGroups, apiVersions, resources, scope."""
    rule = _dict(rule)
    out: list[Cause] = []
    operations = _list(rule.get("operations"))
    if not operations:
        out.append(required(f"{path}.operations"))
    if len(operations) > 1 and "*" in operations:
        shown = "[]admissionregistration.OperationType" + go_strings(operations)[len("[]string"):]
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: if '*' is present, must not specify other "
                         "operations", f"{path}.operations"))
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
    out.extend(_resources(_list(rule.get("resources")), f"{path}.resources"))
    scope = rule.get("scope")
    if scope is not None and scope not in SCOPES:
        out.append(not_supported(f"{path}.scope", scope, SCOPES))
    return out


def cel_syntax(path: str, expression: str) -> list[Cause]:
    """The admission CEL compiler's syntax errors for ``expression``: ``Invalid value: "<expr>": compilation failed:
    ERROR: <input>:1:13: Syntax error: ...`` (declarations and types are not checked: variables are dynamic)."""
    failed = rules.compile_errors(expression, {}, False, check_types=False)
    return [invalid(path, expression, f"compilation failed: {failed}")] if failed else []


def validate_match_conditions(conditions: Any, path: str) -> list[Cause]:
    """validateMatchConditions: at most 64; each expression required and compiling, each name required, a
    qualified name and unique."""
    conditions = _list(conditions)
    out = [too_many(path, len(conditions), 64)] if len(conditions) > 64 else []
    for i, condition in enumerate(conditions):
        condition, cpath = _dict(condition), f"{path}[{i}]"
        expression = str(condition.get("expression") or "").strip()
        if not expression:
            out.append(required(f"{cpath}.expression"))
        else:
            out.extend(cel_syntax(f"{cpath}.expression", expression))
        name = _text(condition.get("name"))
        if not name:
            out.append(required(f"{cpath}.name"))
        else:
            out.extend(invalid(f"{cpath}.name", name, m) for m in is_qualified_name(name))
            if name in [_dict(c).get("name") for c in conditions[:i]]:
                out.append(duplicate(f"{cpath}.name", name))
    return out


@dataclass(frozen=True)
class WebhookOptions:
    """validation.go validationOptions of a webhook configuration; the defaults are a create's."""

    #: skip matchConditions (an update that leaves every webhook's conditions as they were)
    ignore_match_conditions: bool = False
    #: sideEffects must be None or NoneOnDryRun (else Some and Unknown are allowed too)
    require_no_side_effects: bool = True
    #: admissionReviewVersions must include v1 or v1beta1
    require_recognized_review_version: bool = True
    #: a repeated webhook name is ``Duplicate value``
    require_unique_names: bool = True
    #: selectors' matchExpressions values need not be label values
    allow_invalid_label_values: bool = False


def update_options(new: Obj, old: Obj) -> WebhookOptions:
    """The options ValidateValidatingWebhookConfigurationUpdate / ValidateMutatingWebhookConfigurationUpdate derive
    from the stored ``old`` (and ``new``): matchConditions are skipped when there are as many webhooks as before,
    each with the conditions it had (ignore*WebhookMatchConditions); sideEffects are held to None/NoneOnDryRun only
    when every stored webhook had one of them (*HasNoSideEffects); review versions must be recognized unless a
    stored webhook listed only unrecognized ones (*HasAcceptedAdmissionReviewVersions); names must be unique
    unless the stored ones repeated (*HasUniqueWebhookNames); invalid selector label values are allowed when a
    stored selector had one (*WebhookHasInvalidLabelValueInSelector)."""
    new_hooks = [_dict(h) for h in _list(new.get("webhooks"))]
    old_hooks = [_dict(h) for h in _list(old.get("webhooks"))]
    ignore = len(new_hooks) == len(old_hooks) and all(
        n.get("matchConditions") == o.get("matchConditions") for n, o in zip(new_hooks, old_hooks, strict=True))
    no_side_effects = all(h.get("sideEffects") in SIDE_EFFECTS for h in old_hooks)
    recognized = all(not _list(h.get("admissionReviewVersions")) or
                     any(v in REVIEW_VERSIONS for v in _list(h.get("admissionReviewVersions"))) for h in old_hooks)
    names = [h.get("name") for h in old_hooks]
    unique = all(name not in names[:i] for i, name in enumerate(names))
    invalid_values = any(h.get(key) is not None and validate_label_selector(h[key], key)
                         for h in old_hooks for key in ("namespaceSelector", "objectSelector"))
    return WebhookOptions(ignore, no_side_effects, recognized, unique, invalid_values)


CREATE_OPTIONS = WebhookOptions()


def validate_webhook(hook: Any, path: str, mutating: bool, opts: WebhookOptions = CREATE_OPTIONS) -> list[Cause]:
    """validateValidatingWebhook / validateMutatingWebhook in kube's order (with ``opts``), then
    admissionReviewVersions."""
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
    allowed = SIDE_EFFECTS if opts.require_no_side_effects else ALL_SIDE_EFFECTS
    if side_effects is None:
        out.append(required(f"{path}.sideEffects", f"must specify one of {', '.join(allowed)}"))
    elif side_effects not in allowed:
        out.append(not_supported(f"{path}.sideEffects", side_effects, allowed))
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not isinstance(timeout, bool) and not 1 <= timeout <= 30:
        out.append(invalid(f"{path}.timeoutSeconds", timeout, "the timeout value must be between 1 and 30 seconds"))
    for key in ("namespaceSelector", "objectSelector"):
        if hook.get(key) is not None:
            out.extend(validate_label_selector(hook[key], f"{path}.{key}",
                                               allow_invalid_label_values=opts.allow_invalid_label_values))
    reinvocation = hook.get("reinvocationPolicy")
    if mutating and reinvocation is not None and reinvocation not in REINVOCATION_POLICIES:
        out.append(not_supported(f"{path}.reinvocationPolicy", reinvocation, REINVOCATION_POLICIES))
    config = _dict(hook.get("clientConfig"))
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        out.append(required(f"{path}.clientConfig", "exactly one of url or service is required"))
    elif isinstance(url, str):
        out.extend(webhook_url(f"{path}.clientConfig.url", url))
    elif isinstance(service, dict):
        out.extend(webhook_service(f"{path}.clientConfig.service", service))
    if not opts.ignore_match_conditions:
        out.extend(validate_match_conditions(hook.get("matchConditions"), f"{path}.matchConditions"))
    return out + _review_versions(_list(hook.get("admissionReviewVersions")), f"{path}.admissionReviewVersions",
                                  opts.require_recognized_review_version)


def _review_versions(versions: list[Any], path: str, require_recognized: bool = True) -> list[Cause]:
    """validateAdmissionReviewVersions: at least one; each unique (``duplicate version``) and a DNS-1035 label; one
    of v1, v1beta1 among them (``require_recognized``)."""
    if not versions:
        return [required(path, f"must specify one of {', '.join(REVIEW_VERSIONS)}")]
    out: list[Cause] = []
    for i, version in enumerate(versions):
        version = _text(version)
        if version in versions[:i]:
            out.append(invalid(f"{path}[{i}]", version, "duplicate version"))
            continue
        out.extend(invalid(f"{path}[{i}]", version, m) for m in is_dns1035_label(version))
    if require_recognized and not any(v in REVIEW_VERSIONS for v in versions):
        out.append(_strings_cause(path, versions, f"must include at least one of {', '.join(REVIEW_VERSIONS)}"))
    return out


def validate_webhooks(obj: Obj, mutating: bool, opts: WebhookOptions = CREATE_OPTIONS) -> list[Cause]:
    """Every ``webhooks[i]`` (:func:`validate_webhook` with ``opts``), and ``Duplicate value`` for a repeated name
    (``opts.require_unique_names``)."""
    out: list[Cause] = []
    seen: set[str] = set()
    for i, hook in enumerate(_list(obj.get("webhooks"))):
        out.extend(validate_webhook(hook, f"webhooks[{i}]", mutating, opts))
        name = _dict(hook).get("name")
        if opts.require_unique_names and isinstance(name, str) and name:
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

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidateMutatingWebhookConfigurationUpdate: :func:`validate_webhooks` with :func:`update_options`."""
        return validate_webhooks(new, mutating=True, opts=update_options(new, old))


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

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidateValidatingWebhookConfigurationUpdate: :func:`validate_webhooks` with :func:`update_options`."""
        return validate_webhooks(new, mutating=False, opts=update_options(new, old))


@register
class ValidatingAdmissionPolicyStrategy(Strategy):
    """ValidatingAdmissionPolicy: SetDefaults_ValidatingAdmissionPolicySpec and its MatchResources."""

    group, kind = GROUP, "ValidatingAdmissionPolicy"
    #: validatingAdmissionPolicyStatusStrategy.PrepareForUpdate: spec, then metav1.ResetObjectMetaForStatus(new,
    #: old)
    status_reset_metadata = RESET_OBJECT_META_FOR_STATUS
    validates_required = True
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
            _default_rule_scopes(constraints)

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_policy`."""
        return validate_policy(obj)


def _default_rule_scopes(match: Obj) -> None:
    """SetDefaults_Rule (scope ``*``) on every rule of a MatchResources, ``resourceRules`` and
    ``excludeResourceRules`` alike (zz_generated.defaults.go SetObjectDefaults_ValidatingAdmissionPolicy and
    _ValidatingAdmissionPolicyBinding)."""
    for key in ("resourceRules", "excludeResourceRules"):
        for rule in match.get(key) or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


VALIDATION_REASONS = ("Forbidden", "Invalid", "RequestEntityTooLarge")  # sets.List: sorted
VALIDATION_ACTIONS = ("Audit", "Deny", "Warn")
PARAMETER_NOT_FOUND_ACTIONS = ("Deny", "Allow")  # kube lists them in this order, unsorted
_CEL_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*")


def _param_kind(kind: Any, path: str) -> list[Cause]:
    """validateParamKind: apiVersion required, ``group/version`` with a DNS-subdomain group and a DNS-1035
    version; kind required, a DNS-1035 label once lower-cased."""
    kind = _dict(kind)
    out: list[Cause] = []
    api_version = _text(kind.get("apiVersion"))
    if not api_version:
        out.append(required(f"{path}.apiVersion"))
    elif api_version.count("/") > 1:
        out.append(invalid(f"{path}.apiVersion", api_version, f"unexpected GroupVersion string: {api_version}"))
    elif api_version != "/":
        group, _, version = api_version.rpartition("/")
        if group and is_dns1123_subdomain(group):
            out.append(invalid(f"{path}.apiVersion", group, ",".join(is_dns1123_subdomain(group))))
        if not version:
            out.append(invalid(f"{path}.apiVersion", api_version, "version must be specified"))
        elif is_dns1035_label(version):
            out.append(invalid(f"{path}.apiVersion", version, ",".join(is_dns1035_label(version))))
    name = _text(kind.get("kind"))
    if not name:
        out.append(required(f"{path}.kind"))
    elif is_dns1035_label(name.lower()):
        out.append(invalid(f"{path}.kind", name, "may have mixed case, but should otherwise match: "
                           + ",".join(is_dns1035_label(name.lower()))))
    return out


def _named_rule(rule: Any, path: str) -> list[Cause]:
    """validateNamedRuleWithOperations: resourceNames path segments and unique, then the rule."""
    names = _list(_dict(rule).get("resourceNames"))
    out: list[Cause] = []
    for i, name in enumerate(names):
        out.extend(invalid(f"{path}.resourceNames[{i}]", name, m) for m in is_valid_path_segment_name(str(name)))
        if name in names[:i]:
            out.append(duplicate(f"{path}.resourceNames[{i}]", name))
    return out + validate_rule(rule, path)


def _match_resources(match: Obj, path: str) -> list[Cause]:
    """validateMatchResources: matchPolicy, the two selectors (required; the defaults set them), the rules."""
    out: list[Cause] = []
    policy = match.get("matchPolicy")
    if policy is None:
        out.append(required(f"{path}.matchPolicy"))
    elif policy not in MATCH_POLICIES:
        out.append(not_supported(f"{path}.matchPolicy", policy, MATCH_POLICIES))
    for key in ("namespaceSelector", "objectSelector"):
        if match.get(key) is None:
            out.append(required(f"{path}.{key}"))
        else:
            out.extend(validate_label_selector(match[key], f"{path}.{key}"))
    for key in ("resourceRules", "excludeResourceRules"):
        for i, rule in enumerate(_list(match.get(key))):
            out.extend(_named_rule(rule, f"{path}.{key}[{i}]"))
    return out


def _validation(item: Any, path: str) -> list[Cause]:
    """validateValidation: expression (its syntax), messageExpression, message, reason."""
    item = _dict(item)
    out: list[Cause] = []
    expression, message, message_expression = (item.get(k) if isinstance(item.get(k), str) else ""
                                                for k in ("expression", "message", "messageExpression"))
    if not expression.strip():
        out.append(required(f"{path}.expression", "expression is not specified"))
    else:
        out.extend(cel_syntax(f"{path}.expression", expression))
    if message_expression and not message_expression.strip():
        out.append(invalid(f"{path}.messageExpression", message_expression, "must be non-empty if specified"))
    elif message_expression.strip():
        out.extend(cel_syntax(f"{path}.messageExpression", message_expression))
    if message and not message.strip():
        out.append(invalid(f"{path}.message", message, "message must be non-empty if specified"))
    elif "\n" in message.strip():
        out.append(invalid(f"{path}.message", message, "message must not contain line breaks"))
    reason = item.get("reason")
    if reason is not None and reason not in VALIDATION_REASONS:
        out.append(not_supported(f"{path}.reason", reason, VALIDATION_REASONS))
    return out


def validate_policy(obj: Obj) -> list[Cause]:
    """ValidateValidatingAdmissionPolicy, in kube's order (expressions are checked for CEL syntax, not for types or
    cost: the admission service compiles them when the policy is used): failurePolicy,
    paramKind, ``spec.matchConstraints: Required value`` and its ``resourceRules`` (at least one, for the type
    information), matchConditions, variables, then validations or auditAnnotations (``Required value: validations
    or auditAnnotations must contain at least one item`` on both)."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    failure = spec.get("failurePolicy")
    if failure is None:
        out.append(required("spec.failurePolicy"))
    elif failure not in FAILURE_POLICIES:
        out.append(not_supported("spec.failurePolicy", failure, FAILURE_POLICIES))
    if spec.get("paramKind") is not None:
        out.extend(_param_kind(spec["paramKind"], "spec.paramKind"))
    constraints = spec.get("matchConstraints")
    if constraints is None:
        out.append(required("spec.matchConstraints"))
    else:
        out.extend(_match_resources(_dict(constraints), "spec.matchConstraints"))
        if not _list(_dict(constraints).get("resourceRules")):
            out.append(required("spec.matchConstraints.resourceRules"))
    out.extend(validate_match_conditions(spec.get("matchConditions"), "spec.matchConditions"))
    for i, variable in enumerate(_list(spec.get("variables"))):
        variable, vpath = _dict(variable), f"spec.variables[{i}]"
        name = _text(variable.get("name"))
        if not name.strip():
            out.append(required(f"{vpath}.name", "name is not specified"))
        elif not _CEL_IDENTIFIER.fullmatch(name):
            out.append(invalid(f"{vpath}.name", name, "name is not a valid CEL identifier"))
        expression = _text(variable.get("expression"))
        if not expression.strip():
            out.append(required(f"{vpath}.expression", "expression is not specified"))
        else:
            out.extend(cel_syntax(f"{vpath}.expression", expression))
    validations, annotations = _list(spec.get("validations")), _list(spec.get("auditAnnotations"))
    if not validations and not annotations:
        for key in ("validations", "auditAnnotations"):
            out.append(required(f"spec.{key}", "validations or auditAnnotations must contain at least one item"))
        return out
    for i, item in enumerate(validations):
        out.extend(_validation(item, f"spec.validations[{i}]"))
    policy_name = str(_dict(obj.get("metadata")).get("name") or "")
    for i, annotation in enumerate(annotations):
        annotation, apath = _dict(annotation), f"spec.auditAnnotations[{i}]"
        key = _text(annotation.get("key"))
        qualified = f"{policy_name}/{key}"
        out.extend(invalid(f"{apath}.key", qualified, m) for m in is_qualified_name(qualified))
        value_expression = str(annotation.get("valueExpression") or "")
        if not value_expression.strip():
            out.append(required(f"{apath}.valueExpression", "valueExpression is not specified"))
        else:
            out.extend(cel_syntax(f"{apath}.valueExpression", value_expression))
        if key in [_dict(a).get("key") for a in annotations[:i]]:
            out.append(duplicate(f"{apath}.key", key))
    return out


def _param_ref(ref: Obj, path: str) -> list[Cause]:
    """validateParamRef: ``name`` a path segment name, ``name`` xor ``selector`` (``Forbidden: name and selector
    are mutually exclusive`` on both), the selector valid, ``Required value: one of name or selector must be
    specified``, then ``parameterNotFoundAction`` required and Deny or Allow. (``namespace`` is not checked.)"""
    out: list[Cause] = []
    name, selector = _text(ref.get("name")), ref.get("selector")
    if name:
        out.extend(invalid(f"{path}.name", name, m) for m in is_valid_path_segment_name(name))
        if selector is not None:
            out.append(forbidden(f"{path}.name", "name and selector are mutually exclusive"))
    if selector is not None:
        out.extend(validate_label_selector(selector, f"{path}.selector"))
        if name:
            out.append(forbidden(f"{path}.selector", "name and selector are mutually exclusive"))
    if not name and selector is None:
        out.append(required(path, "one of name or selector must be specified"))
    action = ref.get("parameterNotFoundAction")
    if not action:
        out.append(required(f"{path}.parameterNotFoundAction"))
    elif action not in PARAMETER_NOT_FOUND_ACTIONS:
        out.append(not_supported(f"{path}.parameterNotFoundAction", action, PARAMETER_NOT_FOUND_ACTIONS))
    return out


def validate_binding(obj: Obj) -> list[Cause]:
    """validateValidatingAdmissionPolicyBindingSpec in kube's order: policyName (required, a DNS subdomain),
    paramRef (:func:`_param_ref`), matchResources (matchPolicy, selectors, resourceRules and excludeResourceRules
    as a policy's matchConstraints, none required), then validationActions (each Audit/Deny/Warn and unique, not
    both Deny and Warn, at least one)."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    name = _text(spec.get("policyName"))
    if not name:
        out.append(required("spec.policyName"))
    else:
        out.extend(invalid("spec.policyName", name, m) for m in is_dns1123_subdomain(name))
    if spec.get("paramRef") is not None:
        out.extend(_param_ref(_dict(spec["paramRef"]), "spec.paramRef"))
    if spec.get("matchResources") is not None:
        out.extend(_match_resources(_dict(spec["matchResources"]), "spec.matchResources"))
    actions = _list(spec.get("validationActions"))
    for i, action in enumerate(actions):
        if action not in VALIDATION_ACTIONS:
            out.append(not_supported(f"spec.validationActions[{i}]", action, VALIDATION_ACTIONS))
        if action in actions[:i]:
            out.append(duplicate(f"spec.validationActions[{i}]", action))
    if "Deny" in actions and "Warn" in actions:
        out.append(Cause("FieldValueInvalid", f"Invalid value: []admissionregistration.ValidationAction"
                         f"{go_strings(actions)[len('[]string'):]}: must not contain both Deny and Warn (repeating "
                         "the same validation failure information in the API response and headers serves no purpose)",
                         "spec.validationActions"))
    if not actions:
        out.append(required("spec.validationActions", "at least one validation action is required"))
    return out


@register
class ValidatingAdmissionPolicyBindingStrategy(Strategy):
    """ValidatingAdmissionPolicyBinding: the matchResources defaults, :func:`validate_binding`."""

    group, kind = GROUP, "ValidatingAdmissionPolicyBinding"
    validates_required = True

    def default(self, obj: Obj) -> None:
        """matchResources: matchPolicy Equivalent, selectors {}, rule scope "*" (SetDefaults_MatchResources)."""
        match = spec_of(obj).get("matchResources")
        if isinstance(match, dict):
            match.setdefault("matchPolicy", "Equivalent")
            match.setdefault("namespaceSelector", {})
            match.setdefault("objectSelector", {})
            _default_rule_scopes(match)

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_binding`."""
        return validate_binding(obj)
