"""Storage watches with sendInitialEvents given explicitly, cached (configmaps) and not (secrets), as kube's cacher.

- ``sendInitialEvents=false`` with resourceVersion "" or "0" sends no initial state: it watches from etcd's
  current revision ("") or the cache's ("0": "start watching from Any resourceVersion"; cacher.go
  getWatchCacheResourceVersion, watch_cache.go getAllEventsSinceLocked).
- ``sendInitialEvents=true`` at a revision not reached yet waits (FRESH_TIMEOUT) and then fails with 504
  ``Too large resource version``, sending no event first (waitUntilWatchCacheFreshAndForceAllEvents).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from kapi_proto.kapi.storage.v1 import storage_pb2

from .helpers import configmap, create, key, status_of, unique
from .test_watch import Watcher, rv_of, update
from .test_watchcache import small

pytestmark = pytest.mark.timeout(60)

__all__ = ["small"]  # the module-scoped storage server of test_watchcache (configmaps cached, secrets not)


def _secret(namespace: str, name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace,
                                                               "uid": f"uid-{name}"}, "stringData": dict(data)}


@pytest.mark.parametrize("resource", ["configmaps", "secrets"])
@pytest.mark.parametrize("resource_version", ["", "0"])
async def test_send_initial_events_false_watches_from_now(small: Any, resource: str, resource_version: str) -> None:
    _, stub = small
    ns = unique("wlist")
    make = configmap if resource == "configmaps" else _secret
    await create(stub, make(ns, "a"), resource=resource)
    await rv_of(stub, ns)  # the configmaps cache has the object
    watcher = Watcher(stub, key(ns, resource=resource), resource_version=resource_version,
                      skip_initial_events=True, allow_bookmarks=True)
    await asyncio.sleep(0.3)  # the watch has started (no initial ADDED of "a" must precede the change below)
    changed = await update(stub, make(ns, "a", x="1")) if resource == "configmaps" else None
    if changed is None:
        created = await create(stub, make(ns, "b"), resource=resource)
        expected = [("ADDED", "b", int(created["metadata"]["resourceVersion"]))]
    else:
        expected = [("MODIFIED", "a", changed)]
    assert await watcher.events(1) == expected
    watcher.cancel()


@pytest.mark.parametrize("resource", ["configmaps", "secrets"])
async def test_send_initial_events_at_a_future_revision_is_too_large(small: Any, resource: str) -> None:
    service, stub = small
    ns = unique("wlist")
    await create(stub, configmap(ns, "a"))
    future = await rv_of(stub, ns) + 1000
    started = time.monotonic()
    call = stub.Watch(storage_pb2.WatchRequest(key=key(ns, resource=resource), resource_version=str(future),
                                               send_initial_events=True, allow_bookmarks=True))
    err = await status_of(call.read())  # the first read fails: no initial event came before the error
    elapsed = time.monotonic() - started
    assert (err.code, err.reason) == (504, "Timeout")
    assert err.message.startswith(f"Timeout: Too large resource version: {future}, current: ")
    if resource == "configmaps":  # the cached resource waited for its cache first
        assert elapsed >= service.store.fresh_timeout * 0.9
