"""service-cidr-controller: the ServiceCIDR finalizer and Ready condition (kube ``pkg/controller/servicecidrs``,
run by kube-controller-manager; MultiCIDRServiceAllocator, GA and on since 1.33).

- A live ServiceCIDR gets the ``networking.k8s.io/service-cidr-finalizer`` finalizer and the condition
  ``Ready`` ``True`` with message ``Kubernetes Service CIDR is ready`` (no reason), applied with server-side
  apply on ``/status`` as field manager ``service-cidr-controller`` (forced). The default ServiceCIDR the
  API server creates with ``Kubernetes default Service CIDR is ready`` gets this message too, as on a
  cluster where kube-controller-manager runs.
- A ServiceCIDR being deleted keeps its finalizer while an IPAddress of kube's allocator (label
  ``ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io``, of the CIDR's family) lies in it and in no
  other ServiceCIDR, unless another ServiceCIDR contains each of its CIDRs (kube's ``canDeleteCIDR``); then
  the condition becomes ``Ready`` ``False``, reason ``Terminating``, ``There are still IPAddresses
  referencing the ServiceCIDR, please remove them or create a new ServiceCIDR``. Once nothing would be
  orphaned the finalizer goes, but not before 10 seconds after the deletion timestamp (kube's
  ``deletionGracePeriod``: the allocators must stop using the range first).
- A ServiceCIDR is looked at again when it changes, when a ServiceCIDR overlapping it is added, and when an
  allocator's IPAddress inside it is added or deleted.

kube re-applies the Ready condition (with a fresh ``lastTransitionTime``) on every sync; this loop applies it
only when the CIDR does not have that condition already, so its own status write does not queue it again.
The finalizer is written by a ``PUT`` of the cached object (its resourceVersion: a Conflict is retried from
the next cache state), not kube's strategic merge patch.
"""

from __future__ import annotations

import datetime
import ipaddress
import logging
from typing import Any

from services.controllers.client import ApiError, Client, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue, key_of
from services.controllers.objects import meta, now_text, parse_time, row

log = logging.getLogger(__name__)

FINALIZER = "networking.k8s.io/service-cidr-finalizer"  # ServiceCIDRProtectionFinalizer
FIELD_MANAGER = "service-cidr-controller"  # the controller's name, its apply field manager
DELETION_GRACE = 10.0  # seconds after deletionTimestamp before the finalizer may go (deletionGracePeriod)
READY_MESSAGE = "Kubernetes Service CIDR is ready"
TERMINATING_MESSAGE = ("There are still IPAddresses referencing the ServiceCIDR, please remove them or create a "
                       "new ServiceCIDR")
LABEL_IP_FAMILY = "ipaddress.kubernetes.io/ip-family"
LABEL_MANAGED_BY = "ipaddress.kubernetes.io/managed-by"
MANAGED_BY = "ipallocator.k8s.io"
APPLY_PATCH = "application/apply-patch+yaml"

SERVICE_CIDRS = row("networking.k8s.io", "servicecidrs")
IP_ADDRESSES = row("networking.k8s.io", "ipaddresses")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def networks(cidr: dict[str, Any] | None) -> list[Network]:
    """The parseable prefixes of a ServiceCIDR's ``spec.cidrs`` (an unparseable one is skipped, as kube's
    ``netip.ParsePrefix`` error is)."""
    out: list[Network] = []
    for text in ((cidr or {}).get("spec") or {}).get("cidrs") or []:
        try:
            out.append(ipaddress.ip_network(str(text), strict=False))
        except ValueError:
            continue
    return out


def _contains_prefix(outer: Network, inner: Network) -> bool:
    return outer.version == inner.version and inner.subnet_of(outer)  # type: ignore[arg-type]


def containing_prefix(cidrs: list[dict[str, Any]], prefix: Network) -> list[str]:
    """Names of the ServiceCIDRs with a CIDR that contains ``prefix`` (or equals it) (kube
    ``servicecidr.ContainsPrefix``)."""
    return [str(meta(c).get("name")) for c in cidrs if any(_contains_prefix(n, prefix) for n in networks(c))]


def containing_address(cidrs: list[dict[str, Any]], address: Address) -> list[str]:
    """Names of the ServiceCIDRs with a CIDR that contains ``address`` (kube ``servicecidr.ContainsAddress``)."""
    return [str(meta(c).get("name")) for c in cidrs if any(address in n for n in networks(c))]


def _overlaps(a: Network, b: Network) -> bool:
    return a.version == b.version and a.overlaps(b)  # type: ignore[arg-type]


def managed_address(ip: dict[str, Any] | None) -> Address | None:
    """The address an IPAddress of kube's allocator names (``managed-by: ipallocator.k8s.io``), else None."""
    if (meta(ip).get("labels") or {}).get(LABEL_MANAGED_BY) != MANAGED_BY:
        return None
    try:
        return ipaddress.ip_address(str(meta(ip).get("name")))
    except ValueError:
        return None


