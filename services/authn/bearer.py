"""Bearer token authentication (k8s.io/apiserver pkg/authentication/request/bearertoken).

Reads ``Authorization: Bearer <token>`` (scheme case-insensitive, as kube)
and asks each token authenticator in turn. Other schemes (Basic, ...) and
an empty token are not recognised. A bearer token that no token
authenticator recognises is an error ("invalid bearer token"), so it gets
401 instead of falling through to anonymous.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.authn.authenticator import NOT_MINE, Request, Result, TokenAuthenticator, failed

INVALID_TOKEN = "invalid bearer token"


def bearer_token(authorization: str) -> str:
    """The token of an ``Authorization`` header value, or "" if it is not a bearer credential."""
    parts = authorization.strip().split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return ""
    return parts[1]


class BearerTokenAuthenticator:
    """A request authenticator over an ordered list of token authenticators."""

    def __init__(self, token_authenticators: Sequence[TokenAuthenticator]):
        self._token_authenticators = tuple(token_authenticators)

    async def authenticate(self, request: Request) -> Result:
        """NOT_MINE without a bearer token; the first token authenticator's success; else an error."""
        token = bearer_token(request.authorization)
        if not token:
            return NOT_MINE
        errors: list[str] = []
        for authenticator in self._token_authenticators:
            result = await authenticator.authenticate_token(token)
            if result.ok:
                return result
            if result.error is not None:
                errors.append(result.error)
        return failed(", ".join(errors) if errors else INVALID_TOKEN)
