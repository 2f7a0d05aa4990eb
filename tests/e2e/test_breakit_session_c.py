"""Break-it pass over ServiceCIDR/IPAddress, refusal warnings, CRD conditions, Job status and pod validation
(session C): each test pins one bug found by using the stack as a kube-apiserver 1.37 user would, with the
pinned kubectl and the official Python client, and asserts kube's behaviour."""

from __future__ import annotations

import json

import pytest
from kubernetes import client, config

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for


@pytest.fixture(scope="module")
def api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(stack.kubeconfig))


def _get(kubectl: Kubectl, *what: str) -> dict:
    return json.loads(kubectl.run("get", *what, "-o", "json").stdout)


def _absent(kubectl: Kubectl, *what: str) -> bool:
    proc = kubectl.run("get", *what, check=False)
    return proc.returncode != 0 and "NotFound" in proc.stderr


def test_service_deleted_by_removing_its_last_finalizer_releases_ip_port_and_ipaddress(
        kubectl: Kubectl, namespace: str) -> None:
    # kube's Service REST releases allocations in AfterDelete, which the generic store also runs when an update
    # clearing the last finalizer deletes the object (kubernetes issue 87603, PR 90753)
    kubectl.run("-n", namespace, "create", "service", "nodeport", "held", "--tcp=80")
    svc = _get(kubectl, "-n", namespace, "service", "held")
    ip, port = svc["spec"]["clusterIP"], svc["spec"]["ports"][0]["nodePort"]
    wait_for(lambda: _get(kubectl, "ipaddress", ip))
    kubectl.run("-n", namespace, "patch", "service", "held", "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    kubectl.run("-n", namespace, "delete", "service", "held", "--wait=false")
    assert _get(kubectl, "ipaddress", ip)["spec"]["parentRef"]["name"] == "held"  # still held while pending
    kubectl.run("-n", namespace, "patch", "service", "held", "--type=json",
                "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    assert _absent(kubectl, "-n", namespace, "service", "held")
    wait_for(lambda: _absent(kubectl, "ipaddress", ip))
    again = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "again", "namespace": namespace},
             "spec": {"type": "NodePort", "clusterIP": ip, "ports": [{"port": 80, "nodePort": port}]}}
    kubectl.run("create", "-f", "-", input=json.dumps(again))  # was: 422 provided IP is already allocated
    owner = wait_for(lambda: _get(kubectl, "ipaddress", ip))
    assert owner["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": namespace,
                                          "name": "again"}


def test_external_name_back_to_cluster_ip_gets_a_cluster_ip(kubectl: Kubectl, namespace: str) -> None:
    # kubectl patch to ExternalName with clusterIP "" (Go's omitempty never stores it), then back to ClusterIP:
    # kube allocates a new clusterIP (was: the Service kept clusterIP "" and no IP, no IPAddress)
    kubectl.run("-n", namespace, "create", "service", "clusterip", "flip", "--tcp=80")
    kubectl.run("-n", namespace, "patch", "service", "flip", "-p", json.dumps(
        {"spec": {"type": "ExternalName", "externalName": "db.example.com", "clusterIP": "", "clusterIPs": None}}))
    kubectl.run("-n", namespace, "patch", "service", "flip", "-p",
                '{"spec":{"type":"ClusterIP","externalName":null}}')
    spec = _get(kubectl, "-n", namespace, "service", "flip")["spec"]
    assert spec["clusterIP"] not in ("", "None") and spec["clusterIPs"] == [spec["clusterIP"]]
    owner = wait_for(lambda: _get(kubectl, "ipaddress", spec["clusterIP"]))
    assert owner["spec"]["parentRef"]["name"] == "flip"



def _job_row(kubectl: Kubectl, namespace: str, name: str, *wide: str) -> list[str]:
    table = kubectl.run("-n", namespace, "get", "job", name, *wide).stdout.splitlines()
    assert table[0].split()[:5] == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    return table[1].split()


def _job(namespace: str, name: str, **spec: object) -> str:
    return json.dumps({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": namespace},
                       "spec": {**spec, "template": {"spec": {"restartPolicy": "Never", "containers": [
                           {"name": "w", "image": "busybox"}]}}}})


