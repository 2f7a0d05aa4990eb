"""IPAddress objects as allocation state (services/gateway/registry/ipallocator.py, ipaddresses.py).

kube 1.33+ allocates clusterIPs by creating IPAddress objects
(``pkg/registry/core/service/ipallocator/ipallocator.go``) from the ranges of
every Ready ServiceCIDR (``cidrallocator.go`` MetaAllocator); alloc.go
allocIPs reports a refused IP as ``spec.clusterIPs: Invalid value:
[]string{...}: failed to allocate IP <ip>: <why>``. The storage double keys
objects by (group, resource, name) and lists by (group, resource).
"""

from __future__ import annotations

import asyncio
import json
import random
from types import SimpleNamespace
from typing import Any

import pytest

from kapi import errors
from services.gateway.registry import ipaddresses
from services.gateway.registry import ipallocator as allocator


class Storage:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], tuple[bytes, int]] = {}
        self.revision = 0

    @staticmethod
    def _k(key: Any) -> tuple[str, str, str]:
        return (key.group, key.resource, key.name)

    async def Get(self, req, timeout=None, metadata=None):  # noqa: N802 - gRPC method name
        await asyncio.sleep(0)
        if self._k(req.key) not in self.objects:
            raise errors.not_found(req.key.resource, req.key.name)
        obj, rev = self.objects[self._k(req.key)]
        return SimpleNamespace(object=obj, resource_version=rev)

    async def List(self, req, timeout=None, metadata=None):  # noqa: N802
        await asyncio.sleep(0)
        items = [obj for (group, resource, _), (obj, _) in sorted(self.objects.items())
                 if (group, resource) == (req.key.group, req.key.resource)]
        return SimpleNamespace(items=items, resource_version=self.revision)

    async def Create(self, req, timeout=None, metadata=None):  # noqa: N802
        await asyncio.sleep(0)
        if self._k(req.key) in self.objects:
            raise errors.already_exists(req.key.resource, req.key.name)
        self.revision += 1
        self.objects[self._k(req.key)] = (req.object, self.revision)

    async def Update(self, req, timeout=None, metadata=None):  # noqa: N802
        await asyncio.sleep(0)
        if self.objects[self._k(req.key)][1] != req.expected_resource_version:
            raise errors.conflict(req.key.resource, req.key.name, "the object has been modified")
        self.revision += 1
        self.objects[self._k(req.key)] = (req.object, self.revision)

    async def Delete(self, req, timeout=None, metadata=None):  # noqa: N802
        await asyncio.sleep(0)
        self.objects.pop(self._k(req.key), None)

    # helpers for the tests
    def put(self, resource: str, name: str, obj: dict[str, Any]) -> None:
        self.revision += 1
        self.objects[("networking.k8s.io", resource, name)] = (json.dumps(obj).encode(), self.revision)

    def ip_addresses(self) -> dict[str, dict[str, Any]]:
        return {name: json.loads(obj) for (group, resource, name), (obj, _) in self.objects.items()
                if resource == "ipaddresses"}


def _hand_made(ip: str) -> dict[str, Any]:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress", "metadata": {"name": ip},
            "spec": {"parentRef": {"resource": "services", "namespace": "x", "name": "y"}}}


def _cidr(name: str, cidrs: list[str], ready: str | None = "True", deleting: bool = False) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": name}, "spec": {"cidrs": cidrs}}
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if ready is not None:
        obj["status"] = {"conditions": [{"type": "Ready", "status": ready}]}
    return obj


def _allocations(storage: Storage, cidr: str = "10.96.0.0/12") -> allocator.ServiceAllocations:
    storage.put("servicecidrs", "kubernetes", _cidr("kubernetes", [cidr]))
    return allocator.ServiceAllocations(
        allocator.Allocator(storage, allocator.ip_range(cidr), random.Random(3)),
        allocator.Allocator(storage, allocator.port_range("30000-30009")))


def _svc(name: str, ip: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"ports": [{"port": 80}]}
    if ip:
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
    return {"metadata": {"name": name, "namespace": "default"}, "spec": spec}


