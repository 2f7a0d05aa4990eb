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
