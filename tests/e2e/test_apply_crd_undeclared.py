"""Server-side apply of a custom resource with a field its CRD schema does not declare is refused, as kube's
structuredmerge ObjectToTyped does (kube's message, as a 400: kube writes a 500 without reason); what
x-kubernetes-preserve-unknown-fields keeps is declared."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_hostile_input import send

GROUP = "undeclared.ssa.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"gadgets.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "size": {"type": "integer"},
                     "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}}}]},
}


def test_an_undeclared_field_refuses_the_apply(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=json.dumps(CRD))
    kubectl.run("wait", "--for=condition=Established", f"crd/gadgets.{GROUP}", "--timeout=30s")
    try:
        path = f"/apis/{GROUP}/v1/namespaces/{namespace}/gadgets/g1?fieldManager=me"
        body = {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": "g1"},
                "spec": {"size": 1, "colour": "red", "extra": {"anything": {"goes": 1}}}}
        reply = send(stack, "PATCH", path, json.dumps(body), {"Content-Type": "application/apply-patch+yaml"})
        assert reply.status == 400, reply.body  # kube's message (structuredmerge.go); kube: a 500 without reason
        assert reply.json["message"] == (f"failed to create typed patch object (/g1; {GROUP}/v1, Kind=Gadget): "
                                         ".spec.colour: field not declared in schema")
        del body["spec"]["colour"]
        reply = send(stack, "PATCH", path, json.dumps(body), {"Content-Type": "application/apply-patch+yaml"})
        assert reply.status == 201, reply.body
        assert reply.json["spec"]["extra"] == {"anything": {"goes": 1}}
    finally:
        kubectl.run("delete", "crd", f"gadgets.{GROUP}", "--wait=false")
