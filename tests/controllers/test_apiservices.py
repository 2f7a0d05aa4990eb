"""autoregister (services/controllers/loops/apiservices.py): which APIServices it keeps and how it reconciles each.

The loop runs against a recording fake client; informer stores are filled directly (no API server).
"""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from services.controllers.client import ApiError
from services.controllers.context import Context
from services.controllers.loops.apiservices import AutoRegister, builtin_apiservices

LABEL = "kube-aggregator.kubernetes.io/automanaged"


class FakeClient:
    """Records writes; ``fail`` maps a method to the ApiError it raises."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []
        self.fail: dict[str, ApiError] = {}

    async def _record(self, method: str, path: str, body: Any) -> dict[str, Any]:
        self.calls.append((method, path, body))
        if method in self.fail:
            raise self.fail[method]
        return {}

    async def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        return await self._record("create", path, obj)

    async def update(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        return await self._record("update", path, obj)

    async def delete(self, path: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self._record("delete", path, options)


def _loop() -> tuple[AutoRegister, FakeClient]:
    client = FakeClient()
    ctx = Context(client=client, args=argparse.Namespace())  # type: ignore[arg-type]
    return AutoRegister(ctx), client


def _crd(group: str, versions: list[tuple[str, bool]], established: bool = True) -> dict[str, Any]:
    return {"metadata": {"name": f"widgets.{group}"},
            "spec": {"group": group, "versions": [{"name": v, "served": s} for v, s in versions]},
            "status": {"conditions": [{"type": "Established", "status": "True" if established else "False"}]}}


def _apiservice(name: str, group: str, version: str, label: str | None, gpm: int = 1000, vp: int = 100,
                **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "uid": f"uid-{name}", "resourceVersion": "7"}
    if label:
        meta["labels"] = {LABEL: label}
    return {"metadata": meta, "spec": {"group": group, "version": version, "groupPriorityMinimum": gpm,
                                       "versionPriority": vp, **extra}}


def test_builtin_apiservices_are_kubes_for_the_served_groups() -> None:
    wanted = builtin_apiservices()
    assert {"v1.", "v1.apps", "v1.rbac.authorization.k8s.io", "v1.apiextensions.k8s.io",
            "v1.flowcontrol.apiserver.k8s.io"} <= set(wanted)
    assert "v1.apiregistration.k8s.io" not in wanted  # kube has no APIService for the aggregator's own group
    assert wanted["v1."]["spec"] == {"group": "", "version": "v1", "groupPriorityMinimum": 18000,
                                     "versionPriority": 1}
    assert wanted["v1.flowcontrol.apiserver.k8s.io"]["spec"]["versionPriority"] == 21
    assert all(o["metadata"]["labels"] == {LABEL: "onstart"} and "service" not in o["spec"] for o in wanted.values())


def test_desired_crd_apiservices_need_an_established_crd_and_a_served_version() -> None:
    loop, _ = _loop()
    loop.crds.store = {"a": _crd("stable.example.com", [("v1", True), ("v1beta1", False)]),
                       "b": _crd("pending.example.com", [("v1", True)], established=False)}
    got = loop.desired("v1.stable.example.com")
    assert got is not None and got["spec"] == {"group": "stable.example.com", "version": "v1",
                                               "groupPriorityMinimum": 1000, "versionPriority": 100}
    assert got["metadata"]["labels"] == {LABEL: "true"}
    assert loop.desired("v1beta1.stable.example.com") is None
    assert loop.desired("v1.pending.example.com") is None


@pytest.mark.parametrize(("name", "actual", "synced", "crds", "expected"), [
    # absent and desired: created
    ("v1.apps", None, False, [], [("create", "/apis/apiregistration.k8s.io/v1/apiservices", "v1.apps")]),
    ("v1.stable.example.com", None, False, [_crd("stable.example.com", [("v1", True)])],
     [("create", "/apis/apiregistration.k8s.io/v1/apiservices", "v1.stable.example.com")]),
    # onstart with a changed spec: put back at its first sync only
    ("v1.apps", _apiservice("v1.apps", "apps", "v1", "onstart", gpm=5), False, [],
     [("update", "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps", "v1.apps")]),
    ("v1.apps", _apiservice("v1.apps", "apps", "v1", "onstart", gpm=5), True, [], []),
    ("v1.apps", _apiservice("v1.apps", "apps", "v1", "onstart", gpm=17800, vp=15), False, [], []),
    # sync-managed (CRD) ones follow the CRD: a changed spec is always put back, a gone CRD deletes it
    ("v1.stable.example.com", _apiservice("v1.stable.example.com", "stable.example.com", "v1", "true", vp=7), True,
     [_crd("stable.example.com", [("v1", True)])],
     [("update", "/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com", "v1.stable.example.com")]),
    ("v1.stable.example.com", _apiservice("v1.stable.example.com", "stable.example.com", "v1", "true"), True, [],
     [("delete", "/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com", None)]),
    # a stale onstart one (kapi stopped serving it) is deleted at its first sync only
    ("v1.gone.k8s.io", _apiservice("v1.gone.k8s.io", "gone.k8s.io", "v1", "onstart"), False, [],
     [("delete", "/apis/apiregistration.k8s.io/v1/apiservices/v1.gone.k8s.io", None)]),
    ("v1.gone.k8s.io", _apiservice("v1.gone.k8s.io", "gone.k8s.io", "v1", "onstart"), True, [], []),
    # unlabelled ones are the user's
    ("v1alpha1.wardle.example.com", _apiservice("v1alpha1.wardle.example.com", "wardle.example.com", "v1alpha1",
                                                None, service={"namespace": "w", "name": "api"}), False, [], []),
])
async def test_sync(name: str, actual: dict[str, Any] | None, synced: bool, crds: list[dict[str, Any]],
                    expected: list[tuple[str, str, str | None]]) -> None:
    loop, client = _loop()
    loop.crds.store = {c["metadata"]["name"]: c for c in crds}
    if actual is not None:
        loop.apiservices.store = {name: actual}
    if synced:
        loop.synced.add(name)
    await loop.sync(name)
    got = [(m, p, (b or {}).get("metadata", {}).get("name") if m != "delete" else None) for m, p, b in client.calls]
    assert got == expected
    for method, _, body in client.calls:
        if method in ("create", "update"):
            assert body["spec"] == loop.desired(name)["spec"]  # type: ignore[index]
        if method == "delete":
            assert body == {"preconditions": {"uid": f"uid-{name}"}}
    assert name in loop.synced


async def test_conflict_is_retried_and_not_counted_as_synced() -> None:
    loop, client = _loop()
    client.fail["create"] = ApiError(409, "AlreadyExists", "exists")
    await loop.sync("v1.apps")
    assert "v1.apps" not in loop.synced
    client.fail["create"] = ApiError(403, "Forbidden", "no")
    with pytest.raises(ApiError):
        await loop.sync("v1.batch")
