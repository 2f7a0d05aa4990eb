"""services.controllers.customresources: REGISTRY follows Established CRDs; subscribers hear of changes."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

import pytest

from kapi.resources import REGISTRY
from services.controllers import customresources
from services.controllers.context import Context
from services.controllers.loops.namespace import namespaced_resources


def definition(established: bool = True) -> dict[str, Any]:
    return {"metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1beta1", "served": True, "storage": False},
                                  {"name": "v1", "served": True, "storage": True}]},
            "status": {"conditions": [{"type": "Established", "status": "True" if established else "False"}]}}


@pytest.fixture
def ctx() -> Iterator[Context]:
    yield Context(client=None, args=argparse.Namespace())  # type: ignore[arg-type]
    REGISTRY.set_overlay(())


def test_registry_follows_crds_and_listeners_hear_changes(ctx: Context) -> None:
    crds = customresources.shared(ctx)
    assert customresources.shared(ctx) is crds
    assert list(ctx.informers) == ["/apis/apiextensions.k8s.io/v1/customresourcedefinitions"]
    heard: list[tuple[list[tuple[str, str]], set[tuple[str, str]]]] = []
    crds.subscribe(lambda added, removed: heard.append(([(r.group, r.version) for r in added.values()], removed)))

    crds.informer.store["widgets.example.com"] = definition(established=False)
    crds._refresh()
    assert REGISTRY.get("example.com", "v1", "widgets") is None and heard == []

    crds.informer.store["widgets.example.com"] = definition()
    crds._refresh()
    assert REGISTRY.get("example.com", "v1beta1", "widgets") is not None
    assert heard == [([("example.com", "v1")], set())]  # one row per resource: the preferred version
    assert crds.preferred("example.com", "widgets") == REGISTRY.get("example.com", "v1", "widgets")
    assert [r.version for r in namespaced_resources() if r.group == "example.com"] == ["v1"]

    del crds.informer.store["widgets.example.com"]
    crds._refresh()
    assert REGISTRY.get("example.com", "v1", "widgets") is None
    assert heard[-1] == ([], {("example.com", "widgets")})


async def test_a_second_run_after_lost_leadership_gets_a_fresh_crd_informer(ctx: Context) -> None:
    """run_loops ends (leadership lost): the next run must not reuse the stopped CRD informer."""
    import asyncio

    from services.controllers import manager

    class Probe:
        name = "probe"

        def __init__(self, context: Context) -> None:
            self.crds = customresources.shared(context)

        async def run(self) -> None:
            await asyncio.sleep(3600)

    table = {"probe": manager.Loop("probe", "probe", True, Probe)}
    seen: list[customresources.CustomResources] = []
    for _ in range(2):
        task = asyncio.ensure_future(manager.run_loops(ctx, ["probe"], table, sync_timeout=0.01))
        await asyncio.sleep(0.05)
        seen.append(customresources.shared(ctx))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert ctx.informers == {} and ctx.shared == {}
    assert seen[0] is not seen[1]