async def _refused(svcs: allocator.ServiceAllocations, svc: dict[str, Any], dry_run: bool = False) -> str:
    with pytest.raises(errors.StatusError) as info:
        await svcs.on_create(svc, 5, dry_run)
    assert info.value.code == 422
    [cause] = info.value.details["causes"]
    assert cause["field"] == "spec.clusterIPs" and cause["reason"] == "FieldValueInvalid"
    return info.value.message


async def test_a_hand_made_ip_address_reserves_its_ip():
    storage = Storage()
    svcs = _allocations(storage)
    storage.put("ipaddresses", "10.96.0.50", _hand_made("10.96.0.50"))
    for dry_run in (False, True):
        assert await _refused(svcs, _svc("x", "10.96.0.50"), dry_run) == (
            'Service "x" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.50"}: failed to allocate IP '
            "10.96.0.50: provided IP is already allocated")
    # an IP the bitmap holds fails the same way
    await svcs.on_create(_svc("a", "10.96.0.51"), 5)
    assert await _refused(svcs, _svc("b", "10.96.0.51")) == (
        'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.51"}: failed to allocate IP '
        "10.96.0.51: provided IP is already allocated")


async def test_automatic_allocation_skips_ips_held_by_an_ip_address():
    storage = Storage()
    svcs = _allocations(storage, "10.0.0.0/29")  # 6 usable: .1 to .6
    for ip in ("10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"):
        storage.put("ipaddresses", ip, _hand_made(ip))
    got = set()
    for i in range(2):
        svc = _svc(f"s{i}")
        await svcs.on_create(svc, 5)
        got.add(svc["spec"]["clusterIP"])
    assert got == {"10.0.0.5", "10.0.0.6"}
    with pytest.raises(errors.StatusError) as info:
        await svcs.on_create(_svc("full"), 5)
    assert info.value.code == 500 and info.value.message == "failed to allocate a serviceIP: range is full"
    # the skipped IPs were given back to the bitmap: deleting a hand-made IPAddress frees its IP
    del storage.objects[("networking.k8s.io", "ipaddresses", "10.0.0.3")]
    svc = _svc("again")
    await svcs.on_create(svc, 5)
    assert svc["spec"]["clusterIP"] == "10.0.0.3"


