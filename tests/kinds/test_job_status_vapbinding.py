"""Job status updates (ValidateJobUpdateStatus with the options of getStatusValidationOptions) and the
ValidatingAdmissionPolicyBinding rules of validateValidatingAdmissionPolicyBindingSpec: kube 1.37's messages."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.kinds import strategy_for

T0 = "2026-12-02T05:00:00Z"
T1 = "2026-12-02T06:00:00Z"


def _job(spec: dict[str, Any] | None = None, **status: Any) -> dict[str, Any]:
    return {"spec": {"completions": 1, "parallelism": 1, **(spec or {})}, "status": dict(status)}


def _cond(*types: str) -> list[dict[str, str]]:
    return [{"type": t, "status": "True"} for t in types]


def _status_causes(new: dict[str, Any], old: dict[str, Any]) -> list[tuple[str, str]]:
    causes = strategy_for("batch", "Job").validate_update(new, old, "status")
    return [(c.field, c.message) for c in causes]


def test_a_well_formed_completion_is_accepted():
    old = _job(startTime=T0, active=1)
    new = _job(startTime=T0, completionTime=T1, succeeded=1,
               conditions=_cond("SuccessCriteriaMet", "Complete"))
    assert _status_causes(new, old) == []
    failed = _job(startTime=T0, failed=1, conditions=_cond("FailureTarget", "Failed"))
    assert _status_causes(failed, old) == []


@pytest.mark.parametrize(("old", "new", "expected"), [
    # terminal conditions stay
    (_job(startTime=T0, completionTime=T1, conditions=_cond("SuccessCriteriaMet", "Complete")),
     _job(startTime=T0, completionTime=T1, conditions=_cond("SuccessCriteriaMet")),
     [("status.completionTime", "Invalid value: 2026-12-02 06:00:00 +0000 UTC: cannot set completionTime when "
       "there is no Complete=True condition"),
      ("status.conditions", "Invalid value: cannot disable the terminal Complete=True condition")]),
    (_job(startTime=T0, conditions=_cond("FailureTarget", "Failed")),
     _job(startTime=T0, conditions=_cond("FailureTarget")),
     [("status.conditions", "Invalid value: cannot disable the terminal Failed=True condition")]),
    # Complete and Failed, Complete and FailureTarget
    (_job(startTime=T0),
     _job(startTime=T0, completionTime=T1, conditions=_cond("SuccessCriteriaMet", "Complete", "FailureTarget",
                                                             "Failed")),
     [("status.conditions", "Invalid value: cannot set Complete=True and Failed=true conditions"),
      ("status.conditions", "Invalid value: cannot set Complete=True and FailureTarget=true conditions"),
      ("status.conditions", "Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions"),
      ("status.conditions", "Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true "
       "conditions")]),
    # Complete needs completionTime and SuccessCriteriaMet; Failed needs FailureTarget; finished needs startTime
    (_job(), _job(conditions=_cond("Complete")),
     [("status.completionTime", "Required value: completionTime is required for Complete jobs"),
      ("status.conditions", "Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true "
       "condition"),
      ("status.startTime", "Required value: startTime is required for finished job")]),
    (_job(startTime=T0), _job(startTime=T0, conditions=_cond("Failed")),
     [("status.conditions", "Invalid value: cannot set Failed=True condition without the FailureTarget=true "
       "condition")]),
    # completionTime before startTime, then mutated
    (_job(startTime=T1),
     _job(startTime=T1, completionTime=T0, conditions=_cond("SuccessCriteriaMet", "Complete")),
     [("status.completionTime", "Invalid value: 2026-12-02 05:00:00 +0000 UTC: completionTime cannot be set before "
       "startTime")]),
    (_job(startTime=T0, completionTime=T1, conditions=_cond("SuccessCriteriaMet", "Complete")),
     _job(startTime=T0, completionTime="2026-12-02T07:00:00.5Z", conditions=_cond("SuccessCriteriaMet", "Complete")),
     [("status.completionTime", "Invalid value: 2026-12-02 07:00:00.5 +0000 UTC: completionTime cannot be "
       "mutated")]),
    # startTime of an unsuspended Job
    (_job(startTime=T0), _job(),
     [("status.startTime", "Required value: startTime cannot be removed for unsuspended job")]),
    (_job(startTime=T0), _job(startTime=T1),
     [("status.startTime", "Required value: startTime cannot be removed for unsuspended job")]),
    # counters
    (_job(failed=2, succeeded=3), _job(failed=1, succeeded=2, ready=-1),
     [("status.ready", "Invalid value: -1: must be greater than or equal to 0"),
      ("status.failed", "Invalid value: 1: cannot decrease the failed counter"),
      ("status.succeeded", "Invalid value: 2: cannot decrease the succeeded counter")]),
    (_job(active=3, ready=1), _job(active=2, ready=3),
     [("status.ready", "Invalid value: 3: cannot set more ready pods than active")]),
    # finished Jobs hold no active, terminating or uncounted pods
    (_job(startTime=T0, active=1, terminating=1, uncountedTerminatedPods={"succeeded": ["u1"]}),
     _job(startTime=T0, active=1, terminating=1, uncountedTerminatedPods={"succeeded": ["u1"]},
          conditions=_cond("FailureTarget", "Failed")),
     [("status.active", "Invalid value: 1: active>0 is invalid for finished job"),
      ("status.uncountedTerminatedPods", 'Invalid value: batch.UncountedTerminatedPods{Succeeded:[]types.UID{"u1"}, '
       "Failed:[]types.UID(nil)}: uncountedTerminatedPods needs to be empty for finished job"),
      ("status.terminating", "Invalid value: 1: terminating>0 is invalid for finished job")]),
    # indexes
    (_job(), _job(completedIndexes="0"),
     [("status.completedIndexes", 'Invalid value: "0": cannot set non-empty completedIndexes when non-indexed '
       "completion mode")]),
    (_job({"completionMode": "Indexed", "completions": 4, "parallelism": 2}),
     _job({"completionMode": "Indexed", "completions": 4, "parallelism": 2}, completedIndexes="1,0", succeeded=0),
     [("status.completedIndexes", 'Invalid value: "1,0": error parsing completedIndexes: non-increasing order, '
       "previous: 1, current: 0")]),
    (_job({"completionMode": "Indexed", "completions": 4}),
     _job({"completionMode": "Indexed", "completions": 4}, completedIndexes="0-5"),
     [("status.completedIndexes", 'Invalid value: "0-5": error parsing completedIndexes: too large index: "5"')]),
    (_job({"completionMode": "Indexed", "completions": 4}), _job({"completionMode": "Indexed", "completions": 4},
                                                                 failedIndexes="1"),
     [("status.failedIndexes", 'Invalid value: "1": cannot set non-null failedIndexes when backoffLimitPerIndex '
       "is null")]),
    (_job({"completionMode": "Indexed", "completions": 4, "backoffLimitPerIndex": 1}),
     _job({"completionMode": "Indexed", "completions": 4, "backoffLimitPerIndex": 1}, completedIndexes="0-2",
          failedIndexes="2-3,x"),
     [("status.failedIndexes", 'Invalid value: "2-3,x": error parsing failedIndexes: cannot convert string to '
       'integer for index: "x"'),
      ("status.failedIndexes", 'Invalid value: "2-3,x": failedIndexes and completedIndexes overlap at index: 2')]),
    # a successPolicy's Complete needs SuccessCriteriaMet even when nothing else changed
    (_job({"successPolicy": {"rules": [{"succeededCount": 1}]}}, startTime=T0, completionTime=T1,
          conditions=_cond("Complete")),
     _job({"successPolicy": {"rules": [{"succeededCount": 1}]}}, startTime=T0, completionTime=T1,
          conditions=_cond("Complete")),
     [("status.conditions", "Invalid value: cannot set Complete=True for Job with SuccessPolicy unless "
       "SuccessCriteriaMet=True")]),
])
def test_status_update_rules(old, new, expected):
    assert _status_causes(new, old) == expected


def test_rules_run_only_on_the_fields_that_changed():
    """A stored status that breaks a gated rule does not block an update leaving those fields alone."""
    stored = _job(active=1, conditions=_cond("Complete"))  # no completionTime, startTime, SuccessCriteriaMet
    update = copy.deepcopy(stored)
    update["status"]["failed"] = 1
    assert _status_causes(update, stored) == []
    update["status"]["active"] = 2  # active changed on a finished Job
    assert _status_causes(update, stored) == [
        ("status.active", "Invalid value: 2: active>0 is invalid for finished job")]


def test_exceptions_kube_allows():
    indexed = {"completionMode": "Indexed", "completions": 3, "parallelism": 3}
    # an Indexed Job with completions == parallelism may lose succeeded pods (scaled down)
    assert _status_causes(_job(indexed, succeeded=1), _job(indexed, succeeded=2)) == []
    assert _status_causes(_job({**indexed, "parallelism": 2}, succeeded=1),
                          _job({**indexed, "parallelism": 2}, succeeded=2)) == [
        ("status.succeeded", "Invalid value: 1: cannot decrease the succeeded counter")]
    # a suspended Job's startTime may go; resuming one that carries Suspended=True may reset it
    assert _status_causes(_job({"suspend": True}), _job({"suspend": True}, startTime=T0)) == []
    resumed = _job(startTime=T0, conditions=_cond("Suspended"))
    assert _status_causes(_job(startTime=T1), resumed) == []
    # a suspended Job with zero completions completes without a startTime (kubernetes#132614)
    zero = {"suspend": True, "completions": 0}
    assert _status_causes(_job(zero, completionTime=T1, conditions=_cond("SuccessCriteriaMet", "Complete")),
                          _job(zero)) == []
    # the startTime may be set the first time
    assert _status_causes(_job(startTime=T0), _job()) == []


# ------------------------------------------------------------ ValidatingAdmissionPolicyBinding


def _binding_causes(**spec: Any) -> list[tuple[str, str]]:
    binding = {"metadata": {"name": "b"}, "spec": {"policyName": "p", "validationActions": ["Deny"], **spec}}
    strategy = strategy_for("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding")
    strategy.default(binding)
    return [(c.field, c.message) for c in strategy.validate(binding)]


@pytest.mark.parametrize(("spec", "expected"), [
    ({"paramRef": {"name": "cfg", "parameterNotFoundAction": "Deny"}}, []),
    ({"paramRef": {"selector": {"matchLabels": {"a": "b"}}, "namespace": "ns", "parameterNotFoundAction": "Allow"}},
     []),
    ({"paramRef": {}},
     [("spec.paramRef", "Required value: one of name or selector must be specified"),
      ("spec.paramRef.parameterNotFoundAction", "Required value")]),
    ({"paramRef": {"name": "a/b", "selector": {"matchExpressions": [{"key": "k", "operator": "In"}]},
                   "parameterNotFoundAction": "Ignore"}},
     [("spec.paramRef.name", "Invalid value: \"a/b\": may not contain '/'"),
      ("spec.paramRef.name", "Forbidden: name and selector are mutually exclusive"),
      ("spec.paramRef.selector.matchExpressions[0].values",
       "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
      ("spec.paramRef.selector", "Forbidden: name and selector are mutually exclusive"),
      ("spec.paramRef.parameterNotFoundAction", 'Unsupported value: "Ignore": supported values: "Deny", "Allow"')]),
    ({"paramRef": {"name": "..", "parameterNotFoundAction": "Deny"}},
     [("spec.paramRef.name", "Invalid value: \"..\": may not be '..'")]),
    ({"matchResources": {"matchPolicy": "Fuzzy", "namespaceSelector": {"matchLabels": {"-bad": "x"}},
                         "resourceRules": [{"operations": ["CREATE", "*"], "apiGroups": [""], "apiVersions": ["v1"],
                                            "resources": ["pods/*", "pods/log"], "scope": "Global"}],
                         "excludeResourceRules": [{"operations": ["PATCH"], "apiGroups": ["apps"],
                                                   "apiVersions": ["v1"], "resources": [],
                                                   "resourceNames": ["x", "x"]}]}},
     [("spec.matchResources.matchPolicy", 'Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"'),
      ("spec.matchResources.namespaceSelector.matchLabels",
       "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
       "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
       "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
      ("spec.matchResources.resourceRules[0].operations",
       "Invalid value: []admissionregistration.OperationType{\"CREATE\", \"*\"}: if '*' is present, must not "
       "specify other operations"),
      ("spec.matchResources.resourceRules[0].resources[1]",
       "Invalid value: \"pods/log\": if 'pods/*' is present, must not specify pods/log"),
      ("spec.matchResources.resourceRules[0].scope",
       'Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"'),
      ("spec.matchResources.excludeResourceRules[0].resourceNames[1]", 'Duplicate value: "x"'),
      ("spec.matchResources.excludeResourceRules[0].operations[0]",
       'Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"'),
      ("spec.matchResources.excludeResourceRules[0].resources", "Required value")]),
])
def test_binding_param_ref_and_match_resources(spec, expected):
    assert _binding_causes(**spec) == expected
