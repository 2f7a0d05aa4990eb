"""Pod-level resources (PodLevelResources) and AppArmor validation through real kubectl against the shared stack:
kube 1.37's defaults on a Pod (never a template) and its exact 422 messages."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Kubectl

APPARMOR = "container.apparmor.security.beta.kubernetes.io/"


def _pod(name: str, container: dict[str, Any] | None = None, annotations: dict[str, str] | None = None,
         **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations or {}},
            "spec": {"containers": [{"name": "c", "image": "nginx", **(container or {})}], **spec}}


def _refused(kubectl: Kubectl, namespace: str, obj: dict[str, Any]) -> str:
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(obj), check=False)
    assert proc.returncode != 0, proc.stdout
    return proc.stderr


def test_pod_level_resources_are_defaulted_and_validated(kubectl: Kubectl, namespace: str) -> None:
    resources = {"limits": {"cpu": "1", "memory": "256Mi"}}
    container = {"resources": {"requests": {"cpu": "250m"}}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(_pod("sized", container, resources=resources)))
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "sized", "-o", "json").stdout)
    assert stored["spec"]["resources"] == {"limits": {"cpu": "1", "memory": "256Mi"},
                                           "requests": {"cpu": "250m", "memory": "256Mi"}}
    assert stored["status"]["qosClass"] == "Burstable"

    # a template keeps its pod-level resources as written (SetDefaults_Pod only)
    template = {"metadata": {"labels": {"app": "sized"}}, "spec": _pod("x", container, resources=resources)["spec"]}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "sized"},
                  "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "sized"}}, "template": template}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(deployment))
    stored = json.loads(kubectl.run("-n", namespace, "get", "deployment", "sized", "-o", "json").stdout)
    assert stored["spec"]["template"]["spec"]["resources"] == resources

    stderr = _refused(kubectl, namespace, _pod("disk", resources={"limits": {"ephemeral-storage": "1Gi",
                                                                             "cpu": "1"}}))
    assert ('The Pod "disk" is invalid: spec.resources.limits[ephemeral-storage]: Unsupported value: '
            '"ephemeral-storage": supported values: "cpu", "hugepages-", "memory"') in stderr, stderr
    stderr = _refused(kubectl, namespace, _pod("small", {"resources": {"requests": {"cpu": "1"}}},
                                               resources={"requests": {"cpu": "500m"}}))
    assert ('The Pod "small" is invalid: spec.resources.requests[cpu]: Invalid value: "500m": must be greater '
            "than or equal to aggregate container requests of 1") in stderr, stderr


def test_pod_apparmor_fields_and_annotations_are_validated(kubectl: Kubectl, namespace: str) -> None:
    local = {"securityContext": {"appArmorProfile": {"type": "Localhost"}}}
    stderr = _refused(kubectl, namespace, _pod("local", local))
    assert ('The Pod "local" is invalid: spec.containers[0].securityContext.appArmorProfile.localhostProfile: '
            "Required value: must be set when AppArmor type is Localhost") in stderr, stderr
    stderr = _refused(kubectl, namespace, _pod("named", annotations={APPARMOR + "c": "bogus"}))
    assert (f'The Pod "named" is invalid: metadata.annotations[{APPARMOR}c]: Invalid value: "bogus": invalid '
            'AppArmor profile name: "bogus"') in stderr, stderr
    mismatch = _pod("mismatch", {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}},
                    annotations={APPARMOR + "c": "unconfined"})
    stderr = _refused(kubectl, namespace, mismatch)
    assert ('The Pod "mismatch" is invalid: spec.containers[0].securityContext.appArmorProfile.type: Forbidden: '
            "apparmor type in annotation and field must match") in stderr, stderr
    # the annotation alone is copied into the field on create, so the two agree
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(
        _pod("agreed", annotations={APPARMOR + "c": "localhost/custom"})))
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "agreed", "-o", "json").stdout)
    assert stored["spec"]["containers"][0]["securityContext"] == {
        "appArmorProfile": {"type": "Localhost", "localhostProfile": "custom"}}
