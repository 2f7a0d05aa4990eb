"""Helpers for storage tests: names, keys, objects, and failed RPCs as StatusErrors."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable
from typing import Any

import grpc

from kapi import errors, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc


def unique(prefix: str = "t") -> str:
    """A fresh DNS-label-like name, so tests sharing the etcd never collide."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def key(namespace: str = "", name: str = "", resource: str = "configmaps", group: str = "") -> storage_pb2.ResourceKey:
    """A ResourceKey (core configmaps by default)."""
    return storage_pb2.ResourceKey(group=group, resource=resource, namespace=namespace, name=name)


def configmap(namespace: str, name: str, labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    """A ConfigMap object as a dict."""
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data)}


async def create(stub: storage_pb2_grpc.StorageStub, obj: dict[str, Any], resource: str = "configmaps",
                 group: str = "") -> dict[str, Any]:
    """Create ``obj`` (namespace/name from its metadata); returns the stored object."""
    meta = obj["metadata"]
    response = await stub.Create(storage_pb2.CreateRequest(
        key=key(meta.get("namespace", ""), meta["name"], resource, group), object=jsonutil.dumps(obj)), timeout=10)
    return jsonutil.loads(response.object)


async def status_of(call: Awaitable[Any]) -> errors.StatusError:
    """Await a call that must fail; returns its Status as a StatusError (AssertionError if it succeeded)."""
    try:
        await call
    except grpc.aio.AioRpcError as exc:
        return errors.from_rpc_error(exc, "storage")
    raise AssertionError("the call succeeded")
