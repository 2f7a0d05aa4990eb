"""The anonymous authenticator (k8s.io/apiserver pkg/authentication/request/anonymous).

Runs last, only when ``--anonymous-auth`` is true and no other authenticator
recognised a credential ("Authenticating" reference, "Anonymous requests").
"""

from __future__ import annotations

from kapi.attributes import ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo
from services.authn.authenticator import Request, Result, succeeded

NAME = "anonymous"
ANONYMOUS_USER = UserInfo(ANONYMOUS, "", (ALL_UNAUTHENTICATED,))


class AnonymousAuthenticator:
    """Always answers ``system:anonymous`` in group ``system:unauthenticated``."""

    async def authenticate(self, request: Request) -> Result:
        """Return the anonymous user for any request."""
        return succeeded(ANONYMOUS_USER, NAME)
