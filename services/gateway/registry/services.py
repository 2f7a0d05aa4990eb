"""Service clusterIP and nodePort allocation on every Service write (kube's Service REST storage).

As ``pkg/registry/core/service/storage`` (``alloc.go``): a created Service
gets a clusterIP (unless headless or ExternalName) and, for NodePort and
LoadBalancer, nodePorts, from the cluster-wide ranges of
:mod:`services.gateway.registry.ipallocator`; a requested value must be
free and in range (422). An update keeps the clusterIP, allocates what a
type change needs and frees what it drops once the write landed; a delete
frees everything. A dry run fills the values without reserving them. The
``status`` subresource never touches allocations.

Each allocated clusterIP of the flag's range also gets its networking.k8s.io
IPAddress object once the write landed, deleted again when the IP is
released (:mod:`services.gateway.registry.ipaddresses`); one of another
Ready ServiceCIDR is held by its IPAddress alone, created before the write.
"""

from __future__ import annotations

from services.gateway.registry import ipaddresses
from services.gateway.registry.hooks import Hooks, Write, register
from services.gateway.registry.ipallocator import Releaser, ServiceAllocations


def _allocations(write: Write) -> ServiceAllocations | None:
    allocations: ServiceAllocations | None = getattr(write.scope.backends, "services", None)
    return allocations


@register("", "services")
class ServiceIPAllocation(Hooks):
    """Allocate on create, keep or re-allocate on update, release on delete."""

    async def before_create(self, write: Write) -> None:
        """Fill ``spec.clusterIP(s)`` and nodePorts; 422 for a taken or out-of-range value."""
        allocations = _allocations(write)
        if allocations is None or write.subresource:
            return
        timeout = write.scope.timeout
        taken = await allocations.on_create(write.obj, timeout, write.dry_run, _service_name(write)[0])
        _release_on_failure(write, allocations, taken)
        _mirror_ips(write, [ip for allocator, ip in taken if allocator is allocations.ips], [])

    async def before_update(self, write: Write) -> None:
        """Keep the clusterIP (an unset one is copied from the stored object); allocate and free on type changes."""
        allocations = _allocations(write)
        if allocations is None or write.subresource or write.old is None:
            return
        timeout = write.scope.timeout
        taken, freed = await allocations.on_update(write.obj, write.old, timeout, write.dry_run,
                                                  _service_name(write)[0])
        _release_on_failure(write, allocations, taken)
        _mirror_ips(write, [ip for allocator, ip in taken if allocator is allocations.ips],
                    [ip for allocator, ip in freed if allocator is allocations.ips])
        if freed:
            async def release_freed() -> None:
                await allocations.release_all(freed, timeout)

            write.on_success(release_freed)

    async def after_delete(self, write: Write) -> None:
        """Free the deleted Service's clusterIP and nodePorts."""
        allocations = _allocations(write)
        if allocations is not None:
            await allocations.on_delete(write.obj, write.scope.timeout)
            namespace, name = _service_name(write)
            for ip in ipaddresses.cluster_ips(write.obj):
                await ipaddresses.delete(write.scope.backends.storage, ip, namespace, name, write.scope.timeout)


def _service_name(write: Write) -> tuple[str, str]:
    meta = write.obj.get("metadata") or {}
    return str(meta.get("namespace") or write.scope.info.namespace), str(meta.get("name") or "")


def _mirror_ips(write: Write, allocated: list[str], released: list[str]) -> None:
    """Once the write landed: an IPAddress for each clusterIP ``allocated``, none left for those ``released``."""
    if write.dry_run or not (allocated or released):
        return
    storage, timeout = write.scope.backends.storage, write.scope.timeout
    namespace, name = _service_name(write)

    async def mirror() -> None:
        for ip in released:
            await ipaddresses.delete(storage, ip, namespace, name, timeout)
        for ip in allocated:
            await ipaddresses.create(storage, ip, namespace, name, timeout)

    write.on_success(mirror)


def _release_on_failure(write: Write, allocations: ServiceAllocations, taken: list[tuple[Releaser, str]]) -> None:
    if taken:
        async def release_taken() -> None:
            await allocations.release_all(taken, write.scope.timeout)

        write.on_failure(release_taken)
