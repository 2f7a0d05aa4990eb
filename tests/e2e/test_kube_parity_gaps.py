"""kube-apiserver 1.37's answers for rules docs/kube-parity.md listed as gaps (issue 17), through kubectl.

- Pod applyAppArmorVersionSkew: a deprecated ``container.apparmor.security.beta.kubernetes.io/<container>``
  annotation becomes the container's ``securityContext.appArmorProfile`` on create, with kube's deprecation
  warning ahead of WarningsOnCreate's.
"""

from __future__ import annotations

import json

import pytest

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

APPARMOR = "container.apparmor.security.beta.kubernetes.io/"


def test_pod_apparmor_annotation_becomes_the_field_with_a_warning(kubectl: Kubectl, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "armored", "annotations": {APPARMOR + "c": "localhost/custom",
                                                           APPARMOR + "d": "runtime/default"}},
           "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
                    "containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "nginx"}]}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod))
    assert proc.stderr.splitlines() == [
        f'Warning: metadata.annotations[{APPARMOR}c]: deprecated since v1.30; use the "appArmorProfile" field '
        "instead"], proc.stderr
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "armored", "-o", "json").stdout)
    containers = stored["spec"]["containers"]
    assert containers[0]["securityContext"] == {"appArmorProfile": {"type": "Localhost",
                                                                    "localhostProfile": "custom"}}
    assert "securityContext" not in containers[1]  # the Pod's profile already says runtime/default
    assert stored["metadata"]["annotations"] == pod["metadata"]["annotations"]


def test_services_support_deletecollection_and_release_their_ips(kubectl: Kubectl, namespace: str) -> None:
    """kube 1.37 serves deletecollection on services (its OpenAPI's deleteCoreV1CollectionNamespacedService);
    each Service goes through the registry's delete, so its IPAddress goes too."""
    resources = json.loads(kubectl.run("get", "--raw", "/api/v1").stdout)["resources"]
    assert "deletecollection" in next(r for r in resources if r["name"] == "services")["verbs"]
    for name in ("a", "b"):
        kubectl.run("-n", namespace, "create", "service", "clusterip", name, "--tcp=80:80")
        kubectl.run("-n", namespace, "label", "service", name, "tier=gone")
    ips = [kubectl.run("-n", namespace, "get", "svc", n, "-o", "jsonpath={.spec.clusterIP}").stdout
           for n in ("a", "b")]
    deleted = json.loads(kubectl.run("delete", "--raw",
                                     f"/api/v1/namespaces/{namespace}/services?labelSelector=tier%3Dgone").stdout)
    assert deleted["kind"] == "ServiceList" and sorted(i["metadata"]["name"] for i in deleted["items"]) == ["a", "b"]
    assert kubectl.run("-n", namespace, "get", "svc", "-o", "name").stdout == ""
    for ip in ips:
        proc = kubectl.run("get", "ipaddress", ip, check=False)
        assert proc.returncode != 0 and "NotFound" in proc.stderr, proc.stderr


def test_duplicate_owner_references_are_dropped_with_kubes_warning(kubectl: Kubectl, namespace: str) -> None:
    """dedupOwnerReferencesAndAddWarning: a create keeps one of each, and kubectl prints kube's warning; a patch
    that duplicates one gets the "after mutating admission" wording (a PATCH is deduplicated only then)."""
    kubectl.run("-n", namespace, "create", "configmap", "owner")  # a live owner, or the garbage collector acts
    uid = kubectl.run("-n", namespace, "get", "cm", "owner", "-o", "jsonpath={.metadata.uid}").stdout
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": "owned", "ownerReferences": [owner, owner]}, "data": {"a": "1"}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(cm))
    tail = ("; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please "
            f"fix your requests; duplicate UID(s) observed: {owner['uid']}")
    assert proc.stderr.splitlines() == [f"Warning: .metadata.ownerReferences contains duplicate entries{tail}"]
    stored = json.loads(kubectl.run("-n", namespace, "get", "cm", "owned", "-o", "json").stdout)
    assert stored["metadata"]["ownerReferences"] == [owner]
    proc = kubectl.run("-n", namespace, "patch", "cm", "owned", "--type=json", "-p",
                       json.dumps([{"op": "add", "path": "/metadata/ownerReferences/-", "value": owner}]))
    assert proc.stderr.splitlines() == [
        f"Warning: .metadata.ownerReferences contains duplicate entries after mutating admission happens{tail}"]


def test_field_manager_must_be_printable_and_short(stack: Stack, namespace: str) -> None:
    """ValidateFieldManager in the handlers' options check: 422 on CreateOptions/PatchOptions, before anything."""
    import ssl
    import urllib.error
    import urllib.request

    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    base = f"{stack.url}/api/v1/namespaces/{namespace}/configmaps"
    cases = [("POST", base + "?fieldManager=a%0Ab", "CreateOptions",
              'fieldManager: Invalid value: "a\\nb": invalid character U+000A (at position 1)'),
             ("POST", base + "?fieldManager=" + "m" * 129, "CreateOptions",
              "fieldManager: Too long: may not be more than 128 bytes"),
             ("PATCH", base + "/absent?fieldManager=x%7F", "PatchOptions",
              'fieldManager: Invalid value: "x\\x7f": invalid character U+007F (at position 1)')]
    for method, url, kind, detail in cases:
        request = urllib.request.Request(url, method=method, data=b'{"metadata": {"name": "fm"}}',
                                         headers={"Content-Type": "application/merge-patch+json" if method == "PATCH"
                                                  else "application/json"})
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, context=context, timeout=30)
        status = json.loads(info.value.read())
        assert (info.value.code, status["message"]) == (422, f'{kind}.meta.k8s.io "" is invalid: {detail}'), status
