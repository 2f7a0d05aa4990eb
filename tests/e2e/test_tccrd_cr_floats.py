"""Custom resource floats come back as kube writes them (Go's encoding/json float64 form), whatever text the client
sent: ``1.0`` is ``1``, ``0.000005`` stays ``0.000005``, ``1e20`` is ``100000000000000000000``. Found replaying kube's
test/cmd/crd.sh (custom resource printing) with numbers a non-Go client writes."""

from __future__ import annotations

import json
import tempfile

from tests.e2e.conftest import Kubectl, wait_for

GROUP = "tccrd-floats.example.com"


def test_custom_resource_floats_are_written_as_go_writes_them(kubectl: Kubectl, namespace: str) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"nums.{GROUP}"},
           "spec": {"group": GROUP, "scope": "Namespaced", "names": {"plural": "nums", "kind": "Num"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kubectl.run("apply", "-f", "-", input=json.dumps(crd))
    spec_text = ('"spec":{"whole":1.0,"small":0.000005,"tiny":1e-7,"huge":1e20,"big":12345678901234567890,'
                 '"half":2.50,"text":"1.0,"}')
    body = f'{{"apiVersion":"{GROUP}/v1","kind":"Num","metadata":{{"name":"n"}},{spec_text}}}'
    path = f"/apis/{GROUP}/v1/namespaces/{namespace}/nums"
    with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
        f.write(body)
        f.flush()
        created = wait_for(lambda: kubectl.run("create", "--raw", path, "-f", f.name).stdout)
    spec = ('"spec":{"big":12345678901234567000,"half":2.5,"huge":100000000000000000000,"small":0.000005,'
            '"text":"1.0,","tiny":1e-7,"whole":1}')
    assert spec in created
    assert spec in kubectl.run("get", "--raw", f"{path}/n").stdout
    assert spec in kubectl.run("get", "--raw", path).stdout
    kubectl.run("delete", "crd", f"nums.{GROUP}")
