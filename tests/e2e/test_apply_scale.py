"""Server-side apply of an autoscaling/v1 Scale to a workload's ``/scale`` (client-go's ApplyScale; issue 17).

kube's Scale field manager works on the parent's managedFields as ScaleHandler.ToSubresource shows them and
writes its result back with ToParent (k8s.io/apimachinery pkg/util/managedfields/scalehandler.go,
pkg/registry/apps/deployment/storage/storage.go scaleUpdatedObjectInfo): the applier gets an ``Apply`` entry
with ``subresource: scale`` owning ``f:spec.f:replicas`` on the parent, written without ``time``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubernetes import client, config

from kapi.local.launcher import Stack
from tests.e2e.conftest import TOKENS, Kubectl, wait_for
from tests.e2e.test_decode_limits import _request as raw_request

APPLY = "application/apply-patch+yaml"


def _request(stack: Stack, method: str, path: str, body: str | None = None, content_type: str = APPLY,
             token: str | None = None) -> tuple[int, dict[str, Any]]:
    """One request as the admin (or ``token``'s user), an apply patch unless ``content_type`` says otherwise."""
    return raw_request(stack, method, path, body, content_type, token)


def _scale(replicas: int, **meta: Any) -> str:
    return json.dumps({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "capp", **meta},
                       "spec": {"replicas": replicas}})


def _deployment(kubectl: Kubectl, namespace: str, name: str = "capp", replicas: int = 1) -> dict[str, Any]:
    manifest = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}},
                                      "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(manifest))
    return _get(kubectl, namespace, "deployment", name)


def _get(kubectl: Kubectl, namespace: str, kind: str, name: str) -> dict[str, Any]:
    return json.loads(kubectl.run("-n", namespace, "get", kind, name, "-o", "json", "--show-managed-fields").stdout)


def _entries(obj: dict[str, Any], *managers: str) -> list[dict[str, Any]]:
    """The object's managedFields entries of ``managers`` (the controllers' status entries left out)."""
    return [e for e in obj["metadata"]["managedFields"] if e["manager"] in managers]


def _scale_path(namespace: str, resource: str = "deployments", name: str = "capp", group: str = "apps/v1") -> str:
    prefix = "/api/v1" if group == "v1" else f"/apis/{group}"
    return f"{prefix}/namespaces/{namespace}/{resource}/{name}/scale"


