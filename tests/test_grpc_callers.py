"""kapi.grpcutil's caller check: every RPC of a server refuses certificate CNs outside ``allowed_callers``.

One server with a method of each of the four kinds (unary, server stream as an
async generator and as a coroutine writing with ``context.write``, client
stream, bidirectional stream) over mutual TLS with the cluster CA: a caller
outside the list gets PERMISSION_DENIED with a 403 Forbidden Status before the
method runs; a listed caller is served; health and reflection are open to both.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from kapi import errors, grpcutil, jsonutil
from kapi.local import pki

SERVICE = "kapi.test.v1.Echo"
CALLS: list[str] = []  # methods that ran: a refused call must never get here


async def unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    CALLS.append("Unary")
    return request


async def server_stream(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    CALLS.append("ServerStream")
    yield request
    yield request


async def server_stream_writes(request: bytes, context: grpc.aio.ServicerContext) -> None:
    CALLS.append("ServerStreamWrites")
    await context.write(request)


async def client_stream(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> bytes:
    CALLS.append("ClientStream")
    return b"".join([r async for r in requests])


async def bidi(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    CALLS.append("Bidi")
    async for r in requests:
        yield r


HANDLERS = {
    "Unary": grpc.unary_unary_rpc_method_handler(unary),
    "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
    "ServerStreamWrites": grpc.unary_stream_rpc_method_handler(server_stream_writes),
    "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
    "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
}


async def invoke(channel: grpc.aio.Channel, method: str, sent: int = 2) -> list[bytes]:
    """Call ``method`` of the echo service with b"x" (``sent`` times on a client stream); the answers.

    A refused client stream is opened with ``sent=0``: grpc-python's aio client turns a message it is still
    writing when the server's status arrives into its own INTERNAL error ("Failed execute_batch"), hiding the
    PERMISSION_DENIED the server sent.
    """
    path = f"/{SERVICE}/{method}"

    def requests() -> Iterator[bytes]:
        yield from [b"x"] * sent

    if method == "Unary":
        return [await channel.unary_unary(path)(b"x", timeout=10)]
    if method.startswith("ServerStream"):
        return [m async for m in channel.unary_stream(path)(b"x", timeout=10)]
    if method == "ClientStream":
        return [await channel.stream_unary(path)(requests(), timeout=10)]
    return [m async for m in channel.stream_stream(path)(requests(), timeout=10)]


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state_dir = tmp_path_factory.mktemp("callers")
    pki.ensure_pki(state_dir, port=None)
    for name in ("mallory", "policy-engine"):
        assert pki.main(["--state-dir", str(state_dir), "--client", name]) == 0
    return state_dir


def tls_for(state_dir: Path, stem: str) -> grpcutil.TLSFiles:
    d = state_dir / "pki"
    return grpcutil.TLSFiles(str(d / f"{stem}.crt"), str(d / f"{stem}.key"), str(d / "ca.crt"))


async def start(state_dir: Path, allowed: frozenset[str] | None) -> tuple[grpc.aio.Server, str]:
    server, health, port = grpcutil.make_server("127.0.0.1:0", tls_for(state_dir, "kapi-authz"),
                                                allowed_callers=allowed, services=[SERVICE])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, HANDLERS),))
    grpcutil.set_serving(health, [SERVICE])
    await server.start()
    return server, f"127.0.0.1:{port}"


def status(err: grpc.aio.AioRpcError) -> dict[str, Any]:
    value = dict(err.trailing_metadata() or ()).get(errors.STATUS_METADATA_KEY)
    assert value is not None, err
    return dict(jsonutil.loads(value))


async def open_services_answer(channel: grpc.aio.Channel) -> list[str]:
    reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=SERVICE),
                                                            timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = [r async for r in stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)]
    return sorted(s.name for s in replies[0].list_services_response.service)


@pytest.mark.parametrize("method", list(HANDLERS))
async def test_a_caller_outside_the_list_is_refused_on_every_kind_of_rpc(state: Path, method: str) -> None:
    server, address = await start(state, frozenset({"kapi-gateway", "policy-engine"}))
    try:
        CALLS.clear()
        async with grpcutil.channel(address, tls_for(state, "mallory")) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await invoke(channel, method, sent=0)
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
            body = status(info.value)
            assert (body["kind"], body["code"], body["reason"]) == ("Status", 403, "Forbidden")
            assert body["message"] == (f'forbidden: User "mallory" cannot call "/{SERVICE}/{method}": '
                                       "the service's --allowed-callers does not include it")
            assert CALLS == []  # refused before the method ran
            assert await open_services_answer(channel) == sorted(
                [SERVICE, "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"])
        for stem in ("kapi-gateway", "policy-engine"):
            async with grpcutil.channel(address, tls_for(state, stem)) as channel:
                assert b"".join(await invoke(channel, method)) in (b"x", b"xx")
        assert CALLS == [method, method]
    finally:
        await server.stop(0)


async def test_the_default_is_kapis_own_identities_and_none_admits_any_certificate(state: Path) -> None:
    assert grpcutil.SERVICE_IDENTITIES == frozenset(
        f"kapi-{s}" for s in ("storage", "authn", "authz", "flowcontrol", "admission", "gateway"))
    server, health, port = grpcutil.make_server("127.0.0.1:0", tls_for(state, "kapi-authz"))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, HANDLERS),))
    await server.start()
    try:
        async with grpcutil.channel(f"127.0.0.1:{port}", tls_for(state, "mallory")) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await invoke(channel, "Unary")
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
        async with grpcutil.channel(f"127.0.0.1:{port}", tls_for(state, "kapi-storage")) as channel:
            assert await invoke(channel, "Unary") == [b"x"]
    finally:
        await server.stop(0)
    public, address = await start(state, None)
    try:
        async with grpcutil.channel(address, tls_for(state, "mallory")) as channel:
            assert await invoke(channel, "Unary") == [b"x"]
    finally:
        await public.stop(0)


def test_allowed_callers_flag_of_every_backend_defaults_to_its_kapi_callers() -> None:
    from kapi import flags

    want = {"storage": {"kapi-gateway", "kapi-authn", "kapi-authz", "kapi-flowcontrol", "kapi-admission"},
            "authn": {"kapi-gateway"}, "authz": {"kapi-gateway"}, "flowcontrol": {"kapi-gateway"},
            "admission": {"kapi-gateway"}}
    for service, callers in want.items():
        assert grpcutil.allowed_callers(flags.parse(service, [])) == callers, service
        given = flags.parse(service, ["--allowed-callers", " kapi-gateway ,policy-engine,"])
        assert grpcutil.allowed_callers(given) == {"kapi-gateway", "policy-engine"}
        assert grpcutil.allowed_callers(flags.parse(service, ["--allowed-callers", ""])) == frozenset()
    with pytest.raises(SystemExit):
        flags.parse("gateway", ["--allowed-callers", "x"])  # the gateway's public API is governed by RBAC


async def test_a_refusal_is_counted_as_permission_denied(state: Path) -> None:
    from prometheus_client import REGISTRY

    def refused() -> float:
        value = REGISTRY.get_sample_value("grpc_server_handled_total", {
            "grpc_type": "unary", "grpc_service": SERVICE, "grpc_method": "Unary", "grpc_code": "PERMISSION_DENIED"})
        return value or 0.0

    before = refused()
    server, address = await start(state, frozenset({"kapi-gateway"}))
    try:
        async with grpcutil.channel(address, tls_for(state, "mallory")) as channel:
            for _ in range(3):
                with pytest.raises(grpc.aio.AioRpcError):
                    await invoke(channel, "Unary")
    finally:
        await server.stop(0)
    assert refused() == before + 3


def test_kapi_up_forwards_allowed_callers_to_the_service_it_names() -> None:
    from kapi import flags
    from kapi.local import launcher

    args = launcher.build_parser().parse_args([
        "--allowed-callers", "authz=kapi-gateway,policy-engine", "--allowed-callers", "admission=",
        "--allowed-callers", "authz=kapi-gateway,policy-engine,auditor"])
    argv = launcher._passthrough_argv(args)
    assert [a for a in argv if a.startswith("--allowed-callers")] == [
        "--allowed-callers=authz=kapi-gateway,policy-engine", "--allowed-callers=admission=",
        "--allowed-callers=authz=kapi-gateway,policy-engine,auditor"]
    options = launcher.parse_service_flags(argv)  # what Stack(extra_flags=...) does with them
    assert flags.forward(options, "authz") == ["--allowed-callers=kapi-gateway,policy-engine,auditor"]  # last wins
    assert flags.forward(options, "admission") == ["--allowed-callers="]
    assert flags.forward(options, "authn") == [] and flags.forward(options, "gateway") == []
    command = launcher.service_args("authz", listen="127.0.0.1:0", peers=launcher.Peers(storage="127.0.0.1:1"),
                                    pki_dir="/pki", forwarded=flags.forward(options, "authz"))
    assert grpcutil.allowed_callers(flags.parse("authz", command[1:])) == {"kapi-gateway", "policy-engine", "auditor"}
    for bad in ("gateway=x", "authz", "nosuch=x"):
        with pytest.raises(SystemExit):
            launcher.build_parser().parse_args(["--allowed-callers", bad])


def test_kapi_testing_forwards_allowed_callers_too() -> None:
    from kapi.testing import stack_options

    options = stack_options(["--allowed-callers=authz=kapi-gateway,policy-engine", "--token-auth-file=/x.csv"])
    assert sorted(options["extra_flags"]) == ["--allowed-callers=authz=kapi-gateway,policy-engine",
                                              "--token-auth-file=/x.csv"]
    with pytest.raises(ValueError, match="SERVICE=VALUE"):
        stack_options(["--allowed-callers=kapi-gateway"])
