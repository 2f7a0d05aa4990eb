"""authz against the real storage service over a real etcd (both in-process): bootstrap and live policy."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import pytest

from kapi import errors, flags, grpcutil, jsonutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.authz import bootstrap
from services.authz import server as authz_server
from services.storage import server as storage_server

from .objects import binding, subject

G = "rbac.authorization.k8s.io"
ALICE = UserInfo("alice", "", ("system:authenticated",))
LIST_PODS = Attributes(user=ALICE, verb="list", resource_request=True, resource="pods", namespace="demo",
                       api_version="v1")


async def eventually(check: Callable[[], object], timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await asyncio.sleep(0.01)


@pytest.fixture(scope="module")
async def storage(etcd) -> AsyncIterator[str]:
    """A storage service on a fresh key prefix of the session etcd; yields its address."""
    args = flags.parse(flags.STORAGE, ["--etcd-servers", etcd.endpoint,
                                       "--etcd-prefix", f"/kapi-authz-test-{uuid.uuid4().hex[:8]}"])
    service = await storage_server.start(args)
    try:
        yield f"127.0.0.1:{service.port}"
    finally:
        await service.stop(0)


async def start_authz(storage_address: str) -> authz_server.AuthzService:
    service = await authz_server.start(flags.parse(flags.AUTHZ, ["--storage-address", storage_address]))
    assert service.sync is not None
    await asyncio.wait_for(service.sync.synced.wait(), 10)
    return service


async def test_bootstrap_and_live_policy(storage: str) -> None:
    service = await start_authz(storage)
    storage_channel = grpcutil.channel(storage, None)
    authz_channel = grpcutil.channel(f"127.0.0.1:{service.port}", None)
    store = storage_pb2_grpc.StorageStub(storage_channel)
    authz = authz_pb2_grpc.AuthorizationStub(authz_channel)

    async def decide() -> authz_pb2.AuthorizeResponse:
        return await authz.Authorize(authz_pb2.AuthorizeRequest(attributes=LIST_PODS.to_proto()), timeout=5)

    try:
        # Every bootstrap object is in storage and reaches the index through the watch.
        for resource, obj in bootstrap.default_objects():
            name = obj["metadata"]["name"]
            await eventually(lambda r=resource, n=name: (service.index.cluster_role(n) if r == "clusterroles" else
                                                         any(b.name == n for b in service.index.bindings())), 5)
            got = await store.Get(storage_pb2.GetRequest(key=storage_pb2.ResourceKey(
                group=G, resource=resource, name=name)), timeout=5)
            stored = jsonutil.loads(got.object)
            assert stored["kind"] == obj["kind"]
            assert stored["metadata"]["labels"] == obj["metadata"]["labels"]
            assert int(stored["metadata"]["resourceVersion"]) == got.resource_version > 0

        reply = await decide()
        assert reply.decision == authz_pb2.DECISION_NO_OPINION
        before = reply.policy_revision
        assert before > 0

        # A RoleBinding written through storage changes the decision within a second.
        created = await store.Create(storage_pb2.CreateRequest(
            key=storage_pb2.ResourceKey(group=G, resource="rolebindings", namespace="demo", name="alice-view"),
            object=jsonutil.dumps(binding("alice-view", "ClusterRole", "view", [subject("User", "alice")], "demo"))),
            timeout=5)
        await eventually(lambda: _allowed(decide), 1.0)
        reply = await decide()
        assert reply.reason == ('RBAC: allowed by RoleBinding "alice-view/demo" of ClusterRole "view" '
                                'to User "alice"')
        assert reply.policy_revision >= created.resource_version > before

        # Deleting it takes the grant away again.
        await store.Delete(storage_pb2.DeleteRequest(key=storage_pb2.ResourceKey(
            group=G, resource="rolebindings", namespace="demo", name="alice-view")), timeout=5)
        await eventually(lambda: _not_allowed(decide), 1.0)

        # A second replica starting on the same storage finds the defaults and creates nothing.
        assert await bootstrap.ensure(store) == 0
        second = await start_authz(storage)
        second_channel = grpcutil.channel(f"127.0.0.1:{second.port}", None)
        try:
            discovery = Attributes(user=ALICE, verb="get", resource_request=False, path="/apis")
            reply = await authz_pb2_grpc.AuthorizationStub(second_channel).Authorize(
                authz_pb2.AuthorizeRequest(attributes=discovery.to_proto()), timeout=5)
            assert reply.decision == authz_pb2.DECISION_ALLOW
            assert reply.reason == ('RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole '
                                    '"system:discovery" to Group "system:authenticated"')
        finally:
            await second_channel.close()
            await second.stop(0)
    finally:
        await authz_channel.close()
        await storage_channel.close()
        await service.stop(0)


async def _allowed(decide: Callable[[], object]) -> bool:
    reply = await decide()  # type: ignore[misc]
    return reply.decision == authz_pb2.DECISION_ALLOW


async def _not_allowed(decide: Callable[[], object]) -> bool:
    return not await _allowed(decide)


async def test_unreachable_storage_fails_closed() -> None:
    from tests.conftest import free_port

    service = await authz_server.start(flags.parse(flags.AUTHZ, ["--storage-address", f"127.0.0.1:{free_port()}"]))
    channel = grpcutil.channel(f"127.0.0.1:{service.port}", None)
    try:
        with pytest.raises(errors.StatusError) as info:
            await grpcutil.call("authz", authz_pb2_grpc.AuthorizationStub(channel).Authorize,
                                authz_pb2.AuthorizeRequest(attributes=LIST_PODS.to_proto()), timeout=5)
        assert info.value.code == 503
    finally:
        await channel.close()
        await service.stop(0)
