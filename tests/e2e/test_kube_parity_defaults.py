"""kube's defaults and typed encoding, byte for byte (issue 17, items 1, 2, 3, 11 and 12).

- SetDefaults_Volume: a volume with no source is ``emptyDir: {}``, in Pods and in every pod template.
- SetDefaults_Pod vs SetDefaults_PodSpec: ``enableServiceLinks`` (and the other Pod-only defaults) only in Pods;
  templates (Deployment, PodTemplate, Job, ...) get the PodSpec defaults alone.
- A struct ``status`` is always encoded: ``status: {}`` for a Deployment created without one, the fields
  without ``omitempty`` as zeros (StatefulSet, DaemonSet, ReplicaSet, ReplicationController, PDB), none for
  a ConfigMap; a status sent on create is reset.
- JSON ``null`` is the Go zero value: a container ``name: null`` is ``Required value`` (422), a label
  value ``null`` is ``""``.
- A built-in kind's list has items without ``apiVersion``/``kind``; watch events keep them; kubectl and the
  official Python client read the lists as before.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from typing import Any
from urllib.parse import urlparse

from kubernetes import client, config, watch

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

# What kube 1.37 answers for `kubectl create deployment web --image=nginx` in spec.template.spec.
KUBE_TEMPLATE_SPEC = {
    "containers": [{"name": "nginx", "image": "nginx", "resources": {},
                    "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                    "imagePullPolicy": "Always"}],
    "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
    "securityContext": {}, "schedulerName": "default-scheduler"}
POD_SPEC = {"containers": [{"name": "c", "image": "nginx"}], "volumes": [{"name": "test-volume"}]}


def _raw(stack: Stack, method: str, path: str, body: Any = None, accept: str = "application/json"
         ) -> tuple[int, bytes]:
    """(status, raw body bytes) of one admin request through Envoy."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=60)
    try:
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", "Accept": accept})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _deployment(name: str, pod_spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": pod_spec}}}


# ------------------------------------------------------------ 1. SetDefaults_Volume

def test_volume_without_source_is_empty_dir(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vol"}, "spec": POD_SPEC}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod))
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "vol", "-o", "json").stdout)
    assert {"name": "test-volume", "emptyDir": {}} in stored["spec"]["volumes"]
    template_kinds = [
        ("apps/v1", "deployments", _deployment("d", POD_SPEC), ("spec", "template", "spec")),
        ("v1", "podtemplates", {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
                                "template": {"spec": POD_SPEC}}, ("template", "spec")),
        ("batch/v1", "jobs", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                              "spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}},
         ("spec", "template", "spec")),
    ]
    for version, resource, body, path in template_kinds:
        prefix = "/api/v1" if version == "v1" else f"/apis/{version}"
        status, raw = _raw(stack, "POST", f"{prefix}/namespaces/{namespace}/{resource}", body)
        assert status == 201, raw
        spec = json.loads(raw)
        for key in path:
            spec = spec[key]
        assert spec["volumes"] == [{"name": "test-volume", "emptyDir": {}}], resource


def test_volume_source_defaults(stack: Stack, namespace: str) -> None:
    spec = {"containers": [{"name": "c", "image": "nginx:1.27", "livenessProbe": {"httpGet": {"port": 80}},
                            "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]}],
            "volumes": [{"name": "s", "secret": {"secretName": "x"}}, {"name": "m", "configMap": {"name": "x"}},
                        {"name": "h", "hostPath": {"path": "/tmp"}}]}
    status, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods",
                       {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "src"}, "spec": spec})
    assert status == 201, raw
    pod = json.loads(raw)["spec"]
    assert pod["volumes"][:3] == [{"name": "s", "secret": {"secretName": "x", "defaultMode": 420}},
                                  {"name": "m", "configMap": {"name": "x", "defaultMode": 420}},
                                  {"name": "h", "hostPath": {"path": "/tmp", "type": ""}}]
    container = pod["containers"][0]
    assert container["livenessProbe"] == {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
                                          "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                                          "failureThreshold": 3}
    assert container["env"][0]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}


# ------------------------------------------------------------ 2. Pod-only defaults

