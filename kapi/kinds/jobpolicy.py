"""A Job's podFailurePolicy and successPolicy rules, as kube's validateJobSpec checks them.

Source: ``pkg/apis/batch/validation/validation.go`` (validatePodFailurePolicy, validatePodFailurePolicyRule,
validatePodFailurePolicyRuleOnExitCodes, validatePodFailurePolicyRuleOnPodConditions, validateSuccessPolicy,
validateSuccessPolicyRule, validateIndexesFormat, parseIndexInterval). Causes carry paths under ``spec``;
:func:`kapi.kinds.batch.job_spec_causes` moves them under a CronJob's ``spec.jobTemplate.spec``.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.fields import duplicate, not_supported, too_long_total, too_many
from kapi.objectmeta import go_quote, invalid, required
from kapi.validation import is_qualified_name
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

MAX_RULES = 20  # maxPodFailurePolicyRules, maxSuccessPolicyRule
MAX_EXIT_CODES = 255  # maxPodFailurePolicyOnExitCodesValues
MAX_CONDITION_PATTERNS = 20  # maxPodFailurePolicyOnPodConditionsPatterns
MAX_SUCCEEDED_INDEXES = 64 * 1024  # maxJobSuccessPolicySucceededIndexesLimit, bytes

ACTIONS = ("Count", "FailIndex", "FailJob", "Ignore")  # sets.List: sorted
OPERATORS = ("In", "NotIn")
CONDITION_STATUSES = ("False", "True", "Unknown")
NONNEGATIVE = "must be greater than or equal to 0"
# field.Invalid(..., *spec.SuccessPolicy, ...) prints the internal struct with %#v, pointer addresses
# included: not reproducible, so the value is elided as the immutability messages do.
SUCCESS_POLICY_VALUE = "batch.SuccessPolicy{...}"


def _valid_values(values: tuple[str, ...]) -> str:
    """``fmt.Sprintf("valid values: %q", list)``: ``valid values: ["a" "b"]``."""
    return "valid values: [" + " ".join(go_quote(v) for v in values) + "]"


def _int32s(values: Any) -> str:
    """A []int32 as %#v prints it: ``[]int32{1, 2}``, ``[]int32(nil)`` for an absent list."""
    if not isinstance(values, list):
        return "[]int32(nil)"
    return "[]int32{" + ", ".join(str(v) for v in values) + "}"


def _omit(path: str, detail: str) -> Cause:
    """field.Invalid with field.OmitValueType{}: ``Invalid value: <detail>``."""
    return Cause("FieldValueInvalid", f"Invalid value: {detail}", path)


def _atoi(text: str) -> int | None:
    """Go's strconv.Atoi (64-bit): an optional sign and decimal digits within int64, else None."""
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def index_interval(text: str, completions: int) -> tuple[int, int]:
    """parseIndexInterval: ``x`` or ``x-y`` (each below ``completions``) as (first, last); raises ValueError with
    kube's message."""
    parts = text.split("-")
    if len(parts) > 2:
        raise ValueError(f"the fragment {go_quote(text)} violates the requirement that an index interval can have at "
                         "most two parts separated by '-'")
    x = _atoi(parts[0])
    if x is None:
        raise ValueError(f"cannot convert string to integer for index: {go_quote(parts[0])}")
    if x >= completions:
        raise ValueError(f"too large index: {go_quote(parts[0])}")
    if len(parts) == 1:
        return x, x
    y = _atoi(parts[1])
    if y is None:
        raise ValueError(f"cannot convert string to integer for index: {go_quote(parts[1])}")
    if y >= completions:
        raise ValueError(f"too large index: {go_quote(parts[1])}")
    if x >= y:
        raise ValueError(f"non-increasing order, previous: {x}, current: {y}")
    return x, y


def indexes_total(text: str, completions: int) -> int:
    """validateIndexesFormat: how many indexes ``"1,3-5"`` names (0 for ""); raises ValueError (kube's text)."""
    if not text:
        return 0
    last: int | None = None
    total = 0
    for part in text.split(","):
        x, y = index_interval(part, completions)
        if last is not None and last >= x:
            raise ValueError(f"non-increasing order, previous: {last}, current: {x}")
        total += y - x + 1
        last = y
    return total


def _exit_codes(requirement: Any, path: str, containers: set[str]) -> list[Cause]:
    requirement = _dict(requirement)
    out: list[Cause] = []
    operator = requirement.get("operator") or ""
    if not operator:
        out.append(required(f"{path}.operator", _valid_values(OPERATORS)))
    elif operator not in OPERATORS:
        out.append(not_supported(f"{path}.operator", operator, OPERATORS))
    name = requirement.get("containerName")
    if isinstance(name, str) and name not in containers:
        out.append(invalid(f"{path}.containerName", name,
                           "must be one of the container or initContainer names in the pod template"))
    values = requirement.get("values")
    codes = [v for v in _list(values) if isinstance(v, int) and not isinstance(v, bool)]
    if not codes:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {_int32s(values)}: at least one value is required",
                         f"{path}.values"))
    elif len(codes) > MAX_EXIT_CODES:
        out.append(too_many(f"{path}.values", len(codes), MAX_EXIT_CODES))
    seen: set[int] = set()
    ordered = True
    for j, code in enumerate(codes):
        if operator == "In" and code == 0:
            out.append(invalid(f"{path}.values[{j}]", code, "must not be 0 for the In operator"))
        if code in seen:
            out.append(duplicate(f"{path}.values[{j}]", code))
        seen.add(code)
        if j > 0 and codes[j - 1] > code:
            ordered = False
    if not ordered:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {_int32s(codes)}: must be ordered", f"{path}.values"))
    return out


