"""ConfigSync and the flowcontrol server against the real storage service over a real etcd."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest

from kapi import flags, jsonutil
from kapi.attributes import Attributes, UserInfo
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.flowcontrol import defaults
from services.flowcontrol import server as flowcontrol_server
from services.flowcontrol.apf import Controller
from services.flowcontrol.sync import ConfigSync, key, wants_default_spec
from tests.storage.conftest import start_storage


@pytest.fixture
async def stub(etcd: Any) -> AsyncIterator[tuple[str, storage_pb2_grpc.StorageStub]]:
    """A fresh storage service (own etcd prefix) and a stub to it."""
    service = await start_storage(etcd.endpoint, f"/kapi-apf-{uuid.uuid4().hex[:8]}/registry")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    yield f"127.0.0.1:{service.port}", storage_pb2_grpc.StorageStub(channel)
    await channel.close()
    await service.stop(0)


async def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def running(stub: storage_pb2_grpc.StorageStub) -> AsyncIterator[tuple[ConfigSync, Controller]]:
    controller = Controller(10)
    sync = ConfigSync(stub, controller, min_backoff=0.01, max_backoff=0.05)
    task = asyncio.create_task(sync.run())
    try:
        await asyncio.wait_for(sync.synced.wait(), 5)
        yield sync, controller
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def get(stub: storage_pb2_grpc.StorageStub, resource: str, name: str) -> dict[str, Any]:
    response = await stub.Get(storage_pb2.GetRequest(key=key(resource, name)))
    return jsonutil.loads(response.object)  # type: ignore[no-any-return]


def dangling(obj: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "Dangling")


async def test_defaults_are_created_with_autoupdate_and_found_condition(stub: tuple[str, Any]) -> None:
    _, storage = stub
    async with running(storage) as (sync, controller):
        await eventually(lambda: len(sync.objects[defaults.FLOW_SCHEMAS]) == 13
                         and len(sync.objects[defaults.PRIORITY_LEVELS]) == 8)
        await eventually(lambda: all((o.get("status") or {}).get("conditions")
                                     for o in sync.objects[defaults.FLOW_SCHEMAS].values()))
        schema = await get(storage, defaults.FLOW_SCHEMAS, "service-accounts")
        assert schema["metadata"]["annotations"] == {"apf.kubernetes.io/autoupdate-spec": "true"}
        assert schema["spec"]["matchingPrecedence"] == 9000
        assert schema["spec"]["distinguisherMethod"] == {"type": "ByUser"}
        condition = dangling(schema)
        assert (condition["status"], condition["reason"]) == ("False", "Found")
        assert condition["message"] == ('This FlowSchema references the PriorityLevelConfiguration object named '
                                        '"workload-low" and it exists')
        level = await get(storage, defaults.PRIORITY_LEVELS, "workload-low")
        assert level["spec"]["limited"]["limitResponse"]["queuing"] == {
            "queues": 128, "handSize": 6, "queueLengthLimit": 50}
        # the controller runs on the stored objects (their uids)
        attrs = Attributes(UserInfo("alice", groups=("system:authenticated",)), "get", True, resource="pods",
                           namespace="x")
        ticket = controller.submit(attrs)
        assert ticket.flow_schema.uid == sync.objects[defaults.FLOW_SCHEMAS]["global-default"]["metadata"]["uid"]


async def test_dangling_condition_and_restored_specs(stub: tuple[str, Any]) -> None:
    _, storage = stub
    async with running(storage) as (sync, controller):
        await eventually(lambda: sync.maintained.is_set())
        custom = defaults.new_object("FlowSchema", "team-a", {
            "priorityLevelConfiguration": {"name": "team-a-level"}, "matchingPrecedence": 50,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                       "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                          "namespaces": ["*"]}]}]})
        del custom["metadata"]["annotations"]
        await storage.Create(storage_pb2.CreateRequest(key=key(defaults.FLOW_SCHEMAS, "team-a"),
                                                       object=jsonutil.dumps(custom)))
        await eventually(lambda: "conditions" in (sync.objects[defaults.FLOW_SCHEMAS].get("team-a", {})
                                                  .get("status") or {}))
        condition = dangling(await get(storage, defaults.FLOW_SCHEMAS, "team-a"))
        assert (condition["status"], condition["reason"]) == ("True", "NotFound")
        assert "but there is no such object" in condition["message"]
        alice = Attributes(UserInfo("alice", groups=("system:authenticated",)), "get", True, resource="pods",
                           namespace="x")
        assert controller.submit(alice).flow_schema.name == "global-default"  # dangling: skipped

        # a user edit of a mandatory object is undone; of a suggested one with autoupdate false, kept
        catch_all = await get(storage, defaults.PRIORITY_LEVELS, "catch-all")
        catch_all["spec"]["limited"]["nominalConcurrencyShares"] = 99
        workload_low = await get(storage, defaults.PRIORITY_LEVELS, "workload-low")
        workload_low["spec"]["limited"]["nominalConcurrencyShares"] = 7
        workload_low["metadata"]["annotations"][defaults.AUTOUPDATE_ANNOTATION] = "false"
        for resource, obj in ((defaults.PRIORITY_LEVELS, catch_all), (defaults.PRIORITY_LEVELS, workload_low)):
            await storage.Update(storage_pb2.UpdateRequest(key=key(resource, obj["metadata"]["name"]),
                                                           object=jsonutil.dumps(obj)))
        levels = sync.objects[defaults.PRIORITY_LEVELS]
        await eventually(lambda: levels["workload-low"]["spec"]["limited"]["nominalConcurrencyShares"] == 7
                         and levels["catch-all"]["spec"]["limited"]["nominalConcurrencyShares"] == 5)
        assert levels["catch-all"]["metadata"]["generation"] == 2
        await eventually(lambda: controller.levels["workload-low"].config.nominal_concurrency_shares == 7)

        # a deleted suggested object comes back
        await storage.Delete(storage_pb2.DeleteRequest(key=key(defaults.FLOW_SCHEMAS, "probes")))
        await eventually(lambda: "probes" in sync.objects[defaults.FLOW_SCHEMAS])


@pytest.mark.parametrize(("name", "annotations", "generation", "expected"), [
    ("exempt", {"apf.kubernetes.io/autoupdate-spec": "false"}, 3, True),  # mandatory: always
    ("system", {"apf.kubernetes.io/autoupdate-spec": "true"}, 3, True),
    ("system", {"apf.kubernetes.io/autoupdate-spec": "false"}, 1, False),
    ("system", {}, 1, True),
    ("system", {}, 2, False),
])
def test_wants_default_spec(name: str, annotations: dict[str, str], generation: int, expected: bool) -> None:
    spec = defaults.priority_level_specs()[name]
    changed = copy.deepcopy(spec)
    changed["changed"] = True
    obj = {"metadata": {"name": name, "annotations": annotations, "generation": generation}, "spec": changed}
    assert wants_default_spec(name, obj, spec) is expected
    assert wants_default_spec(name, {**obj, "spec": spec}, spec) is False


async def test_server_reports_serving_after_sync_and_sends_uids_and_dumps(stub: tuple[str, Any]) -> None:
    address, _ = stub
    args = flags.parse(flags.FLOWCONTROL, ["--storage-address", address, "--max-requests-inflight", "4",
                                           "--max-mutating-requests-inflight", "2"])
    dispatcher = flowcontrol_server.build_dispatcher(args)
    service = await flowcontrol_server.start(args, dispatcher)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{service.port}")
    try:
        assert service.sync is not None
        await asyncio.wait_for(service.sync.synced.wait(), 5)
        client = flowcontrol_pb2_grpc.FlowControlStub(channel)
        attrs = Attributes(UserInfo("alice", groups=("system:authenticated",)), "get", True, resource="pods",
                           namespace="x")

        async def requests() -> AsyncIterator[flowcontrol_pb2.DispatchRequests]:
            yield flowcontrol_pb2.DispatchRequests(requests=[flowcontrol_pb2.DispatchRequest(
                start=flowcontrol_pb2.Start(request_id=1, attributes=attrs.to_proto()))])
            await asyncio.sleep(0.5)

        call = client.Dispatch(requests())
        reply = (await asyncio.wait_for(call.read(), 5)).responses[0]
        assert reply.execute and reply.flow_schema == "global-default" and reply.priority_level == "global-default"
        uids = service.sync.objects
        assert reply.flow_schema_uid == uids[defaults.FLOW_SCHEMAS]["global-default"]["metadata"]["uid"]
        assert reply.priority_level_uid == uids[defaults.PRIORITY_LEVELS]["global-default"]["metadata"]["uid"]
        seats = await client.Dump(flowcontrol_pb2.DumpRequest(kind="seats"))
        assert ["global-default", "global-default", "alice", "1", "alice", "get"] in [
            [c.strip() for c in line.split(",")][:6] for line in seats.text.splitlines()]
        levels = await client.Dump(flowcontrol_pb2.DumpRequest(kind="priority_levels"))
        exempt = next(line for line in levels.text.splitlines() if line.startswith("exempt,"))
        assert [c.strip() for c in exempt.split(",")][1:5] == ["0", "true", "false", "0"]  # a queue-less set
        counters = jsonutil.loads((await client.Dump(flowcontrol_pb2.DumpRequest(kind="counters"))).text)
        assert {"priority_level": "global-default", "flow_schema": "global-default", "value": 1} in counters[
            "dispatched_requests_total"]
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await client.Dump(flowcontrol_pb2.DumpRequest(kind="nope"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        call.cancel()
    finally:
        await channel.close()
        await service.stop(0)
