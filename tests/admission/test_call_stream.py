"""Admit on the multiplexed Call stream (kapi.grpcmux, the gateway's AdmissionClient) against real admission servers.

Real storage over the session's real etcd, real admission processes' code
(services/admission/server.py), a real HTTPS webhook and real
ValidatingAdmissionPolicies read by admission's informers. Every answer on the
stream must be the unary Admit's: the object, warnings, and each refusal's
code, details and ``kapi-status-bin`` trailers (so the same 422/403/404 Status);
a timeout is a deadline, a cancelled call is withdrawn, a broken stream fails
its calls 503, the unary RPC is used while no stream is up or with metadata,
the calls spread over two replicas, and the caller check refuses an identity
outside ``--allowed-callers`` on ``Call`` as on ``Admit``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import uuid
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
import pytest
from aiohttp import web

from examples.webhooks import common, require_labels
from kapi import errors, flags, grpcutil, jsonutil, strategy
from kapi.attributes import Attributes, UserInfo
from kapi.local import pki
from kapi.resources import REGISTRY
from kapi_proto.kapi.admission.v1 import admission_pb2, admission_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.admission import server as admission_server
from services.gateway.backends import AdmissionClient
from services.storage import server as storage_server
from tests.conftest import free_port
from tests.gateway.test_storageclient import CountingStub, failure, shape, wait_until

pytestmark = pytest.mark.timeout(90)

GROUP = "admissionregistration.k8s.io"
USER = UserInfo("alice", groups=("system:authenticated",))
NAMESPACES = REGISTRY.get("", "v1", "namespaces")


class Env:
    """Storage, one admission server, the webhook server; what the tests share."""

    def __init__(self, storage: storage_server.StorageService, admission: admission_server.Running, hook_ca: str,
                 hook_port: int, prefix: str, state: Path) -> None:
        self.storage_service, self.admission = storage, admission
        self.hook_ca, self.hook_port, self.prefix, self.state = hook_ca, hook_port, prefix, state
        self.etcd_endpoint = ""
        self.storage_channel = grpc.aio.insecure_channel(f"127.0.0.1:{storage.port}")
        self.storage = storage_pb2_grpc.StorageStub(self.storage_channel)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.admission.port}"

    async def put(self, group: str, resource: str, obj: dict[str, Any], namespace: str = "") -> None:
        await self.storage.Create(storage_pb2.CreateRequest(
            key=storage_pb2.ResourceKey(group=group, resource=resource, namespace=namespace,
                                        name=obj["metadata"]["name"]), object=jsonutil.dumps(obj)), timeout=10)

    async def admission_replica(self, port: int = 0) -> admission_server.Running:
        args = flags.parse("admission", ["--storage-address", f"127.0.0.1:{self.storage_service.port}",
                                         "--listen-address", f"127.0.0.1:{port}"])
        return await admission_server.start(args, admission_server.plugin_names(args))


def admit_request(namespace: str, obj: dict[str, Any], field_validation: str = "") -> admission_pb2.AdmitRequest:
    attrs = Attributes(USER, "create", True, api_version="v1", resource="configmaps", namespace=namespace,
                       name=obj["metadata"]["name"])
    return admission_pb2.AdmitRequest(operation="CREATE", attributes=attrs.to_proto(), kind="ConfigMap",
                                      object=jsonutil.dumps(obj), field_validation=field_validation)


def cm(name: str, check: str = "", **extra: Any) -> dict[str, Any]:
    labels = {"check": check} if check else {}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels},
            "data": {"a": "b"}, **extra}


def labelled(name: str, **labels: str) -> dict[str, Any]:
    obj = cm(name)
    obj["metadata"]["labels"] = labels
    return obj


def webhook(name: str, url: str, ca: str, check: str, timeout: int = 10) -> dict[str, Any]:
    return {"name": name, "clientConfig": {"url": url, "caBundle": ca}, "failurePolicy": "Fail",
            "timeoutSeconds": timeout, "objectSelector": {"matchLabels": {"check": check}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}


def policy_objects(name: str) -> list[tuple[str, dict[str, Any]]]:
    """A ValidatingAdmissionPolicy refusing ConfigMaps with a key "forbidden", bound with Deny for label
    check=policy and with Warn for check=policy-warn."""
    policy = {"apiVersion": f"{GROUP}/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name},
              "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [
                  {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}]},
                  "validations": [{"expression": "!has(object.data) || !('forbidden' in object.data)",
                                   "message": "no key may be called forbidden"}]}}

    def binding(suffix: str, action: str, check: str) -> dict[str, Any]:
        return {"apiVersion": f"{GROUP}/v1", "kind": "ValidatingAdmissionPolicyBinding",
                "metadata": {"name": f"{name}-{suffix}"},
                "spec": {"policyName": name, "validationActions": [action],
                         "matchResources": {"objectSelector": {"matchLabels": {"check": check}}}}}
    return [("validatingadmissionpolicies", policy),
            ("validatingadmissionpolicybindings", binding("deny", "Deny", "policy")),
            ("validatingadmissionpolicybindings", binding("warn", "Warn", "policy-warn"))]


@pytest.fixture(scope="module")
async def env(etcd: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Env]:
    state = tmp_path_factory.mktemp("admit-stream")
    hook_pki = pki.ensure_pki(state, port=None)

    release = asyncio.Event()  # set at the end, so the server's cleanup does not wait out the hanging requests

    async def hang(http: web.Request) -> web.Response:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(release.wait(), 30)
        return web.Response(status=500)

    app = common.make_app({"/validate": require_labels.review})
    app.router.add_post("/hang", hang)
    runner, hook_port = await common.start(app, hook_pki.apiserver_cert, hook_pki.apiserver_key)
    prefix = f"/kapi-admit-stream-{uuid.uuid4().hex[:8]}/registry"
    storage = await storage_server.start(flags.parse("storage", ["--etcd-servers", etcd.endpoint,
                                                                 "--etcd-prefix", prefix]), bookmark_interval=0.5)
    hook_ca = base64.b64encode(Path(hook_pki.ca_cert).read_bytes()).decode()
    placeholder: Any = None
    e = Env(storage, placeholder, hook_ca, hook_port, prefix, state)
    e.etcd_endpoint = etcd.endpoint
    for name, phase in (("demo", "Active"), ("going", "Terminating")):
        obj = strategy.prepare_for_create({"metadata": {"name": name}}, NAMESPACES, "", datetime.now())
        obj["status"]["phase"] = phase
        await e.put("", "namespaces", obj)
    url = f"https://127.0.0.1:{hook_port}"
    await e.put(GROUP, "validatingwebhookconfigurations", {"metadata": {"name": "stream-hooks"}, "webhooks": [
        webhook("labels.example.com", f"{url}/validate", hook_ca, "labels"),
        webhook("hang.example.com", f"{url}/hang", hook_ca, "hang", timeout=30)]})
    for resource, obj in policy_objects("no-forbidden"):
        await e.put(GROUP, resource, obj)
    e.admission = await e.admission_replica()
    yield e
    await e.admission.stop(0)
    await e.storage_channel.close()
    await storage.stop(0)
    release.set()
    await runner.cleanup()


async def connected(address: str, channel: grpc.aio.Channel) -> tuple[AdmissionClient, CountingStub]:
    """A started AdmissionClient with its stream(s) up, its unary fallback counted."""
    client = AdmissionClient.open(channel, address, None, streams=True)
    counting = CountingStub(client._stub)
    client._stub = counting  # type: ignore[assignment]
    client.start()
    await wait_until(lambda: client.mux.streams_up == len(client.mux.streams))
    return client, counting


async def until_refused(stub: admission_pb2_grpc.AdmissionStub, request: admission_pb2.AdmitRequest) -> None:
    """Wait for admission's informers to hold the webhook and policy objects (the request gets refused)."""
    for _ in range(200):
        try:
            await stub.Admit(request, timeout=10)
        except grpc.aio.AioRpcError:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("never refused")


