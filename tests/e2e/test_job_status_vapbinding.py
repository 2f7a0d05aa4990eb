"""Job status updates and ValidatingAdmissionPolicyBinding validation through Envoy, with the official Python
client: kube-apiserver 1.37's 422 Invalid messages and field paths (kapi.kinds.jobstatus,
kapi.kinds.admissionregistration)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

T0 = "2026-12-02T05:00:00Z"
T1 = "2026-12-02T06:00:00Z"


@pytest.fixture(scope="module")
def api_client(stack: Any) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(stack.kubeconfig))


def _job(name: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "c", "image": "busybox"}]}}}}


def _refused(call: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    with pytest.raises(ApiException) as info:
        call(*args, **kwargs)
    assert info.value.status == 422, info.value.body
    body: dict[str, Any] = json.loads(info.value.body)
    assert body["reason"] == "Invalid"
    return body


def _cond(*types: str) -> list[dict[str, str]]:
    return [{"type": t, "status": "True"} for t in types]


def test_job_status_updates_follow_kube(api_client: client.ApiClient, namespace: str) -> None:
    batch = client.BatchV1Api(api_client)
    name = "status-rules"
    batch.create_namespaced_job(namespace, _job(name))
    patch = batch.patch_namespaced_job_status
    # Complete needs completionTime, SuccessCriteriaMet and a startTime
    body = _refused(patch, name, namespace, {"status": {"conditions": _cond("Complete")}})
    assert body["message"] == (
        f'Job.batch "{name}" is invalid: ['
        "status.completionTime: Required value: completionTime is required for Complete jobs, "
        "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true "
        "condition, "
        "status.startTime: Required value: startTime is required for finished job]")
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueRequired", "status.completionTime"), ("FieldValueInvalid", "status.conditions"),
        ("FieldValueRequired", "status.startTime")]
    # counters and ready <= active
    batch.patch_namespaced_job_status(name, namespace, {"status": {"startTime": T0, "active": 1, "failed": 2}})
    body = _refused(patch, name, namespace, {"status": {"ready": 2, "failed": 1}})
    assert body["message"] == (
        f'Job.batch "{name}" is invalid: ['
        "status.ready: Invalid value: 2: cannot set more ready pods than active, "
        "status.failed: Invalid value: 1: cannot decrease the failed counter]")
    # completionTime not before startTime; startTime stays
    body = _refused(patch, name, namespace, {"status": {
        "startTime": T1, "completionTime": T0, "active": 0,
        "conditions": _cond("SuccessCriteriaMet", "Complete")}})
    assert body["message"] == (
        f'Job.batch "{name}" is invalid: ['
        "status.completionTime: Invalid value: 2026-12-02 05:00:00 +0000 UTC: completionTime cannot be set before "
        "startTime, "
        "status.startTime: Required value: startTime cannot be removed for unsuspended job]")
    # a well-formed completion is stored, and then stays complete (PUT of the whole object)
    done = batch.patch_namespaced_job_status(name, namespace, {"status": {
        "completionTime": T1, "active": 0, "succeeded": 1, "conditions": _cond("SuccessCriteriaMet", "Complete")}})
    assert [c.type for c in done.status.conditions] == ["SuccessCriteriaMet", "Complete"]
    current = batch.read_namespaced_job_status(name, namespace)
    current.status.conditions = [c for c in current.status.conditions if c.type != "Complete"]
    body = _refused(batch.replace_namespaced_job_status, name, namespace, current)
    assert body["message"] == (
        f'Job.batch "{name}" is invalid: ['
        "status.completionTime: Invalid value: 2026-12-02 06:00:00 +0000 UTC: cannot set completionTime when there "
        "is no Complete=True condition, "
        "status.conditions: Invalid value: cannot disable the terminal Complete=True condition]")
    # Complete and Failed together; Failed without FailureTarget
    body = _refused(patch, name, namespace, {"status": {"conditions": _cond("SuccessCriteriaMet", "Complete",
                                                                            "Failed")}})
    assert body["message"] == (
        f'Job.batch "{name}" is invalid: ['
        "status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions, "
        "status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true "
        "condition, "
        "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and Failed=true conditions]")


def test_indexed_job_status_indexes(api_client: client.ApiClient, namespace: str) -> None:
    batch = client.BatchV1Api(api_client)
    name = "status-indexes"
    job = _job(name)
    job["spec"].update(completionMode="Indexed", completions=3, parallelism=2, backoffLimitPerIndex=1)
    batch.create_namespaced_job(namespace, job)
    body = _refused(batch.patch_namespaced_job_status, name, namespace, {"status": {
        "completedIndexes": "0-1,5", "failedIndexes": "1"}})
    assert body["message"] == (
        f'Job.batch "{name}" is invalid: ['
        'status.completedIndexes: Invalid value: "0-1,5": error parsing completedIndexes: too large index: "5", '
        'status.failedIndexes: Invalid value: "1": failedIndexes and completedIndexes overlap at index: 1]')
    stored = batch.patch_namespaced_job_status(name, namespace, {"status": {"completedIndexes": "0,2",
                                                                            "failedIndexes": "1"}})
    assert (stored.status.completed_indexes, stored.status.failed_indexes) == ("0,2", "1")


def test_binding_param_ref_and_match_resources(api_client: client.ApiClient, namespace: str) -> None:
    api = client.AdmissionregistrationV1Api(api_client)
    name = f"{namespace}-binding"

    def binding(**spec: Any) -> dict[str, Any]:
        return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                "metadata": {"name": name}, "spec": {"policyName": "p", "validationActions": ["Deny"], **spec}}

    body = _refused(api.create_validating_admission_policy_binding, binding(paramRef={
        "name": "cfg", "selector": {}, "parameterNotFoundAction": "Ignore"}))
    assert body["message"] == (
        f'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "{name}" is invalid: ['
        "spec.paramRef.name: Forbidden: name and selector are mutually exclusive, "
        "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, "
        'spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Deny", "Allow"]')
    assert [(c["reason"], c["field"]) for c in body["details"]["causes"]] == [
        ("FieldValueForbidden", "spec.paramRef.name"), ("FieldValueForbidden", "spec.paramRef.selector"),
        ("FieldValueNotSupported", "spec.paramRef.parameterNotFoundAction")]
    body = _refused(api.create_validating_admission_policy_binding, binding(paramRef={"namespace": "x"}))
    assert body["message"] == (
        f'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "{name}" is invalid: ['
        "spec.paramRef: Required value: one of name or selector must be specified, "
        "spec.paramRef.parameterNotFoundAction: Required value]")
    body = _refused(api.create_validating_admission_policy_binding, binding(matchResources={
        "resourceRules": [{"operations": ["CREATE"], "apiGroups": ["*", "apps"], "apiVersions": ["v1"],
                           "resources": ["*/*", "pods"]}],
        "excludeResourceRules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"],
                                  "resources": ["configmaps"], "scope": "Everywhere"}]}))
    assert body["message"] == (
        f'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "{name}" is invalid: ['
        "spec.matchResources.resourceRules[0].apiGroups: Invalid value: []string{\"*\", \"apps\"}: if '*' is "
        "present, must not specify other API groups, "
        "spec.matchResources.resourceRules[0].resources: Invalid value: []string{\"*/*\", \"pods\"}: if '*/*' is "
        "present, must not specify other resources, "
        'spec.matchResources.excludeResourceRules[0].scope: Unsupported value: "Everywhere": supported values: '
        '"*", "Cluster", "Namespaced"]')
    # a well-formed binding is stored with its matchResources defaults
    created = api.create_validating_admission_policy_binding(binding(
        paramRef={"selector": {"matchLabels": {"team": "a"}}, "parameterNotFoundAction": "Allow"},
        matchResources={"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
                                           "resources": ["deployments"]}]}))
    try:
        assert created.spec.param_ref.parameter_not_found_action == "Allow"
        assert created.spec.match_resources.match_policy == "Equivalent"
        assert created.spec.match_resources.resource_rules[0].scope == "*"
    finally:
        api.delete_validating_admission_policy_binding(name)
