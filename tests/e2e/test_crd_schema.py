"""A CRD's own openAPIV3Schema through kubectl apply: non-structural schemas and uncompilable CEL rules are 422."""

from __future__ import annotations

import http.client
import json
import ssl
from typing import Any
from urllib.parse import urlparse

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

CRD = "sprockets.schema.example.com"


def sprocket_crd(spec_schema: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": CRD},
            "spec": {"group": "schema.example.com", "scope": "Namespaced",
                     "names": {"plural": "sprockets", "singular": "sprocket", "kind": "Sprocket"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec_schema}}}}]}}


def test_non_structural_crd_is_refused(kubectl: Kubectl) -> None:
    def refused(spec_schema: dict[str, Any]) -> str:
        proc = kubectl.run("apply", "-f", "-", input=yaml.safe_dump(sprocket_crd(spec_schema)), check=False)
        assert proc.returncode == 1, proc.stdout
        assert f'The CustomResourceDefinition "{CRD}" is invalid' in proc.stderr
        return proc.stderr

    stderr = refused({"properties": {"teeth": {"type": "integer", "default": "many"}},
                      "additionalProperties": {"type": "string"}})
    assert ("spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for "
            "specified object fields") in stderr
    assert ("spec.validation.openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties "
            "and properties are mutual exclusive") in stderr
    stderr = refused({"type": "object", "properties": {"teeth": {"type": "integer"}},
                      "x-kubernetes-validations": [{"rule": "self.teth > 3"}]})
    assert ("spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: "
            'apiextensions.ValidationRule{Rule:"self.teth > 3"') in stderr
    assert "compilation failed: ERROR: <input>:1:5: undefined field 'teth'" in stderr
    assert kubectl.run("get", "crd", CRD, check=False).returncode == 1  # nothing was created
    fixed = sprocket_crd({"type": "object", "properties": {"teeth": {"type": "integer", "default": 12}},
                          "x-kubernetes-validations": [{"rule": "self.teeth > 3"}]})
    try:
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump(fixed))
        kubectl.run("label", "crd", CRD, "checked=yes")  # an update that keeps the schema
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")


def _send(stack: Stack, method: str, path: str, body: str, content_type: str = "application/json") -> tuple[int, Any]:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=60)
    try:
        conn.request(method, path, body=body.encode(), headers={"Content-Type": content_type,
                                                                "Accept": "application/json"})
        response = conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}
    finally:
        conn.close()


def test_rule_errors_and_huge_numbers(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    """A rule that fails to evaluate (division by zero, overflow) and an integer beyond int64 are 422 field
    errors, YAML .inf is 400, and a number beyond int64 kept by preserve-unknown-fields is a float: never a 500."""
    crd = sprocket_crd({"type": "object", "x-kubernetes-validations": [{"rule": "self.a / self.b > 0"}],
                        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"},
                                       "replicas": {"type": "integer"},
                                       "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}})
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.extra.n"}]
    base = f"/apis/schema.example.com/v1/namespaces/{namespace}/sprockets"
    try:
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump(crd))
        kubectl.run("wait", "--for=condition=established", f"crd/{CRD}", "--timeout=30s")

        def create(spec: str, query: str = "", name: str = "w") -> tuple[int, Any]:
            return _send(stack, "POST", base + query, '{"apiVersion": "schema.example.com/v1", "kind": "Sprocket", '
                         f'"metadata": {{"name": "{name}"}}, "spec": {spec}}}')

        invalid = 'Sprocket.schema.example.com "w" is invalid: '
        for query in ("", "?dryRun=All"):
            status, reply = create('{"a": 1, "b": 0}', query)
            assert status == 422, reply
            assert reply["message"] == invalid + ('spec: Invalid value: "object": division by zero evaluating rule: '
                                                  "self.a / self.b > 0")
            assert reply["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec", "message":
                                                   'Invalid value: "object": division by zero evaluating rule: '
                                                   "self.a / self.b > 0"}]
        status, reply = create('{"a": -9223372036854775808, "b": -1}')
        assert status == 422 and reply["message"] == invalid + (
            'spec: Invalid value: "object": integer overflow evaluating rule: self.a / self.b > 0'), reply
        status, reply = create('{"a": 1, "b": 1, "replicas": 99999999999999999999999}')
        # a type error blocks the CEL rules (kube's hasBlockingErr): one fieldless cause says so
        assert status == 422 and reply["message"] == invalid + (
            '[spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number", '
            "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
            "correct the existing errors to complete validation]"), reply
        assert [c["reason"] for c in reply["details"]["causes"]] == ["FieldValueTypeInvalid", "FieldValueInvalid"]

        status, reply = create('{"a": 1, "b": 1}')
        assert status == 201, reply
        status, reply = _send(stack, "PATCH", f"{base}/w", '{"spec": {"b": 0}}', "application/merge-patch+json")
        assert status == 422 and "division by zero evaluating rule: self.a / self.b > 0" in reply["message"], reply

        manifest = ("apiVersion: schema.example.com/v1\nkind: Sprocket\nmetadata: {name: big}\n"
                    "spec: {a: 1, b: 1, extra: {n: 99999999999999999999999}}\n")
        status, reply = _send(stack, "POST", base, manifest, "application/yaml")
        assert status == 201, reply
        assert reply["spec"]["extra"]["n"] == 1e23
        status, reply = _send(stack, "POST", base, manifest.replace("99999999999999999999999", ".inf")
                              .replace("name: big", "name: inf"), "application/yaml")
        assert status == 400, reply
        assert "error converting YAML to JSON: json: unsupported value: +Inf" in reply["message"], reply
        table = kubectl.run("get", CRD, "-n", namespace).stdout
        assert "big" in table and "-9223372036854775808" in table
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")
