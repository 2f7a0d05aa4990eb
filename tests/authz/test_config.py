"""--authorization-config: AuthorizationConfiguration parsing, validation and a server built from it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kapi import flags, grpcutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from services.authz import server
from services.authz.config import ConfigError, load
from services.authz.union import ModeError
from tests.authn.webhookutil import serve_tls, tls_files

from .test_sync import authorize
from .webhookutil import example_app, kubeconfig


def write(tmp: Path, authorizers: list[dict], **extra: object) -> str:
    doc = {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthorizationConfiguration",
           "authorizers": authorizers, **extra}
    (tmp / "authz.yaml").write_text(yaml.safe_dump(doc))
    return str(tmp / "authz.yaml")


def hook(kubeconfig_file: str, **overrides: object) -> dict:
    settings = {"timeout": "3s", "subjectAccessReviewVersion": "v1", "matchConditionSubjectAccessReviewVersion": "v1",
                "failurePolicy": "NoOpinion",
                "connectionInfo": {"type": "KubeConfigFile", "kubeConfigFile": kubeconfig_file}}
    settings.update(overrides)
    return {k: v for k, v in settings.items() if v is not None}


@pytest.fixture
def kc(tmp_path: Path) -> str:
    _, ca, _, _ = tls_files(tmp_path)
    return str(kubeconfig(tmp_path / "webhook.kubeconfig", "https://127.0.0.1:1/", ca))


def test_load(tmp_path: Path, kc: str) -> None:
    modes, webhooks = load(write(tmp_path, [
        {"type": "Node", "name": "node"}, {"type": "RBAC", "name": "rbac"},
        {"type": "Webhook", "name": "first", "webhook": hook(kc, authorizedTTL="1m", cacheUnauthorizedRequests=False)},
        {"type": "Webhook", "name": "second", "webhook": hook(kc, failurePolicy="Deny",
                                                              subjectAccessReviewVersion="v1beta1")},
        {"type": "AlwaysDeny", "name": "deny"}]))
    assert modes == ["Node", "RBAC", "Webhook/first", "Webhook/second", "AlwaysDeny"]
    first, second = webhooks["Webhook/first"], webhooks["Webhook/second"]
    assert (first.authorized_ttl, first.unauthorized_ttl, first.timeout, first.failure_policy) == (60, 0, 3,
                                                                                                   "NoOpinion")
    assert (second.version, second.failure_policy, second.unauthorized_ttl) == ("v1beta1", "Deny", 30)


@pytest.mark.parametrize(
    ("authorizers", "error"),
    [
        ([], "at least one authorizer is required"),
        ([{"type": "ABAC", "name": "abac"}], r"authorizers\[0\].type: Unsupported value: 'ABAC'"),
        ([{"type": "RBAC", "name": "Not_A_Label"}], r"authorizers\[0\].name: Invalid value"),
        ([{"type": "RBAC", "name": "a"}, {"type": "Node", "name": "a"}], r"authorizers\[1\].name: Duplicate value"),
        ([{"type": "RBAC", "name": "a"}, {"type": "RBAC", "name": "b"}], r"authorizers\[1\].type: Duplicate value"),
        ([{"type": "Webhook", "name": "w"}], r"authorizers\[0\].webhook: Required value"),
        ([{"type": "Webhook", "name": "w", "webhook": {"timeout": None}}], "timeout: Required value"),
        ([{"type": "Webhook", "name": "w", "webhook": "KC:timeout=31s"}], "must be > 0s and <= 30s"),
        ([{"type": "Webhook", "name": "w", "webhook": "KC:failurePolicy=Allow"}], "failurePolicy: Unsupported"),
        ([{"type": "Webhook", "name": "w", "webhook": "KC:subjectAccessReviewVersion=v2"}],
         "subjectAccessReviewVersion: Unsupported"),
        ([{"type": "Webhook", "name": "w", "webhook": "KC:matchConditions=x"}], "matchConditions: Forbidden"),
        ([{"type": "RBAC", "name": "r", "webhook": {}}], r"authorizers\[0\].webhook: Invalid value"),
    ],
)
def test_invalid(tmp_path: Path, kc: str, authorizers: list[dict], error: str) -> None:
    for entry in authorizers:
        spec = entry.get("webhook")
        if isinstance(spec, str):  # "KC:field=value": a valid webhook with one field overridden
            key, value = spec[3:].split("=")
            entry["webhook"] = hook(kc, **{key: [{"expression": value}] if key == "matchConditions" else value})
        elif isinstance(spec, dict) and "timeout" in spec:
            entry["webhook"] = {}
    with pytest.raises(ConfigError, match=error):
        load(write(tmp_path, authorizers))


def test_not_a_configuration(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("kind: Something\n")
    with pytest.raises(ConfigError, match="not an AuthorizationConfiguration"):
        load(str(tmp_path / "x.yaml"))


@pytest.mark.parametrize("extra", [["--authorization-mode", "RBAC"], ["--authorization-policy-file", "/p"],
                                   ["--authorization-webhook-config-file", "/w"]])
def test_excludes_legacy_flags(tmp_path: Path, extra: list[str]) -> None:
    path = write(tmp_path, [{"type": "AlwaysAllow", "name": "all"}])
    with pytest.raises(ModeError, match="--authorization-config can not be specified when"):
        server.check_args(flags.parse(flags.AUTHZ, ["--authorization-config", path, *extra]))


async def test_server_from_configuration(tmp_path: Path) -> None:
    """Two webhooks in order: a dead one with failurePolicy Deny decides before the example is asked."""
    _, ca, cert, key = tls_files(tmp_path)
    runner, port = await serve_tls(example_app(tmp_path), cert, key)
    live = str(kubeconfig(tmp_path / "live.kubeconfig", f"https://127.0.0.1:{port}/", ca))
    dead = str(kubeconfig(tmp_path / "dead.kubeconfig", "https://127.0.0.1:1/", ca))
    path = write(tmp_path, [
        {"type": "Webhook", "name": "example", "webhook": hook(live)},
        {"type": "Webhook", "name": "strict", "webhook": hook(dead, failurePolicy="Deny", timeout="1s")},
        {"type": "AlwaysAllow", "name": "rest"}])
    service = await server.start(flags.parse(flags.AUTHZ, ["--authorization-config", path]))
    channel = grpcutil.channel(f"127.0.0.1:{service.port}", None)
    stub = authz_pb2_grpc.AuthorizationStub(channel)
    try:
        def attrs(user: str, resource: str) -> Attributes:
            return Attributes(user=UserInfo(user), verb="get", resource_request=True, resource=resource,
                              namespace="ns")

        reply = await authorize(stub, attrs("wendy", "configmaps"))
        assert (reply.decision, reply.reason) == (authz_pb2.DECISION_ALLOW, "wendy reads configmaps")
        reply = await authorize(stub, attrs("wendy", "secrets"))  # example: NoOpinion; strict: down -> Deny
        assert reply.decision == authz_pb2.DECISION_DENY
        assert "the authorization webhook failed" in reply.evaluation_error
    finally:
        await channel.close()
        await service.stop(0)
        await runner.cleanup()
