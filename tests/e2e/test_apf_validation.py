"""FlowSchema and PriorityLevelConfiguration validation and defaults through Envoy (kapi.kinds.flowcontrol).

kubectl and the official Python client see kube-apiserver's 422 Invalid
(messages and field paths of pkg/apis/flowcontrol/validation) and read
objects back with kube's v1 defaults.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from .conftest import Kubectl

API_VERSION = "flowcontrol.apiserver.k8s.io/v1"


def flow_schema(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "FlowSchema", "metadata": {"name": name},
            "spec": {"priorityLevelConfiguration": {"name": "global-default"},
                     "rules": [{"subjects": [{"kind": "User", "user": {"name": "e2e-nobody"}}],
                                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/e2e/*"]}]}],
                     **spec}}


def priority_level(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "PriorityLevelConfiguration", "metadata": {"name": name}, "spec": spec}


@pytest.fixture(scope="module")
def api(stack: Any) -> client.FlowcontrolApiserverV1Api:
    return client.FlowcontrolApiserverV1Api(config.new_client_from_config(config_file=str(stack.kubeconfig)))


def test_kubectl_create_of_an_invalid_flow_schema_is_422(kubectl: Kubectl) -> None:
    bad = flow_schema("e2e-invalid-fs", matchingPrecedence=10001, distinguisherMethod={"type": "ByGroup"})
    proc = kubectl.run("create", "-f", "-", input=json.dumps(bad), check=False)
    assert proc.returncode != 0
    assert proc.stderr.strip() == (
        'The FlowSchema "e2e-invalid-fs" is invalid: \n'
        "* spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000\n"
        '* spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByGroup"}: '
        'supported values: "ByNamespace", "ByUser"')
    assert kubectl.run("get", "flowschema", "e2e-invalid-fs", check=False).returncode != 0


def test_the_python_client_sees_the_status(api: client.FlowcontrolApiserverV1Api) -> None:
    bad = priority_level("e2e-invalid-pl", {"type": "Limited", "limited": {
        "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 9}}}})
    with pytest.raises(ApiException) as info:
        api.create_priority_level_configuration(bad)
    assert info.value.status == 422
    status = json.loads(info.value.body)
    assert (status["reason"], status["details"]["kind"], status["details"]["group"]) == (
        "Invalid", "PriorityLevelConfiguration", "flowcontrol.apiserver.k8s.io")
    assert status["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.limited.limitResponse.queuing.handSize",
        "message": "Invalid value: 9: required entropy bits of deckSize 128 and handSize 9 should not be greater "
                   "than 60"}]


def test_a_minimal_flow_schema_reads_back_defaulted(kubectl: Kubectl) -> None:
    kubectl.run("create", "-f", "-", input=json.dumps(flow_schema("e2e-minimal-fs")))
    try:
        got = json.loads(kubectl.run("get", "flowschema", "e2e-minimal-fs", "-o", "json").stdout)
        assert got["spec"]["matchingPrecedence"] == 1000
        assert got["metadata"]["generation"] == 1
        assert "distinguisherMethod" not in got["spec"]
    finally:
        kubectl.run("delete", "flowschema", "e2e-minimal-fs", "--ignore-not-found")


def test_a_minimal_priority_level_reads_back_defaulted(kubectl: Kubectl) -> None:
    minimal = priority_level("e2e-minimal-pl", {"type": "Limited", "limited": {
        "limitResponse": {"type": "Queue", "queuing": {}}}})
    kubectl.run("create", "-f", "-", input=json.dumps(minimal))
    try:
        got = json.loads(kubectl.run("get", "prioritylevelconfiguration", "e2e-minimal-pl", "-o", "json").stdout)
        assert got["spec"] == {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 30, "lendablePercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}}
        assert got["status"] == {}
    finally:
        kubectl.run("delete", "prioritylevelconfiguration", "e2e-minimal-pl", "--ignore-not-found")


def test_the_mandatory_catch_all_is_fixed(kubectl: Kubectl) -> None:
    proc = kubectl.run("patch", "flowschema", "catch-all", "--type=merge", "-p",
                       json.dumps({"spec": {"matchingPrecedence": 9999}}), check=False)
    assert proc.returncode != 0
    assert proc.stderr.startswith('The FlowSchema "catch-all" is invalid: spec: Invalid value: '
                                  "flowcontrol.FlowSchemaSpec{")
    assert proc.stderr.strip().endswith(": spec of 'catch-all' must equal the fixed value")
    proc = kubectl.run("patch", "prioritylevelconfiguration", "exempt", "--type=merge", "-p",
                       json.dumps({"spec": {"type": "Limited"}}), check=False)
    assert proc.returncode != 0
    assert "spec.type: Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt'" \
        in proc.stderr
