"""pvc-protection and pv-protection: the storage finalizers' removal (kube ``pkg/controller/volume/pvcprotection``
and ``pkg/controller/volume/pvprotection``).

The StorageObjectInUseProtection admission plugin gives every new
PersistentVolumeClaim ``kubernetes.io/pvc-protection`` and every new
PersistentVolume ``kubernetes.io/pv-protection``; deleting one only marks it
(Terminating) until these loops take the finalizer off:

- ``pvc-protection``: a claim being deleted loses its finalizer once no Pod
  in its namespace uses it. As kube's ``podUsesPVC``, a Pod uses a claim when
  it is scheduled (``spec.nodeName`` set) and has a volume
  ``persistentVolumeClaim.claimName`` naming it, or a generic ephemeral
  volume whose claim (``<pod>-<volume>``) is this one and is controlled by
  the Pod, unless the Pod is shut down (deletionTimestamp with a zero grace
  period). The informer's cache is asked first and, when it finds no user,
  a live list of the namespace's Pods confirms it (kube's ``isBeingUsed``).
  Claims are looked at again when a Pod using them is deleted, terminates
  (Succeeded/Failed) or is unscheduled.
- ``pv-protection``: a volume being deleted loses its finalizer unless its
  ``status.phase`` is ``Bound`` (kube's ``isBeingUsed``).

Both also add their finalizer to live objects that lack it (objects created
while the plugin was off), as kube's loops do. Writes are a ``PUT`` of the
cached object (its resourceVersion: a Conflict is retried from the next
cache state).
"""

from __future__ import annotations

import logging
from typing import Any

from services.controllers.client import ApiError, Client, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue, key_of, split_key
from services.controllers.objects import meta, row

log = logging.getLogger(__name__)

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"

PODS = row("", "pods")
PVCS = row("", "persistentvolumeclaims")
PVS = row("", "persistentvolumes")


def _finalizers(obj: dict[str, Any] | None) -> list[str]:
    value = meta(obj).get("finalizers")
    return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []


def is_deletion_candidate(obj: dict[str, Any] | None, finalizer: str) -> bool:
    """Being deleted and still holding ``finalizer`` (kube ``protectionutil.IsDeletionCandidate``)."""
    return bool(meta(obj).get("deletionTimestamp")) and finalizer in _finalizers(obj)


def needs_finalizer(obj: dict[str, Any] | None, finalizer: str) -> bool:
    """Live and lacking ``finalizer`` (kube ``protectionutil.NeedToAddFinalizer``)."""
    return obj is not None and not meta(obj).get("deletionTimestamp") and finalizer not in _finalizers(obj)


