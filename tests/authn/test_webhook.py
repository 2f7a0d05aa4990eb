"""Webhook token authentication against the example webhook over TLS, plus slow and broken webhooks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from kapi.attributes import UserInfo
from kapi.duration import parse_duration
from services.authn.authenticator import NOT_MINE
from services.authn.webhook import WebhookTokenAuthenticator, load_config

from .webhookutil import example_module, kubeconfig, serve_tls, tls_files

API = ("https://kubernetes.default.svc.cluster.local",)
USERS = """tokens:
  carol-token: {username: carol, uid: "1001", groups: [devs, ops], extra: {scopes: [read]}}
"""


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(scope="module")
async def webhook(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Path, Path, dict[str, int]]]:
    """The example webhook (local file source) over TLS, a counter of its calls, plus slow and garbage servers."""
    tmp = tmp_path_factory.mktemp("webhook")
    _, ca, cert, key = tls_files(tmp)
    (tmp / "users.yaml").write_text(USERS)
    module = example_module()
    calls = {"n": 0}
    source = module.StaticFileSource(str(tmp / "users.yaml"))

    class Counting:
        async def lookup(self, token: str) -> object:
            calls["n"] += 1
            return await source.lookup(token)

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(1)
        return web.json_response({})

    async def garbage(request: web.Request) -> web.Response:
        return web.Response(text="<html>not json</html>")

    async def error(request: web.Request) -> web.Response:
        return web.Response(status=500, text="boom")

    async def no_user(request: web.Request) -> web.Response:
        return web.json_response({"status": {"authenticated": True, "user": {"groups": "x"}}})

    other = web.Application()
    other.router.add_post("/slow", slow)
    other.router.add_post("/garbage", garbage)
    other.router.add_post("/error", error)
    other.router.add_post("/no-user", no_user)
    runners = []
    good_runner, good_port = await serve_tls(module.make_app(Counting()), cert, key)
    runners.append(good_runner)
    bad_runner, bad_port = await serve_tls(other, cert, key)
    runners.append(bad_runner)
    kubeconfig(tmp / "good.kubeconfig", f"https://127.0.0.1:{good_port}/authenticate", ca)
    for name in ("slow", "garbage", "error", "no-user"):
        kubeconfig(tmp / f"{name}.kubeconfig", f"https://127.0.0.1:{bad_port}/{name}", ca)
    kubeconfig(tmp / "untrusted.kubeconfig", f"https://127.0.0.1:{good_port}/authenticate",
               tls_files(tmp_path_factory.mktemp("other"))[1])
    try:
        yield tmp, ca, calls
    finally:
        for runner in runners:
            await runner.cleanup()


async def test_authenticated_user_and_cache(webhook: tuple[Path, Path, dict[str, int]]) -> None:
    tmp, _, calls = webhook
    clock = Clock()
    auth = WebhookTokenAuthenticator(load_config(str(tmp / "good.kubeconfig")), API, cache_ttl=120, clock=clock)
    try:
        before = calls["n"]
        result = await auth.authenticate_token("carol-token", API)
        assert result.ok and result.response is not None
        assert result.response.user == UserInfo("carol", "1001", ("devs", "ops"), (("scopes", ("read",)),))
        assert result.response.audiences == API and result.response.cache_ttl_seconds == 10
        assert await auth.authenticate_token("nobody", API) == NOT_MINE
        await auth.authenticate_token("carol-token", API)
        await auth.authenticate_token("nobody", API)
        assert calls["n"] - before == 2  # both answers cached
        clock.now += 121
        await auth.authenticate_token("carol-token", API)
        assert calls["n"] - before == 3
        wrong = await auth.authenticate_token("carol-token", ("vault",))
        assert not wrong.ok and "invalid for the target audiences" in (wrong.error or "")
    finally:
        await auth.close()


@pytest.mark.parametrize(("name", "error"), [
    ("slow", "did not answer in time"),
    ("garbage", "the authentication webhook failed"),
    ("error", "HTTP 500"),
    ("no-user", "the authentication webhook failed"),
    ("untrusted", "certificate verify failed"),
])
async def test_broken_webhooks_fail_the_token(webhook: tuple[Path, Path, dict[str, int]], name: str,
                                              error: str) -> None:
    tmp, _, _ = webhook
    auth = WebhookTokenAuthenticator(load_config(str(tmp / f"{name}.kubeconfig")), API, timeout=0.3)
    try:
        result = await auth.authenticate_token("carol-token", API)
        assert not result.ok and result.error is not None and error in result.error, result
    finally:
        await auth.close()


@pytest.mark.parametrize(("text", "seconds"), [("2m", 120.0), ("1m30s", 90.0), ("500ms", 0.5), ("0", 0.0),
                                               ("45", 45.0)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_bad_config(tmp_path: Path) -> None:
    (tmp_path / "k").write_text("clusters: [{name: a, cluster: {server: ftp://x}}]\n")
    with pytest.raises(ValueError):
        load_config(str(tmp_path / "k"))
    with pytest.raises(ValueError):
        parse_duration("2 minutes")
