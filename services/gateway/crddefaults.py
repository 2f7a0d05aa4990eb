"""Custom resources read back defaulted: the CRD version's schema ``default``s on every object read from storage.

kube-apiserver defaults a custom resource not only on requests (here:
admission, services.admission.crd_schema) but "when reading from etcd using
the storage version defaults" and after conversion with the requested
version's ("Extend the Kubernetes API with CustomResourceDefinitions" >
"Defaulting"). So an object stored before a default was added to the CRD, or
whose ``status`` the status subresource dropped on create (Gateway API's
GatewayClass defaults ``status.conditions`` to Accepted=Unknown), reads back
with the defaults, without any write. :class:`DefaultingStorage` wraps the
storage stub for one request (outside :class:`services.gateway.conversion.ConvertingStorage`,
so the objects are at the served version; for several versions also inside it, with the storage
version's defaults, as kube reads from etcd) and defaults the object of every
Get/Create/Update/Delete reply, every List item and every watch event's
object with :func:`kapi.crd.defaults.default`. CRD versions whose schema has no
``default`` anywhere are not wrapped (:func:`schema_with_defaults`, cached per schema).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kapi import crd, jsonutil
from kapi.crd import defaults as crddefaults
from kapi.resources import Resource

_CACHE_LIMIT = 1024  # schemas remembered by schema_with_defaults
_has_defaults: dict[int, tuple[dict[str, Any], bool]] = {}  # id(schema) -> (schema kept alive, has a default)


def schema_with_defaults(definition: dict[str, Any], version: str) -> dict[str, Any] | None:
    """``openAPIV3Schema`` of ``version`` of a CRD when it has some ``default`` to apply, else None.

    The walk is done once per schema object (the informer's CRD dicts are replaced, not mutated, on change).
    """
    sch = crd.schema(definition, version)
    if sch is None:
        return None
    cached = _has_defaults.get(id(sch))
    if cached is None or cached[0] is not sch:
        if len(_has_defaults) >= _CACHE_LIMIT:
            _has_defaults.clear()
        cached = (sch, crddefaults.has_defaults(sch))
        _has_defaults[id(sch)] = cached
    return sch if cached[1] else None


def default_bytes(data: bytes, sch: dict[str, Any]) -> bytes:
    """One stored JSON object with ``sch``'s defaults applied (undecodable or non-object bytes unchanged)."""
    try:
        obj = jsonutil.loads(data)
    except ValueError:
        return data
    if not isinstance(obj, dict):
        return data
    crddefaults.default(obj, sch)
    return jsonutil.dumps(obj)


class _DefaultingWatch:
    """A storage Watch call whose events' objects are defaulted."""

    def __init__(self, call: Any, sch: dict[str, Any]):
        self._call, self._schema = call, sch

    def __aiter__(self) -> _DefaultingWatch:
        self._stream = self._call.__aiter__()
        return self

    async def __anext__(self) -> Any:
        batch = await self._stream.__anext__()
        for event in batch.events:
            if event.object and event.type != "BOOKMARK":
                event.object = default_bytes(event.object, self._schema)
        return batch

    def cancel(self) -> bool:
        return bool(self._call.cancel())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


class DefaultingStorage:
    """The storage stub with every returned custom resource defaulted by the served version's schema.

    Unary methods take and return the storage protos like the stub's; ``Watch``
    returns a call object that iterates defaulted batches and can be cancelled.
    Request objects pass through unchanged (admission already defaulted them).
    """

    def __init__(self, storage: Any, sch: dict[str, Any], resource: Resource):
        self._storage, self._schema = storage, sch
        self._resource = (resource.group, resource.resource)

    def _mine(self, request: Any) -> bool:
        """Whether ``request`` reads this custom resource (a conversion webhook's Service lookup does not)."""
        return (request.key.group, request.key.resource) == self._resource

    def _out(self, request: Any, reply: Any) -> Any:
        if reply.object and self._mine(request):
            reply.object = default_bytes(reply.object, self._schema)
        return reply

    async def Create(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802 - the stub's name
        """Create; the stored object defaulted."""
        return self._out(request, await self._storage.Create(request, **kwargs))

    async def Update(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """Update; the stored object defaulted."""
        return self._out(request, await self._storage.Update(request, **kwargs))

    async def Get(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """Get; the object defaulted."""
        return self._out(request, await self._storage.Get(request, **kwargs))

    async def Delete(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """Delete; the last state defaulted."""
        return self._out(request, await self._storage.Delete(request, **kwargs))

    async def List(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """List; every item defaulted."""
        reply = await self._storage.List(request, **kwargs)
        if reply.items and self._mine(request):
            items = [default_bytes(item, self._schema) for item in reply.items]
            del reply.items[:]
            reply.items.extend(items)
        return reply

    def Watch(self, request: Any, **kwargs: Any) -> _DefaultingWatch:  # noqa: N802
        """Watch; every event's object defaulted."""
        call = self._storage.Watch(request, **kwargs)
        return _DefaultingWatch(call, self._schema) if self._mine(request) else call

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)


def with_defaults(backends: Any, definition: dict[str, Any] | None, resource: Resource) -> Any:
    """``backends`` with a :class:`DefaultingStorage` when ``resource``'s CRD version has schema defaults.

    ``backends.storage`` may already convert (it is wrapped, so defaults apply after conversion);
    services.gateway.conversion also wraps the raw storage with the storage version's defaults before converting.
    Built-in resources (``definition`` None) and CRD versions without defaults get ``backends`` unchanged.
    """
    sch = schema_with_defaults(definition, resource.version) if definition is not None else None
    if sch is None:
        return backends
    return dataclasses.replace(backends, storage=DefaultingStorage(backends.storage, sch, resource))
