"""The system PriorityClasses cannot be deleted (kube's scheduling REST.Delete).

kube-apiserver refuses a DELETE of ``system-node-critical`` or
``system-cluster-critical`` (dry runs too) with 403
``priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden:
this is a system priority class and cannot be deleted``; the gateways
create them at start (services/gateway/server.py). Source:
pkg/registry/scheduling/priorityclass/storage/storage.go.
"""

from __future__ import annotations

from kapi import errors
from kapi.kinds import scheduling
from services.gateway.registry.hooks import Hooks, Write, register


@register(scheduling.GROUP, "priorityclasses")
class SystemPriorityClasses(Hooks):
    """Refuse (403) deleting a system PriorityClass."""

    async def before_delete(self, write: Write) -> None:
        """403 Forbidden when the object is one of :data:`kapi.kinds.scheduling.SYSTEM_PRIORITY_CLASSES`."""
        name = str((write.obj.get("metadata") or {}).get("name") or "")
        if name in scheduling.SYSTEM_PRIORITY_CLASSES:
            raise errors.forbidden("priorityclasses", name, "this is a system priority class and cannot be deleted",
                                   group=scheduling.GROUP)
