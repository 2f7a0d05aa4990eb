"""An example webhook token authenticator for kapi (or kube-apiserver): ``authentication.k8s.io/v1`` TokenReview.

The API server POSTs a TokenReview with ``spec.token``; this server looks
the token up in an identity source and answers ``status.authenticated``
with the user, or ``authenticated: false``. Identity sources are pluggable
(:class:`IdentitySource`):

- ``--tokens-file users.yaml``: a local file ``{tokens: {<token>: {username, uid, groups}}}`` (tests, demos);
- ``--user-endpoint https://api.github.com/user``: an OAuth provider's "current user" endpoint, called
  with the token as a bearer credential; the login becomes the user name (``--username-prefix``
  prepended) and the numeric id the uid, optionally with the organisations from ``--orgs-endpoint``
  as groups (the pattern of the classic GitHub authn webhook).

Serve it over TLS and point ``--authentication-token-webhook-config-file`` at a kubeconfig
whose cluster ``server`` is this URL (see README.md)::

    python webhook.py --tokens-file users.yaml --tls-cert-file tls.crt --tls-private-key-file tls.key --port 9443
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import yaml
from aiohttp import web

log = logging.getLogger("authn-webhook")


@dataclass(frozen=True)
class Identity:
    """Who a token belongs to."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict)


class IdentitySource(Protocol):
    """Resolves a bearer token to an identity; None when the token is unknown or invalid."""

    async def lookup(self, token: str) -> Identity | None:
        """The identity of ``token``, or None. Raises on an outage of the source (the review then fails)."""
        ...


class StaticFileSource:
    """Tokens from a local YAML file: ``tokens: {<token>: {username: ..., uid: ..., groups: [...]}}``."""

    def __init__(self, path: str):
        doc = yaml.safe_load(Path(path).read_text()) or {}
        self._tokens = {str(token): Identity(str(u["username"]), str(u.get("uid", "")),
                                             tuple(u.get("groups") or ()), dict(u.get("extra") or {}))
                        for token, u in (doc.get("tokens") or {}).items()}

    async def lookup(self, token: str) -> Identity | None:
        """The file's entry for ``token``."""
        return self._tokens.get(token)


class UserEndpointSource:
    """An OAuth provider's user endpoint (e.g. GitHub's ``/user``) called with the token.

    401/403 from the provider -> unknown token; other failures raise.
    """

    def __init__(self, user_url: str, orgs_url: str = "", username_prefix: str = "", timeout: float = 5.0):
        self._user_url = user_url
        self._orgs_url = orgs_url
        self._prefix = username_prefix
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    async def _get(self, session: aiohttp.ClientSession, url: str, token: str) -> Any:
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        async with session.get(url, headers=headers, timeout=self._timeout) as response:
            if response.status in (401, 403):
                return None
            response.raise_for_status()
            return await response.json()

    async def lookup(self, token: str) -> Identity | None:
        """login -> username, id -> uid, organisation logins -> groups."""
        async with aiohttp.ClientSession() as session:
            user = await self._get(session, self._user_url, token)
            if not isinstance(user, dict) or not user.get("login"):
                return None
            groups: tuple[str, ...] = ()
            if self._orgs_url:
                orgs = await self._get(session, self._orgs_url, token) or []
                groups = tuple(str(o["login"]) for o in orgs if isinstance(o, dict) and o.get("login"))
        return Identity(self._prefix + str(user["login"]), str(user.get("id", "")), groups)


def review_answer(review: Any, identity: Identity | None, error: str = "") -> dict[str, Any]:
    """The TokenReview to send back: the request with ``status`` filled."""
    status: dict[str, Any] = {"authenticated": False, "user": {}}
    if identity is not None:
        user: dict[str, Any] = {"username": identity.username, "groups": list(identity.groups)}
        if identity.uid:
            user["uid"] = identity.uid
        if identity.extra:
            user["extra"] = identity.extra
        status = {"authenticated": True, "user": user}
    elif error:
        status["error"] = error
    spec = review.get("spec") if isinstance(review, dict) else None
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec or {}, "status": status}


def make_app(source: IdentitySource) -> web.Application:
    """The aiohttp application: POST / (and /authenticate) answer TokenReviews."""

    async def authenticate(request: web.Request) -> web.Response:
        try:
            review = json.loads(await request.read())
            token = review["spec"]["token"]
            if review.get("kind") != "TokenReview" or not isinstance(token, str):
                raise ValueError("not a TokenReview")
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": "expected an authentication.k8s.io/v1 TokenReview"}, status=400)
        try:
            identity = await source.lookup(token)
        except Exception as exc:  # noqa: BLE001 - an identity source outage is a refusal with a reason
            log.warning("identity source failed: %s", exc)
            return web.json_response(review_answer(review, None, "identity source unavailable"))
        log.info("token review: %s", identity.username if identity else "unknown token")
        return web.json_response(review_answer(review, identity))

    app = web.Application()
    app.router.add_post("/", authenticate)
    app.router.add_post("/authenticate", authenticate)
    return app


async def serve(args: argparse.Namespace) -> None:
    """Serve until cancelled, writing the bound port to ``--port-file`` if given."""
    source: IdentitySource
    if args.tokens_file:
        source = StaticFileSource(args.tokens_file)
    else:
        source = UserEndpointSource(args.user_endpoint, args.orgs_endpoint, args.username_prefix)
    context = None
    if args.tls_cert_file:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.tls_cert_file, args.tls_private_key_file)
    runner = web.AppRunner(make_app(source), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.bind_address, args.port, ssl_context=context)
    await site.start()
    port = runner.addresses[0][1]
    if args.port_file:
        Path(args.port_file).write_text(str(port))
    log.info("authn webhook serving on %s:%s", args.bind_address, port)
    await asyncio.Event().wait()


def main() -> None:
    """Parse flags and serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens-file", default="", help="YAML file of tokens (the local identity source)")
    parser.add_argument("--user-endpoint", default="", help="OAuth provider user endpoint, e.g. "
                        "https://api.github.com/user")
    parser.add_argument("--orgs-endpoint", default="", help="optional endpoint listing the user's organisations")
    parser.add_argument("--username-prefix", default="", help="prepended to provider logins, e.g. github:")
    parser.add_argument("--bind-address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9443)
    parser.add_argument("--port-file", default="")
    parser.add_argument("--tls-cert-file", default="")
    parser.add_argument("--tls-private-key-file", default="")
    args = parser.parse_args()
    if not args.tokens_file and not args.user_endpoint:
        parser.error("one of --tokens-file or --user-endpoint is required")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
