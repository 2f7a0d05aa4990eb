"""pod-garbage-collector: kube-controller-manager's PodGC (kube ``pkg/controller/podgc``).

Every 20 seconds (kube's gcCheckPeriod) it force-deletes (grace period 0) the Pods nobody else will finish:

- orphaned Pods: ``spec.nodeName`` names a Node that does not exist, for 40 seconds (kube's quarantine) and
  confirmed by a live GET; first marked ``status.phase: Failed`` with the condition ``DisruptionTarget`` True,
  reason ``DeletionByPodGC``, message ``PodGC: node no longer exists``;
- terminating Pods that were never scheduled (``deletionTimestamp`` and no ``spec.nodeName``);
- terminating Pods on a Node that is not Ready and carries the ``node.kubernetes.io/out-of-service`` taint;
- finished Pods (not Pending, Running or Unknown) beyond ``--terminated-pod-gc-threshold`` (12500), oldest
  first.

A Pod not yet Succeeded or Failed is marked Failed before the delete (markFailedAndDeletePod). Since kapi has
no kubelet, this is what ends a scheduled Pod's graceful deletion when its Node is gone. The status write is a
strategic merge patch of ``/status`` (conditions merge by type) and the delete is conditioned on the Pod's uid.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from services.controllers.client import ApiError, Client, path_for
from services.controllers.context import Context
from services.controllers.objects import meta, now_text, row

log = logging.getLogger(__name__)

PODS = row("", "pods")
NODES = row("", "nodes")
CHECK_PERIOD = 20.0  # seconds between collections (gcCheckPeriod)
QUARANTINE = 40.0  # seconds a Node must be missing before its Pods are orphans (quarantineTime)
TERMINATED_THRESHOLD = 12500  # --terminated-pod-gc-threshold's default
OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
SMP = "application/strategic-merge-patch+json"


def _spec(obj: dict[str, Any]) -> dict[str, Any]:
    value = obj.get("spec")
    return value if isinstance(value, dict) else {}


def _phase(pod: dict[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def terminated(pod: dict[str, Any]) -> bool:
    """isPodTerminated: the phase is none of Pending, Running, Unknown (an unset phase counts as Pending)."""
    return _phase(pod) not in ("", "Pending", "Running", "Unknown")


def node_ready(node: dict[str, Any]) -> bool:
    """IsNodeReady: the Node's Ready condition is True."""
    return any(isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def out_of_service(node: dict[str, Any]) -> bool:
    """The Node is not Ready and has a taint of key ``node.kubernetes.io/out-of-service`` (gcTerminating)."""
    taints = _spec(node).get("taints") or []
    return not node_ready(node) and any(isinstance(t, dict) and t.get("key") == OUT_OF_SERVICE for t in taints)


class PodGCController:
    """Force-deletes orphaned, unscheduled terminating, out-of-service and surplus finished Pods (see above)."""

    name = "podgc"

    def __init__(self, ctx: Context, clock: Callable[[], float] = time.monotonic, period: float = CHECK_PERIOD):
        self.client: Client = ctx.client
        self.clock = clock
        self.period = period
        self.pods = ctx.informer(PODS)
        self.nodes = ctx.informer(NODES)
        self.missing_since: dict[str, float] = {}  # node name -> when a Pod was first seen bound to it, absent

    async def run(self) -> None:
        """Collect every ``period`` seconds until cancelled; one failed collection is logged and retried."""
        while True:
            await asyncio.sleep(self.period)
            try:
                await self.collect()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the next period tries again
                log.info("podgc: collection failed (%s)", exc)

    async def _node_exists(self, name: str) -> bool:
        try:
            await self.client.get(path_for(NODES, "", name))
            return True
        except ApiError as err:
            if err.code == 404:
                return False
            raise

    async def orphan_nodes(self, pods: list[dict[str, Any]], nodes: dict[str, dict[str, Any]]) -> set[str]:
        """The Node names Pods are bound to that have been missing for the quarantine and a live GET confirms
        gone (discoverDeletedNodes)."""
        now = self.clock()
        wanted = {str(_spec(p).get("nodeName")) for p in pods if _spec(p).get("nodeName")}
        for name in list(self.missing_since):
            if name in nodes or name not in wanted:
                del self.missing_since[name]
        gone = set()
        for name in sorted(wanted - set(nodes)):
            since = self.missing_since.setdefault(name, now)
            if now - since >= QUARANTINE and not await self._node_exists(name):
                gone.add(name)
        return gone

    async def collect(self) -> list[str]:
        """One RunOnce; returns the ``namespace/name`` of the Pods it deleted, in order."""
        pods = [p for p in self.pods.items() if isinstance(p, dict)]
        nodes = {str(meta(n).get("name")): n for n in self.nodes.items() if isinstance(n, dict)}
        done: list[str] = []
        finished = sorted((p for p in pods if terminated(p)),
                          key=lambda p: (str(meta(p).get("creationTimestamp") or ""), str(meta(p).get("name"))))
        for pod in finished[:max(len(finished) - TERMINATED_THRESHOLD, 0)]:
            done += await self._delete(pod)
        for pod in pods:
            node = nodes.get(str(_spec(pod).get("nodeName") or ""))
            if meta(pod).get("deletionTimestamp") and node is not None and out_of_service(node):
                done += await self._delete(pod)
        gone = await self.orphan_nodes(pods, nodes)
        for pod in pods:
            if str(_spec(pod).get("nodeName") or "") in gone:
                done += await self._delete(pod, {"type": "DisruptionTarget", "status": "True",
                                                 "reason": "DeletionByPodGC",
                                                 "message": "PodGC: node no longer exists"})
        for pod in pods:
            if meta(pod).get("deletionTimestamp") and not _spec(pod).get("nodeName"):
                done += await self._delete(pod)
        return done

    async def _delete(self, pod: dict[str, Any], condition: dict[str, Any] | None = None) -> list[str]:
        """markFailedAndDeletePodWithCondition: Failed (with ``condition``) unless finished, then delete with
        grace 0 conditioned on the uid; [] when the Pod is already gone."""
        m = meta(pod)
        namespace, name, uid = str(m.get("namespace") or ""), str(m.get("name") or ""), str(m.get("uid") or "")
        try:
            if _phase(pod) not in ("Succeeded", "Failed"):
                status: dict[str, Any] = {"phase": "Failed"}
                if condition:
                    status["conditions"] = [{**condition, "lastTransitionTime": now_text()}]
                await self.client.patch(path_for(PODS, namespace, name, "status"),
                                        {"metadata": {"uid": uid}, "status": status}, content_type=SMP)
            await self.client.delete(path_for(PODS, namespace, name),
                                     {"gracePeriodSeconds": 0, "preconditions": {"uid": uid}})
        except ApiError as err:
            if err.code in (404, 409):
                return []
            raise
        log.info("podgc: force-deleted pod %s/%s", namespace, name)
        return [f"{namespace}/{name}"]
