"""Bearer token authentication (k8s.io/apiserver pkg/authentication/request/bearertoken).

Reads ``Authorization: Bearer <token>`` (scheme case-insensitive, as kube)
and asks each token authenticator in turn. Other schemes (Basic, ...) and
an empty token are not recognised. A bearer token that no token
authenticator recognises is an error ("invalid bearer token"), so it gets
401 instead of falling through to anonymous.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.authn.authenticator import NOT_MINE, Request, Response, Result, TokenAuthenticator, failed

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
            result = await authenticator.authenticate_token(token, request.audiences)
            if result.ok:
                return result
            if result.error is not None:
                errors.append(result.error)
        return failed(", ".join(errors) if errors else INVALID_TOKEN)


class AudienceAgnostic:
    """Wraps a token authenticator that knows nothing of audiences (kube's ``audAgnosticTokenAuthenticator``).

    Its tokens are implicitly valid for the API audiences only: when the
    target audiences do not include one of ``api_audiences`` the token is
    not recognised (NOT_MINE); otherwise the answer carries the
    intersection as its audiences. With no target audiences the wrapped
    authenticator answers unchanged.
    """

    def __init__(self, delegate: TokenAuthenticator, api_audiences: Sequence[str]):
        self._delegate = delegate
        self._api_audiences = tuple(api_audiences)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> Result:
        """Delegate when the target audiences intersect the API audiences."""
        if not audiences:
            return await self._delegate.authenticate_token(token, ())
        common = tuple(a for a in self._api_audiences if a in audiences)
        if not common:
            return NOT_MINE
        result = await self._delegate.authenticate_token(token, ())
        if not result.ok or result.response is None:
            return result
        r = result.response
        return Result(Response(r.user, r.authenticator, r.cache_ttl_seconds, common), True, None)
