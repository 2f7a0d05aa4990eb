"""Objects as stored: JSON without ``metadata.resourceVersion``; as served: with it (the etcd revision).

kube-apiserver's etcd3 store never persists resourceVersion; its versioner
sets it from the etcd mod revision on every object it returns
(k8s.io/apiserver pkg/storage/etcd3, APIObjectVersioner).

Every object is written in kube's key order (:func:`kapi.k8sproto.goorder.wire_order`: Go struct order for
built-in kinds, sorted keys for custom resources), and resourceVersion is put back where kube's encoder
writes it (:func:`kapi.k8sproto.goorder.with_resource_version`), so gets, lists and watches answer in it.
"""

from __future__ import annotations

from typing import Any

from kapi import errors, jsonutil
from kapi.k8sproto.goorder import is_unstructured, wire_order, with_resource_version

Object = dict[str, Any]


def without_resource_version(obj: Object) -> Object:
    """``obj`` as it is stored: minus ``metadata.resourceVersion``, in kube's key order (:func:`wire_order`; a
    new dict, nested values shared where their order already is kube's).

    Raises 400 BadRequest if ``obj`` or its metadata is not a JSON object.
    """
    if not isinstance(obj, dict):
        raise errors.bad_request("the object must be a JSON object")
    meta = obj.get("metadata")
    if meta is not None and not isinstance(meta, dict):
        raise errors.bad_request("metadata must be a JSON object")
    if meta is not None and "resourceVersion" in meta:
        meta = dict(meta)
        del meta["resourceVersion"]
        obj = {**obj, "metadata": meta}
    return wire_order(obj)


def stamped(obj: Object, revision: int) -> Object:
    """A shallow copy of ``obj`` with ``metadata.resourceVersion`` = ``revision`` (decimal string), placed where
    kube's encoder writes it (:func:`with_resource_version`)."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    return {**obj, "metadata": with_resource_version(meta, str(revision), is_unstructured(obj))}


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
    obj["metadata"] = with_resource_version(meta if isinstance(meta, dict) else {}, str(revision),
                                            is_unstructured(obj))
    return obj
