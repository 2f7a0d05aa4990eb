"""The generic store: objects in etcd with kube-apiserver's semantics.

Mirrors k8s.io/apiserver ``pkg/storage/etcd3/store.go`` (+ the cacher's
messages where the watch cache would answer): objects are JSON dicts stored
without ``metadata.resourceVersion``; every object handed back has it set to
its etcd mod revision (a decimal string). Create is a txn on "key absent",
update and delete are txns on "mod revision unchanged" (409 Conflict
otherwise). Lists are read at one revision, paged with kube's continue tokens
and filtered by label and field selectors; watches stream etcd events
converted to ADDED / MODIFIED / DELETED / BOOKMARK ("API concepts":
"Resource versions", "Efficient detection of changes", "Retrieving large
results sets in chunks").

Reads of etcd go through :meth:`Store._range`. With a watch cache
(:mod:`services.storage.watchcache`), ``resourceVersion=0`` gets and lists,
not-older-than lists, consistent (unset resourceVersion) lists once the cache
has caught up with etcd (KEP-2340), continue tokens at the cache's revision
and every watch are served from the cache; everything else (and any request
while the cache does not follow etcd) reads etcd.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass

from kapi import errors, jsonutil
from kapi.selectors import FieldSelector, LabelSelector, SelectorError, parse_field_selector, parse_label_selector
from kapi_proto.etcd import rpc_pb2
from services.storage import fields
from services.storage.etcd import CompactedError, EtcdClient, FutureRevisionError, prefix_end
from services.storage.etcd_watch import WatchMux, WatchOverflow
from services.storage.events import ADDED, Matcher, WatchEvent, bookmark, convert
from services.storage.keys import KeySpace, ObjectKey, decode_continue, encode_continue
from services.storage.objects import Object, decode, stamped, without_resource_version
from services.storage.versions import list_read_plan, parse_resource_version, too_large_resource_version
from services.storage.watchcache import FRESH_TIMEOUT, KeyRange, WatchCache, WatchCaches

log = logging.getLogger(__name__)

MODIFIED_MESSAGE = "the object has been modified; please apply your changes to the latest version and try again"
INCONSISTENT_CONTINUE = (  # etcd3 errors.go inconsistentContinue: the 410 carries a token at revision -1
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")
EXPIRED_LIST = "The resourceVersion for the provided list is too old."  # etcd3 errors.go, a list at a compacted rv
MAX_PAGE = 10_000  # keys per etcd range when a selector filters a limited list (kube's maxLimit)
INITIAL_PAGE = 1_000  # keys per etcd range when reading a watch's initial state
EVENTS_PER_MESSAGE = 500  # synthetic ADDED events per batch
_DELETE_RETRIES = 16

Events = list[WatchEvent]  # one batch (the Store class has a method named "list")


def _now() -> str:
    """The current time as Kubernetes serialises metav1.Time (RFC 3339, seconds, UTC, "Z")."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class StoredObject:
    """An object as stored, ``metadata.resourceVersion`` set; ``resource_version`` is its etcd mod revision."""

    object: Object
    resource_version: int
    deletion_pending: bool = False  # Delete only: marked with deletionTimestamp (finalizers remain), not removed


@dataclass(frozen=True)
class ListOptions:
    """List parameters (meta/v1 ListOptions): selectors, ``limit`` (0 = all), continue token, resourceVersion[Match]."""

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    selectable_fields: tuple[str, ...] = ()  # a custom resource's selectableFields (field labels)


@dataclass(frozen=True)
class ListResult:
    """One page: ``items`` in key order, the revision it was read at, the next continue token ("" = done),
    and ``remaining_item_count`` (None unless more remain and no selector was given)."""

    items: list[Object]
    resource_version: int
    continue_: str = ""
    remaining_item_count: int | None = None
    encoded: list[bytes] | None = None  # the items as JSON, when the cache already had them encoded