def can_delete(cidr: dict[str, Any], cidrs: list[dict[str, Any]], ips: list[dict[str, Any]]) -> bool:
    """kube's ``canDeleteCIDR``: True when every CIDR of ``cidr`` lies in another ServiceCIDR, or when no
    allocator IPAddress of the CIDR's family lies in ``cidr`` and in no other ServiceCIDR (``cidrs``: every
    ServiceCIDR, ``cidr`` included; ``ips``: every IPAddress)."""
    name = str(meta(cidr).get("name"))
    has_parent = True
    for prefix in networks(cidr):
        holders = containing_prefix(cidrs, prefix)
        if not holders or holders == [name]:
            has_parent = False
    if has_parent:
        return True
    for prefix in networks(cidr):
        family = "IPv6" if prefix.version == 6 else "IPv4"
        for ip in ips:
            address = managed_address(ip)
            if address is None or (meta(ip).get("labels") or {}).get(LABEL_IP_FAMILY) != family:
                continue
            if containing_address(cidrs, address) == [name]:
                return False
    return True


def ready_condition(cidr: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``Ready`` condition of a ServiceCIDR's status, or None."""
    for condition in ((cidr or {}).get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition
    return None


def _finalizers(obj: dict[str, Any]) -> list[str]:
    value = meta(obj).get("finalizers")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


class ServiceCIDRController:
    """The finalizer and Ready condition of every ServiceCIDR (see the module docstring)."""

    name = "service-cidr-controller"

    def __init__(self, ctx: Context, clock: Any = None):
        self.client: Client = ctx.client
        self.queue = WorkQueue(self.name)
        self.cidrs = ctx.informer(SERVICE_CIDRS)
        self.ips = ctx.informer(IP_ADDRESSES)
        self.clock = clock or (lambda: datetime.datetime.now(datetime.UTC))
        self.cidrs.on(add=self._added, update=lambda _o, n: self.queue.add(key_of(n)),
                      delete=lambda c: self.queue.add(key_of(c)))
        self.ips.on(add=self._address, delete=self._address)

    def _added(self, cidr: dict[str, Any]) -> None:
        """A new ServiceCIDR, and every ServiceCIDR it overlaps (it may unblock or block their deletion)."""
        self.queue.add(key_of(cidr))
        mine = networks(cidr)
        for other in self.cidrs.items():
            if any(_overlaps(a, b) for a in mine for b in networks(other)):
                self.queue.add(key_of(other))

    def _address(self, ip: dict[str, Any]) -> None:
        """An allocator IPAddress came or went: the ServiceCIDRs containing it."""
        address = managed_address(ip)
        if address is not None:
            for name in containing_address(self.cidrs.items(), address):
                self.queue.add(name)

    async def run(self) -> None:
        """Process ServiceCIDRs until cancelled."""
        await self.queue.run(self.sync)

    async def _apply_ready(self, name: str, status: str, reason: str, message: str) -> None:
        condition = {"type": "Ready", "status": status, "reason": reason, "message": message,
                     "lastTransitionTime": now_text(self.clock())}
        if not reason:
            del condition["reason"]
        body = {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR", "metadata": {"name": name},
                "status": {"conditions": [condition]}}
        try:
            await self.client.request("PATCH", path_for(SERVICE_CIDRS, "", name, "status"), body,
                                      params={"fieldManager": FIELD_MANAGER, "force": "true"},
                                      content_type=APPLY_PATCH)
        except ApiError as err:
            if err.code != 404:
                raise

    async def _write_finalizers(self, cidr: dict[str, Any], finalizers: list[str]) -> None:
        try:
            await self.client.update(path_for(SERVICE_CIDRS, "", str(meta(cidr).get("name"))),
                                     {**cidr, "metadata": {**meta(cidr), "finalizers": finalizers}})
        except ApiError as err:
            if err.code != 404:
                raise

    async def sync(self, key: str) -> None:
        """Reconcile ServiceCIDR ``key`` (its name): finalizer and Ready condition, or its deletion."""
        cidr = self.cidrs.get(key)
        if cidr is None:
            return
        ready = ready_condition(cidr) or {}
        if meta(cidr).get("deletionTimestamp"):
            if not can_delete(cidr, self.cidrs.items(), self.ips.items()):
                if (ready.get("status"), ready.get("reason"), ready.get("message")) != \
                        ("False", "Terminating", TERMINATING_MESSAGE):
                    await self._apply_ready(key, "False", "Terminating", TERMINATING_MESSAGE)
                return
            deleted_at = parse_time(str(meta(cidr).get("deletionTimestamp")))
            if deleted_at is not None:
                wait = DELETION_GRACE - (self.clock() - deleted_at).total_seconds()
                if wait > 0:
                    self.queue.add_after(key, wait)
                    return
            if FINALIZER in _finalizers(cidr):
                await self._write_finalizers(cidr, [f for f in _finalizers(cidr) if f != FINALIZER])
                log.info("removed protection finalizer from ServiceCIDR %s", key)
            return
        if FINALIZER not in _finalizers(cidr):
            await self._write_finalizers(cidr, [*_finalizers(cidr), FINALIZER])
        if (ready.get("status"), ready.get("message")) != ("True", READY_MESSAGE):
            await self._apply_ready(key, "True", "", READY_MESSAGE)
