"""Pod affinity and topology spread constraint validation (kube 1.37).

From ``pkg/apis/core/validation/validation.go``: ``validateAffinity`` (with
``validateNodeAffinity``, ``ValidateNodeSelector``, ``ValidateNodeSelectorTerm``,
``ValidateNodeSelectorRequirement``, ``ValidateNodeFieldSelectorRequirement``,
``ValidatePreferredSchedulingTerms``, ``validatePodAffinity``, ``validatePodAntiAffinity``,
``validatePodAffinityTerms``, ``validateWeightedPodAffinityTerms``, ``validatePodAffinityTerm``,
``ValidatePodAffinityTermSelector`` and ``ValidateMatchLabelKeysAndMismatchLabelKeys``) and
``validateTopologySpreadConstraints`` (with ``ValidatePositiveField``, ``ValidateTopologyKey``,
``ValidateWhenUnsatisfiable``, ``ValidateSpreadConstraintNotRepeat``, ``validateMinDomains``,
``validateNodeInclusionPolicy``).

The objects are the stored v1 JSON after defaulting and after PrepareForCreate's
``mutatePodAffinity`` / ``mutateTopologySpreadConstraints`` merged ``matchLabelKeys`` and
``mismatchLabelKeys`` into the label selectors (:func:`kapi.kinds.core.merge_match_label_keys`):
the "exists in both matchLabelKeys and labelSelector" rule counts on that merge, as kube's does.
Absent keys are Go zero values; values of the wrong JSON type are left to the schema layer.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.fields import duplicate, not_supported, validate_label_selector
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

WEIGHT_RANGE = "must be in the range 1-100"
NOT_POSITIVE = "must be greater than zero"  # validation.go isNotPositiveErrorMsg
CAN_NOT_BE_EMPTY = "can not be empty"
IN_NOT_IN_VALUES = "must be specified when `operator` is 'In' or 'NotIn'"
EXISTS_VALUES = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
GT_LT_VALUES = "must be specified single value when `operator` is 'Lt' or 'Gt'"
FIELD_IN_NOT_IN_VALUES = "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"
BAD_OPERATOR = "not a valid selector operator"
BAD_FIELD_KEY = "not a valid field selector key"
NO_NODE_SELECTOR_TERMS = "must have at least one node selector term"
KEYS_WITHOUT_SELECTOR = "must not be specified when labelSelector is not set"
KEY_IN_SELECTOR = "exists in both matchLabelKeys and labelSelector"
KEY_IN_MISMATCH = "exists in both matchLabelKeys and mismatchLabelKeys"
SCHEDULE_ACTIONS = ("DoNotSchedule", "ScheduleAnyway")  # sets.List(supportedScheduleActions), sorted
NODE_INCLUSION_POLICIES = ("Honor", "Ignore")  # sets.List(supportedPodTopologySpreadNodePolicies), sorted
NODE_FIELD_KEYS = ("metadata.name",)  # nodeFieldSelectorValidators (ValidateNodeName: a DNS-1123 subdomain)
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    return [_str(v) for v in _list(value)]


def _label_name(key: str, path: str) -> list[Cause]:
    """metav1validation.ValidateLabelName: one ``Invalid value`` per IsQualifiedName message."""
    return [invalid(path, key, msg) for msg in is_qualified_name(key)]


def validate_affinity(affinity: Any, path: str, *, allow_invalid_label_value_in_selector: bool = False,
                      allow_invalid_label_value_in_required_node_affinity: bool = False) -> list[Cause]:
    """validateAffinity of ``spec.affinity`` (a v1 ``Affinity`` object) with causes under ``path``.

    In kube's order: ``nodeAffinity`` (validateNodeAffinity: the required NodeSelector's
    ``nodeSelectorTerms`` must be non-empty, each term's ``matchExpressions`` / ``matchFields`` as
    :func:`validate_node_selector_term`; each preferred term's ``weight`` 1-100 and its ``preference``, whose
    label values are not checked), then ``podAffinity`` and ``podAntiAffinity`` (each required term, then each
    weighted term: ``weight`` 1-100 and its ``podAffinityTerm``, as :func:`validate_pod_affinity_term`).

    The two flags are PodValidationOptions' AllowInvalidLabelValueInSelector and
    AllowInvalidLabelValueInRequiredNodeAffinity (False on create). Absent, ``null`` or a non-object: [].
    """
    if not isinstance(affinity, dict):
        return []
    out: list[Cause] = []
    node = affinity.get("nodeAffinity")
    if isinstance(node, dict):
        out.extend(_node_affinity(node, f"{path}.nodeAffinity", allow_invalid_label_value_in_required_node_affinity))
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind)
        if isinstance(section, dict):
            out.extend(_pod_affinity(section, f"{path}.{kind}", allow_invalid_label_value_in_selector))
    return out


def _node_affinity(node: dict[str, Any], path: str, allow_invalid_values: bool) -> list[Cause]:
    """validateNodeAffinity."""
    out: list[Cause] = []
    selector = node.get(REQUIRED)
    if isinstance(selector, dict):
        out.extend(validate_node_selector(selector, f"{path}.{REQUIRED}",
                                          allow_invalid_label_value=allow_invalid_values))
    for i, term in enumerate(_list(node.get(PREFERRED))):
        term = _dict(term)
        tpath = f"{path}.{PREFERRED}[{i}]"
        weight = 0 if term.get("weight") is None else _int(term.get("weight"))
        if weight is not None and not 1 <= weight <= 100:
            out.append(invalid(f"{tpath}.weight", weight, WEIGHT_RANGE))
        # kube always allows invalid label values in preferred terms (they may still match on a single node)
        out.extend(validate_node_selector_term(term.get("preference"), f"{tpath}.preference",
                                               allow_invalid_label_value=True))
    return out


def validate_node_selector(selector: Any, path: str, *, allow_invalid_label_value: bool = False) -> list[Cause]:
    """ValidateNodeSelector of a v1 ``NodeSelector`` at ``path``: no ``nodeSelectorTerms`` is
    ``<path>.nodeSelectorTerms: Required value: must have at least one node selector term`` (and nothing
    else); otherwise each term as :func:`validate_node_selector_term` at ``nodeSelectorTerms[<i>]``."""
    terms = _list(_dict(selector).get("nodeSelectorTerms"))
    tpath = f"{path}.nodeSelectorTerms"
    if not terms:
        return [required(tpath, NO_NODE_SELECTOR_TERMS)]
    out: list[Cause] = []
    for i, term in enumerate(terms):
        out.extend(validate_node_selector_term(term, f"{tpath}[{i}]",
                                               allow_invalid_label_value=allow_invalid_label_value))
    return out


def validate_node_selector_term(term: Any, path: str, *, allow_invalid_label_value: bool = False) -> list[Cause]:
    """ValidateNodeSelectorTerm: every ``matchExpressions[<j>]`` (ValidateNodeSelectorRequirement), then every
    ``matchFields[<j>]`` (ValidateNodeFieldSelectorRequirement). [] when valid or absent.

    A requirement: In/NotIn need ``values`` (``Required value: must be specified when `operator` is 'In' or
    'NotIn'``), Exists/DoesNotExist forbid them, Gt/Lt need exactly one (``Required value: must be specified
    single value when `operator` is 'Lt' or 'Gt'``), another operator is ``Invalid value: "X": not a valid
    selector operator``; the key is a qualified name; each value a label value unless
    ``allow_invalid_label_value``. A field requirement: In/NotIn with exactly one value, no other operator, key
    ``metadata.name`` (else ``Invalid value: "k": not a valid field selector key``) and values DNS-1123
    subdomains (node names).
    """
    term = _dict(term)
    out: list[Cause] = []
    for j, expr in enumerate(_list(term.get("matchExpressions"))):
        out.extend(_node_requirement(_dict(expr), f"{path}.matchExpressions[{j}]", allow_invalid_label_value))
    for j, expr in enumerate(_list(term.get("matchFields"))):
        out.extend(_node_field_requirement(_dict(expr), f"{path}.matchFields[{j}]"))
    return out


def _node_requirement(expr: dict[str, Any], path: str, allow_invalid_values: bool) -> list[Cause]:
    """ValidateNodeSelectorRequirement."""
    out: list[Cause] = []
    operator, values = _str(expr.get("operator")), _list(expr.get("values"))
    if operator in ("In", "NotIn"):
        if not values:
            out.append(required(f"{path}.values", IN_NOT_IN_VALUES))
    elif operator in ("Exists", "DoesNotExist"):
        if values:
            out.append(forbidden(f"{path}.values", EXISTS_VALUES))
    elif operator in ("Gt", "Lt"):
        if len(values) != 1:
            out.append(required(f"{path}.values", GT_LT_VALUES))
    else:
        out.append(invalid(f"{path}.operator", operator, BAD_OPERATOR))
    out.extend(_label_name(_str(expr.get("key")), f"{path}.key"))
    if not allow_invalid_values:
        for i, value in enumerate(values):
            if isinstance(value, str):
                out.extend(invalid(f"{path}.values[{i}]", value, msg) for msg in is_valid_label_value(value))
    return out


def _node_field_requirement(expr: dict[str, Any], path: str) -> list[Cause]:
    """ValidateNodeFieldSelectorRequirement."""
    out: list[Cause] = []
    operator, values = _str(expr.get("operator")), _list(expr.get("values"))
    if operator in ("In", "NotIn"):
        if len(values) != 1:
            out.append(required(f"{path}.values", FIELD_IN_NOT_IN_VALUES))
    else:
        out.append(invalid(f"{path}.operator", operator, BAD_OPERATOR))
    key = _str(expr.get("key"))
    if key not in NODE_FIELD_KEYS:
        out.append(invalid(f"{path}.key", key, BAD_FIELD_KEY))
    else:
        for i, value in enumerate(values):
            if isinstance(value, str):
                out.extend(invalid(f"{path}.values[{i}]", value, msg) for msg in is_dns1123_subdomain(value))
    return out


def _pod_affinity(section: dict[str, Any], path: str, allow_invalid_values: bool) -> list[Cause]:
    """validatePodAffinity / validatePodAntiAffinity: required terms, then weighted terms."""
    out: list[Cause] = []
    for i, term in enumerate(_list(section.get(REQUIRED))):
        out.extend(validate_pod_affinity_term(term, f"{path}.{REQUIRED}[{i}]",
                                              allow_invalid_label_value_in_selector=allow_invalid_values))
    for j, weighted in enumerate(_list(section.get(PREFERRED))):
        weighted = _dict(weighted)
        wpath = f"{path}.{PREFERRED}[{j}]"
        weight = 0 if weighted.get("weight") is None else _int(weighted.get("weight"))
        if weight is not None and not 1 <= weight <= 100:
            out.append(invalid(f"{wpath}.weight", weight, WEIGHT_RANGE))
        out.extend(validate_pod_affinity_term(weighted.get("podAffinityTerm"), f"{wpath}.podAffinityTerm",
                                              allow_invalid_label_value_in_selector=allow_invalid_values))
    return out


def validate_pod_affinity_term(term: Any, path: str, *,
                               allow_invalid_label_value_in_selector: bool = False) -> list[Cause]:
    """validatePodAffinityTerm of a v1 ``PodAffinityTerm`` at ``path``, in kube's order:

    ``labelSelector`` then ``namespaceSelector`` (ValidatePodAffinityTermSelector, the label selector rules of
    :func:`kapi.kinds.fields.validate_label_selector`); each of ``namespaces`` a DNS-1123 label, reported at
    ``<path>.namespace`` (kube's singular name, no index); ``matchLabelKeys`` / ``mismatchLabelKeys`` as
    :func:`validate_match_label_keys`; an empty ``topologyKey`` is ``Required value: can not be empty``, and
    the key is then checked as a qualified name (an empty one adds those messages too).
    """

    term = _dict(term)
    out: list[Cause] = []
    selector = term.get("labelSelector")
    for name in ("labelSelector", "namespaceSelector"):
        if isinstance(term.get(name), dict):
            out.extend(validate_label_selector(term[name], f"{path}.{name}",
                                               allow_invalid_label_values=allow_invalid_label_value_in_selector))
    for namespace in _list(term.get("namespaces")):
        if isinstance(namespace, str):
            out.extend(invalid(f"{path}.namespace", namespace, msg) for msg in is_dns1123_label(namespace))
    out.extend(validate_match_label_keys(path, term.get("matchLabelKeys"), term.get("mismatchLabelKeys"),
                                         selector))
    topology_key = _str(term.get("topologyKey"))
    if not topology_key:
        out.append(required(f"{path}.topologyKey", CAN_NOT_BE_EMPTY))
    out.extend(_label_name(topology_key, f"{path}.topologyKey"))
    return out


def validate_match_label_keys(path: str, match_label_keys: Any, mismatch_label_keys: Any,
                              label_selector: Any) -> list[Cause]:
    """ValidateMatchLabelKeysAndMismatchLabelKeys at ``path`` (a pod affinity term, or a topology spread
    constraint with no mismatch keys).

    1. Each list, when non-empty, needs a ``labelSelector`` (``<path>.matchLabelKeys: Forbidden: must not be
       specified when labelSelector is not set``, the same for ``mismatchLabelKeys``), and else each key is a
       qualified name (``<path>.matchLabelKeys[<i>]``).
    2. With a selector: a ``matchExpressions`` key that is a match label key and already appeared in
       ``matchLabels`` or an earlier expression (the merged ``In`` expression makes an authored one appear
       twice) is ``<path>[<i>]: Invalid value: "k": exists in both matchLabelKeys and labelSelector`` (kube
       indexes ``path`` itself; ``i`` is the key's last index in matchLabelKeys).
    3. A match label key that is also a mismatch label key: ``<path>.matchLabelKeys[<i>]: Invalid value: "k":
       exists in both matchLabelKeys and mismatchLabelKeys``.
    """
    match_keys, mismatch_keys = _strings(match_label_keys), _strings(mismatch_label_keys)
    has_selector = isinstance(label_selector, dict)
    out: list[Cause] = []
    for name, keys in (("matchLabelKeys", match_keys), ("mismatchLabelKeys", mismatch_keys)):
        if not keys:
            continue
        if not has_selector:
            out.append(forbidden(f"{path}.{name}", KEYS_WITHOUT_SELECTOR))
            continue
        for i, key in enumerate(keys):
            out.extend(_label_name(key, f"{path}.{name}[{i}]"))
    if has_selector:
        positions = {key: i for i, key in enumerate(match_keys)}
        seen = {k for k in _dict(label_selector.get("matchLabels")) if isinstance(k, str)}
        for expr in _list(label_selector.get("matchExpressions")):
            key = _str(_dict(expr).get("key"))
            if key in positions and key in seen:
                out.append(invalid(f"{path}[{positions[key]}]", key, KEY_IN_SELECTOR))
            seen.add(key)
    mismatch = set(mismatch_keys)
    for i, key in enumerate(match_keys):
        if key in mismatch:
            out.append(invalid(f"{path}.matchLabelKeys[{i}]", key, KEY_IN_MISMATCH))
    return out


def validate_topology_spread_constraints(constraints: Any, path: str, *,
                                         allow_invalid_label_selector: bool = False) -> list[Cause]:
    """validateTopologySpreadConstraints of ``spec.topologySpreadConstraints`` (a list) under ``path``.

    For each constraint ``<path>[<i>]``, in kube's order: ``maxSkew`` > 0 (``Invalid value: 0: must be greater
    than zero``); an empty ``topologyKey`` is ``Required value: can not be empty`` (no format check);
    ``whenUnsatisfiable`` DoNotSchedule or ScheduleAnyway (``Unsupported value``); a later constraint with the
    same pair is ``<path>[<i>].{topologyKey, whenUnsatisfiable}: Duplicate value: "{key, action}"`` (on the
    first of them); a set ``minDomains`` > 0 and only with DoNotSchedule (``Invalid value: 2: can only use
    minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway``); set ``nodeAffinityPolicy`` /
    ``nodeTaintsPolicy`` Honor or Ignore; ``matchLabelKeys`` as :func:`validate_match_label_keys` at the
    constraint's path (MatchLabelKeysInPodTopologySpreadSelectorMerge, on by default since 1.34); then the
    ``labelSelector`` rules unless ``allow_invalid_label_selector``
    (AllowInvalidTopologySpreadConstraintLabelSelector, an update option). [] when valid or absent.
    """

    items = [_dict(c) for c in _list(constraints)]
    out: list[Cause] = []
    for i, constraint in enumerate(items):
        cpath = f"{path}[{i}]"
        skew = 0 if constraint.get("maxSkew") is None else _int(constraint.get("maxSkew"))
        if skew is not None and skew <= 0:
            out.append(invalid(f"{cpath}.maxSkew", skew, NOT_POSITIVE))
        topology_key = _str(constraint.get("topologyKey"))
        if not topology_key:
            out.append(required(f"{cpath}.topologyKey", CAN_NOT_BE_EMPTY))
        action = _str(constraint.get("whenUnsatisfiable"))
        if action not in SCHEDULE_ACTIONS:
            out.append(not_supported(f"{cpath}.whenUnsatisfiable", action, SCHEDULE_ACTIONS))
        if any(_str(o.get("topologyKey")) == topology_key and _str(o.get("whenUnsatisfiable")) == action
               for o in items[i + 1:]):
            out.append(duplicate(f"{cpath}.{{topologyKey, whenUnsatisfiable}}", f"{{{topology_key}, {action}}}"))
        min_domains = _int(constraint.get("minDomains"))
        if min_domains is not None:
            if min_domains <= 0:
                out.append(invalid(f"{cpath}.minDomains", min_domains, NOT_POSITIVE))
            if action != "DoNotSchedule":
                out.append(invalid(f"{cpath}.minDomains", min_domains,
                                   f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"))
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            policy = constraint.get(name)
            if isinstance(policy, str) and policy not in NODE_INCLUSION_POLICIES:
                out.append(not_supported(f"{cpath}.{name}", policy, NODE_INCLUSION_POLICIES))
        selector = constraint.get("labelSelector")
        out.extend(validate_match_label_keys(cpath, constraint.get("matchLabelKeys"), None, selector))
        if not allow_invalid_label_selector and isinstance(selector, dict):
            out.extend(validate_label_selector(selector, f"{cpath}.labelSelector"))
    return out