def test_job_columns_follow_a_controllers_status_updates(kubectl: Kubectl, namespace: str,
                                                         api: client.ApiClient) -> None:
    # kube's printJob: Status Complete > Failed > Terminating > Suspended > FailureTarget > Running; Completions
    # "n/1 of p" for a work queue (parallelism, no completions); Duration from startTime to completionTime or now
    # (was: Running whatever FailureTarget or a deletion said, "0/1", and never a Duration)
    batch = client.BatchV1Api(api)
    start = "2026-01-01T00:00:00Z"
    kubectl.run("create", "-f", "-", input=_job(namespace, "queue", parallelism=3))
    assert _job_row(kubectl, namespace, "queue")[1:5] == ["Running", "0/1", "of", "3"]
    batch.patch_namespaced_job_status("queue", namespace, {"status": {"startTime": start, "active": 3, "ready": 0}})
    assert _job_row(kubectl, namespace, "queue")[5].endswith("d")  # running for days: the time since startTime
    failure_target = {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                      "message": "Job has reached the specified backoff limit",
                      "lastProbeTime": start, "lastTransitionTime": start}
    batch.patch_namespaced_job_status("queue", namespace, {"status": {
        "active": 0, "failed": 1, "terminating": 0, "conditions": [failure_target]}})
    assert _job_row(kubectl, namespace, "queue")[1] == "FailureTarget"
    batch.patch_namespaced_job_status("queue", namespace, {"status": {
        "conditions": [failure_target, dict(failure_target, type="Failed")]}})
    assert _job_row(kubectl, namespace, "queue")[1] == "Failed"

    kubectl.run("create", "-f", "-", input=_job(namespace, "done"))
    batch.patch_namespaced_job_status("done", namespace, {"status": {"startTime": start, "active": 1}})
    met = {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached",
           "message": "Reached expected number of succeeded pods", "lastProbeTime": start,
           "lastTransitionTime": start}
    batch.patch_namespaced_job_status("done", namespace, {"status": {"active": 0, "succeeded": 1,
                                                                     "conditions": [met]}})
    assert _job_row(kubectl, namespace, "done")[1] == "Running"  # kube's printer has no SuccessCriteriaMet status
    batch.patch_namespaced_job_status("done", namespace, {"status": {
        "completionTime": "2026-01-01T00:02:05Z", "conditions": [met, dict(met, type="Complete")]}})
    assert _job_row(kubectl, namespace, "done")[1:4] == ["Complete", "1/1", "2m5s"]

    kubectl.run("create", "-f", "-", input=_job(namespace, "going", completions=2, parallelism=2))
    kubectl.run("-n", namespace, "patch", "job", "going", "-p", '{"metadata":{"finalizers":["example.com/hold"]}}')
    kubectl.run("-n", namespace, "delete", "job", "going", "--wait=false")
    going = _job_row(kubectl, namespace, "going")
    assert going[1:3] == ["Terminating", "0/2"] and len(going) == 4  # never started: an empty Duration
    kubectl.run("-n", namespace, "patch", "job", "going", "--type=json",
                "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')


def test_pod_apparmor_annotations_may_not_change_after_create(kubectl: Kubectl, namespace: str) -> None:
    # ValidatePodSpecificAnnotationUpdates: AppArmor annotations may not be added, updated or removed; the
    # create-only field/annotation match is not run on updates (was: "apparmor type in annotation and field must
    # match" for an update, and a removal accepted)
    key = "container.apparmor.security.beta.kubernetes.io/c"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "armored", "namespace": namespace,
                                                           "annotations": {key: "localhost/myprof"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    kubectl.run("create", "-f", "-", input=json.dumps(pod))
    profile = _get(kubectl, "-n", namespace, "pod", "armored")["spec"]["containers"][0]["securityContext"]
    assert profile == {"appArmorProfile": {"type": "Localhost", "localhostProfile": "myprof"}}
    changed = kubectl.run("-n", namespace, "annotate", "pod", "armored", "--overwrite", f"{key}=runtime/default",
                          check=False)
    assert changed.returncode != 0
    assert changed.stderr.strip() == (f'The Pod "armored" is invalid: metadata.annotations[{key}]: Forbidden: may '
                                      "not remove or update AppArmor annotations")
    removed = kubectl.run("-n", namespace, "annotate", "pod", "armored", f"{key}-", check=False)
    assert removed.returncode != 0 and "may not remove or update AppArmor annotations" in removed.stderr
    kubectl.run("-n", namespace, "label", "pod", "armored", "tier=web")  # other metadata stays writable
    kubectl.run("-n", namespace, "run", "plain", "--image=nginx")
    added = kubectl.run("-n", namespace, "annotate", "pod", "plain",
                        "container.apparmor.security.beta.kubernetes.io/plain=runtime/default", check=False)
    assert added.stderr.strip() == (
        'The Pod "plain" is invalid: metadata.annotations[container.apparmor.security.beta.kubernetes.io/plain]: '
        "Forbidden: may not add AppArmor annotations")
    assert _get(kubectl, "-n", namespace, "pod", "armored")["metadata"]["annotations"] == {key: "localhost/myprof"}


def test_default_service_cidr_and_kubernetes_service_come_back_after_deletion(kubectl: Kubectl) -> None:
    # kube-controller-manager's service-cidr-controller keeps a deleted ServiceCIDR whose allocated IPs no other
    # ServiceCIDR holds (Ready False, Terminating); once it is gone, kube-apiserver's default ServiceCIDR and
    # bootstrap controllers re-create it and the kubernetes Service within 10 s (was: gone until a gateway
    # restarted)
    old_uid = _get(kubectl, "servicecidr", "kubernetes")["metadata"]["uid"]
    kubectl.run("delete", "servicecidr", "kubernetes", "--wait=false")

    def held() -> dict | None:
        got = _get(kubectl, "servicecidr", "kubernetes")
        ready = [c for c in got["status"]["conditions"] if c["type"] == "Ready"]
        return got if ready and (ready[0]["status"], ready[0].get("reason")) == ("False", "Terminating") else None

    terminating = wait_for(held)
    assert terminating["metadata"]["finalizers"] == ["networking.k8s.io/service-cidr-finalizer"]
    assert [c["message"] for c in terminating["status"]["conditions"]] == [
        "There are still IPAddresses referencing the ServiceCIDR, please remove them or create a new ServiceCIDR"]
    kubectl.run("patch", "servicecidr", "kubernetes", "--type=json",
                "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')  # by hand: the IPs are still in use
    kubectl.run("-n", "default", "delete", "service", "kubernetes")
    cidr = wait_for(lambda: (lambda c: c if c["metadata"]["uid"] != old_uid else None)(
        _get(kubectl, "servicecidr", "kubernetes")), timeout=30)
    assert cidr["spec"]["cidrs"] == ["10.96.0.0/12"]
    assert [(c["type"], c["status"]) for c in cidr["status"]["conditions"]] == [("Ready", "True")]
    svc = wait_for(lambda: _get(kubectl, "-n", "default", "service", "kubernetes"), timeout=30)
    assert svc["spec"]["clusterIP"] == "10.96.0.1" and svc["spec"]["ports"][0]["port"] == 443
    owner = wait_for(lambda: _get(kubectl, "ipaddress", "10.96.0.1"))
    assert owner["spec"]["parentRef"] == {"group": "", "resource": "services", "namespace": "default",
                                          "name": "kubernetes"}
    wait_for(lambda: _get(kubectl, "servicecidr", "kubernetes")["metadata"].get("finalizers") == [
        "networking.k8s.io/service-cidr-finalizer"])


def test_service_status_may_remove_the_last_finalizer_and_frees_the_ip(kubectl: Kubectl, namespace: str) -> None:
    # serviceStatusStrategy resets only spec, so /status may drop finalizers; the last one going deletes the
    # Service and releases its clusterIP (kubernetes issue 120536; was: the finalizer change ignored on /status)
    kubectl.run("-n", namespace, "create", "service", "clusterip", "held", "--tcp=80")
    ip = _get(kubectl, "-n", namespace, "service", "held")["spec"]["clusterIP"]
    kubectl.run("-n", namespace, "patch", "service", "held", "--subresource=status",
                "-p", '{"metadata":{"labels":{"seen":"yes"},"finalizers":["example.com/hold"]}}')
    meta = _get(kubectl, "-n", namespace, "service", "held")["metadata"]
    assert meta["finalizers"] == ["example.com/hold"] and meta["labels"]["seen"] == "yes"
    kubectl.run("-n", namespace, "delete", "service", "held", "--wait=false")
    kubectl.run("-n", namespace, "patch", "service", "held", "--subresource=status", "--type=json",
                "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    assert _absent(kubectl, "-n", namespace, "service", "held")
    wait_for(lambda: _absent(kubectl, "ipaddress", ip))
    again = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "again", "namespace": namespace},
             "spec": {"clusterIP": ip, "ports": [{"port": 80}]}}
    kubectl.run("create", "-f", "-", input=json.dumps(again))
