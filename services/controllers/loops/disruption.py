"""disruption: PodDisruptionBudget status (kube ``pkg/controller/disruption/disruption.go``, trySync).

The eviction subresource refuses every eviction under a budget whose
``status.observedGeneration`` is behind its ``metadata.generation`` (429
``The disruption budget <name> is still being processed by the server.``)
and otherwise spends ``status.disruptionsAllowed``. This loop writes that
status, as kube-controller-manager's ``disruption`` controller does:

- the budget's pods: those of its namespace its ``spec.selector`` selects
  (a null selector selects none, ``{}`` every pod);
- ``expectedPods`` and ``desiredHealthy`` (getExpectedPodCount): an integer
  ``minAvailable`` is ``desiredHealthy`` with ``expectedPods`` the number of
  pods; a percentage ``minAvailable`` or any ``maxUnavailable`` needs the
  pods' controllers' scale (getExpectedScale: each controller counted once,
  a ReplicaSet owned by a Deployment counting as the Deployment; the
  ReplicationController, Deployment, ReplicaSet or StatefulSet
  ``spec.replicas``, else the owner's ``scale`` subresource), the percentage
  rounded up, ``desiredHealthy`` = expected - maxUnavailable (not below 0);
  pods without a controller are left out of the count; a controller found
  nowhere fails the sync (``found no controllers for pod "<name>"``);
- ``currentHealthy`` (countHealthyPods): Ready pods neither being deleted
  nor named in ``disruptedPods`` less than 2 minutes ago (DeletionTimeout);
  entries older than that, or of pods gone or being deleted, are dropped
  (buildDisruptedPodMap) and the budget is looked at again when the oldest
  kept one expires;
- ``disruptionsAllowed`` = currentHealthy - desiredHealthy, 0 when negative
  or when no pod is expected; ``observedGeneration`` the budget's
  generation; the ``DisruptionAllowed`` condition True ``SufficientPods``
  when disruptions are allowed, else False ``InsufficientPods``
  (pdbhelper.UpdateDisruptionAllowedCondition, meta.SetStatusCondition: the
  transition time moves only with the status);
- nothing is written when all of that is already the status
  (updatePdbStatus); a failed sync writes ``disruptionsAllowed: 0`` and the
  condition False ``SyncFailed`` with the error as message (failSafe).

Writes are a PUT of ``/status`` carrying the cached resourceVersion (a
Conflict is retried from the next cache state). Budgets are queued on their
own changes and on every change of a pod they select (before or after).
kapi records no Events (kube's ``NoPods``, ``UnmanagedPods``,
``CalculateExpectedPodCountFailed``, ``NotDeleted``) and does not run kube's
stale-disruption-condition worker (resetting a pod's ``DisruptionTarget``
condition 2 minutes after an eviction that did not delete it).
"""

from __future__ import annotations

import copy
import datetime
import logging
import math
from typing import Any

from kapi.selectors import SelectorError, label_selector_matches
from services.controllers.client import ApiError, Client, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue, key_of, split_key
from services.controllers.objects import meta, row

log = logging.getLogger(__name__)

PDBS = row("policy", "poddisruptionbudgets")
PODS = row("", "pods")
DELETION_TIMEOUT = datetime.timedelta(minutes=2)  # kube disruption.DeletionTimeout
CONDITION = "DisruptionAllowed"

# controller kinds whose spec.replicas is read directly (kube's finders), as (group, kind) -> (version, resource)
_FINDERS = {
    ("", "ReplicationController"): ("v1", "replicationcontrollers"),
    ("apps", "ReplicaSet"): ("v1", "replicasets"),
    ("apps", "Deployment"): ("v1", "deployments"),
    ("apps", "StatefulSet"): ("v1", "statefulsets"),
}


class SyncError(Exception):
    """A budget whose expected pod count cannot be computed (its message becomes the SyncFailed condition's)."""


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(microsecond=0)


