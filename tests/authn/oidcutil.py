"""A local HTTPS OpenID issuer on 127.0.0.1 (discovery document + JWKS) in a background thread, for tests."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import jwt
from aiohttp import web
from cryptography.hazmat.primitives.asymmetric import rsa

from .webhookutil import serve_tls, tls_files


class Issuer:
    """Serves ``/.well-known/openid-configuration`` and ``/jwks``; ``add_key`` rotates in a new signing key."""

    def __init__(self, tmp: Path):
        _, self.ca_file, self._cert, self._key = tls_files(tmp)
        self.keys: dict[str, rsa.RSAPrivateKey] = {}
        self.jwks_fetches = 0
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def ca_pem(self) -> str:
        return self.ca_file.read_text()

    def add_key(self, kid: str) -> None:
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def token(self, kid: str = "k1", **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": self.url, "aud": "kapi", "sub": "user-1", "iat": now, "exp": now + 600, **claims}
        body = {k: v for k, v in body.items() if v is not None}
        return jwt.encode(body, self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def _jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in self.keys.items():
            jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def discovery(request: web.Request) -> web.Response:
            return web.json_response({"issuer": self.url, "jwks_uri": self.url + "/jwks"})

        async def jwks(request: web.Request) -> web.Response:
            self.jwks_fetches += 1
            return web.json_response(self._jwks())

        app = web.Application()
        app.router.add_get("/.well-known/openid-configuration", discovery)
        app.router.add_get("/jwks", jwks)
        self._runner, port = self._loop.run_until_complete(serve_tls(app, self._cert, self._key))
        self.url = f"https://127.0.0.1:{port}"
        self._ready.set()
        self._loop.run_forever()

    def start(self) -> Issuer:
        self._thread.start()
        self._ready.wait(10)
        return self

    def stop(self) -> None:
        async def cleanup() -> None:
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
