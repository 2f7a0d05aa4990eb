"""disruption loop helpers: kube's selector, percentage, disrupted-pod expiry, healthy count and condition rules."""

from __future__ import annotations

import datetime

import pytest

from services.controllers.loops import disruption

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)


def _pod(name: str, ready: bool = True, deleting: bool = False, labels: dict[str, str] | None = None
         ) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "namespace": "ns", "labels": labels or {"app": "a"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-02T03:00:00Z"
    return {"metadata": meta, "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def test_a_null_selector_selects_nothing_and_an_empty_one_everything() -> None:
    pod = _pod("p")
    assert not disruption.selects({"metadata": {"namespace": "ns"}, "spec": {}}, pod)
    assert disruption.selects({"metadata": {"namespace": "ns"}, "spec": {"selector": {}}}, pod)
    assert not disruption.selects({"metadata": {"namespace": "other"}, "spec": {"selector": {}}}, pod)
    assert not disruption.selects({"metadata": {"namespace": "ns"},
                                   "spec": {"selector": {"matchLabels": {"app": "b"}}}}, pod)


def test_percentages_round_up() -> None:
    assert disruption.scaled(2, 10) == 2
    assert disruption.scaled("50%", 3) == 2
    assert disruption.scaled("10%", 4) == 1
    with pytest.raises(disruption.SyncError, match="string is not a percentage"):
        disruption.scaled("x", 4)


def test_disrupted_pods_expire_after_two_minutes() -> None:
    pods = [_pod("fresh"), _pod("old"), _pod("deleting", deleting=True)]
    pdb = {"status": {"disruptedPods": {"fresh": "2026-01-02T03:03:05Z", "old": "2026-01-02T03:01:00Z",
                                        "deleting": "2026-01-02T03:04:00Z", "gone": "2026-01-02T03:04:00Z"}}}
    kept, recheck = disruption.disrupted_pods(pdb, pods, NOW)
    assert kept == {"fresh": "2026-01-02T03:03:05Z"}
    assert recheck == datetime.datetime(2026, 1, 2, 3, 5, 5, tzinfo=datetime.UTC)
    # fresh is still expected to go, deleting is being deleted, not-ready is not healthy: one healthy pod
    healthy = [*pods, _pod("ok"), _pod("not-ready", ready=False)]
    assert disruption.current_healthy(healthy, kept, NOW) == 2  # "old" and "ok"


def test_the_condition_keeps_its_transition_time_while_its_status_holds() -> None:
    status: dict[str, object] = {}
    disruption.set_condition(status, {"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
                                      "message": "", "observedGeneration": 0}, NOW)
    assert status["conditions"] == [{"type": "DisruptionAllowed", "status": "False", "reason": "InsufficientPods",
                                     "message": "", "lastTransitionTime": "2026-01-02T03:04:05Z"}]
    later = NOW + datetime.timedelta(minutes=1)
    disruption.set_condition(status, {"type": "DisruptionAllowed", "status": "False", "reason": "SyncFailed",
                                      "message": "boom", "observedGeneration": 3}, later)
    [cond] = status["conditions"]  # type: ignore[misc]
    assert (cond["reason"], cond["message"], cond["observedGeneration"], cond["lastTransitionTime"]) == \
        ("SyncFailed", "boom", 3, "2026-01-02T03:04:05Z")
    disruption.set_condition(status, {"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods",
                                      "message": "", "observedGeneration": 3}, later)
    assert status["conditions"][0]["lastTransitionTime"] == "2026-01-02T03:05:05Z"  # type: ignore[index]


def test_conditions_are_up_to_date_only_for_the_current_generation() -> None:
    pdb = {"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "disruptionsAllowed": 1, "conditions": [
        {"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods"}]}}
    assert disruption.conditions_up_to_date(pdb)
    pdb["status"]["disruptionsAllowed"] = 0  # type: ignore[index]
    assert not disruption.conditions_up_to_date(pdb)
    pdb["status"]["disruptionsAllowed"], pdb["metadata"]["generation"] = 1, 3  # type: ignore[index]
    assert not disruption.conditions_up_to_date(pdb)
