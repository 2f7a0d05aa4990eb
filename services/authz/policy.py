"""The RBAC policy index, fed from the storage service by List then Watch.

:class:`PolicyIndex` holds Roles, ClusterRoles, RoleBindings and
ClusterRoleBindings in memory with bindings indexed by subject (user name,
group name; ServiceAccount subjects under their ``system:serviceaccount:``
user name), so a decision looks only at the bindings that name the user.
``revision`` is the highest storage revision applied: the
``policy_revision`` a gateway tags its cached decisions with.

:class:`PolicySync` keeps the index current with the shared informer
(:class:`kapi.informer.IndexSync`): per resource it lists (all
namespaces), replaces that part of the index, then watches from the
list's resourceVersion; a 410 Expired re-lists at once, any other failure
after a capped backoff.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from kapi.attributes import UserInfo
from kapi.informer import Index, IndexSync
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.authz.rbac import GROUP, GROUP_KIND, Binding, Role, Subject, subject_username

log = logging.getLogger(__name__)

ROLES, CLUSTER_ROLES, ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS = (
    "roles", "clusterroles", "rolebindings", "clusterrolebindings")
RESOURCES = (CLUSTER_ROLES, ROLES, CLUSTER_ROLE_BINDINGS, ROLE_BINDINGS)

# (namespace, name); namespace "" for cluster-scoped objects.
Key = tuple[str, str]


class _SubjectIndex:
    """Bindings of one kind by subject: user name -> {binding key: subject}, group -> {binding key: subject}.

    For each binding only its first subject naming a given user or group is
    kept, so the reason names the subject kube's ``appliesTo`` would find.
    """

    def __init__(self) -> None:
        self.by_user: dict[str, dict[Key, tuple[int, Subject]]] = defaultdict(dict)
        self.by_group: dict[str, dict[Key, tuple[int, Subject]]] = defaultdict(dict)
        self._entries: dict[Key, list[tuple[dict[str, dict[Key, tuple[int, Subject]]], str]]] = {}

    def add(self, key: Key, binding: Binding) -> None:
        self.remove(key)
        entries: list[tuple[dict[str, dict[Key, tuple[int, Subject]]], str]] = []
        for position, subject in enumerate(binding.subjects):
            if subject.kind == GROUP_KIND:
                table, name = self.by_group, subject.name
            else:
                username = subject_username(subject, binding.namespace)
                if username is None:
                    continue
                table, name = self.by_user, username
            bucket = table[name]
            if key not in bucket:
                bucket[key] = (position, subject)
                entries.append((table, name))
        self._entries[key] = entries

    def remove(self, key: Key) -> None:
        for table, name in self._entries.pop(key, ()):
            bucket = table.get(name)
            if bucket is not None:
                bucket.pop(key, None)
                if not bucket:
                    del table[name]

    def lookup(self, user: UserInfo) -> dict[Key, tuple[int, Subject]]:
        """Binding key -> (subject position, subject) of every binding naming ``user``, first subject wins."""
        found: dict[Key, tuple[int, Subject]] = dict(self.by_user.get(user.username, {}))
        for group in user.groups:
            for key, entry in self.by_group.get(group, {}).items():
                current = found.get(key)
                if current is None or entry[0] < current[0]:
                    found[key] = entry
        return found


class PolicyIndex:
    """In-memory RBAC objects, bindings indexed by subject (see module docstring).

    Mutated only from the event loop thread; every method is synchronous,
    so a decision always sees one consistent state.
    """

    def __init__(self) -> None:
        self._revision = 0
        self._changed = asyncio.Event()
        self._listed: set[str] = set()
        self._roles: dict[Key, Role] = {}
        self._cluster_roles: dict[str, Role] = {}
        self._cluster_role_objects: dict[str, Mapping[str, Any]] = {}
        self._bindings: dict[Key, Binding] = {}
        self._cluster_bindings: dict[str, Binding] = {}
        # Per-namespace subject indexes for RoleBindings; one for ClusterRoleBindings.
        self._rb_index: dict[str, _SubjectIndex] = defaultdict(_SubjectIndex)
        self._crb_index = _SubjectIndex()

    # ------------------------------------------------------------ reading

    @property
    def revision(self) -> int:
        """The highest storage revision applied (0 before any list)."""
        return self._revision

    @revision.setter
    def revision(self, value: int) -> None:
        if value != self._revision:
            self._revision = value
            self._changed.set()
            self._changed = asyncio.Event()

    async def wait_revision_change(self, seen: int) -> int:
        """Wait until :attr:`revision` differs from ``seen``; returns the new revision."""
        while self._revision == seen:
            await self._changed.wait()
        return self._revision

    @property
    def synced(self) -> bool:
        """True once all four RBAC resources have been listed at least once."""
        return self._listed.issuperset(RESOURCES)

    def cluster_role_bindings_for(self, user: UserInfo) -> list[tuple[Binding, Subject]]:
        """ClusterRoleBindings naming ``user`` (by name, group or service account), sorted by name."""
        found = self._crb_index.lookup(user)
        return [(self._cluster_bindings[key[1]], found[key][1]) for key in sorted(found)]

    def role_bindings_for(self, user: UserInfo, namespace: str) -> list[tuple[Binding, Subject]]:
        """RoleBindings of ``namespace`` naming ``user``, sorted by name."""
        index = self._rb_index.get(namespace)
        if index is None:
            return []
        found = index.lookup(user)
        return [(self._bindings[key], found[key][1]) for key in sorted(found)]

    def role(self, namespace: str, name: str) -> Role | None:
        """The Role ``namespace/name``, or None."""
        return self._roles.get((namespace, name))

    def cluster_role(self, name: str) -> Role | None:
        """The ClusterRole ``name``, or None."""
        return self._cluster_roles.get(name)

    def cluster_role_objects(self) -> dict[str, Mapping[str, Any]]:
        """ClusterRole name -> the object as stored (labels, aggregationRule, resourceVersion), for aggregation."""
        return dict(self._cluster_role_objects)

    def bindings(self) -> list[Binding]:
        """Every RoleBinding and ClusterRoleBinding (for tests and debugging)."""
        return [*self._cluster_bindings.values(), *self._bindings.values()]

    # ------------------------------------------------------------ writing

    def replace(self, resource: str, objects: Iterable[Mapping[str, Any]], revision: int) -> None:
        """Replace every object of ``resource`` with ``objects`` (a full list read at ``revision``)."""
        for key in list(self._keys(resource)):
            self._delete(resource, key)
        for obj in objects:
            self._upsert(resource, obj)
        self._listed.add(resource)
        self.revision = max(self.revision, revision)

    def apply(self, resource: str, event_type: str, obj: Mapping[str, Any], revision: int) -> None:
        """Apply one watch event (ADDED, MODIFIED, DELETED; BOOKMARK is ignored) at ``revision``."""
        if event_type == "BOOKMARK":
            return
        if event_type == "DELETED":
            meta = obj.get("metadata") or {}
            self._delete(resource, (str(meta.get("namespace") or ""), str(meta.get("name") or "")))
        elif event_type in ("ADDED", "MODIFIED"):
            self._upsert(resource, obj)
        else:
            log.warning("ignoring %s watch event of unknown type %r", resource, event_type)
            return
        self.revision = max(self.revision, revision)

    def _keys(self, resource: str) -> Iterable[Key]:
        if resource == ROLES:
            return self._roles.keys()
        if resource == CLUSTER_ROLES:
            return [("", n) for n in self._cluster_roles]
        if resource == ROLE_BINDINGS:
            return self._bindings.keys()
        if resource == CLUSTER_ROLE_BINDINGS:
            return [("", n) for n in self._cluster_bindings]
        raise ValueError(f"not an RBAC resource: {resource}")

    def _upsert(self, resource: str, obj: Mapping[str, Any]) -> None:
        try:
            if resource in (ROLES, CLUSTER_ROLES):
                role = Role.from_json(obj)
                if resource == ROLES:
                    self._roles[(role.namespace, role.name)] = role
                else:
                    self._cluster_roles[role.name] = role
                    self._cluster_role_objects[role.name] = obj
            elif resource == ROLE_BINDINGS:
                binding = Binding.from_json(obj)
                key = (binding.namespace, binding.name)
                self._bindings[key] = binding
                self._rb_index[binding.namespace].add(key, binding)
            elif resource == CLUSTER_ROLE_BINDINGS:
                binding = Binding.from_json(obj)
                self._cluster_bindings[binding.name] = binding
                self._crb_index.add(("", binding.name), binding)
            else:
                raise ValueError(f"not an RBAC resource: {resource}")
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring malformed %s object: %s", resource, exc)

    def _delete(self, resource: str, key: Key) -> None:
        if resource == ROLES:
            self._roles.pop(key, None)
        elif resource == CLUSTER_ROLES:
            self._cluster_roles.pop(key[1], None)
            self._cluster_role_objects.pop(key[1], None)
        elif resource == ROLE_BINDINGS:
            self._bindings.pop(key, None)
            index = self._rb_index.get(key[0])
            if index is not None:
                index.remove(key)
                if not index.by_user and not index.by_group:
                    del self._rb_index[key[0]]
        elif resource == CLUSTER_ROLE_BINDINGS:
            self._cluster_bindings.pop(key[1], None)
            self._crb_index.remove(key)


def resource_key(resource: str, group: str = GROUP) -> storage_pb2.ResourceKey:
    """The storage key of one collection (an RBAC one by default) across all namespaces."""
    return storage_pb2.ResourceKey(group=group, resource=resource)


class PolicySync(IndexSync):
    """Keeps a :class:`PolicyIndex` in step with storage (List, then Watch; re-list on 410 or failure).

    The loop is :class:`kapi.informer.IndexSync`. Any index with the same
    ``replace``/``apply``/``synced``/``revision`` members can be fed the
    same way: ``group`` and ``resources`` name the collections (the Node
    authorizer's graph syncs ``("", ("pods",))``) and ``what`` names them
    in logs. ``sleep`` is injectable for tests; ``list_timeout`` is the
    deadline of one List page in seconds; backoff between failed attempts
    grows from ``min_backoff`` to ``max_backoff`` seconds.
    """

    def __init__(self, stub: storage_pb2_grpc.StorageStub, index: Index, *, list_timeout: float = 30.0,
                 min_backoff: float = 0.1, max_backoff: float = 5.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
                 group: str = GROUP, resources: Sequence[str] = RESOURCES, what: str = "RBAC policy"):
        super().__init__(stub, index, group=group, resources=resources, what=what, list_timeout=list_timeout,
                         min_backoff=min_backoff, max_backoff=max_backoff, sleep=sleep)
