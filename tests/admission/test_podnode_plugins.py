"""RuntimeClass, TaintNodesByCondition and PersistentVolumeClaimResize over in-memory caches
(services/admission/plugins/podnode.py), with kube's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import podnode
from tests.admission.fakes import FakeInformers, pod, request


async def refusal(coro: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as exc:
        await coro
    return exc.value


def runtime_class(name: str, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": "runc",
            **fields}


async def test_runtime_class_must_exist_and_sets_overhead_and_scheduling() -> None:
    inf = FakeInformers()
    plugin = podnode.RuntimeClass(inf)  # type: ignore[arg-type]
    err = await refusal(plugin.admit(request("CREATE", "pods", pod(runtimeClassName="gvisor"))))
    assert (err.code, err.message) == (403, 'pods "web" is forbidden: pod rejected: RuntimeClass "gvisor" not found')
    inf.put("node.k8s.io", "runtimeclasses", runtime_class(
        "gvisor", overhead={"podFixed": {"cpu": "250m"}},
        scheduling={"nodeSelector": {"sandbox": "gvisor"},
                    "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]}))
    req = request("CREATE", "pods", pod(runtimeClassName="gvisor", nodeSelector={"disk": "ssd"}))
    await plugin.admit(req)
    spec = req.object["spec"]
    assert spec["overhead"] == {"cpu": "250m"}
    assert spec["nodeSelector"] == {"disk": "ssd", "sandbox": "gvisor"}
    assert spec["tolerations"] == [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}]
    await plugin.validate(req)  # the overhead is the class's now
    conflict = request("CREATE", "pods", pod(runtimeClassName="gvisor", nodeSelector={"sandbox": "kata"}))
    err = await refusal(plugin.admit(conflict))
    assert err.message == ('pods "web" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = '
                           "gvisor; pod.spec.nodeSelector[sandbox] = kata")
    other = request("CREATE", "pods", pod(runtimeClassName="gvisor", overhead={"cpu": "1"}))
    err = await refusal(plugin.admit(other))
    assert err.message == ('pods "web" is forbidden: pod rejected: Pod\'s Overhead doesn\'t match RuntimeClass\'s '
                           "defined Overhead")
    same = request("CREATE", "pods", pod(runtimeClassName="gvisor", overhead={"cpu": "0.25"}))
    await plugin.admit(same)  # semantically equal quantities are no conflict
    bare = request("CREATE", "pods", pod(overhead={"cpu": "1"}))
    err = await refusal(plugin.validate(bare))
    assert err.message == ('pods "web" is forbidden: pod rejected: Pod Overhead set without corresponding '
                           "RuntimeClass defined Overhead")
    await plugin.admit(request("CREATE", "pods", pod()))  # no class: nothing to do


async def test_new_nodes_get_the_not_ready_taint_once() -> None:
    plugin = podnode.TaintNodesByCondition()
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
            "spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}
    req = request("CREATE", "nodes", node)
    await plugin.admit(req)
    assert req.object["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                                            {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
    tainted = {"metadata": {"name": "n2"}, "spec": {"taints": [
        {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule", "value": "x"}]}}
    req = request("CREATE", "nodes", tainted)
    await plugin.admit(req)
    assert len(req.object["spec"]["taints"]) == 1
    assert plugin.handles("CREATE") and not plugin.handles("UPDATE")


def claim(storage: str, phase: str = "Bound", cls: str | None = "fast") -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}}
    if cls is not None:
        spec["storageClassName"] = cls
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "demo"},
            "spec": spec, "status": {"phase": phase}}


async def test_claims_grow_only_when_bound_and_the_class_allows_expansion() -> None:
    inf = FakeInformers()
    plugin = podnode.PersistentVolumeClaimResize(inf)  # type: ignore[arg-type]
    grow = claim("2Gi")
    await plugin.validate(request("UPDATE", "persistentvolumeclaims", claim("1Gi"), old=claim("1Gi")))  # same
    await plugin.validate(request("UPDATE", "persistentvolumeclaims", claim("1Gi"), old=claim("2Gi")))  # shrink
    err = await refusal(plugin.validate(request("UPDATE", "persistentvolumeclaims", grow,
                                                old=claim("1Gi", phase="Pending"))))
    assert (err.code, err.message) == (403, 'persistentvolumeclaims "data" is forbidden: Only bound persistent '
                                            "volume claims can be expanded")
    err = await refusal(plugin.validate(request("UPDATE", "persistentvolumeclaims", grow, old=claim("1Gi"))))
    assert err.message == ('persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be '
                           "resized and the storageclass that provisions the pvc must support resize")
    inf.put("storage.k8s.io", "storageclasses", {"metadata": {"name": "fast"}, "provisioner": "x",
                                                 "allowVolumeExpansion": True})
    await plugin.validate(request("UPDATE", "persistentvolumeclaims", grow, old=claim("1Gi")))
    err = await refusal(plugin.validate(request("UPDATE", "persistentvolumeclaims", grow,
                                                old=claim("1Gi", cls=None))))
    assert err.code == 403  # no class: not dynamically provisioned


EXISTS_ALL = {"operator": "Exists"}
GPU_EQUAL = {"key": "gpu", "operator": "Equal", "value": "a", "effect": "NoSchedule"}
GPU_EXISTS = {"key": "gpu", "operator": "Exists"}
GPU_EXISTS_NOSCHEDULE = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}
EVICT_60 = {"key": "n", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}
EVICT_30 = {"key": "n", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}
EVICT_FOREVER = {"key": "n", "operator": "Exists", "effect": "NoExecute"}


@pytest.mark.parametrize(("first", "second", "merged"), [
    ([GPU_EQUAL], [GPU_EXISTS], [GPU_EXISTS]),                      # a later superset replaces it
    ([GPU_EXISTS], [GPU_EQUAL, GPU_EXISTS_NOSCHEDULE], [GPU_EXISTS]),  # kept superset covers both
    ([GPU_EQUAL], [GPU_EQUAL], [GPU_EQUAL]),                        # equal ones: the first stays
    ([GPU_EQUAL], [EXISTS_ALL], [EXISTS_ALL]),                      # empty key with Exists matches every key
    ([GPU_EXISTS_NOSCHEDULE], [{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}],
     [GPU_EXISTS_NOSCHEDULE, {"key": "gpu", "operator": "Exists", "effect": "NoExecute"}]),  # other effects
    ([EVICT_60], [EVICT_30], [EVICT_60]),                           # longer tolerationSeconds covers shorter
    ([EVICT_60], [EVICT_FOREVER], [EVICT_FOREVER]),                 # no limit covers a limit
    ([{"key": "gpu", "value": "a", "effect": "NoSchedule"}], [GPU_EQUAL],  # "" operator is Equal as superset
     [{"key": "gpu", "value": "a", "effect": "NoSchedule"}]),
    ([], [], []),
])
def test_merge_tolerations_keeps_only_supersets(first: list[Any], second: list[Any], merged: list[Any]) -> None:
    """MergeTolerations / isSuperset (pkg/util/tolerations)."""
    assert podnode.merge_tolerations(first, second) == merged


async def test_runtime_class_tolerations_drop_the_pods_covered_ones() -> None:
    inf = FakeInformers()
    inf.put("node.k8s.io", "runtimeclasses", runtime_class("gvisor", scheduling={"tolerations": [GPU_EXISTS]}))
    req = request("CREATE", "pods", pod(runtimeClassName="gvisor", tolerations=[GPU_EQUAL, EVICT_30]))
    await podnode.RuntimeClass(inf).admit(req)  # type: ignore[arg-type]
    assert req.object["spec"]["tolerations"] == [EVICT_30, GPU_EXISTS]
