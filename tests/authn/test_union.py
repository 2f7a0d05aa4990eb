"""The authenticator chain: union semantics, bearer parsing, group adder, anonymous (table-driven)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kapi.attributes import UserInfo
from services.authn.anonymous import AnonymousAuthenticator
from services.authn.authenticator import NOT_MINE, Request, Result, failed, succeeded
from services.authn.bearer import BearerTokenAuthenticator, bearer_token
from services.authn.tokenfile import TokenFileAuthenticator
from services.authn.union import AuthenticatedGroupAdder, Union, build

ALICE = UserInfo("alice", "1", ("dev",))
BOB = UserInfo("bob", "2", ())


@dataclass
class Fixed:
    """An authenticator with a fixed answer that records whether it ran."""

    result: Result
    ran: bool = False

    async def authenticate(self, request: Request) -> Result:
        self.ran = True
        return self.result


OK_A, OK_B, BAD, NO = succeeded(ALICE, "a"), succeeded(BOB, "b"), failed("bad credential"), NOT_MINE


@pytest.mark.parametrize(
    ("answers", "fail_on_error", "expected_user", "expected_error", "ran"),
    [
        ([], False, None, None, []),
        ([NO, NO], False, None, None, [True, True]),
        ([OK_A, OK_B], False, "alice", None, [True, False]),
        ([NO, OK_B], False, "bob", None, [True, True]),
        ([BAD, OK_B], False, "bob", None, [True, True]),  # kube's union: a later success wins
        ([BAD, NO], False, None, "bad credential", [True, True]),
        ([BAD, failed("worse")], False, None, "bad credential, worse", [True, True]),
        ([BAD, OK_B], True, None, "bad credential", [True, False]),  # FailOnError stops at the error
        ([NO, OK_B], True, "bob", None, [True, True]),
    ],
)
async def test_union(answers: list[Result], fail_on_error: bool, expected_user: str | None,
                     expected_error: str | None, ran: list[bool]) -> None:
    authenticators = [Fixed(a) for a in answers]
    result = await Union(authenticators, fail_on_error=fail_on_error).authenticate(Request())
    assert result.ok is (expected_user is not None)
    if expected_user:
        assert result.response is not None and result.response.user.username == expected_user
    assert result.error == expected_error
    assert [a.ran for a in authenticators] == ran


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ((), ("system:authenticated",)),
        (("dev",), ("dev", "system:authenticated")),
        (("system:authenticated", "dev"), ("system:authenticated", "dev")),
        (("system:unauthenticated",), ("system:unauthenticated",)),
    ],
)
async def test_group_adder(groups: tuple[str, ...], expected: tuple[str, ...]) -> None:
    inner = Fixed(succeeded(UserInfo("u", "", groups), "x"))
    result = await AuthenticatedGroupAdder(inner).authenticate(Request())
    assert result.response is not None and result.response.user.groups == expected


async def test_group_adder_skips_anonymous() -> None:
    result = await AuthenticatedGroupAdder(AnonymousAuthenticator()).authenticate(Request())
    assert result.response is not None
    assert result.response.user == UserInfo("system:anonymous", "", ("system:unauthenticated",))


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER abc", "abc"),
        ("  Bearer abc  ", "abc"),
        ("Bearer abc def", "abc"),
        ("Bearer", ""),
        ("Bearer  abc", ""),
        ("Basic YWxpY2U6cHc=", ""),
        ("abc", ""),
        ("", ""),
    ],
)
def test_bearer_token(header: str, token: str) -> None:
    assert bearer_token(header) == token


TOKENS = TokenFileAuthenticator.from_text('good,alice,uid-a,"dev,ops"\nadm,root,uid-r,system:masters\n')


@pytest.mark.parametrize(
    ("anonymous", "request_", "user", "groups", "authenticator"),
    [
        (True, Request(authorization="Bearer good"), "alice", ("dev", "ops", "system:authenticated"), "token-file"),
        (True, Request(authorization="Bearer adm"), "root", ("system:masters", "system:authenticated"), "token-file"),
        (True, Request(authorization="Bearer wrong"), None, None, None),
        (True, Request(), "system:anonymous", ("system:unauthenticated",), "anonymous"),
        (True, Request(authorization="Basic YWxpY2U6cHc="), "system:anonymous", ("system:unauthenticated",),
         "anonymous"),
        (False, Request(), None, None, None),
        (False, Request(authorization="Basic YWxpY2U6cHc="), None, None, None),
        (False, Request(authorization="Bearer good"), "alice", ("dev", "ops", "system:authenticated"), "token-file"),
        (False, Request(authorization="Bearer wrong"), None, None, None),
    ],
)
async def test_chain(anonymous: bool, request_: Request, user: str | None, groups: tuple[str, ...] | None,
                     authenticator: str | None) -> None:
    chain = build([BearerTokenAuthenticator([TOKENS])], AnonymousAuthenticator() if anonymous else None)
    result = await chain.authenticate(request_)
    if user is None:
        assert not result.ok
        if request_.authorization.startswith("Bearer"):
            assert result.error == "invalid bearer token"
    else:
        assert result.ok and result.response is not None
        assert (result.response.user.username, result.response.user.groups) == (user, groups)
        assert result.response.authenticator == authenticator