def test_pod_only_defaults_stay_out_of_templates(kubectl: Kubectl, namespace: str) -> None:
    # kubectl's generators send protobuf, whose zero scalars kapi cannot tell from unset ones (see
    # kapi/k8sproto/decoder.py); their JSON form is what `kubectl create -f` sends.
    generated = kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx", "--dry-run=client",
                            "-o", "json").stdout
    kubectl.run("-n", namespace, "create", "-f", "-", input=generated)
    deployment = json.loads(kubectl.run("-n", namespace, "get", "deployment", "web", "-o", "json").stdout)
    assert deployment["spec"]["template"]["spec"] == KUBE_TEMPLATE_SPEC
    generated = kubectl.run("-n", namespace, "run", "web", "--image=nginx", "--port=80", "--dry-run=client", "-o",
                            "json", "--overrides", json.dumps({"spec": {"hostNetwork": True}})).stdout
    kubectl.run("-n", namespace, "create", "-f", "-", input=generated)
    pod = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)["spec"]
    assert pod["enableServiceLinks"] is True
    assert pod["containers"][0]["ports"] == [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"}]


def test_template_host_network_ports_and_limits_are_not_defaulted(stack: Stack, namespace: str) -> None:
    spec = {"hostNetwork": True, "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}],
                                                 "resources": {"limits": {"cpu": "1"}}}]}
    status, raw = _raw(stack, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", _deployment("hn", spec))
    assert status == 201, raw
    template = json.loads(raw)["spec"]["template"]["spec"]
    assert "enableServiceLinks" not in template
    assert template["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert template["containers"][0]["resources"] == {"limits": {"cpu": "1"}}


# ------------------------------------------------------------ 3. status of a struct type

ZERO_STATUSES = [
    ("/apis/apps/v1", "deployments", _deployment("d", POD_SPEC), b'"status":{}'),
    ("/apis/apps/v1", "replicasets", {**_deployment("rs", POD_SPEC), "kind": "ReplicaSet"},
     b'"status":{"replicas":0}'),
    ("/apis/apps/v1", "statefulsets", {**_deployment("ss", POD_SPEC), "kind": "StatefulSet"},
     b'"status":{"replicas":0,"availableReplicas":0}'),
    ("/apis/apps/v1", "daemonsets", {**_deployment("ds", POD_SPEC), "kind": "DaemonSet"},
     b'"status":{"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,"numberReady":0}'),
    ("/apis/batch/v1", "jobs", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
                                "spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}},
     b'"status":{}'),
    ("/apis/batch/v1", "cronjobs", {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
                                    "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
                                        "spec": {**POD_SPEC, "restartPolicy": "Never"}}}}}}, b'"status":{}'),
    ("/api/v1", "replicationcontrollers", {"apiVersion": "v1", "kind": "ReplicationController",
                                           "metadata": {"name": "rc"},
                                           "spec": {"template": {"metadata": {"labels": {"app": "rc"}},
                                                                 "spec": POD_SPEC}}},
     b'"status":{"replicas":0}'),
    ("/apis/policy/v1", "poddisruptionbudgets", {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                                 "metadata": {"name": "pdb"},
                                                 "spec": {"minAvailable": 1,
                                                          "selector": {"matchLabels": {"app": "x"}}}},
     b'"status":{"disruptionsAllowed":0,"currentHealthy":0,"desiredHealthy":0,"expectedPods":0}'),
]


def test_created_without_status_answers_the_zero_status(stack: Stack, namespace: str) -> None:
    for prefix, resource, body, status in ZERO_STATUSES:
        code, raw = _raw(stack, "POST", f"{prefix}/namespaces/{namespace}/{resource}", body)
        assert code == 201, raw
        assert raw.rstrip().endswith(status + b"}"), raw
        code, raw = _raw(stack, "GET", f"{prefix}/namespaces/{namespace}/{resource}/{body['metadata']['name']}")
        assert code == 200 and raw.rstrip().endswith(status + b"}"), raw


def test_status_sent_on_create_is_reset_and_configmaps_have_none(stack: Stack, namespace: str) -> None:
    body = {**_deployment("given", POD_SPEC), "status": {"replicas": 5, "readyReplicas": 5}}
    code, raw = _raw(stack, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", body)
    assert code == 201 and json.loads(raw)["status"] == {}, raw
    code, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps",
                     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert code == 201 and "status" not in json.loads(raw), raw


# ------------------------------------------------------------ 11. null is the zero value

def test_null_container_name_is_required_not_a_decode_error(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": None, "image": "nginx"}]}}
    code, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods", pod)
    reply = json.loads(raw)
    assert (code, reply["reason"], reply["message"]) == (422, "Invalid",
                                                        'Pod "p" is invalid: spec.containers[0].name: Required value')
    assert reply["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value",
                                           "field": "spec.containers[0].name"}]
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod), check=False)
    assert 'The Pod "p" is invalid: spec.containers[0].name: Required value' in proc.stderr, proc.stderr


