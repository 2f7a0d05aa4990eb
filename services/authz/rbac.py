"""RBAC: policy objects, rule matching and the RBAC authorizer ("Using RBAC Authorization").

Pure logic, mirroring kube's ``plugin/pkg/auth/authorizer/rbac``:
``RuleAllows`` (verbs, API groups, ``resource/subresource`` and
``*/subresource``, resourceNames, nonResourceURLs with a trailing ``*``),
``appliesTo`` (User, Group, ServiceAccount subjects) and the visit order
of ``VisitRulesFor`` (ClusterRoleBindings, then RoleBindings of the request
namespace). Bindings are found through a :class:`PolicySource` that indexes
them by subject (see ``policy.py``), not by scanning every binding.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from services.authz.authorizer import Decision, Result, RulesResult

GROUP = "rbac.authorization.k8s.io"
USER, GROUP_KIND, SERVICE_ACCOUNT = "User", "Group", "ServiceAccount"
ROLE, CLUSTER_ROLE = "Role", "ClusterRole"
ROLE_BINDING, CLUSTER_ROLE_BINDING = "RoleBinding", "ClusterRoleBinding"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ALL = "*"


def service_account_username(namespace: str, name: str) -> str:
    """``system:serviceaccount:<namespace>:<name>`` (k8s.io/apiserver pkg/authentication/serviceaccount)."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else ()


@dataclass(frozen=True)
class PolicyRule:
    """One ``PolicyRule`` of a Role or ClusterRole."""

    verbs: frozenset[str]
    api_groups: frozenset[str] = frozenset()
    resources: tuple[str, ...] = ()
    resource_names: frozenset[str] = frozenset()
    non_resource_urls: tuple[str, ...] = ()
    # verbs, apiGroups and resourceNames in the order the object lists them (for SelfSubjectRulesReview).
    ordered: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = field(default=((), (), ()), compare=False)

    @classmethod
    def from_json(cls, rule: Mapping[str, Any]) -> PolicyRule:
        """Decode a rule dict (``verbs``, ``apiGroups``, ``resources``, ``resourceNames``, ``nonResourceURLs``)."""
        verbs, groups, names = (_strings(rule.get(k)) for k in ("verbs", "apiGroups", "resourceNames"))
        return cls(frozenset(verbs), frozenset(groups), _strings(rule.get("resources")), frozenset(names),
                   _strings(rule.get("nonResourceURLs")), (verbs, groups, names))

    def to_json(self) -> dict[str, Any]:
        """The rule as the API serialises it (empty lists omitted), lists in their original order."""
        verbs, groups, names = self.ordered
        out: dict[str, Any] = {"verbs": list(verbs or sorted(self.verbs))}
        if self.api_groups:
            out["apiGroups"] = list(groups or sorted(self.api_groups))
        if self.resources:
            out["resources"] = list(self.resources)
        if self.resource_names:
            out["resourceNames"] = list(names or sorted(self.resource_names))
        if self.non_resource_urls:
            out["nonResourceURLs"] = list(self.non_resource_urls)
        return out

    def verb_matches(self, verb: str) -> bool:
        """``*`` or the exact verb (VerbMatches)."""
        return ALL in self.verbs or verb in self.verbs

    def api_group_matches(self, group: str) -> bool:
        """``*`` or the exact group, "" being the core group (APIGroupMatches)."""
        return ALL in self.api_groups or group in self.api_groups

    def resource_matches(self, combined: str, subresource: str) -> bool:
        """``*``, the exact ``resource[/subresource]``, or ``*/subresource`` (ResourceMatches)."""
        for rule_resource in self.resources:
            if rule_resource == ALL or rule_resource == combined:
                return True
            if subresource and rule_resource == "*/" + subresource:
                return True
        return False

    def resource_name_matches(self, name: str) -> bool:
        """No resourceNames, or the request names one of them (ResourceNameMatches).

        A rule with resourceNames therefore never matches a request without
        a name (list, watch, create, deletecollection of the collection).
        """
        return not self.resource_names or name in self.resource_names

    def non_resource_url_matches(self, path: str) -> bool:
        """``*``, the exact path, or a prefix ending in ``*`` (NonResourceURLMatches)."""
        for url in self.non_resource_urls:
            if url == ALL or url == path:
                return True
            if url.endswith(ALL) and path.startswith(url.rstrip(ALL)):
                return True
        return False

    def allows(self, attributes: Attributes) -> bool:
        """Whether this rule grants the request (RuleAllows)."""
        if attributes.resource_request:
            combined = attributes.resource
            if attributes.subresource:
                combined = f"{attributes.resource}/{attributes.subresource}"
            return (self.verb_matches(attributes.verb) and self.api_group_matches(attributes.api_group)
                    and self.resource_matches(combined, attributes.subresource)
                    and self.resource_name_matches(attributes.name))
        return self.verb_matches(attributes.verb) and self.non_resource_url_matches(attributes.path)


