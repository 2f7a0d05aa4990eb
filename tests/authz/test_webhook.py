"""The Webhook authorizer against the example webhook over TLS and against broken webhooks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kapi.attributes import Attributes, UserInfo
from kapi.kubeconfig import load_webhook_config
from kapi.local import pki
from services.authz.authorizer import Decision, Result
from services.authz.webhook import WebhookAuthorizer, decide, review
from tests.authn.webhookutil import serve_tls, tls_files

from .webhookutil import example_app, example_module, kubeconfig

WENDY = UserInfo("wendy", "uid-w", ("dev", "system:authenticated"), (("scopes", ("a", "b")),))
DAVE = UserInfo("dave", "", ("system:authenticated",))
OPS = UserInfo("olga", "", ("ops",))


def res(user: UserInfo, verb: str, resource: str = "configmaps", name: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, resource=resource, namespace="ns",
                      api_version="v1", name=name)


def url(user: UserInfo, path: str) -> Attributes:
    return Attributes(user=user, verb="get", resource_request=False, path=path)


def test_review_shapes() -> None:
    assert review(res(WENDY, "get", name="c")) == {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "metadata": {"creationTimestamp": None},
        "spec": {"resourceAttributes": {"namespace": "ns", "verb": "get", "version": "v1", "resource": "configmaps",
                                        "name": "c"},
                 "user": "wendy", "groups": ["dev", "system:authenticated"], "extra": {"scopes": ["a", "b"]},
                 "uid": "uid-w"},
        "status": {"allowed": False}}
    v1beta1 = review(url(OPS, "/metrics"), "v1beta1")
    assert v1beta1["apiVersion"] == "authorization.k8s.io/v1beta1"
    assert v1beta1["spec"] == {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}, "user": "olga",
                               "group": ["ops"]}


@pytest.mark.parametrize(
    ("status", "result"),
    [
        ({"allowed": True, "reason": "ok"}, Result(Decision.ALLOW, "ok", cacheable=False)),
        ({"allowed": False, "denied": True, "reason": "no"}, Result(Decision.DENY, "no", cacheable=False)),
        ({"allowed": False}, Result(Decision.NO_OPINION, "", cacheable=False)),
        ({"allowed": "yes"}, Result(Decision.NO_OPINION, "", cacheable=False)),  # only a JSON true allows
        ({"allowed": True, "denied": True}, Result(Decision.DENY, "", "webhook subject access review returned both "
                                                   "allow and deny response", cacheable=False)),
    ],
)
def test_decide(status: dict[str, Any], result: Result) -> None:
    assert decide(status) == result


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def no_sleep(_: float) -> None:
    return None


@pytest.fixture
async def tls(tmp_path: Path) -> tuple[Path, Path, Path]:
    _, ca, cert, key = tls_files(tmp_path)
    return ca, cert, key


@pytest.fixture
async def example(tmp_path: Path, tls: tuple[Path, Path, Path]) -> AsyncIterator[tuple[str, Path]]:
    ca, cert, key = tls
    runner, port = await serve_tls(example_app(tmp_path), cert, key)
    try:
        yield f"https://127.0.0.1:{port}/authorize", ca
    finally:
        await runner.cleanup()


def authorizer(tmp_path: Path, server: str, ca: Path, **kwargs: Any) -> WebhookAuthorizer:
    config = load_webhook_config(str(kubeconfig(tmp_path / "webhook.kubeconfig", server, ca)))
    return WebhookAuthorizer(config, sleep=no_sleep, **kwargs)


@pytest.mark.parametrize(
    ("attributes", "decision", "reason"),
    [
        (res(WENDY, "list"), Decision.ALLOW, "wendy reads configmaps"),
        (res(WENDY, "delete"), Decision.NO_OPINION, ""),
        (res(WENDY, "get", "secrets"), Decision.NO_OPINION, ""),
        (res(DAVE, "get"), Decision.DENY, "dave is suspended"),
        (url(OPS, "/metrics/cadvisor"), Decision.ALLOW, ""),
        (url(OPS, "/healthz"), Decision.NO_OPINION, ""),
        (res(OPS, "get", "metrics"), Decision.NO_OPINION, ""),  # a path rule does not match resource requests
    ],
)
async def test_example_webhook_over_tls(tmp_path: Path, example: tuple[str, Path], attributes: Attributes,
                                        decision: Decision, reason: str) -> None:
    webhook = authorizer(tmp_path, *example)
    try:
        result = await webhook.authorize(attributes)
        assert (result.decision, result.reason, result.error, result.cacheable) == (decision, reason, "", False)
    finally:
        await webhook.close()


async def test_cache_ttls(tmp_path: Path, example: tuple[str, Path]) -> None:
    clock = Clock()
    webhook = authorizer(tmp_path, *example, authorized_ttl=300, unauthorized_ttl=30, clock=clock)
    try:
        allowed, denied = res(WENDY, "get"), res(DAVE, "get")
        for _ in range(3):
            assert (await webhook.authorize(allowed)).decision == Decision.ALLOW
            assert (await webhook.authorize(denied)).decision == Decision.DENY
        assert webhook.calls == 2
        clock.now += 31  # the unauthorized answer expired, the authorized one not
        await webhook.authorize(allowed)
        await webhook.authorize(denied)
        assert webhook.calls == 3
        clock.now += 300
        await webhook.authorize(allowed)
        assert webhook.calls == 4
        other_user = res(UserInfo("wendy", "", ("other",)), "get")  # the key is the whole spec
        await webhook.authorize(other_user)
        assert webhook.calls == 5
    finally:
        await webhook.close()


async def test_timeout_is_no_opinion_never_allow(tmp_path: Path, example: tuple[str, Path],
                                                 caplog: pytest.LogCaptureFixture) -> None:
    webhook = authorizer(tmp_path, *example, timeout=0.3)
    try:
        slow = res(UserInfo("slow"), "get")  # the example answers "allow" after 1 second
        result = await webhook.authorize(slow)
        assert result == Result(Decision.NO_OPINION, "", "the authorization webhook did not answer within 0.3s",
                                cacheable=False)
        assert "Failed to make webhook authorizer request" in caplog.text
        await webhook.authorize(slow)
        assert webhook.calls == 2  # failures are not cached
    finally:
        await webhook.close()


def garbage_app(answers: list[tuple[int, bytes]]) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        json.loads(await request.read())
        status, body = answers.pop(0) if len(answers) > 1 else answers[0]
        return web.Response(status=status, body=body, content_type="application/json")

    app = web.Application()
    app.router.add_post("/", handle)
    return app


@pytest.mark.parametrize(
    ("answers", "error", "calls"),
    [
        ([(200, b"not json")], "the webhook's answer is not JSON", 1),
        ([(200, b'{"allowed": true}')], "not a SubjectAccessReview with a status", 1),
        ([(200, b'{"kind": "TokenReview", "status": {"allowed": true}}')], "not a SubjectAccessReview", 1),
        ([(200, b'["allowed"]')], "not a SubjectAccessReview", 1),
        ([(403, b'{"status": {"allowed": true}}')], "the webhook answered HTTP 403", 1),
        ([(500, b"{}")], "the webhook answered HTTP 500", 5),  # retried with backoff, then given up
        ([(200, b"x" * (2 << 20))], "too large", 1),
    ],
)
async def test_garbage_is_no_opinion(tmp_path: Path, tls: tuple[Path, Path, Path], answers: list[tuple[int, bytes]],
                                     error: str, calls: int) -> None:
    ca, cert, key = tls
    runner, port = await serve_tls(garbage_app(answers), cert, key)
    webhook = authorizer(tmp_path, f"https://127.0.0.1:{port}/", ca)
    try:
        result = await webhook.authorize(res(WENDY, "get"))
        assert (result.decision, result.cacheable) == (Decision.NO_OPINION, False)
        assert error in result.error
        assert webhook.calls == calls
    finally:
        await webhook.close()
        await runner.cleanup()


async def test_retries_5xx_then_answers(tmp_path: Path, tls: tuple[Path, Path, Path]) -> None:
    ca, cert, key = tls
    good = json.dumps({"kind": "SubjectAccessReview", "status": {"allowed": True}}).encode()
    runner, port = await serve_tls(garbage_app([(503, b""), (429, b""), (200, good)]), cert, key)
    webhook = authorizer(tmp_path, f"https://127.0.0.1:{port}/", ca)
    try:
        assert (await webhook.authorize(res(WENDY, "get"))).decision == Decision.ALLOW
        assert webhook.calls == 3
    finally:
        await webhook.close()
        await runner.cleanup()


async def test_unreachable_and_untrusted(tmp_path: Path, tls: tuple[Path, Path, Path],
                                         example: tuple[str, Path]) -> None:
    ca, _, _ = tls
    from kapi.local.launcher import free_port

    closed = authorizer(tmp_path, f"https://127.0.0.1:{free_port()}/", ca, timeout=2)
    other_ca = pki.ensure_pki(tmp_path / "other", port=None).ca_cert  # the server's certificate is not from it
    untrusted = authorizer(tmp_path, example[0], other_ca)
    try:
        for webhook in (closed, untrusted):
            result = await webhook.authorize(res(WENDY, "get"))
            assert (result.decision, result.cacheable) == (Decision.NO_OPINION, False)
            assert result.error.startswith("the authorization webhook failed")
    finally:
        await closed.close()
        await untrusted.close()


async def test_client_certificate_from_kapi_pki(tmp_path: Path, tls: tuple[Path, Path, Path]) -> None:
    """The example requires a client certificate (--client-ca-file); authz presents one from the kubeconfig."""
    ca, cert, key = tls
    cluster = pki.ensure_pki(tmp_path / "state", port=None)
    client_cert, client_key = pki.issue_client_cert(cluster, "kapi-authz-webhook")
    module = example_module()
    context = module.ssl_context(str(cert), str(key), str(cluster.ca_cert))
    runner = web.AppRunner(example_app(tmp_path), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    server = f"https://127.0.0.1:{runner.addresses[0][1]}/"
    with_cert = WebhookAuthorizer(load_webhook_config(str(kubeconfig(tmp_path / "a", server, ca, client_cert,
                                                                       client_key))))
    without = WebhookAuthorizer(load_webhook_config(str(kubeconfig(tmp_path / "b", server, ca))), timeout=2)
    try:
        assert (await with_cert.authorize(res(WENDY, "get"))).decision == Decision.ALLOW
        refused = await without.authorize(res(WENDY, "get"))
        assert refused.decision == Decision.NO_OPINION and refused.error
    finally:
        await with_cert.close()
        await without.close()
        await runner.cleanup()


async def test_concurrent_decisions(tmp_path: Path, example: tuple[str, Path]) -> None:
    webhook = authorizer(tmp_path, *example)
    try:
        results = await asyncio.gather(*(webhook.authorize(res(WENDY, "get", name=f"c{i}")) for i in range(20)))
        assert {r.decision for r in results} == {Decision.ALLOW}
    finally:
        await webhook.close()


async def test_review_body_is_html_escaped_as_go_writes_it(tmp_path: Path, tls: tuple[Path, Path, Path]) -> None:
    # kube's webhook client encodes the SubjectAccessReview with encoding/json: <, > and & as \u003c, \u003e, \u0026.
    ca, cert, key = tls
    bodies: list[bytes] = []

    async def handle(request: web.Request) -> web.Response:
        bodies.append(await request.read())
        return web.json_response({"kind": "SubjectAccessReview", "status": {"allowed": True}})

    app = web.Application()
    app.router.add_post("/", handle)
    runner, port = await serve_tls(app, cert, key)
    webhook = authorizer(tmp_path, f"https://127.0.0.1:{port}/", ca)
    try:
        await webhook.authorize(res(UserInfo("a<b>&c"), "get"))
        assert b'"user":"a\\u003cb\\u003e\\u0026c"' in bodies[0] and b"<" not in bodies[0], bodies[0]
    finally:
        await webhook.close()
        await runner.cleanup()