async def test_answers_warnings_and_refusals_are_the_unary_ones(env: Env) -> None:
    async with grpc.aio.insecure_channel(env.address) as channel:
        unary = admission_pb2_grpc.AdmissionStub(channel)
        client, counting = await connected(env.address, channel)
        try:
            forbidden = cm("p1", "policy", data={"forbidden": "x"})
            await until_refused(unary, admit_request("demo", forbidden))
            await until_refused(unary, admit_request("demo", cm("w1", "labels")))
            # Answers: the admitted object (uid and creationTimestamp are new per call) and its warnings.
            for obj, namespace, validation, warnings in [
                    (cm("ok"), "demo", "", []),
                    (cm("extra", spec={"x": 1}), "demo", "", ['unknown field "spec"']),
                    (labelled("w2", check="labels", team="a"), "demo", "", ['label "owner" is recommended']),
                    (cm("p2", "policy-warn", data={"forbidden": "x"}), "demo", "",
                     ["Validation failed for ValidatingAdmissionPolicy 'no-forbidden' with binding "
                      "'no-forbidden-warn': no key may be called forbidden"])]:
                request = admit_request(namespace, obj, validation)
                want = await unary.Admit(request, timeout=10)
                got, words, notes = await client.admit("CREATE", Attributes.from_proto(request.attributes),
                                                       "ConfigMap", request.object, b"", False, validation, timeout=10)
                assert words == list(want.warnings) == warnings, obj["metadata"]["name"]
                assert notes == dict(want.audit_annotations), obj["metadata"]["name"]
                mine, theirs = jsonutil.loads(got), jsonutil.loads(want.object)
                for meta in (mine["metadata"], theirs["metadata"]):
                    assert meta.pop("uid") and meta.pop("creationTimestamp")
                assert mine == theirs
            # Refusals: the same code, details and Status trailers, hence the same Status.
            cases = [(admit_request("demo", cm("Bad_Name")), 422, "Invalid", 'ConfigMap "Bad_Name" is invalid'),
                     (admit_request("going", cm("x")), 403, "Forbidden", 'configmaps "x" is forbidden: unable to '
                      "create new content in namespace going because it is being terminated"),
                     (admit_request("nowhere", cm("x")), 404, "NotFound", 'namespaces "nowhere" not found'),
                     (admit_request("demo", cm("s", spec={}), "Strict"), 400, "BadRequest", "ConfigMap in version"),
                     (admit_request("demo", cm("w1", "labels")), 403, "",  # kube's ToStatusErr: the webhook's reason
                      'admission webhook "labels.example.com" denied the request: missing required label "team"'),
                     (admit_request("demo", forbidden), 422, "Invalid",
                      'configmaps "p1" is forbidden: ValidatingAdmissionPolicy \'no-forbidden\' with binding '
                      "'no-forbidden-deny' denied request: no key may be called forbidden")]
            for request, code, reason, message in cases:
                want_err = await failure(unary.Admit(request, timeout=10))
                got_err = await failure(client._admit(request, timeout=10))
                assert shape(got_err) == shape(want_err), message
                status = errors.from_rpc_error(got_err, "admission")
                assert (status.code, status.reason) == (code, reason) and status.message.startswith(message)
                assert status.status() == errors.from_rpc_error(want_err, "admission").status()
                with pytest.raises(errors.StatusError) as raised:  # through the gateway's call
                    await client.admit(request.operation, Attributes.from_proto(request.attributes), "ConfigMap",
                                       request.object, b"", False, request.field_validation, timeout=10)
                assert raised.value.status() == status.status()
            assert counting.unary == []  # all of it rode the stream
            assert client.mux.streams[0].calls == 4 + 2 * len(cases)
        finally:
            await client.close()


