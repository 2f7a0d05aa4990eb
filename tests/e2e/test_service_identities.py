"""Identities for internal callers and the per-service gRPC APIs (docs/grpc-services.md).

- ``kapi certs --client NAME --group G`` issues a caller's client certificate
  from the cluster CA; RBAC governs it through Envoy exactly as any user.
- Every RPC of every backend (storage, authn, authz, flowcontrol, admission)
  refuses a certificate CN outside its ``--allowed-callers`` with
  PERMISSION_DENIED and a 403 Forbidden Status; kapi's own identities are
  served; a caller added with the flag is served; health and reflection are
  open and reflection lists each server's services.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2, message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from kapi import errors, grpcutil, jsonutil
from kapi.local.launcher import Stack, free_port
from kapi_proto.kapi.admission.v1 import admission_pb2
from kapi_proto.kapi.api.v1 import api_pb2
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc

from .conftest import Kubectl, wait_for

ROOT = Path(__file__).resolve().parents[2]
# process name in the stack -> the gRPC service it serves
SERVICES: dict[str, ServiceDescriptor] = {
    "storage-1": storage_pb2.DESCRIPTOR.services_by_name["Storage"],
    "authn": authn_pb2.DESCRIPTOR.services_by_name["Authentication"],
    "authz": authz_pb2.DESCRIPTOR.services_by_name["Authorization"],
    "flowcontrol": flowcontrol_pb2.DESCRIPTOR.services_by_name["FlowControl"],
    "admission": admission_pb2.DESCRIPTOR.services_by_name["Admission"],
}
OPEN = ["grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"]


def kapi_certs(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``kapi certs --state-dir <the stack's> ARGS`` as a user would; fails the test on a non-zero exit."""
    proc = subprocess.run([sys.executable, "-m", "kapi.local.cli", "certs", "--state-dir", str(stack.state_dir),
                           *args], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def callers(stack: Stack) -> Path:
    """The stack's pki/ with client certificates for mallory (nobody lets her in) and policy-engine."""
    for name in ("mallory", "policy-engine"):
        kapi_certs(stack, "--client", name)
    return stack.pki.dir


def tls(pki_dir: Path, stem: str) -> grpcutil.TLSFiles:
    return grpcutil.TLSFiles(str(pki_dir / f"{stem}.crt"), str(pki_dir / f"{stem}.key"), str(pki_dir / "ca.crt"))


def status_body(err: grpc.aio.AioRpcError) -> dict[str, Any]:
    value = dict(err.trailing_metadata() or ()).get(errors.STATUS_METADATA_KEY)
    assert value is not None, err
    return dict(jsonutil.loads(value))


async def call_empty(channel: grpc.aio.Channel, service: ServiceDescriptor, method: MethodDescriptor) -> None:
    """Call ``method`` with an empty request (no messages on a client stream) and read one answer."""
    path = f"/{service.full_name}/{method.name}"
    request = message_factory.GetMessageClass(method.input_type)()
    response = message_factory.GetMessageClass(method.output_type)
    kwargs = {"request_serializer": type(request).SerializeToString, "response_deserializer": response.FromString}

    async def nothing() -> AsyncIterator[Any]:
        return
        yield

    if method.client_streaming and method.server_streaming:
        call: Any = channel.stream_stream(path, **kwargs)(nothing(), timeout=10)
        await call.read()
    elif method.client_streaming:
        await channel.stream_unary(path, **kwargs)(nothing(), timeout=10)
    elif method.server_streaming:
        await channel.unary_stream(path, **kwargs)(request, timeout=10).read()
    else:
        await channel.unary_unary(path, **kwargs)(request, timeout=10)


# ---------------------------------------------------------------------------
# kapi certs --client: RBAC governs the identity exactly as REST's


def test_a_client_certificate_from_kapi_certs_is_governed_by_rbac(stack: Stack, kubectl: Kubectl,
                                                                 namespace: str) -> None:
    out = kapi_certs(stack, "--client", "carol", "--group", "dev").stdout
    assert "carol.kubeconfig" in out
    carol = Kubectl(stack.state_dir / "carol.kubeconfig")
    refused = carol.run("get", "configmaps", "-n", namespace, check=False)
    assert refused.returncode != 0
    assert (f'Error from server (Forbidden): configmaps is forbidden: User "carol" cannot list resource '
            f'"configmaps" in API group "" in the namespace "{namespace}"') in refused.stderr
    assert carol.run("auth", "can-i", "list", "configmaps", "-n", namespace, check=False).stdout.strip() == "no"
    assert carol.run("auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}"
                     ).stdout == 'carol ["dev","system:authenticated"]'
    kubectl.run("create", "rolebinding", "dev-view", "--clusterrole=view", "--group=dev", "-n", namespace)
    wait_for(lambda: carol.run("get", "configmaps", "-n", namespace, check=False).returncode == 0)
    assert carol.run("auth", "can-i", "list", "configmaps", "-n", namespace).stdout.strip() == "yes"
    # view does not write: still Forbidden for a create, with kube's message
    create = carol.run("create", "configmap", "x", "-n", namespace, check=False)
    assert (f'configmaps is forbidden: User "carol" cannot create resource "configmaps" in API group "" in the '
            f'namespace "{namespace}"') in create.stderr


# ---------------------------------------------------------------------------
# The per-service APIs: who may call them


@pytest.mark.parametrize("process", list(SERVICES))
async def test_an_unknown_caller_is_refused_on_every_rpc_of_every_backend(stack: Stack, callers: Path,
                                                                          process: str) -> None:
    service = SERVICES[process]
    assert len(service.methods) >= 1
    async with grpcutil.channel(stack.addresses[process], tls(callers, "mallory")) as channel:
        for method in service.methods:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call_empty(channel, service, method)
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, (method.name, info.value)
            body = status_body(info.value)
            assert (body["kind"], body["status"], body["code"], body["reason"]) == (
                "Status", "Failure", 403, "Forbidden"), body
            assert body["message"] == (f'forbidden: User "mallory" cannot call "/{service.full_name}/{method.name}": '
                                       "the service's --allowed-callers does not include it")
        # health stays open to her (it says only whether the server serves)
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_kapis_own_identities_are_served_and_only_the_ones_that_call_each_service(
        stack: Stack, callers: Path) -> None:
    pki_dir = stack.pki.dir
    key = storage_pb2.ResourceKey(resource="configmaps", namespace="default", name="absent-for-identities")
    for identity in ("gateway", "authn", "authz", "flowcontrol", "admission"):
        async with grpcutil.channel(stack.addresses["storage-1"], tls(pki_dir, f"kapi-{identity}")) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await storage_pb2_grpc.StorageStub(channel).Get(storage_pb2.GetRequest(key=key), timeout=10)
            assert info.value.code() == grpc.StatusCode.NOT_FOUND, identity  # served: the object is absent
    async with grpcutil.channel(stack.addresses["authn"], tls(pki_dir, "kapi-gateway")) as channel:
        review = await authn_pb2_grpc.AuthenticationStub(channel).ReviewToken(
            authn_pb2.ReviewTokenRequest(token="not-a-token"), timeout=10)
        assert not review.authenticated
    async with grpcutil.channel(stack.addresses["authz"], tls(pki_dir, "kapi-gateway")) as channel:
        decision = await authz_pb2_grpc.AuthorizationStub(channel).Authorize(authz_pb2.AuthorizeRequest(
            attributes={"user": {"username": "kubernetes-admin", "groups": ["system:masters"]}, "verb": "get",
                        "resource": "configmaps", "namespace": "default", "resource_request": True}), timeout=10)
        assert decision.decision == authz_pb2.DECISION_ALLOW
    async with grpcutil.channel(stack.addresses["flowcontrol"], tls(pki_dir, "kapi-gateway")) as channel:
        dump = await flowcontrol_pb2_grpc.FlowControlStub(channel).Dump(
            flowcontrol_pb2.DumpRequest(kind="priority_levels"), timeout=10)
        assert "PriorityLevelName" in dump.text
    # kapi's identities are not interchangeable: only the gateway calls authz and admission, storage calls nobody
    for process, identity in (("authz", "admission"), ("admission", "authn"), ("authn", "storage"),
                              ("storage-1", "storage")):
        service = SERVICES[process]
        async with grpcutil.channel(stack.addresses[process], tls(pki_dir, f"kapi-{identity}")) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call_empty(channel, service, service.methods[0])
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, (process, identity)
            assert f'User "kapi-{identity}"' in status_body(info.value)["message"]


@pytest.fixture
def authn_for_policy_engine(stack: Stack, callers: Path, tmp_path: Path) -> Iterator[str]:
    """A second authn started by hand with ``--allowed-callers policy-engine`` and a static token; its address."""
    tokens = tmp_path / "tokens.csv"
    tokens.write_text('engine-token-0123456789,batch-job,uid-batch,"jobs"\n')
    port, port_file = free_port(), tmp_path / "authn.port"
    pki_dir = stack.pki.dir
    log = (tmp_path / "authn.log").open("wb")
    proc = subprocess.Popen([
        sys.executable, "-m", "kapi.local.cli", "authn", "--listen-address", f"127.0.0.1:{port}",
        "--grpc-cert-file", str(pki_dir / "kapi-authn.crt"), "--grpc-key-file", str(pki_dir / "kapi-authn.key"),
        "--grpc-ca-file", str(pki_dir / "ca.crt"), "--token-auth-file", str(tokens),
        "--allowed-callers", "policy-engine", "--port-file", str(port_file)],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text()):
            assert proc.poll() is None, (tmp_path / "authn.log").read_text()
            assert time.monotonic() < deadline, "authn did not start"
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


async def test_a_caller_added_with_the_flag_is_served_and_the_list_replaces_the_default(
        stack: Stack, callers: Path, authn_for_policy_engine: str) -> None:
    address = authn_for_policy_engine
    request = authn_pb2.ReviewTokenRequest(token="engine-token-0123456789")
    async with grpcutil.channel(address, tls(callers, "policy-engine")) as channel:
        review = await authn_pb2_grpc.AuthenticationStub(channel).ReviewToken(request, timeout=10)
        assert review.authenticated and review.user.username == "batch-job"
        assert list(review.user.groups) == ["jobs", "system:authenticated"]
    for stem in ("mallory", "kapi-gateway"):  # the flag's list replaces the default (kapi-gateway)
        async with grpcutil.channel(address, tls(callers, stem)) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await authn_pb2_grpc.AuthenticationStub(channel).ReviewToken(request, timeout=10)
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED, stem
            assert status_body(info.value)["reason"] == "Forbidden"


# ---------------------------------------------------------------------------
# Reflection (grpcurl list / describe)


@pytest.mark.parametrize("process", [*SERVICES, "gateway-1"])
async def test_reflection_lists_the_services_of_every_server(stack: Stack, callers: Path, process: str) -> None:
    if process == "gateway-1":  # the public API (docs/grpc.md): same server builder, open to every caller
        service, address = api_pb2.DESCRIPTOR.services_by_name["Resources"], stack.grpc_addresses[process]
    else:
        service, address = SERVICES[process], stack.addresses[process]
    async with grpcutil.channel(address, tls(callers, "mallory")) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        requests = [reflection_pb2.ServerReflectionRequest(list_services=""),
                    reflection_pb2.ServerReflectionRequest(file_containing_symbol=service.full_name)]
        replies = [r async for r in stub.ServerReflectionInfo(iter(requests), timeout=10)]
    assert sorted(s.name for s in replies[0].list_services_response.service) == sorted([service.full_name, *OPEN])
    files = [descriptor_pb2.FileDescriptorProto.FromString(b)
             for b in replies[1].file_descriptor_response.file_descriptor_proto]
    described = {f.package: [s.name for s in f.service] for f in files}
    assert service.name in described[service.full_name.rsplit(".", 1)[0]]
    assert {m.name for m in service.methods} <= {m.name for f in files for s in f.service for m in s.method}


def test_stack_services_are_all_covered(stack: Stack) -> None:
    """Every gRPC backend the stack runs is in SERVICES (a new service must join these tests)."""
    backends = {name for name in stack.addresses if not name.startswith(("etcd", "envoy", "gateway", "storage-"))}
    assert backends == {p for p in SERVICES if not p.startswith("storage-")}