def test_null_values_decode_as_go_zero_values(stack: Stack, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n", "labels": {"a": None},
                                                                  "annotations": None},
            "data": {"k": None}, "binaryData": None}
    code, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert code == 201, raw
    created = json.loads(raw)
    assert created["metadata"]["labels"] == {"a": ""} and "annotations" not in created["metadata"]
    assert created["data"] == {"k": ""} and "binaryData" not in created


def test_null_pointer_times_are_absent(stack: Stack, namespace: str) -> None:
    """A ``*metav1.Time`` read as ``null`` is nil and not encoded (``status.startTime: null`` on a Pod status
    update, a Lease's ``renewTime``); a ``metav1.Time`` struct keeps its ``null`` (a condition's lastProbeTime)."""
    code, raw = _raw(stack, "POST", f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", {
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
        "spec": {"holderIdentity": "me", "acquireTime": None, "renewTime": None}})
    assert code == 201, raw
    assert json.loads(raw)["spec"] == {"holderIdentity": "me"}
    code, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    assert code == 201, raw
    pod = json.loads(raw)
    pod["status"] = {"phase": "Running", "startTime": None, "qosClass": "BestEffort",
                     "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    code, raw = _raw(stack, "PUT", f"/api/v1/namespaces/{namespace}/pods/p/status", pod)
    assert code == 200, raw
    status = json.loads(raw)["status"]
    assert "startTime" not in status and status["conditions"][0]["lastProbeTime"] is None, status


# ------------------------------------------------------------ 12. typed lists

def test_builtin_list_items_have_no_type_meta(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    for name in ("a", "b"):
        kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"t": "x"}},
            "data": {"k": "v"}}))
    code, raw = _raw(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?labelSelector=t%3Dx")
    assert code == 200, raw
    listed = json.loads(raw)
    assert (listed["kind"], listed["apiVersion"]) == ("ConfigMapList", "v1")
    assert [sorted(i) for i in listed["items"]] == [["data", "metadata"]] * 2, listed
    code, raw = _raw(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?labelSelector=t%3Dx",
                     accept="application/yaml")
    assert code == 200 and b"\n  kind: ConfigMap" not in raw and b"\n  apiVersion: v1" not in raw, raw
    # kubectl fills the items' kind from the list, as client-go's unstructured decoder does.
    out = json.loads(kubectl.run("-n", namespace, "get", "configmaps", "-l", "t=x", "-o", "json").stdout)
    assert [(i["apiVersion"], i["kind"], i["metadata"]["name"]) for i in out["items"]] == [
        ("v1", "ConfigMap", "a"), ("v1", "ConfigMap", "b")]
    assert kubectl.run("-n", namespace, "get", "configmaps", "-l", "t=x", "-o", "name").stdout.split() == [
        "configmap/a", "configmap/b"]
    table = kubectl.run("-n", namespace, "get", "configmaps", "-l", "t=x").stdout.splitlines()
    assert [line.split()[0] for line in table] == ["NAME", "a", "b"]


def test_python_client_lists_and_watch_events_keep_kind(stack: Stack, namespace: str) -> None:
    core = client.CoreV1Api(config.new_client_from_config(config_file=str(stack.kubeconfig)))
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(
        name="py", labels={"t": "py"})))
    listed = core.list_namespaced_config_map(namespace, label_selector="t=py")
    assert [(cm.kind, cm.metadata.name) for cm in listed.items] == [(None, "py")]
    events: list[dict[str, Any]] = []

    def run() -> None:
        for event in watch.Watch().stream(core.list_namespaced_config_map, namespace, timeout_seconds=5,
                                          label_selector="t=py", resource_version="0"):
            events.append(event["raw_object"])
            return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    assert [(e["apiVersion"], e["kind"], e["metadata"]["name"]) for e in events] == [("v1", "ConfigMap", "py")]


# ------------------------------------------------------------ the systematic pass (docs/kube-parity.md)

