"""The storage process: command line, etcd endpoints and failures, service identities."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kapi import flags, grpcutil, jsonutil
from kapi.local import pki
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.storage import server
from services.storage.etcd import EtcdClient, parse_endpoints
from tests.conftest import Etcd, free_port

from .conftest import start_storage
from .helpers import configmap, create, key, status_of, unique

pytestmark = pytest.mark.timeout(60)


@pytest.mark.parametrize(("servers", "expected"), [
    ("http://127.0.0.1:2379", ["127.0.0.1:2379"]),
    ("http://etcd-1:2379, http://etcd-2:2379,,", ["etcd-1:2379", "etcd-2:2379"]),
    ("127.0.0.1:2379", ["127.0.0.1:2379"]),
])
def test_parse_endpoints(servers: str, expected: list[str]) -> None:
    assert parse_endpoints(servers) == expected


@pytest.mark.parametrize("servers", ["", " , ", "https://127.0.0.1:2379", "http://127.0.0.1"])
def test_parse_endpoints_rejects(servers: str) -> None:
    with pytest.raises(ValueError):
        parse_endpoints(servers)


def test_allowed_callers_flag() -> None:
    def parse(*argv: str) -> frozenset[str]:
        return server.allowed_callers(flags.parse(flags.STORAGE, list(argv)))

    assert parse() == frozenset(f"kapi-{s}" for s in ("gateway", "authn", "authz", "flowcontrol", "admission"))
    assert parse("--allowed-callers", "kapi-gateway, kapi-authz") == frozenset({"kapi-gateway", "kapi-authz"})
    assert parse("--allowed-callers", "") == frozenset()  # nobody: fails closed
    assert parse("--storage-allowed-clients", "kapi-authz") == frozenset({"kapi-authz"})  # the deprecated name
    assert parse("--storage-allowed-clients", "") == parse()
    for outsider in ("mallory", "kubernetes-admin", "kapi-gateway,system:kube-controller-manager"):
        with pytest.raises(ValueError, match="only kapi's own service identities"):
            parse("--allowed-callers", outsider)


def test_storage_refuses_to_start_for_a_caller_outside_kapi(etcd: Any) -> None:
    proc = subprocess.run([sys.executable, "-m", "services.storage", "--etcd-servers", etcd.endpoint,
                           "--allowed-callers", "kapi-gateway,policy-engine"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 1
    assert "invalid --allowed-callers: storage answers only kapi's own service identities" in proc.stderr
    assert "not policy-engine" in proc.stderr


async def test_python_dash_m_serves_and_stops_on_sigterm(etcd: Any, tmp_path: Path) -> None:
    port_file = tmp_path / "port"
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.storage", "--listen-address", "127.0.0.1:0", "--etcd-servers",
         etcd.endpoint, "--etcd-prefix", f"/{unique('cli')}", "--port-file", str(port_file)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while not (port_file.exists() and port_file.read_text()):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "no port file"
            await asyncio.sleep(0.05)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port_file.read_text()}") as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="kapi.storage.v1.Storage"), timeout=5)
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            stub = storage_pb2_grpc.StorageStub(channel)
            created = await create(stub, configmap("default", "cli"))
            got = await stub.Get(storage_pb2.GetRequest(key=key("default", "cli")), timeout=5)
            assert jsonutil.loads(got.object) == created
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_bad_etcd_servers_exit_1() -> None:
    result = subprocess.run([sys.executable, "-m", "services.storage", "--etcd-servers", "https://x:1"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert "only http:// endpoints" in result.stderr


async def test_etcd_unreachable_is_service_unavailable() -> None:
    service = await start_storage(f"http://127.0.0.1:{free_port()}", "/registry")
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
            stub = storage_pb2_grpc.StorageStub(channel)
            calls = [
                lambda: stub.Get(storage_pb2.GetRequest(key=key("ns", "x")), timeout=15),
                lambda: create(stub, configmap("ns", "x")),
                lambda: stub.List(storage_pb2.ListRequest(key=key("ns")), timeout=15),
                lambda: stub.Watch(storage_pb2.WatchRequest(key=key("ns"), resource_version="5")).read(),
            ]
            for call in calls:
                started = time.monotonic()
                err = await status_of(call())
                assert (err.code, err.reason) == (503, "ServiceUnavailable"), err
                assert err.retry_after == 1
                assert time.monotonic() - started < 12
    finally:
        await service.stop(0)


async def test_reads_and_unsent_writes_fail_over_to_the_next_endpoint(etcd: Any) -> None:
    client = EtcdClient([f"127.0.0.1:{free_port()}", etcd.address])
    try:
        name = f"/{unique('failover')}".encode()
        assert (await client.create(name, b"{}")).succeeded
        assert len((await client.range(name)).kvs) == 1
        assert client.endpoint().target == etcd.address
    finally:
        await client.close()


async def test_only_allowed_service_identities_may_call(etcd: Any, tmp_path: Path) -> None:
    paths = pki.ensure_pki(tmp_path, port=None)
    cert, private_key = paths.service_cert("storage")
    args = flags.parse(flags.STORAGE, [
        "--listen-address", "127.0.0.1:0", "--etcd-servers", etcd.endpoint, "--etcd-prefix", f"/{unique('tls')}",
        "--grpc-cert-file", str(cert), "--grpc-key-file", str(private_key), "--grpc-ca-file", str(paths.ca_cert),
        "--allowed-callers", "kapi-gateway,kapi-authz"])
    service = await server.start(args)
    address = f"127.0.0.1:{service.port}"
    try:
        for identity, expected in ((paths.service_cert("gateway"), 404), (paths.service_cert("authz"), 404),
                                   (paths.service_cert("admission"), 403), ((paths.admin_cert, paths.admin_key), 403)):
            tls = grpcutil.TLSFiles(str(identity[0]), str(identity[1]), str(paths.ca_cert))
            async with grpcutil.channel(address, tls) as channel:
                stub = storage_pb2_grpc.StorageStub(channel)
                err = await status_of(stub.Get(storage_pb2.GetRequest(key=key("ns", "absent")), timeout=10))
                assert err.code == expected, (identity, err)
                calls = stub.Call(iter([storage_pb2.CallRequests(requests=[storage_pb2.CallRequest(
                    id=1, get=storage_pb2.GetRequest(key=key("ns", "absent")))])]))
                if expected == 403:
                    assert err.reason == "Forbidden"
                    watch = await status_of(stub.Watch(storage_pb2.WatchRequest(key=key("ns"))).read())
                    assert watch.code == 403
                    refused = await status_of(calls.read())  # the multiplexed stream is guarded alike
                    assert (refused.code, refused.reason) == (403, "Forbidden")
                    assert "/kapi.storage.v1.Storage/Call" in refused.message
                else:
                    answer = (await calls.read()).responses[0]
                    assert answer.id == 1 and jsonutil.loads(answer.error.status)["code"] == 404
    finally:
        await service.stop(0)


async def test_open_watch_ends_with_503_when_etcd_goes_away(tmp_path: Path) -> None:
    etcd = Etcd(tmp_path)
    try:
        service = await start_storage(etcd.endpoint, "/registry")
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{service.port}") as channel:
                stub = storage_pb2_grpc.StorageStub(channel)
                await create(stub, configmap("ns", "a"))
                call = stub.Watch(storage_pb2.WatchRequest(key=key("ns"), resource_version="0"))
                first = await asyncio.wait_for(call.read(), 10)
                assert [e.type for e in first.events] == ["ADDED"]
                etcd.stop()
                err = await status_of(asyncio.wait_for(call.read(), 15))
                assert (err.code, err.reason) == (503, "ServiceUnavailable")
        finally:
            await service.stop(0)
    finally:
        etcd.stop()