async def test_refusals_carry_the_warnings_gathered_before_them(env: Env) -> None:
    """A refusal brings the warnings admission gathered before it (kube's recorder sends them with the error), the
    same on the stream (CallError.warnings) as on the unary call (the kapi-warnings-bin trailer)."""
    async with grpc.aio.insecure_channel(env.address) as channel:
        unary = admission_pb2_grpc.AdmissionStub(channel)
        client, counting = await connected(env.address, channel)
        try:
            forbidden = cm("p3", "policy", data={"forbidden": "x"}, spec={"x": 1})
            await until_refused(unary, admit_request("demo", forbidden))
            for request, code, warnings in [
                    (admit_request("demo", cm("Bad_Name", spec={"x": 1})), 422, ['unknown field "spec"']),
                    (admit_request("demo", forbidden), 422, ['unknown field "spec"']),  # the policy's Deny
                    (admit_request("going", cm("x", spec={"x": 1})), 403, ['unknown field "spec"'])]:
                want_err = await failure(unary.Admit(request, timeout=10))
                got_err = await failure(client._admit(request, timeout=10))
                assert shape(got_err) == shape(want_err)
                for err in (got_err, want_err):
                    status = errors.from_rpc_error(err, "admission")
                    assert status.code == code and status.warnings == warnings, status
            assert counting.unary == []
        finally:
            await client.close()


