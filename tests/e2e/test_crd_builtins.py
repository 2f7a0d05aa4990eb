"""Custom resources get what built-ins get (issue 11): quota, garbage collection, admission policy, RBAC, scale,
strategic-merge refusal, watch from a resourceVersion with field selectors, namespace deletion; CRD validation."""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.e2e.conftest import Kubectl, wait_for

GROUP = "parity.example.com"
CRD = f"gizmos.{GROUP}"


def gizmo_crd(**version: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": CRD},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                 "versions": [{
                     "name": "v1", "served": True, "storage": True,
                     "selectableFields": [{"jsonPath": ".spec.color"}],
                     "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                              "statusReplicasPath": ".status.replicas",
                                                              "labelSelectorPath": ".status.selector"}},
                     "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                         "spec": {"type": "object", "properties": {"color": {"type": "string"},
                                                                   "replicas": {"type": "integer"}}},
                         "status": {"type": "object", "properties": {"replicas": {"type": "integer"},
                                                                     "selector": {"type": "string"}}}}}},
                     **version}]}}


def gizmo(name: str, namespace: str, color: str = "red", replicas: int = 1, owner: dict[str, Any] | None = None
          ) -> str:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    return yaml.safe_dump({"apiVersion": f"{GROUP}/v1", "kind": "Gizmo", "metadata": meta,
                           "spec": {"color": color, "replicas": replicas}})


def get(kubectl: Kubectl, *args: str) -> Any:
    return json.loads(kubectl.run("get", *args, "-o", "json").stdout)


def exists(kubectl: Kubectl, *args: str) -> bool:
    return kubectl.run("get", *args, check=False).returncode == 0


def owner_ref(obj: dict[str, Any], block: bool = False) -> dict[str, Any]:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "blockOwnerDeletion": block}


