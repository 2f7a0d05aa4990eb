"""Resolve a Service reference to one ready endpoint address, as kube-apiserver's service resolver does.

Used for calls the gateway makes to in-cluster servers named by a Service
(aggregated APIServices, CRD conversion webhooks): kube-apiserver dials an
endpoint of the Service rather than its DNS name, and verifies TLS against
``<name>.<namespace>.svc``.
"""

from __future__ import annotations

from typing import Any

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2


async def resolve(storage: Any, namespace: str, name: str, port: int, timeout: float) -> tuple[str, int]:
    """(host, port) of a ready endpoint serving ``port`` of Service ``namespace/name``.

    ``port`` is the Service port (e.g. 443); its targetPort or named port is
    mapped through the Endpoints. Raises 503 ServiceUnavailable when the
    Service, its Endpoints or a ready address is missing.
    """

    async def get(resource: str) -> dict[str, Any]:
        try:
            reply: Any = await grpcutil.call("storage", storage.Get, storage_pb2.GetRequest(
                key=storage_pb2.ResourceKey(resource=resource, namespace=namespace, name=name)), timeout=timeout)
        except errors.StatusError as err:
            if err.code == 404:
                what = "service" if resource == "services" else "endpoints for service"
                raise errors.unavailable(f'{what} "{namespace}/{name}" not found') from None
            raise
        return dict(jsonutil.loads(reply.object))

    service, endpoints = await get("services"), await get("endpoints")
    target_port, port_name = port, None
    for p in (service.get("spec") or {}).get("ports") or []:
        if p.get("port") == port:
            target_port = p.get("targetPort") if isinstance(p.get("targetPort"), int) else port
            port_name = p.get("name")
            break
    for subset in endpoints.get("subsets") or []:
        ports = subset.get("ports") or []
        chosen = next((p.get("port") for p in ports if port_name and p.get("name") == port_name), None)
        chosen = chosen or (ports[0].get("port") if len(ports) == 1 else target_port)
        for address in subset.get("addresses") or []:
            if address.get("ip"):
                return str(address["ip"]), int(chosen)
    raise errors.unavailable(f'no endpoints available for service "{namespace}/{name}"')
