"""e2e: a plain Job gets kube's generated selector and pod-template labels (kapi.kinds.batch)."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl


def test_job_gets_a_generated_selector(kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "create", "job", "pi", "--image=busybox", "--", "true")
    job = json.loads(kubectl.run("-n", namespace, "get", "job", "pi", "-o", "json").stdout)
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
              "controller-uid": uid, "job-name": "pi"}
    assert job["spec"]["template"]["metadata"]["labels"] == labels
    assert job["metadata"]["labels"] == labels
    wide = kubectl.run("-n", namespace, "get", "job", "pi", "-o", "wide").stdout
    assert f"batch.kubernetes.io/controller-uid={uid}" in wide
    # The label kubectl users select a Job's pods by parses (no pods: nothing runs them here).
    pods = kubectl.run("-n", namespace, "get", "pods", "-l", "job-name=pi")
    assert pods.stdout == "" and "No resources found" in pods.stderr

    # apply of a plain Job; a selector of its own without manualSelector is refused as by kube.
    manifest = """
apiVersion: batch/v1
kind: Job
metadata: {name: %s}
spec:
  %s
  template:
    metadata: {labels: {app: x}}
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""
    kubectl.run("-n", namespace, "apply", "-f", "-", input=manifest % ("applied", ""))
    applied = json.loads(kubectl.run("-n", namespace, "get", "job", "applied", "-o", "json").stdout)
    assert applied["spec"]["template"]["metadata"]["labels"]["app"] == "x"
    assert applied["spec"]["template"]["metadata"]["labels"]["job-name"] == "applied"
    refused = kubectl.run("-n", namespace, "apply", "-f", "-", check=False,
                          input=manifest % ("own", "selector: {matchLabels: {app: x}}"))
    assert refused.returncode != 0 and "`selector` not auto-generated" in refused.stderr
    manual = manifest % ("manual", "manualSelector: true\n  selector: {matchLabels: {app: x}}")
    kubectl.run("-n", namespace, "apply", "-f", "-", input=manual)
    kept = json.loads(kubectl.run("-n", namespace, "get", "job", "manual", "-o", "json").stdout)
    assert kept["spec"]["selector"] == {"matchLabels": {"app": "x"}}