def test_pod_status_on_create_has_the_qos_class(stack: Stack, namespace: str) -> None:
    guaranteed = {"limits": {"cpu": "500m", "memory": "64Mi"}}
    for name, resources, gates, qos in (("be", None, None, "BestEffort"), ("g", guaranteed, None, "Guaranteed"),
                                        ("gated", None, [{"name": "example.com/wait"}], "BestEffort")):
        container: dict[str, Any] = {"name": "c", "image": "nginx"}
        if resources:
            container["resources"] = resources
        spec: dict[str, Any] = {"containers": [container]}
        if gates:
            spec["schedulingGates"] = gates
        code, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/pods",
                         {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})
        assert code == 201, raw
        status = json.loads(raw)["status"]
        assert status["phase"] == "Pending" and status["qosClass"] == qos, status
        if gates:
            assert status["conditions"] == [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                             "lastTransitionTime": None, "reason": "SchedulingGated",
                                             "message": "Scheduling is blocked due to non-empty scheduling gates"}]


def test_service_claim_and_volume_defaults(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    code, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
        "spec": {"sessionAffinity": "ClientIP", "ports": [{"port": 80, "targetPort": 0}]}})
    assert code == 201, raw
    spec = json.loads(raw)["spec"]
    assert spec["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    assert spec["ports"] == [{"port": 80, "targetPort": 80, "protocol": "TCP"}]
    code, raw = _raw(stack, "POST", f"/api/v1/namespaces/{namespace}/persistentvolumeclaims", {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    assert code == 201, raw
    claim = json.loads(raw)
    assert (claim["spec"]["volumeMode"], claim["status"]) == ("Filesystem", {"phase": "Pending"})
    sts = {**_deployment("db", POD_SPEC), "kind": "StatefulSet"}
    sts["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    code, raw = _raw(stack, "POST", f"/apis/apps/v1/namespaces/{namespace}/statefulsets", sts)
    assert code == 201, raw
    template = json.loads(raw)["spec"]["volumeClaimTemplates"][0]
    assert (template["spec"]["volumeMode"], template["status"]) == ("Filesystem", {"phase": "Pending"})


def test_deployment_annotation_change_bumps_generation(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(_deployment("gen", POD_SPEC)))
    kubectl.run("-n", namespace, "annotate", "deployment", "gen", "example.com/note=1")
    generation = kubectl.run("-n", namespace, "get", "deployment", "gen", "-o", "jsonpath={.metadata.generation}")
    assert generation.stdout == "2"
    kubectl.run("-n", namespace, "label", "deployment", "gen", "x=y")
    generation = kubectl.run("-n", namespace, "get", "deployment", "gen", "-o", "jsonpath={.metadata.generation}")
    assert generation.stdout == "2"  # labels do not count


def test_names_that_are_not_dns_labels_warn(kubectl: Kubectl, namespace: str) -> None:
    proc = kubectl.run("-n", namespace, "create", "deployment", "web.v1", "--image=nginx")
    assert ("Warning: metadata.name: this is used in Pod names and hostnames, which can result in surprising "
            "behavior; a DNS label is recommended: [must not contain dots]") in proc.stderr, proc.stderr
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web.v1"}, "spec": POD_SPEC}))
    assert ("Warning: metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; "
            "a DNS label is recommended: [must not contain dots]") in proc.stderr, proc.stderr
    proc = kubectl.run("-n", namespace, "create", "configmap", "web.v1")
    assert "Warning" not in proc.stderr, proc.stderr


def test_pod_spec_warnings_reach_kubectl(kubectl: Kubectl, namespace: str) -> None:
    """GetWarningsForPodTemplate / GetWarningsForPod: kubectl prints kube's texts as ``Warning:`` lines."""
    spec = {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"memory": "1.5"}}}],
            "nodeSelector": {"beta.kubernetes.io/arch": "amd64"}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(_deployment("warned", spec)))
    assert proc.stderr.splitlines() == [
        'Warning: spec.template.spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use '
        '"kubernetes.io/arch" instead',
        'Warning: spec.template.spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is '
        "invalid, must be an integer"], proc.stderr
    created_warnings = proc.stderr
    # WarningsOnUpdate: again when the generation moves on (a spec change), not for a label change
    proc = kubectl.run("-n", namespace, "patch", "deployment", "warned", "--type=merge", "-p",
                       json.dumps({"spec": {"template": {"metadata": {"labels": {"tier": "web"}}}}}))
    assert proc.stderr == created_warnings, proc.stderr
    proc = kubectl.run("-n", namespace, "label", "deployment", "warned", "team=a")
    assert proc.stderr == "", proc.stderr
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "warned"},
        "spec": {**spec, "imagePullSecrets": [{"name": "s"}, {"name": "s"}]}}))
    assert proc.stderr.splitlines() == [
        'Warning: spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" '
        "instead",
        'Warning: spec.imagePullSecrets[1].name: duplicate name "s"',
        'Warning: spec.containers[0].resources.requests[memory]: fractional byte value "1500m" is invalid, must be '
        "an integer"], proc.stderr


