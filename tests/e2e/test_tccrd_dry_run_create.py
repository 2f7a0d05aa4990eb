"""A server dry-run create of a name already taken answers 409 AlreadyExists, as the real create would (kube's
DryRunnableStorage.Create reads the key it would write). Found replaying kube's test/cmd/template-output.sh, which
runs ``kubectl create -f valid-pod.yaml --dry-run`` after creating valid-pod."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for

GROUP = "tccrd-dry.example.com"
POD = """apiVersion: v1
kind: Pod
metadata:
  name: valid-pod
  labels:
    name: valid-pod
spec:
  containers:
  - name: kubernetes-serve-hostname
    image: registry.k8s.io/serve_hostname
    resources:
      limits:
        cpu: "1"
        memory: 512Mi
"""


def test_kubectl_dry_run_create_of_an_existing_pod_fails(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=POD)
    proc = kubectl.run("-n", namespace, "create", "-f", "-", "--dry-run=server", input=POD, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == ('Error from server (AlreadyExists): error when creating "STDIN": '
                                   'pods "valid-pod" already exists')
    # a free name still dry-runs, and writes nothing
    fresh = kubectl.run("-n", namespace, "create", "-f", "-", "--dry-run=server", "-o", "name",
                        input=POD.replace("name: valid-pod\n  labels", "name: other-pod\n  labels"))
    assert fresh.stdout.strip() == "pod/other-pod"
    names = kubectl.run("-n", namespace, "get", "pods", "-o", "name").stdout.split()
    assert names == ["pod/valid-pod"]


def test_the_status_body_is_kubes(stack: Stack, namespace: str) -> None:
    core: Any = client.CoreV1Api(config.new_client_from_config(config_file=str(Path(stack.kubeconfig))))
    core.create_namespaced_config_map(namespace, {"metadata": {"name": "cm"}})
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "cm"}}, dry_run="All")
    assert exc.value.status == 409
    body: dict[str, Any] = json.loads(str(exc.value.body))
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'configmaps "cm" already exists', "reason": "AlreadyExists",
                    "details": {"name": "cm", "kind": "configmaps"}, "code": 409}


def test_custom_resources_and_server_side_apply(kubectl: Kubectl, namespace: str) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"foos.{GROUP}"},
           "spec": {"group": GROUP, "scope": "Namespaced", "names": {"plural": "foos", "kind": "Foo"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kubectl.run("apply", "-f", "-", input=json.dumps(crd))
    foo = json.dumps({"apiVersion": f"{GROUP}/v1", "kind": "Foo", "metadata": {"name": "test"}, "someField": "a"})
    wait_for(lambda: kubectl.run("-n", namespace, "create", "-f", "-", input=foo, check=False).returncode == 0)
    proc = kubectl.run("-n", namespace, "create", "-f", "-", "--dry-run=server", input=foo, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f'Error from server (AlreadyExists): error when creating "STDIN": '
                                   f'foos.{GROUP} "test" already exists')
    # a server-side apply dry run of the existing object is an update, not a refused create
    applied = kubectl.run("-n", namespace, "apply", "--server-side", "--dry-run=server", "-f", "-", input=foo)
    assert applied.stdout.strip() == f"foo.{GROUP}/test serverside-applied (server dry run)"
    kubectl.run("delete", "crd", f"foos.{GROUP}")
