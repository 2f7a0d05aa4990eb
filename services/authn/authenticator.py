"""The authenticator interface (k8s.io/apiserver pkg/authentication/authenticator/interfaces.go).

An authenticator answers a three-way question about one request, as
kube-apiserver's do: "not my credential" (``ok`` False, no error), "bad
credential" (``ok`` False, ``error`` set: the request gets 401 unless a later
authenticator accepts it), or "this is the user" (``ok`` True, ``response``
set). Authenticators are async so ones that call out (webhook, OIDC) fit the
same interface.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

from kapi.attributes import UserInfo

# Seconds a gateway may cache a successful answer (x509, token file, anonymous).
DEFAULT_CACHE_TTL_SECONDS = 10


@dataclass(frozen=True)
class Request:
    """The credentials of one HTTP request, as the gateway forwards them (``AuthenticateRequest``).

    ``authorization`` is the Authorization header ("Bearer abc" or "");
    ``client_certificate_chain`` the PEM chain (leaf first) of a TLS
    connection the gateway terminated; ``forwarded_client_cert`` the Envoy
    ``x-forwarded-client-cert`` header, passed only when the request came
    from the configured front proxy.
    """

    authorization: str = ""
    client_certificate_chain: str = ""
    forwarded_client_cert: str = ""
    # The audiences the credential must be valid for (kube's authenticator.Audiences in the request
    # context): the API audiences (--api-audiences) for API requests, TokenReview's spec.audiences otherwise.
    audiences: tuple[str, ...] = ()


@dataclass(frozen=True)
class Response:
    """A successful answer: the user, which authenticator decided, the cache TTL in seconds, and the audiences.

    ``audiences`` are those of the requested audiences the credential is
    valid for (kube's ``authenticator.Response.Audiences``); ``cache_ttl_seconds``
    never reaches past the credential's expiry.
    """

    user: UserInfo
    authenticator: str
    cache_ttl_seconds: int = DEFAULT_CACHE_TTL_SECONDS
    audiences: tuple[str, ...] = ()


class Result(NamedTuple):
    """(response, ok, error): kube's ``(*Response, bool, error)`` triple.

    ``error`` is a human-readable reason (logged, never sent to the client:
    the client only sees "Unauthorized").
    """

    response: Response | None
    ok: bool
    error: str | None = None


NOT_MINE = Result(None, False, None)


def failed(reason: str) -> Result:
    """A recognised but invalid credential."""
    return Result(None, False, reason)


def succeeded(user: UserInfo, authenticator: str, cache_ttl_seconds: int = DEFAULT_CACHE_TTL_SECONDS,
              audiences: tuple[str, ...] = ()) -> Result:
    """An authenticated user."""
    return Result(Response(user, authenticator, cache_ttl_seconds, audiences), True, None)


class Authenticator(Protocol):
    """Identifies the caller of one request (authenticator.Request)."""

    async def authenticate(self, request: Request) -> Result:
        """Return NOT_MINE, ``failed(reason)`` or ``succeeded(user, name)``; never raises for bad input."""
        ...


class TokenAuthenticator(Protocol):
    """Identifies the owner of one bearer token (authenticator.Token)."""

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> Result:
        """Return NOT_MINE, ``failed(reason)`` or ``succeeded(user, name)`` for ``token``; never raises.

        ``audiences`` are the target audiences (empty: no audience check);
        audience-aware authenticators (service-account JWTs, webhooks) check
        the token against them; others are wrapped in
        :class:`services.authn.bearer.AudienceAgnostic`.
        """
        ...
