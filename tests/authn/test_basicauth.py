"""The deprecated static password file (--basic-auth-file)."""

from __future__ import annotations

import base64
import logging
from pathlib import Path

import pytest

from kapi.attributes import UserInfo
from services.authn.authenticator import NOT_MINE, Request
from services.authn.basicauth import INVALID, BasicAuthAuthenticator, parse

FILE = 'pw1,carol,uid-carol,"devs,ops"\npw2,dan,uid-dan\n'


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(("authorization", "user"), [
    (basic("carol", "pw1"), UserInfo("carol", "uid-carol", ("devs", "ops"))),
    (basic("dan", "pw2"), UserInfo("dan", "uid-dan", ())),
    (basic("carol", "pw2"), None),
    (basic("nobody", "pw1"), None),
    ("Basic !!!", None),
    ("Basic " + base64.b64encode(b"carol").decode(), None),
])
async def test_basic(authorization: str, user: UserInfo | None) -> None:
    result = await BasicAuthAuthenticator(parse(FILE)).authenticate(Request(authorization))
    if user is None:
        assert not result.ok and result.error == INVALID
    else:
        assert result.ok and result.response is not None and result.response.user == user


async def test_other_schemes_are_not_mine() -> None:
    auth = BasicAuthAuthenticator(parse(FILE))
    assert await auth.authenticate(Request("Bearer x")) == NOT_MINE
    assert await auth.authenticate(Request("")) == NOT_MINE


def test_deprecation_warning_and_bad_file(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "pw.csv").write_text(FILE)
    with caplog.at_level(logging.WARNING):
        BasicAuthAuthenticator.from_file(str(tmp_path / "pw.csv"))
    assert "--basic-auth-file is deprecated" in caplog.text
    with pytest.raises(ValueError):
        parse("only,two\n")
