"""clusterIP/nodePort allocation (services/gateway/registry/ipallocator.py) over an in-memory storage double.

The double keeps storage's contract that matters here: Create fails with
AlreadyExists, Update with Conflict when the revision moved on. The e2e
test (tests/e2e/test_kubectl_surface.py) covers the real storage path.
"""

from __future__ import annotations

import asyncio
import random
from types import SimpleNamespace

import pytest

from kapi import errors
from services.gateway.registry import ipallocator as allocator


class Storage:
    def __init__(self) -> None:
        self.objects: dict[str, tuple[bytes, int]] = {}
        self.revision = 0

    async def Get(self, req, timeout=None, metadata=None):  # noqa: N802 - gRPC method name
        if req.key.name not in self.objects:
            raise errors.not_found("ranges", req.key.name)
        obj, rev = self.objects[req.key.name]
        await asyncio.sleep(0)
        return SimpleNamespace(object=obj, resource_version=rev)

    async def Create(self, req, timeout=None, metadata=None):  # noqa: N802
        await asyncio.sleep(0)
        if req.key.name in self.objects:
            raise errors.already_exists("ranges", req.key.name)
        self.revision += 1
        self.objects[req.key.name] = (req.object, self.revision)

    async def Update(self, req, timeout=None, metadata=None):  # noqa: N802
        await asyncio.sleep(0)
        if self.objects[req.key.name][1] != req.expected_resource_version:
            raise errors.conflict("ranges", req.key.name, "the object has been modified")
        self.revision += 1
        self.objects[req.key.name] = (req.object, self.revision)


@pytest.mark.parametrize("cidr,value,offset", [
    ("10.96.0.0/12", "10.96.0.1", 1), ("10.96.0.0/12", "10.96.0.0", None), ("10.96.0.0/12", "10.111.255.255", None),
    ("10.96.0.0/12", "10.111.255.254", (1 << 20) - 2), ("10.96.0.0/12", "10.112.0.1", None),
    ("10.96.0.0/12", "junk", None),
])
def test_ip_range_offsets(cidr, value, offset):
    assert allocator.ip_range(cidr).offset(value) == offset


@pytest.mark.parametrize("text,port,offset", [("30000-32767", "30000", 0), ("30000-32767", "32767", 2767),
                                             ("30000-32767", "29999", None), ("30000+10", "30009", 9)])
def test_port_range_offsets(text, port, offset):
    assert allocator.port_range(text).offset(port) == offset


async def test_concurrent_allocations_are_unique_and_released_values_reusable():
    storage = Storage()
    # Two "gateways" with their own allocators over the same storage, as in a real deployment.
    a = allocator.Allocator(storage, allocator.ip_range("10.0.0.0/28"), random.Random(1))
    b = allocator.Allocator(storage, allocator.ip_range("10.0.0.0/28"), random.Random(1))
    got = await asyncio.gather(*(x.allocate() for x in [a, b] * 7))
    assert len(set(got)) == 14 and all(ip.startswith("10.0.0.") for ip in got)
    assert "10.0.0.0" not in got and "10.0.0.15" not in got
    with pytest.raises(errors.StatusError) as info:
        await a.allocate()
    assert "range is full" in info.value.message
    await b.release(got[0])
    assert await a.allocate() == got[0]


async def test_specific_values():
    ips = allocator.Allocator(Storage(), allocator.ip_range("10.96.0.0/12"))
    assert await ips.allocate("10.96.0.10") == "10.96.0.10"
    with pytest.raises(ValueError, match="provided IP is already allocated"):
        await ips.allocate("10.96.0.10")
    with pytest.raises(ValueError, match="not in the valid range. The range of valid IPs is 10.96.0.0/12"):
        await ips.allocate("192.168.0.1")


async def test_service_allocations_create_update_delete():
    storage = Storage()
    svcs = allocator.ServiceAllocations(allocator.Allocator(storage, allocator.ip_range("10.96.0.0/12")),
                                        allocator.Allocator(storage, allocator.port_range("30000-30001")))
    svc = {"metadata": {"name": "s"}, "spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}}
    await svcs.on_create(svc, 5)
    ip = svc["spec"]["clusterIP"]
    assert svc["spec"]["clusterIPs"] == [ip]
    assert sorted(p["nodePort"] for p in svc["spec"]["ports"]) == [30000, 30001]
    with pytest.raises(errors.StatusError) as info:
        await svcs.on_create({"metadata": {"name": "t"}, "spec": {"type": "NodePort", "ports": [{"port": 1}]}}, 5)
    assert "range is full" in info.value.message

    changed = {"metadata": {"name": "s"}, "spec": {**svc["spec"], "clusterIP": "10.96.0.99"}}
    with pytest.raises(errors.StatusError) as info:
        await svcs.on_update(changed, svc, 5)
    assert info.value.code == 422 and "may not change once set" in info.value.message
    kept = {"metadata": {"name": "s"}, "spec": {"type": "ClusterIP", "ports": [{"port": 80}]}}
    taken, freed = await svcs.on_update(kept, svc, 5)
    assert kept["spec"]["clusterIP"] == ip and taken == [] and len(freed) == 2

    await svcs.on_delete(svc, 5)
    again = {"metadata": {"name": "u"}, "spec": {"clusterIP": ip, "ports": [{"port": 1}]}}
    await svcs.on_create(again, 5)  # the released IP is free again
    assert again["spec"]["clusterIP"] == ip
