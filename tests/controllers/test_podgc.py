"""pod-garbage-collector: which Pods a collection force-deletes, what it writes first, and the node quarantine."""

from __future__ import annotations

import argparse
from typing import Any

from kapi.informer import Event
from services.controllers.client import ApiError
from services.controllers.context import Context
from services.controllers.loops import podgc


class FakeClient:
    def __init__(self, live_nodes: set[str] | None = None) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.live_nodes = live_nodes or set()

    async def get(self, path: str, params: Any = None) -> dict[str, Any]:
        name = path.rsplit("/", 1)[-1]
        if name not in self.live_nodes:
            raise ApiError(404, "NotFound", "gone")
        return {}

    async def patch(self, path: str, patch: Any, content_type: str = "") -> dict[str, Any]:
        self.calls.append(("patch", path, patch))
        return {}

    async def delete(self, path: str, options: Any = None) -> dict[str, Any]:
        self.calls.append(("delete", path, options))
        return {}


def pod(name: str, node: str = "", phase: str = "Running", deleting: bool = False, created: str = "2026-01-01T00:00:00Z"
        ) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "namespace": "ns", "uid": f"u-{name}", "creationTimestamp": created}
    if deleting:
        m["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"kind": "Pod", "metadata": m, "spec": {"nodeName": node} if node else {}, "status": {"phase": phase}}


def node(name: str, ready: bool = True, taints: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": name}, "spec": {"taints": [{"key": k, "effect": "NoExecute"}
                                                                          for k in taints]},
            "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def controller(client: FakeClient, now: list[float], *objects: dict[str, Any]) -> podgc.PodGCController:
    c = podgc.PodGCController(Context(client=client, args=argparse.Namespace()),  # type: ignore[arg-type]
                              clock=lambda: now[0])
    for obj in objects:
        (c.pods if obj["kind"] == "Pod" else c.nodes)._apply(Event("ADDED", obj))
    return c


async def test_orphans_wait_out_the_quarantine_then_are_failed_and_force_deleted() -> None:
    client, now = FakeClient(), [100.0]
    c = controller(client, now, pod("orphan", node="gone"), pod("kept", node="here"), node("here"))
    assert await c.collect() == []  # first seen missing: quarantined
    now[0] += podgc.QUARANTINE
    assert await c.collect() == ["ns/orphan"]
    (_, path, patch), (_, dpath, options) = client.calls
    assert path == "/api/v1/namespaces/ns/pods/orphan/status" and dpath == "/api/v1/namespaces/ns/pods/orphan"
    assert patch["metadata"] == {"uid": "u-orphan"} and patch["status"]["phase"] == "Failed"
    [condition] = patch["status"]["conditions"]
    assert {k: condition[k] for k in ("type", "status", "reason", "message")} == {
        "type": "DisruptionTarget", "status": "True", "reason": "DeletionByPodGC",
        "message": "PodGC: node no longer exists"}
    assert options == {"gracePeriodSeconds": 0, "preconditions": {"uid": "u-orphan"}}


async def test_a_node_the_live_get_still_finds_is_no_orphan() -> None:
    client, now = FakeClient(live_nodes={"late"}), [0.0]
    c = controller(client, now, pod("p", node="late"))
    await c.collect()
    now[0] += podgc.QUARANTINE + 1
    assert await c.collect() == [] and client.calls == []


async def test_unscheduled_terminating_out_of_service_and_finished_pods() -> None:
    client, now = FakeClient(), [0.0]
    c = controller(client, now, pod("unscheduled", deleting=True, phase="Pending"),
                   pod("oos", node="down", deleting=True), node("down", ready=False, taints=(podgc.OUT_OF_SERVICE,)),
                   pod("done", node="down", phase="Succeeded"), pod("running", node="down"))
    assert await c.collect() == ["ns/oos", "ns/unscheduled"]
    assert [call[1] for call in client.calls if call[0] == "patch"] == [
        "/api/v1/namespaces/ns/pods/oos/status", "/api/v1/namespaces/ns/pods/unscheduled/status"]


async def test_finished_pods_beyond_the_threshold_go_oldest_first(monkeypatch: Any) -> None:
    monkeypatch.setattr(podgc, "TERMINATED_THRESHOLD", 1)
    client, now = FakeClient(), [0.0]
    c = controller(client, now, pod("new", node="n", phase="Failed", created="2026-02-01T00:00:00Z"),
                   pod("old", node="n", phase="Succeeded", created="2026-01-01T00:00:00Z"), node("n"))
    assert await c.collect() == ["ns/old"]
    assert [call[0] for call in client.calls] == ["delete"]  # finished: no status write first