async def test_timeout_is_a_deadline_and_cancel_withdraws_the_call(env: Env) -> None:
    servicer = env.admission.servicer
    assert servicer is not None
    async with grpc.aio.insecure_channel(env.address) as channel:
        unary = admission_pb2_grpc.AdmissionStub(channel)
        client, counting = await connected(env.address, channel)
        try:
            request = admit_request("demo", cm("h", "hang"))  # the webhook answers after 30 s
            want = await failure(unary.Admit(request, timeout=0.3))
            got = await failure(client._admit(request, timeout=0.3))
            assert shape(got) == shape(want) and got.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            status = errors.from_rpc_error(got, "admission")
            assert (status.code, status.reason) == (504, "Timeout")
            await wait_until(lambda: not servicer.stream_calls, 3)  # admission gave up on it too
            task = asyncio.create_task(client._admit(request, timeout=30))
            await wait_until(lambda: len(servicer.stream_calls) == 1, 3)
            task.cancel()
            await wait_until(lambda: not servicer.stream_calls, 3)  # withdrawn on the stream
            assert client.mux.streams[0].in_flight == 0 and counting.unary == []
        finally:
            await client.close()


async def test_unary_until_the_stream_is_up_and_with_metadata(env: Env) -> None:
    async with grpc.aio.insecure_channel(env.address) as channel:
        client = AdmissionClient.open(channel, env.address, None, streams=True)
        counting = CountingStub(client._stub)
        client._stub = counting  # type: ignore[assignment]
        request = admit_request("nowhere", cm("x"))
        assert (await failure(client._admit(request, timeout=10))).code() == grpc.StatusCode.NOT_FOUND
        assert counting.unary == ["Admit"]  # not started: no stream yet
        client.start()
        try:
            await wait_until(lambda: client.mux.streams_up == 1)
            await failure(client._admit(request, timeout=10, metadata=(("x-audit-id", "abc"),)))
            assert counting.unary == ["Admit", "Admit"]  # metadata to carry: the unary RPC
            await failure(client._admit(request, timeout=10))
            assert counting.unary == ["Admit", "Admit"] and client.mux.streams[0].calls == 1
        finally:
            await client.close()
        assert client.mux.streams_up == 0
        await failure(client._admit(request, timeout=10))
        assert counting.unary == ["Admit", "Admit", "Admit"]
    async with grpc.aio.insecure_channel("127.0.0.1:1") as channel:
        assert AdmissionClient.open(channel, "127.0.0.1:1", None, streams=False).mux.streams == []