@dataclass(frozen=True)
class Role:
    """A Role (namespace set) or ClusterRole (namespace "") and its rules."""

    kind: str
    namespace: str
    name: str
    rules: tuple[PolicyRule, ...]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Role:
        """Decode a Role or ClusterRole object; raises ValueError without metadata.name."""
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        if not name:
            raise ValueError("role without metadata.name")
        rules = tuple(PolicyRule.from_json(r) for r in obj.get("rules") or () if isinstance(r, Mapping))
        return cls(str(obj.get("kind") or (ROLE if meta.get("namespace") else CLUSTER_ROLE)),
                   str(meta.get("namespace") or ""), name, rules)


@dataclass(frozen=True)
class Subject:
    """A binding subject: kind User, Group or ServiceAccount; namespace only for ServiceAccount."""

    kind: str
    name: str
    namespace: str = ""


@dataclass(frozen=True)
class Binding:
    """A RoleBinding (namespace set) or ClusterRoleBinding and what it grants to whom."""

    kind: str
    namespace: str
    name: str
    role_kind: str
    role_name: str
    subjects: tuple[Subject, ...]

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Binding:
        """Decode a RoleBinding or ClusterRoleBinding; raises ValueError without name or roleRef."""
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or "")
        ref = obj.get("roleRef") or {}
        if not name or not isinstance(ref, Mapping) or not ref.get("name"):
            raise ValueError("binding without metadata.name or roleRef.name")
        namespace = str(meta.get("namespace") or "")
        subjects = tuple(Subject(str(s.get("kind") or ""), str(s.get("name") or ""), str(s.get("namespace") or ""))
                         for s in obj.get("subjects") or () if isinstance(s, Mapping))
        kind = str(obj.get("kind") or (ROLE_BINDING if namespace else CLUSTER_ROLE_BINDING))
        return cls(kind, namespace, name, str(ref.get("kind") or ""), str(ref["name"]), subjects)


def applies_to(user: UserInfo, subject: Subject, namespace: str) -> bool:
    """Whether ``subject`` names ``user`` (appliesToUser); ``namespace`` defaults ServiceAccount subjects.

    ``namespace`` is the binding's namespace for RoleBindings and "" for
    ClusterRoleBindings, where a ServiceAccount subject without a namespace
    matches nobody.
    """
    if subject.kind == USER:
        return user.username == subject.name
    if subject.kind == GROUP_KIND:
        return subject.name in user.groups
    if subject.kind == SERVICE_ACCOUNT:
        sa_namespace = subject.namespace or namespace
        return bool(sa_namespace) and user.username == service_account_username(sa_namespace, subject.name)
    return False


def subject_username(subject: Subject, binding_namespace: str) -> str | None:
    """The user name a User or ServiceAccount subject matches, or None (Group, unknown kind, no namespace)."""
    if subject.kind == USER:
        return subject.name
    if subject.kind == SERVICE_ACCOUNT:
        namespace = subject.namespace or binding_namespace
        return service_account_username(namespace, subject.name) if namespace else None
    return None


