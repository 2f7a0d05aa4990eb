"""kube's kubectl test scripts replayed with the pinned kubectl (test/cmd/apps.sh, scale.sh, batch.sh; kubernetes
/kubernetes): what they expect of kube-apiserver 1.37 on the server side, and the differences found replaying them.

test-cmd runs kube-controller-manager next to the apiserver (hack/make-rules/test-cmd.sh); kapi runs no workload
controllers, so the scripts' ControllerRevisions and ReplicaSets are written here as those controllers would write
them, and what then reaches the server (the rollback patches, generation bumps, field managers) is compared.
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Kubectl

PAUSE_V2 = "registry.k8s.io/pause:2.0"
DAEMONSET = {
    "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "bind", "labels": {"service": "bind"}},
    "spec": {"selector": {"matchLabels": {"service": "bind"}},
             "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
             "template": {"metadata": {"labels": {"service": "bind"}},
                          "spec": {"containers": [{"name": "kubernetes-pause", "image": PAUSE_V2}]}}}}


def _get(kubectl: Kubectl, namespace: str, what: str, template: str) -> str:
    return kubectl.run("-n", namespace, "get", what, "-o", f"go-template={template}").stdout


def _status_patch(kubectl: Kubectl, namespace: str, what: str, status: dict[str, Any]) -> str:
    proc = kubectl.run("-n", namespace, "patch", what, "--subresource=status", "--type=merge",
                       "-p", json.dumps({"status": status}), check=False)
    return proc.stderr


def test_daemonset_set_commands_bump_the_generation(kubectl: Kubectl, namespace: str) -> None:
    """apps.sh run_daemonset_tests: apply twice keeps generation 1; set image/env/resources and rollout restart
    each bump it; the set commands' field manager is kubectl-set."""
    manifest = json.dumps(DAEMONSET)
    for _ in range(2):
        kubectl.run("-n", namespace, "apply", "-f", "-", input=manifest)
        assert _get(kubectl, namespace, "daemonsets/bind", "{{.metadata.generation}}") == "1"
    steps = [("set", "image", "daemonsets/bind", "*=registry.k8s.io/pause:test-cmd"),
             ("set", "env", "daemonsets/bind", "foo=bar"),
             ("set", "resources", "daemonsets/bind", "--limits=cpu=200m,memory=512Mi"),
             ("rollout", "restart", "daemonset/bind")]
    for generation, step in enumerate(steps, start=2):
        kubectl.run("-n", namespace, *step)
        assert _get(kubectl, namespace, "daemonsets/bind", "{{.metadata.generation}}") == str(generation), step
    managers = kubectl.run("-n", namespace, "get", "daemonsets/bind", "--show-managed-fields",
                           "-o=jsonpath={.metadata.managedFields[*].manager}").stdout.split()
    assert "kubectl-set" in managers and "kubectl-rollout" in managers


def test_daemonset_rollout_undo_through_controller_revisions(kubectl: Kubectl, namespace: str) -> None:
    """apps.sh run_daemonset_history_tests with the daemonset controller's ControllerRevisions written by hand:
    history lists them, a server dry-run undo changes nothing, undo --to-revision=1 restores the one-container
    template (kubectl's strategic merge patch with ``$patch: replace``), an unknown revision fails."""
    kubectl.run("-n", namespace, "apply", "-f", "-", input=json.dumps(DAEMONSET))
    uid = _get(kubectl, namespace, "daemonsets/bind", "{{.metadata.uid}}")
    two = [{"name": "kubernetes-pause", "image": "registry.k8s.io/pause:latest"},
           {"name": "app", "image": "registry.k8s.io/nginx:test-cmd"}]
    for revision, containers in ((1, [{"name": "kubernetes-pause", "image": PAUSE_V2}]), (2, two)):
        kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
            "apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": f"bind-r{revision}", "labels": {"service": "bind"},
                         "annotations": {"kubernetes.io/change-cause": f"kubectl apply r{revision}"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "bind",
                                              "uid": uid, "controller": True, "blockOwnerDeletion": True}]},
            "revision": revision,
            "data": {"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"service": "bind"}},
                                           "spec": {"containers": containers}}}}}))
    rv2 = json.loads(json.dumps(DAEMONSET))
    rv2["spec"]["template"]["spec"]["containers"] = two
    kubectl.run("-n", namespace, "apply", "-f", "-", input=json.dumps(rv2))
    history = kubectl.run("-n", namespace, "rollout", "history", "daemonset").stdout
    assert "REVISION  CHANGE-CAUSE" in history and "1         kubectl apply r1" in history
    length = "{{range.items}}{{len .spec.template.spec.containers}}{{end}}"
    kubectl.run("-n", namespace, "rollout", "undo", "daemonset", "--dry-run=server")
    assert _get(kubectl, namespace, "daemonsets", length) == "2"
    kubectl.run("-n", namespace, "rollout", "undo", "daemonset", "--to-revision=1")
    assert _get(kubectl, namespace, "daemonsets", length) == "1"
    assert _get(kubectl, namespace, "daemonsets/bind", "{{(index .spec.template.spec.containers 0).image}}") \
        == PAUSE_V2
    failed = kubectl.run("-n", namespace, "rollout", "undo", "daemonset", "--to-revision=1000000", check=False)
    assert failed.returncode != 0 and "unable to find specified revision" in failed.stderr


