"""The authorizer union and --authorization-mode parsing (table-driven)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kapi.attributes import Attributes, UserInfo
from services.authz.authorizer import AlwaysAllow, AlwaysDeny, Decision, PrivilegedGroups, Result
from services.authz.union import ModeError, Union, build, parse_modes

ATTRS = Attributes(user=UserInfo("alice", "", ("dev",)), verb="get", resource_request=True, resource="pods")
MASTER = Attributes(user=UserInfo("root", "", ("system:masters",)), verb="delete", resource_request=True,
                    resource="nodes")


@dataclass
class Fixed:
    result: Result
    ran: bool = False

    async def authorize(self, attributes: Attributes) -> Result:
        self.ran = True
        return self.result


A, D, N = Decision.ALLOW, Decision.DENY, Decision.NO_OPINION


@pytest.mark.parametrize(
    ("answers", "decision", "reason", "ran"),
    [
        ([], N, "", []),
        ([Result(A, "a")], A, "a", [True]),
        ([Result(D, "d"), Result(A, "a")], D, "d", [True, False]),
        ([Result(N, "n1"), Result(A, "a")], A, "a", [True, True]),
        ([Result(N, "n1"), Result(D, "d"), Result(A)], D, "d", [True, True, False]),
        ([Result(N, "n1"), Result(N), Result(N, "n3")], N, "n1\nn3", [True, True, True]),
    ],
)
async def test_union(answers: list[Result], decision: Decision, reason: str, ran: list[bool]) -> None:
    authorizers = [Fixed(a) for a in answers]
    result = await Union(authorizers).authorize(ATTRS)
    assert (result.decision, result.reason) == (decision, reason)
    assert [a.ran for a in authorizers] == ran


async def test_union_collects_evaluation_errors() -> None:
    result = await Union([Fixed(Result(N, "", "e1")), Fixed(Result(N, "", "e2"))]).authorize(ATTRS)
    assert result == Result(N, "", "e1; e2")


@pytest.mark.parametrize(
    ("authorizer", "attributes", "decision", "reason"),
    [
        (AlwaysAllow(), ATTRS, A, ""),
        (AlwaysDeny(), ATTRS, N, "Everything is forbidden."),
        (PrivilegedGroups(), ATTRS, N, ""),
        (PrivilegedGroups(), MASTER, A, ""),
    ],
)
async def test_builtin_authorizers(authorizer, attributes: Attributes, decision: Decision, reason: str) -> None:
    result = await authorizer.authorize(attributes)
    assert (result.decision, result.reason, result.error, result.cacheable) == (decision, reason, "", True)
    assert result.name_independent  # none of them looks at the object name


@pytest.mark.parametrize(
    ("text", "modes", "error"),
    [
        ("RBAC", ["RBAC"], None),
        ("AlwaysDeny,RBAC", ["AlwaysDeny", "RBAC"], None),
        (" RBAC , AlwaysAllow ", ["RBAC", "AlwaysAllow"], None),
        ("", None, "at least one authorization-mode must be passed"),
        ("Magic", None, "'Magic' is not a valid mode"),
        ("rbac", None, "'rbac' is not a valid mode"),
        ("Node,RBAC,ABAC,Webhook", ["Node", "RBAC", "ABAC", "Webhook"], None),
        ("RBAC,RBAC", None, "has mode specified more than once"),
    ],
)
def test_parse_modes(text: str, modes: list[str] | None, error: str | None) -> None:
    if error is None:
        assert parse_modes(text) == modes
    else:
        with pytest.raises(ModeError, match=error):
            parse_modes(text)


@pytest.mark.parametrize(
    ("modes", "attributes", "decision"),
    [
        (["AlwaysAllow"], ATTRS, A),
        (["AlwaysDeny"], ATTRS, N),
        (["AlwaysDeny", "AlwaysAllow"], ATTRS, A),  # AlwaysDeny is NoOpinion, as in kube
        (["AlwaysDeny"], MASTER, A),  # system:masters is allowed before any mode
    ],
)
async def test_build(modes: list[str], attributes: Attributes, decision: Decision) -> None:
    assert (await build(modes).authorize(attributes)).decision == decision


def test_build_needs_a_factory_for_rbac() -> None:
    with pytest.raises(ModeError):
        build(["RBAC"])
