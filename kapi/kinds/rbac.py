"""The rbac.authorization.k8s.io group's kinds: Role, ClusterRole, RoleBinding, ClusterRoleBinding.

Defaults (``pkg/apis/rbac/v1/defaults.go``: a binding's ``roleRef.apiGroup``
and a User/Group subject's ``apiGroup`` are the RBAC group) and validation
(``pkg/apis/rbac/validation/validation.go``) with kube's field paths and
messages. Names are path segments (ValidateRBACName), which the generic
ObjectMeta rules already apply (:func:`kapi.objectmeta.name_rule`).
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import go_quote, go_strings, go_value, not_supported, validate_label_selector
from kapi.objectmeta import RBAC_GROUP, invalid, required
from kapi.validation import is_dns1123_subdomain, is_valid_path_segment_name
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

GROUP = RBAC_GROUP
SUBJECT_KINDS = ("ServiceAccount", "User", "Group")  # kube's switch order, as NotSupported lists them
CANNOT_CHANGE_ROLE_REF = "cannot change roleRef"


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _invalid_list(path: str, values: Any, detail: str) -> Cause:
    """field.Invalid of a []string, printed as Go's %#v."""
    return Cause("FieldValueInvalid", f"Invalid value: {go_strings(values)}: {detail}", path)


def validate_policy_rule(rule: Any, namespaced: bool, path: str) -> list[Cause]:
    """ValidatePolicyRule: verbs required; nonResourceURLs only cluster-wide and never with resources; a resource
    rule needs apiGroups and resources."""
    rule = _dict(rule)
    out: list[Cause] = []
    if not _list(rule.get("verbs")):
        out.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    urls = _list(rule.get("nonResourceURLs"))
    if urls:
        if namespaced:
            out.append(_invalid_list(f"{path}.nonResourceURLs", urls,
                                     "namespaced rules cannot apply to non-resource URLs"))
        if any(_list(rule.get(key)) for key in ("apiGroups", "resources", "resourceNames")):
            out.append(_invalid_list(f"{path}.nonResourceURLs", urls,
                                     "rules cannot apply to both regular resources and non-resource URLs"))
        return out
    if not _list(rule.get("apiGroups")):
        out.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not _list(rule.get("resources")):
        out.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    return out


def _rules(obj: Obj, namespaced: bool) -> list[Cause]:
    out: list[Cause] = []
    for i, rule in enumerate(_list(obj.get("rules"))):
        out.extend(validate_policy_rule(rule, namespaced, f"rules[{i}]"))
    return out


def validate_subject(subject: Any, namespaced: bool, path: str) -> list[Cause]:
    """ValidateRoleBindingSubject: a name; ServiceAccount: a DNS-subdomain name, no apiGroup, a namespace in a
    ClusterRoleBinding; User and Group: apiGroup rbac.authorization.k8s.io; any other kind NotSupported."""
    subject = _dict(subject)
    name, kind, api_group = _str(subject.get("name")), _str(subject.get("kind")), _str(subject.get("apiGroup"))
    out: list[Cause] = []
    if not name:
        out.append(required(f"{path}.name"))
    if kind == "ServiceAccount":
        if name:
            out.extend(Cause("FieldValueInvalid", f"Invalid value: {go_quote(name)}: {msg}", f"{path}.name")
                       for msg in is_dns1123_subdomain(name))
        if api_group:
            out.append(not_supported(f"{path}.apiGroup", api_group, ("",)))
        if not namespaced and not _str(subject.get("namespace")):
            out.append(required(f"{path}.namespace"))
    elif kind in ("User", "Group"):
        if api_group != GROUP:
            out.append(not_supported(f"{path}.apiGroup", api_group, (GROUP,)))
    else:
        out.append(not_supported(f"{path}.kind", kind, SUBJECT_KINDS))
    return out


def role_ref_string(ref: Any) -> str:
    """The internal ``rbac.RoleRef`` as Go's %#v prints it (what ``cannot change roleRef`` shows)."""
    ref = _dict(ref)
    fields = ", ".join(f"{go_name}:{go_value(_str(ref.get(key)))}"
                       for go_name, key in (("APIGroup", "apiGroup"), ("Kind", "kind"), ("Name", "name")))
    return f"rbac.RoleRef{{{fields}}}"


def _role_ref_key(ref: Any) -> tuple[str, str, str]:
    ref = _dict(ref)
    return _str(ref.get("apiGroup")), _str(ref.get("kind")), _str(ref.get("name"))