def _q(text: str) -> str:
    """Go's %q for ordinary strings."""
    return json.dumps(text, ensure_ascii=False)


def describe_subject(subject: Subject, binding_namespace: str) -> str:
    """``User "alice"``, ``Group "dev"``, ``ServiceAccount "name/namespace"`` (describeSubject)."""
    if subject.kind == SERVICE_ACCOUNT:
        return f"{subject.kind} {_q(subject.name + '/' + (subject.namespace or binding_namespace))}"
    return f"{subject.kind} {_q(subject.name)}"


def describe(binding: Binding, subject: Subject) -> str:
    """kube's rule source: ``ClusterRoleBinding "x" of ClusterRole "y" to Group "z"``.

    RoleBindings print as ``RoleBinding "name/namespace" of Role "y" to User "z"``.
    """
    if binding.kind == CLUSTER_ROLE_BINDING:
        return (f"ClusterRoleBinding {_q(binding.name)} of {binding.role_kind} {_q(binding.role_name)} "
                f"to {describe_subject(subject, '')}")
    return (f"RoleBinding {_q(binding.name + '/' + binding.namespace)} of {binding.role_kind} "
            f"{_q(binding.role_name)} to {describe_subject(subject, binding.namespace)}")


class PolicySource(Protocol):
    """What the RBAC authorizer reads: an index of roles and bindings (``policy.PolicyIndex``)."""

    @property
    def synced(self) -> bool:
        """True once every RBAC resource has been listed."""
        ...

    def cluster_role_bindings_for(self, user: UserInfo) -> Iterable[tuple[Binding, Subject]]:
        """ClusterRoleBindings with a subject naming ``user``, each with its first such subject."""
        ...

    def role_bindings_for(self, user: UserInfo, namespace: str) -> Iterable[tuple[Binding, Subject]]:
        """RoleBindings of ``namespace`` with a subject naming ``user``, each with its first such subject."""
        ...

    def role(self, namespace: str, name: str) -> Role | None:
        """The Role, or None."""
        ...

    def cluster_role(self, name: str) -> Role | None:
        """The ClusterRole, or None."""
        ...


def rules_of(source: PolicySource, binding: Binding) -> tuple[tuple[PolicyRule, ...], str | None]:
    """(rules, error) of the role a binding refers to; a missing role is an error as in kube's GetRoleReferenceRules."""
    if binding.role_kind == CLUSTER_ROLE:
        role = source.cluster_role(binding.role_name)
        missing = f'clusterrole.{GROUP} "{binding.role_name}" not found'
    elif binding.role_kind == ROLE and binding.kind == ROLE_BINDING:
        role = source.role(binding.namespace, binding.role_name)
        missing = f'role.{GROUP} "{binding.role_name}" not found'
    else:
        return (), f"unsupported role reference kind: {binding.role_kind!r}"
    return (role.rules, None) if role is not None else ((), missing)


Visitor = Callable[[Binding, Subject, PolicyRule | None, str | None], bool]
"""``visitor(binding, subject, rule, problem) -> keep going``: one rule (problem None) or one unresolvable role
reference (rule None, problem its error text)."""


def visit_rules_for(source: PolicySource, user: UserInfo, namespace: str, visitor: Visitor) -> None:
    """Visit every rule bound to ``user``: ClusterRoleBindings first, then the RoleBindings of ``namespace``
    ("" = cluster-wide only), in the source's order (kube's ``VisitRulesFor``).

    The one walk over the bindings that authorization (:class:`RBACAuthorizer`) and rule listing
    (:func:`rules_for`) share; it stops as soon as ``visitor`` returns False.
    """
    cluster = ((b, s) for b, s in source.cluster_role_bindings_for(user) if b.role_kind == CLUSTER_ROLE)
    bindings = itertools.chain(cluster, source.role_bindings_for(user, namespace) if namespace else ())
    for binding, subject in bindings:
        rules, problem = rules_of(source, binding)
        if problem is not None:
            if not visitor(binding, subject, None, problem):
                return
            continue
        for rule in rules:
            if not visitor(binding, subject, rule, None):
                return


