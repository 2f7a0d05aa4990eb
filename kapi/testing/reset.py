"""Snapshots of what a cluster holds, and ``reset``: delete everything created since a snapshot.

A :class:`Snapshot` is the set of object UIDs of every listable, deletable
resource the API serves (discovery: ``/api/v1`` and each group's preferred
version under ``/apis``, CRDs included) plus the namespaces that existed.
:func:`reset` deletes, as the admin, what is new since then:

- every namespace that was not there (the namespace controller deletes its content);
- every new object in a namespace that was there (``default``, ``kube-system``, ...);
- every new cluster-scoped object (CRDs, ClusterRoles, PriorityClasses, ...);

except what the cluster's own components keep for every namespace or for
themselves (:data:`MANAGED`: each namespace's ``default`` ServiceAccount and
``kube-root-ca.crt``, leader-election Leases in ``kube-system``, the
gateways' ``extension-apiserver-authentication``, automanaged APIServices),
and then waits until they are gone. Objects still held by finalizers after
``force_after`` seconds (an operator the test stopped cannot release them)
get their finalizers removed, as ``kubectl patch --type=merge -p
'{"metadata":{"finalizers":null}}'`` would. Objects that existed at the
snapshot and were changed or deleted by a test are not restored.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kapi.testing.rest import ApiError, Rest

POLL_SECONDS = 0.05
PARALLEL = 4  # requests in flight while listing
# (resource, namespace or None for any, name or None for any): objects the cluster's components create and
# keep up themselves; a reset leaves them alone (deleting them would only make their controller recreate them).
MANAGED: tuple[tuple[str, str | None, str | None], ...] = (
    ("configmaps", None, "kube-root-ca.crt"),  # root-ca-cert-publisher, every namespace
    ("serviceaccounts", None, "default"),  # serviceaccount controller, every namespace
    ("leases", "kube-system", None),  # leader election of the controller manager
    ("configmaps", "kube-system", "extension-apiserver-authentication"),  # every gateway, re-read each minute
    ("configmaps", "kube-system", "tenant-quota-template"),  # tenant-quota's template (--tenant-quota-configmap)
    ("clusterrolebindings", None, "kapi:namespace-provisioners"),  # tenant-rbac
    ("endpoints", "default", "kubernetes"),
    ("endpointslices", "default", "kubernetes"),
)
AUTOMANAGED_LABEL = "kube-aggregator.kubernetes.io/automanaged"  # the autoregister loop's APIServices


@dataclass(frozen=True)
class Resource:
    """One listable, deletable resource: URL prefix (``/api/v1``, ``/apis/apps/v1``), plural, scope."""

    prefix: str
    name: str
    namespaced: bool


@dataclass(frozen=True)
class ObjectRef:
    """One object as listed: where it lives, its identity, and whether it is being deleted."""

    resource: Resource
    namespace: str
    name: str
    uid: str
    labels: tuple[tuple[str, str], ...] = ()
    deleting: bool = False
    finalizers: tuple[str, ...] = ()

    @property
    def path(self) -> str:
        """The object's URL path."""
        r = self.resource
        if r.namespaced:
            return f"{r.prefix}/namespaces/{self.namespace}/{r.name}/{self.name}"
        return f"{r.prefix}/{r.name}/{self.name}"


@dataclass(frozen=True)
class Snapshot:
    """UIDs of every object, and the names of the namespaces, at one moment."""

    uids: frozenset[str]
    namespaces: frozenset[str]


class _Pool:
    """Up to PARALLEL requests at a time, each worker thread with its own connection (gateways serve in parallel)."""

    def __init__(self, rest: Rest) -> None:
        self._rest = rest
        self._local = threading.local()
        self._clients: list[Rest] = []

    def _client(self) -> Rest:
        client = getattr(self._local, "client", None)
        if client is None:
            client = self._local.client = self._rest.fork()
            self._clients.append(client)
        return client

    def get_all(self, paths: Sequence[str]) -> list[dict[str, Any] | None]:
        """GET each path in parallel; None where it failed (ApiError or OSError)."""
        def one(path: str) -> dict[str, Any] | None:
            try:
                return self._client().get(path)
            except (ApiError, OSError):
                return None

        with ThreadPoolExecutor(PARALLEL, thread_name_prefix="kapi-testing") as pool:
            out = list(pool.map(one, paths))
        for client in self._clients:
            client.close()
        return out


def discover(rest: Rest) -> list[Resource]:
    """Every resource (no subresources) that supports list and delete, at each group's preferred version.

    Groups whose discovery fails (an unavailable aggregated API) are skipped.
    """
    prefixes = ["/api/v1"] + [f"/apis/{g['preferredVersion']['groupVersion']}"
                              for g in rest.get("/apis").get("groups", [])
                              if (g.get("preferredVersion") or {}).get("groupVersion")]
    out = []
    for prefix, doc in zip(prefixes, _Pool(rest).get_all(prefixes), strict=True):
        if doc is None:
            continue
        for r in doc.get("resources", []):
            if "/" not in r["name"] and {"list", "delete"} <= set(r.get("verbs", [])):
                out.append(Resource(prefix, r["name"], bool(r.get("namespaced"))))
    return out