def _pod_conditions(patterns: list[Any], path: str) -> list[Cause]:
    out: list[Cause] = []
    if len(patterns) > MAX_CONDITION_PATTERNS:
        out.append(too_many(path, len(patterns), MAX_CONDITION_PATTERNS))
    for j, pattern in enumerate(patterns):
        pattern = _dict(pattern)
        kind = str(pattern.get("type") or "")
        out.extend(invalid(f"{path}[{j}].type", kind, msg) for msg in is_qualified_name(kind))
        status = pattern.get("status") or ""
        if not status:
            out.append(required(f"{path}[{j}].status", _valid_values(CONDITION_STATUSES)))
        elif status not in CONDITION_STATUSES:
            out.append(not_supported(f"{path}[{j}].status", status, CONDITION_STATUSES))
    return out


def pod_failure_policy_causes(spec: dict[str, Any]) -> list[Cause]:
    """validatePodFailurePolicy of ``spec.podFailurePolicy`` ([] without one): at most 20 rules; each rule's
    action (``FailIndex`` needs backoffLimitPerIndex), its onExitCodes (operator, containerName one of the
    template's containers or init containers, 1-255 values, not 0 for In, unique, ordered) or its
    onPodConditions (at most 20; type a qualified name, status True/False/Unknown), exactly one of the two."""
    policy = spec.get("podFailurePolicy")
    if not isinstance(policy, dict):
        return []
    path = "spec.podFailurePolicy.rules"
    rules = _list(policy.get("rules"))
    out: list[Cause] = []
    if len(rules) > MAX_RULES:
        out.append(too_many(path, len(rules), MAX_RULES))
    pod = _dict(_dict(spec.get("template")).get("spec"))
    containers = {str(_dict(c).get("name", "")) for key in ("containers", "initContainers")
                  for c in _list(pod.get(key))}
    for i, rule in enumerate(rules):
        rule, here = _dict(rule), f"{path}[{i}]"
        action = rule.get("action") or ""
        if not action:
            out.append(required(f"{here}.action", _valid_values(ACTIONS)))
        elif action == "FailIndex":
            if spec.get("backoffLimitPerIndex") is None:
                out.append(invalid(f"{here}.action", action, "requires the backoffLimitPerIndex to be set"))
        elif action not in ACTIONS:
            out.append(not_supported(f"{here}.action", action, ACTIONS))
        exit_codes, conditions = rule.get("onExitCodes"), _list(rule.get("onPodConditions"))
        if exit_codes is not None:
            out.extend(_exit_codes(exit_codes, f"{here}.onExitCodes", containers))
        if conditions:
            out.extend(_pod_conditions(conditions, f"{here}.onPodConditions"))
        if exit_codes is not None and conditions:
            out.append(_omit(here, "specifying both OnExitCodes and OnPodConditions is not supported"))
        if exit_codes is None and not conditions:
            out.append(_omit(here, "specifying one of OnExitCodes and OnPodConditions is required"))
    return out


def success_policy_causes(spec: dict[str, Any]) -> list[Cause]:
    """The successPolicy part of validateJobSpec ([] without one): Indexed only; 1-20 rules, each with
    succeededCount and/or succeededIndexes (at most 64 KiB, validateIndexesFormat), the count >= 0 and at most
    the completions and the indexes named."""
    policy = spec.get("successPolicy")
    if not isinstance(policy, dict):
        return []
    if spec.get("completionMode") != "Indexed":
        return [Cause("FieldValueInvalid", f"Invalid value: {SUCCESS_POLICY_VALUE}: requires indexed completion mode",
                      "spec.successPolicy")]
    path = "spec.successPolicy.rules"
    rules = _list(policy.get("rules"))
    out: list[Cause] = []
    if not rules:
        out.append(required(path, "at least one rules must be specified when the successPolicy is specified"))
    if len(rules) > MAX_RULES:
        out.append(too_many(path, len(rules), MAX_RULES))
    completions = spec.get("completions")
    for i, rule in enumerate(rules):
        rule, here = _dict(rule), f"{path}[{i}]"
        count, indexes = rule.get("succeededCount"), rule.get("succeededIndexes")
        if count is None and indexes is None:
            out.append(required(here, "at least one of succeededCount or succeededIndexes must be specified"))
        total = 0
        if isinstance(indexes, str):
            if len(indexes.encode()) > MAX_SUCCEEDED_INDEXES:
                out.append(too_long_total(f"{here}.succeededIndexes", MAX_SUCCEEDED_INDEXES))
            if isinstance(completions, int):
                try:
                    total = indexes_total(indexes, completions)
                except ValueError as exc:
                    out.append(invalid(f"{here}.succeededIndexes", indexes, f"error parsing succeededIndexes: {exc}"))
        if isinstance(count, int) and not isinstance(count, bool):
            if count < 0:
                out.append(invalid(f"{here}.succeededCount", count, NONNEGATIVE))
            if isinstance(completions, int) and count > completions:
                out.append(invalid(f"{here}.succeededCount", count, f"must be less than or equal to {completions} "
                                   "(the number of specified completions)"))
            if indexes is not None and count > total:
                out.append(invalid(f"{here}.succeededCount", count, f"must be less than or equal to {total} (the "
                                   "number of indexes in the specified succeededIndexes field)"))
    return out