async def test_broken_stream_fails_its_calls_503_and_reconnects(env: Env) -> None:
    port = free_port()
    address = f"127.0.0.1:{port}"
    replica = await env.admission_replica(port)
    async with grpc.aio.insecure_channel(address) as channel:
        client, counting = await connected(address, channel)
        try:
            await until_refused(admission_pb2_grpc.AdmissionStub(channel), admit_request("demo", cm("w", "labels")))
            pending = asyncio.create_task(client._admit(admit_request("demo", cm("h", "hang")), timeout=30))
            await wait_until(lambda: client.mux.streams[0].in_flight == 1)
            await replica.stop(0)
            err = await failure(pending)
            assert err.code() == grpc.StatusCode.UNAVAILABLE
            status = errors.from_rpc_error(err, "admission")
            assert (status.code, status.reason) == (503, "ServiceUnavailable")
            await wait_until(lambda: client.mux.streams_up == 0)
            down = await failure(client._admit(admit_request("demo", cm("ok")), timeout=5))
            assert down.code() == grpc.StatusCode.UNAVAILABLE and counting.unary == ["Admit"]  # unary while down
            replica = await env.admission_replica(port)
            await wait_until(lambda: client.mux.streams_up == 1)
            assert client.mux.streams[0].calls == 1  # the broken call was not sent again
            await client._admit(admit_request("demo", cm("ok")), timeout=10)
            assert client.mux.streams[0].calls == 2 and counting.unary == ["Admit"]
        finally:
            await client.close()
            await replica.stop(0)


async def test_two_replicas_each_get_a_stream_and_share_the_calls(env: Env) -> None:
    other = await env.admission_replica()
    addresses = f"{env.address},127.0.0.1:{other.port}"
    channel = grpcutil.channel(addresses, None)
    client, counting = await connected(addresses, channel)
    try:
        assert [s.address for s in client.mux.streams] == addresses.split(",")
        assert all(s.channel is not channel for s in client.mux.streams)  # a channel of its own per replica
        await asyncio.gather(*(client._admit(admit_request("demo", cm(f"c{i}")), timeout=10) for i in range(20)))
        assert [s.calls for s in client.mux.streams] == [10, 10]
        await other.stop(0)
        await wait_until(lambda: client.mux.streams_up == 1)
        for i in range(4):
            await client._admit(admit_request("demo", cm(f"d{i}")), timeout=10)
        assert [s.calls for s in client.mux.streams] == [14, 10] and counting.unary == []
    finally:
        await client.close()
        await channel.close()
        await other.stop(0)


async def test_call_refuses_an_identity_outside_allowed_callers(env: Env) -> None:
    pki_dir = env.state / "pki"
    assert pki.main(["--state-dir", str(env.state), "--client", "mallory"]) == 0

    def tls(stem: str) -> grpcutil.TLSFiles:
        return grpcutil.TLSFiles(str(pki_dir / f"{stem}.crt"), str(pki_dir / f"{stem}.key"), str(pki_dir / "ca.crt"))

    def tls_flags(stem: str) -> list[str]:
        files = tls(stem)
        return ["--grpc-cert-file", files.cert_file, "--grpc-key-file", files.key_file, "--grpc-ca-file", files.ca_file]

    storage = await storage_server.start(flags.parse("storage", [
        "--etcd-servers", env.etcd_endpoint, "--etcd-prefix", env.prefix, *tls_flags("kapi-storage")]))
    args = flags.parse("admission", ["--storage-address", f"127.0.0.1:{storage.port}",
                                     "--listen-address", "127.0.0.1:0", *tls_flags("kapi-admission")])
    secure = await admission_server.start(args, admission_server.plugin_names(args))
    assert secure.servicer is not None
    address = f"127.0.0.1:{secure.port}"
    request = admit_request("demo", cm("ok"))
    try:
        for stem in ("mallory", "kapi-authn"):  # the default --allowed-callers is kapi-gateway only
            async with grpcutil.channel(address, tls(stem)) as channel:
                stub = admission_pb2_grpc.AdmissionStub(channel)
                # No message sent: grpc-python's client turns one it is still writing when the refusal arrives into
                # its own INTERNAL error (tests/test_grpc_callers.py).
                call = stub.Call(iter([]))
                with pytest.raises(grpc.aio.AioRpcError) as info:
                    async for _ in call:
                        raise AssertionError("a refused caller got an answer")
                assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
                status = errors.from_rpc_error(info.value, "admission")
                assert (status.code, status.reason) == (403, "Forbidden")
                assert status.message == (f'forbidden: User "{stem}" cannot call "/kapi.admission.v1.Admission/Call": '
                                          "the service's --allowed-callers does not include it")
                # The gateway's client never gets a stream from it, so its calls go unary and are refused too.
                client = AdmissionClient.open(channel, address, None, streams=True)
                client.start()
                await asyncio.sleep(0.5)  # its attempts (on a connected channel) are refused within milliseconds
                assert client.mux.streams_up == 0
                with pytest.raises(errors.StatusError) as refused:
                    await client.admit("CREATE", Attributes.from_proto(request.attributes), "ConfigMap",
                                       request.object, b"", False, "", timeout=10)
                assert refused.value.code == 403
                await client.close()
        assert not secure.servicer.stream_calls
        async with grpcutil.channel(address, tls("kapi-gateway")) as channel:  # the gateway is served on the stream
            client, counting = await connected(address, channel)
            try:
                _, warnings, _ = await client.admit("CREATE", Attributes.from_proto(request.attributes), "ConfigMap",
                                                    request.object, b"", False, "", timeout=10)
                assert warnings == [] and counting.unary == [] and client.mux.streams[0].calls == 1
            finally:
                await client.close()
    finally:
        await secure.stop(0)
        await storage.stop(0)