def pod_terminated(pod: dict[str, Any]) -> bool:
    """Succeeded or Failed, or being deleted with no container running (kube ``volumeutil.IsPodTerminated``)."""
    status = pod.get("status") or {}
    if status.get("phase") in ("Failed", "Succeeded"):
        return True
    if not meta(pod).get("deletionTimestamp"):
        return False
    statuses = [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
    return all(isinstance(s, dict) and ("terminated" in (s.get("state") or {}) or "waiting" in (s.get("state") or {}))
               for s in statuses)


def pod_shut_down(pod: dict[str, Any]) -> bool:
    """Being deleted with grace period 0: kubelet is done with it or it was forced (kube ``podIsShutDown``)."""
    m = meta(pod)
    return bool(m.get("deletionTimestamp")) and m.get("deletionGracePeriodSeconds") == 0


def _controlled_by(obj: dict[str, Any], owner: dict[str, Any]) -> bool:
    uid = meta(owner).get("uid")
    return any(isinstance(ref, dict) and ref.get("controller") is True and ref.get("uid") == uid
               for ref in meta(obj).get("ownerReferences") or [])


def claim_names(pod: dict[str, Any]) -> list[str]:
    """The claims ``pod``'s volumes name: ``persistentVolumeClaim.claimName`` and ``<pod>-<volume>`` of each
    ephemeral volume (kube ``common.PodPVCIndexFunc``)."""
    out = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            out.append(str(source["claimName"]))
        elif isinstance(volume.get("ephemeral"), dict):
            out.append(f"{meta(pod).get('name', '')}-{volume.get('name', '')}")
    return out


def pod_uses_claim(pod: dict[str, Any], claim: dict[str, Any]) -> bool:
    """True if the scheduled ``pod`` uses ``claim`` (kube ``podUsesPVC``; see the module docstring)."""
    if meta(pod).get("namespace") != meta(claim).get("namespace") or not (pod.get("spec") or {}).get("nodeName"):
        return False
    name = meta(claim).get("name")
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName") == name:
            return True
        if isinstance(volume.get("ephemeral"), dict) and not pod_shut_down(pod) \
                and f"{meta(pod).get('name', '')}-{volume.get('name', '')}" == name and _controlled_by(claim, pod):
            return True
    return False


async def _write_finalizers(client: Client, path: str, obj: dict[str, Any], finalizers: list[str]) -> None:
    """PUT ``obj`` with ``finalizers``; NotFound means it is gone already (done), a Conflict is raised to retry."""
    try:
        await client.update(path, {**obj, "metadata": {**meta(obj), "finalizers": finalizers}})
    except ApiError as err:
        if err.code != 404:
            raise


class PVCProtectionController:
    """Removes ``kubernetes.io/pvc-protection`` from deleted claims no scheduled Pod uses."""

    name = "pvc-protection"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.queue = WorkQueue(self.name)
        self.claims = ctx.informer(PVCS)
        self.pods = ctx.informer(PODS)
        self.claims.on(add=self._claim, update=lambda _o, n: self._claim(n))
        self.pods.on(add=lambda p: self._pod(None, p, False), update=lambda o, n: self._pod(o, n, False),
                     delete=lambda p: self._pod(None, p, True))

    def _claim(self, claim: dict[str, Any]) -> None:
        if needs_finalizer(claim, PVC_PROTECTION_FINALIZER) or \
                is_deletion_candidate(claim, PVC_PROTECTION_FINALIZER):
            self.queue.add(key_of(claim))

    def _pod(self, old: dict[str, Any] | None, pod: dict[str, Any], deleted: bool) -> None:
        self._enqueue_claims(pod, deleted)
        # an update may hide the deletion of one pod and the creation of another of the same name
        if old is not None and meta(old).get("uid") != meta(pod).get("uid"):
            self._enqueue_claims(old, True)

    def _enqueue_claims(self, pod: dict[str, Any], deleted: bool) -> None:
        """Queue the claims of a pod that may no longer block them (kube ``enqueuePVCs``)."""
        if not deleted and not pod_terminated(pod) and (pod.get("spec") or {}).get("nodeName"):
            return
        namespace = meta(pod).get("namespace", "")
        for name in claim_names(pod):
            self.queue.add(f"{namespace}/{name}")

    async def run(self) -> None:
        """Process claims until cancelled."""
        await self.queue.run(self.sync)

    async def in_use(self, claim: dict[str, Any]) -> bool:
        """True if a Pod uses ``claim``: the cache first, then a live list of its namespace's Pods."""
        if any(pod_uses_claim(p, claim) for p in self.pods.items()):
            return True
        live = await self.client.list_all(path_for(PODS, meta(claim).get("namespace", "")))
        return any(pod_uses_claim(p, claim) for p in live.get("items") or [] if isinstance(p, dict))

    async def sync(self, key: str) -> None:
        """Remove the finalizer from the deleted, unused claim ``key``; add it to a live claim lacking it."""
        claim = self.claims.get(key)
        if claim is None:
            return
        namespace, name = split_key(key)
        path = path_for(PVCS, namespace, name)
        if is_deletion_candidate(claim, PVC_PROTECTION_FINALIZER):
            if await self.in_use(claim):
                log.debug("keeping PVC %s: in use", key)
                return
            await _write_finalizers(self.client, path, claim,
                                    [f for f in _finalizers(claim) if f != PVC_PROTECTION_FINALIZER])
            log.info("removed protection finalizer from PVC %s", key)
        elif needs_finalizer(claim, PVC_PROTECTION_FINALIZER):
            await _write_finalizers(self.client, path, claim, [*_finalizers(claim), PVC_PROTECTION_FINALIZER])


class PVProtectionController:
    """Removes ``kubernetes.io/pv-protection`` from deleted volumes that are not Bound."""

    name = "pv-protection"

    def __init__(self, ctx: Context):
        self.client = ctx.client
        self.queue = WorkQueue(self.name)
        self.volumes = ctx.informer(PVS)
        self.volumes.on(add=self._volume, update=lambda _o, n: self._volume(n))

    def _volume(self, volume: dict[str, Any]) -> None:
        if needs_finalizer(volume, PV_PROTECTION_FINALIZER) or is_deletion_candidate(volume, PV_PROTECTION_FINALIZER):
            self.queue.add(key_of(volume))

    async def run(self) -> None:
        """Process volumes until cancelled."""
        await self.queue.run(self.sync)

    async def sync(self, key: str) -> None:
        """Remove the finalizer from the deleted volume ``key`` unless Bound; add it to a live one lacking it."""
        volume = self.volumes.get(key)
        if volume is None:
            return
        path = path_for(PVS, "", key)
        if is_deletion_candidate(volume, PV_PROTECTION_FINALIZER):
            if (volume.get("status") or {}).get("phase") == "Bound":
                log.debug("keeping PV %s: Bound", key)
                return
            await _write_finalizers(self.client, path, volume,
                                    [f for f in _finalizers(volume) if f != PV_PROTECTION_FINALIZER])
            log.info("removed protection finalizer from PV %s", key)
        elif needs_finalizer(volume, PV_PROTECTION_FINALIZER):
            await _write_finalizers(self.client, path, volume, [*_finalizers(volume), PV_PROTECTION_FINALIZER])
