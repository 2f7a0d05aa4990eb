"""kapi.kinds.jobpolicy: validateJobSpec's podFailurePolicy and successPolicy rules, kube's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds import strategy_for
from kapi.kinds.jobpolicy import indexes_total

TEMPLATE = {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "x"}],
                     "initContainers": [{"name": "setup", "image": "x"}]}}


def _causes(**spec: Any) -> list[tuple[str, str]]:
    job = {"metadata": {"name": "j", "namespace": "d"}, "spec": {"template": TEMPLATE, **spec}}
    return [(c.field, c.message) for c in strategy_for("batch", "Job").validate(job)]


@pytest.mark.parametrize(("rule", "expected"), [
    ({"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1, 2]}}, []),
    ({"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}, []),
    ({"onExitCodes": {"operator": "In", "values": [1]}},
     [("spec.podFailurePolicy.rules[0].action",
       'Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]')]),
    ({"action": "Retry", "onExitCodes": {"operator": "In", "values": [1]}},
     [("spec.podFailurePolicy.rules[0].action",
       'Unsupported value: "Retry": supported values: "Count", "FailIndex", "FailJob", "Ignore"')]),
    ({"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [1]}},
     [("spec.podFailurePolicy.rules[0].action",
       'Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set')]),
    ({"action": "FailJob", "onExitCodes": {"containerName": "other", "values": [3, 0, 3]}},
     [("spec.podFailurePolicy.rules[0].onExitCodes.operator", 'Required value: valid values: ["In" "NotIn"]'),
      ("spec.podFailurePolicy.rules[0].onExitCodes.containerName",
       'Invalid value: "other": must be one of the container or initContainer names in the pod template'),
      ("spec.podFailurePolicy.rules[0].onExitCodes.values[2]", "Duplicate value: 3"),
      ("spec.podFailurePolicy.rules[0].onExitCodes.values", "Invalid value: []int32{3, 0, 3}: must be ordered")]),
    ({"action": "FailJob", "onExitCodes": {"operator": "In", "containerName": "setup", "values": [0, 1]}},
     [("spec.podFailurePolicy.rules[0].onExitCodes.values[0]", "Invalid value: 0: must not be 0 for the In operator")]),
    ({"action": "FailJob", "onExitCodes": {"operator": "Between"}},
     [("spec.podFailurePolicy.rules[0].onExitCodes.operator",
       'Unsupported value: "Between": supported values: "In", "NotIn"'),
      ("spec.podFailurePolicy.rules[0].onExitCodes.values",
       "Invalid value: []int32(nil): at least one value is required")]),
    ({"action": "Count", "onPodConditions": [{"type": "bad type", "status": "Maybe"}, {"type": "Ready"}]},
     [("spec.podFailurePolicy.rules[0].onPodConditions[0].type",
       "Invalid value: \"bad type\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
       "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
       "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
      ("spec.podFailurePolicy.rules[0].onPodConditions[0].status",
       'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'),
      ("spec.podFailurePolicy.rules[0].onPodConditions[1].status",
       'Required value: valid values: ["False" "True" "Unknown"]')]),
    ({"action": "Count"},
     [("spec.podFailurePolicy.rules[0]", "Invalid value: specifying one of OnExitCodes and OnPodConditions is "
                                         "required")]),
    ({"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [1]},
      "onPodConditions": [{"type": "Ready", "status": "True"}]},
     [("spec.podFailurePolicy.rules[0]", "Invalid value: specifying both OnExitCodes and OnPodConditions is not "
                                         "supported")]),
])
def test_pod_failure_policy_rules(rule: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert _causes(podFailurePolicy={"rules": [rule]}) == expected


def test_pod_failure_policy_rule_count() -> None:
    rule = {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [1]}}
    assert _causes(podFailurePolicy={"rules": [rule] * 21}) == [
        ("spec.podFailurePolicy.rules", "Too many: 21: must have at most 20 items")]


@pytest.mark.parametrize(("policy", "expected"), [
    ({"rules": [{"succeededIndexes": "0,2-3", "succeededCount": 2}]}, []),
    ({"rules": []}, [("spec.successPolicy.rules",
                      "Required value: at least one rules must be specified when the successPolicy is specified")]),
    ({"rules": [{}]}, [("spec.successPolicy.rules[0]",
                        "Required value: at least one of succeededCount or succeededIndexes must be specified")]),
    ({"rules": [{"succeededIndexes": "3-1"}]}, [("spec.successPolicy.rules[0].succeededIndexes",
                                                 'Invalid value: "3-1": error parsing succeededIndexes: '
                                                 "non-increasing order, previous: 3, current: 1")]),
    ({"rules": [{"succeededIndexes": "0-1", "succeededCount": 5}]},
     [("spec.successPolicy.rules[0].succeededCount",
       "Invalid value: 5: must be less than or equal to 4 (the number of specified completions)"),
      ("spec.successPolicy.rules[0].succeededCount",
       "Invalid value: 5: must be less than or equal to 2 (the number of indexes in the specified succeededIndexes "
       "field)")]),
    ({"rules": [{"succeededCount": -1}]}, [("spec.successPolicy.rules[0].succeededCount",
                                            "Invalid value: -1: must be greater than or equal to 0")]),
])
def test_success_policy_rules(policy: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert _causes(completionMode="Indexed", completions=4, parallelism=1, successPolicy=policy) == expected


def test_success_policy_needs_indexed_jobs() -> None:
    assert _causes(successPolicy={"rules": [{"succeededCount": 1}]}) == [
        ("spec.successPolicy", "Invalid value: batch.SuccessPolicy{...}: requires indexed completion mode")]


@pytest.mark.parametrize(("text", "result"), [
    ("", 0), ("1", 1), ("0,2-4", 4),
    ("1-2-3", "the fragment \"1-2-3\" violates the requirement that an index interval can have at most two parts "
              "separated by '-'"),
    ("a", 'cannot convert string to integer for index: "a"'),
    ("-1", 'cannot convert string to integer for index: ""'),
    ("5", 'too large index: "5"'),
    ("2,1", "non-increasing order, previous: 2, current: 1"),
])
def test_indexes_format(text: str, result: int | str) -> None:
    if isinstance(result, int):
        assert indexes_total(text, 5) == result
    else:
        with pytest.raises(ValueError) as exc:
            indexes_total(text, 5)
        assert str(exc.value) == result


def test_indexed_job_names_leave_room_for_the_pod_index() -> None:
    """ValidateJob: an Indexed Job's last pod hostname, <name>-<completions-1>, must be a DNS label."""
    name = "j" * 62  # + "-9": 64 characters
    job = {"metadata": {"name": name, "namespace": "d"},
           "spec": {"template": TEMPLATE, "completionMode": "Indexed", "completions": 10, "parallelism": 1}}
    causes = strategy_for("batch", "Job").validate(job)
    assert [(c.field, c.message) for c in causes] == [
        ("metadata.name", f'Invalid value: "{name}": will not able to create pod with invalid DNS label: {name}-9')]
    job["metadata"]["name"] = "j" * 61  # + "-9": 63
    assert strategy_for("batch", "Job").validate(job) == []
    job["spec"].pop("completionMode")
    job["metadata"]["name"] = name
    assert strategy_for("batch", "Job").validate(job) == []