def _format(t: datetime.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(text: Any) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def selects(pdb: dict[str, Any], pod: dict[str, Any]) -> bool:
    """True if ``pdb``'s selector selects ``pod`` (same namespace; a null selector selects nothing; a selector
    kube could not build selects nothing either)."""
    selector = (pdb.get("spec") or {}).get("selector")
    if not isinstance(selector, dict) or meta(pod).get("namespace") != meta(pdb).get("namespace"):
        return False
    labels = meta(pod).get("labels")
    try:
        return label_selector_matches(selector, labels if isinstance(labels, dict) else {})
    except SelectorError:
        return False


def pod_ready(pod: dict[str, Any]) -> bool:
    """The pod's ``Ready`` condition is True (kube ``podutil.IsPodReady``)."""
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def scaled(value: Any, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent with roundUp: an integer as is, ``"<n>%"`` of ``total`` rounded up.
    Raises SyncError for another string."""
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%") or not text[:-1].lstrip("-").isdigit():
        raise SyncError("invalid value for IntOrString: invalid type: string is not a percentage")
    return math.ceil(int(text[:-1]) * total / 100)


def disrupted_pods(pdb: dict[str, Any], pods: list[dict[str, Any]], now: datetime.datetime
                   ) -> tuple[dict[str, str], datetime.datetime | None]:
    """buildDisruptedPodMap: the ``status.disruptedPods`` entries still pending (pod live, not being deleted,
    recorded less than DeletionTimeout ago) and when the oldest of them expires (None: none kept)."""
    recorded = (pdb.get("status") or {}).get("disruptedPods")
    kept: dict[str, str] = {}
    recheck: datetime.datetime | None = None
    if not isinstance(recorded, dict):
        return kept, recheck
    for pod in pods:
        name = meta(pod).get("name", "")
        if meta(pod).get("deletionTimestamp") or name not in recorded:
            continue
        when = _parse(recorded[name])
        if when is None:
            continue
        expires = when + DELETION_TIMEOUT
        if expires >= now:
            kept[name] = _format(when)
            recheck = expires if recheck is None or expires < recheck else recheck
    return kept, recheck


def current_healthy(pods: list[dict[str, Any]], disrupted: dict[str, str], now: datetime.datetime) -> int:
    """countHealthyPods: Ready pods neither being deleted nor recently disrupted."""
    count = 0
    for pod in pods:
        if meta(pod).get("deletionTimestamp"):
            continue
        when = _parse(disrupted.get(meta(pod).get("name", ""), ""))
        if when is not None and when + DELETION_TIMEOUT > now:
            continue
        count += pod_ready(pod)
    return count


def set_condition(status: dict[str, Any], condition: dict[str, Any], now: datetime.datetime) -> None:
    """meta.SetStatusCondition: add ``condition`` (transition time now), or update the one of its type (the
    transition time moving only when the status changes)."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = status["conditions"] = []
    wanted = {k: v for k, v in condition.items() if not (k == "observedGeneration" and not v)}
    for existing in conditions:
        if isinstance(existing, dict) and existing.get("type") == condition["type"]:
            if existing.get("status") != condition["status"] or not existing.get("lastTransitionTime"):
                existing["lastTransitionTime"] = _format(now)
            for key in ("reason", "message", "observedGeneration"):
                existing.pop(key, None)
            existing.update(wanted)
            return
    conditions.append({**wanted, "lastTransitionTime": _format(now)})


def conditions_up_to_date(pdb: dict[str, Any]) -> bool:
    """pdbhelper.ConditionsAreUpToDate: the status is of this generation and its DisruptionAllowed condition
    says what ``disruptionsAllowed`` says."""
    status = pdb.get("status") or {}
    if int(status.get("observedGeneration") or 0) != int(meta(pdb).get("generation") or 0):
        return False
    cond = next((c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == CONDITION),
                None)
    if cond is None:
        return False
    if int(status.get("disruptionsAllowed") or 0) > 0:
        return cond.get("status") == "True" and cond.get("reason") == "SufficientPods"
    return cond.get("status") == "False" and cond.get("reason") == "InsufficientPods"


class DisruptionController:
    """Writes each PodDisruptionBudget's status from the pods it selects (see the module docstring)."""

    name = "disruption"

    def __init__(self, ctx: Context):
        self.client: Client = ctx.client
        self.queue = WorkQueue(self.name)
        self.pdbs = ctx.informer(PDBS)
        self.pods = ctx.informer(PODS)
        self.pdbs.on(add=lambda p: self.queue.add(key_of(p)), update=lambda _o, n: self.queue.add(key_of(n)))
        self.pods.on(add=self._pod, update=self._pod_update, delete=self._pod)

    def _pod_update(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._pod(old)
        self._pod(new)

    def _pod(self, pod: dict[str, Any]) -> None:
        for pdb in self.pdbs.items():
            if selects(pdb, pod):
                self.queue.add(key_of(pdb))

    async def run(self) -> None:
        """Process budgets until cancelled."""
        await self.queue.run(self.sync)

    async def _replicas(self, namespace: str, group: str, version: str, resource: str, name: str,
                        uid: str) -> tuple[dict[str, Any], int] | None:
        """The live controller (UID checked) and its ``spec.replicas`` (1 when unset), or None when absent."""
        try:
            obj = await self.client.get(f"/{'apis/' + group if group else 'api'}/{version}/namespaces/{namespace}"
                                        f"/{resource}/{name}")
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if meta(obj).get("uid") != uid:
            return None
        replicas = (obj.get("spec") or {}).get("replicas")
        return obj, int(replicas) if isinstance(replicas, int) else 1

    async def _scale_resource(self, group: str, version: str, kind: str) -> str | None:
        """The resource of ``kind`` in ``group/version`` that has a ``scale`` subresource (discovery)."""
        try:
            listing = await self.client.get(f"/apis/{group}/{version}" if group else f"/api/{version}")
        except ApiError:
            return None
        names = {r.get("name") for r in listing.get("resources") or [] if isinstance(r, dict)}
        for entry in listing.get("resources") or []:
            if isinstance(entry, dict) and entry.get("kind") == kind and "/" not in str(entry.get("name")):
                if f"{entry.get('name')}/scale" in names:
                    return str(entry["name"])
        return None

    async def _controller_scale(self, namespace: str, ref: dict[str, Any]) -> tuple[str, int] | None:
        """(controller UID, replicas) of a pod's controller reference, or None when no finder knows it."""
        group, _, version = str(ref.get("apiVersion") or "").rpartition("/")
        kind, name, uid = str(ref.get("kind") or ""), str(ref.get("name") or ""), str(ref.get("uid") or "")
        if (group, kind) == ("apps", "ReplicaSet"):
            found = await self._replicas(namespace, "apps", "v1", "replicasets", name, uid)
            if found is None:
                return None
            rs, replicas = found
            owner = next((o for o in meta(rs).get("ownerReferences") or [] if isinstance(o, dict)
                          and o.get("controller") is True), None)
            if owner is not None and owner.get("kind") == "Deployment" \
                    and str(owner.get("apiVersion", "")).startswith("apps/"):
                deployment = await self._replicas(namespace, "apps", "v1", "deployments", str(owner.get("name")),
                                                  str(owner.get("uid")))
                return (str(owner.get("uid")), deployment[1]) if deployment is not None else None
            return uid, replicas
        if (group, kind) in _FINDERS:
            ver, resource = _FINDERS[(group, kind)]
            found = await self._replicas(namespace, group, ver, resource, name, uid)
            return (uid, found[1]) if found is not None else None
        found_resource = await self._scale_resource(group, version, kind)
        if found_resource is None:
            return None
        prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            scale = await self.client.get(f"{prefix}/namespaces/{namespace}/{found_resource}/{name}/scale")
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if meta(scale).get("uid") != uid:
            return None
        return uid, int((scale.get("spec") or {}).get("replicas") or 0)

    async def expected_scale(self, namespace: str, pods: list[dict[str, Any]]) -> int:
        """getExpectedScale: the summed scale of the pods' controllers, each counted once; pods without a
        controller are skipped. Raises SyncError for a controller no finder knows."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = next((o for o in meta(pod).get("ownerReferences") or [] if isinstance(o, dict)
                        and o.get("controller") is True), None)
            if ref is None or str(ref.get("uid")) in scales:
                continue
            found = await self._controller_scale(namespace, ref)
            if found is None:
                raise SyncError(f'found no controllers for pod "{meta(pod).get("name", "")}"')
            scales[found[0]] = found[1]
        return sum(scales.values())

    async def expected_counts(self, pdb: dict[str, Any], pods: list[dict[str, Any]]) -> tuple[int, int]:
        """getExpectedPodCount: (expectedPods, desiredHealthy)."""
        spec = pdb.get("spec") or {}
        namespace = meta(pdb).get("namespace", "")
        if spec.get("maxUnavailable") is not None:
            expected = await self.expected_scale(namespace, pods)
            return expected, max(expected - scaled(spec["maxUnavailable"], expected), 0)
        if spec.get("minAvailable") is not None:
            if isinstance(spec["minAvailable"], int):
                return len(pods), spec["minAvailable"]
            expected = await self.expected_scale(namespace, pods)
            return expected, scaled(spec["minAvailable"], expected)
        return 0, 0

    async def sync(self, key: str) -> None:
        """Bring the budget ``key``'s status up to date (failSafe on a sync error; a Conflict is retried)."""
        pdb = self.pdbs.get(key)
        if pdb is None:
            return
        now = _now()
        try:
            status, recheck = await self.compute(pdb, now)
        except SyncError as err:
            status, recheck = copy.deepcopy(pdb.get("status") or {}), None
            status["disruptionsAllowed"] = 0
            set_condition(status, {"type": CONDITION, "status": "False", "reason": "SyncFailed",
                                   "message": str(err),
                                   "observedGeneration": int(status.get("observedGeneration") or 0)}, now)
        if status is not None:
            namespace, name = split_key(key)
            await self.client.update(path_for(PDBS, namespace, name, "status"), {**pdb, "status": status})
        if recheck is not None:
            self.queue.add_after(key, max((recheck - now).total_seconds(), 0.0) + 1.0)

    async def compute(self, pdb: dict[str, Any], now: datetime.datetime
                      ) -> tuple[dict[str, Any] | None, datetime.datetime | None]:
        """trySync + updatePdbStatus: the new status (None when the stored one is current) and when to look
        again. Raises SyncError when the expected pod count cannot be computed."""
        pods = [p for p in self.pods.items() if selects(pdb, p)]
        expected, desired = await self.expected_counts(pdb, pods)
        disrupted, recheck = disrupted_pods(pdb, pods, now)
        healthy = current_healthy(pods, disrupted, now)
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        old = pdb.get("status") or {}
        generation = int(meta(pdb).get("generation") or 0)
        if (int(old.get("currentHealthy") or 0), int(old.get("desiredHealthy") or 0),
                int(old.get("expectedPods") or 0), int(old.get("disruptionsAllowed") or 0),
                old.get("disruptedPods") or {}) == (healthy, desired, expected, allowed, disrupted) \
                and conditions_up_to_date(pdb):
            return None, recheck
        status: dict[str, Any] = {"observedGeneration": generation} if generation else {}
        if disrupted:
            status["disruptedPods"] = disrupted
        status.update({"disruptionsAllowed": allowed, "currentHealthy": healthy, "desiredHealthy": desired,
                       "expectedPods": expected,
                       "conditions": copy.deepcopy([c for c in old.get("conditions") or [] if isinstance(c, dict)])})
        sufficient = allowed > 0
        set_condition(status, {"type": CONDITION, "status": "True" if sufficient else "False",
                               "reason": "SufficientPods" if sufficient else "InsufficientPods", "message": "",
                               "observedGeneration": generation}, now)
        return status, recheck