async def test_an_ip_of_another_ready_service_cidr_is_held_by_its_ip_address():
    storage = Storage()
    svcs = _allocations(storage)
    outside = ('Service "x" is invalid: spec.clusterIPs: Invalid value: []string{"10.200.0.7"}: failed to allocate '
               "IP 10.200.0.7: the provided network does not match the current range")
    assert await _refused(svcs, _svc("x", "10.200.0.7")) == outside
    storage.put("servicecidrs", "extra", _cidr("extra", ["10.200.0.0/24"], ready="False"))
    assert await _refused(svcs, _svc("x", "10.200.0.7")) == outside  # not Ready
    storage.put("servicecidrs", "extra", _cidr("extra", ["10.200.0.0/24"], deleting=True))
    assert await _refused(svcs, _svc("x", "10.200.0.7")) == outside  # being deleted
    storage.put("servicecidrs", "extra", _cidr("extra", ["10.200.0.0/24"], ready=None))  # no condition: Ready

    dry = _svc("x", "10.200.0.7")
    assert await svcs.on_create(dry, 5, dry_run=True) == []
    assert "10.200.0.7" not in storage.ip_addresses()

    svc = _svc("x", "10.200.0.7")
    taken = await svcs.on_create(svc, 5)
    assert svc["spec"]["clusterIPs"] == ["10.200.0.7"]
    held = storage.ip_addresses()["10.200.0.7"]
    assert held["metadata"]["labels"] == {"ipaddress.kubernetes.io/ip-family": "IPv4",
                                          "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}
    assert held["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": "default", "name": "x"}
    assert await _refused(svcs, _svc("y", "10.200.0.7")) == (
        'Service "y" is invalid: spec.clusterIPs: Invalid value: []string{"10.200.0.7"}: failed to allocate IP '
        "10.200.0.7: provided IP is already allocated")
    # a failed write gives it back (what the gateway's on_failure hook runs)
    await svcs.release_all(taken, 5)
    assert "10.200.0.7" not in storage.ip_addresses()


@pytest.mark.parametrize("ip,cidr", [("10.200.0.0", "10.200.0.0/24"), ("10.200.0.255", "10.200.0.0/24"),
                                     ("10.96.0.0", "10.96.0.0/12")])
async def test_network_and_broadcast_addresses_are_not_in_the_valid_range(ip, cidr):
    storage = Storage()
    svcs = _allocations(storage)
    storage.put("servicecidrs", "extra", _cidr("extra", ["10.200.0.0/24"]))
    assert await _refused(svcs, _svc("x", ip)) == (
        f'Service "x" is invalid: spec.clusterIPs: Invalid value: []string{{"{ip}"}}: failed to allocate IP {ip}: '
        f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {cidr}")


def test_is_ready():
    assert ipaddresses.is_ready(_cidr("a", ["10.0.0.0/24"]))
    assert ipaddresses.is_ready(_cidr("a", ["10.0.0.0/24"], ready=None))
    assert not ipaddresses.is_ready(_cidr("a", ["10.0.0.0/24"], ready="False"))
    assert not ipaddresses.is_ready(_cidr("a", ["10.0.0.0/24"], deleting=True))


async def test_default_service_cidr_status_sync():
    """default_servicecidr_controller.go syncStatus: Ready re-applied when absent or Unknown, never over False,
    mismatches and Ready False reported once, a deleting one left alone."""
    storage = Storage()
    reported: set[str] = set()
    sync = ipaddresses.sync_default_service_cidr
    assert await sync(storage, ["10.96.0.0/12"], reported, 5) == "absent"
    storage.put("servicecidrs", "kubernetes", _cidr("kubernetes", ["10.96.0.0/12"], ready=None))
    assert await sync(storage, ["10.96.0.0/12"], reported, 5, now="2026-01-01T00:00:09Z") == "applied"
    stored = json.loads(storage.objects[("networking.k8s.io", "servicecidrs", "kubernetes")][0])
    assert stored["status"]["conditions"] == [{"type": "Ready", "status": "True",
                                               "lastTransitionTime": "2026-01-01T00:00:09Z", "reason": "",
                                               "message": "Kubernetes default Service CIDR is ready"}]
    assert await sync(storage, ["10.96.0.0/12"], reported, 5) == "ready"
    unknown = _cidr("kubernetes", ["10.96.0.0/12"], ready="Unknown")
    unknown["status"]["conditions"][0].update(reason="Starting", observedGeneration=1)
    storage.put("servicecidrs", "kubernetes", unknown)
    assert await sync(storage, ["10.96.0.0/12"], reported, 5, now="2026-01-01T00:00:19Z") == "applied"
    stored = json.loads(storage.objects[("networking.k8s.io", "servicecidrs", "kubernetes")][0])
    assert stored["status"]["conditions"] == [{"type": "Ready", "status": "True", "reason": "Starting",
                                               "observedGeneration": 1, "lastTransitionTime": "2026-01-01T00:00:19Z",
                                               "message": "Kubernetes default Service CIDR is ready"}]
    storage.put("servicecidrs", "kubernetes", _cidr("kubernetes", ["10.96.0.0/12"], ready="False"))
    assert await sync(storage, ["10.96.0.0/12"], reported, 5) == "not-ready" and reported == {"not-ready"}
    storage.put("servicecidrs", "kubernetes", _cidr("kubernetes", ["10.0.0.0/24"], ready=None))
    assert await sync(storage, ["10.96.0.0/12"], reported, 5) == "inconsistent"
    assert reported == {"not-ready", "inconsistent"}
    assert "status" not in json.loads(storage.objects[("networking.k8s.io", "servicecidrs", "kubernetes")][0])
    storage.put("servicecidrs", "kubernetes", _cidr("kubernetes", ["10.96.0.0/12"], ready=None, deleting=True))
    assert await sync(storage, ["10.96.0.0/12"], reported, 5) == "deleting"
