"""Static token file parsing and lookup (kube-apiserver --token-auth-file)."""

from __future__ import annotations

import pytest

from kapi.attributes import UserInfo
from services.authn.authenticator import NOT_MINE
from services.authn.tokenfile import TokenFileAuthenticator, TokenFileError

TOKENS = """\
abc123,alice,uid-alice,"dev,ops"

def456,bob,uid-bob
ghi789,carol,uid-carol,qa,extra-column,another
jkl000,dave,uid-dave,
,nobody,uid-none,"ignored"
dup,first,uid-1
dup,second,uid-2,"g"
"quoted,token",erin,uid-erin,"a"
"""


@pytest.mark.parametrize(
    ("token", "user"),
    [
        ("abc123", UserInfo("alice", "uid-alice", ("dev", "ops"))),
        ("def456", UserInfo("bob", "uid-bob", ())),
        ("ghi789", UserInfo("carol", "uid-carol", ("qa",))),
        ("jkl000", UserInfo("dave", "uid-dave", ())),
        ("dup", UserInfo("second", "uid-2", ("g",))),
        ("quoted,token", UserInfo("erin", "uid-erin", ("a",))),
        ("", None),
        ("abc12", None),
        ("abc1234", None),
        ("ABC123", None),
        ("alice", None),
    ],
)
async def test_lookup(token: str, user: UserInfo | None) -> None:
    auth = TokenFileAuthenticator.from_text(TOKENS)
    result = await auth.authenticate_token(token)
    if user is None:
        assert result == NOT_MINE
    else:
        assert result.ok and result.response is not None
        assert result.response.user == user
        assert result.response.authenticator == "token-file"


def test_entry_count_skips_blank_lines_and_empty_tokens() -> None:
    assert len(TokenFileAuthenticator.from_text(TOKENS)) == 6


@pytest.mark.parametrize("text", ["abc,alice\n", "only-one-column\n", 'abc,"unterminated,uid\n'])
def test_malformed_file(text: str) -> None:
    with pytest.raises(TokenFileError):
        TokenFileAuthenticator.from_text(text)


def test_from_file(tmp_path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text('t1,u1,1,"a,b"\n')
    assert len(TokenFileAuthenticator.from_file(str(path))) == 1
    with pytest.raises(OSError):
        TokenFileAuthenticator.from_file(str(tmp_path / "missing.csv"))
