"""etcd events -> Kubernetes watch events (k8s.io/apiserver pkg/storage/etcd3/watcher.go).

A PUT whose create revision equals its mod revision is ADDED, any other PUT
MODIFIED, a DELETE is DELETED carrying the previous value with
resourceVersion = the deletion revision. With selectors, an object that
stops matching becomes DELETED (its last matching state) and one that starts
matching becomes ADDED. BOOKMARK events carry only
``metadata.resourceVersion`` (no kind: the gateway knows the resource).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kapi_proto.etcd import rpc_pb2
from services.storage.objects import Object, decode

ADDED, MODIFIED, DELETED, BOOKMARK = "ADDED", "MODIFIED", "DELETED", "BOOKMARK"
INITIAL_EVENTS_END_ANNOTATION = "k8s.io/initial-events-end"

Matcher = Callable[[Object], bool]


@dataclass(frozen=True)
class WatchEvent:
    """One watch event: ``type`` (ADDED/MODIFIED/DELETED/BOOKMARK), the object, and its resourceVersion;
    ``encoded`` is the object's JSON when already known (the watch cache encodes each object once)."""

    type: str
    object: Object
    resource_version: int
    encoded: bytes | None = None


def bookmark(revision: int, initial_events_end: bool = False) -> WatchEvent:
    """A BOOKMARK at ``revision``; ``initial_events_end`` adds the ``k8s.io/initial-events-end: "true"`` annotation
    that ends a sendInitialEvents stream (KEP-3157)."""
    meta: Object = {"resourceVersion": str(revision)}
    if initial_events_end:
        meta["annotations"] = {INITIAL_EVENTS_END_ANNOTATION: "true"}
    return WatchEvent(BOOKMARK, {"metadata": meta}, revision)


def convert(event: rpc_pb2.Event, matches: Matcher | None) -> WatchEvent | None:
    """One etcd event (watched with prev_kv) -> a watch event, or None if the selector hides it.

    ``matches`` is the selector predicate (None = everything).
    """
    kv = event.kv
    revision = kv.mod_revision
    has_prev = event.HasField("prev_kv")
    if event.type == rpc_pb2.Event.DELETE:
        if has_prev:
            last = decode(event.prev_kv.value, revision, kv.key)
        else:  # prev_kv unavailable: name the object at least
            last = {"metadata": {"name": kv.key.rsplit(b"/", 1)[-1].decode(errors="replace"),
                                 "resourceVersion": str(revision)}}
        if matches is not None and not matches(last):
            return None
        return WatchEvent(DELETED, last, revision)
    current = decode(kv.value, revision, kv.key)
    if matches is None:
        return WatchEvent(ADDED if kv.create_revision == revision else MODIFIED, current, revision)
    previous: Object | None = None
    if has_prev and kv.create_revision != revision:
        previous = decode(event.prev_kv.value, revision, kv.key)
    previous_matched = previous is not None and matches(previous)
    if matches(current):
        return WatchEvent(MODIFIED if previous_matched else ADDED, current, revision)
    if previous_matched and previous is not None:
        return WatchEvent(DELETED, previous, revision)
    return None