class _RoleStrategy(Strategy):
    """Role and ClusterRole: each rule is a PolicyRule (ValidateRole, ValidateClusterRole)."""

    group = GROUP
    validates_required = True
    namespaced = True

    def default(self, obj: Obj) -> None:
        """No defaults; ``Rules []PolicyRule `json:"rules"``` has no ``omitempty``, so a role without rules is
        encoded ``rules: null`` (an aggregated ClusterRole before the controller fills it, a Role created empty)."""
        if obj.get("rules") is None:
            obj["rules"] = None

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateRole/ValidateClusterRole: every ``rules[i]`` (:func:`validate_policy_rule`)."""
        return _rules(obj, self.namespaced)


@register
class RoleStrategy(_RoleStrategy):
    """Role: namespaced rules (no nonResourceURLs)."""

    kind = "Role"


@register
class ClusterRoleStrategy(_RoleStrategy):
    """ClusterRole: rules, and an ``aggregationRule`` needs at least one valid cluster role selector."""

    kind = "ClusterRole"
    namespaced = False

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateClusterRole: rules, then ``aggregationRule.clusterRoleSelectors`` (at least one when the rule is
        set; each a valid label selector, and one that does not convert is ``invalid label selector.``)."""
        out = _rules(obj, namespaced=False)
        aggregation = obj.get("aggregationRule")
        if isinstance(aggregation, dict):
            path = "aggregationRule.clusterRoleSelectors"
            selectors = _list(aggregation.get("clusterRoleSelectors"))
            if not selectors:
                out.append(required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
            for i, selector in enumerate(selectors):
                problems = validate_label_selector(selector, f"{path}[{i}]")
                out.extend(problems)
                if problems:
                    out.append(invalid(f"{path}[{i}]", None, "invalid label selector."))
        return out


class _BindingStrategy(Strategy):
    """RoleBinding and ClusterRoleBinding: roleRef and subjects; the roleRef never changes."""

    group = GROUP
    validates_required = True
    namespaced = True
    role_kinds: tuple[str, ...] = ("Role", "ClusterRole")

    def default(self, obj: Obj) -> None:
        """SetDefaults_RoleBinding/ClusterRoleBinding: ``roleRef.apiGroup`` the RBAC group; SetDefaults_Subject:
        a User or Group subject without ``apiGroup`` gets the RBAC group."""
        ref = obj.get("roleRef")
        if ref is None:
            ref = obj["roleRef"] = {}
        if isinstance(ref, dict) and not ref.get("apiGroup"):
            ref["apiGroup"] = GROUP
        for subject in _list(obj.get("subjects")):
            if isinstance(subject, dict) and not subject.get("apiGroup") and subject.get("kind") in ("User", "Group"):
                subject["apiGroup"] = GROUP

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateRoleBinding/ValidateClusterRoleBinding: roleRef apiGroup, kind and name (a path segment), then
        each subject (:func:`validate_subject`)."""
        api_group, kind, name = _role_ref_key(obj.get("roleRef"))
        out: list[Cause] = []
        if api_group != GROUP:
            out.append(not_supported("roleRef.apiGroup", api_group, (GROUP,)))
        if kind not in self.role_kinds:
            out.append(not_supported("roleRef.kind", kind, self.role_kinds))
        if not name:
            out.append(required("roleRef.name"))
        else:
            out.extend(Cause("FieldValueInvalid", f"Invalid value: {go_quote(name)}: {msg}", "roleRef.name")
                       for msg in is_valid_path_segment_name(name))
        for i, subject in enumerate(_list(obj.get("subjects"))):
            out.extend(validate_subject(subject, self.namespaced, f"subjects[{i}]"))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """Validate(Cluster)RoleBindingUpdate: ``roleRef: Invalid value: rbac.RoleRef{...}: cannot change roleRef``
        (the new roleRef as Go prints it)."""
        if _role_ref_key(new.get("roleRef")) == _role_ref_key(old.get("roleRef")):
            return []
        shown = role_ref_string(new.get("roleRef"))
        return [Cause("FieldValueInvalid", f"Invalid value: {shown}: {CANNOT_CHANGE_ROLE_REF}", "roleRef")]


@register
class RoleBindingStrategy(_BindingStrategy):
    """RoleBinding: a Role or ClusterRole; a ServiceAccount subject may leave its namespace empty."""

    kind = "RoleBinding"


@register
class ClusterRoleBindingStrategy(_BindingStrategy):
    """ClusterRoleBinding: a ClusterRole; ServiceAccount subjects need a namespace."""

    kind = "ClusterRoleBinding"
    namespaced = False
    role_kinds = ("ClusterRole",)
