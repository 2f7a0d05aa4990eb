"""The gateway's side of authentication: impersonation checks and the AuthnClient cache (fake clock, fake stub)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.authn.v1 import authn_pb2
from services.gateway.apifilters import impersonation
from services.gateway.backends import AuthnClient, Credentials

ALICE = UserInfo("alice", "", ("dev", "system:authenticated"))


def headers(*pairs: tuple[str, str]) -> CIMultiDictProxy[str]:
    return CIMultiDictProxy(CIMultiDict(pairs))


class Authz:
    """Allows the (resource, name, subresource) triples in ``allowed``; records every check."""

    def __init__(self, allowed: set[tuple[str, str, str]]):
        self.allowed = allowed
        self.checked: list[Attributes] = []

    async def authorize(self, attrs: Attributes, timeout: float = 1.0) -> tuple[bool, str]:
        self.checked.append(attrs)
        return (attrs.resource, attrs.name, attrs.subresource) in self.allowed, ""


async def test_no_headers_no_checks() -> None:
    authz = Authz(set())
    assert await impersonation.impersonate(headers(("Accept", "x")), ALICE, authz, 1.0) is None
    assert authz.checked == []


async def test_every_item_is_checked_and_the_user_built() -> None:
    authz = Authz({("users", "bob", ""), ("groups", "g1", ""), ("groups", "g2", ""), ("uids", "u1", ""),
                   ("userextras", "a", "scopes"), ("userextras", "b", "scopes"), ("userextras", "x", "my/key")})
    h = headers(("Impersonate-User", "bob"), ("Impersonate-Group", "g1"), ("Impersonate-Group", "g2"),
                ("Impersonate-Uid", "u1"), ("Impersonate-Extra-Scopes", "a"), ("Impersonate-Extra-Scopes", "b"),
                ("Impersonate-Extra-My%2fKey", "x"))
    result = await impersonation.impersonate(h, ALICE, authz, 1.0)
    assert result is not None and result.impersonator == ALICE
    assert result.user == UserInfo("bob", "u1", ("g1", "g2", "system:authenticated"),
                                   (("my/key", ("x",)), ("scopes", ("a", "b"))))
    checked = [(a.verb, a.api_group, a.resource, a.subresource, a.name, a.user.username) for a in authz.checked]
    assert checked == [
        ("impersonate", "", "users", "", "bob", "alice"),
        ("impersonate", "", "groups", "", "g1", "alice"),
        ("impersonate", "", "groups", "", "g2", "alice"),
        ("impersonate", "authentication.k8s.io", "userextras", "scopes", "a", "alice"),
        ("impersonate", "authentication.k8s.io", "userextras", "scopes", "b", "alice"),
        ("impersonate", "authentication.k8s.io", "userextras", "my/key", "x", "alice"),
        ("impersonate", "authentication.k8s.io", "uids", "", "u1", "alice"),
    ]


@pytest.mark.parametrize(("pairs", "allowed", "user"), [
    ((("Impersonate-User", "system:serviceaccount:ns:sa"),), {("serviceaccounts", "sa", "")},
     UserInfo("system:serviceaccount:ns:sa", "", ("system:serviceaccounts", "system:serviceaccounts:ns",
                                                  "system:authenticated"))),
    ((("Impersonate-User", "system:serviceaccount:ns:sa"), ("Impersonate-Group", "g")),
     {("serviceaccounts", "sa", ""), ("groups", "g", "")},
     UserInfo("system:serviceaccount:ns:sa", "", ("g", "system:authenticated"))),
    ((("Impersonate-User", "system:anonymous"),), {("users", "system:anonymous", "")},
     UserInfo("system:anonymous", "", ("system:unauthenticated",))),
    ((("Impersonate-User", "bob"), ("Impersonate-Group", "system:authenticated")),
     {("users", "bob", ""), ("groups", "system:authenticated", "")},
     UserInfo("bob", "", ("system:authenticated",))),
], ids=["service-account", "service-account-groups", "anonymous", "no-duplicate-group"])
async def test_default_groups(pairs: tuple[tuple[str, str], ...], allowed: set[tuple[str, str, str]],
                              user: UserInfo) -> None:
    result = await impersonation.impersonate(headers(*pairs), ALICE, Authz(allowed), 1.0)
    assert result is not None and result.user == user


@pytest.mark.parametrize(("pairs", "allowed", "message"), [
    ((("Impersonate-User", "bob"),), set(),
     'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster '
     "scope"),
    ((("Impersonate-User", "bob"), ("Impersonate-Group", "admins")), {("users", "bob", "")},
     'groups "admins" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the '
     "cluster scope"),
    ((("Impersonate-User", "system:serviceaccount:kube-system:root"),), set(),
     'serviceaccounts "root" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group '
     '"" in the namespace "kube-system"'),
    ((("Impersonate-User", "bob"), ("Impersonate-Extra-Scopes", "x")), {("users", "bob", "")},
     'userextras.authentication.k8s.io "x" is forbidden: User "alice" cannot impersonate resource '
     '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope'),
    ((("Impersonate-User", "bob"), ("Impersonate-Uid", "1")), {("users", "bob", "")},
     'uids.authentication.k8s.io "1" is forbidden: User "alice" cannot impersonate resource "uids" in API group '
     '"authentication.k8s.io" at the cluster scope'),
], ids=["user", "group", "service-account", "extra", "uid"])
async def test_forbidden(pairs: tuple[tuple[str, str], ...], allowed: set[tuple[str, str, str]],
                         message: str) -> None:
    with pytest.raises(errors.StatusError) as info:
        await impersonation.impersonate(headers(*pairs), ALICE, Authz(allowed), 1.0)
    assert (info.value.code, info.value.message) == (403, message)


@pytest.mark.parametrize("pairs", [(("Impersonate-Group", "g"),), (("Impersonate-Uid", "u"),),
                                   (("Impersonate-Extra-A", "b"),)], ids=["group", "uid", "extra"])
async def test_without_user_is_bad_request(pairs: tuple[tuple[str, str], ...]) -> None:
    authz = Authz({("groups", "g", ""), ("uids", "u", ""), ("userextras", "b", "a")})
    with pytest.raises(errors.StatusError) as info:
        await impersonation.impersonate(headers(*pairs), ALICE, authz, 1.0)
    assert info.value.code == 400 and "without impersonating a user" in info.value.message
    assert authz.checked == []


# ---------------------------------------------------------------- AuthnClient cache


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode):
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return "fake"

    def trailing_metadata(self) -> Any:
        return ()


class Stub:
    """Answers Authenticate from a table: token -> (user, ttl) or a gRPC status code."""

    def __init__(self, table: dict[str, Any]):
        self.table = table
        self.calls = 0

    async def Authenticate(self, request: authn_pb2.AuthenticateRequest, timeout: float = 0,  # noqa: N802
                           metadata: Any = None) -> authn_pb2.AuthenticateResponse:
        self.calls += 1
        answer = self.table[request.authorization]
        if isinstance(answer, grpc.StatusCode):
            raise FakeRpcError(answer)
        user, ttl = answer
        return authn_pb2.AuthenticateResponse(user=user.to_proto(), cache_ttl_seconds=ttl)


class FakeChannel:
    def unary_unary(self, *args: Any, **kwargs: Any) -> None:
        return None


def client(table: dict[str, Any]) -> tuple[AuthnClient, Stub, Clock]:
    clock = Clock()
    stub = Stub(table)
    c = AuthnClient(FakeChannel(), clock=clock, max_entries=2)
    c._stub = stub  # type: ignore[assignment]
    return c, stub, clock


async def test_positive_entries_live_for_their_ttl() -> None:
    c, stub, clock = client({"Bearer a": (ALICE, 4), "Bearer long": (ALICE, 3600), "Bearer none": (ALICE, 0)})
    for _ in range(3):
        assert await c.authenticate(Credentials("Bearer a")) == ALICE
    assert stub.calls == 1
    clock.now += 4
    await c.authenticate(Credentials("Bearer a"))
    assert stub.calls == 2
    await c.authenticate(Credentials("Bearer long"))
    clock.now += 10  # the client's own cap (10 s)
    await c.authenticate(Credentials("Bearer long"))
    assert stub.calls == 4
    await c.authenticate(Credentials("Bearer none"))
    await c.authenticate(Credentials("Bearer none"))
    assert stub.calls == 6


async def test_negative_entries_and_no_caching_of_unavailability() -> None:
    c, stub, clock = client({"Bearer bad": grpc.StatusCode.UNAUTHENTICATED, "Bearer down": grpc.StatusCode.UNAVAILABLE})
    for _ in range(2):
        with pytest.raises(errors.StatusError) as info:
            await c.authenticate(Credentials("Bearer bad"))
        assert info.value.code == 401
    assert stub.calls == 1
    clock.now += 2
    with pytest.raises(errors.StatusError):
        await c.authenticate(Credentials("Bearer bad"))
    assert stub.calls == 2
    for _ in range(2):
        with pytest.raises(errors.StatusError) as info:
            await c.authenticate(Credentials("Bearer down"))
        assert info.value.code == 503
    assert stub.calls == 4


async def test_lru_bound_and_key_includes_every_credential() -> None:
    c, stub, _ = client({"Bearer a": (ALICE, 10), "Bearer b": (ALICE, 10), "Bearer c": (ALICE, 10)})
    await c.authenticate(Credentials("Bearer a"))
    await c.authenticate(Credentials("Bearer a", forwarded_client_cert="x"))
    assert stub.calls == 2
    await c.authenticate(Credentials("Bearer b"))
    await c.authenticate(Credentials("Bearer c"))
    await c.authenticate(Credentials("Bearer a"))  # evicted (max 2 entries)
    assert stub.calls == 5
