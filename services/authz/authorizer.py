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
from typing import NamedTuple, Protocol

from kapi.attributes import SYSTEM_PRIVILEGED_GROUP, Attributes


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


NO_OPINION = Result(Decision.NO_OPINION)


class Authorizer(Protocol):
    """Decides whether the request described by ``attributes`` may proceed."""

    async def authorize(self, attributes: Attributes) -> Result:
        """Allow, Deny or NoOpinion; raises StatusError only when the request must fail closed."""
        ...


class AlwaysAllow:
    """``--authorization-mode=AlwaysAllow``: allow everything (authorizerfactory.NewAlwaysAllowAuthorizer)."""

    async def authorize(self, attributes: Attributes) -> Result:
        """Allow."""
        return Result(Decision.ALLOW)


class AlwaysDeny:
    """``--authorization-mode=AlwaysDeny`` (authorizerfactory.NewAlwaysDenyAuthorizer).

    As in kube it answers NoOpinion with reason "Everything is forbidden.",
    so a later authorizer in the union may still allow.
    """

    async def authorize(self, attributes: Attributes) -> Result:
        """NoOpinion, "Everything is forbidden."."""
        return Result(Decision.NO_OPINION, "Everything is forbidden.")


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
            return Result(Decision.ALLOW)
        return NO_OPINION