def test_scale_preconditions_and_selectors(kubectl: Kubectl, namespace: str) -> None:
    """apps.sh run_rs_tests / scale.sh: --current-replicas is checked against the Scale, dry runs change nothing,
    -l and --all pick the Deployments."""
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "frontend"},
          "spec": {"replicas": 3, "selector": {"matchLabels": {"tier": "frontend"}},
                   "template": {"metadata": {"labels": {"tier": "frontend"}},
                                "spec": {"containers": [{"name": "php-redis", "image": "gb-frontend:v4"}]}}}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(rs))
    for dry_run in ("--dry-run=client", "--dry-run=server"):
        kubectl.run("-n", namespace, "scale", dry_run, "--current-replicas=3", "--replicas=2", "replicasets/frontend")
    assert _get(kubectl, namespace, "rs/frontend", "{{.spec.replicas}}") == "3"
    kubectl.run("-n", namespace, "scale", "--current-replicas=3", "--replicas=2", "replicasets/frontend")
    assert _get(kubectl, namespace, "rs/frontend", "{{.spec.replicas}}") == "2"
    stale = kubectl.run("-n", namespace, "scale", "--current-replicas=3", "--replicas=2", "rs/frontend", check=False)
    assert "Expected replicas to be 3, was 2" in stale.stderr
    for name, label in (("scale-1", "hello"), ("scale-2", "hello"), ("scale-3", "hello-3")):
        kubectl.run("-n", namespace, "create", "deployment", name, "--image=registry.k8s.io/pause:3.9")
        kubectl.run("-n", namespace, "label", "deployment", name, f"run={label}")
    kubectl.run("-n", namespace, "scale", "deploy", "--replicas=3", "--all", "--dry-run=server")
    kubectl.run("-n", namespace, "scale", "deploy", "--replicas=2", "-l", "run=hello")
    replicas = "{{range.items}}{{.metadata.name}}={{.spec.replicas}} {{end}}"
    assert _get(kubectl, namespace, "deployments", replicas) == "scale-1=2 scale-2=2 scale-3=1 "


