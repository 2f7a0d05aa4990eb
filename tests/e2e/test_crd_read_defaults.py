"""A CRD's schema defaults apply when custom resources are read, not only on writes (services/gateway/crddefaults.py).

"Extend the Kubernetes API with CustomResourceDefinitions" > "Defaulting": defaults apply "when reading from
etcd". A GatewayClass-like status default shows although the status subresource drops status on create, and a
default added to the CRD later shows on the next GET without any write.
"""

from __future__ import annotations

import json

import yaml

from tests.e2e.conftest import Kubectl, wait_for

GROUP = "readdefaults.example.com"
CRD = f"gizmoclasses.{GROUP}"
STATUS_DEFAULT = {"conditions": [{"type": "Accepted", "status": "Unknown", "reason": "Pending",
                                  "message": "Waiting for controller", "lastTransitionTime": "1970-01-01T00:00:00Z"}]}
CONDITION = {"type": "object", "properties": {k: {"type": "string"} for k in STATUS_DEFAULT["conditions"][0]}}


def manifest() -> str:
    return yaml.safe_dump({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": CRD},
        "spec": {"group": GROUP, "scope": "Cluster",
                 "names": {"plural": "gizmoclasses", "singular": "gizmoclass", "kind": "GizmoClass"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                               "additionalPrinterColumns": [
                                   {"name": "Accepted", "type": "string",
                                    "jsonPath": '.status.conditions[?(@.type=="Accepted")].status'}],
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                   "spec": {"type": "object", "properties": {"controllerName": {"type": "string"}}},
                                   "status": {"type": "object", "default": STATUS_DEFAULT, "properties": {
                                       "conditions": {"type": "array", "items": CONDITION}}}}}}}]}})


def test_crd_defaults_apply_on_read(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", "-", input=manifest())
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=30s")
        cr = {"apiVersion": f"{GROUP}/v1", "kind": "GizmoClass", "metadata": {"name": "g1"},
              "spec": {"controllerName": "example.com/gizmo"}}
        wait_for(lambda: kubectl.run("create", "-f", "-", input=json.dumps(cr)))
        got = json.loads(kubectl.run("get", "gizmoclass", "g1", "-o", "json").stdout)
        assert got["status"] == STATUS_DEFAULT
        assert got["spec"] == {"controllerName": "example.com/gizmo"}
        table = kubectl.run("get", "gizmoclasses").stdout.split("\n")
        assert table[0].split() == ["NAME", "ACCEPTED"] and table[1].split()[:2] == ["g1", "Unknown"]
        rv = got["metadata"]["resourceVersion"]
        patch = [{"op": "add", "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/tier",
                  "value": {"type": "string", "default": "gold"}}]
        kubectl.run("patch", "crd", CRD, "--type=json", "-p", json.dumps(patch))

        def tier() -> str | None:  # every gateway learns the new schema through its CRD informer
            obj = json.loads(kubectl.run("get", "gizmoclass", "g1", "-o", "json").stdout)
            return obj["spec"].get("tier") if all(
                json.loads(kubectl.run("get", "gizmoclasses", "-o", "json").stdout)["items"][0]["spec"].get("tier")
                for _ in range(2)) else None
        assert wait_for(tier) == "gold"
        again = json.loads(kubectl.run("get", "gizmoclass", "g1", "-o", "json").stdout)
        assert again["metadata"]["resourceVersion"] == rv  # no write happened
        assert again["spec"] == {"controllerName": "example.com/gizmo", "tier": "gold"}
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")
