"""Custom resources served from CustomResourceDefinitions: a CRD-fed overlay of the resource table.

Every gateway lists and watches ``customresourcedefinitions`` in storage
and, within a watch event of a change, serves each Established CRD's
versions: the rows go into :data:`kapi.resources.REGISTRY`'s overlay (so
routing, discovery legacy and aggregated pick them up), Table printers come
from ``additionalPrinterColumns`` and OpenAPI v3/v2 definitions from each
version's ``openAPIV3Schema``.

The CRD controller (kube's establishing, naming and finalizer controllers)
runs in every gateway: each reconciles the CRDs it sees and writes their
status with a storage update conditioned on the revision it read, so with
two gateways one write wins and the other's 409 Conflict is dropped (it
sees the new state in its watch). One write per controller step, as kube's
controllers write: KubernetesAPIApprovalPolicyConformant for ``*.k8s.io`` /
``*.kubernetes.io`` groups; acceptedNames with NamesAccepted (False with
NameConflict when another CRD of the group already uses the plural or kind)
and Established False Installing; then Established True (storedVersions is
the strategy's: kapi.kinds.apiextensions). Once a DELETE has marked the CRD
(Terminating InstanceDeletionPending and the
``customresourcecleanup.apiextensions.k8s.io`` finalizer:
services/gateway/registry/deletion.py) it sets Terminating
InstanceDeletionInProgress, deletes every object of the resource (none for a
CRD never Established: NeverEstablished; InstanceDeletionCheck when some
remain after a minute), and removes the finalizer once none is left, which
deletes the CRD. Every status write is
recorded in managedFields as kube's controllers' ``UpdateStatus``: manager
``kube-apiserver``, subresource ``status``. Sources: "Extend the Kubernetes API with
CustomResourceDefinitions" and apiextensions-apiserver's
``pkg/controller/{apiapproval,establish,status,finalizer}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
from collections.abc import Callable
from typing import Any

import grpc

from kapi import crd, errors, grpcutil, jsonutil
from kapi import managedfields as mf
from kapi.resources import REGISTRY, Registry, Resource
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import openapi, patch, printers, printers_more
from services.gateway.columns import Column, Printer, age

log = logging.getLogger(__name__)

RETRY_DELAY = 1.0  # seconds between failed list/watch attempts and terminating-CRD re-checks
LIST_TIMEOUT = 30.0
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
CONTROLLER_MANAGER = "kube-apiserver"  # field manager of the CRD controllers' status writes
#: seconds the finalizer waits for a CRD's objects to go before Terminating ``InstanceDeletionCheck`` (kube's
#: deleteInstances polls for one minute)
INSTANCE_DELETION_TIMEOUT = 60.0
#: group/resources whose storage a CRD may overlap: its deletion must not delete them (OverlappingBuiltInResources)
OVERLAPPING_BUILT_IN_RESOURCES = frozenset({("apiregistration.k8s.io", "apiservices"),
                                            ("apiextensions.k8s.io", "customresourcedefinitions")})


def _crd_types() -> mf.Types:
    """List and map semantics of CustomResourceDefinition (conditions keyed by type)."""
    return mf.Types(patch.schema_for(crd.GROUP, "v1", "CustomResourceDefinition"), patch._definitions())


class Watcher:
    """List then watch one resource from storage, calling ``on_change(objects by name)`` after every change."""

    def __init__(self, storage: Any, group: str, resource: str, on_change: Callable[[dict[str, Any]], None]):
        self.storage, self.group, self.resource = storage, group, resource
        self.on_change = on_change
        self.items: dict[str, dict[str, Any]] = {}
        self.synced = asyncio.Event()
        self._revision = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the list/watch loop (idempotent; needs a running loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"watch-{self.resource}")

    async def stop(self) -> None:
        """Stop the loop."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
            self._task = None

    def _key(self) -> storage_pb2.ResourceKey:
        return storage_pb2.ResourceKey(group=self.group, resource=self.resource)

    async def _run(self) -> None:
        while True:
            try:
                reply: Any = await grpcutil.call("storage", self.storage.List, storage_pb2.ListRequest(
                    key=self._key()), timeout=LIST_TIMEOUT)
                self.items = {o["metadata"]["name"]: o for o in map(jsonutil.loads, reply.items)}
                self._revision = int(reply.resource_version)
                self.on_change(self.items)
                self.synced.set()
                await self._watch()
            except asyncio.CancelledError:
                raise
            except errors.StatusError as err:
                if err.code != 410:
                    log.info("%s list/watch: %s", self.resource, err.message)
            except Exception:
                log.exception("%s list/watch failed", self.resource)
            await asyncio.sleep(RETRY_DELAY)

    async def _watch(self) -> None:
        call = self.storage.Watch(storage_pb2.WatchRequest(key=self._key(), resource_version=str(self._revision),
                                                           allow_bookmarks=True))
        try:
            async for batch in call:
                changed = False
                for event in batch.events:
                    self._revision = max(self._revision, int(event.resource_version))
                    if event.type == "BOOKMARK" or not event.object:
                        continue
                    obj = jsonutil.loads(event.object)
                    name = str((obj.get("metadata") or {}).get("name") or "")
                    if event.type == "DELETED":
                        self.items.pop(name, None)
                    else:
                        self.items[name] = obj
                    changed = True
                if changed:
                    self.on_change(self.items)
        except grpc.RpcError as exc:
            raise errors.from_rpc_error(exc, "storage") from None
        finally:
            call.cancel()


