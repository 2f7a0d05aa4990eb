"""Cluster-wide Service clusterIP and nodePort allocation, kept in storage so every gateway agrees.

As kube-apiserver's ``pkg/registry/core/service/{ipallocator,portallocator}``:
each range is a bitmap in one object under a reserved key
(``/registry/ranges/serviceips``, ``/registry/ranges/servicenodeports``,
kind ``RangeAllocation`` with ``range`` and base64 ``data``), changed only
by conditional writes (mod revision unchanged), retried on conflict. The
first address of ``--service-cluster-ip-range`` (default 10.96.0.0/12) is
the ``kubernetes`` Service's; nodePorts come from
``--service-node-port-range`` (default 30000-32767).

The networking.k8s.io IPAddress objects are consulted as kube 1.33+'s
IPAddress-backed allocator (``ipallocator.go``, ``cidrallocator.go``) makes
them the allocation state: an IP whose IPAddress exists is allocated, and an
IP inside another Ready ServiceCIDR than the flag's range is allocated by
creating its IPAddress (:mod:`services.gateway.registry.ipaddresses`).
"""

from __future__ import annotations

import base64
import ipaddress
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from kapi import errors, grpcutil, jsonutil
from kapi.kinds.services import needs_health_check
from kapi.objectmeta import bad_value
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway.registry import ipaddresses

RETRIES = 20


@dataclass(frozen=True)
class Range:
    """A range of ``size`` values; ``value(offset)`` and ``offset(value)`` convert (offset None: outside)."""

    name: str  # the reserved object's name: serviceips | servicenodeports
    text: str  # the flag's value, stored as ``range``
    size: int
    value: Callable[[int], str]
    offset: Callable[[str], int | None]
    first: int = 0  # lowest allocatable offset


def ip_range(cidr: str) -> Range:
    """The clusterIP range of a CIDR: every host address but the network (and broadcast for IPv4)."""
    net = ipaddress.ip_network(cidr, strict=False)
    size = min(net.num_addresses, 1 << 20)
    base = int(net.network_address)

    def offset(text: str) -> int | None:
        try:
            addr = ipaddress.ip_address(text)
        except ValueError:
            return None
        off = int(addr) - base
        return off if addr in net and 1 <= off < size - (1 if net.version == 4 else 0) else None

    return Range("serviceips", str(net), size, lambda off: str(ipaddress.ip_address(base + off)), offset, first=1)


def port_range(text: str) -> Range:
    """The nodePort range ``low-high`` (inclusive) or ``low+count``."""
    if "+" in text:
        low_text, count = text.split("+", 1)
        low, high = int(low_text), int(low_text) + int(count) - 1
    else:
        low_text, _, high_text = text.partition("-")
        low, high = int(low_text), int(high_text)

    def offset(value: str) -> int | None:
        try:
            port = int(value)
        except ValueError:
            return None
        return port - low if low <= port <= high else None

    return Range("servicenodeports", f"{low}-{high}", high - low + 1, lambda off: str(low + off), offset)