def test_custom_resources_get_what_builtins_get(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    ns = ["-n", namespace]
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(gizmo_crd()))
    kubectl.run("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=20s")
    wait_for(lambda: kubectl.run("get", "gizmos", *ns))
    try:
        # ResourceQuota count/<plural>.<group>: counted, and the third create refused with kube's 403.
        kubectl.run("create", "quota", "gizmos", "--hard=count/gizmos.parity.example.com=3", *ns)
        kubectl.run("apply", "-f", "-", input=gizmo("red-1", namespace))
        kubectl.run("apply", "-f", "-", input=gizmo("blue-1", namespace, "blue"))
        wait_for(lambda: get(kubectl, "quota", "gizmos", *ns).get("status", {}).get("used") ==
                 {"count/gizmos.parity.example.com": "2"})
        kubectl.run("create", "configmap", "owner", *ns)
        owner = get(kubectl, "configmap", "owner", *ns)
        kubectl.run("apply", "-f", "-", input=gizmo("owned", namespace, owner=owner_ref(owner)))
        refused = kubectl.run("apply", "-f", "-", input=gizmo("red-2", namespace), check=False)
        assert ('gizmos.parity.example.com "red-2" is forbidden: exceeded quota: gizmos, requested: '
                "count/gizmos.parity.example.com=1, used: count/gizmos.parity.example.com=3, limited: "
                "count/gizmos.parity.example.com=3") in refused.stderr

        # Garbage collection, background: the owner ConfigMap goes, so does its Gizmo (and the quota frees up).
        kubectl.run("delete", "configmap", "owner", *ns)
        wait_for(lambda: not exists(kubectl, "gizmo", "owned", *ns), timeout=20)
        wait_for(lambda: get(kubectl, "quota", "gizmos", *ns)["status"]["used"] ==
                 {"count/gizmos.parity.example.com": "2"})
        # Foreground: a Gizmo owner waits for its blocking ConfigMap dependent to go first.
        kubectl.run("create", "configmap", "dependent", *ns)
        kubectl.run("patch", "configmap", "dependent", *ns, "--type=merge", "-p", json.dumps(
            {"metadata": {"ownerReferences": [owner_ref(get(kubectl, "gizmo", "blue-1", *ns), block=True)]}}))
        kubectl.run("delete", "gizmo", "blue-1", *ns, "--cascade=foreground", "--timeout=20s")
        assert not exists(kubectl, "configmap", "dependent", *ns)

        # RBAC: alice is refused until a Role grants her the custom resource.
        denied = alice.run("get", "gizmos", *ns, check=False)
        assert (f'gizmos.parity.example.com is forbidden: User "alice" cannot list resource "gizmos" in API group '
                f'"{GROUP}" in the namespace "{namespace}"') in denied.stderr
        kubectl.run("create", "role", "gizmo-reader", "--verb=get,list", f"--resource=gizmos.{GROUP}", *ns)
        kubectl.run("create", "rolebinding", "alice-gizmos", "--role=gizmo-reader", "--user=alice", *ns)
        wait_for(lambda: alice.run("get", "gizmos", *ns, "-o", "name").stdout.split() ==
                 [f"gizmo.{GROUP}/red-1"])

        # A ValidatingAdmissionPolicy applies to the custom resource.
        policy = f"gizmo-replicas-{namespace}"[:60]
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump_all([
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
             "metadata": {"name": policy},
             "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [
                 {"apiGroups": [GROUP], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                  "resources": ["gizmos"]}]},
                 "validations": [{"expression": "object.spec.replicas <= 5", "message": "at most 5 replicas"}]}},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
             "metadata": {"name": policy + "-b"},
             "spec": {"policyName": policy, "validationActions": ["Deny"], "matchResources": {
                 "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}}}]))
        try:
            expected = (f"ValidatingAdmissionPolicy '{policy}' with binding '{policy}-b' denied request: at most 5 "
                        "replicas")
            wait_for(lambda: expected in kubectl.run("apply", "-f", "-", input=gizmo("big", namespace, replicas=9),
                                                     check=False).stderr)
        finally:
            kubectl.run("delete", "validatingadmissionpolicybinding", policy + "-b")
            kubectl.run("delete", "validatingadmissionpolicy", policy)

        # Scale: kubectl scale writes specReplicasPath; the Scale reports statusReplicasPath and labelSelectorPath.
        kubectl.run("patch", "gizmo", "red-1", *ns, "--subresource=status", "--type=merge",
                    "-p", '{"status":{"replicas":1,"selector":"app=red"}}')
        kubectl.run("scale", "gizmo", "red-1", *ns, "--replicas=4")
        scale = json.loads(kubectl.run("get", "--raw", f"/apis/{GROUP}/v1/namespaces/{namespace}/gizmos/red-1/scale")
                           .stdout)
        assert (scale["kind"], scale["spec"], scale["status"]) == ("Scale", {"replicas": 4},
                                                                   {"replicas": 1, "selector": "app=red"})

        # Strategic merge patch is refused (415) as on kube-apiserver.
        smp = kubectl.run("patch", "gizmo", "red-1", *ns, "--type=strategic", "-p", '{"spec":{"replicas":2}}',
                          check=False)
        assert ("the body of the request was in an unknown format - accepted media types include: "
                "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
                ) in smp.stderr

        # Watch from a resourceVersion with a field selector on a selectable field: only later red changes.
        collection = f"/apis/{GROUP}/v1/namespaces/{namespace}/gizmos"
        since = json.loads(kubectl.run("get", "--raw", collection).stdout)["metadata"]["resourceVersion"]
        kubectl.run("apply", "-f", "-", input=gizmo("blue-2", namespace, "blue"))
        kubectl.run("patch", "gizmo", "red-1", *ns, "--type=merge", "-p", '{"spec":{"replicas":5}}')
        watched = kubectl.run("get", "--raw", f"{collection}?watch=true&resourceVersion={since}"
                              "&fieldSelector=spec.color%3Dred&timeoutSeconds=1").stdout
        events = [json.loads(line) for line in watched.splitlines() if line]
        assert [(e["type"], e["object"]["metadata"]["name"], e["object"]["spec"]["replicas"]) for e in events] == [
            ("MODIFIED", "red-1", 5)]

        # Deleting the namespace deletes its custom resources.
        kubectl.run("delete", "namespace", namespace, "--wait=false")
        wait_for(lambda: not kubectl.run("get", "gizmos", "-A", "-o", "name").stdout.strip(), timeout=30)
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")


def test_crd_validation_errors(kubectl: Kubectl) -> None:
    def refused(crd: dict[str, Any]) -> str:
        proc = kubectl.run("apply", "-f", "-", input=yaml.safe_dump(crd), check=False)
        assert proc.returncode == 1
        return proc.stderr

    bad = gizmo_crd()
    bad["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "http://conv.example.com/convert"}, "conversionReviewVersions": ["v2"]}}
    stderr = refused(bad)
    assert f'The CustomResourceDefinition "{CRD}" is invalid:' in stderr
    assert ("spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL "
            "scheme; desired format: https://host[/path]") in stderr
    assert ('spec.conversion.conversionReviewVersions: Invalid value: ["v2"]: must include at least one of v1, '
            "v1beta1") in stderr
    stderr = refused(gizmo_crd(selectableFields=[{"jsonPath": ".spec.replicas"}, {"jsonPath": ".spec.replicas"},
                                                 {"jsonPath": ".spec"}],
                               subresources={"scale": {"specReplicasPath": ".status.replicas",
                                                       "statusReplicasPath": ".status.replicas"}}))
    assert 'spec.selectableFields[1].jsonPath: Duplicate value: ".spec.replicas"' in stderr
    assert ('spec.selectableFields[2].jsonPath: Invalid value: ".spec": must point to a field of type string, '
            "boolean or integer") in stderr
    assert ('spec.subresources.scale.specReplicasPath: Invalid value: ".status.replicas": should be a json path '
            "under .spec") in stderr
    assert not exists(kubectl, "crd", CRD)
