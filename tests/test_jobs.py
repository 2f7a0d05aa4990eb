"""kapi.jobs: the Job strategy's generated selector and labels, and validateGeneratedSelector."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from kapi import defaults, jobs, kindvalidation, strategy
from kapi.resources import REGISTRY

JOBS = REGISTRY.get("batch", "v1", "jobs")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def job(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "pi", "image": "perl"}]}}, **spec}}
    defaults.apply(body, "batch", "Job")
    return body


def created(body: dict[str, Any]) -> dict[str, Any]:
    return strategy.prepare_for_create(body, JOBS, "ns", NOW)


def causes(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in kindvalidation.validate(obj, "batch", "Job")]


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
    assert ("spec.template.metadata.labels", "Invalid value: " + kindvalidation._go_string_map(
        out["spec"]["template"]["metadata"]["labels"]) + ": " + kindvalidation.SELECTOR_MISMATCH) in found
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
    assert jobs.validate(legacy) == []
    assert [c.field for c in jobs.validate(legacy, require_prefixed_labels=True)] == [
        f"spec.template.metadata.labels[{jobs.CONTROLLER_UID}]", f"spec.template.metadata.labels[{jobs.JOB_NAME}]",
        "spec.selector"]


def test_cronjob_templates_get_no_generated_selector() -> None:
    cronjobs = REGISTRY.get("batch", "v1", "cronjobs")
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {}}}}}}
    out = strategy.prepare_for_create(body, cronjobs, "ns", NOW)
    assert "selector" not in out["spec"]["jobTemplate"]["spec"]