async def test_call_stream_on_the_wire(env: Env) -> None:
    """The server's side (kapi.grpcmux.serve): answers by id in completion order, a duplicate id and an empty call
    refused 400, a cancelled call not answered, half-close ends the stream once the rest finished."""
    servicer = env.admission.servicer
    assert servicer is not None
    async with grpc.aio.insecure_channel(env.address) as channel:
        queue: asyncio.Queue[admission_pb2.AdmitCallRequests | None] = asyncio.Queue()

        async def feed() -> AsyncIterator[admission_pb2.AdmitCallRequests]:
            while (item := await queue.get()) is not None:
                yield item
        call = admission_pb2_grpc.AdmissionStub(channel).Call(feed())
        await call.initial_metadata()  # sent at once: the stream is up
        hang = admit_request("demo", cm("h", "hang"))
        await queue.put(admission_pb2.AdmitCallRequests(requests=[
            admission_pb2.AdmitCallRequest(id=1, admit=hang, timeout_seconds=30),
            admission_pb2.AdmitCallRequest(id=1, admit=admit_request("demo", cm("ok"))),
            admission_pb2.AdmitCallRequest(id=2),
            admission_pb2.AdmitCallRequest(id=3, admit=admit_request("nowhere", cm("x")))]))
        answers = []
        while len(answers) < 3:
            batch = await call.read()
            answers.extend(batch.responses)
        by_id = {(a.id, a.WhichOneof("result")): a for a in answers}
        assert sorted(by_id) == [(1, "error"), (2, "error"), (3, "error")]  # the hanging call 1 is still running
        assert (by_id[1, "error"].error.code, by_id[1, "error"].error.message) == (
            grpc.StatusCode.INVALID_ARGUMENT.value[0], "duplicate call id 1")
        assert by_id[2, "error"].error.message == "no call in the request"
        assert jsonutil.loads(by_id[3, "error"].error.status)["reason"] == "NotFound"
        assert len(servicer.stream_calls) == 1
        await queue.put(admission_pb2.AdmitCallRequests(requests=[
            admission_pb2.AdmitCallRequest(id=1, cancel={}),
            admission_pb2.AdmitCallRequest(id=4, admit=admit_request("demo", cm("ok")))]))
        await queue.put(None)  # half-close
        rest = []
        while (batch := await call.read()) is not grpc.aio.EOF:
            rest.extend(batch.responses)
        assert [(r.id, r.WhichOneof("result")) for r in rest] == [(4, "admit")]  # call 1 withdrawn: no answer
        assert jsonutil.loads(rest[0].admit.object)["metadata"]["name"] == "ok"
        assert await call.code() == grpc.StatusCode.OK and not servicer.stream_calls
