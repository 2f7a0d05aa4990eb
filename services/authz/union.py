"""The authorizer union and ``--authorization-mode`` (k8s.io/apiserver pkg/authorization/union).

The first authorizer that answers Allow or Deny decides; when all answer
NoOpinion the union answers NoOpinion with the reasons joined by newlines,
and the gateway renders 403 Forbidden.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kapi.attributes import Attributes, UserInfo
from services.authz.authorizer import (
    AlwaysAllow,
    AlwaysDeny,
    Authorizer,
    Decision,
    PrivilegedGroups,
    Result,
    RulesResult,
)

NODE, RBAC, ABAC, WEBHOOK = "Node", "RBAC", "ABAC", "Webhook"
ALWAYS_ALLOW, ALWAYS_DENY = "AlwaysAllow", "AlwaysDeny"
SUPPORTED_MODES = (ALWAYS_ALLOW, ALWAYS_DENY, ABAC, WEBHOOK, RBAC, NODE)
# kube-apiserver modes kapi does not implement.
UNSUPPORTED_MODES: tuple[str, ...] = ()


class ModeError(ValueError):
    """``--authorization-mode`` is invalid; the service refuses to start."""


class Union:
    """Ask ``authorizers`` in order; stop at the first Allow or Deny (union.New)."""

    def __init__(self, authorizers: Sequence[Authorizer]):
        self._authorizers = tuple(authorizers)

    async def authorize(self, attributes: Attributes) -> Result:
        """The first Allow/Deny, or NoOpinion with every reason (newline-joined) and error ("; "-joined)."""
        reasons: list[str] = []
        errors: list[str] = []
        cacheable = independent = True
        for authorizer in self._authorizers:
            result = await authorizer.authorize(attributes)
            cacheable = cacheable and result.cacheable
            independent = independent and result.name_independent  # every answer asked must be name-free
            if result.decision != Decision.NO_OPINION:
                return result._replace(cacheable=cacheable, name_independent=independent)
            if result.reason:
                reasons.append(result.reason)
            if result.error:
                errors.append(result.error)
        return Result(Decision.NO_OPINION, "\n".join(reasons), "; ".join(errors), cacheable, independent)

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """Every resolver's rules concatenated (union.RulesFor); incomplete if any resolver is, or cannot resolve.

        Authorizers without ``rules_for`` (kube's privileged-groups
        authorizer, Webhook) add nothing; a Webhook makes the answer incomplete.
        """
        resource: list[dict[str, Any]] = []
        non_resource: list[dict[str, Any]] = []
        incomplete = False
        problems: list[str] = []
        for authorizer in self._authorizers:
            resolver = getattr(authorizer, "rules_for", None)
            if resolver is None:
                if getattr(authorizer, "incomplete_rules", False):
                    incomplete = True
                continue
            result: RulesResult = resolver(user, namespace)
            resource.extend(result.resource_rules)
            non_resource.extend(result.non_resource_rules)
            incomplete = incomplete or result.incomplete
            if result.error:
                problems.append(result.error)
        return RulesResult(tuple(resource), tuple(non_resource), incomplete, "; ".join(problems))


def parse_modes(text: str) -> list[str]:
    """Split ``--authorization-mode`` (comma-separated, ordered) and validate it.

    Raises :class:`ModeError` for an empty list, an unknown or unsupported
    mode, or a mode given twice (kube-apiserver's authorization options
    validation).
    """
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes:
        raise ModeError("at least one authorization-mode must be passed")
    seen: set[str] = set()
    for mode in modes:
        if mode in UNSUPPORTED_MODES:
            raise ModeError(f"authorization-mode {mode!r} is not supported by kapi; supported modes: "
                            + ", ".join(SUPPORTED_MODES))
        if mode not in SUPPORTED_MODES:
            raise ModeError(f"authorization-mode {mode!r} is not a valid mode; supported modes: "
                            + ", ".join(SUPPORTED_MODES))
        if mode in seen:
            raise ModeError(f"authorization-mode {mode!r} has mode specified more than once")
        seen.add(mode)
    return modes


def build(modes: Sequence[str], factories: Mapping[str, Callable[[], Authorizer]] | None = None) -> Union:
    """The union kube-apiserver builds: ``system:masters`` first, then one authorizer per mode in order.

    ``factories`` supplies authorizers that need wiring (RBAC needs the
    policy index); AlwaysAllow and AlwaysDeny are built here. Raises
    :class:`ModeError` for a mode without a factory.
    """
    known: dict[str, Callable[[], Authorizer]] = {ALWAYS_ALLOW: AlwaysAllow, ALWAYS_DENY: AlwaysDeny}
    known.update(factories or {})
    authorizers: list[Authorizer] = [PrivilegedGroups()]
    for mode in modes:
        if mode not in known:
            raise ModeError(f"authorization-mode {mode!r} is not configured")
        authorizers.append(known[mode]())
    return Union(authorizers)
