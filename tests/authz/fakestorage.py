"""An in-memory stand-in for the storage *service* (not etcd) to drive the policy sync through failures.

It implements the parts of ``kapi.storage.v1.Storage`` the authz service
uses (Create, List, Watch) with the storage semantics the sync relies on:
one global revision, lists read at a revision, watches from a revision,
410 Expired, UNAVAILABLE. Tests can make it refuse calls or cut watches.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import grpc

from kapi import errors, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc


class FakeStorage(storage_pb2_grpc.StorageServicer):
    def __init__(self) -> None:
        self.revision = 1
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.history: list[tuple[int, str, str, dict[str, Any]]] = []
        self.changed = asyncio.Condition()
        self.generation = 0  # bumped to cut every open watch
        self.lists: Counter[str] = Counter()
        self.watches: Counter[str] = Counter()
        self.open_watches: Counter[str] = Counter()
        self.fail_lists = 0  # this many List calls answer 503
        self.fail_creates = 0  # this many Create calls answer 503
        self.expire_watches = 0  # this many Watch calls answer 410
        self.updates = 0

    # ---------------------------------------------------------------- test helpers

    async def put(self, resource: str, obj: dict[str, Any]) -> int:
        meta = obj.setdefault("metadata", {})
        key = (resource, meta.get("namespace", ""), meta["name"])
        event = "MODIFIED" if key in self.objects else "ADDED"
        return await self._record(resource, key, event, obj)

    async def delete(self, resource: str, namespace: str, name: str) -> int:
        key = (resource, namespace, name)
        obj = self.objects.pop(key)
        return await self._record(resource, key, "DELETED", obj, store=False)

    async def cut_watches(self) -> None:
        async with self.changed:
            self.generation += 1
            self.changed.notify_all()

    async def _record(self, resource: str, key: tuple[str, str, str], event: str, obj: dict[str, Any],
                      store: bool = True) -> int:
        async with self.changed:
            self.revision += 1
            obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self.revision)}}
            if store:
                self.objects[key] = obj
            self.history.append((self.revision, resource, event, obj))
            self.changed.notify_all()
            return self.revision

    # ---------------------------------------------------------------- RPCs

    async def Create(self, request: storage_pb2.CreateRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        if self.fail_creates > 0:
            self.fail_creates -= 1
            await errors.abort(context, errors.unavailable("storage is warming up"))
        key = (request.key.resource, request.key.namespace, request.key.name)
        if key in self.objects:
            await errors.abort(context, errors.already_exists(request.key.resource, request.key.name,
                                                              request.key.group))
        revision = await self.put(request.key.resource, jsonutil.loads(request.object))
        return storage_pb2.ObjectResponse(object=jsonutil.dumps(self.objects[key]), resource_version=revision)

    async def Get(self, request: storage_pb2.GetRequest,  # noqa: N802
                  context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        key = (request.key.resource, request.key.namespace, request.key.name)
        if key not in self.objects:
            await errors.abort(context, errors.not_found(request.key.resource, request.key.name, request.key.group))
        obj = self.objects[key]
        return storage_pb2.ObjectResponse(object=jsonutil.dumps(obj),
                                          resource_version=int(obj["metadata"]["resourceVersion"]))

    async def Update(self, request: storage_pb2.UpdateRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        self.updates += 1
        key = (request.key.resource, request.key.namespace, request.key.name)
        if key not in self.objects:
            await errors.abort(context, errors.not_found(request.key.resource, request.key.name, request.key.group))
        stored = int(self.objects[key]["metadata"]["resourceVersion"])
        if request.expected_resource_version and request.expected_resource_version != stored:
            await errors.abort(context, errors.conflict(request.key.resource, request.key.name, "modified",
                                                        request.key.group))
        revision = await self.put(request.key.resource, jsonutil.loads(request.object))
        return storage_pb2.ObjectResponse(object=jsonutil.dumps(self.objects[key]), resource_version=revision)

    async def Delete(self, request: storage_pb2.DeleteRequest,  # noqa: N802
                     context: grpc.aio.ServicerContext) -> storage_pb2.ObjectResponse:
        key = (request.key.resource, request.key.namespace, request.key.name)
        if key not in self.objects:
            await errors.abort(context, errors.not_found(request.key.resource, request.key.name, request.key.group))
        obj = self.objects[key]
        await self.delete(*key)
        return storage_pb2.ObjectResponse(object=jsonutil.dumps(obj))

    async def List(self, request: storage_pb2.ListRequest,  # noqa: N802
                   context: grpc.aio.ServicerContext) -> storage_pb2.ListResponse:
        self.lists[request.key.resource] += 1
        if self.fail_lists > 0:
            self.fail_lists -= 1
            await errors.abort(context, errors.unavailable("storage is warming up"))
        items = [jsonutil.dumps(o) for (r, ns, _), o in sorted(self.objects.items())
                 if r == request.key.resource and (not request.key.namespace or ns == request.key.namespace)]
        return storage_pb2.ListResponse(items=items, resource_version=self.revision)

    async def Watch(self, request: storage_pb2.WatchRequest,  # noqa: N802
                    context: grpc.aio.ServicerContext):
        self.watches[request.key.resource] += 1
        if self.expire_watches > 0:
            self.expire_watches -= 1
            await errors.abort(context, errors.expired(f"too old resource version: {request.resource_version}"))
        after = int(request.resource_version or self.revision)
        generation = self.generation
        self.open_watches[request.key.resource] += 1
        try:
            while True:
                async with self.changed:
                    await self.changed.wait_for(
                        lambda after=after: self.generation != generation or self._last_revision() > after)
                    if self.generation != generation:
                        await errors.abort(context, errors.unavailable("watch cut"))
                    events = [storage_pb2.WatchEvent(type=t, object=jsonutil.dumps(o), resource_version=rev)
                              for rev, r, t, o in self.history if rev > after and r == request.key.resource]
                    after = self.history[-1][0]
                if events:
                    yield storage_pb2.WatchResponse(events=events)
        finally:
            self.open_watches[request.key.resource] -= 1

    def _last_revision(self) -> int:
        return self.history[-1][0] if self.history else 0

    def all_watching(self) -> bool:
        return len(+self.open_watches) == 4
