"""ImagePolicyWebhook against the example ImageReview backend over TLS: config, review, cache, retries, defaultAllow."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from examples.webhooks import common, image_policy
from kapi import errors
from kapi.local import pki
from services.admission.plugins import PluginContext, build
from services.admission.plugins.image_policy import (
    FAILED_OPEN_ANNOTATION,
    FAILED_OPEN_AUDIT_KEY,
    ImagePolicyConfig,
    ImagePolicyWebhook,
    parse_config,
)
from tests.admission.fakes import FakeInformers, FakeNamespaces, pod, request
from tests.conftest import free_port


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Backend:
    """The example backend plus a flaky route: /flaky fails with ``codes`` in turn, then answers allowed."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.certs = pki.ensure_pki(tmp, port=None)
        self.app = image_policy.make_app()
        self.codes: list[int] = []
        self.app.router.add_post("/flaky", self.flaky)
        self.port = 0

    async def flaky(self, http: web.Request) -> web.Response:
        if self.codes:
            return web.Response(status=self.codes.pop(0), text="try again")
        return web.json_response({"apiVersion": "imagepolicy.k8s.io/v1alpha1", "kind": "ImageReview",
                                  "status": {"allowed": True}})

    @property
    def reviews(self) -> list[dict[str, Any]]:
        return self.app[image_policy.REVIEWS]

    def kubeconfig(self, path: str = "/image-policy", port: int | None = None, ca: bool = True) -> str:
        cluster: dict[str, Any] = {"server": f"https://127.0.0.1:{port or self.port}{path}"}
        if ca:
            cluster["certificate-authority"] = str(self.certs.ca_cert)
        file = self.tmp / f"kc-{len(list(self.tmp.glob('kc-*')))}.yaml"
        file.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "clusters": [{"name": "images", "cluster": cluster}],
            "users": [{"name": "apiserver", "user": {"token": "secret-token"}}],
            "contexts": [{"name": "c", "context": {"cluster": "images", "user": "apiserver"}}],
            "current-context": "c"}))
        return str(file)


@pytest.fixture(scope="module")
async def backend(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Backend]:
    b = Backend(tmp_path_factory.mktemp("image-policy"))
    runner, b.port = await common.start(b.app, b.certs.apiserver_cert, b.certs.apiserver_key)
    yield b
    await runner.cleanup()


async def make(kubeconfig: str, clock: Clock | None = None, sleeps: list[float] | None = None,
               **policy: Any) -> ImagePolicyWebhook:
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)
    return ImagePolicyWebhook({"imagePolicy": {"kubeConfigFile": kubeconfig, **policy}}, clock=clock or Clock(),
                              sleep=sleep)


def a_pod(image: str = "nginx:1.27", annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    p = pod(**spec)
    p["spec"]["containers"][0]["image"] = image
    if annotations:
        p["metadata"]["annotations"] = annotations
    return p


async def refusal(plugin: ImagePolicyWebhook, req: Any) -> str:
    with pytest.raises(errors.StatusError) as exc:
        await plugin.validate(req)
    assert exc.value.code == 403
    return exc.value.message


@pytest.mark.parametrize(("policy", "expected"), [
    ({}, ImagePolicyConfig("/kc", 300.0, 30.0, 0.5, False)),
    ({"allowTTL": 50, "denyTTL": 10, "retryBackoff": 100, "defaultAllow": True},
     ImagePolicyConfig("/kc", 50.0, 10.0, 0.1, True)),
    ({"allowTTL": -1, "denyTTL": -1, "retryBackoff": -1}, ImagePolicyConfig("/kc", 0.0, 0.0, 0.0, False)),
])
def test_config_normalisation(policy: dict[str, Any], expected: ImagePolicyConfig) -> None:
    assert parse_config({"imagePolicy": {"kubeConfigFile": "/kc", **policy}}) == expected


@pytest.mark.parametrize(("config", "message"), [
    (None, "no config specified"),
    ({"imagePolicy": {}}, "ImagePolicyWebhook: imagePolicy.kubeConfigFile is required"),
    ({"imagePolicy": {"kubeConfigFile": "/kc", "allowTTL": 1}}, "valid value is between 1s and 30m0s, got 1s"),
    ({"imagePolicy": {"kubeConfigFile": "/kc", "denyTTL": 3600}}, "valid value is between 1s and 30m0s, got 1h0m0s"),
    ({"imagePolicy": {"kubeConfigFile": "/kc", "retryBackoff": 400000}},
     "valid value is between 1ns and 5m0s, got 6m40s"),
])
def test_config_errors(config: Any, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_config(config)
    assert str(exc.value) == message


async def test_allowed_and_denied_over_tls(backend: Backend) -> None:
    plugin = await make(backend.kubeconfig())
    start = len(backend.reviews)
    ok = a_pod(annotations={"team": "a", "ticket.image-policy.k8s.io/id": "42"},
               initContainers=[{"name": "init", "image": "busybox:1.36"}])
    await plugin.validate(request("CREATE", "pods", ok))
    assert backend.reviews[start:] == [{"containers": [{"image": "nginx:1.27"}, {"image": "busybox:1.36"}],
                                        "annotations": {"ticket.image-policy.k8s.io/id": "42"},
                                        "namespace": "demo"}]
    assert await refusal(plugin, request("CREATE", "pods", a_pod("nginx"))) == (
        'pods "web" is forbidden: image policy webhook backend denied one or more images: Images using latest '
        "tag are not allowed")
    update = request("UPDATE", "pods", a_pod("nginx:latest"), old=a_pod())
    assert "Images using latest tag are not allowed" in await refusal(plugin, update)
    await plugin.close()


async def test_what_is_reviewed(backend: Backend) -> None:
    plugin = await make(backend.kubeconfig())
    start = len(backend.reviews)
    await plugin.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}}))
    await plugin.validate(request("UPDATE", "pods", a_pod("nginx"), old=a_pod(), subresource="status"))
    assert backend.reviews[start:] == []
    eph = a_pod("nginx", ephemeralContainers=[{"name": "debug", "image": "busybox:1.36"}])
    await plugin.validate(request("UPDATE", "pods", eph, old=a_pod(), subresource="ephemeralcontainers"))
    assert backend.reviews[start:] == [{"containers": [{"image": "busybox:1.36"}], "namespace": "demo"}]
    await plugin.close()


