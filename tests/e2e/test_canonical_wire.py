"""Built-in objects are stored and answered in kube's canonical wire form (issue 17, kapi.canonical): a Quantity
as Quantity.String() (``cpu: 1`` -> ``"1"``, ``1.5Gi`` -> ``1536Mi``), a metav1.Time in UTC with ``Z``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubernetes import client, config

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

POD = """
apiVersion: v1
kind: Pod
metadata:
  name: sized
spec:
  containers:
  - name: app
    image: nginx:1.27
    resources:
      requests:
        cpu: 1
        memory: 1.5Gi
      limits:
        cpu: 1000m
        memory: 1536Mi
        ephemeral-storage: 0.0001
"""


def _api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(Path(stack.kubeconfig)))


def test_pod_quantities_read_back_canonical(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("apply", "-n", namespace, "-f", "-", input=POD)
    stored = json.loads(kubectl.run("get", "pod", "sized", "-n", namespace, "-o", "json").stdout)
    resources = stored["spec"]["containers"][0]["resources"]
    # a YAML int is a JSON number on the way in and a string on the way out; ResourceLists round up to milli (and
    # the unrequested limit becomes a request: SetDefaults_Pod)
    assert resources == {"requests": {"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "1m"},
                         "limits": {"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "1m"}}
    pod: Any = client.CoreV1Api(_api(stack)).read_namespaced_pod("sized", namespace)
    assert pod.spec.containers[0].resources.requests == {"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "1m"}
    assert kubectl.run("get", "pod", "sized", "-n", namespace, "-o",
                       "jsonpath={.spec.containers[0].resources.requests.memory}").stdout == "1536Mi"


def test_python_client_quota_quantities_are_canonical(stack: Stack, namespace: str) -> None:
    core: Any = client.CoreV1Api(_api(stack))  # raw answers (_preload_content=False) are urllib3 responses
    body = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
            "spec": {"hard": {"requests.cpu": "0.5", "requests.memory": "2048Mi", "pods": "1e3"}}}
    created = core.create_namespaced_resource_quota(namespace, body, _preload_content=False)
    hard = json.loads(created.data)["spec"]["hard"]
    assert hard == {"requests.cpu": "500m", "requests.memory": "2Gi", "pods": "1e3"}


def test_job_status_start_time_reads_back_in_utc(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("create", "job", "once", "-n", namespace, "--image=busybox:1.36", "--", "true")
    patched = json.loads(kubectl.run(
        "patch", "job", "once", "-n", namespace, "--subresource=status", "--type=merge", "-o", "json",
        "-p", json.dumps({"status": {"startTime": "2026-12-02T05:00:00+00:00"}})).stdout)
    assert patched["status"]["startTime"] == "2026-12-02T05:00:00Z"
    batch: Any = client.BatchV1Api(_api(stack))
    answer = batch.patch_namespaced_job_status(
        "once", namespace, {"status": {"startTime": "2026-12-02T07:00:00.750+02:00"}}, _preload_content=False)
    assert json.loads(answer.data)["status"]["startTime"] == "2026-12-02T05:00:00Z"