def test_apply_conflicts_with_the_replicas_owner_then_force_takes_them(
        stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    created = _deployment(kubectl, namespace)
    path = _scale_path(namespace) + "?fieldManager=scaler"

    status, body = _request(stack, "PATCH", path, _scale(3))
    assert status == 409, body
    # the creator's Update entry, shown on the Scale at autoscaling/v1 (its manager identifier there)
    assert body["message"] == ('Apply failed with 1 conflict: conflict with "kubectl-create" using autoscaling/v1: '
                               ".spec.replicas")
    assert body["reason"] == "Conflict"
    assert body["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with '
                                          '"kubectl-create" using autoscaling/v1', "field": ".spec.replicas"}]

    status, scale = _request(stack, "PATCH", path + "&force=true", _scale(3))
    assert status == 200, scale
    meta = created["metadata"]
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert set(scale["metadata"]) == {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}
    assert (scale["metadata"]["name"], scale["metadata"]["uid"]) == ("capp", meta["uid"])
    assert scale["metadata"]["creationTimestamp"] == meta["creationTimestamp"]
    assert scale["spec"] == {"replicas": 3}
    assert scale["status"]["selector"] == "app=capp"

    parent = _get(kubectl, namespace, "deployment", "capp")
    assert parent["spec"]["replicas"] == 3
    assert parent["metadata"]["resourceVersion"] == scale["metadata"]["resourceVersion"]
    scaler, creator = _entries(parent, "scaler"), _entries(parent, "kubectl-create")
    assert scaler == [{"manager": "scaler", "operation": "Apply", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"}]
    # the creator keeps its entry (and time) without spec.replicas
    assert len(creator) == 1 and creator[0]["operation"] == "Update" and "time" in creator[0]
    assert "f:replicas" not in creator[0]["fieldsV1"]["f:spec"]
    assert "f:template" in creator[0]["fieldsV1"]["f:spec"]

    # a re-apply by the owner: no conflict, the entry stays as it is
    status, scale = _request(stack, "PATCH", path, _scale(4))
    assert status == 200, scale
    assert scale["spec"] == {"replicas": 4}
    again = _get(kubectl, namespace, "deployment", "capp")
    assert again["spec"]["replicas"] == 4
    assert _entries(again, "scaler") == scaler

    # the main resource's appliers now conflict with the Scale's owner
    status, body = _request(stack, "PATCH", f"/apis/apps/v1/namespaces/{namespace}/deployments/capp"
                            "?fieldManager=other", json.dumps({"apiVersion": "apps/v1", "kind": "Deployment",
                                                               "metadata": {"name": "capp"},
                                                               "spec": {"replicas": 6}}))
    assert status == 409, body
    assert body["message"] == ('Apply failed with 1 conflict: conflict with "scaler" with subresource "scale": '
                               ".spec.replicas")


def test_apply_of_the_same_value_shares_the_replicas(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    _deployment(kubectl, namespace, replicas=2)
    status, scale = _request(stack, "PATCH", _scale_path(namespace) + "?fieldManager=scaler", _scale(2))
    assert status == 200, scale
    assert scale["spec"] == {"replicas": 2}
    parent = _get(kubectl, namespace, "deployment", "capp")
    # ToParent: the creator's Update entry (identified at apps/v1 on the parent, at autoscaling/v1 on the Scale)
    # loses spec.replicas, which comes back in an entry of its own, without time; the applier shares it
    creator = _entries(parent, "kubectl-create")
    assert len(creator) == 2, creator
    # kube's order: Apply entries first, then by time (none first), manager, apiVersion, subresource
    assert creator[0] == {"manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1",
                          "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}
    assert "f:replicas" not in creator[1]["fieldsV1"]["f:spec"] and "time" in creator[1]
    assert _entries(parent, "scaler") == [{"manager": "scaler", "operation": "Apply", "apiVersion": "apps/v1",
                                           "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
                                           "subresource": "scale"}]


WORKLOADS = [("StatefulSet", "statefulsets", "apps/v1"), ("ReplicaSet", "replicasets", "apps/v1"),
             ("ReplicationController", "replicationcontrollers", "v1")]


def test_apply_scale_of_every_workload(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    for kind, resource, group in WORKLOADS:
        _check_workload(stack, kubectl, namespace, kind, resource, group)


def _check_workload(stack: Stack, kubectl: Kubectl, namespace: str, kind: str, resource: str, group: str) -> None:
    template = {"metadata": {"labels": {"app": "capp"}}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    selector: dict[str, Any] = {"app": "capp"} if kind == "ReplicationController" else {"matchLabels": {"app": "capp"}}
    spec: dict[str, Any] = {"replicas": 1, "selector": selector, "template": template}
    if kind == "StatefulSet":
        spec["serviceName"] = "capp"
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(
        {"apiVersion": group, "kind": kind, "metadata": {"name": "capp"}, "spec": spec}))
    status, scale = _request(stack, "PATCH", _scale_path(namespace, resource, group=group)
                             + "?fieldManager=scaler&force=true", _scale(2))
    assert status == 200, scale
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"]["selector"] == "app=capp"
    parent = _get(kubectl, namespace, resource, "capp")
    assert parent["spec"]["replicas"] == 2
    assert _entries(parent, "scaler") == [{"manager": "scaler", "operation": "Apply", "apiVersion": group,
                                           "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
                                           "subresource": "scale"}]
    assert "f:replicas" not in _entries(parent, "kubectl-create")[0]["fieldsV1"]["f:spec"]


def test_apply_scale_refusals(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    _deployment(kubectl, namespace)
    path = _scale_path(namespace)
    status, body = _request(stack, "PATCH", path, _scale(2))
    # ValidatePatchOptions, before the object is read
    assert (status, body["message"]) == (422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                                              "is required for apply patch"), body
    status, body = _request(stack, "PATCH", _scale_path(namespace, name="nope") + "?fieldManager=s", _scale(2))
    assert (status, body["message"]) == (404, 'deployments.apps "nope" not found')
    status, body = _request(stack, "PATCH", path + "?fieldManager=s", json.dumps(
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "capp"}, "spec": {"replicas": 2}}))
    assert (status, body["message"]) == (400, "invalid object type: apps/v1, Kind=Deployment")
    status, body = _request(stack, "PATCH", path + "?fieldManager=s", json.dumps({"spec": {"replicas": 2}}))
    assert (status, body["message"]) == (400, "invalid object type: /, Kind=")
    status, body = _request(stack, "PATCH", path + "?fieldManager=s&force=true", _scale(-1))
    assert status == 422, body
    assert body["message"] == ('Scale.autoscaling "capp" is invalid: spec.replicas: Invalid value: -1: must be '
                               "greater than or equal to 0")
    status, body = _request(stack, "PATCH", path + "?fieldManager=s&force=true", _scale(2, uid="not-the-uid"))
    assert status == 409, body
    uid = _get(kubectl, namespace, "deployment", "capp")["metadata"]["uid"]
    assert body["message"] == ('Operation cannot be fulfilled on deployments/scale.apps "capp": Precondition failed: '
                               f"UID in precondition: not-the-uid, UID in object meta: {uid}")
    status, body = _request(stack, "PATCH", path + "?fieldManager=s&force=true", _scale(2, resourceVersion="1"))
    assert status == 409, body
    assert body["message"] == ('Operation cannot be fulfilled on deployments.apps "capp": the object has been '
                               "modified; please apply your changes to the latest version and try again")
    # the same precondition on a PUT of the Scale
    status, body = _request(stack, "PUT", path, _scale(2, uid="not-the-uid"), "application/json")
    assert (status, body.get("message")) == (409, 'Operation cannot be fulfilled on deployments/scale.apps "capp": '
                                                  f"Precondition failed: UID in precondition: not-the-uid, UID in "
                                                  f"object meta: {uid}"), body
    # nothing above changed the deployment
    assert _get(kubectl, namespace, "deployment", "capp")["spec"]["replicas"] == 1


def test_apply_scale_is_authorized_on_the_scale_subresource(
        stack: Stack, kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    _deployment(kubectl, namespace)
    kubectl.run("-n", namespace, "create", "role", "deploy-patcher", "--verb=get,patch,update",
                "--resource=deployments")
    kubectl.run("-n", namespace, "create", "rolebinding", "alice-deploy", "--role=deploy-patcher", "--user=alice")
    wait_for(lambda: alice.run("-n", namespace, "auth", "can-i", "patch", "deployments", check=False).returncode == 0)
    path = _scale_path(namespace) + "?fieldManager=scaler&force=true"
    status, body = _request(stack, "PATCH", path, _scale(2), token=TOKENS["alice"])
    assert status == 403, body
    assert body["message"] == (f'deployments.apps "capp" is forbidden: User "alice" cannot patch resource '
                               f'"deployments/scale" in API group "apps" in the namespace "{namespace}"')
    assert _get(kubectl, namespace, "deployment", "capp")["spec"]["replicas"] == 1
    kubectl.run("-n", namespace, "create", "role", "scaler", "--verb=patch", "--resource=deployments/scale")
    kubectl.run("-n", namespace, "create", "rolebinding", "alice-scale", "--role=scaler", "--user=alice")
    wait_for(lambda: alice.run("-n", namespace, "auth", "can-i", "patch", "deployments", "--subresource=scale",
                               check=False).returncode == 0)
    status, body = _request(stack, "PATCH", path, _scale(2), token=TOKENS["alice"])
    assert status == 200, body
    assert body["spec"] == {"replicas": 2}



def test_kubectl_cannot_apply_a_scale_but_the_python_client_can(
        stack: Stack, kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    _deployment(kubectl, namespace)
    manifest = tmp_path / "scale.yaml"
    manifest.write_text(_scale(5))
    # kubectl maps the manifest's kind through discovery before --subresource applies, and Scale is no
    # resource's kind (as against kube-apiserver)
    done = kubectl.run("-n", namespace, "apply", "--server-side", "--subresource=scale", "--field-manager=scaler",
                       "-f", str(manifest), check=False)
    assert done.returncode == 1
    assert done.stderr == (f'error: resource mapping not found for name: "capp" namespace: "" from "{manifest}": '
                           'no matches for kind "Scale" in version "autoscaling/v1"\nensure CRDs are installed '
                           "first\n")
    api = client.AppsV1Api(config.new_client_from_config(config_file=str(stack.kubeconfig)))
    scale = api.patch_namespaced_deployment_scale(
        "capp", namespace, json.loads(_scale(5)), field_manager="scaler", force=True,
        _content_type="application/apply-patch+yaml")
    assert (scale.kind, scale.spec.replicas, scale.status.selector) == ("Scale", 5, "app=capp")
    parent = _get(kubectl, namespace, "deployment", "capp")
    assert parent["spec"]["replicas"] == 5
    assert _entries(parent, "scaler") == [{"manager": "scaler", "operation": "Apply", "apiVersion": "apps/v1",
                                           "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
                                           "subresource": "scale"}]


GROUP = "applyscale.parity.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"gears.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "gears", "singular": "gear", "kind": "Gear", "listKind": "GearList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                               "type": "object", "properties": {"replicas": {"type": "integer"}}}}}},
                           "subresources": {"scale": {"specReplicasPath": ".spec.replicas",
                                                      "statusReplicasPath": ".status.replicas"}}}]},
}


def test_apply_to_a_custom_resource_scale_fails_as_in_kube(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=json.dumps(CRD))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/gears.{GROUP}", "--timeout=30s")
        path = f"/apis/{GROUP}/v1/namespaces/{namespace}/gears"
        gear = {"apiVersion": f"{GROUP}/v1", "kind": "Gear", "metadata": {"name": "capp"}, "spec": {"replicas": 1}}
        wait_for(lambda: _request(stack, "POST", path, json.dumps(gear), "application/json")[0] == 201)
        status, body = _request(stack, "PATCH", f"{path}/nope/scale?fieldManager=scaler", _scale(2))
        assert (status, body["message"]) == (404, f'gears.{GROUP} "nope" not found')
        status, body = _request(stack, "PATCH", f"{path}/capp/scale?fieldManager=scaler", json.dumps(gear))
        assert (status, body["message"]) == (400, f"invalid object type: {GROUP}/v1, Kind=Gear")
        # kube's scale scope types the Scale with the CRD's type converter, which lacks it (kubernetes#116311)
        status, body = _request(stack, "PATCH", f"{path}/capp/scale?fieldManager=scaler&force=true", _scale(2))
        assert status == 400, body  # kube: the same message as a 500 without reason
        assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                        "message": "failed to create typed patch object (/capp; autoscaling/v1, Kind=Scale): no "
                                   "corresponding type for autoscaling/v1, Kind=Scale", "reason": "BadRequest",
                        "code": 400}
        status, got = _request(stack, "GET", f"{path}/capp", content_type="application/json")
        assert got["spec"] == {"replicas": 1}
    finally:
        kubectl.run("delete", "crd", f"gears.{GROUP}", "--wait=false", check=False)


def test_kubectl_scale_owns_the_replicas_without_time(kubectl: Kubectl, namespace: str) -> None:
    _deployment(kubectl, namespace)
    assert kubectl.run("-n", namespace, "scale", "deployment", "capp", "--replicas=3").stdout == (
        "deployment.apps/capp scaled\n")
    parent = _get(kubectl, namespace, "deployment", "capp")
    assert parent["spec"]["replicas"] == 3
    # an Update through the Scale's field manager; ToParent gives the new entry no time
    assert _entries(parent, "kubectl") == [{"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1",
                                            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
                                            "subresource": "scale"}]
    creator = _entries(parent, "kubectl-create")
    assert len(creator) == 1 and "f:replicas" not in creator[0]["fieldsV1"]["f:spec"] and "time" in creator[0]
    # again: the Scale's Update entry (identified at autoscaling/v1) never matches the parent's, so the entry is
    # taken and written anew, still without time
    kubectl.run("-n", namespace, "scale", "deployment", "capp", "--replicas=4")
    assert _entries(_get(kubectl, namespace, "deployment", "capp"), "kubectl") == _entries(parent, "kubectl")
