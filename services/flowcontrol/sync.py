"""FlowSchemas and PriorityLevelConfigurations from storage into the APF controller, and their upkeep.

:class:`ConfigSync` works like an informer plus kube's APF configuration
controller (k8s.io/apiserver pkg/util/flowcontrol apf_controller.go and
the ``bootstrap-system-flowcontrol-configuration`` post-start hook):

- per kind a :class:`kapi.informer.Informer` lists, then watches from the
  list's resourceVersion; a 410 Expired re-lists at once, any other
  failure after a capped backoff. Each change reconfigures the
  :class:`~services.flowcontrol.apf.Controller` at once.
- after every change it keeps the defaults ("Mandatory and suggested
  configuration objects"): a missing default object is created; a
  mandatory one (exempt, catch-all) gets its default spec back whenever it
  differs (the ``exempt`` level keeps its own ``spec.exempt``); a suggested one only while it carries
  ``apf.kubernetes.io/autoupdate-spec: "true"`` (or carries no such
  annotation and was never changed, generation 1).
- it writes the ``Dangling`` condition of every FlowSchema (``True``,
  reason ``NotFound``, when its priority level does not exist; ``False``,
  reason ``Found``, otherwise), only when it changes.

Writes go straight to storage with the object's resourceVersion as
precondition; a Conflict is left for the next round (the watch brings the
newer object, which triggers it). They bypass admission, so what they write
is already what admission would store: the default specs are in v1-defaulted
form and pass kapi.kinds.flowcontrol's validation (tests/kinds/test_flowcontrol.py
holds them to it).
"""

from __future__ import annotations

import asyncio
import copy
import datetime
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from kapi import errors, jsonutil
from kapi.informer import Informer, StorageListerWatcher
from kapi.kinds import flowcontrol as kinds
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.flowcontrol import config as cfg
from services.flowcontrol import defaults
from services.flowcontrol.apf import Controller

log = logging.getLogger(__name__)

RESOURCES = (defaults.PRIORITY_LEVELS, defaults.FLOW_SCHEMAS)
DANGLING = "Dangling"
_DEFAULT_KEYS = [(resource, obj["metadata"]["name"]) for resource, obj in defaults.default_objects()]


def key(resource: str, name: str = "") -> storage_pb2.ResourceKey:
    """The storage key of a flowcontrol collection or object."""
    return storage_pb2.ResourceKey(group=defaults.GROUP, resource=resource, name=name)


def dangling_condition(priority_level: str, exists: bool, now: str) -> dict[str, Any]:
    """The FlowSchema ``Dangling`` condition kube writes (messages as kube-apiserver's)."""
    if exists:
        return {"type": DANGLING, "status": "False", "reason": "Found", "lastTransitionTime": now,
                "message": f'This FlowSchema references the PriorityLevelConfiguration object named '
                           f'"{priority_level}" and it exists'}
    return {"type": DANGLING, "status": "True", "reason": "NotFound", "lastTransitionTime": now,
            "message": f'This FlowSchema references the PriorityLevelConfiguration object named '
                       f'"{priority_level}" but there is no such object'}


def _kept_exempt(name: str, obj: dict[str, Any], default_spec: dict[str, Any]) -> dict[str, Any]:
    """``default_spec`` as it applies to ``obj``: the mandatory ``exempt`` level keeps its own ``spec.exempt``.

    kube's validation lets an administrator tune the exempt level's
    ``nominalConcurrencyShares``/``lendablePercent`` and its ensurer keeps
    them (kapi.kinds.flowcontrol, "Mandatory Configuration Objects").
    """
    spec = obj.get("spec")
    if name == defaults.EXEMPT and "type" in default_spec and isinstance(spec, dict) \
            and isinstance(spec.get("exempt"), dict):
        return {**default_spec, "exempt": spec["exempt"]}
    return default_spec


def wants_default_spec(name: str, obj: dict[str, Any], default_spec: dict[str, Any]) -> bool:
    """True if the stored default object ``obj`` should get ``default_spec`` back (module docstring rules).

    Specs compare as kube's ensurer compares them: semantically (a missing
    list, string or false equals its empty value), both sides v1-defaulted.
    """
    spec = obj.get("spec")
    kind = "PriorityLevelConfiguration" if "type" in default_spec else "FlowSchema"
    if isinstance(spec, dict) and kinds.specs_equal(kind, spec, _kept_exempt(name, obj, default_spec)):
        return False
    meta = obj.get("metadata") or {}
    if name in defaults.MANDATORY_NAMES:
        return True
    annotation = (meta.get("annotations") or {}).get(defaults.AUTOUPDATE_ANNOTATION)
    if annotation is None:
        return int(meta.get("generation") or 1) <= 1
    return annotation == "true"


