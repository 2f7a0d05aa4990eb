"""What a fresh user's break-it pass found (2026-12-02), each as kube-apiserver 1.37 answers it."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_kube_parity_defaults import _raw


def test_token_request_body_must_name_the_url_service_account(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """kube's token REST: a body metadata.name/namespace other than the URL's is 422 (was: a token for the URL's)."""
    kubectl.run("-n", namespace, "create", "serviceaccount", "builder")
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/builder/token"
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {"name": "other"},
            "spec": {"audiences": []}}
    code, raw = _raw(stack, "POST", path, body)
    status = json.loads(raw)
    assert code == 422 and status["message"] == (
        'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid value: "other": must '
        "match the service account name if specified")
    assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.name", "message":
                                            'Invalid value: "other": must match the service account name if '
                                            "specified"}]
    code, raw = _raw(stack, "POST", path, {**body, "metadata": {"namespace": "elsewhere"}})
    assert code == 422 and "metadata.namespace: Invalid value: \"elsewhere\": must match the service account " \
        "namespace if specified" in json.loads(raw)["message"]
    code, raw = _raw(stack, "POST", path, {**body, "metadata": {"name": "builder", "namespace": namespace}})
    assert code == 201 and json.loads(raw)["status"]["token"]


def test_scale_put_checks_the_body_is_this_objects_scale(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """PUT .../scale refuses (400) a body of another kind, name or namespace, as a plain PUT does; a bad replicas
    count is 422 naming the object (was: all accepted, and Scale.autoscaling "")."""
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx")
    url = f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale"
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    for body, message in (
            ({**scale, "metadata": {"name": "other"}},
             "the name of the object (other) does not match the name on the URL (web)"),
            ({**scale, "metadata": {"name": "web", "namespace": "elsewhere"}},
             "the namespace of the provided object does not match the namespace sent on the request"),
            ({**scale, "apiVersion": "apps/v1", "kind": "Deployment"},
             "the API version in the data (apps/v1) does not match the expected API version (autoscaling/v1)")):
        code, raw = _raw(stack, "PUT", url, body)
        assert (code, json.loads(raw)["message"]) == (400, message)
    code, raw = _raw(stack, "PUT", url, {**scale, "spec": {"replicas": -3}})
    assert code == 422 and json.loads(raw)["message"] == (
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0')
    code, raw = _raw(stack, "PUT", url, scale)
    assert code == 200 and json.loads(raw)["spec"]["replicas"] == 2
