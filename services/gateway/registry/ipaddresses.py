"""The networking.k8s.io/v1 IPAddress objects that mirror Service clusterIP allocations, and the default ServiceCIDR.

kube-apiserver 1.33+ (MultiCIDRServiceAllocator, GA) allocates clusterIPs by
creating one IPAddress per IP (``pkg/registry/core/service/ipallocator/ipallocator.go``):
named by the IP, labelled ``ipaddress.kubernetes.io/ip-family`` (IPv4 or IPv6)
and ``ipaddress.kubernetes.io/managed-by: ipallocator.k8s.io``, with
``spec.parentRef`` ``{group: "", resource: services, namespace, name}``, and
deletes it when the IP is released. The ``kubernetes`` ServiceCIDR holding
``--service-cluster-ip-range`` is created at start with condition Ready True
(``pkg/controlplane/controller/defaultservicecidr``).

kapi keeps the range bitmap of :mod:`services.gateway.registry.ipallocator`
for the flag's range and writes the IPAddress objects beside it, after the
Service write landed; a failure to write one is logged, never fails the
Service write (kube's repair loop would re-create it; kapi has none yet,
docs/kube-parity.md). The IPAddress objects are consulted too: one that
exists (created by hand, say) makes its IP allocated (:func:`exists`), and
an IP of another Ready ServiceCIDR (:func:`ready_cidrs`) is allocated by
creating its IPAddress before the write, as kube does (:func:`reserve`).
"""

from __future__ import annotations

import ipaddress
import logging
import uuid
from datetime import UTC, datetime
from typing import Any

from kapi import errors, grpcutil, jsonutil
from kapi.kinds.networking import GROUP, SERVICE_CIDR_READY
from kapi_proto.kapi.storage.v1 import storage_pb2

log = logging.getLogger(__name__)

LABEL_IP_FAMILY = "ipaddress.kubernetes.io/ip-family"
LABEL_MANAGED_BY = "ipaddress.kubernetes.io/managed-by"
MANAGED_BY = "ipallocator.k8s.io"  # ipallocator.ControllerName
DEFAULT_SERVICE_CIDR = "kubernetes"  # defaultservicecidr.DefaultServiceCIDRName
READY_MESSAGE = "Kubernetes default Service CIDR is ready"


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _key(name: str, resource: str = "ipaddresses") -> storage_pb2.ResourceKey:
    return storage_pb2.ResourceKey(group=GROUP, resource=resource, name=name)


def ip_address_object(ip: str, namespace: str, name: str, now: str | None = None) -> dict[str, Any]:
    """The IPAddress kube's allocator creates for Service ``namespace/name`` holding ``ip`` (a canonical IP)."""
    family = "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    return {"apiVersion": f"{GROUP}/v1", "kind": "IPAddress",
            "metadata": {"name": ip, "uid": str(uuid.uuid4()), "creationTimestamp": now or _now(),
                         "labels": {LABEL_IP_FAMILY: family, LABEL_MANAGED_BY: MANAGED_BY}},
            "spec": {"parentRef": {"group": "", "resource": "services", "namespace": namespace, "name": name}}}


def default_service_cidr(cidr: str, now: str | None = None) -> dict[str, Any]:
    """The ``kubernetes`` ServiceCIDR for the flag's range, with the Ready condition the default ServiceCIDR
    controller applies (status True, its message, no reason)."""
    stamp = now or _now()
    return {"apiVersion": f"{GROUP}/v1", "kind": "ServiceCIDR",
            "metadata": {"name": DEFAULT_SERVICE_CIDR, "uid": str(uuid.uuid4()), "creationTimestamp": stamp},
            "spec": {"cidrs": [cidr]},
            "status": {"conditions": [{"type": SERVICE_CIDR_READY, "status": "True", "lastTransitionTime": stamp,
                                       "reason": "", "message": READY_MESSAGE}]}}