@dataclass(frozen=True)
class WatchOptions:
    """Watch parameters: start resourceVersion ("" / "0" = send current state first), selectors, bookmarks,
    sendInitialEvents."""

    resource_version: str = ""
    label_selector: str = ""
    field_selector: str = ""
    allow_bookmarks: bool = False
    send_initial_events: bool = False
    selectable_fields: tuple[str, ...] = ()  # a custom resource's selectableFields (field labels)
    skip_initial_events: bool = False  # sendInitialEvents=false given: "" / "0" watch from now, no initial state
    timeout: float | None = None  # seconds left until the watch's deadline (None: none), for its bookmarks


class Store:
    """Generic store over etcd. ``prefix`` is ``--etcd-prefix``; ``watches`` the process's shared watch stream;
    ``caches`` the watch caches (None = serve everything from etcd)."""

    def __init__(self, client: EtcdClient, watches: WatchMux, prefix: str = "/registry",
                 caches: WatchCaches | None = None):
        self._etcd = client
        self._watches = watches
        self.keys = KeySpace(prefix)
        client.request_type = self.keys.type_of
        self.caches = caches
        self.fresh_timeout = FRESH_TIMEOUT  # seconds a read waits for the cache to reach a revision
        client.compaction_listeners.append(self.compacted)

    async def compact(self, revision: int) -> None:
        """Compact etcd to ``revision``; the caches hear of it through the client's compaction listeners."""
        await self._etcd.compact(revision)

    def compacted(self, revision: int) -> None:
        """etcd was compacted to ``revision`` (by this or another replica): older watches get 410 Expired."""
        if self.caches is not None:
            self.caches.compacted(revision)

    async def _cache(self, key: ObjectKey) -> WatchCache | None:
        """The watch cache of ``key``'s resource if it may serve now (started on first use), else None."""
        if self.caches is None:
            return None
        cache = self.caches.get(key.group, key.resource, self.keys.collection(ObjectKey(key.group, key.resource)))
        if cache is None or not await cache.usable():
            return None
        return cache

    # ------------------------------------------------------------ writes

    async def create(self, key: ObjectKey, obj: Object) -> StoredObject:
        """Store a new object at ``key``. Raises 409 AlreadyExists if the key exists, 400 for a non-object."""
        etcd_key = self.keys.object(key)
        stored = without_resource_version(obj)
        response = await self._etcd.create(etcd_key, jsonutil.dumps(stored))
        if not response.succeeded:
            raise errors.already_exists(key.resource, key.name, key.group)
        revision = response.header.revision
        return StoredObject(stamped(stored, revision), revision)

    async def update(self, key: ObjectKey, obj: Object, expected_resource_version: int = 0) -> StoredObject:
        """Replace the object at ``key`` (its resourceVersion field is ignored).

        ``expected_resource_version`` 0 = unconditional, else the mod revision
        the caller read (409 Conflict if it moved). 404 NotFound if absent. An
        update that changes nothing writes nothing and returns the stored
        object with its unchanged resourceVersion (as kube's GuaranteedUpdate).
        """
        etcd_key = self.keys.object(key)
        stored = without_resource_version(obj)
        meta = stored.get("metadata") or {}
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            finished = await self._finish_deletion(key, etcd_key, stored, expected_resource_version)
            if finished is not None:
                return finished
        response = await self._etcd.update(etcd_key, jsonutil.dumps(stored), expected_resource_version)
        if not response.succeeded:
            if not response.responses[0].response_range.kvs:
                raise errors.not_found(key.resource, key.name, key.group)
            raise errors.conflict(key.resource, key.name, MODIFIED_MESSAGE, key.group)
        inner = response.responses[0].response_txn
        if inner.succeeded:  # unchanged: nothing written
            kv = inner.responses[0].response_range.kvs[0]
            return StoredObject(stamped(stored, kv.mod_revision), kv.mod_revision)
        revision = response.header.revision
        return StoredObject(stamped(stored, revision), revision)

    async def delete(self, key: ObjectKey, expected_resource_version: int = 0, expected_uid: str = "") -> StoredObject:
        """Delete the object at ``key`` and return it as it was, resourceVersion = the deletion revision.

        Preconditions (meta/v1 Preconditions): ``expected_uid`` ("" = none) and
        ``expected_resource_version`` (0 = none) must match the stored object,
        else 409 Conflict with kube's ``Precondition failed: ...`` message.
        404 NotFound if absent.

        Graceful deletion with finalizers (kube's generic registry
        ``BeforeDelete`` + ``updateForGracefulDeletionAndFinalizers``): an
        object whose ``metadata.finalizers`` is not empty is not removed but
        marked with ``deletionTimestamp`` (now, RFC 3339 UTC) and
        ``deletionGracePeriodSeconds`` 0, and returned with
        ``deletion_pending`` True (already marked: returned unchanged). It is
        removed by the update that clears its last finalizer (:meth:`update`).
        """
        etcd_key = self.keys.object(key)
        for _ in range(_DELETE_RETRIES):
            current = (await self._etcd.range(etcd_key)).kvs
            if not current:
                raise errors.not_found(key.resource, key.name, key.group)
            kv = current[0]
            obj = decode(kv.value, kv.mod_revision, kv.key)
            meta = obj["metadata"]
            if expected_uid:
                uid = str(meta.get("uid") or "")
                if uid != expected_uid:
                    raise self._precondition_failed(key, etcd_key, "UID", expected_uid, uid)
            if expected_resource_version and kv.mod_revision != expected_resource_version:
                raise self._precondition_failed(key, etcd_key, "ResourceVersion", expected_resource_version,
                                                kv.mod_revision)
            if meta.get("finalizers"):
                if meta.get("deletionTimestamp"):
                    return StoredObject(obj, kv.mod_revision, deletion_pending=True)
                meta = {**meta, "deletionTimestamp": _now(), "deletionGracePeriodSeconds": 0}
                marked = without_resource_version({**obj, "metadata": meta})
                written = await self._etcd.update(etcd_key, jsonutil.dumps(marked), kv.mod_revision)
                if written.succeeded:
                    revision = written.header.revision
                    return StoredObject(stamped(marked, revision), revision, deletion_pending=True)
                continue
            response = await self._etcd.delete(etcd_key, kv.mod_revision)
            if response.succeeded:
                return self._deleted(response, etcd_key)
        raise errors.conflict(key.resource, key.name, MODIFIED_MESSAGE, key.group)

    async def _finish_deletion(self, key: ObjectKey, etcd_key: bytes, stored: Object,
                               expected_resource_version: int) -> StoredObject | None:
        """An update clearing the last finalizer of an object marked for deletion with grace period 0 removes
        it (kube's ``ShouldDeleteDuringUpdate``); returns the object at its deletion revision, or None when the
        stored object is not such a deletion (then the update proceeds as usual)."""
        if key.group == "" and key.resource == "namespaces" and (stored.get("spec") or {}).get("finalizers"):
            return None  # a Namespace also waits for spec.finalizers (kube's ShouldDeleteNamespaceDuringUpdate)
        current = (await self._etcd.range(etcd_key)).kvs
        if not current:
            raise errors.not_found(key.resource, key.name, key.group)
        kv = current[0]
        if expected_resource_version and kv.mod_revision != expected_resource_version:
            raise errors.conflict(key.resource, key.name, MODIFIED_MESSAGE, key.group)
        old_meta = decode(kv.value, kv.mod_revision, kv.key)["metadata"]
        if not old_meta.get("deletionTimestamp") or old_meta.get("deletionGracePeriodSeconds", 0) not in (0, None):
            return None
        response = await self._etcd.delete(etcd_key, kv.mod_revision)
        if not response.succeeded:
            raise errors.conflict(key.resource, key.name, MODIFIED_MESSAGE, key.group)
        revision = response.header.revision
        return StoredObject(stamped(stored, revision), revision)

    @staticmethod
    def _deleted(response: rpc_pb2.TxnResponse, etcd_key: bytes) -> StoredObject:
        revision = response.header.revision
        prev = response.responses[0].response_delete_range.prev_kvs[0]
        return StoredObject(decode(prev.value, revision, etcd_key), revision)

    @staticmethod
    def _precondition_failed(key: ObjectKey, etcd_key: bytes, what: str, wanted: object,
                             actual: object) -> errors.StatusError:
        # storage.NewInvalidObjError wrapped by apierrors.NewConflict, word for word.
        detail = f"Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {actual}"
        text = (f"StorageError: invalid object, Code: 4, Key: {etcd_key.decode(errors='replace')}, "
                f"ResourceVersion: 0, AdditionalErrorMsg: {detail}")
        return errors.conflict(key.resource, key.name, text, key.group)

    # ------------------------------------------------------------ reads

    async def _range(self, start: bytes, end: bytes = b"", *, revision: int = 0, limit: int = 0,
                     serializable: bool = False) -> rpc_pb2.RangeResponse:
        """The one etcd read path for current state."""
        return await self._etcd.range(start, end, revision=revision, limit=limit, serializable=serializable)

    async def get(self, key: ObjectKey, resource_version: str = "") -> StoredObject:
        """Read one object. ``resource_version`` "" = linearizable read, "0" = any (the watch cache, else a
        serializable etcd read), else not older than that revision (504 Timeout if etcd is behind). 404 NotFound
        if absent."""
        etcd_key = self.keys.object(key)
        minimum = parse_resource_version(resource_version) if resource_version else 0
        if resource_version == "0":
            cache = await self._cache(key)
            if cache is not None:
                entry = cache.get(etcd_key)
                if entry is None:
                    raise errors.not_found(key.resource, key.name, key.group)
                return StoredObject(entry.object, entry.revision)
        response = await self._range(etcd_key, serializable=resource_version == "0")
        if minimum and response.header.revision < minimum:
            raise too_large_resource_version(minimum, response.header.revision)
        if not response.kvs:
            raise errors.not_found(key.resource, key.name, key.group)
        kv = response.kvs[0]
        return StoredObject(decode(kv.value, kv.mod_revision, kv.key), kv.mod_revision)

    def _matcher(self, key: ObjectKey, label_selector: str, field_selector: str,
                 custom: tuple[str, ...] = ()) -> Matcher | None:
        """A predicate for the selectors, or None when they select everything. Raises 400 for a bad selector."""
        try:
            labels: LabelSelector = parse_label_selector(label_selector)
            selected: FieldSelector = parse_field_selector(field_selector,
                                                           fields.supported_fields(key.group, key.resource, custom))
        except SelectorError as exc:
            raise errors.bad_request(str(exc)) from None
        if labels.empty and selected.empty:
            return None

        def matches(obj: Object) -> bool:
            meta = obj.get("metadata") or {}
            obj_labels = meta.get("labels")
            if not labels.matches(obj_labels if isinstance(obj_labels, Mapping) else None):
                return False
            return selected.empty or selected.matches(fields.object_fields(key.group, key.resource, obj, custom))

        return matches

    async def list(self, key: ObjectKey, options: ListOptions) -> ListResult:
        """List the collection of ``key`` (all namespaces if ``key.namespace`` is "") per "API concepts".

        resourceVersion semantics (the table in "Resource versions"): ""
        = most recent (linearizable); "0" = any; N with match NotOlderThan
        (or unset without limit) = most recent if >= N, else 504; N with match
        Exact (or unset with a limit) = exactly revision N (410 Expired if
        compacted). ``continue`` resumes at the token's revision (410 Expired
        if compacted). Raises 400 for bad selectors, tokens or versions, 422
        for invalid resourceVersionMatch combinations.
        """
        matches = self._matcher(key, options.label_selector, options.field_selector, options.selectable_fields)
        prefix = self.keys.collection(ObjectKey(key.group, key.resource, key.namespace))
        end = prefix_end(prefix)
        start, token_revision = decode_continue(options.continue_, prefix) if options.continue_ else (prefix, 0)
        plan = list_read_plan(options.resource_version, options.resource_version_match, options.continue_,
                              options.limit)
        revision, minimum, serializable = plan.revision, plan.minimum, plan.serializable
        if options.continue_:
            revision = max(token_revision, 0)  # -1: inconsistent continuation at the latest revision
        limit = max(options.limit, 0)
        cache = await self._cache(key) if not plan.revision else None
        if cache is not None:
            if options.continue_:
                if revision and revision == cache.revision:  # the cache holds exactly the state at the token's
                    return self._list_cached(cache, prefix, matches, limit, start)
            elif options.resource_version == "0":
                return self._list_cached(cache, prefix, matches, limit)
            elif minimum:  # not older than minimum: the cache if it is there already, else etcd
                if cache.revision >= minimum:
                    return self._list_cached(cache, prefix, matches, limit)
            elif cache.revision >= await self._current_revision(prefix):
                # Consistent read (KEP-2340): from the cache only if it already reached etcd's revision; etcd 3.5
                # before 3.5.13 cannot order RequestProgress with events, so kube reads etcd then too.
                return self._list_cached(cache, prefix, matches, limit)
        page = limit
        continue_start = start  # the token's key (the loop's start moves on over filtered pages)
        items: list[Object] = []
        more, last_key, remaining = False, b"", None
        while True:
            try:
                response = await self._range(start, end, revision=revision, limit=page, serializable=serializable)
            except CompactedError:
                if options.continue_:  # handleCompactedErrorForPaging: resume from the token's key, at the latest
                    expired = errors.expired(INCONSISTENT_CONTINUE)
                    expired.list_meta = {"continue": encode_continue(continue_start, prefix, -1)}
                    raise expired from None
                raise errors.expired(EXPIRED_LIST) from None
            except FutureRevisionError:
                raise too_large_resource_version(revision, await self._current_revision(prefix)) from None
            revision = revision or response.header.revision
            kvs = response.kvs
            full = False
            for index, kv in enumerate(kvs):
                obj = decode(kv.value, kv.mod_revision, kv.key)
                last_key = kv.key
                if matches is None or matches(obj):
                    items.append(obj)
                if limit and len(items) >= limit:
                    full = True
                    more = index < len(kvs) - 1 or response.more
                    break
            if not full:
                more = response.more
            if full or not more:
                if more and matches is None:
                    remaining = response.count - len(kvs)
                break
            start = last_key + b"\x00"
            if matches is not None:
                page = min(page * 2, MAX_PAGE)
        if minimum and revision < minimum:
            raise too_large_resource_version(minimum, revision)
        token = encode_continue(last_key + b"\x00", prefix, revision) if more else ""
        return ListResult(items, revision, token, remaining)

    @staticmethod
    def _list_cached(cache: WatchCache, prefix: bytes, matches: Matcher | None, limit: int,
                     start: bytes = b"") -> ListResult:
        """One page of the collection ``prefix`` from the cache at its current revision (no await: consistent)."""
        keys = KeyRange(prefix, prefix_end(prefix))
        revision = cache.revision
        items: list[Object] = []
        encoded: list[bytes] = []
        last, more = b"", False
        for k, entry in cache.scan(keys, start):
            if matches is not None and not matches(entry.object):
                continue
            if limit and len(items) >= limit:
                more = True
                break
            items.append(entry.object)
            encoded.append(entry.encoded)
            last = k
        if not more:
            return ListResult(items, revision, "", None, encoded)
        remaining = cache.count(keys, last + b"\x00") if matches is None else None
        return ListResult(items, revision, encode_continue(last + b"\x00", prefix, revision), remaining, encoded)

    async def _current_revision(self, prefix: bytes) -> int:
        return (await self._etcd.range(prefix, limit=1)).header.revision

    # ------------------------------------------------------------ watch

    async def watch(self, key: ObjectKey, options: WatchOptions) -> AsyncGenerator[Events, None]:
        """Stream batches of events for ``key`` (one object if ``key.name`` is set, else the collection).

        ``resource_version`` "" or "0" (or ``send_initial_events``): first a
        synthetic ADDED for every selected object at the read revision R, then
        changes after R; with ``send_initial_events`` and ``allow_bookmarks``,
        a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` at R follows
        the initial events. A revision N: exactly the changes after N.
        Selectors filter with kube's semantics (an object leaving the selection
        is DELETED, one entering it ADDED). With ``allow_bookmarks``, BOOKMARK
        events (object ``{"metadata": {"resourceVersion": ...}}``, no kind)
        follow etcd progress notifications. Raises 410 Expired if N is
        compacted, 503 if the etcd watch stream breaks, 400 for bad input.

        With the resource's watch cache: served from it (one etcd watch per
        resource however many watchers); "" waits for the cache to catch up
        with etcd (consistent), N waits for the cache to reach N (504 Too
        large resource version after FRESH_TIMEOUT) and must be within the
        cache window (410 ``too old resource version: N (oldest)``); an N older than the cache itself gets an
        etcd watch of its own (caches start on first use on each replica, so a cache may begin after a list
        served elsewhere), 410 only once etcd compacted N.

        ``skip_initial_events`` (sendInitialEvents=false) with "" or "0": no initial state; the changes after
        etcd's current revision ("") or the cache's ("0": "start watching from Any resourceVersion"), as kube's
        cacher (getWatchCacheResourceVersion, watch_cache.go getAllEventsSinceLocked). ``send_initial_events``
        with an N the cache has not reached waits for it (FRESH_TIMEOUT) and else raises 504 Too large
        resource version, sending nothing (cacher.go waitUntilWatchCacheFreshAndForceAllEvents).
        """
        matches = self._matcher(key, options.label_selector, options.field_selector, options.selectable_fields)
        if key.name:
            start_key, end_key = self.keys.object(key), b""
        else:
            start_key = self.keys.collection(key)
            end_key = prefix_end(start_key)
        text = options.resource_version
        wanted = parse_resource_version(text) if text not in ("", "0") else 0
        cache = await self._cache(key)
        if not wanted and options.skip_initial_events and not options.send_initial_events:
            any_revision = cache.revision if cache is not None and text == "0" else 0
            wanted = any_revision or await self._current_revision(start_key)
        if cache is not None:
            initial = options.send_initial_events or not wanted
            if initial:
                # The current state must be at least ``wanted`` (or etcd's revision for ""): else read etcd.
                target = wanted or (await self._current_revision(start_key) if text == "" else 0)
                usable = cache.revision >= target
                if not usable and wanted and not await cache.wait_fresh(wanted, self.fresh_timeout):
                    current = await self._current_revision(start_key)
                    if wanted > current:
                        raise too_large_resource_version(wanted, current)
                usable = cache.revision >= target
            elif wanted < cache.oldest == cache.listed:
                # Before the cache itself: this replica built it after the client's list (caches start on first
                # use, per replica, and relist after an etcd failure). etcd still has those changes unless it
                # compacted them (then 410 from etcd), so this watch gets an etcd watch of its own. A window
                # that moved on past ``wanted`` answers 410 below, as kube's cacher.
                usable = False
            else:
                # Changes after ``wanted``: every one still reaches the cache, so a watcher registered now with
                # that threshold misses none, provided ``wanted`` is not in etcd's future.
                usable = (wanted <= cache.applied or wanted <= await self._current_revision(start_key)
                          or await cache.wait_fresh(wanted, self.fresh_timeout))
                if not usable:
                    raise too_large_resource_version(wanted, await self._current_revision(start_key))
            if usable:
                async with contextlib.aclosing(self._watch_cached(cache, KeyRange(start_key, end_key), matches,
                                                                  options, wanted, initial)) as stream:
                    async for events in stream:
                        yield events
                return
        async with contextlib.aclosing(self._watch_etcd(start_key, end_key, matches, options, wanted)) as stream:
            async for events in stream:
                yield events

    async def _watch_cached(self, cache: WatchCache, keys: KeyRange, matches: Matcher | None,
                            options: WatchOptions, wanted: int, initial: bool) -> AsyncGenerator[Events, None]:
        """A watch served from ``cache``: the state and the watcher are taken with no await in between."""
        revision = cache.revision
        if initial:
            events = [WatchEvent(ADDED, entry.object, entry.revision, entry.encoded)
                      for _, entry in cache.scan(keys) if matches is None or matches(entry.object)]
            watcher = cache.add_watcher(keys, matches, options.allow_bookmarks, cache.applied, revision)
        else:
            since = cache.events_since(wanted) if wanted <= cache.applied else []
            events = [e for e in (ev.to_watch_event(matches) for ev in since if ev.key in keys) if e is not None]
            watcher = cache.add_watcher(keys, matches, options.allow_bookmarks, max(cache.applied, wanted),
                                        events[-1].resource_version if events else wanted)
        if options.allow_bookmarks:  # kube's periodic and pre-timeout bookmarks (kapi.watchbookmarks)
            deadline = None if options.timeout is None else asyncio.get_running_loop().time() + options.timeout
            watcher.schedule_bookmarks(revision if initial else wanted, deadline)
        try:
            for i in range(0, len(events), EVENTS_PER_MESSAGE):
                yield events[i:i + EVENTS_PER_MESSAGE]
            if initial and options.send_initial_events and options.allow_bookmarks:
                yield [bookmark(revision, initial_events_end=True)]
            while True:
                try:
                    batch = await watcher.next()
                except WatchOverflow:
                    return  # too slow: end the watch; the client resumes from its last resourceVersion
                yield batch
        finally:
            watcher.close()

    async def _watch_etcd(self, start_key: bytes, end_key: bytes, matches: Matcher | None, options: WatchOptions,
                          wanted: int) -> AsyncGenerator[Events, None]:
        """A watch served by its own etcd watch (resources whose watch cache is off, or not following etcd)."""
        text = options.resource_version
        if options.send_initial_events or not wanted:
            revision = 0
            async for response in self._scan(start_key, end_key, serializable=text == "0"):
                revision = revision or response.header.revision
                if wanted and revision < wanted:  # nothing sent from a state older than asked for
                    raise too_large_resource_version(wanted, revision)
                events = []
                for kv in response.kvs:
                    obj = decode(kv.value, kv.mod_revision, kv.key)
                    if matches is None or matches(obj):
                        events.append(WatchEvent(ADDED, obj, kv.mod_revision))
                for i in range(0, len(events), EVENTS_PER_MESSAGE):
                    yield events[i:i + EVENTS_PER_MESSAGE]
            if options.send_initial_events and options.allow_bookmarks:
                yield [bookmark(revision, initial_events_end=True)]
            start = revision
        else:
            start = wanted
        subscription = await self._watches.subscribe(start_key, end_key, start + 1,
                                                      wants_progress=options.allow_bookmarks)
        last = start
        try:
            while True:
                try:
                    batch = await subscription.next()
                except CompactedError as exc:
                    raise errors.expired(f"too old resource version: {start} ({exc.compact_revision})") from None
                except WatchOverflow:
                    return  # too slow: end the watch; the client resumes from its last resourceVersion
                if batch.progress:
                    if options.allow_bookmarks and batch.revision >= last:
                        last = batch.revision
                        yield [bookmark(batch.revision)]
                    continue
                out = [e for e in (convert(ev, matches) for ev in batch.events) if e is not None]
                last = max(last, batch.events[-1].kv.mod_revision)
                if out:
                    yield out
        finally:
            subscription.close()

    async def _scan(self, start: bytes, end: bytes, *, serializable: bool) -> AsyncIterator[rpc_pb2.RangeResponse]:
        """Every key in [start, end) in pages of INITIAL_PAGE, all read at the first page's revision."""
        revision = 0
        while True:
            response = await self._range(start, end, revision=revision, limit=INITIAL_PAGE if end else 0,
                                         serializable=serializable and not revision)
            revision = revision or response.header.revision
            yield response
            if not response.more or not response.kvs:
                return
            start = response.kvs[-1].key + b"\x00"
