"""Static token file authentication (kube-apiserver ``--token-auth-file``).

The file is CSV, one token per line: ``token,user,uid,"group1,group2"``
("Authenticating" reference, "Static Token File"). The groups column is
optional; extra columns are ignored; blank lines are skipped; a line with
fewer than 3 columns makes the whole file invalid (kube's
``tokenfile.NewCSV``). A later line with the same token replaces an earlier
one, as in kube.

Tokens are looked up by their SHA-256 digest, and the stored token is then
compared with :func:`hmac.compare_digest`, so lookup time does not depend on
how many leading characters of a guess are right.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import logging
from dataclasses import dataclass
from pathlib import Path

from kapi.attributes import UserInfo
from services.authn.authenticator import NOT_MINE, Result, succeeded

log = logging.getLogger(__name__)

NAME = "token-file"


class TokenFileError(ValueError):
    """The token file cannot be parsed (the service refuses to start)."""


@dataclass(frozen=True)
class _Entry:
    token: bytes
    user: UserInfo


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


def parse(text: str, source: str = "<token file>") -> dict[bytes, _Entry]:
    """Parse token-file CSV ``text`` into {sha256(token): entry}.

    Raises :class:`TokenFileError` on a CSV error or a record with fewer
    than 3 columns. Records with an empty token are skipped with a warning.
    Empty group names (e.g. an empty 4th column) are dropped.
    """
    entries: dict[bytes, _Entry] = {}
    reader = csv.reader(io.StringIO(text), strict=True)
    record_num = 0
    try:
        for record in reader:
            if not record:
                continue
            if len(record) < 3:
                raise TokenFileError(f"token file {source!r} must have at least 3 columns "
                                     f"(token, user name, user uid), found {len(record)}")
            record_num += 1
            if not record[0]:
                log.warning("empty token has been found in token file %r, record number %d", source, record_num)
                continue
            groups = tuple(g for g in record[3].split(",") if g) if len(record) >= 4 else ()
            token = record[0].encode()
            key = _digest(token)
            if key in entries:
                log.warning("duplicate token has been found in token file %r, record number %d", source, record_num)
            entries[key] = _Entry(token, UserInfo(record[1], record[2], groups))
    except csv.Error as exc:
        raise TokenFileError(f"token file {source!r}: line {reader.line_num}: {exc}") from None
    return entries


class TokenFileAuthenticator:
    """A token authenticator over a parsed static token file."""

    def __init__(self, entries: dict[bytes, _Entry]):
        self._entries = entries

    @classmethod
    def from_file(cls, path: str) -> TokenFileAuthenticator:
        """Load ``path``; raises OSError if unreadable, :class:`TokenFileError` if malformed."""
        return cls(parse(Path(path).read_text(encoding="utf-8"), path))

    @classmethod
    def from_text(cls, text: str) -> TokenFileAuthenticator:
        """Parse token-file CSV ``text`` (tests, embedded configuration)."""
        return cls(parse(text))

    def __len__(self) -> int:
        return len(self._entries)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> Result:
        """The user of ``token``, or NOT_MINE when the file does not hold it (audience-agnostic)."""
        raw = token.encode()
        entry = self._entries.get(_digest(raw))
        if entry is None or not hmac.compare_digest(entry.token, raw):
            return NOT_MINE
        return succeeded(entry.user, NAME)
