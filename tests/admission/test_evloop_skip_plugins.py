"""AdmitRequest.skip_plugins: a write kube's registry makes through its own store with rest.ValidateAllObjectFunc
and ValidateAllObjectUpdateFunc (pods/eviction's DisruptionTarget condition, pkg/registry/core/pod/storage/
eviction.go addConditionAndDeletePod): the strategy and validation run, no mutating or validating plugin does."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from kapi import errors, jsonutil
from kapi.attributes import Attributes, UserInfo
from services.admission.chain import Chain
from services.admission.pipeline import Admitter
from tests.admission.test_pipeline import AddLabel, Record

NOW = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


def _pod(image: str, conditions: list[dict[str, str]], annotations: dict[str, str] | None = None) -> bytes:
    return jsonutil.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": "p", "namespace": "demo", "uid": "u-1", "resourceVersion": "5",
        "creationTimestamp": "2024-01-01T00:00:00Z", "annotations": annotations or {}},
        "spec": {"containers": [{"name": "c", "image": image}]}, "status": {"phase": "Running",
                                                                           "conditions": conditions}})


STATUS = Attributes(UserInfo("alice"), "update", True, api_version="v1", resource="pods", subresource="status",
                    namespace="demo", name="p")


async def test_skip_plugins_runs_the_status_strategy_but_no_plugin() -> None:
    """The plugins see nothing; the status strategy still keeps the stored spec."""
    plugins = AddLabel(), Record(refuse=True)
    admitter = Admitter(Chain(list(plugins)), now=lambda: NOW, rng=random.Random(3))
    condition = [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]
    old, new = _pod("old", []), _pod("new", condition)
    result = await admitter.admit("UPDATE", STATUS, "Pod", new, old, skip_plugins=True)
    stored = jsonutil.loads(result.object)
    assert stored["spec"]["containers"][0]["image"] == "old"
    assert [c["type"] for c in stored["status"]["conditions"]] == ["DisruptionTarget"]
    assert plugins[1].seen == []
    with pytest.raises(errors.StatusError) as refused:  # without the flag the refusing validator runs
        await admitter.admit("UPDATE", STATUS, "Pod", new, old)
    assert refused.value.code == 403 and len(plugins[1].seen) == 1


async def test_skip_plugins_still_validates() -> None:
    """Validation is no plugin: an annotation key that is no qualified name is the 422 it always is."""
    admitter = Admitter(Chain([Record()]), now=lambda: NOW, rng=random.Random(3))
    bad = _pod("old", [], {"not a key!": "v"})
    with pytest.raises(errors.StatusError) as refused:
        await admitter.admit("UPDATE", STATUS, "Pod", bad, _pod("old", []), skip_plugins=True)
    assert refused.value.code == 422 and refused.value.reason == "Invalid"
    assert [c["field"] for c in refused.value.details["causes"]] == ["metadata.annotations"]
