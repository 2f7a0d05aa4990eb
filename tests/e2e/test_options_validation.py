"""DeleteOptions and PatchOptions validated as kube-apiserver 1.37 does, and a patch that renames or moves an object
(handlers/delete.go, patch.go: ValidateDeleteOptions, ValidatePatchOptions, patcher.applyPatch's
EnsureObjectNamespaceMatchesRequestNamespace and checkName). A refused DELETE deletes nothing."""

from __future__ import annotations

import http.client
import json
import ssl
from typing import Any
from urllib.parse import urlparse

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

BOTH_SET = 'Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set'


def _request(stack: Stack, method: str, path: str, body: Any = None,
             content_type: str = "application/json") -> tuple[int, dict[str, Any]]:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=30)
    try:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        conn.request(method, path, body=data, headers={"Content-Type": content_type} if data is not None else {})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def _invalid(kind: str, field: str, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'{kind}.meta.k8s.io "" is invalid: {field}: {message}', "reason": "Invalid",
            "details": {"group": "meta.k8s.io", "kind": kind,
                        "causes": [{"reason": reason, "message": message, "field": field}]}, "code": 422}


def _bad_request(message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "BadRequest", "code": 400}


def test_delete_with_orphan_dependents_and_propagation_policy_deletes_nothing(stack: Stack, kubectl: Kubectl,
                                                                              namespace: str):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for name in ("a", "b"):
        kubectl.run("-n", namespace, "create", "configmap", name)
    refused = _invalid("DeleteOptions", "propagationPolicy", "FieldValueInvalid", BOTH_SET)
    both = {"orphanDependents": False, "propagationPolicy": "Background"}
    assert _request(stack, "DELETE", f"{base}/a", both) == (422, refused)
    assert _request(stack, "DELETE", f"{base}/a?orphanDependents=true&propagationPolicy=Background") == (422, refused)
    assert _request(stack, "DELETE", base, both) == (422, refused)
    assert _request(stack, "DELETE", f"{base}?orphanDependents=1&propagationPolicy=Background") == (422, refused)
    status, listed = _request(stack, "GET", base)
    # (the root-ca-cert-publisher's kube-root-ca.crt may be there too)
    names = [i["metadata"]["name"] for i in listed["items"] if i["metadata"]["name"] != "kube-root-ca.crt"]
    assert status == 200 and names == ["a", "b"]
    # a pod eviction's deleteOptions are DeleteOptions too (rest.BeforeDelete validates them)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "x"}]}}
    assert _request(stack, "POST", f"/api/v1/namespaces/{namespace}/pods", pod)[0] == 201
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "p"}, "deleteOptions": both}
    assert _request(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/p/eviction", eviction) == (422, refused)
    assert _request(stack, "GET", f"/api/v1/namespaces/{namespace}/pods/p")[0] == 200


def test_delete_options_values(stack: Stack, kubectl: Kubectl, namespace: str):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    kubectl.run("-n", namespace, "create", "configmap", "keep")
    assert _request(stack, "DELETE", f"{base}/keep?dryRun=x") == (422, _invalid(
        "DeleteOptions", "dryRun", "FieldValueNotSupported",
        'Unsupported value: []string{"x"}: supported values: "All"'))
    assert _request(stack, "DELETE", f"{base}/keep", {"propagationPolicy": "Sideways"}) == (422, _invalid(
        "DeleteOptions", "propagationPolicy", "FieldValueNotSupported",
        'Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"'))
    assert _request(stack, "GET", f"{base}/keep")[0] == 200
    # with a body, kube reads no DeleteOptions from the query
    status, reply = _request(stack, "DELETE", f"{base}/keep?orphanDependents=true", {"propagationPolicy": "Background"})
    assert status == 200 and reply["status"] == "Success", reply
    assert _request(stack, "GET", f"{base}/keep")[0] == 404


def test_patch_options_are_validated_before_the_patch(stack: Stack, kubectl: Kubectl, namespace: str):
    path = f"/api/v1/namespaces/{namespace}/configmaps/cm"
    kubectl.run("-n", namespace, "create", "configmap", "cm", "--from-literal=k=v")
    merge = "application/merge-patch+json"
    assert _request(stack, "PATCH", f"{path}?force=true", {"data": {"k": "w"}}, merge) == (422, _invalid(
        "PatchOptions", "force", "FieldValueForbidden", "Forbidden: may not be specified for non-apply patch"))
    apply = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "w"}})
    assert _request(stack, "PATCH", path, apply.encode(), "application/apply-patch+yaml") == (422, _invalid(
        "PatchOptions", "fieldManager", "FieldValueRequired", "Required value: is required for apply patch"))
    assert _request(stack, "PATCH", f"{path}?fieldManager=me&dryRun=x", apply.encode(),
                    "application/apply-patch+yaml") == (422, _invalid(
                        "PatchOptions", "dryRun", "FieldValueNotSupported",
                        'Unsupported value: []string{"x"}: supported values: "All"'))
    status, cm = _request(stack, "GET", path)
    assert status == 200 and cm["data"] == {"k": "v"}


def test_a_patch_may_not_rename_or_move_the_object(stack: Stack, kubectl: Kubectl, namespace: str):
    path = f"/api/v1/namespaces/{namespace}/configmaps/p4"
    kubectl.run("-n", namespace, "create", "configmap", "p4")
    merge, json_patch = "application/merge-patch+json", "application/json-patch+json"
    renamed = _bad_request("the name of the object (p9) does not match the name on the URL (p4)")
    moved = _bad_request("the namespace of the provided object does not match the namespace sent on the request")
    assert _request(stack, "PATCH", path, {"metadata": {"name": "p9"}}, merge) == (400, renamed)
    assert _request(stack, "PATCH", path, [{"op": "replace", "path": "/metadata/name", "value": "p9"}],
                    json_patch) == (400, renamed)
    assert _request(stack, "PATCH", path, {"metadata": {"namespace": "elsewhere"}},
                    "application/strategic-merge-patch+json") == (400, moved)
    # a namespace patched away is the request's again
    status, cm = _request(stack, "PATCH", path, {"metadata": {"namespace": None, "labels": {"a": "b"}}}, merge)
    assert status == 200 and cm["metadata"]["namespace"] == namespace and cm["metadata"]["labels"] == {"a": "b"}
    # a cluster-scoped object's namespace is dropped
    name = f"{namespace}-role"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name}}
    assert _request(stack, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)[0] == 201
    try:
        status, patched = _request(stack, "PATCH", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}",
                                   {"metadata": {"namespace": "x", "labels": {"a": "b"}}}, merge)
        assert status == 200 and "namespace" not in patched["metadata"] and patched["metadata"]["labels"] == {"a": "b"}
    finally:
        _request(stack, "DELETE", f"/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}")
