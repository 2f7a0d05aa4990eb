"""The authorizer interface and the trivial authorizers (k8s.io/apiserver pkg/authorization).

An authorizer answers Allow, Deny or NoOpinion with a reason
(``authorizer/interfaces.go``). It raises a :class:`kapi.errors.StatusError`
only when it cannot decide at all and the request must fail closed (e.g.
RBAC before its first policy sync: 503). Authorizers are async so ones that
call out (Webhook) fit the same interface.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any, NamedTuple, Protocol

from kapi.attributes import SYSTEM_PRIVILEGED_GROUP, Attributes, UserInfo


class Decision(enum.IntEnum):
    """An authorizer's decision; values equal ``kapi.authz.v1.Decision``."""

    NO_OPINION = 0
    ALLOW = 1
    DENY = 2


class Result(NamedTuple):
    """(decision, reason, evaluation error): kube's ``(Decision, string, error)``.

    ``reason`` is shown to the user in a 403 message; ``error`` is a
    non-fatal evaluation problem (logged and returned as evaluation_error).
    """

    decision: Decision
    reason: str = ""
    error: str = ""
    # False when the answer may change without the RBAC policy revision changing (Node graph, Webhook):
    # gateways must not cache it.
    cacheable: bool = True
    # True when the same answer (decision and reason) holds for every name of the resource: the authorizer
    # looked at no name-specific rule (RBAC resourceNames, the Node graph, a webhook). Gateways may then serve
    # it for other names of the same request (update, patch, delete of many objects). False unless known.
    name_independent: bool = False


NO_OPINION = Result(Decision.NO_OPINION)
NOT_PRIVILEGED = Result(Decision.NO_OPINION, name_independent=True)  # depends on the user's groups only


class RulesResult(NamedTuple):
    """What a rule resolver knows a user may do (authorizer.RuleResolver.RulesFor).

    Rules are dicts as ``authorization.k8s.io/v1`` ResourceRule
    (verbs, apiGroups, resources, resourceNames) and NonResourceRule
    (verbs, nonResourceURLs) serialise; ``incomplete`` when the resolver
    cannot list everything it would allow.
    """

    resource_rules: tuple[dict[str, Any], ...] = ()
    non_resource_rules: tuple[dict[str, Any], ...] = ()
    incomplete: bool = False
    error: str = ""


class RuleResolver(Protocol):
    """An authorizer that can list a user's rules in a namespace ("" = cluster-wide)."""

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """The rules; raises StatusError only when it must fail closed."""
        ...


ALL_RULES = RulesResult(({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},),
                        ({"verbs": ["*"], "nonResourceURLs": ["*"]},))


class Authorizer(Protocol):
    """Decides whether the request described by ``attributes`` may proceed."""

    async def authorize(self, attributes: Attributes) -> Result:
        """Allow, Deny or NoOpinion; raises StatusError only when the request must fail closed."""
        ...


class AlwaysAllow:
    """``--authorization-mode=AlwaysAllow``: allow everything (authorizerfactory.NewAlwaysAllowAuthorizer)."""

    async def authorize(self, attributes: Attributes) -> Result:
        """Allow."""
        return Result(Decision.ALLOW, name_independent=True)

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """Everything (``*`` resource and non-resource rules)."""
        return ALL_RULES


class AlwaysDeny:
    """``--authorization-mode=AlwaysDeny`` (authorizerfactory.NewAlwaysDenyAuthorizer).

    As in kube it answers NoOpinion with reason "Everything is forbidden.",
    so a later authorizer in the union may still allow.
    """

    async def authorize(self, attributes: Attributes) -> Result:
        """NoOpinion, "Everything is forbidden."."""
        return Result(Decision.NO_OPINION, "Everything is forbidden.", name_independent=True)

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """Nothing, complete."""
        return RulesResult()


class PrivilegedGroups:
    """Allow members of the given groups (authorizerfactory.NewPrivilegedGroups).

    kube-apiserver puts this authorizer for ``system:masters`` in front of
    every configured mode.
    """

    def __init__(self, groups: Iterable[str] = (SYSTEM_PRIVILEGED_GROUP,)):
        self._groups = frozenset(groups)

    async def authorize(self, attributes: Attributes) -> Result:
        """Allow when the user is in one of the groups, else NoOpinion."""
        if not self._groups.isdisjoint(attributes.user.groups):
            return Result(Decision.ALLOW, name_independent=True)
        return NOT_PRIVILEGED
