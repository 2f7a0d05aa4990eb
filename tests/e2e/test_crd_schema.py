"""A CRD's own openAPIV3Schema through kubectl apply: non-structural schemas and uncompilable CEL rules are 422."""

from __future__ import annotations

from typing import Any

import yaml

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
