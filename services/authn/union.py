"""Combinators over authenticators (k8s.io/apiserver pkg/authentication/request/union and group).

kube-apiserver's chain is ``FailOnError(AuthenticatedGroupAdder(Union(x509,
tokens...)), anonymous)``: the inner union tries every authenticator, the
first success wins, and errors of the others are remembered; if none
succeeds but one failed, the request is refused (401) rather than treated as
anonymous; only when nothing recognised a credential does anonymous run.
"""

from __future__ import annotations

from collections.abc import Sequence

from kapi.attributes import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS
from services.authn.authenticator import NOT_MINE, Authenticator, Request, Response, Result


class Union:
    """Try ``authenticators`` in order; the first ``ok`` answer wins.

    With ``fail_on_error`` False (kube's ``union.New``) an error is recorded
    and the next authenticator runs; with True (``union.NewFailOnError``) the
    first error is returned at once. If none succeeds, the result carries
    the recorded errors joined with ", " (or is NOT_MINE when there were none).
    """

    def __init__(self, authenticators: Sequence[Authenticator], *, fail_on_error: bool = False):
        self._authenticators = tuple(authenticators)
        self._fail_on_error = fail_on_error

    async def authenticate(self, request: Request) -> Result:
        """Run the union over ``request``."""
        errors: list[str] = []
        for authenticator in self._authenticators:
            result = await authenticator.authenticate(request)
            if result.ok:
                return result
            if result.error is not None:
                if self._fail_on_error:
                    return result
                errors.append(result.error)
        if errors:
            return Result(None, False, ", ".join(errors))
        return NOT_MINE


class AuthenticatedGroupAdder:
    """Add ``system:authenticated`` to every user but ``system:anonymous`` (kube's AuthenticatedGroupAdder).

    Users that already carry ``system:authenticated`` or ``system:unauthenticated``
    are returned unchanged, so the group is never duplicated.
    """

    def __init__(self, authenticator: Authenticator):
        self._authenticator = authenticator

    async def authenticate(self, request: Request) -> Result:
        """Authenticate with the wrapped authenticator, then add the group."""
        result = await self._authenticator.authenticate(request)
        if not result.ok or result.response is None:
            return result
        user = result.response.user
        if user.username == ANONYMOUS or ALL_AUTHENTICATED in user.groups or ALL_UNAUTHENTICATED in user.groups:
            return result
        response = result.response
        user = type(user)(user.username, user.uid, (*user.groups, ALL_AUTHENTICATED), user.extra)
        return Result(Response(user, response.authenticator, response.cache_ttl_seconds, response.audiences),
                      True, None)


def build(authenticators: Sequence[Authenticator], anonymous: Authenticator | None) -> Authenticator:
    """kube-apiserver's request authenticator: group adder over the union, then anonymous if enabled.

    ``anonymous`` is None when ``--anonymous-auth=false``; then a request
    without any recognised credential is NOT_MINE, which the servicer turns
    into 401.
    """
    chain: Authenticator = AuthenticatedGroupAdder(Union(authenticators))
    if anonymous is not None:
        chain = Union([chain, anonymous], fail_on_error=True)
    return chain
