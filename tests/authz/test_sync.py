"""PolicySync and bootstrap against an in-memory storage service, and the authz server end to end."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kapi import errors, flags, grpcutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2_grpc
from services.authz import bootstrap, server
from services.authz.policy import PolicyIndex, PolicySync

from .fakestorage import FakeStorage
from .objects import binding, role, rule, subject

ALICE = UserInfo("alice", "", ("system:authenticated",))


@contextlib.asynccontextmanager
async def storage_server(fake: FakeStorage) -> AsyncIterator[tuple[str, storage_pb2_grpc.StorageStub]]:
    srv, _, port = grpcutil.make_server("127.0.0.1:0", None)
    storage_pb2_grpc.add_StorageServicer_to_server(fake, srv)
    await srv.start()
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    try:
        yield f"127.0.0.1:{port}", storage_pb2_grpc.StorageStub(channel)
    finally:
        await channel.close()
        await srv.stop(0)


@contextlib.asynccontextmanager
async def running_sync(stub: storage_pb2_grpc.StorageStub) -> AsyncIterator[tuple[PolicySync, PolicyIndex]]:
    index = PolicyIndex()
    sync = PolicySync(stub, index, min_backoff=0.01, max_backoff=0.05)
    task = asyncio.create_task(sync.run())
    try:
        yield sync, index
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def eventually(check: Callable[[], bool], timeout: float = 2.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


def crb(name: str, user: str) -> dict:
    return binding(name, "ClusterRole", "reader", [subject("User", user)])


async def test_list_then_watch() -> None:
    fake = FakeStorage()
    await fake.put("clusterroles", role("reader", [rule(["get"], [""], ["pods"])]))
    await fake.put("clusterrolebindings", crb("one", "alice"))
    async with storage_server(fake) as (_, stub), running_sync(stub) as (sync, index):
        await asyncio.wait_for(sync.synced.wait(), 2)
        assert [b.name for b, _ in index.cluster_role_bindings_for(ALICE)] == ["one"]
        assert index.revision == fake.revision == 3
        await fake.put("rolebindings", binding("rb", "ClusterRole", "reader", [subject("User", "alice")], "demo"))
        await eventually(lambda: bool(index.role_bindings_for(ALICE, "demo")))
        assert index.revision == 4
        await fake.delete("clusterrolebindings", "", "one")
        await eventually(lambda: not index.cluster_role_bindings_for(ALICE))
        assert index.revision == 5
        assert fake.lists["clusterrolebindings"] == 1


async def test_relists_after_cut_watch_and_410() -> None:
    fake = FakeStorage()
    await fake.put("clusterrolebindings", crb("old", "alice"))
    async with storage_server(fake) as (_, stub), running_sync(stub) as (sync, index):
        await asyncio.wait_for(sync.synced.wait(), 2)
        await eventually(fake.all_watching)
        # Changes made while no watch is open (the next watch answers 410) are found by the re-list.
        fake.expire_watches = 4
        await fake.cut_watches()
        await fake.delete("clusterrolebindings", "", "old")
        await fake.put("clusterrolebindings", crb("new", "alice"))
        await eventually(lambda: [b.name for b, _ in index.cluster_role_bindings_for(ALICE)] == ["new"])
        await eventually(lambda: fake.expire_watches == 0 and fake.all_watching())
        # every resource re-listed after the cut (how many times depends on timing: each 410 costs one more)
        assert set(fake.lists) == {"roles", "clusterroles", "rolebindings", "clusterrolebindings"}
        assert all(n >= 2 for n in fake.lists.values()), fake.lists
        # ... and the sync watches again afterwards.
        await fake.put("clusterrolebindings", crb("later", "alice"))
        await eventually(lambda: len(index.cluster_role_bindings_for(ALICE)) == 2)


async def test_waits_for_storage() -> None:
    fake = FakeStorage()
    fake.fail_lists = 6
    async with storage_server(fake) as (_, stub), running_sync(stub) as (sync, _index):
        await asyncio.wait_for(sync.synced.wait(), 3)
        assert fake.fail_lists == 0


async def test_bootstrap_creates_once_and_retries_while_unavailable() -> None:
    fake = FakeStorage()
    fake.fail_creates = 3
    async with storage_server(fake) as (_, stub):
        created = await bootstrap.ensure(stub, min_backoff=0.01)
        assert created == len(bootstrap.default_objects()) + len(bootstrap.namespaced_objects())
        assert await bootstrap.ensure(stub) == 0
    admin = fake.objects[("clusterroles", "", "cluster-admin")]
    assert admin["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert admin["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    assert ("clusterrolebindings", "", "system:public-info-viewer") in fake.objects
    reader = fake.objects[("roles", "kube-system", "extension-apiserver-authentication-reader")]
    assert reader["rules"][0]["resourceNames"] == ["extension-apiserver-authentication"]
    assert ("rolebindings", "kube-system", "system::extension-apiserver-authentication-reader") in fake.objects


def attrs(user: UserInfo, verb: str, resource: str = "", namespace: str = "", path: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=bool(resource), resource=resource,
                      namespace=namespace, path=path, api_version="v1")


async def authorize(stub: authz_pb2_grpc.AuthorizationStub, attributes: Attributes) -> authz_pb2.AuthorizeResponse:
    reply = await grpcutil.call("authz", stub.Authorize, authz_pb2.AuthorizeRequest(attributes=attributes.to_proto()),
                                timeout=5)
    assert isinstance(reply, authz_pb2.AuthorizeResponse)
    return reply


async def health_status(channel: grpc.aio.Channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return reply.status


async def test_server_rbac_end_to_end(tmp_path: Path) -> None:
    fake = FakeStorage()
    fake.fail_lists = 1000  # storage "down" at first
    async with storage_server(fake) as (address, _):
        args = flags.parse(flags.AUTHZ, ["--storage-address", address, "--port-file", str(tmp_path / "port")])
        service = await server.start(args)
        channel = grpcutil.channel(f"127.0.0.1:{service.port}", None)
        stub = authz_pb2_grpc.AuthorizationStub(channel)
        try:
            assert (tmp_path / "port").read_text() == str(service.port)
            # Before the first sync: fail closed with 503, health NOT_SERVING.
            with pytest.raises(errors.StatusError) as info:
                await authorize(stub, attrs(ALICE, "get", path="/healthz"))
            assert (info.value.code, info.value.message) == (503, "authorization policy not yet synced")
            assert await health_status(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
            fake.fail_lists = 0
            await eventually(lambda: service.sync is not None and service.sync.synced.is_set(), 5)
            await eventually(lambda: ("clusterrolebindings", "", "system:basic-user") in fake.objects, 5)
            await eventually(lambda: service.index.cluster_role("system:public-info-viewer") is not None)
            await eventually(lambda: service.index.cluster_role_bindings_for(ALICE) != [])
            # The aggregator fills view (from system:aggregate-to-view) through storage.
            await eventually(lambda: bool((r := service.index.cluster_role("view")) and r.rules), 5)
            # SERVING follows once the bootstrap policy is written, which may finish after the aggregation above.
            for _ in range(500):
                if await health_status(channel) == health_pb2.HealthCheckResponse.SERVING:
                    break
                await asyncio.sleep(0.01)
            assert await health_status(channel) == health_pb2.HealthCheckResponse.SERVING

            reply = await authorize(stub, attrs(ALICE, "get", path="/version"))
            assert reply.decision == authz_pb2.DECISION_ALLOW
            assert reply.policy_revision == service.index.revision > 0
            reply = await authorize(stub, attrs(ALICE, "list", "pods", "demo"))
            assert (reply.decision, reply.reason) == (authz_pb2.DECISION_NO_OPINION, "")

            before = reply.policy_revision
            await fake.put("rolebindings", binding("alice-view", "ClusterRole", "view", [subject("User", "alice")],
                                                   "demo"))
            await eventually(lambda: service.index.revision > before, 1)
            reply = await authorize(stub, attrs(ALICE, "list", "pods", "demo"))
            assert reply.decision == authz_pb2.DECISION_ALLOW
            assert reply.reason == ('RBAC: allowed by RoleBinding "alice-view/demo" of ClusterRole "view" '
                                    'to User "alice"')
            assert reply.policy_revision > before
        finally:
            await channel.close()
            await service.stop(0)


@pytest.mark.parametrize(("mode", "decision"), [("AlwaysAllow", authz_pb2.DECISION_ALLOW),
                                                ("AlwaysDeny", authz_pb2.DECISION_NO_OPINION)])
async def test_server_without_storage(mode: str, decision: int) -> None:
    service = await server.start(flags.parse(flags.AUTHZ, ["--authorization-mode", mode]))
    channel = grpcutil.channel(f"127.0.0.1:{service.port}", None)
    try:
        reply = await authorize(authz_pb2_grpc.AuthorizationStub(channel), attrs(ALICE, "delete", "nodes"))
        assert reply.decision == decision
        assert await health_status(channel) == health_pb2.HealthCheckResponse.SERVING
    finally:
        await channel.close()
        await service.stop(0)


@pytest.mark.parametrize("argv", [["--authorization-mode", "Magic"], ["--authorization-mode", "RBAC"],
                                  ["--authorization-mode", "AlwaysAllow,AlwaysAllow"]])
def test_main_refuses_bad_configuration(argv: list[str], caplog: pytest.LogCaptureFixture) -> None:
    assert server.main(argv) == 1
    assert "invalid authorization configuration" in caplog.text
