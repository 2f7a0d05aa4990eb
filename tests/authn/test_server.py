"""The authn service through its real gRPC server, in-process."""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import grpc
import pytest

from kapi import errors, flags, grpcutil
from kapi_proto.kapi.authn.v1 import authn_pb2, authn_pb2_grpc
from services.authn import server

from .certs import DAY, make_ca, make_client

NOW = datetime.datetime.now(datetime.UTC)
CA = make_ca("kapi-ca", not_before=NOW - DAY, not_after=NOW + 10 * DAY)
ALICE = make_client(CA, "alice", ("dev", "ops"), not_before=NOW - DAY, not_after=NOW + DAY)
EXPIRED = make_client(CA, "alice", ("dev",), not_before=NOW - 3 * DAY, not_after=NOW - DAY)
FOREIGN = make_client(make_ca("other", not_before=NOW - DAY), "alice", (), not_before=NOW - DAY,
                      not_after=NOW + DAY)


@pytest.fixture(scope="module")
async def stub(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[authn_pb2_grpc.AuthenticationStub]:
    tmp = tmp_path_factory.mktemp("authn")
    (tmp / "ca.crt").write_text(CA.pem)
    (tmp / "tokens.csv").write_text('secret-token,bob,uid-bob,"system:masters,dev"\n')
    args = flags.parse(flags.AUTHN, ["--client-ca-file", str(tmp / "ca.crt"), "--token-auth-file",
                                     str(tmp / "tokens.csv"), "--port-file", str(tmp / "port")])
    srv = await server.start(args)
    assert Path(tmp / "port").read_text() == str(srv.port)
    channel = grpcutil.channel(f"127.0.0.1:{srv.port}", None)
    try:
        yield authn_pb2_grpc.AuthenticationStub(channel)
    finally:
        await channel.close()
        await srv.stop(0)


async def authenticate(stub: authn_pb2_grpc.AuthenticationStub, **fields: str) -> authn_pb2.AuthenticateResponse:
    response = await grpcutil.call("authn", stub.Authenticate, authn_pb2.AuthenticateRequest(**fields), timeout=5)
    assert isinstance(response, authn_pb2.AuthenticateResponse)
    return response


def xfcc(pem: str) -> str:
    return f'By=spiffe://gw;Hash=00;Cert="{quote(pem, safe="")}";Subject="O=dev,O=ops,CN=alice";URI='


@pytest.mark.parametrize(
    ("fields", "username", "groups", "authenticator"),
    [
        ({"authorization": "Bearer secret-token"}, "bob", ["system:masters", "dev", "system:authenticated"],
         "token-file"),
        ({"client_certificate_chain": ALICE.pem}, "alice", ["dev", "ops", "system:authenticated"], "x509"),
        ({"forwarded_client_cert": xfcc(ALICE.pem)}, "alice", ["dev", "ops", "system:authenticated"], "x509"),
        ({}, "system:anonymous", ["system:unauthenticated"], "anonymous"),
        ({"authorization": "Basic Ym9iOnB3"}, "system:anonymous", ["system:unauthenticated"], "anonymous"),
    ],
)
async def test_authenticated(stub: authn_pb2_grpc.AuthenticationStub, fields: dict[str, str], username: str,
                             groups: list[str], authenticator: str) -> None:
    response = await authenticate(stub, **fields)
    assert response.user.username == username
    assert list(response.user.groups) == groups
    assert response.authenticator == authenticator
    assert response.cache_ttl_seconds == 10


@pytest.mark.parametrize(
    "fields",
    [
        {"authorization": "Bearer wrong-token"},
        {"client_certificate_chain": EXPIRED.pem},
        {"forwarded_client_cert": xfcc(FOREIGN.pem)},
        {"client_certificate_chain": "garbage"},
    ],
)
async def test_unauthorized(stub: authn_pb2_grpc.AuthenticationStub, fields: dict[str, str]) -> None:
    with pytest.raises(errors.StatusError) as info:
        await authenticate(stub, **fields)
    assert (info.value.code, info.value.reason, info.value.message) == (401, "Unauthorized", "Unauthorized")


async def test_grpc_status_code(stub: authn_pb2_grpc.AuthenticationStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.Authenticate(authn_pb2.AuthenticateRequest(authorization="Bearer nope"), timeout=5)
    assert info.value.code() == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("argv", [["--anonymous-auth=false"], ["--authorization-mode", "AlwaysAllow"],
                                  ["--authorization-mode", "RBAC,AlwaysAllow", "--anonymous-auth=true"]])
async def test_anonymous_disabled(argv: list[str]) -> None:
    """--anonymous-auth=false, or AlwaysAllow among the authorizers (kube's ApplyAuthorization): no credential and
    an unrecognised Basic header are 401, not system:anonymous."""
    srv = await server.start(flags.parse(flags.AUTHN, argv))
    channel = grpcutil.channel(f"127.0.0.1:{srv.port}", None)
    try:
        for fields in ({}, {"authorization": "Basic Ym9iOnB3"}):
            with pytest.raises(errors.StatusError) as info:
                await authenticate(authn_pb2_grpc.AuthenticationStub(channel), **fields)
            assert info.value.code == 401
    finally:
        await channel.close()
        await srv.stop(0)


@pytest.mark.parametrize("argv", [[], ["--authorization-mode", "Node,RBAC"], ["--authorization-mode", "AlwaysDeny"]])
def test_anonymous_kept_without_always_allow(argv: list[str]) -> None:
    assert server.anonymous_allowed(flags.parse(flags.AUTHN, argv)) is True


def test_main_refuses_bad_token_file(tmp_path: Path) -> None:
    bad = tmp_path / "tokens.csv"
    bad.write_text("only,two\n")
    assert server.main(["--token-auth-file", str(bad)]) == 1
    assert server.main(["--client-ca-file", str(tmp_path / "missing.crt")]) == 1
