"""kapi.kinds.batch: the Job strategy's generated selector and labels, validateGeneratedSelector, update rules."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from kapi import strategy
from kapi.kinds import batch as jobs
from kapi.kinds import fields, podspec, strategy_for
from kapi.resources import REGISTRY

JOBS = REGISTRY.get("batch", "v1", "jobs")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "pi", "image": "perl"}]}}, **spec}}
    strategy_for("batch", "Job").default(body)
    return body


def created(body: dict[str, Any]) -> dict[str, Any]:
    return strategy.prepare_for_create(body, JOBS, "ns", NOW)


def causes(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in strategy_for("batch", "Job").validate(obj)]


def test_create_generates_selector_and_labels_from_the_final_uid() -> None:
    out = created(job())
    uid = out["metadata"]["uid"]
    assert uid
    assert out["spec"]["selector"] == {"matchLabels": {jobs.CONTROLLER_UID: uid}}
    assert out["spec"]["template"]["metadata"]["labels"] == {
        jobs.CONTROLLER_UID: uid, jobs.JOB_NAME: "pi", "controller-uid": uid, "job-name": "pi"}
    # SetDefaults_Job as seen on read: a Job without labels takes its template's.
    assert out["metadata"]["labels"] == out["spec"]["template"]["metadata"]["labels"]
    assert causes(out) == []


def test_a_uid_in_the_body_is_replaced_before_generation() -> None:
    body = job()
    body["metadata"]["uid"] = "client-chosen"
    out = created(body)
    assert out["metadata"]["uid"] != "client-chosen"
    assert out["spec"]["selector"]["matchLabels"][jobs.CONTROLLER_UID] == out["metadata"]["uid"]


def test_user_labels_are_kept_and_added_to() -> None:
    body = job()
    body["metadata"]["labels"] = {"team": "a"}
    body["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    out = created(body)
    uid = out["metadata"]["uid"]
    assert out["spec"]["selector"]["matchLabels"] == {jobs.CONTROLLER_UID: uid}
    assert out["spec"]["template"]["metadata"]["labels"]["app"] == "x"
    assert out["metadata"]["labels"] == {"team": "a"}
    assert causes(out) == []


def test_manual_selector_is_left_alone() -> None:
    body = job(manualSelector=True, selector={"matchLabels": {"app": "x"}})
    body["spec"]["template"]["metadata"] = {"labels": {"app": "x"}}
    out = created(body)
    assert out["spec"]["selector"] == {"matchLabels": {"app": "x"}}
    assert out["spec"]["template"]["metadata"]["labels"] == {"app": "x"}
    assert causes(out) == []


def test_manual_selector_needs_a_selector() -> None:
    out = created(job(manualSelector=True))
    assert ("spec.selector", "Required value") in causes(out)


def test_a_selector_that_does_not_match_is_refused() -> None:
    # manualSelector false and a selector of its own: the generated uid label is added to it, but it still
    # selects more than the uid (kube's "not auto-generated"), and here the template does not carry it either.
    out = created(job(selector={"matchLabels": {"app": "x"}}))
    found = causes(out)
    assert ("spec.template.metadata.labels", "Invalid value: " + fields.go_string_map(
        out["spec"]["template"]["metadata"]["labels"]) + ": " + podspec.SELECTOR_MISMATCH) in found
    assert [f for f, m in found if f == "spec.selector" and m.endswith(jobs.NOT_AUTO_GENERATED)]


@pytest.mark.parametrize("label", [jobs.CONTROLLER_UID, "controller-uid", jobs.JOB_NAME, "job-name"])
def test_a_wrong_generated_label_value_is_refused(label: str) -> None:
    body = job()
    body["spec"]["template"]["metadata"] = {"labels": {label: "wrong"}}
    out = created(body)
    found = causes(out)
    expected = out["metadata"]["name"] if "name" in label else out["metadata"]["uid"]
    assert any(f == f"spec.template.metadata.labels[{label}]" and m.endswith(f"must be '{expected}'")
               for f, m in found), found


def test_a_wrong_uid_in_the_selector_is_refused() -> None:
    out = created(job(selector={"matchLabels": {jobs.CONTROLLER_UID: "wrong"}}))
    assert [m for f, m in causes(out) if f == "spec.selector" and jobs.NOT_AUTO_GENERATED in m]


def test_legacy_jobs_without_prefixed_labels_validate_on_the_legacy_uid_label() -> None:
    out = created(job())
    legacy = copy.deepcopy(out)
    uid = out["metadata"]["uid"]
    for key in (jobs.CONTROLLER_UID, jobs.JOB_NAME):
        del legacy["spec"]["template"]["metadata"]["labels"][key]
    legacy["spec"]["selector"] = {"matchLabels": {"controller-uid": uid}}
    assert jobs.validate_generated_selector(legacy) == []
    assert [c.field for c in jobs.validate_generated_selector(legacy, require_prefixed_labels=True)] == [
        f"spec.template.metadata.labels[{jobs.CONTROLLER_UID}]", f"spec.template.metadata.labels[{jobs.JOB_NAME}]",
        "spec.selector"]


def test_cronjob_templates_get_no_generated_selector() -> None:
    cronjobs = REGISTRY.get("batch", "v1", "cronjobs")
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {}}}}}}
    out = strategy.prepare_for_create(body, cronjobs, "ns", NOW)
    assert "selector" not in out["spec"]["jobTemplate"]["spec"]


JOB = strategy_for("batch", "Job")


def _stored(**spec: Any) -> dict[str, Any]:
    return created(job(**spec))


def _changed(old: dict[str, Any], **spec: Any) -> dict[str, Any]:
    new = copy.deepcopy(old)
    new["spec"].update(copy.deepcopy(spec))
    return new


def _immutable(path: str, shown: str) -> tuple[str, str]:
    return path, f"Invalid value: {shown}: field is immutable"


def test_job_selector_and_template_are_immutable() -> None:
    old = _stored()
    uid = old["metadata"]["uid"]
    new = _changed(old, selector={"matchLabels": {jobs.CONTROLLER_UID: uid, "x": "y"}})
    assert [(c.field, c.message) for c in JOB.validate_update(new, old)] == [_immutable(
        "spec.selector", f"&LabelSelector{{MatchLabels:map[string]string{{{jobs.CONTROLLER_UID}: {uid},x: y,}},"
                         "MatchExpressions:[]LabelSelectorRequirement{},}")]
    image = copy.deepcopy(old)
    image["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:2"
    assert [(c.field, c.message) for c in JOB.validate_update(image, old)] == [
        _immutable("spec.template", jobs.TEMPLATE_VALUE)]
    assert JOB.validate_update(copy.deepcopy(old), old) == []
    assert JOB.validate_update(image, old, "status") == []


@pytest.mark.parametrize(("spec", "change", "expected"), [
    ({}, {"completions": 3}, [_immutable("spec.completions", "3")]),
    ({}, {"parallelism": 4}, []),
    ({}, {"suspend": True, "activeDeadlineSeconds": 60, "backoffLimit": 2, "ttlSecondsAfterFinished": 5}, []),
    ({"completionMode": "Indexed", "completions": 2, "parallelism": 2}, {"completions": 4, "parallelism": 4}, []),
    ({"completionMode": "Indexed", "completions": 2, "parallelism": 2}, {"completions": 4},
     [("spec.completions", "Invalid value: 4: can only be modified in tandem with spec.parallelism")]),
    ({}, {"completionMode": "Indexed"}, [_immutable("spec.completionMode", '"Indexed"')]),
    ({}, {"managedBy": "example.com/ctrl"}, [_immutable("spec.managedBy", '"example.com/ctrl"')]),
    ({"completionMode": "Indexed", "completions": 2, "parallelism": 2, "backoffLimitPerIndex": 1},
     {"backoffLimitPerIndex": 2}, [_immutable("spec.backoffLimitPerIndex", "2")]),
    ({}, {"podFailurePolicy": {"rules": []}}, [_immutable("spec.podFailurePolicy", "batch.PodFailurePolicy{...}")]),
])
def test_job_spec_update_rules(spec: dict[str, Any], change: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    old = _stored(**spec)
    assert [(c.field, c.message) for c in JOB.validate_update(_changed(old, **change), old)] == expected


def test_suspended_jobs_that_never_started_may_change_scheduling_directives() -> None:
    old = _stored(suspend=True)
    new = copy.deepcopy(old)
    template = new["spec"]["template"]
    template["metadata"]["labels"]["queue"] = "a"
    template["metadata"]["annotations"] = {"note": "x"}
    template["spec"].update({"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "k", "operator": "Exists"}],
                             "schedulingGates": [{"name": "wait"}],
                             "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                                 "nodeSelectorTerms": [{"matchExpressions": [
                                     {"key": "zone", "operator": "In", "values": ["a"]}]}]}}}})
    assert JOB.validate_update(new, old) == []
    started = copy.deepcopy(old)
    started["status"] = {"startTime": "2026-01-01T00:00:00Z"}
    assert [c.field for c in JOB.validate_update(new, started)] == ["spec.template"]
    running = _stored()
    moved = copy.deepcopy(running)
    moved["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    assert [c.field for c in JOB.validate_update(moved, running)] == ["spec.template"]
    other = copy.deepcopy(old)
    other["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:2"
    assert [c.field for c in JOB.validate_update(other, old)] == ["spec.template"]
    pod_affinity = copy.deepcopy(old)
    pod_affinity["spec"]["template"]["spec"]["affinity"] = {"podAffinity": {}}
    assert [c.field for c in JOB.validate_update(pod_affinity, old)] == ["spec.template"]


def _cronjob(schedule: str = "*/1 * * * *", generation: int = 1) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "generation": generation},
            "spec": {"schedule": schedule, "jobTemplate": {"spec": {"completionMode": "Indexed", "completions": 100_001,
                                                                    "parallelism": 10_001, "template": {"spec": {}}}}}}


INDEXED_WARNING = ("In Indexed Jobs with a number of completions higher than 10^5 and a parallelism higher than "
                   "10^4, Kubernetes might not be able to track completedIndexes when a big number of indexes fail")


@pytest.mark.parametrize(("completions", "parallelism", "warns"), [
    (100_001, 10_001, True), (100_000, 10_001, False), (100_001, 10_000, False), (None, 10_001, False)])
def test_indexed_jobs_past_the_soft_limits_warn(completions: int | None, parallelism: int, warns: bool) -> None:
    """WarningsForJobSpec: both limits exceeded in an Indexed Job, on create and on a spec change."""
    spec: dict[str, Any] = {"completionMode": "Indexed", "parallelism": parallelism}
    if completions is not None:
        spec["completions"] = completions
    body = job(**spec)
    body["metadata"]["generation"] = 1
    expected = [f"spec: {INDEXED_WARNING}"] if warns else []
    strat = strategy_for("batch", "Job")
    assert strat.warnings_on_create(body) == expected
    changed = copy.deepcopy(body)
    changed["metadata"]["generation"] = 2
    assert strat.warnings_on_update(changed, body) == expected
    assert strat.warnings_on_update(body, body) == []
    assert strategy_for("batch", "Job").warnings_on_create(job()) == []


def test_cronjob_warnings_name_the_job_template_spec_and_a_kept_tz_schedule() -> None:
    strat = strategy_for("batch", "CronJob")
    assert strat.warnings_on_create(_cronjob()) == [f"spec.jobTemplate.spec: {INDEXED_WARNING}"]
    old, new = _cronjob("TZ=UTC 0 * * * *"), _cronjob("TZ=UTC 0 * * * *")
    tz = ("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see "
          "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details")
    assert strat.warnings_on_update(new, old) == [tz]
    assert strat.warnings_on_update(_cronjob(generation=2), _cronjob()) == [f"spec.jobTemplate.spec: {INDEXED_WARNING}"]
    assert strat.warnings_on_update(_cronjob(), _cronjob()) == []