async def sync_default_service_cidr(storage: Any, cidrs: list[str], reported: set[str], timeout: float,
                                    now: str | None = None) -> str:
    """One status sync of an existing default ServiceCIDR, as kube's default ServiceCIDR controller's syncStatus
    (``default_servicecidr_controller.go``, every 10 s); returns what it found, for the caller and tests:

    - ``absent``: no ``kubernetes`` ServiceCIDR (the caller creates it);
    - ``deleting``: being deleted, left to the service-cidr-controller;
    - ``inconsistent``: ``spec.cidrs`` differs from ``cidrs`` (the flags); reported once (logged, ``reported``
      gains ``inconsistent``), the status untouched;
    - ``not-ready``: condition ``Ready`` ``False``; reported once (``reported`` gains ``not-ready``), not
      overwritten;
    - ``ready``: ``Ready`` ``True``, nothing to do;
    - ``applied``: no ``Ready`` condition, or an ``Unknown`` one: ``Ready`` ``True`` with message ``Kubernetes
      default Service CIDR is ready`` and a fresh ``lastTransitionTime`` is written (an existing condition keeps
      its other fields, as kube's forced apply of those four fields does), conditional on the revision read.

    Raises the storage's StatusError (a Conflict when the object moved on: the next sync retries)."""
    try:
        reply: Any = await grpcutil.call("storage", storage.Get, storage_pb2.GetRequest(
            key=_key(DEFAULT_SERVICE_CIDR, "servicecidrs")), timeout=timeout)
    except errors.StatusError as err:
        if err.reason == "NotFound":
            return "absent"
        raise
    obj = jsonutil.loads(reply.object)
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "deleting"
    spec_cidrs = (obj.get("spec") or {}).get("cidrs") or []
    if spec_cidrs != cidrs:
        if "inconsistent" not in reported:
            log.warning("KubernetesDefaultServiceCIDRInconsistent: The default ServiceCIDR [%s] does not match the "
                        "controller flag configurations [%s]", " ".join(spec_cidrs), " ".join(cidrs))
            reported.add("inconsistent")
        return "inconsistent"
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    conditions = [c for c in status.get("conditions") or () if isinstance(c, dict)]
    ready = next((c for c in conditions if c.get("type") == SERVICE_CIDR_READY), None)
    if ready is not None and ready.get("status") == "False":
        if "not-ready" not in reported:
            log.warning("%s: Configuration matches, but %s", ready.get("reason", ""), ready.get("message", ""))
            reported.add("not-ready")
        return "not-ready"
    if ready is not None and ready.get("status") == "True":
        return "ready"
    applied = {"type": SERVICE_CIDR_READY, "status": "True", "lastTransitionTime": now or _now(), "reason": "",
               "message": READY_MESSAGE}
    if ready is None:
        conditions.append(applied)
    else:
        ready.update({k: v for k, v in applied.items() if k != "reason"})
    obj["status"] = {**status, "conditions": conditions}
    await grpcutil.call("storage", storage.Update, storage_pb2.UpdateRequest(
        key=_key(DEFAULT_SERVICE_CIDR, "servicecidrs"), object=jsonutil.dumps(obj),
        expected_resource_version=int(reply.resource_version)), timeout=timeout)
    return "applied"


def cluster_ips(svc: dict[str, Any]) -> list[str]:
    """The allocated clusterIPs of a Service (``spec.clusterIPs``, else ``spec.clusterIP``; not ``None``)."""
    spec: dict[str, Any] = svc["spec"] if isinstance(svc.get("spec"), dict) else {}
    ips = spec.get("clusterIPs") or ([spec["clusterIP"]] if spec.get("clusterIP") else [])
    return [ip for ip in ips if isinstance(ip, str) and ip and ip != "None"]


async def exists(storage: Any, ip: str, timeout: float) -> bool:
    """Whether an IPAddress named ``ip`` is stored (one GET of ``/registry/networking.k8s.io/ipaddresses/<ip>``).

    kube's allocator treats any IPAddress of that name as the allocation (``ipallocator.go`` createIPAddress:
    AlreadyExists is ErrAllocated; allocateFromRange skips names its lister has). Raises the storage's
    StatusError for anything but NotFound."""
    try:
        await grpcutil.call("storage", storage.Get, storage_pb2.GetRequest(key=_key(ip)), timeout=timeout)
    except errors.StatusError as err:
        if err.reason == "NotFound":
            return False
        raise
    return True


