"""The pure parts of pods/eviction and pods/binding (services/gateway/reviews/pods.py) against kube's
pkg/registry/core/pod/storage eviction.go and storage.go, and ValidatePodBinding; the stack answers are
tests/e2e/test_eviction_pdb.py."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from kapi import errors
from services.gateway.reviews import pods
from services.gateway.scope import RequestScope


def _pdb(status: dict[str, Any], generation: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": "foo", "generation": generation}, "status": {"observedGeneration": 1, **status}}


def test_denied_message_follows_the_disruption_allowed_condition() -> None:
    """checkAndDecrement's cause: a failed sync first, then the healthy counts, then the condition, then none."""
    failed = {"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed", "message": "hoge"}
    other = {**failed, "reason": "BarReason"}
    assert pods._denied_message(_pdb({"conditions": [failed]})) == (
        "The disruption budget foo does not allow evicting pods currently because it failed sync: hoge")
    assert pods._denied_message(_pdb({"currentHealthy": 3, "desiredHealthy": 3})) == (
        "The disruption budget foo needs 3 healthy pods and has 3 currently")
    assert pods._denied_message(_pdb({"currentHealthy": 4, "desiredHealthy": 3, "conditions": [other]})) == (
        "The disruption budget foo does not allow evicting pods currently (BarReason): hoge")
    assert pods._denied_message(_pdb({"currentHealthy": 4, "desiredHealthy": 3})) == (
        "The disruption budget foo does not allow evicting pods currently")


def _refused(pdb: dict[str, Any]) -> errors.StatusError:
    scope = cast(RequestScope, None)  # every refusal comes before the budget is written
    with pytest.raises(errors.StatusError) as caught:
        asyncio.run(pods._check_and_decrement(scope, "p", pdb, dry_run=False))
    return caught.value


def test_check_and_decrement_refusals() -> None:
    """The Status bodies: 429 still processing (retry 10), 403 negative and map too big, 429 none allowed."""
    assert _refused(_pdb({"disruptionsAllowed": 1}, generation=2)).status() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.", "reason": "TooManyRequests",
        "details": {"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget foo is still being "
                                "processed by the server."}], "retryAfterSeconds": 10}, "code": 429}
    negative = _refused(_pdb({"disruptionsAllowed": -1}))
    assert (negative.code, negative.message, negative.details) == (
        403, 'poddisruptionbudget.policy "foo" is forbidden: pdb disruptions allowed is negative',
        {"name": "foo", "group": "policy", "kind": "poddisruptionbudget"})
    crowded = _refused(_pdb({"disruptionsAllowed": 1, "disruptedPods": {f"p{i}": "t" for i in range(2001)}}))
    assert crowded.message == ('poddisruptionbudget.policy "foo" is forbidden: DisruptedPods map too big - too many '
                               "evictions not confirmed by PDB controller")
    none = _refused(_pdb({"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 2}))
    assert none.status()["details"] == {"causes": [{"reason": "DisruptionBudget", "message": "The disruption budget "
                                                    "foo needs 2 healthy pods and has 1 currently"}]}
    assert none.retry_after is None


def test_dry_run_decrements_a_copy_only() -> None:
    """A dry run takes the disruption on the object read and writes nothing (no scope is touched)."""
    pdb = _pdb({"disruptionsAllowed": 1})
    asyncio.run(pods._check_and_decrement(cast(RequestScope, None), "p", pdb, dry_run=True))
    assert pdb["status"]["disruptionsAllowed"] == 0 and "disruptedPods" not in pdb["status"]
    assert [(c["type"], c["status"], c["reason"], c["message"], c["observedGeneration"])
            for c in pdb["status"]["conditions"]] == [("DisruptionAllowed", "False", "InsufficientPods", "", 1)]


def test_disruption_allowed_condition_keeps_its_transition_time_without_a_change() -> None:
    pdb = _pdb({"conditions": [{"type": "DisruptionAllowed", "status": "False", "reason": "Old", "message": "m",
                                "lastTransitionTime": "2020-01-01T00:00:00Z"}]})
    pods._disruption_allowed_condition(pdb)
    assert pdb["status"]["conditions"] == [{"type": "DisruptionAllowed", "status": "False", "observedGeneration": 1,
                                            "reason": "InsufficientPods", "message": "",
                                            "lastTransitionTime": "2020-01-01T00:00:00Z"}]


def test_update_pod_condition_replaces_the_condition_whole() -> None:
    """podutil.UpdatePodCondition: reason and message go; the transition time stays while the status does."""
    pod: dict[str, Any] = {"status": {"conditions": [
        {"type": "PodScheduled", "status": "True", "reason": "Old", "lastTransitionTime": "2020-01-01T00:00:00Z"},
        {"type": "Ready", "status": "False"}]}}
    pods._update_pod_condition(pod, {"type": "PodScheduled", "status": "True"})
    assert pod["status"]["conditions"][0] == {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                                              "lastTransitionTime": "2020-01-01T00:00:00Z"}
    pods._update_pod_condition(pod, {"type": "Ready", "status": "True"})
    assert pod["status"]["conditions"][1]["lastTransitionTime"] != "2020-01-01T00:00:00Z"


def test_budget_selectors() -> None:
    """LabelSelectorAsSelector: nil selects nothing, ``{}`` everything."""
    assert not pods._labels_match(None, {"a": "b"})
    assert pods._labels_match({}, {"a": "b"})
    assert pods._labels_match({"matchLabels": {"a": "b"}}, {"a": "b"})
    assert not pods._labels_match({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, {"a": "b"})


@pytest.mark.parametrize(("target", "message"), [
    ({"kind": "Pod", "name": "n"}, 'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"'),
    ({"kind": "Node"}, "target.name: Required value"),
    ({"kind": "x"}, '[target.kind: Unsupported value: "x": supported values: "Node", "<empty>", target.name: '
                    "Required value]"),
])
def test_validate_pod_binding(target: dict[str, Any], message: str) -> None:
    """ValidatePodBinding's aggregate is a plain error: 500, no reason."""
    with pytest.raises(errors.StatusError) as caught:
        pods._validate_binding(target)
    assert caught.value.status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                     "message": message, "code": 500}


def test_validate_pod_binding_accepts_node_and_empty() -> None:
    pods._validate_binding({"name": "n"})
    pods._validate_binding({"kind": "Node", "name": "n"})