def test_deployment_status_updates_are_validated(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(_deployment("st", POD_SPEC)))
    proc = kubectl.run("-n", namespace, "patch", "deployment", "st", "--subresource=status", "--type=merge", "-p",
                       json.dumps({"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 1}}),
                       check=False)
    assert proc.returncode != 0
    assert ('The Deployment "st" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than '
            "status.replicas") in proc.stderr, proc.stderr
    kubectl.run("-n", namespace, "patch", "deployment", "st", "--subresource=status", "--type=merge", "-p",
                json.dumps({"status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 1}}))


def test_job_pod_failure_policy_is_validated(kubectl: Kubectl, namespace: str) -> None:
    """validatePodFailurePolicy: a rule needs one of onExitCodes and onPodConditions (kube's message)."""
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "pf"},
           "spec": {"podFailurePolicy": {"rules": [{"action": "Count"}]},
                    "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(job), check=False)
    assert proc.returncode != 0
    assert ('The Job "pf" is invalid: spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes '
            "and OnPodConditions is required") in proc.stderr, proc.stderr
    job["spec"]["podFailurePolicy"]["rules"][0]["onExitCodes"] = {"operator": "In", "values": [1]}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(job))


def test_cronjob_schedule_is_validated(kubectl: Kubectl, namespace: str) -> None:
    proc = kubectl.run("-n", namespace, "create", "cronjob", "c", "--image=nginx", "--schedule=x", check=False)
    assert proc.returncode != 0
    assert ('CronJob.batch "c" is invalid: spec.schedule: Invalid value: "x": expected exactly 5 fields, found 1: '
            "[x]") in proc.stderr, proc.stderr
    kubectl.run("-n", namespace, "create", "cronjob", "c", "--image=nginx", "--schedule=*/5 * * * *")


def test_volume_mount_of_a_missing_volume_is_not_found(kubectl: Kubectl, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "m"}, "spec": {"containers": [
        {"name": "c", "image": "nginx", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod), check=False)
    assert 'The Pod "m" is invalid: spec.containers[0].volumeMounts[0].name: Not found: "data"' in proc.stderr, \
        proc.stderr


def test_job_without_restart_policy_is_refused_as_kube(kubectl: Kubectl, namespace: str) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
           "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(job), check=False)
    assert ('The Job "j" is invalid: spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", '
            '"Never"') in proc.stderr, proc.stderr


def test_load_balancer_local_traffic_gets_a_health_check_node_port(kubectl: Kubectl, namespace: str) -> None:
    """The Service REST allocates ``healthCheckNodePort`` for a LoadBalancer with externalTrafficPolicy Local
    (alloc.go allocHealthCheckNodePort), keeps it while needed and frees it when the policy goes back to
    Cluster (dropTypeDependentFields wipes it); ``allocateLoadBalancerNodePorts: false`` gets no nodePorts."""
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
           "spec": {"type": "LoadBalancer", "externalTrafficPolicy": "Local", "selector": {"app": "web"},
                    "ports": [{"port": 80}]}}
    created = json.loads(kubectl.run("-n", namespace, "create", "-f", "-", "-o", "json",
                                     input=json.dumps(svc)).stdout)
    hc = created["spec"]["healthCheckNodePort"]
    assert 30000 <= hc <= 32767 and hc != created["spec"]["ports"][0]["nodePort"]
    kubectl.run("-n", namespace, "label", "service", "lb", "touched=yes")
    assert json.loads(kubectl.run("-n", namespace, "get", "service", "lb", "-o", "json").stdout)[
        "spec"]["healthCheckNodePort"] == hc
    kubectl.run("-n", namespace, "patch", "service", "lb", "--type=merge",
                "-p", '{"spec": {"externalTrafficPolicy": "Cluster"}}')
    spec = json.loads(kubectl.run("-n", namespace, "get", "service", "lb", "-o", "json").stdout)["spec"]
    assert "healthCheckNodePort" not in spec
    # the freed port can be asked for again
    again = {**svc, "metadata": {"name": "lb2"}, "spec": {**svc["spec"], "healthCheckNodePort": hc}}
    assert json.loads(kubectl.run("-n", namespace, "create", "-f", "-", "-o", "json", input=json.dumps(again)
                                  ).stdout)["spec"]["healthCheckNodePort"] == hc
    bad = {**svc, "metadata": {"name": "lb3"}, "spec": {**svc["spec"], "externalTrafficPolicy": "Cluster",
                                                       "healthCheckNodePort": 31000}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(bad), check=False)
    assert proc.stderr.strip() == (
        'The Service "lb3" is invalid: spec.healthCheckNodePort: Invalid value: 31000: may only be set when `type` '
        "is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'")
    quiet = {**svc, "metadata": {"name": "lb4"}, "spec": {**svc["spec"], "externalTrafficPolicy": "Cluster",
                                                         "allocateLoadBalancerNodePorts": False}}
    ports = json.loads(kubectl.run("-n", namespace, "create", "-f", "-", "-o", "json", input=json.dumps(quiet)
                                   ).stdout)["spec"]["ports"]
    assert ports == [{"port": 80, "protocol": "TCP", "targetPort": 80}]


def test_runtime_class_and_node_taint_admission(kubectl: Kubectl, namespace: str) -> None:
    """The RuntimeClass and TaintNodesByCondition admission plugins (default on): a Pod naming no RuntimeClass is
    refused, one naming a class gets its overhead and node selector; a created Node is tainted not-ready."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "sandboxed"},
           "spec": {"runtimeClassName": "parity-gvisor", "containers": [{"name": "c", "image": "nginx"}]}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod), check=False)
    assert proc.stderr.strip() == ('Error from server (Forbidden): error when creating "STDIN": pods "sandboxed" is '
                                   'forbidden: pod rejected: RuntimeClass "parity-gvisor" not found')
    rc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "parity-gvisor"},
          "handler": "runsc", "overhead": {"podFixed": {"cpu": "250m"}},
          "scheduling": {"nodeSelector": {"sandbox": "gvisor"}}}
    kubectl.run("create", "-f", "-", input=json.dumps(rc))
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "parity-node"}}
    try:
        created = json.loads(kubectl.run("-n", namespace, "create", "-f", "-", "-o", "json",
                                         input=json.dumps(pod)).stdout)
        assert created["spec"]["overhead"] == {"cpu": "250m"}
        assert created["spec"]["nodeSelector"] == {"sandbox": "gvisor"}
        tainted = json.loads(kubectl.run("create", "-f", "-", "-o", "json", input=json.dumps(node)).stdout)
        assert tainted["spec"]["taints"] == [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]
    finally:
        kubectl.run("delete", "runtimeclass", "parity-gvisor", check=False)
        kubectl.run("delete", "node", "parity-node", check=False)


def test_yaml_answers_are_go_yaml_and_errors_follow_the_accept(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """Accept: application/yaml gets kube's serializer output (JSONToYAML: sorted keys, go-yaml's double quotes
    for strings that would read back as numbers, booleans or timestamps), and an error's Status in YAML too
    (ErrorNegotiated)."""
    kubectl.run("-n", namespace, "create", "configmap", "y", "--from-literal=n=123", "--from-literal=a=text")
    code, raw = _raw(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/y", accept="application/yaml")
    assert code == 200
    text = raw.decode()
    assert text.startswith('apiVersion: v1\ndata:\n  a: text\n  "n": "123"\nkind: ConfigMap\nmetadata:\n'), text
    assert '\n  creationTimestamp: "' in text
    code, raw = _raw(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/absent", accept="application/yaml")
    assert (code, raw.decode()) == (404, (
        "apiVersion: v1\ncode: 404\ndetails:\n  kind: configmaps\n  name: absent\nkind: Status\n"
        'message: configmaps "absent" not found\nmetadata: {}\nreason: NotFound\nstatus: Failure\n'))
