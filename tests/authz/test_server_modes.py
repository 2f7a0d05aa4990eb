"""The authz server with Node, ABAC and Webhook modes: flag validation and decisions over gRPC."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from grpc_health.v1 import health_pb2

from kapi import flags, grpcutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from services.authz import server
from services.authz.abac import PolicyLoadError
from services.authz.union import ModeError
from tests.authn.webhookutil import serve_tls, tls_files

from .fakestorage import FakeStorage
from .test_node import pod
from .test_sync import authorize, eventually, health_status, storage_server
from .webhookutil import example_app, kubeconfig

ABBY = UserInfo("abby", "", ("system:authenticated",))
N1 = UserInfo("system:node:n1", "", ("system:nodes", "system:authenticated"))
ABAC_LINE = json.dumps({"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
                        "spec": {"user": "abby", "namespace": "*", "resource": "*", "apiGroup": "*",
                                 "readonly": True}})


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "abac.jsonl").write_text(ABAC_LINE + "\n")
    (tmp_path / "bad.jsonl").write_text("{oops\n")
    _, ca, _, _ = tls_files(tmp_path)
    kubeconfig(tmp_path / "webhook.kubeconfig", "https://127.0.0.1:1/", ca)
    return {"abac": str(tmp_path / "abac.jsonl"), "bad": str(tmp_path / "bad.jsonl"),
            "webhook": str(tmp_path / "webhook.kubeconfig")}


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--authorization-mode", "ABAC"], "authorization-mode ABAC's authorization policy file not passed"),
        (["--authorization-mode", "AlwaysAllow", "--authorization-policy-file", "{abac}"],
         "cannot specify --authorization-policy-file without mode ABAC"),
        (["--authorization-mode", "Webhook"], "authorization-mode Webhook's authorization config file not passed"),
        (["--authorization-mode", "AlwaysAllow", "--authorization-webhook-config-file", "{webhook}"],
         "cannot specify --authorization-webhook-config-file without mode Webhook"),
        (["--authorization-mode", "Node"], "--storage-address is required with --authorization-mode=Node"),
        (["--authorization-mode", "ABAC", "--authorization-policy-file", "{bad}"], "line 1"),
        (["--authorization-mode", "Webhook", "--authorization-webhook-config-file", "{webhook}",
          "--authorization-webhook-version", "v2"], "--authorization-webhook-version must be one of v1, v1beta1"),
        (["--authorization-mode", "Webhook", "--authorization-webhook-config-file", "{webhook}",
          "--authorization-webhook-cache-authorized-ttl", "soon"], "invalid duration"),
    ],
)
def test_check_args_refuses(files: dict[str, str], argv: list[str], error: str) -> None:
    args = flags.parse(flags.AUTHZ, [a.format(**files) for a in argv])
    with pytest.raises((ModeError, PolicyLoadError, ValueError), match=error):
        server.check_args(args)
    assert server.main([a.format(**files) for a in argv]) == 1


def test_check_args_loads(files: dict[str, str]) -> None:
    config = server.check_args(flags.parse(flags.AUTHZ, [
        "--authorization-mode", "Node,RBAC,ABAC,Webhook", "--storage-address", "127.0.0.1:1",
        "--authorization-policy-file", files["abac"], "--authorization-webhook-config-file", files["webhook"],
        "--authorization-webhook-cache-unauthorized-ttl", "1m", "--authorization-webhook-timeout", "500ms"]))
    assert config.modes == ["Node", "RBAC", "ABAC", "Webhook"]
    assert [p.user for p in config.policies] == ["abby"]
    spec = config.webhooks["Webhook"]
    assert spec.config.server == "https://127.0.0.1:1/"
    assert (spec.authorized_ttl, spec.unauthorized_ttl, spec.timeout, spec.failure_policy) == (300, 60, 0.5,
                                                                                                "NoOpinion")
    assert server.check_args(flags.parse(flags.AUTHZ, ["--storage-address", "x:1"])).modes == ["RBAC"]


def attrs(user: UserInfo, verb: str, resource: str, name: str = "", namespace: str = "ns") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, resource=resource, name=name,
                      namespace=namespace, api_version="v1")


async def test_server_node_abac_webhook(tmp_path: Path, files: dict[str, str]) -> None:
    fake = FakeStorage()
    await fake.put("pods", pod("p1", volumes=[{"name": "v", "secret": {"secretName": "s1"}}]))
    _, ca, cert, key = tls_files(tmp_path)
    runner, port = await serve_tls(example_app(tmp_path), cert, key)
    config = kubeconfig(tmp_path / "live.kubeconfig", f"https://127.0.0.1:{port}/", ca)
    async with storage_server(fake) as (address, _):
        service = await server.start(flags.parse(flags.AUTHZ, [
            "--storage-address", address, "--authorization-mode", "Node,RBAC,ABAC,Webhook",
            "--authorization-policy-file", files["abac"], "--authorization-webhook-config-file", str(config)]))
        channel = grpcutil.channel(f"127.0.0.1:{service.port}", None)
        stub = authz_pb2_grpc.AuthorizationStub(channel)
        try:
            await eventually(lambda: service.graph_sync is not None and service.graph_sync.synced.is_set(), 5)
            await eventually(lambda: service.sync is not None and service.sync.synced.is_set(), 5)
            await eventually(lambda: service.tasks[-1].done(), 5)
            assert await health_status(channel) == health_pb2.HealthCheckResponse.SERVING
            cases = [
                (attrs(N1, "get", "secrets", "s1"), authz_pb2.DECISION_ALLOW, "", True),
                (attrs(N1, "get", "secrets", "s2"), authz_pb2.DECISION_NO_OPINION,
                 "no relationship found between node 'n1' and this object", True),
                (attrs(ABBY, "list", "secrets"), authz_pb2.DECISION_ALLOW, "", False),
                (attrs(ABBY, "delete", "secrets", "s1"), authz_pb2.DECISION_NO_OPINION, "No policy matched.", True),
                (attrs(UserInfo("wendy"), "get", "configmaps", "c"), authz_pb2.DECISION_ALLOW,
                 "wendy reads configmaps", True),
                (attrs(UserInfo("dave"), "get", "configmaps", "c"), authz_pb2.DECISION_DENY, "dave is suspended",
                 True),
            ]
            for attributes, decision, reason, no_cache in cases:
                reply = await authorize(stub, attributes)
                assert reply.decision == decision, attributes
                assert reason in reply.reason
                assert reply.no_cache is no_cache, attributes
            # The graph follows pod events.
            await fake.put("pods", pod("p2", volumes=[{"name": "v", "secret": {"secretName": "s2"}}]))
            await eventually(lambda: service.graph.has_reference("n1", ("secret", "ns", "s2")))
            assert (await authorize(stub, attrs(N1, "get", "secrets", "s2"))).decision == authz_pb2.DECISION_ALLOW
            # A webhook-enabled union cannot list every rule.
            review = await stub.RulesReview(authz_pb2.RulesReviewRequest(user=ABBY.to_proto(), namespace="ns"))
            assert review.incomplete
            assert (["*"], ["*"], ["get", "list", "watch"]) in [
                (list(r.api_groups), list(r.resources), list(r.verbs)) for r in review.resource_rules]  # ABAC's
        finally:
            await channel.close()
            await service.stop(0)
            await runner.cleanup()
