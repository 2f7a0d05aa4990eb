"""StorageObjectInUseProtection: the protection finalizers on PVC and PV create, nothing else."""

from __future__ import annotations

from typing import Any

import pytest

from services.admission import plugins
from services.admission.plugins.storage_protection import StorageObjectInUseProtection
from tests.admission.fakes import FakeNamespaces, request

PVC = "kubernetes.io/pvc-protection"
PV = "kubernetes.io/pv-protection"


def obj(name: str = "data", finalizers: list[str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if finalizers is not None:
        meta["finalizers"] = finalizers
    return {"metadata": meta, "spec": {}}


@pytest.mark.parametrize(("resource", "finalizers", "expected"), [
    ("persistentvolumeclaims", None, [PVC]),
    ("persistentvolumeclaims", ["example.com/keep"], ["example.com/keep", PVC]),  # appended, others kept
    ("persistentvolumeclaims", [PVC], [PVC]),  # never twice
    ("persistentvolumes", None, [PV]),
    ("persistentvolumes", [PV, "example.com/keep"], [PV, "example.com/keep"]),
])
async def test_create_adds_the_finalizer(resource: str, finalizers: list[str] | None, expected: list[str]) -> None:
    req = request("CREATE", resource, obj(finalizers=finalizers))
    await StorageObjectInUseProtection().admit(req)
    assert req.object is not None and req.object["metadata"]["finalizers"] == expected


async def test_other_resources_and_subresources_untouched() -> None:
    plugin = StorageObjectInUseProtection()
    for req in (request("CREATE", "configmaps", obj()),
                request("CREATE", "persistentvolumeclaims", obj(), subresource="status")):
        await plugin.admit(req)
        assert "finalizers" not in req.object["metadata"]  # type: ignore[index]
    assert plugin.handles("CREATE") and not plugin.handles("UPDATE") and not plugin.handles("DELETE")


def test_on_by_default_in_kube_order() -> None:
    names = plugins.enabled_plugins("", "")
    assert names.index("DefaultStorageClass") < names.index("StorageObjectInUseProtection") < names.index(
        "PersistentVolumeClaimResize")
    built = plugins.build(["StorageObjectInUseProtection"], plugins.PluginContext(FakeNamespaces({})))  # type: ignore[arg-type]
    assert [type(p) for p in built] == [StorageObjectInUseProtection]  # a real plugin, no longer a no-op
