"""Static password file authentication (``--basic-auth-file``; removed from kube-apiserver in 1.19).

Off by default; when enabled a deprecation warning is logged. The file is
CSV like the token file: ``password,user,uid,"group1,group2"``
(kube <= 1.18 ``passwordfile.NewCSV``). ``Authorization: Basic
base64(user:password)`` is checked with a constant-time comparison; a Basic
credential that does not match is an error ("invalid username/password
combination"), so it gets 401 rather than anonymous access.
"""

from __future__ import annotations

import base64
import binascii
import csv
import hmac
import io
import logging
from pathlib import Path

from kapi.attributes import UserInfo
from services.authn.authenticator import NOT_MINE, Request, Result, failed, succeeded

log = logging.getLogger(__name__)

NAME = "basic-auth"
INVALID = "invalid username/password combination"
DEPRECATION = ("--basic-auth-file is deprecated: static password authentication was removed from kube-apiserver "
               "in 1.19; use client certificates, tokens or OIDC")


def parse(text: str, source: str = "<password file>") -> dict[str, tuple[bytes, UserInfo]]:
    """{user name: (password, user)}; raises ValueError on a record with fewer than 3 columns or bad CSV."""
    users: dict[str, tuple[bytes, UserInfo]] = {}
    reader = csv.reader(io.StringIO(text), strict=True)
    try:
        for record in reader:
            if not record:
                continue
            if len(record) < 3:
                raise ValueError(f"password file {source!r}: line {reader.line_num}: at least 3 columns "
                                 "(password, user name, user uid) are required")
            groups = tuple(g for g in record[3].split(",") if g) if len(record) >= 4 else ()
            users[record[1]] = (record[0].encode(), UserInfo(record[1], record[2], groups))
    except csv.Error as exc:
        raise ValueError(f"password file {source!r}: line {reader.line_num}: {exc}") from None
    return users


class BasicAuthAuthenticator:
    """A request authenticator over a parsed password file."""

    def __init__(self, users: dict[str, tuple[bytes, UserInfo]]):
        self._users = users

    @classmethod
    def from_file(cls, path: str) -> BasicAuthAuthenticator:
        """Load ``path`` and log the deprecation warning; raises OSError or ValueError."""
        log.warning(DEPRECATION)
        return cls(parse(Path(path).read_text(encoding="utf-8"), path))

    async def authenticate(self, request: Request) -> Result:
        """NOT_MINE without ``Authorization: Basic``; an error for a wrong or malformed credential."""
        scheme, _, value = request.authorization.strip().partition(" ")
        if scheme.lower() != "basic":
            return NOT_MINE
        try:
            username, sep, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return failed(INVALID)
        entry = self._users.get(username)
        # Compare even for unknown users so timing does not reveal which user names exist.
        expected = entry[0] if entry is not None else b"\0" * max(len(password), 1)
        if not sep or not hmac.compare_digest(expected, password.encode()) or entry is None:
            return failed(INVALID)
        return succeeded(entry[1], NAME)
