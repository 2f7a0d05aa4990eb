"""Graceful deletion of Pods (kube's podStrategy.CheckGracefulDelete and rest.BeforeDelete)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from services.gateway.registry import deletion


def pod(node: str = "n1", phase: str = "Running", grace: int | None = 30, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"metadata": {"name": "p", **meta}, "spec": spec, "status": {"phase": phase}}


@pytest.mark.parametrize(("obj", "options", "grace"), [
    (pod(), {}, 30),                                  # the Pod's terminationGracePeriodSeconds
    (pod(), {"gracePeriodSeconds": 5}, 5),            # DeleteOptions win
    (pod(grace=None), {}, 0),                         # neither: at once
    (pod(node=""), {"gracePeriodSeconds": 5}, 0),     # not scheduled
    (pod(phase="Succeeded"), {}, 0), (pod(phase="Failed"), {}, 0),
    (pod(), {"gracePeriodSeconds": -3}, 1),           # negative: 1
])
def test_grace_period(obj: dict[str, Any], options: dict[str, Any], grace: int) -> None:
    assert deletion.pod_grace_period(obj, options) == grace


def _seconds_from_now(stamp: str) -> float:
    when = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return (when - datetime.datetime.now(datetime.UTC)).total_seconds()


def test_a_scheduled_pod_is_marked_then_only_shortened() -> None:
    obj = pod()
    action, marked = deletion._mark_pod(obj, dict(obj["metadata"]), {}, "")
    assert action == "mark" and marked is not None
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 30
    assert 28 <= _seconds_from_now(marked["metadata"]["deletionTimestamp"]) <= 31
    again = dict(marked["metadata"])
    assert deletion._mark_pod(marked, again, {"gracePeriodSeconds": 60}, "") == ("pending", None)
    assert deletion._mark_pod(marked, dict(marked["metadata"]), {}, "") == ("pending", None)
    action, shorter = deletion._mark_pod(marked, dict(marked["metadata"]), {"gracePeriodSeconds": 10}, "")
    assert action == "mark" and shorter is not None and shorter["metadata"]["deletionGracePeriodSeconds"] == 10
    assert 8 <= _seconds_from_now(shorter["metadata"]["deletionTimestamp"]) <= 11
    assert deletion._mark_pod(shorter, dict(shorter["metadata"]), {"gracePeriodSeconds": 0}, "") == ("delete", None)


def test_immediate_deletions_and_the_gc_finalizer() -> None:
    assert deletion._mark_pod(pod(node=""), {"name": "p"}, {}, "") == ("delete", None)
    obj = pod(generation=2)
    action, marked = deletion._mark_pod(obj, dict(obj["metadata"]), {}, deletion.FOREGROUND)
    assert action == "mark" and marked is not None
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"] and marked["metadata"]["generation"] == 3