class Allocator:
    """Allocate and release values of one Range in storage; safe across gateways (conditional writes)."""

    def __init__(self, storage: Any, rng: Range, rand: random.Random | None = None):
        self._storage = storage
        self.range = rng
        self._rand = rand or random.Random()

    @property
    def storage(self) -> Any:
        """The storage client the range is kept in."""
        return self._storage

    def _key(self) -> storage_pb2.ResourceKey:
        return storage_pb2.ResourceKey(resource="ranges", name=self.range.name)

    async def _read(self, timeout: float) -> tuple[bytearray, int]:
        try:
            reply: Any = await grpcutil.call("storage", self._storage.Get, storage_pb2.GetRequest(key=self._key()),
                                             timeout=timeout)
        except errors.StatusError as err:
            if err.reason != "NotFound":
                raise
            return bytearray((self.range.size + 7) // 8), 0
        obj = jsonutil.loads(reply.object)
        data = bytearray(base64.b64decode(obj.get("data") or ""))
        data.extend(b"\0" * ((self.range.size + 7) // 8 - len(data)))
        return data, int(reply.resource_version)

    async def _write(self, bitmap: bytearray, revision: int, timeout: float) -> None:
        obj = jsonutil.dumps({"kind": "RangeAllocation", "apiVersion": "v1", "metadata": {"name": self.range.name},
                              "range": self.range.text, "data": base64.b64encode(bytes(bitmap)).decode()})
        if revision == 0:
            await grpcutil.call("storage", self._storage.Create, storage_pb2.CreateRequest(
                key=self._key(), object=obj), timeout=timeout)
        else:
            await grpcutil.call("storage", self._storage.Update, storage_pb2.UpdateRequest(
                key=self._key(), object=obj, expected_resource_version=revision), timeout=timeout)

    async def _change(self, pick: Callable[[bytearray], int | None], set_bit: bool, timeout: float,
                      dry_run: bool = False) -> int | None:
        for _ in range(RETRIES):
            bitmap, revision = await self._read(timeout)
            off = pick(bitmap)
            if off is None or dry_run:
                return off
            if set_bit:
                bitmap[off // 8] |= 0x80 >> (off % 8)
            else:
                bitmap[off // 8] &= ~(0x80 >> (off % 8)) & 0xFF
            try:
                await self._write(bitmap, revision, timeout)
                return off
            except errors.StatusError as err:
                if err.reason not in ("Conflict", "AlreadyExists"):
                    raise
        raise errors.StatusError(500, "InternalError", f"could not update the {self.range.name} allocation "
                                 f"after {RETRIES} attempts")

    @staticmethod
    def _used(bitmap: bytearray, off: int) -> bool:
        return bool(bitmap[off // 8] & (0x80 >> (off % 8)))

    async def allocate(self, wanted: str = "", timeout: float = 10.0, dry_run: bool = False,
                       skip: frozenset[int] = frozenset()) -> str:
        """Allocate ``wanted`` (422-style ValueError text on failure) or a random free value; returns it.

        A random value is never one of the offsets in ``skip`` (values held elsewhere, e.g. by an IPAddress).

        With ``dry_run`` the value is chosen the same way but nothing is
        written (kube's dry-run allocator: the answer shows a clusterIP that
        stays free). Raises ``ValueError("provided ... is already
        allocated")`` or ``ValueError("provided ... is not in the valid range
        ...")`` for a bad ``wanted``; 500 InternalError ``range is full`` when
        none is free.
        """
        rng = self.range
        if wanted:
            want = rng.offset(wanted)
            if want is None:
                raise ValueError(f"provided {'IP' if rng.name == 'serviceips' else 'port'} is not in the valid "
                                 f"range. The range of valid {'IPs' if rng.name == 'serviceips' else 'ports'} "
                                 f"is {rng.text}")

            def pick_wanted(bitmap: bytearray) -> int | None:
                if self._used(bitmap, want):
                    raise ValueError(f"provided {'IP' if rng.name == 'serviceips' else 'port'} is already "
                                     f"allocated")
                return want

            await self._change(pick_wanted, True, timeout, dry_run)
            return wanted

        def pick_free(bitmap: bytearray) -> int | None:
            start = self._rand.randrange(rng.first, rng.size)
            for i in range(rng.size - rng.first):
                off = rng.first + (start - rng.first + i) % (rng.size - rng.first)
                if off not in skip and rng.offset(rng.value(off)) is not None and not self._used(bitmap, off):
                    return off
            return None

        off = await self._change(pick_free, True, timeout, dry_run)
        if off is None:
            raise errors.StatusError(500, "InternalError", "failed to allocate a serviceIP: range is full"
                                     if rng.name == "serviceips" else "failed to allocate a nodePort: range is full")
        return rng.value(off)

    async def release(self, value: str, timeout: float = 10.0) -> None:
        """Free ``value`` (values outside the range are ignored)."""
        off = self.range.offset(value)
        if off is None:
            return
        await self._change(lambda bitmap: off if self._used(bitmap, off) else None, False, timeout)


def _invalid(name: str, field: str, value: Any, detail: str, go: bool = False) -> errors.StatusError:
    """422 for the Service; the value as JSON, or with ``go`` as field.Invalid prints it (``[]string{"a"}``)."""
    shown = bad_value(value) if go else jsonutil.dumps(value).decode()
    return errors.invalid("Service", name, [errors.Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}",
                                                         field)])


class Releaser(Protocol):
    """What a taken value is released through: an :class:`Allocator`, or a Service's IPAddress."""

    async def release(self, value: str, timeout: float = 10.0) -> None:
        """Free ``value``."""


@dataclass(frozen=True)
class ServiceIPAddress:
    """A clusterIP held only by its IPAddress (one of another ServiceCIDR than the flag's range)."""

    storage: Any
    namespace: str
    name: str

    async def release(self, value: str, timeout: float = 10.0) -> None:
        """Delete the IPAddress of ``value`` if it is still this Service's (never raises a StatusError)."""
        await ipaddresses.delete(self.storage, value, self.namespace, self.name, timeout)


class ServiceAllocations:
    """clusterIP and nodePort allocation for Service writes (kube's service REST storage)."""

    def __init__(self, ips: Allocator, ports: Allocator):
        self.ips = ips
        self.ports = ports

    async def on_create(self, svc: dict[str, Any], timeout: float, dry_run: bool = False, namespace: str = ""
                        ) -> list[tuple[Releaser, str]]:
        """Allocate the Service's clusterIP and nodePorts in place; returns what to release if the write fails.

        ``dry_run`` fills the values without reserving them (and returns nothing to release).
        """
        spec = svc.get("spec")
        if not isinstance(spec, dict):
            return []
        meta = svc.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace") or namespace
        taken: list[tuple[Releaser, str]] = []
        try:
            await self._allocate((namespace, name), spec, {}, taken, timeout, dry_run)
        except BaseException:
            await self.release_all(taken, timeout)
            raise
        return [] if dry_run else taken

    async def on_update(self, svc: dict[str, Any], old: dict[str, Any], timeout: float, dry_run: bool = False,
                        namespace: str = "") -> tuple[list[tuple[Releaser, str]], list[tuple[Releaser, str]]]:
        """Keep clusterIP immutable (422), allocate for a type change; returns (allocated, to release after).

        ``dry_run`` fills new values without reserving them and returns nothing to allocate or release.
        """
        spec, old_spec = svc.get("spec"), old.get("spec") or {}
        if not isinstance(spec, dict):
            return [], []
        meta = svc.get("metadata") or {}
        name, namespace = meta.get("name", ""), meta.get("namespace") or namespace
        old_ip = old_spec.get("clusterIP") or ""
        new_type, old_type = spec.get("type", "ClusterIP"), old_spec.get("type", "ClusterIP")
        if old_ip and old_ip != "None" and new_type != "ExternalName":
            if spec.get("clusterIP") in (None, ""):
                spec["clusterIP"] = old_ip
                spec["clusterIPs"] = list(old_spec.get("clusterIPs") or [old_ip])
            elif spec.get("clusterIP") != old_ip:
                raise _invalid(name, "spec.clusterIPs[0]", [spec.get("clusterIP")], "may not change once set")
        taken: list[tuple[Releaser, str]] = []
        try:
            await self._allocate((namespace, name), spec, old_spec, taken, timeout, dry_run)
        except BaseException:
            await self.release_all(taken, timeout)
            raise
        if dry_run:
            return [], []
        freed: list[tuple[Releaser, str]] = []
        if old_ip and old_ip != "None" and new_type == "ExternalName":
            freed.append((self.ips, old_ip))
        new_ports = {p.get("nodePort") for p in spec.get("ports") or () if isinstance(p, dict)}
        for p in old_spec.get("ports") or ():
            if isinstance(p, dict) and p.get("nodePort") and p["nodePort"] not in new_ports:
                freed.append((self.ports, str(p["nodePort"])))
        if needs_health_check(old_spec) and not needs_health_check(spec) and old_spec.get("healthCheckNodePort"):
            freed.append((self.ports, str(old_spec["healthCheckNodePort"])))
        del old_type
        return taken, freed

    async def _allocate(self, service: tuple[str, str], spec: dict[str, Any], old_spec: dict[str, Any],
                        taken: list[tuple[Releaser, str]], timeout: float, dry_run: bool = False) -> None:
        name = service[1]
        kind = spec.get("type", "ClusterIP")
        if kind == "ExternalName":
            return
        ip = spec.get("clusterIP") or ""
        # "" asks for an IP even when the stored Service (an ExternalName one) holds "" too: Go's omitempty
        # never stores it, so kube allocates on ExternalName -> ClusterIP whatever the old object said.
        if ip != "None" and (not ip or ip != old_spec.get("clusterIP")):
            if ip:
                await self._wanted_ip(service, ip, taken, timeout, dry_run)
            else:
                ip = await self._next_ip(taken, timeout, dry_run)
            spec["clusterIP"] = ip
            spec["clusterIPs"] = [ip]
        if kind in ("NodePort", "LoadBalancer"):
            await self._node_ports(name, spec, old_spec, taken, timeout, dry_run)
        # the health check nodePort of a LoadBalancer with externalTrafficPolicy Local (allocHealthCheckNodePort),
        # when the Service starts needing one; one it keeps needing stays as it is
        if needs_health_check(spec) and not (old_spec and needs_health_check(old_spec)):
            wanted = spec.get("healthCheckNodePort") or ""
            try:
                value = await self.ports.allocate(str(wanted), timeout, dry_run)
            except ValueError as exc:
                detail = (f"failed to allocate requested HealthCheck NodePort {wanted}: {exc}" if wanted
                          else f"failed to allocate a HealthCheck NodePort 0: {exc}")
                raise _invalid(name, "spec.healthCheckNodePort", wanted or 0, detail) from None
            if not dry_run:
                taken.append((self.ports, value))
            spec["healthCheckNodePort"] = int(value)

    async def _wanted_ip(self, service: tuple[str, str], ip: str, taken: list[tuple[Releaser, str]],
                         timeout: float, dry_run: bool) -> None:
        """Reserve the requested clusterIP ``ip`` for Service ``service`` (namespace, name), as kube's
        MetaAllocator.AllocateService and alloc.go allocIPs: 422 on ``spec.clusterIPs``, ``failed to allocate IP
        <ip>: <why>`` with ``provided IP is already allocated`` (an IPAddress of that name exists, or the flag
        range's bitmap has it), ``the provided network does not match the current range`` (no Ready ServiceCIDR
        holds it; ErrMismatchedNetwork) or ``the provided IP (<ip>) is not in the valid range. The range of valid
        IPs is <cidr>`` (a network or IPv4 broadcast address; ErrNotInRange). An IP of the flag's range takes its
        bit; one of another Ready ServiceCIDR is held by creating its IPAddress now (deleted again if the write
        fails). A dry run checks without reserving."""
        namespace, name = service
        storage = self.ips.storage

        def fail(why: str) -> errors.StatusError:
            return _invalid(name, "spec.clusterIPs", [ip], f"failed to allocate IP {ip}: {why}", go=True)

        if self.ips.range.offset(ip) is not None:
            if await ipaddresses.exists(storage, ip, timeout):
                raise fail("provided IP is already allocated")
            try:
                await self.ips.allocate(ip, timeout, dry_run)
            except ValueError as exc:
                raise fail(str(exc)) from None
            if not dry_run:
                taken.append((self.ips, ip))
            return
        try:
            addr = ipaddress.ip_address(ip)
        except ValueError:
            raise fail("the provided network does not match the current range") from None
        nets = [ipaddress.ip_network(c, strict=False) for c in await ipaddresses.ready_cidrs(storage, timeout)]
        net = next((n for n in nets if n.version == addr.version and addr in n), None)
        if net is None:
            raise fail("the provided network does not match the current range")
        if addr == net.network_address or (net.version == 4 and addr == net.broadcast_address):
            raise fail(f"the provided IP ({ip}) is not in the valid range. The range of valid IPs is {net}")
        if dry_run:
            if await ipaddresses.exists(storage, ip, timeout):
                raise fail("provided IP is already allocated")
            return
        try:
            await ipaddresses.reserve(storage, ip, namespace, name, timeout)
        except ValueError as exc:
            raise fail(str(exc)) from None
        taken.append((ServiceIPAddress(storage, namespace, name), ip))

    async def _next_ip(self, taken: list[tuple[Releaser, str]], timeout: float, dry_run: bool) -> str:
        """A random free clusterIP of the flag's range whose IPAddress does not exist (kube's allocateFromRange
        skips the IPs its IPAddress lister has): one GET per candidate; a candidate held by an IPAddress is given
        back and skipped. 500 ``failed to allocate a serviceIP: range is full`` when none is left."""
        skip: set[int] = set()
        for _ in range(RETRIES):
            ip = await self.ips.allocate("", timeout, dry_run, frozenset(skip))
            if not await ipaddresses.exists(self.ips.storage, ip, timeout):
                if not dry_run:
                    taken.append((self.ips, ip))
                return ip
            if not dry_run:
                await self.ips.release(ip, timeout)
            off = self.ips.range.offset(ip)
            if off is not None:
                skip.add(off)
        raise errors.StatusError(500, "InternalError", "failed to allocate a serviceIP: range is full")

    async def _node_ports(self, name: str, spec: dict[str, Any], old_spec: dict[str, Any],
                          taken: list[tuple[Releaser, str]], timeout: float, dry_run: bool) -> None:
        """initNodePorts (create) / updateNodePorts (update): a port without a nodePort gets one unless the
        Service is a LoadBalancer with ``allocateLoadBalancerNodePorts: false`` (shouldAllocateNodePorts; a
        requested one is still reserved). On create, ports of one port number (TCP and UDP 53) share a nodePort:
        the first one requested for that number, else one allocated; on update, a nodePort the stored Service
        holds is kept and any other is reserved once."""
        allocate_new = spec.get("type") == "NodePort" or spec.get("allocateLoadBalancerNodePorts") is not False
        ports = [p if isinstance(p, dict) else {} for p in spec.get("ports") or ()]
        old_ports = {str(p.get("nodePort")) for p in old_spec.get("ports") or () if isinstance(p, dict)}
        shared: dict[Any, int] = {}  # create: port number -> its nodePort
        reserved: set[str] = set()  # update: nodePorts this write reserved

        async def reserve(i: int, wanted: Any) -> int:
            try:
                value = await self.ports.allocate(str(wanted or ""), timeout, dry_run)
            except ValueError as exc:
                raise _invalid(name, f"spec.ports[{i}].nodePort", wanted, str(exc)) from None
            if not dry_run:
                taken.append((self.ports, value))
            return int(value)

        for i, port in enumerate(ports):
            requested = port.get("nodePort")
            if not requested and not allocate_new:
                continue
            if old_spec:
                if not requested:
                    port["nodePort"] = await reserve(i, "")
                elif str(requested) not in old_ports and str(requested) not in reserved:
                    await reserve(i, requested)
                    reserved.add(str(requested))
                continue
            number = port.get("port")
            if number not in shared:
                first = next((p.get("nodePort") for p in ports if p.get("port") == number and p.get("nodePort")),
                             None)
                port["nodePort"] = shared[number] = await reserve(i, first) if first else await reserve(i, "")
            elif not requested:
                port["nodePort"] = shared[number]
            elif requested != shared[number]:
                await reserve(i, requested)

    async def on_delete(self, svc: dict[str, Any], timeout: float) -> None:
        """Release a deleted Service's clusterIP, nodePorts and health check nodePort (releaseAllocatedResources)."""
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP") or ""
        items: list[tuple[Releaser, str]] = []
        if ip and ip != "None":
            items.append((self.ips, ip))
        items.extend((self.ports, str(p["nodePort"])) for p in spec.get("ports") or ()
                     if isinstance(p, dict) and p.get("nodePort"))
        if needs_health_check(spec) and spec.get("healthCheckNodePort"):
            items.append((self.ports, str(spec["healthCheckNodePort"])))
        await self.release_all(items, timeout)

    @staticmethod
    async def release_all(items: list[tuple[Releaser, str]], timeout: float) -> None:
        """Release every (allocator, value) pair, ignoring failures (a leaked value is repaired by nobody yet)."""
        for allocator, value in items:
            try:
                await allocator.release(value, timeout)
            except errors.StatusError:
                pass
