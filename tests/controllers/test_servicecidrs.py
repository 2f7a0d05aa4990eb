"""service-cidr-controller: the finalizer, the Ready condition, what blocks a deletion, and what is queued."""

from __future__ import annotations

import argparse
import datetime
from typing import Any

from kapi.informer import Event
from services.controllers.context import Context
from services.controllers.loops import servicecidrs as sc

NOW = datetime.datetime(2026, 1, 1, 0, 0, 30, tzinfo=datetime.UTC)
F = sc.FINALIZER


class FakeClient:
    def __init__(self) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.patches: list[tuple[str, dict[str, Any], dict[str, str], str]] = []

    async def update(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.updates.append((path, obj))
        return obj

    async def request(self, method: str, path: str, body: Any = None, params: dict[str, str] | None = None,
                      content_type: str = "", timeout: float | None = None) -> dict[str, Any]:
        assert method == "PATCH"
        self.patches.append((path, body, params or {}, content_type))
        return body


def cidr(name: str, *cidrs: str, finalizers: tuple[str, ...] = (F,), deleted_at: str = "",
         ready: tuple[str, str, str] | None = ("True", "", sc.READY_MESSAGE)) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": "3", "finalizers": list(finalizers)}
    if deleted_at:
        meta["deletionTimestamp"] = deleted_at
    status = {"conditions": [{"type": "Ready", "status": ready[0], "reason": ready[1], "message": ready[2],
                              "lastTransitionTime": "2026-01-01T00:00:00Z"}]} if ready else {}
    return {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": meta,
            "spec": {"cidrs": list(cidrs)}, "status": status}


def ip(address: str, managed: bool = True) -> dict[str, Any]:
    labels = {sc.LABEL_IP_FAMILY: "IPv6" if ":" in address else "IPv4"}
    if managed:
        labels[sc.LABEL_MANAGED_BY] = sc.MANAGED_BY
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": address,
                                                                                     "labels": labels}}


def controller(*objects: dict[str, Any]) -> tuple[sc.ServiceCIDRController, FakeClient]:
    client = FakeClient()
    c = sc.ServiceCIDRController(Context(client=client, args=argparse.Namespace()), clock=lambda: NOW)  # type: ignore[arg-type]
    for obj in objects:
        (c.cidrs if obj["kind"] == "ServiceCIDR" else c.ips)._apply(Event("ADDED", obj))
    return c, client


async def test_a_live_cidr_gets_the_finalizer_and_the_ready_condition() -> None:
    c, client = controller(cidr("extra", "10.10.0.0/24", finalizers=("example.com/keep",),
                                ready=("True", "", "Kubernetes default Service CIDR is ready")))
    await c.sync("extra")
    ((path, body),) = client.updates
    assert path == "/apis/networking.k8s.io/v1/servicecidrs/extra"
    assert body["metadata"]["finalizers"] == ["example.com/keep", F]
    assert body["metadata"]["resourceVersion"] == "3"
    ((path, patch, params, content_type),) = client.patches
    assert (path, params, content_type) == ("/apis/networking.k8s.io/v1/servicecidrs/extra/status",
                                            {"fieldManager": "service-cidr-controller", "force": "true"},
                                            "application/apply-patch+yaml")
    assert patch["status"]["conditions"] == [{"type": "Ready", "status": "True",
                                              "message": "Kubernetes Service CIDR is ready",
                                              "lastTransitionTime": "2026-01-01T00:00:30Z"}]


async def test_a_ready_cidr_with_its_finalizer_is_not_written_again() -> None:
    c, client = controller(cidr("extra", "10.10.0.0/24"))
    await c.sync("extra")
    assert client.updates == [] and client.patches == []


async def test_an_ip_in_no_other_cidr_blocks_the_deletion_with_terminating() -> None:
    c, client = controller(cidr("extra", "10.10.0.0/24", deleted_at="2026-01-01T00:00:00Z"), ip("10.10.0.5"))
    await c.sync("extra")
    assert client.updates == []
    ((_, patch, _, _),) = client.patches
    assert patch["status"]["conditions"][0] == {
        "type": "Ready", "status": "False", "reason": "Terminating", "lastTransitionTime": "2026-01-01T00:00:30Z",
        "message": "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new "
                   "ServiceCIDR"}


async def test_deletion_proceeds_when_a_parent_holds_the_range_or_no_ip_is_orphaned() -> None:
    deleted = cidr("extra", "10.10.0.0/24", deleted_at="2026-01-01T00:00:00Z", finalizers=("a/b", F))
    for others in ([cidr("big", "10.0.0.0/8"), ip("10.10.0.5")],       # a parent contains the whole range
                   [ip("10.20.0.5")],                                  # the IP is elsewhere
                   [ip("10.10.0.5", managed=False)],                   # not the allocator's IP
                   [cidr("twin", "10.10.0.0/24"), ip("10.10.0.5")]):   # another CIDR holds the IP too
        c, client = controller(deleted, *others)
        await c.sync("extra")
        ((_, body),) = client.updates
        assert body["metadata"]["finalizers"] == ["a/b"]


async def test_the_finalizer_stays_for_the_grace_period_after_the_deletion() -> None:
    c, client = controller(cidr("extra", "10.10.0.0/24", deleted_at="2026-01-01T00:00:25Z"))
    later: list[tuple[str, float]] = []
    c.queue.add_after = lambda key, delay: later.append((key, delay))  # type: ignore[method-assign]
    await c.sync("extra")
    assert client.updates == [] and later == [("extra", 5.0)]


def test_events_queue_the_cidrs_they_concern() -> None:
    c, _ = controller(cidr("a", "10.10.0.0/24"), cidr("b", "10.20.0.0/24"))
    while len(c.queue):
        c.queue._pending.pop()
    c.ips._apply(Event("ADDED", ip("10.10.0.7")))
    c.ips._apply(Event("ADDED", ip("10.20.0.7", managed=False)))
    assert c.queue._pending == {"a"}
    c.queue._pending.clear()
    c.cidrs._apply(Event("ADDED", cidr("wide", "10.0.0.0/8")))
    assert c.queue._pending == {"wide", "a", "b"}


def test_can_delete_checks_each_family() -> None:
    dual = cidr("dual", "10.10.0.0/24", "fd00::/120", deleted_at="2026-01-01T00:00:00Z")
    assert sc.can_delete(dual, [dual], [ip("fd00::5")]) is False
    assert sc.can_delete(dual, [dual], [ip("fd01::5")]) is True
    assert sc.can_delete(dual, [dual, cidr("v4", "10.0.0.0/8")], [ip("fd00::5")]) is False