def _definition_name(group: str, version: str, kind: str) -> str:
    """kube's OpenAPI definition name of a custom kind: reversed group, version, kind (``com.example.v1.Foo``)."""
    return ".".join([*reversed(group.split(".")), version, kind])


def openapi_definitions(definition: dict[str, Any], version: str) -> dict[str, dict[str, Any]]:
    """OpenAPI v3 component schemas of one served version: the kind and its list, keyed by definition name.

    As apiextensions-apiserver's builder: apiVersion, kind and metadata with kube's descriptions
    (:func:`services.gateway.openapi.meta_descriptions`); the list's ``items`` "List of <plural>. More info:
    <api-conventions>". The documents add the meta fields of embedded resources (openapi.with_embedded_meta)."""
    n = crd.names(definition)
    grp, kind, list_kind = crd.group(definition), str(n.get("kind")), str(n.get("listKind"))
    name = _definition_name(grp, version, kind)
    docs = openapi.meta_descriptions()
    schema = copy.deepcopy(crd.schema(definition, version) or {"type": "object",
                                                               "x-kubernetes-preserve-unknown-fields": True})
    props = schema.setdefault("properties", {})
    props["apiVersion"] = {"type": "string", "description": docs["apiVersion"]}
    props["kind"] = {"type": "string", "description": docs["kind"]}
    props["metadata"] = {"$ref": f"#/components/schemas/{_OBJECT_META}", "description": docs["metadata"]}
    schema["type"] = "object"
    schema["x-kubernetes-group-version-kind"] = [{"group": grp, "kind": kind, "version": version}]
    items_doc = f"List of {n.get('plural')}. More info: {openapi.API_CONVENTIONS}"
    list_schema = {
        "type": "object", "description": f"{list_kind} is a list of {kind}", "required": ["items"],
        "properties": {"apiVersion": props["apiVersion"], "kind": props["kind"],
                       "items": {"type": "array", "description": items_doc,
                                 "items": {"$ref": f"#/components/schemas/{name}"}},
                       "metadata": {"$ref": f"#/components/schemas/{_LIST_META}",
                                    "description": docs["listMetadata"]}},
        "x-kubernetes-group-version-kind": [{"group": grp, "kind": list_kind, "version": version}],
    }
    return {name: schema, _definition_name(grp, version, list_kind): list_schema}


def _cell(column: dict[str, Any], obj: dict[str, Any]) -> Any:
    """One cell as apiextensions' table convertor makes it: first JSONPath match, typed; None when absent."""
    found = crd.jsonpath(obj, str(column.get("jsonPath")))
    if not found or found[0] is None:
        return None
    value, type_ = found[0], column.get("type")
    try:
        if type_ == "integer":  # Go's int64(float64): beyond int64 it is the minimum on amd64
            number = int(value)
            return number if -(1 << 63) <= number < (1 << 63) else -(1 << 63)
        if type_ == "number":
            return float(value)
        if type_ == "boolean":
            return bool(value)
        if type_ == "date":
            return age({"metadata": {"creationTimestamp": value}})
    except (TypeError, ValueError):
        return None
    return json.dumps(value) if isinstance(value, (dict, list)) else str(value)


def _column_description(column: dict[str, Any], defaulted: bool) -> str:
    if column.get("description"):
        return str(column["description"])
    if defaulted:
        return f"{printers_more.SWAGGER}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta#creationTimestamp"
    return f"Custom resource definition column (in JSONPath format): {column.get('jsonPath')}"


