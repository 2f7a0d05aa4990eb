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


def _allocations(ports: str = "30000-30009") -> allocator.ServiceAllocations:
    storage = Storage()
    return allocator.ServiceAllocations(allocator.Allocator(storage, allocator.ip_range("10.96.0.0/12")),
                                        allocator.Allocator(storage, allocator.port_range(ports)))


async def test_health_check_node_port_follows_needs_health_check():
    """allocHealthCheckNodePort / updateHealthCheckNodePort / releaseAllocatedResources (alloc.go)."""
    svcs = _allocations()
    local = {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "allocateLoadBalancerNodePorts": True,
             "ports": [{"port": 80}]}
    svc = {"metadata": {"name": "lb"}, "spec": dict(local, ports=[{"port": 80}])}
    await svcs.on_create(svc, 5)
    hc = svc["spec"]["healthCheckNodePort"]
    assert hc in range(30000, 30010) and hc != svc["spec"]["ports"][0]["nodePort"]
    # a requested one must be free: kube's message, on the field
    taken = {"metadata": {"name": "lb2"}, "spec": dict(local, ports=[{"port": 80}], healthCheckNodePort=hc)}
    with pytest.raises(errors.StatusError) as info:
        await svcs.on_create(taken, 5)
    assert info.value.code == 422
    [cause] = info.value.details["causes"]
    assert cause == {"reason": "FieldValueInvalid", "field": "spec.healthCheckNodePort", "message": (
        f"Invalid value: {hc}: failed to allocate requested HealthCheck NodePort {hc}: provided port is already "
        "allocated")}
    # Cluster policy: none, and none for a NodePort Service
    plain = {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "externalTrafficPolicy": "Local",
                                                  "ports": [{"port": 80}]}}
    await svcs.on_create(plain, 5)
    assert "healthCheckNodePort" not in plain["spec"]
    # Local -> Cluster frees it once the write landed; Cluster -> Local allocates one
    cluster = {"metadata": {"name": "lb"}, "spec": {**svc["spec"], "externalTrafficPolicy": "Cluster"}}
    del cluster["spec"]["healthCheckNodePort"]
    allocated, freed = await svcs.on_update(cluster, svc, 5)
    assert allocated == [] and (svcs.ports, str(hc)) in freed
    back = {"metadata": {"name": "lb"}, "spec": {**cluster["spec"], "externalTrafficPolicy": "Local"}}
    allocated, freed = await svcs.on_update(back, cluster, 5)
    assert [value for _, value in allocated] == [str(back["spec"]["healthCheckNodePort"])] and freed == []
    await svcs.release_all(freed, 5)


async def test_load_balancer_without_node_port_allocation_keeps_only_requested_ones():
    svcs = _allocations()
    svc = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "allocateLoadBalancerNodePorts": False,
                                                "ports": [{"port": 80}, {"port": 81, "nodePort": 30005}]}}
    taken = await svcs.on_create(svc, 5)
    assert svc["spec"]["ports"] == [{"port": 80}, {"port": 81, "nodePort": 30005}]
    assert [value for allocator_, value in taken if allocator_ is svcs.ports] == ["30005"]


async def test_ports_of_one_number_share_a_node_port_on_create():
    """initNodePorts: TCP and UDP 53 get one nodePort, the one requested for either if any."""
    svcs = _allocations()
    svc = {"metadata": {"name": "dns"}, "spec": {"type": "NodePort", "ports": [
        {"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}, {"port": 54}]}}
    await svcs.on_create(svc, 5)
    first, second, third = (p["nodePort"] for p in svc["spec"]["ports"])
    assert first == second != third
    named = {"metadata": {"name": "dns2"}, "spec": {"type": "NodePort", "ports": [
        {"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP", "nodePort": 30008}]}}
    svcs = _allocations()  # a fresh range: 30008 is free
    taken = await svcs.on_create(named, 5)
    assert [p["nodePort"] for p in named["spec"]["ports"]] == [30008, 30008]
    assert [value for allocator_, value in taken if allocator_ is svcs.ports] == ["30008"]
