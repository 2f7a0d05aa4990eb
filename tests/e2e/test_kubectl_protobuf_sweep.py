"""The pinned kubectl's typed subcommands against kapi's protobuf (client-go's typed clients send and accept
``application/vnd.kubernetes.protobuf``), and what the sweep over them found.

- ``kubectl create pdb --min-available=0`` sends a protobuf body whose pointer IntOrString is 0: stored and
  described as 0 (kube: ``Min available:  0``).
- ``kubectl apply --server-side`` of ``kubectl get -o yaml`` output: 400 ``metadata.managedFields must be nil``
  (kube's FieldManager.Apply); a stale ``metadata.resourceVersion`` in the configuration is the store's 409.
- describe, events, auth and rollout commands decode kapi's protobuf answers and print kube's text.
- ``kubectl create deployment`` sends every non-pointer field of the template (gogo writes them all): the zero
  ``hostNetwork``/``hostPID``/``hostIPC``/``minReadySeconds`` of omitempty fields are not stored, as kube's
  JSON leaves them out.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from tests.e2e.conftest import Kubectl

PROTOBUF = "application/vnd.kubernetes.protobuf"


def response_after(trace: str, marker: str) -> str:
    """The part of a client-go ``-v=8`` trace from the first response after ``marker`` (a request URL part)."""
    start = trace.index(marker)
    return trace[trace.index('"Response"', start):]


def test_create_pdb_min_available_zero(kubectl: Kubectl, namespace: str) -> None:
    proc = kubectl.run("-n", namespace, "create", "poddisruptionbudget", "zero", "--selector=app=web",
                       "--min-available=0", "-v=8")
    assert "poddisruptionbudget.policy/zero created" in proc.stdout
    post = proc.stderr[proc.stderr.index('"Request" verb="POST"'):]
    assert f"Content-Type: {PROTOBUF}" in post[:post.index('"Response"')]  # the typed client's protobuf body
    spec = json.loads(kubectl.run("-n", namespace, "get", "pdb", "zero", "-o", "json").stdout)["spec"]
    assert spec == {"minAvailable": 0, "selector": {"matchLabels": {"app": "web"}}}
    described = kubectl.run("-n", namespace, "describe", "pdb", "zero").stdout
    assert "Min available:  0\n" in described
    kubectl.run("-n", namespace, "create", "poddisruptionbudget", "none", "--selector=app=web",
                "--max-unavailable=0")
    spec = json.loads(kubectl.run("-n", namespace, "get", "pdb", "none", "-o", "json").stdout)["spec"]
    assert spec["maxUnavailable"] == 0 and "minAvailable" not in spec


def test_create_deployment_stores_no_zero_of_an_omitempty_field(kubectl: Kubectl, namespace: str) -> None:
    proc = kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx:1.27", "-v=8")
    post = proc.stderr[proc.stderr.index('"Request" verb="POST"'):]
    assert f"Content-Type: {PROTOBUF}" in post[:post.index('"Response"')]
    deployment = json.loads(kubectl.run("-n", namespace, "get", "deployment", "web", "-o", "json").stdout)
    spec = deployment["spec"]
    assert "minReadySeconds" not in spec and "paused" not in spec
    assert spec["template"]["spec"] == {
        "containers": [{"name": "nginx", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent", "resources": {},
                        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
        "securityContext": {}, "terminationGracePeriodSeconds": 30}


def test_server_side_apply_of_get_output_needs_managed_fields_nil(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "configmap", "cm", "--from-literal=a=b")
    live = kubectl.run("-n", namespace, "get", "configmap", "cm", "-o", "yaml", "--show-managed-fields").stdout
    assert "managedFields" in live
    proc = kubectl.run("apply", "--server-side", "-f", "-", input=live, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "Error from server (BadRequest): metadata.managedFields must be nil"
    config = yaml.safe_load(live)
    del config["metadata"]["managedFields"]
    proc = kubectl.run("apply", "--server-side", "-f", "-", input=yaml.safe_dump(config))
    assert proc.stdout.strip() == "configmap/cm serverside-applied"


def test_server_side_apply_with_a_stale_resource_version_conflicts(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "configmap", "cm", "--from-literal=a=b")
    first = json.loads(kubectl.run("-n", namespace, "get", "configmap", "cm", "-o", "json").stdout)
    kubectl.run("-n", namespace, "label", "configmap", "cm", "moved=yes")  # the object moves past first's version
    config: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"},
                              "metadata": {"name": "cm", "namespace": namespace,
                                           "resourceVersion": first["metadata"]["resourceVersion"]}}
    proc = kubectl.run("apply", "--server-side", "-f", "-", input=json.dumps(config), check=False)
    assert proc.returncode == 1
    assert proc.stderr.startswith('error: Operation cannot be fulfilled on configmaps "cm": the object has been '
                                  "modified; please apply your changes to the latest version and try again\n")
    current = json.loads(kubectl.run("-n", namespace, "get", "configmap", "cm", "-o", "json").stdout)
    config["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    config["data"] = {"a": "b", "c": "d"}
    kubectl.run("apply", "--server-side", "-f", "-", input=json.dumps(config))
    applied = json.loads(kubectl.run("-n", namespace, "get", "configmap", "cm", "-o", "json").stdout)
    assert applied["data"] == {"a": "b", "c": "d"}


def test_typed_describe_and_events_decode_protobuf(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx", "--replicas=2")
    kubectl.run("-n", namespace, "set", "env", "deployment/web", "A=B")
    kubectl.run("-n", namespace, "create", "service", "nodeport", "web", "--tcp=80:8080")
    uid = kubectl.run("-n", namespace, "get", "deployment", "web", "-o", "jsonpath={.metadata.uid}").stdout
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.1"},
             "regarding": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": namespace,
                           "uid": uid},
             "reason": "ScalingReplicaSet", "note": "Scaled up replica set web-1 to 2", "type": "Normal",
             "action": "Scale", "reportingController": "deployment-controller", "reportingInstance": "kcm-1",
             "eventTime": "2026-01-01T00:00:00.123456Z"}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(event))
    proc = kubectl.run("-n", namespace, "describe", "deployment", "web", "-v=8")
    assert f"Content-Type: {PROTOBUF}" in response_after(proc.stderr, "/apis/apps/v1/namespaces/")
    assert f"Content-Type: {PROTOBUF}" in response_after(proc.stderr, "/api/v1/namespaces/" + namespace + "/events")
    out = proc.stdout
    assert "Replicas:               2 desired | 0 updated | 0 total | 0 available | 0 unavailable\n" in out
    assert "RollingUpdateStrategy:  25% max unavailable, 25% max surge\n" in out
    assert re.search(r"\n    Environment:\n      A: +B\n", out)
    assert "  Normal  ScalingReplicaSet" in out and "deployment-controller  Scaled up replica set web-1 to 2" in out
    described = kubectl.run("-n", namespace, "describe", "service", "web").stdout
    assert "Type:                     NodePort\n" in described
    assert "TargetPort:               8080/TCP\n" in described
    events = kubectl.run("-n", namespace, "events", "--for", "deployment/web").stdout.splitlines()
    assert events[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert events[1].split()[1:] == ["Normal", "ScalingReplicaSet", "Deployment/web", "Scaled", "up", "replica",
                                     "set", "web-1", "to", "2"]


def test_typed_auth_rollout_and_errors(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx")
    assert kubectl.run("-n", namespace, "rollout", "history", "deployment/web").stdout == (
        "deployment.apps/web \nNo rollout history found.\n")
    undo = kubectl.run("-n", namespace, "rollout", "undo", "deployment/web", check=False)
    assert undo.returncode == 1 and undo.stderr == 'error: no rollout history found for deployment "web"\n'
    whoami = kubectl.run("auth", "whoami").stdout.splitlines()
    assert whoami[1].split() == ["Username", "kubernetes-admin"]
    assert kubectl.run("-n", namespace, "auth", "can-i", "create", "pods").stdout == "yes\n"
    again = kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx", check=False)
    assert again.returncode == 1
    assert again.stderr == 'error: failed to create deployment: deployments.apps "web" already exists\n'
    scale = kubectl.run("-n", namespace, "scale", "deployment", "web", "--replicas=3", "--current-replicas=2",
                        check=False)
    assert scale.returncode == 1 and scale.stderr == "error: Expected replicas to be 2, was 1\n"


def test_create_cronjob_defaults_only_the_job_templates_pod_template(kubectl: Kubectl, namespace: str) -> None:
    """SetObjectDefaults_CronJob: SetDefaults_Job takes a whole Job, so the job template keeps no backoffLimit,
    completions, completionMode, podReplacementPolicy or suspend; its pod template is defaulted."""
    kubectl.run("-n", namespace, "create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *", "--",
                "echo", "hi")
    spec = json.loads(kubectl.run("-n", namespace, "get", "cronjob", "cj", "-o", "json").stdout)["spec"]
    assert list(spec["jobTemplate"]["spec"]) == ["template"]
    assert spec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