def list_objects(rest: Rest, resources: Iterable[Resource]) -> dict[str, ObjectRef]:
    """uid -> ObjectRef of every object of ``resources`` (cluster-wide lists; a failing list is skipped).

    An object served by two groups (core and ``events.k8s.io`` Events) is kept once, under the first.
    """
    out: dict[str, ObjectRef] = {}
    resources = list(resources)
    lists = _Pool(rest).get_all([f"{r.prefix}/{r.name}" for r in resources])
    for resource, listed in zip(resources, lists, strict=True):
        for item in (listed or {}).get("items") or []:
            meta = item.get("metadata") or {}
            uid = meta.get("uid")
            if not uid or uid in out:
                continue
            out[uid] = ObjectRef(resource, meta.get("namespace", ""), meta.get("name", ""), uid,
                                 tuple(sorted((meta.get("labels") or {}).items())),
                                 bool(meta.get("deletionTimestamp")), tuple(meta.get("finalizers") or ()))
    return out


def snapshot(rest: Rest) -> Snapshot:
    """What the cluster holds now (see the module docstring)."""
    objects = list_objects(rest, discover(rest))
    return Snapshot(frozenset(objects), frozenset(o.name for o in objects.values()
                                                  if o.resource.name == "namespaces" and not o.resource.namespaced))


def _managed(ref: ObjectRef) -> bool:
    if ref.resource.name == "apiservices" and dict(ref.labels).get(AUTOMANAGED_LABEL):
        return True
    return any(ref.resource.name == resource and namespace in (None, ref.namespace) and name in (None, ref.name)
               for resource, namespace, name in MANAGED)


def _is_namespace(ref: ObjectRef) -> bool:
    return ref.resource.name == "namespaces" and ref.resource.prefix == "/api/v1"


def created_since(baseline: Snapshot, objects: dict[str, ObjectRef]) -> list[ObjectRef]:
    """The objects of ``objects`` that :func:`reset` deletes, in deletion order: objects in namespaces of
    ``baseline``, then cluster-scoped objects, then the new namespaces (whose content goes with them)."""
    inside, cluster, namespaces = [], [], []
    for uid, ref in objects.items():
        if uid in baseline.uids or _managed(ref):
            continue
        if _is_namespace(ref):
            namespaces.append(ref)
        elif not ref.resource.namespaced:
            cluster.append(ref)
        elif ref.namespace in baseline.namespaces:
            inside.append(ref)
    return inside + cluster + namespaces


def _delete(rest: Rest, ref: ObjectRef) -> None:
    try:
        rest.request("DELETE", ref.path, {"kind": "DeleteOptions", "apiVersion": "v1",
                                          "propagationPolicy": "Background"})
    except ApiError as err:
        if err.status not in (404, 409):
            raise


def _gone(rest: Rest, ref: ObjectRef) -> bool:
    try:
        obj = rest.get(ref.path)
    except ApiError as err:
        if err.status == 404:
            return True
        raise
    return (obj.get("metadata") or {}).get("uid") != ref.uid


def _release_finalizers(rest: Rest, baseline: Snapshot) -> None:
    """Drop the finalizers of every object created since ``baseline`` that is being deleted."""
    for uid, ref in list_objects(rest, discover(rest)).items():
        if uid in baseline.uids or not ref.deleting or not ref.finalizers:
            continue
        try:
            rest.request("PATCH", ref.path, {"metadata": {"finalizers": None}},
                         content_type="application/merge-patch+json")
        except ApiError as err:
            if err.status not in (404, 409, 422):
                raise


def reset(rest: Rest, baseline: Snapshot, timeout: float = 60.0, force_after: float = 5.0) -> list[ObjectRef]:
    """Delete everything created since ``baseline`` and wait until it is gone; returns what was deleted.

    ``timeout`` and ``force_after`` are seconds. Raises TimeoutError naming the
    objects still present after ``timeout``, ApiError if a delete is refused.
    """
    deadline = time.monotonic() + timeout
    force_at = time.monotonic() + force_after
    targets = created_since(baseline, list_objects(rest, discover(rest)))
    for ref in targets:
        _delete(rest, ref)
    pending = list(targets)
    while pending:
        pending = [ref for ref in pending if not _gone(rest, ref)]
        if not pending:
            break
        now = time.monotonic()
        if now > deadline:
            names = ", ".join(f"{r.resource.name}/{r.namespace + '/' if r.namespace else ''}{r.name}"
                              for r in pending[:10])
            raise TimeoutError(f"kapi.testing reset: still present after {timeout:.0f}s: {names}")
        if now > force_at:
            _release_finalizers(rest, baseline)
            force_at = now + force_after
        time.sleep(POLL_SECONDS)
    return targets