async def test_answers_are_cached_per_ttl(backend: Backend) -> None:
    clock = Clock()
    plugin = await make(backend.kubeconfig(), clock, allowTTL=60, denyTTL=5)
    start = len(backend.reviews)
    for _ in range(3):
        await plugin.validate(request("CREATE", "pods", a_pod("nginx:1.25")))
        await refusal(plugin, request("CREATE", "pods", a_pod("redis")))
    assert len(backend.reviews) - start == 2
    clock.now += 6  # the denial expired, the approval did not
    await plugin.validate(request("CREATE", "pods", a_pod("nginx:1.25")))
    await refusal(plugin, request("CREATE", "pods", a_pod("redis")))
    assert len(backend.reviews) - start == 3
    clock.now += 60
    await plugin.validate(request("CREATE", "pods", a_pod("nginx:1.25")))
    assert len(backend.reviews) - start == 4
    await plugin.close()


async def test_audit_annotations_from_the_backend(backend: Backend) -> None:
    plugin = await make(backend.kubeconfig())
    req = request("CREATE", "pods", a_pod("nginx", {"break-glass.image-policy.k8s.io/reason": "INC-7"}))
    await plugin.validate(req)
    assert req.audit_annotations == {"imagepolicywebhook.image-policy.k8s.io/break-glass": "INC-7"}
    await plugin.close()


@pytest.mark.parametrize("default_allow", [False, True])
async def test_backend_down_default_allow(backend: Backend, default_allow: bool) -> None:
    port = free_port()
    plugin = await make(backend.kubeconfig(port=port), defaultAllow=default_allow)
    req = request("CREATE", "pods", a_pod())
    if default_allow:
        await plugin.validate(req)
        assert req.object["metadata"]["annotations"] == {FAILED_OPEN_ANNOTATION: "true"}
        assert req.audit_annotations == {FAILED_OPEN_AUDIT_KEY: "true"}
    else:
        assert await refusal(plugin, req) == (
            f'pods "web" is forbidden: Post "https://127.0.0.1:{port}/image-policy": dial tcp 127.0.0.1:{port}: '
            "connect: connection refused")
    await plugin.close()


async def test_untrusted_certificate_is_a_backend_failure(backend: Backend) -> None:
    plugin = await make(backend.kubeconfig(ca=False))
    message = await refusal(plugin, request("CREATE", "pods", a_pod()))
    assert message.startswith(f'pods "web" is forbidden: Post "https://127.0.0.1:{backend.port}/image-policy"')
    assert "certificate" in message
    await plugin.close()


@pytest.mark.parametrize(("codes", "sleeps", "outcome"), [
    ([500, 429], [0.1, 0.15], ""),
    ([500, 504, 500, 500, 500], [0.1, 0.15, 0.225, 0.3375],
     'pods "web" is forbidden: Error contacting webhook: 500'),
    ([400], [], 'pods "web" is forbidden: Error contacting webhook: 400'),
])
async def test_transient_failures_are_retried(backend: Backend, codes: list[int], sleeps: list[float],
                                              outcome: str) -> None:
    backend.codes = list(codes)
    slept: list[float] = []
    plugin = await make(backend.kubeconfig("/flaky"), sleeps=slept, retryBackoff=100)
    req = request("CREATE", "pods", a_pod())
    if outcome:
        assert await refusal(plugin, req) == outcome
    else:
        await plugin.validate(req)
    assert slept == pytest.approx(sleeps)
    await plugin.close()


async def test_built_from_the_admission_config(backend: Backend) -> None:
    ctx = PluginContext(namespaces=FakeNamespaces(), informers=FakeInformers())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no config specified"):
        build(["ImagePolicyWebhook"], ctx)
    ctx.config["ImagePolicyWebhook"] = {"imagePolicy": {"kubeConfigFile": backend.kubeconfig()}}
    (plugin,) = build(["ImagePolicyWebhook"], ctx)
    assert isinstance(plugin, ImagePolicyWebhook)
    req = request("CREATE", "pods", copy.deepcopy(a_pod("nginx:1.27")))
    await plugin.validate(req)
    await plugin.close()


def test_start_up_check_loads_the_kubeconfig(backend: Backend, tmp_path: Path) -> None:
    from services.admission.plugins import validate_config

    validate_config(["ImagePolicyWebhook"], {"ImagePolicyWebhook": {"imagePolicy": {
        "kubeConfigFile": backend.kubeconfig()}}})
    validate_config(["PodSecurity"], {})  # not enabled: not checked
    with pytest.raises(ValueError, match=r"ImagePolicyWebhook: reading kubeConfigFile .*missing\.yaml"):
        validate_config(["ImagePolicyWebhook"], {"ImagePolicyWebhook": {"imagePolicy": {
            "kubeConfigFile": str(tmp_path / "missing.yaml")}}})
