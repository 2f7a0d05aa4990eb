"""StorageObjectInUseProtection (k8s.io/kubernetes plugin/pkg/admission/storage/storageobjectinuseprotection).

On create (never on update, never on a subresource) a PersistentVolumeClaim
gets the finalizer ``kubernetes.io/pvc-protection`` and a PersistentVolume
``kubernetes.io/pv-protection``, appended after any finalizers the object
has and only if it lacks it. Deleting such an object only marks it
(Terminating) until the controllers' ``pvc-protection`` / ``pv-protection``
loops (services/controllers/loops/storageprotection.py, kube's
pkg/controller/volume/pvcprotection and pvprotection) remove the finalizer
once no Pod uses the claim / no claim is bound to the volume.
"""

from __future__ import annotations

from typing import Any

from services.admission.chain import CREATE, AdmissionRequest

PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection"  # pkg/volume/util PVCProtectionFinalizer
PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection"  # pkg/volume/util PVProtectionFinalizer

_FINALIZERS = {"persistentvolumeclaims": PVC_PROTECTION_FINALIZER, "persistentvolumes": PV_PROTECTION_FINALIZER}


def add_finalizer(obj: dict[str, Any], finalizer: str) -> None:
    """Append ``finalizer`` to ``obj``'s ``metadata.finalizers`` unless it is there (kube's admitPVC/admitPV)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    finalizers = meta.get("finalizers")
    finalizers = list(finalizers) if isinstance(finalizers, list) else []
    if finalizer not in finalizers:
        meta["finalizers"] = [*finalizers, finalizer]


class StorageObjectInUseProtection:
    """Adds the protection finalizer to new PersistentVolumeClaims and PersistentVolumes (a mutating plugin)."""

    name = "StorageObjectInUseProtection"

    def handles(self, operation: str) -> bool:
        """CREATE only (kube: ``admission.NewHandler(admission.Create)``)."""
        return operation == CREATE

    async def admit(self, request: AdmissionRequest) -> None:
        """Add ``kubernetes.io/pvc-protection`` to a PVC, ``kubernetes.io/pv-protection`` to a PV.

        Other resources, subresources and requests without an object are left
        alone, as kube's plugin does.
        """
        res = request.resource
        finalizer = _FINALIZERS.get(res.resource) if res.group == "" else None
        if finalizer is None or request.subresource or not isinstance(request.object, dict):
            return
        add_finalizer(request.object, finalizer)