@dataclass(frozen=True)
class RuleSet:
    """Rules a user holds in one namespace: PolicyRules plus non-fatal resolution errors."""

    rules: tuple[PolicyRule, ...]
    errors: tuple[str, ...] = ()


def rules_for(source: PolicySource, user: UserInfo, namespace: str) -> RuleSet:
    """Every rule granted to ``user`` cluster-wide and in ``namespace`` ("" = cluster-wide only) (RulesFor).

    A binding whose role is missing contributes an error, not rules; the
    result is then incomplete but still usable (kube's contract).
    """
    rules: list[PolicyRule] = []
    problems: list[str] = []

    def collect(_binding: Binding, _subject: Subject, rule: PolicyRule | None, problem: str | None) -> bool:
        if rule is not None:
            rules.append(rule)
        if problem is not None:
            problems.append(problem)
        return True

    visit_rules_for(source, user, namespace, collect)
    return RuleSet(tuple(rules), tuple(problems))


class RBACAuthorizer:
    """``--authorization-mode=RBAC``: allow when a bound role has a rule that allows (RBACAuthorizer).

    Answers Allow with reason ``RBAC: allowed by <source>``, or NoOpinion
    (reason "" unless a binding refers to a missing role, then
    ``RBAC: <errors>``). Raises 503 ServiceUnavailable until the policy
    source has synced, so requests fail closed.
    """

    def __init__(self, source: PolicySource):
        self._source = source

    async def authorize(self, attributes: Attributes) -> Result:
        """Decide ``attributes`` against the current policy."""
        return self.decide(attributes)

    def decide(self, attributes: Attributes) -> Result:
        """Synchronous core of :meth:`authorize`."""
        source = self._source
        if not source.synced:
            raise errors.unavailable("authorization policy not yet synced")
        problems: list[str] = []
        allowed_by: list[str] = []
        named = False  # a rule visited so far has resourceNames and would match another name of this request

        def allows(binding: Binding, subject: Subject, rule: PolicyRule | None, problem: str | None) -> bool:
            nonlocal named
            if problem is not None:
                problems.append(problem)
            elif rule is not None:
                if rule.resource_names and not named and attributes.resource_request:
                    named = rule.allows(dataclasses.replace(attributes, name=next(iter(rule.resource_names))))
                if rule.allows(attributes):
                    allowed_by.append(describe(binding, subject))
                    return False
            return True

        # Non-resource rules only come from ClusterRoles bound cluster-wide.
        namespace = attributes.namespace if attributes.resource_request else ""
        visit_rules_for(source, attributes.user, namespace, allows)
        # The rules visited up to the answer (all of them for NoOpinion) decide every name alike unless one of
        # them lists resourceNames that another name of this request would match.
        if allowed_by:
            return Result(Decision.ALLOW, f"RBAC: allowed by {allowed_by[0]}", name_independent=not named)
        if problems:
            text = problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"
            return Result(Decision.NO_OPINION, f"RBAC: {text}", name_independent=not named)
        return Result(Decision.NO_OPINION, name_independent=not named)

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """The user's rules split into resource and non-resource rules (RBACAuthorizer.RulesFor).

        Complete even when a binding names a missing role (the problem is the
        evaluation error); 503 until synced.
        """
        if not self._source.synced:
            raise errors.unavailable("authorization policy not yet synced")
        found = rules_for(self._source, user, namespace)
        resource = tuple(r.to_json() for r in found.rules if r.resources)
        non_resource = tuple(r.to_json() for r in found.rules if r.non_resource_urls)
        return RulesResult(resource, non_resource, False, ", ".join(found.errors))
