"""kube's update validation through the whole stack: immutable workload selectors, the StatefulSet spec, a Job's
completions and template, Namespace finalizer names (422 Invalid with kube's Status, as kubectl and the official
Python client see it)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "web"}},
                            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


@pytest.fixture(scope="module")
def api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(stack.kubeconfig))


def _status(exc: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(exc.body)
    return body


def test_deployment_selector_is_immutable(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}}))
    patch = {"spec": {"selector": {"matchLabels": {"app": "web", "tier": "x"}},
                      "template": {"metadata": {"labels": {"app": "web", "tier": "x"}}}}}
    proc = kubectl.run("-n", namespace, "patch", "deployment", "web", "--type=merge", "-p", json.dumps(patch),
                       check=False)
    assert proc.returncode != 0
    assert ('The Deployment "web" is invalid: spec.selector: Invalid value: &LabelSelector{MatchLabels:'
            "map[string]string{app: web,tier: x,},MatchExpressions:[]LabelSelectorRequirement{},}: field is "
            "immutable") in proc.stderr, proc.stderr
    kubectl.run("-n", namespace, "scale", "deployment", "web", "--replicas=3")  # replicas stay mutable


def test_statefulset_spec_outside_the_mutable_fields(api: client.ApiClient, namespace: str) -> None:
    apps = client.AppsV1Api(api)
    apps.create_namespaced_stateful_set(namespace, {
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}})
    apps.patch_namespaced_stateful_set("db", namespace, {"spec": {"replicas": 2, "minReadySeconds": 5}})
    with pytest.raises(ApiException) as caught:
        apps.patch_namespaced_stateful_set("db", namespace, {"spec": {"serviceName": "other"}})
    assert caught.value.status == 422
    status = _status(caught.value)
    message = ("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
               "'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
               "'minReadySeconds' are forbidden")
    assert (status["reason"], status["code"]) == ("Invalid", 422)
    assert status["message"] == f'StatefulSet.apps "db" is invalid: {message}'
    assert status["details"] == {"name": "db", "group": "apps", "kind": "StatefulSet", "causes": [
        {"reason": "FieldValueForbidden", "message": message.removeprefix("spec: "), "field": "spec"}]}


def test_job_completions_and_template_are_immutable(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "job", "pi", "--image=perl")
    proc = kubectl.run("-n", namespace, "patch", "job", "pi", "--type=merge", "-p",
                       json.dumps({"spec": {"completions": 3}}), check=False)
    assert proc.returncode != 0
    assert 'The Job "pi" is invalid: spec.completions: Invalid value: 3: field is immutable' in proc.stderr, \
        proc.stderr
    proc = kubectl.run("-n", namespace, "set", "image", "job/pi", "pi=perl:2", check=False)
    assert proc.returncode != 0
    assert "spec.template: Invalid value: core.PodTemplateSpec{" in proc.stderr, proc.stderr
    assert proc.stderr.rstrip().endswith("field is immutable"), proc.stderr
    kubectl.run("-n", namespace, "patch", "job", "pi", "--type=merge", "-p",
                json.dumps({"spec": {"activeDeadlineSeconds": 600}}))


def test_namespace_finalizer_names(api: client.ApiClient, namespace: str) -> None:
    core = client.CoreV1Api(api)
    name = f"{namespace}-fin"
    with pytest.raises(ApiException) as caught:
        core.create_namespace({"metadata": {"name": name}, "spec": {"finalizers": ["cleanup"]}})
    status = _status(caught.value)
    assert (caught.value.status, status["reason"]) == (422, "Invalid")
    assert status["message"] == (f'Namespace "{name}" is invalid: spec.finalizers: Invalid value: "cleanup": name '
                                 "is neither a standard finalizer name nor is it fully qualified")
    assert status["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.finalizers",
        "message": 'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified'}]


def test_service_cluster_ip_may_not_change_once_set(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "service", "clusterip", "web", "--tcp=80:8080")
    ip = kubectl.run("-n", namespace, "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}").stdout
    parts = ip.split(".")
    other = ".".join([*parts[:3], str((int(parts[3]) + 7) % 250 + 2)])
    proc = kubectl.run("-n", namespace, "patch", "service", "web", "--type=merge", "-p",
                       json.dumps({"spec": {"clusterIP": other}}), check=False)
    assert proc.returncode != 0
    assert (f'The Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{{"{other}"}}: may not '
            "change once set") in proc.stderr, proc.stderr
    kubectl.run("-n", namespace, "patch", "service", "web", "--type=merge", "-p",
                json.dumps({"spec": {"ports": [{"port": 81, "targetPort": 8080}]}}))
    assert kubectl.run("-n", namespace, "get", "service", "web", "-o", "jsonpath={.spec.clusterIP}").stdout == ip
