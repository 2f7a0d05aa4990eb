"""LimitRanger over several LimitRanges as kube's plugin/pkg/admission/limitranger/admission.go: runLimitFunc
applies each LimitRange in turn and returns the first one's error (403 with that LimitRange's violations only);
one LimitRange's violations follow its items' order (each Container item over every container) and are joined
by utilerrors.NewAggregate (a repeated message once); defaults come LimitRange by LimitRange (the first to set
a resource wins, a later Container item of one LimitRange replaces an earlier one's), and the annotation is the
last defaulting LimitRange's."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import limit_ranger
from tests.admission.fakes import FakeInformers, pod, request


def _range(name: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "demo"}, "spec": {"limits": list(items)}}


def _plugin(*ranges: dict[str, Any]) -> limit_ranger.LimitRanger:
    inf = FakeInformers()
    for r in ranges:
        inf.put("", "limitranges", r)
    return limit_ranger.LimitRanger(inf)  # type: ignore[arg-type]


def _container(name: str, requests: dict[str, str], limits: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "nginx", "resources": resources}


async def _refusal(plugin: limit_ranger.LimitRanger, obj: dict[str, Any], resource: str = "pods") -> str:
    with pytest.raises(errors.StatusError) as info:
        await plugin.validate(request("CREATE", resource, obj))
    assert info.value.code == 403
    return info.value.message


async def test_first_limit_range_with_violations_refuses_alone() -> None:
    plugin = _plugin(_range("a", {"type": "Container", "min": {"cpu": "100m"}}),
                     _range("b", {"type": "Container", "max": {"cpu": "1"}}))
    obj = pod(containers=[_container("c1", {"cpu": "50m"}, {"cpu": "2"})])
    assert await _refusal(plugin, obj) == (
        'pods "web" is forbidden: minimum cpu usage per Container is 100m, but request is 50m')
    obj = pod(containers=[_container("c1", {"cpu": "500m"}, {"cpu": "2"})])  # "a" holds: "b" refuses
    assert await _refusal(plugin, obj) == 'pods "web" is forbidden: maximum cpu usage per Container is 1, but ' \
                                          "limit is 2"


async def test_one_limit_range_item_order_and_dedup() -> None:
    plugin = _plugin(_range("a", {"type": "Container", "max": {"memory": "1Gi"}},
                            {"type": "Container", "min": {"cpu": "100m"}}))
    obj = pod(containers=[_container("c1", {"cpu": "50m", "memory": "1Gi"}, {"memory": "2Gi"}),
                          _container("c2", {"cpu": "60m"})])
    assert await _refusal(plugin, obj) == (
        'pods "web" is forbidden: [maximum memory usage per Container is 1Gi, but limit is 2Gi, maximum memory '
        "usage per Container is 1Gi.  No limit is specified, minimum cpu usage per Container is 100m, but "
        "request is 50m, minimum cpu usage per Container is 100m, but request is 60m]")
    same = pod(containers=[_container("c1", {"cpu": "50m"}), _container("c2", {"cpu": "50m"})])
    assert await _refusal(_plugin(_range("a", {"type": "Container", "min": {"cpu": "100m"}})), same) == (
        'pods "web" is forbidden: minimum cpu usage per Container is 100m, but request is 50m')


async def test_defaults_limit_range_by_limit_range() -> None:
    plugin = _plugin(_range("a", {"type": "Container", "default": {"cpu": "500m"}}),
                     _range("b", {"type": "Container", "default": {"cpu": "1", "memory": "256Mi"}}))
    req = request("CREATE", "pods", pod())
    await plugin.admit(req)
    obj = req.object
    assert obj is not None
    assert obj["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}}
    assert obj["metadata"]["annotations"] == {
        "kubernetes.io/limit-ranger": "LimitRanger plugin set: memory request for container nginx; memory limit "
                                      "for container nginx"}


async def test_later_container_item_default_wins_within_one_limit_range() -> None:
    plugin = _plugin(_range("a", {"type": "Container", "default": {"cpu": "200m"}},
                            {"type": "Container", "default": {"cpu": "300m"}}))
    req = request("CREATE", "pods", pod(initContainers=[{"name": "init", "image": "busybox"}]))
    await plugin.admit(req)
    obj = req.object
    assert obj is not None
    assert obj["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "300m"},
                                                                 "limits": {"cpu": "300m"}}
    assert obj["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container nginx; cpu limit for container nginx; cpu request for "
        "init container init; cpu limit for init container init")


async def test_pvc_max_without_request() -> None:
    plugin = _plugin(_range("a", {"type": "PersistentVolumeClaim", "max": {"storage": "10Gi"}}))
    pvc = {"metadata": {"name": "data", "namespace": "demo"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    assert await _refusal(plugin, pvc, "persistentvolumeclaims") == (
        'persistentvolumeclaims "data" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi.  '
        "No request is specified")