def is_ready(cidr: dict[str, Any]) -> bool:
    """kube's MetaAllocator readiness of a ServiceCIDR (``cidrallocator.go`` isReady and syncAllocators): not
    being deleted, and its ``Ready`` condition ``True``, or no ``Ready`` condition at all (kube assumes Ready
    when kube-controller-manager has not run)."""
    if (cidr.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for cond in (cidr.get("status") or {}).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == SERVICE_CIDR_READY:
            return bool(cond.get("status") == "True")
    return True


async def ready_cidrs(storage: Any, timeout: float) -> list[str]:
    """The CIDRs (``spec.cidrs`` strings, in storage order) of every Ready ServiceCIDR (:func:`is_ready`): the
    ranges kube's MetaAllocator allocates from. One LIST of ``servicecidrs``; raises the storage's StatusError."""
    listed: Any = await grpcutil.call("storage", storage.List, storage_pb2.ListRequest(
        key=_key("", "servicecidrs")), timeout=timeout)
    out: list[str] = []
    for raw in listed.items:
        obj = jsonutil.loads(raw)
        if is_ready(obj):
            out.extend(c for c in (obj.get("spec") or {}).get("cidrs") or () if isinstance(c, str))
    return out


async def reserve(storage: Any, ip: str, namespace: str, name: str, timeout: float) -> None:
    """Allocate ``ip`` to Service ``namespace/name`` by creating its IPAddress, as kube's allocator does
    (``ipallocator.go`` createIPAddress). Raises ``ValueError("provided IP is already allocated")`` when an
    IPAddress of that name exists (ErrAllocated), the storage's StatusError otherwise."""
    try:
        await grpcutil.call("storage", storage.Create, storage_pb2.CreateRequest(
            key=_key(ip), object=jsonutil.dumps(ip_address_object(ip, namespace, name))), timeout=timeout)
    except errors.StatusError as err:
        if err.reason == "AlreadyExists":
            raise ValueError("provided IP is already allocated") from None
        raise


async def create(storage: Any, ip: str, namespace: str, name: str, timeout: float) -> bool:
    """Store the IPAddress of ``ip`` for Service ``namespace/name``; False (logged) when it could not be written
    (an object of that name already exists, storage unavailable). Never raises a StatusError."""
    try:
        await grpcutil.call("storage", storage.Create, storage_pb2.CreateRequest(
            key=_key(ip), object=jsonutil.dumps(ip_address_object(ip, namespace, name))), timeout=timeout)
        return True
    except errors.StatusError as err:
        log.warning("IPAddress %s for service %s/%s not written: %s", ip, namespace, name, err.message)
        return False


async def delete(storage: Any, ip: str, namespace: str, name: str, timeout: float) -> bool:
    """Delete the IPAddress of ``ip`` if it is the one of Service ``namespace/name`` (parentRef and the
    managed-by label match; conditional on its uid); False when absent, someone else's, or not deleted (logged).
    Never raises a StatusError."""
    try:
        reply: Any = await grpcutil.call("storage", storage.Get, storage_pb2.GetRequest(key=_key(ip)),
                                         timeout=timeout)
        obj = jsonutil.loads(reply.object)
        meta = obj.get("metadata") or {}
        ref = (obj.get("spec") or {}).get("parentRef") or {}
        if ((meta.get("labels") or {}).get(LABEL_MANAGED_BY) != MANAGED_BY or ref.get("group") not in ("", None)
                or ref.get("resource") != "services" or ref.get("namespace") != namespace
                or ref.get("name") != name):
            return False
        await grpcutil.call("storage", storage.Delete, storage_pb2.DeleteRequest(
            key=_key(ip), expected_uid=str(meta.get("uid") or "")), timeout=timeout)
        return True
    except errors.StatusError as err:
        if err.reason != "NotFound":
            log.warning("IPAddress %s of service %s/%s not deleted: %s", ip, namespace, name, err.message)
        return False
