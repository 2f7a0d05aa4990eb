"""Objects as stored: JSON without ``metadata.resourceVersion``; as served: with it (the etcd revision).

kube-apiserver's etcd3 store never persists resourceVersion; its versioner
sets it from the etcd mod revision on every object it returns
(k8s.io/apiserver pkg/storage/etcd3, APIObjectVersioner).
"""

from __future__ import annotations

from typing import Any

from kapi import errors, jsonutil

Object = dict[str, Any]


def without_resource_version(obj: Object) -> Object:
    """``obj`` minus ``metadata.resourceVersion`` (a shallow copy when it had one).

    Raises 400 BadRequest if ``obj`` or its metadata is not a JSON object.
    """
    if not isinstance(obj, dict):
        raise errors.bad_request("the object must be a JSON object")
    meta = obj.get("metadata")
    if meta is None:
        return obj
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be a JSON object")
    if "resourceVersion" not in meta:
        return obj
    meta = dict(meta)
    del meta["resourceVersion"]
    return {**obj, "metadata": meta}


def stamped(obj: Object, revision: int) -> Object:
    """A shallow copy of ``obj`` with ``metadata.resourceVersion`` = ``revision`` (decimal string)."""
    meta = obj.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta["resourceVersion"] = str(revision)
    return {**obj, "metadata": meta}


def decode(value: bytes, revision: int, key: bytes) -> Object:
    """The stored JSON ``value`` of etcd ``key`` as an object with resourceVersion ``revision``.

    Raises 500 InternalError if the stored value is not a JSON object.
    """
    try:
        obj = jsonutil.loads(value)
    except ValueError:
        raise errors.internal(f"the object stored at {key.decode(errors='replace')} is not JSON") from None
    if not isinstance(obj, dict):
        raise errors.internal(f"the object stored at {key.decode(errors='replace')} is not a JSON object")
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    meta["resourceVersion"] = str(revision)
    return obj