class ConfigSync:
    """Keeps a :class:`Controller` configured from storage and keeps the default objects (module docstring).

    Until both kinds are listed and every default object is stored
    (``synced``), the controller runs on the built-in defaults. ``sleep``
    is injectable for tests; timeouts and backoffs are seconds.
    """

    def __init__(self, stub: storage_pb2_grpc.StorageStub, controller: Controller, *, timeout: float = 10.0,
                 min_backoff: float = 0.1, max_backoff: float = 5.0,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep):
        self._stub = stub
        self._controller = controller
        self._timeout = timeout
        self._min_backoff, self._max_backoff = min_backoff, max_backoff
        self._sleep = sleep
        self.objects: dict[str, dict[str, dict[str, Any]]] = {r: {} for r in RESOURCES}
        self._listed: set[str] = set()
        self.synced = asyncio.Event()
        self.maintained = asyncio.Event()
        self._changed = asyncio.Event()
        self.informers: list[Informer] = []
        for resource in RESOURCES:
            informer = Informer(StorageListerWatcher(stub, defaults.GROUP, resource, list_timeout=timeout),
                                name=resource, keep_store=False, min_backoff=min_backoff, max_backoff=max_backoff,
                                sleep=sleep)
            informer.on(replace=functools.partial(self._replace, resource),
                        event=functools.partial(self._apply, resource), change=self._changed_now)
            self.informers.append(informer)
        built_in = defaults.default_objects()
        controller.configure(
            [cfg.FlowSchema.from_json(o) for r, o in built_in if r == defaults.FLOW_SCHEMAS],
            [cfg.PriorityLevel.from_json(o) for r, o in built_in if r == defaults.PRIORITY_LEVELS])

    async def run(self) -> None:
        """Sync both kinds and maintain the defaults until cancelled."""
        await asyncio.gather(*(informer.run() for informer in self.informers), self._maintain_forever())

    # ------------------------------------------------------------ informer callbacks

    def _replace(self, resource: str, objects: list[dict[str, Any]], revision: int) -> None:
        self.objects[resource] = {str(obj["metadata"]["name"]): obj for obj in objects}
        self._listed.add(resource)

    def _apply(self, resource: str, event_type: str, obj: dict[str, Any], revision: int) -> None:
        name = str(obj["metadata"]["name"])
        if event_type == "DELETED":
            self.objects[resource].pop(name, None)
        else:
            self.objects[resource][name] = obj

    def _changed_now(self) -> None:
        if not self._listed.issuperset(RESOURCES):
            return
        self._changed.set()
        if not self.synced.is_set():
            present = all(name in self.objects[resource] for resource, name in _DEFAULT_KEYS)
            if not present:  # keep the built-in defaults until the stored ones exist
                return
            self.synced.set()
        schemas = cfg.parse_all(list(self.objects[defaults.FLOW_SCHEMAS].values()), cfg.FlowSchema.from_json)
        levels = cfg.parse_all(list(self.objects[defaults.PRIORITY_LEVELS].values()), cfg.PriorityLevel.from_json)
        self._controller.configure(schemas, levels)

    # ------------------------------------------------------------ upkeep

    async def _maintain_forever(self) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            try:
                await self.maintain()
                self.maintained.set()
            except errors.StatusError as exc:
                log.warning("maintaining APF objects failed: %s; retrying", exc.message)
                await self._sleep(self._min_backoff)
                self._changed.set()
            except Exception:
                log.exception("maintaining APF objects failed; retrying")
                await self._sleep(self._max_backoff)
                self._changed.set()

    async def maintain(self) -> int:
        """One round: create/restore the defaults, then write changed Dangling conditions; returns writes made.

        Raises StatusError when storage is unavailable (AlreadyExists and
        Conflict are not errors: the watch brings the newer state).
        """
        writes = 0
        specs = {defaults.PRIORITY_LEVELS: defaults.priority_level_specs(),
                 defaults.FLOW_SCHEMAS: defaults.flow_schema_specs()}
        for resource, obj in defaults.default_objects():
            name = obj["metadata"]["name"]
            current = self.objects[resource].get(name)
            if current is None:
                writes += await self._write(resource, name, obj, create=True)
            elif wants_default_spec(name, current, specs[resource][name]):
                updated = copy.deepcopy(current)
                updated["spec"] = _kept_exempt(name, current, specs[resource][name])
                meta = updated.setdefault("metadata", {})
                meta["generation"] = int(meta.get("generation") or 1) + 1
                meta.setdefault("annotations", {})[defaults.AUTOUPDATE_ANNOTATION] = "true"
                writes += await self._write(resource, name, updated)
        levels = set(self.objects[defaults.PRIORITY_LEVELS])
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for name, obj in list(self.objects[defaults.FLOW_SCHEMAS].items()):
            level = str(((obj.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name") or "")
            wanted = dangling_condition(level, level in levels, now)
            conditions = list((obj.get("status") or {}).get("conditions") or [])
            current_condition = next((c for c in conditions if c.get("type") == DANGLING), None)
            if current_condition is not None and all(
                    current_condition.get(k) == wanted[k] for k in ("status", "reason", "message")):
                continue
            updated = copy.deepcopy(obj)
            updated["status"] = {**(updated.get("status") or {}),
                                 "conditions": [c for c in conditions if c.get("type") != DANGLING] + [wanted]}
            writes += await self._write(defaults.FLOW_SCHEMAS, name, updated)
        return writes

    async def _write(self, resource: str, name: str, obj: dict[str, Any], create: bool = False) -> int:
        try:
            if create:
                await self._stub.Create(storage_pb2.CreateRequest(key=key(resource, name), object=jsonutil.dumps(obj)),
                                        timeout=self._timeout)
                log.info("created %s %s", resource, name)
            else:
                revision = int((obj.get("metadata") or {}).get("resourceVersion") or 0)
                await self._stub.Update(storage_pb2.UpdateRequest(
                    key=key(resource, name), object=jsonutil.dumps(obj), expected_resource_version=revision),
                    timeout=self._timeout)
            return 1
        except grpc.RpcError as exc:
            err = errors.from_rpc_error(exc, "storage")
        if err.reason in ("AlreadyExists", "Conflict", "NotFound"):
            return 0
        if err.code in (503, 504):
            raise err
        log.error("cannot write %s %s: %s", resource, name, err.message)
        return 0