def test_terminating_replicas_must_not_be_negative(kubectl: Kubectl, namespace: str) -> None:
    """ValidateDeploymentStatus / ValidateReplicaSetStatus check ``status.terminatingReplicas`` >= 0 when set
    (DeploymentReplicaSetTerminatingReplicas, on by default since 1.35). kapi accepted and stored -1."""
    kubectl.run("-n", namespace, "create", "deployment", "d1", "--image=x")
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r1"},
          "spec": {"replicas": 0, "selector": {"matchLabels": {"a": "b"}},
                   "template": {"metadata": {"labels": {"a": "b"}},
                                "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(rs))
    for what, kind in (("deployment/d1", "Deployment"), ("replicaset/r1", "ReplicaSet")):
        name = what.split("/")[1]
        error = _status_patch(kubectl, namespace, what, {"terminatingReplicas": -1})
        assert error.strip() == (f'The {kind} "{name}" is invalid: status.terminatingReplicas: Invalid value: -1: '
                                 "must be greater than or equal to 0")
        assert _status_patch(kubectl, namespace, what, {"terminatingReplicas": 2}) == ""
        assert _get(kubectl, namespace, what, "{{.status.terminatingReplicas}}") == "2"


def test_v1_hpa_keeps_objectmeta_key_order(kubectl: Kubectl, namespace: str) -> None:
    """apps.sh autoscale: read through autoscaling/v1, an HPA whose metric v1 cannot hold carries it in the
    ``autoscaling.alpha.kubernetes.io/metrics`` annotation, and ObjectMeta is encoded in Go struct order:
    ``annotations`` before ``managedFields`` (kapi appended the conversion's annotations after them)."""
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=x")
    kubectl.run("-n", namespace, "autoscale", "deployment", "web", "--max=5", "--cpu=500m")
    raw = kubectl.run("get", "--raw", f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers/web"
                      ).stdout
    hpa = json.loads(raw)
    assert list(hpa["metadata"]) == ["name", "namespace", "uid", "resourceVersion", "generation",
                                     "creationTimestamp", "annotations", "managedFields"]
    assert json.loads(hpa["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "Resource", "resource": {"name": "cpu", "targetAverageValue": "500m"}}]
    assert list(hpa["spec"]) == ["scaleTargetRef", "minReplicas", "maxReplicas"]
    assert hpa["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    listed = json.loads(kubectl.run("get", "--raw",
                                    f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers").stdout)
    assert list(listed["items"][0]["metadata"])[-2:] == ["annotations", "managedFields"]


def _revision(name: str, **fields: Any) -> str:
    return json.dumps({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name}, **fields})


def test_controller_revisions_are_validated(kubectl: Kubectl, namespace: str) -> None:
    """ValidateControllerRevision / ValidateControllerRevisionUpdate (the objects behind apps.sh's rollout
    history): ``data`` is mandatory, ``revision`` >= 0, ``data`` immutable; ``revision`` (no omitempty) is
    written as 0 when not sent. kapi stored all of these as sent and wrote no ``revision``."""
    bad = kubectl.run("-n", namespace, "create", "-f", "-", input=_revision("r0", revision=-3), check=False)
    assert bad.stderr.strip() == ('The ControllerRevision "r0" is invalid: \n'
                                  "* data: Required value: data is mandatory\n"
                                  "* revision: Invalid value: -3: must be greater than or equal to 0")
    kubectl.run("-n", namespace, "create", "-f", "-", input=_revision("r1", data={"a": 1}))
    raw = json.loads(kubectl.run("get", "--raw",
                                 f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions/r1").stdout)
    assert list(raw)[-2:] == ["data", "revision"] and raw["revision"] == 0
    changed = kubectl.run("-n", namespace, "patch", "controllerrevision", "r1", "--type=merge",
                          "-p", '{"data":{"a":2}}', check=False)
    assert changed.stderr.strip() == (
        'The ControllerRevision "r1" is invalid: data: Invalid value: &Unknown{TypeMeta:TypeMeta{APIVersion:,Kind:,},'
        'Raw:*[123 34 97 34 58 50 125],ContentEncoding:,ContentType:application/json,}: field is immutable')
    negative = kubectl.run("-n", namespace, "patch", "controllerrevision", "r1", "--type=merge",
                           "-p", '{"revision":-1}', check=False)
    assert negative.stderr.strip() == ('The ControllerRevision "r1" is invalid: revision: Invalid value: -1: '
                                       "must be greater than or equal to 0")
    kubectl.run("-n", namespace, "patch", "controllerrevision", "r1", "--type=merge", "-p", '{"revision":7}')
    assert _get(kubectl, namespace, "controllerrevision/r1", "{{.revision}} {{.data.a}}") == "7 1"


def test_raw_extension_fields_take_any_json(kubectl: Kubectl, namespace: str) -> None:
    """runtime.RawExtension.UnmarshalJSON keeps the bytes of any JSON value: a ControllerRevision's ``data`` may be
    a string, number or list and reads back as sent; a ResourceClaim's opaque ``parameters`` string is decoded too
    and refused by validateRawExtension (422 ``must be a valid JSON object``). kapi answered both 400 ``json:
    cannot unmarshal string into Go struct field ... of type map``."""
    for name, data in (("s", "str"), ("n", 5), ("l", [1, "a"])):
        kubectl.run("-n", namespace, "create", "-f", "-", input=_revision(f"raw-{name}", data=data))
        raw = json.loads(kubectl.run("get", "--raw",
                                     f"/apis/apps/v1/namespaces/{namespace}/controllerrevisions/raw-{name}").stdout)
        assert raw["data"] == data
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "rc"},
             "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}],
                                  "config": [{"opaque": {"driver": "d.example.com", "parameters": "str"}}]}}}
    refused = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(claim), check=False)
    assert refused.stderr.strip() == ('The ResourceClaim "rc" is invalid: spec.devices.config[0].opaque.parameters: '
                                      'Invalid value: "<value omitted>": must be a valid JSON object')


def test_v2_hpa_status_writes_current_metrics_null(kubectl: Kubectl, namespace: str) -> None:
    """apps.sh autoscale, read as autoscaling/v2: HorizontalPodAutoscalerStatus.CurrentMetrics has no omitempty,
    so a new HPA's status is ``{"desiredReplicas": 0, "currentMetrics": null}`` however it was created (v2, v1,
    server dry run); kapi left ``currentMetrics`` out until a status write."""
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=x")
    kubectl.run("-n", namespace, "autoscale", "deployment", "web", "--max=3")
    base = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers"
    assert json.loads(kubectl.run("get", "--raw", f"{base}/web").stdout)["status"] == {
        "desiredReplicas": 0, "currentMetrics": None}
    dry = json.loads(kubectl.run("-n", namespace, "autoscale", "deployment", "web", "--max=3", "--name=dry",
                                 "--dry-run=server", "-o", "json").stdout)
    assert dry["status"] == {"desiredReplicas": 0, "currentMetrics": None}
    v1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "old"},
          "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                   "maxReplicas": 3}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(v1))
    assert json.loads(kubectl.run("get", "--raw", f"{base}/old").stdout)["status"] == {
        "desiredReplicas": 0, "currentMetrics": None}
