"""The gateway's decision cache (AuthzClient) over a real authz gRPC servicer: revision stream, invalidation.

docs/architecture.md, "The request path": a cached decision is used only while the policy revision
streamed by authz is unchanged; a broken stream disables the cache.
Also measures a cache hit against an Authorize RPC.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest

from kapi import errors, grpcutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.authz.v1 import authz_pb2, authz_pb2_grpc
from services.authz import union
from services.authz.authorizer import Decision, Result
from services.authz.escalation import EscalationChecker
from services.authz.policy import PolicyIndex
from services.authz.rbac import RBACAuthorizer
from services.authz.servicer import AuthorizationServicer
from services.gateway.backends import AuthzClient

from .objects import binding, role, rule, subject

ALICE = UserInfo("alice", "", ("dev", "system:authenticated"))
GET_POD = Attributes(user=ALICE, verb="get", resource_request=True, resource="pods", namespace="demo",
                     api_version="v1", name="p")
RESOURCES = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")


@dataclass
class Served:
    index: PolicyIndex
    server: grpc.aio.Server
    channel: grpc.aio.Channel
    client: AuthzClient


async def eventually(check: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("condition not met")
        await asyncio.sleep(0.005)


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    index = PolicyIndex()
    for i, resource in enumerate(RESOURCES):
        index.replace(resource, [], 10 + i)
    authorizer = union.build(["RBAC"], {"RBAC": lambda: RBACAuthorizer(index)})
    server, _, port = grpcutil.make_server("127.0.0.1:0", None)
    authz_pb2_grpc.add_AuthorizationServicer_to_server(
        AuthorizationServicer(authorizer, index, EscalationChecker(authorizer, index)), server)
    await server.start()
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    client = AuthzClient(channel, backoff=0.05)
    try:
        yield Served(index, server, channel, client)
    finally:
        await client.close()
        await channel.close()
        await server.stop(0)


async def test_revision_stream_reports_changes() -> None:
    index = PolicyIndex()
    index.replace("roles", [], 5)
    servicer = AuthorizationServicer(union.build(["AlwaysAllow"]), index)
    stream = servicer.WatchPolicyRevision(authz_pb2.WatchPolicyRevisionRequest(), None)  # type: ignore[arg-type]
    assert (await anext(stream)).revision == 5
    pending = asyncio.ensure_future(anext(stream))
    await asyncio.sleep(0.01)
    assert not pending.done()
    index.apply("roles", "ADDED", role("r", [], "demo"), 9)
    assert (await asyncio.wait_for(pending, 1)).revision == 9


async def test_cached_until_policy_changes(served: Served) -> None:
    client, index = served.client, served.index
    assert await client.authorize(GET_POD) == (False, "")
    await eventually(lambda: client.revision == 13)
    assert await client.authorize(GET_POD) == (False, "")  # made at the streamed revision: cached
    misses, hits = client.misses, client.hits
    assert await client.authorize(GET_POD) == (False, "")
    assert (client.misses, client.hits) == (misses, hits + 1)
    # A RoleBinding granting alice changes the revision: the cached "no" is dropped.
    index.apply("clusterroles", "ADDED", role("reader", [rule(["get"], [""], ["pods"])]), 20)
    index.apply("rolebindings", "ADDED", binding("b", "ClusterRole", "reader", [subject("User", "alice")], "demo"), 21)
    await eventually(lambda: client.revision == 21)
    allowed, reason = await client.authorize(GET_POD)
    assert allowed and reason == 'RBAC: allowed by RoleBinding "b/demo" of ClusterRole "reader" to User "alice"'
    # Different attributes are different entries.
    other = Attributes(user=ALICE, verb="delete", resource_request=True, resource="pods", namespace="demo", name="p")
    assert (await client.authorize(other))[0] is False
    index.apply("rolebindings", "DELETED", binding("b", "ClusterRole", "reader", [], "demo"), 22)
    await eventually(lambda: client.revision == 22)
    assert (await client.authorize(GET_POD))[0] is False


async def test_no_cache_while_stream_is_down(served: Served) -> None:
    client = served.client
    await client.authorize(GET_POD)
    await eventually(lambda: client.revision is not None)
    await served.server.stop(0)
    await eventually(lambda: client.revision is None)
    with pytest.raises(errors.StatusError) as info:  # never a cached answer, never allow: 503
        await client.authorize(GET_POD)
    assert info.value.code == 503


async def test_no_cache_decisions_are_not_cached() -> None:
    class Volatile:
        calls = 0

        async def authorize(self, attributes: Attributes) -> Result:
            Volatile.calls += 1
            return Result(Decision.ALLOW, cacheable=False)

    index = PolicyIndex()
    server, _, port = grpcutil.make_server("127.0.0.1:0", None)
    authz_pb2_grpc.add_AuthorizationServicer_to_server(AuthorizationServicer(union.Union([Volatile()]), index), server)
    await server.start()
    channel = grpcutil.channel(f"127.0.0.1:{port}", None)
    client = AuthzClient(channel)
    try:
        await client.authorize(GET_POD)
        await eventually(lambda: client.revision == 0)
        for _ in range(3):
            assert await client.authorize(GET_POD) == (True, "")
        assert Volatile.calls == 4 and client.hits == 0
    finally:
        await client.close()
        await channel.close()
        await server.stop(0)


async def test_cache_hit_latency_vs_rpc(served: Served) -> None:
    client = served.client
    await client.authorize(GET_POD)
    await eventually(lambda: client.revision == 13)
    await client.authorize(GET_POD)
    n = 200
    start = time.perf_counter()
    for _ in range(n):
        await client.authorize(GET_POD)
    hit = (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(n):
        await client.authorize_full(GET_POD)
    rpc = (time.perf_counter() - start) / n
    print(f"\nauthz decision: cache hit {hit * 1e6:.1f} us, Authorize RPC {rpc * 1e6:.1f} us ({rpc / hit:.0f}x)")
    assert hit * 10 < rpc


def _named(verb: str, name: str) -> Attributes:
    return Attributes(user=ALICE, verb=verb, resource_request=True, resource="pods", namespace="demo",
                      api_version="v1", name=name, path=f"/api/v1/namespaces/demo/pods/{name}")


async def _grant(index: PolicyIndex, rules: list[dict[str, object]], revision: int) -> None:
    """Bind a new ClusterRole of ``rules`` to alice in demo (policy revisions ``revision`` and ``revision + 1``)."""
    index.apply("clusterroles", "ADDED", role(f"r{revision}", rules), revision)  # type: ignore[arg-type]
    index.apply("rolebindings", "ADDED", binding(f"b{revision}", "ClusterRole", f"r{revision}",
                                                 [subject("User", "alice")], "demo"), revision + 1)


async def test_name_free_decisions_serve_other_names(served: Served) -> None:
    """An allow by a rule without resourceNames answers the same request for every name with one Authorize."""
    client, index = served.client, served.index
    client.start()
    await _grant(index, [rule(["update"], [""], ["pods"])], 30)
    await eventually(lambda: client.revision == 31)
    first = await client.authorize(_named("update", "p0"))
    misses = client.misses
    for i in range(1, 20):
        assert await client.authorize(_named("update", f"p{i}")) == first
    assert first[0] and client.misses == misses  # no further RPC
    assert (await client.authorize(_named("delete", "p1")))[0] is False  # another verb is another request


async def test_resource_names_keep_decisions_per_name(served: Served) -> None:
    """A resourceNames rule that another name could match makes each name its own decision, allowed or not,
    and keeps the reason of the rule that decided for that name."""
    client, index = served.client, served.index
    client.start()
    await _grant(index, [rule(["update"], [""], ["pods"], names=["only"])], 40)
    await eventually(lambda: client.revision == 41)
    assert (await client.authorize(_named("update", "other")))[0] is False
    assert (await client.authorize(_named("update", "only")))[0] is True  # the "no" for "other" is not reused
    assert (await client.authorize(_named("update", "third")))[0] is False
    assert (await client.authorize(_named("update", "only")))[0] is True
    # A broad grant after the named one: both rules are visited for "only", so it stays per name, and
    # its reason names the named role's binding, not the broad one's.
    await _grant(index, [rule(["update"], [""], ["pods"])], 50)
    await eventually(lambda: client.revision == 51)
    allowed, reason = await client.authorize(_named("update", "only"))
    other_allowed, other_reason = await client.authorize(_named("update", "x"))
    assert allowed and other_allowed
    fresh = AuthzClient(served.channel)  # the same two questions, uncached
    try:
        assert (await fresh.authorize(_named("update", "only")))[1] == reason
        assert (await fresh.authorize(_named("update", "x")))[1] == other_reason
    finally:
        await fresh.close()


async def test_rbac_marks_name_independence() -> None:
    """The authorizer's own flag: a named rule that matches the request in all but name makes it dependent."""
    index = PolicyIndex()
    for i, resource in enumerate(RESOURCES):
        index.replace(resource, [], 10 + i)
    rbac = RBACAuthorizer(index)
    assert (await rbac.authorize(_named("update", "a"))).name_independent  # nothing granted, no named rule
    index.apply("clusterroles", "ADDED", role("secret-one", [rule(["get"], [""], ["secrets"], names=["s"])]), 20)
    index.apply("rolebindings", "ADDED", binding("b", "ClusterRole", "secret-one", [subject("User", "alice")],
                                                 "demo"), 21)
    assert (await rbac.authorize(_named("update", "a"))).name_independent  # the named rule is about secrets
    secret = Attributes(user=ALICE, verb="get", resource_request=True, resource="secrets", namespace="demo",
                        api_version="v1", name="t")
    assert not (await rbac.authorize(secret)).name_independent  # "s" would be allowed
    union_result = await union.build(["AlwaysDeny", "RBAC"], {"RBAC": lambda: rbac}).authorize(_named("update", "a"))
    assert union_result.name_independent