def printer(definition: dict[str, Any], version: str) -> Printer:
    """The Table printer of one version: its additionalPrinterColumns (default: Age), priority as given.

    A column without a description gets "Custom resource definition column (in JSONPath format): <jsonPath>"
    (apiextensions-apiserver tableconvertor.New); the default Age column the ObjectMeta creationTimestamp
    doc (serveDefaultColumnsIfEmpty)."""
    columns = crd.printer_columns(definition, version)
    defaulted = columns == [crd.AGE_COLUMN] and not (crd.version(definition, version) or {}).get(
        "additionalPrinterColumns")
    cols = tuple(Column(str(c["name"]), str(c.get("type") or "string"), int(c.get("priority") or 0),
                        str(c.get("format") or ""), _column_description(c, defaulted))
                 for c in columns)
    return Printer(cols, lambda obj: [_cell(c, obj) for c in columns], with_age=False)


class CustomResourceRegistry:
    """The CRDs this gateway serves, kept current from storage, and the CRD controller (see module doc)."""

    def __init__(self, storage: Any, registry: Registry = REGISTRY):
        self.storage = storage
        self.registry = registry
        self.crds: dict[str, dict[str, Any]] = {}
        self._by_gvr: dict[tuple[str, str, str], dict[str, Any]] = {}
        self._printed: set[tuple[str, str, str]] = set()
        self._watcher = Watcher(storage, crd.GROUP, crd.RESOURCE, self._changed)
        self._reconciling: dict[str, asyncio.Task[None]] = {}
        self._deleting_since: dict[str, float] = {}  # CRD name -> loop time of its first instance delete
        self._dirty: set[str] = set()  # CRDs changed while being reconciled
        # open watches of each served custom resource version: ended when the version stops being served
        self._watch_ends: dict[tuple[str, str, str], set[Callable[[], None]]] = {}

    def start(self) -> None:
        """Start watching CRDs."""
        self._watcher.start()

    @property
    def synced(self) -> bool:
        """True once the first list of CRDs arrived (the ``informer-sync`` check of ``/readyz``)."""
        return self._watcher.synced.is_set()

    async def wait_synced(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the first list; True once synced."""
        self.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._watcher.synced.wait()
        return self._watcher.synced.is_set()

    async def stop(self) -> None:
        """Stop watching and reconciling."""
        await self._watcher.stop()
        self._dirty.clear()
        for task in self._reconciling.values():
            task.cancel()

    def crd_of(self, resource: Resource) -> dict[str, Any] | None:
        """The CRD behind a served custom resource row, or None for built-ins."""
        return self._by_gvr.get((resource.group, resource.version, resource.resource))

    def on_unserved(self, resource: Resource, end: Callable[[], None]) -> Callable[[], None]:
        """Call ``end`` once when ``resource`` (a custom resource version) stops being served (its CRD deleted, or
        the version dropped), as apiextensions-apiserver tears down the storage and so ends every watch of it;
        returns the function that forgets ``end`` (call it when the watch ends by itself)."""
        key = (resource.group, resource.version, resource.resource)
        ends = self._watch_ends.setdefault(key, set())
        ends.add(end)

        def forget() -> None:
            ends.discard(end)
            if not ends and self._watch_ends.get(key) is ends:
                del self._watch_ends[key]

        return forget

    def selectable_fields(self, resource: Resource) -> list[str]:
        """The field labels a custom resource's version adds to field selectors (its ``selectableFields``)."""
        definition = self.crd_of(resource)
        return crd.selectable_fields(definition, resource.version) if definition is not None else []

    def check(self, resource: Resource, verb: str, content_type: str, warnings: list[str]) -> None:
        """Per-request rules of a custom resource: adds its Warnings to ``warnings`` (the request's recorder);
        raises 405/415 as apiextensions does.

        A deprecated version warns, before anything else (apiextensions'
        crdHandler adds it before serving, so a refusal carries it too); a
        create while the CRD is terminating is 405 MethodNotAllowed; a
        strategic merge patch is 415 (custom resources have no patch
        strategies).
        """
        definition = self.crd_of(resource)
        if definition is None:
            return
        warning = crd.deprecation_warning(definition, resource.version)
        if warning:
            warnings.append(warning)
        if verb == "patch" and content_type == "application/strategic-merge-patch+json":
            raise errors.StatusError(415, "UnsupportedMediaType", "the body of the request was in an unknown format "
                                     "- accepted media types include: application/json-patch+json, "
                                     "application/merge-patch+json, application/apply-patch+yaml")
        if verb == "create" and crd.terminating(definition):
            raise errors.StatusError(405, "MethodNotAllowed",
                                     "create not allowed while custom resource definition is terminating")

    # --- serving ---------------------------------------------------------------------------------------------

    def _changed(self, items: dict[str, dict[str, Any]]) -> None:
        self.crds = dict(items)
        rows: list[Resource] = []
        by_gvr: dict[tuple[str, str, str], dict[str, Any]] = {}
        definitions: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
        extra: dict[str, dict[str, Any]] = {}
        for definition in self.crds.values():
            for row in crd.rows(definition):
                rows.append(row)
                by_gvr[(row.group, row.version, row.resource)] = definition
        self.registry.set_overlay(rows)
        rows = [r for r in rows if not self.registry.is_static(r)
                and self.registry.get(r.group, r.version, r.resource) == r]
        for row in rows:
            definition = by_gvr[(row.group, row.version, row.resource)]
            defs = openapi_definitions(definition, row.version)
            extra.update(defs)
            first = next(iter(defs))
            definitions[(row.group, row.version, row.kind)] = (first, defs[first])
        # one printer per served version, as apiextensions-apiserver's table convertor per version
        served = {(r.group, r.version, r.resource): r for r in rows}
        for key in self._printed - set(served):
            printers.VERSIONED.pop(key, None)
        for key, row in served.items():
            printers.VERSIONED[key] = printer(by_gvr[key], row.version)
        self._printed = set(served)
        gone = [gvr for gvr, definition in self._by_gvr.items() if
                (by_gvr.get(gvr) or {}).get("metadata", {}).get("uid") != definition.get("metadata", {}).get("uid")]
        self._by_gvr = by_gvr
        for gvr in gone:  # a deleted (or deleted and recreated) CRD's watches end, as the storage torn down
            for end in list(self._watch_ends.pop(gvr, ())):
                end()
        openapi.set_custom(definitions, extra)
        for name, definition in self.crds.items():
            self._reconcile_soon(name, definition)

    # --- the CRD controller --------------------------------------------------------------------------------

    def _reconcile_soon(self, name: str, definition: dict[str, Any]) -> None:
        """Start reconciling ``name`` unless nothing is to do; a change seen while a reconcile of it runs is
        taken again when that one ends (a workqueue's dirty key: each controller step is its own write)."""
        if name in self._reconciling:
            self._dirty.add(name)
            return
        if not self._needs_work(definition):
            return
        task = asyncio.get_running_loop().create_task(self._reconcile(name), name=f"crd-{name}")
        self._reconciling[name] = task
        task.add_done_callback(lambda t: self._reconciled(name, t))

    def _reconciled(self, name: str, task: asyncio.Task[None]) -> None:
        self._reconciling.pop(name, None)
        if name in self._dirty and not task.cancelled():
            self._dirty.discard(name)
            current = self.crds.get(name)
            if current is not None:
                self._reconcile_soon(name, current)

    def _needs_work(self, definition: dict[str, Any]) -> bool:
        if crd.terminating(definition):
            return True
        wanted = copy.deepcopy(definition)
        return self._desired_status(wanted)

    def _desired_status(self, definition: dict[str, Any]) -> bool:
        """Take the next controller step on ``definition`` in place; True if anything changed (one status write).

        Each step is one of kube's controllers' ``UpdateStatus`` calls, taken one per write as they are:
        the apiapproval controller's KubernetesAPIApprovalPolicyConformant condition (protected groups),
        then the naming controller's acceptedNames and NamesAccepted with Established False ``Installing``
        (or ``NotAccepted`` on a name conflict), then, once NamesAccepted True is stored, the establishing
        controller's Established True ``InitialNamesAccepted``.
        """
        approval = crd.approval_condition(definition)
        if approval is not None and crd.set_condition(definition, crd.APPROVAL_CONDITION, *approval):
            return True
        if self._naming_step(definition):
            return True
        if crd.is_true(definition, "NamesAccepted") and not crd.is_true(definition, "Established"):
            return crd.set_condition(definition, "Established", "True", "InitialNamesAccepted",
                                     "the initial names have been accepted")
        return False

    def _naming_step(self, definition: dict[str, Any]) -> bool:
        """The naming controller (``pkg/controller/status/naming_controller.go``): True if it changed anything.

        Nothing to do once ``status.acceptedNames`` equals the spec's names. Otherwise each requested name
        is accepted if it is already this CRD's accepted name or no CRD of the group (this one included)
        has accepted it: plural, singular and shortNames against the group's accepted plurals, singulars and
        short names; kind and listKind against its kinds and list kinds. A name in use keeps the old
        accepted one and sets NamesAccepted False (``PluralConflict``, ``SingularConflict``,
        ``ShortNamesConflict``, ``KindConflict``, ``ListKindConflict``; the last one found, ``"<name>" is
        already in use``), else True ``NoConflicts``. Established: the stored one (False ``NotAccepted`` when
        absent), replaced by False ``Installing`` when not True and the names are accepted.
        """
        requested = _names_struct(crd.names(definition))
        status = definition.setdefault("status", {})
        accepted = _names_struct(_dict(status.get("acceptedNames")))
        if requested == accepted:
            return False
        group = crd.group(definition)
        resources: set[str] = set()
        kinds: set[str] = set()
        for other in [*(c for n, c in self.crds.items() if n != definition["metadata"]["name"]), definition]:
            if crd.group(other) != group:
                continue
            names = _names_struct(_dict(_dict(other.get("status")).get("acceptedNames")))
            resources.update([names.get("plural", ""), names.get("singular", ""), *names.get("shortNames", [])])
            kinds.update([names.get("kind", ""), names.get("listKind", "")])
        new = dict(accepted)
        conflict: tuple[str, str] | None = None

        def fresh(key: str, used: set[str], reason: str) -> None:
            nonlocal conflict
            wanted, have = requested.get(key, ""), accepted.get(key, "")
            if wanted != have and wanted in used:
                conflict = (reason, f'"{wanted}" is already in use')
            else:
                new[key] = wanted

        fresh("plural", resources, "PluralConflict")
        fresh("singular", resources, "SingularConflict")
        wanted_short = requested.get("shortNames", [])
        if wanted_short != accepted.get("shortNames", []):
            have_short = set(accepted.get("shortNames", []))
            taken = [f'"{short}" is already in use' for short in wanted_short
                     if short not in have_short and short not in (accepted.get("plural"), accepted.get("singular"))
                     and short in resources]
            if taken:
                conflict = ("ShortNamesConflict", taken[0] if len(taken) == 1 else "[" + ", ".join(taken) + "]")
            else:
                new["shortNames"] = wanted_short
        fresh("kind", kinds, "KindConflict")
        fresh("listKind", kinds, "ListKindConflict")
        new["categories"] = requested.get("categories", [])
        new = _names_struct(new)
        named = ("False", *conflict) if conflict else ("True", "NoConflicts", "no conflicts found")
        old_named = crd.condition(definition, "NamesAccepted")
        if new == accepted and old_named is not None and (
                old_named.get("status"), old_named.get("reason"), old_named.get("message")) == named:
            return False
        status["acceptedNames"] = new
        crd.set_condition(definition, "NamesAccepted", *named)
        if crd.condition(definition, "Established") is None:
            crd.set_condition(definition, "Established", "False", "NotAccepted", "not all names are accepted")
        if named[0] == "True" and not crd.is_true(definition, "Established"):
            # Established True waits for the establishing controller to see NamesAccepted in a later event
            crd.set_condition(definition, "Established", "False", "Installing", "the initial names have been accepted")
        return True

    async def _write(self, definition: dict[str, Any], live: dict[str, Any]) -> bool:
        """Write ``definition``'s status as kube's controllers do (``UpdateStatus``), conditioned on the revision
        read; False on a conflict or absence (someone else moved it on).

        managedFields record the change for manager ``kube-apiserver`` (the apiextensions controllers'
        loopback User-Agent), operation Update, subresource ``status``; metadata and spec are the status
        strategy's reset fields, so only status paths are owned.
        """
        meta = definition["metadata"]
        fields = mf.update(live, definition, CONTROLLER_MANAGER, f"{crd.GROUP}/v1", crd.now(), _crd_types(),
                           "status", ("metadata", "spec"))
        if fields:
            meta["managedFields"] = fields
        else:
            meta.pop("managedFields", None)
        try:
            await grpcutil.call("storage", self.storage.Update, storage_pb2.UpdateRequest(
                key=storage_pb2.ResourceKey(group=crd.GROUP, resource=crd.RESOURCE, name=meta["name"]),
                object=jsonutil.dumps(definition), expected_resource_version=int(meta.get("resourceVersion") or 0)),
                timeout=10)
        except errors.StatusError as err:
            if err.code in (404, 409):
                return False
            raise
        return True

    async def _reconcile(self, name: str) -> None:
        try:
            while True:
                current = self.crds.get(name)
                if current is None:
                    return
                definition = copy.deepcopy(current)
                if crd.terminating(definition):
                    if await self._finalize(definition, current):
                        return
                elif self._desired_status(definition):
                    await self._write(definition, current)
                    return
                else:
                    return
                await asyncio.sleep(RETRY_DELAY)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("reconciling CustomResourceDefinition %s", name)

    async def _finalize(self, definition: dict[str, Any], live: dict[str, Any]) -> bool:
        """One step of kube's CRD finalizer (``pkg/controller/finalizer/crd_finalizer.go``); True when done.

        Terminating True ``InstanceDeletionInProgress`` first (its own write); then a CRD whose storage
        overlaps a built-in resource (``apiservices.apiregistration.k8s.io``,
        ``customresourcedefinitions.apiextensions.k8s.io``) keeps its objects (False
        ``OverlappingBuiltInResource``), one never Established has none (False ``NeverEstablished``), and
        otherwise its objects are deleted until none is left (False ``InstanceDeletionCompleted``) and the
        finalizer is removed. Objects still there :data:`INSTANCE_DELETION_TIMEOUT` seconds after the first
        delete (e.g. held by their own finalizers) set True ``InstanceDeletionCheck`` with kube's message
        (its poll's context deadline), and the deletion starts over.
        """
        meta = definition["metadata"]
        name = meta["name"]
        if crd.CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
            self._deleting_since.pop(name, None)
            return True
        if crd.set_condition(definition, "Terminating", "True", "InstanceDeletionInProgress",
                             "CustomResource deletion is in progress"):
            await self._write(definition, live)
            return False
        plural = str(crd.names(definition).get("plural") or "")
        if (crd.group(definition), plural) in OVERLAPPING_BUILT_IN_RESOURCES:
            crd.set_condition(definition, "Terminating", "False", "OverlappingBuiltInResource",
                              "instances overlap with built-in resources in storage")
            return await self._remove_finalizer(definition, live)
        if not crd.is_true(definition, "Established"):
            crd.set_condition(definition, "Terminating", "False", "NeverEstablished", "resource was never established")
            return await self._remove_finalizer(definition, live)
        key = storage_pb2.ResourceKey(group=crd.group(definition), resource=plural)
        listed: Any = await grpcutil.call("storage", self.storage.List, storage_pb2.ListRequest(key=key), timeout=30)
        for raw in listed.items:
            obj_meta = jsonutil.loads(raw).get("metadata") or {}
            if obj_meta.get("deletionTimestamp"):
                continue  # waiting for its own finalizers
            with contextlib.suppress(errors.StatusError):
                await grpcutil.call("storage", self.storage.Delete, storage_pb2.DeleteRequest(
                    key=storage_pb2.ResourceKey(group=key.group, resource=plural,
                                                namespace=obj_meta.get("namespace") or "", name=obj_meta.get("name")),
                ), timeout=10)
        if not listed.items:
            crd.set_condition(definition, "Terminating", "False", "InstanceDeletionCompleted", "removed all instances")
            return await self._remove_finalizer(definition, live)
        now = asyncio.get_running_loop().time()
        started = self._deleting_since.setdefault(name, now)
        if now - started < INSTANCE_DELETION_TIMEOUT:
            return False
        del self._deleting_since[name]
        crd.set_condition(definition, "Terminating", "True", "InstanceDeletionCheck",
                          "could not confirm zero CustomResources remaining: context deadline exceeded")
        await self._write(definition, live)
        return False

    async def _remove_finalizer(self, definition: dict[str, Any], live: dict[str, Any]) -> bool:
        """Drop the cleanup finalizer in the same status write as the final Terminating condition (kube's
        CRDRemoveFinalizer + UpdateStatus), which lets storage delete the CRD; True."""
        meta = definition["metadata"]
        meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != crd.CLEANUP_FINALIZER]
        self._deleting_since.pop(meta["name"], None)
        await self._write(definition, live)
        return True


def _names_struct(names: dict[str, Any]) -> dict[str, Any]:
    """CustomResourceDefinitionNames as Go encodes it: plural and kind always, the others when not empty."""
    out: dict[str, Any] = {}
    for key in ("plural", "singular", "shortNames", "kind", "listKind", "categories"):
        value = names.get(key)
        if key in ("shortNames", "categories"):
            value = [str(v) for v in value] if isinstance(value, list) else []
        else:
            value = value if isinstance(value, str) else ""
        if value or key in ("plural", "kind"):
            out[key] = value
    return out


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
