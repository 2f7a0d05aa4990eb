"""pvc-protection and pv-protection: who blocks a claim or volume, what is queued, and what sync writes."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from kapi.informer import Event
from services.controllers.context import Context
from services.controllers.loops import storageprotection as sp

PVC_F, PV_F = sp.PVC_PROTECTION_FINALIZER, sp.PV_PROTECTION_FINALIZER
DELETED_AT = "2026-01-01T00:00:00Z"


class FakeClient:
    def __init__(self, live_pods: list[dict[str, Any]] | None = None) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.live_pods = live_pods or []
        self.lists: list[str] = []

    async def update(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.updates.append((path, obj))
        return obj

    async def list_all(self, path: str) -> dict[str, Any]:
        self.lists.append(path)
        return {"items": self.live_pods}


def claim(name: str = "data", *, deleting: bool = True, finalizers: tuple[str, ...] = (PVC_F,),
          owner_uid: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "demo", "uid": "c-1", "resourceVersion": "5",
                            "finalizers": list(finalizers)}
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": owner_uid,
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": {}}


def pod(*volumes: dict[str, Any], node: str = "n1", phase: str = "Running", uid: str = "p-1",
        **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}], "volumes": list(volumes)}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": "web", "namespace": "demo", "uid": uid, **meta}, "spec": spec,
            "status": {"phase": phase}}


def uses(name: str = "data") -> dict[str, Any]:
    return {"name": "v", "persistentVolumeClaim": {"claimName": name}}


EPHEMERAL = {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


@pytest.mark.parametrize(("the_pod", "the_claim", "used"), [
    (pod(uses()), claim(), True),
    (pod(uses("other")), claim(), False),
    (pod(uses(), node=""), claim(), False),  # unscheduled pods never count (kube's podUsesPVC)
    (pod(uses(), phase="Succeeded"), claim(), True),  # kube: a scheduled pod blocks until it is deleted
    ({**pod(uses()), "metadata": {**pod()["metadata"], "namespace": "other"}}, claim(), False),
    (pod(EPHEMERAL), claim("web-scratch", owner_uid="p-1"), True),
    (pod(EPHEMERAL), claim("web-scratch"), False),  # not controlled by the pod
    (pod(EPHEMERAL, deletionTimestamp=DELETED_AT, deletionGracePeriodSeconds=0), claim("web-scratch",
                                                                                        owner_uid="p-1"), False),
])
def test_pod_uses_claim(the_pod: dict[str, Any], the_claim: dict[str, Any], used: bool) -> None:
    assert sp.pod_uses_claim(the_pod, the_claim) is used


@pytest.mark.parametrize(("the_pod", "terminated"), [
    (pod(), False),
    (pod(phase="Failed"), True),
    (pod(phase="Succeeded"), True),
    (pod(deletionTimestamp=DELETED_AT), True),  # being deleted, no container running
    ({**pod(deletionTimestamp=DELETED_AT), "status": {"phase": "Running", "containerStatuses": [
        {"name": "c", "state": {"running": {}}}]}}, False),
])
def test_pod_terminated(the_pod: dict[str, Any], terminated: bool) -> None:
    assert sp.pod_terminated(the_pod) is terminated


def test_claim_names() -> None:
    assert sp.claim_names(pod(uses("a"), EPHEMERAL, {"name": "e", "emptyDir": {}})) == ["a", "web-scratch"]


def _pvc_controller(client: FakeClient) -> sp.PVCProtectionController:
    return sp.PVCProtectionController(Context(client=client, args=argparse.Namespace()))  # type: ignore[arg-type]


def _put(informer: Any, kind: str, obj: dict[str, Any]) -> None:
    informer._apply(Event(kind, obj))


async def test_unused_claim_loses_its_finalizer_only() -> None:
    client = FakeClient()
    c = _pvc_controller(client)
    _put(c.claims, "ADDED", claim(finalizers=("example.com/keep", PVC_F)))
    assert len(c.queue) == 1
    await c.sync("demo/data")
    ((path, body),) = client.updates
    assert path == "/api/v1/namespaces/demo/persistentvolumeclaims/data"
    assert body["metadata"]["finalizers"] == ["example.com/keep"]
    assert body["metadata"]["resourceVersion"] == "5"  # conditioned on the cached copy
    assert client.lists == ["/api/v1/namespaces/demo/pods"]  # the cache found no user: a live list confirms


async def test_used_claim_kept_until_the_pod_goes() -> None:
    client = FakeClient()
    c = _pvc_controller(client)
    _put(c.claims, "ADDED", claim())
    _put(c.pods, "ADDED", pod(uses()))
    await c.sync("demo/data")
    assert client.updates == [] and client.lists == []  # the cache's answer is enough to keep it
    c.queue._pending.clear()
    _put(c.pods, "DELETED", pod(uses()))
    assert "demo/data" in c.queue._pending  # the deleted pod's claims are looked at again
    await c.sync("demo/data")
    assert client.updates[0][1]["metadata"]["finalizers"] == []


async def test_live_list_catches_a_pod_the_cache_lacks() -> None:
    client = FakeClient(live_pods=[pod(uses())])
    c = _pvc_controller(client)
    _put(c.claims, "ADDED", claim())
    await c.sync("demo/data")
    assert client.updates == []


def test_running_scheduled_pod_events_queue_nothing() -> None:
    c = _pvc_controller(FakeClient())
    _put(c.pods, "ADDED", pod(uses()))
    assert len(c.queue) == 0
    _put(c.pods, "MODIFIED", pod(uses(), phase="Succeeded"))
    assert len(c.queue) == 1


async def test_live_claim_without_finalizer_gets_it() -> None:
    client = FakeClient()
    c = _pvc_controller(client)
    _put(c.claims, "ADDED", claim(deleting=False, finalizers=()))
    await c.sync("demo/data")
    assert client.updates[0][1]["metadata"]["finalizers"] == [PVC_F]
    _put(c.claims, "MODIFIED", claim(deleting=False))
    c.queue._pending.clear()
    _put(c.claims, "MODIFIED", claim(deleting=False))
    assert len(c.queue) == 0  # nothing to do for a live protected claim


def volume(phase: str, *, deleting: bool = True) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "pv1", "resourceVersion": "3", "finalizers": [PV_F]}
    if deleting:
        meta["deletionTimestamp"] = DELETED_AT
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": meta, "spec": {}, "status": {"phase": phase}}


@pytest.mark.parametrize(("phase", "removed"), [("Bound", False), ("Released", True), ("Available", True),
                                                 ("Pending", True)])
async def test_volume_finalizer_removed_unless_bound(phase: str, removed: bool) -> None:
    client = FakeClient()
    c = sp.PVProtectionController(Context(client=client, args=argparse.Namespace()))  # type: ignore[arg-type]
    _put(c.volumes, "ADDED", volume(phase))
    await c.sync("pv1")
    if removed:
        ((path, body),) = client.updates
        assert path == "/api/v1/persistentvolumes/pv1" and body["metadata"]["finalizers"] == []
    else:
        assert client.updates == []
