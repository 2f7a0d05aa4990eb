"""``kubectl explain`` and ``/openapi/v3`` of a custom resource: apiVersion, kind and metadata as kube documents them.

apiextensions-apiserver's OpenAPI builder (pkg/controller/openapi/builder: addTypeMetaProperties, buildKubeNative,
buildListSchema, addEmbeddedProperties) gives a CRD's kind TypeMeta's apiVersion and kind descriptions and
PartialObjectMetadata's metadata one, its list ``items`` "List of <plural>. ..." and ListMeta's "Standard list
metadata. ...", and each ``x-kubernetes-embedded-resource`` object apiVersion, kind (required) and metadata.
"""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl, wait_for

GROUP = "crdoapi.example.com"
CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
API_VERSION = ("APIVersion defines the versioned schema of this representation of an object. Servers should convert "
               "recognized schemas to the latest internal value, and may reject unrecognized values. More info: "
               f"{CONVENTIONS}#resources")
KIND = ("Kind is a string value representing the REST resource this object represents. Servers may infer this from "
        "the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: "
        f"{CONVENTIONS}#types-kinds")
METADATA = f"Standard object's metadata. More info: {CONVENTIONS}#metadata"
LIST_METADATA = f"Standard list metadata. More info: {CONVENTIONS}#types-kinds"
EMBEDDED_API_VERSION = ("apiVersion defines the versioned schema of this representation of an object. More info: "
                        f"{CONVENTIONS}#resources")
EMBEDDED_KIND = f"kind is a string value representing the type of this object. In CamelCase. More info: " \
                f"{CONVENTIONS}#types-kinds"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"crdoapigadgets.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "crdoapigadgets", "singular": "crdoapigadget", "kind": "CrdoapiGadget",
                       "listKind": "CrdoapiGadgetList"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "properties": {"spec": {"type": "object", "properties": {
                     "size": {"type": "integer"},
                     "template": {"type": "object", "x-kubernetes-embedded-resource": True,
                                  "properties": {"spec": {"type": "object"}}},
                     "loose": {"type": "object", "x-kubernetes-embedded-resource": True,
                               "x-kubernetes-preserve-unknown-fields": True}}}}}}}]},
}


def _description(explain: str) -> str:
    """The DESCRIPTION paragraph of ``kubectl explain`` output, its lines joined with single spaces."""
    text = explain.split("DESCRIPTION:", 1)[1]
    lines = []
    for line in text.splitlines()[1:]:
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def test_explain_and_openapi_of_a_custom_resource(kubectl: Kubectl) -> None:
    kubectl.run("apply", "-f", "-", input=json.dumps(CRD))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/crdoapigadgets.{GROUP}", "--timeout=20s")
        explain = wait_for(lambda: kubectl.run("explain", "crdoapigadgets.apiVersion", check=False).stdout)
        assert _description(explain) == API_VERSION, explain
        assert _description(kubectl.run("explain", "crdoapigadgets.kind").stdout) == KIND
        metadata = kubectl.run("explain", "crdoapigadgets.metadata").stdout
        assert "FIELD: metadata <ObjectMeta>" in metadata
        # the field's own description, then ObjectMeta's
        assert _description(metadata).startswith(METADATA + " ObjectMeta is metadata that all persisted"), metadata
        v2 = kubectl.run("explain", "crdoapigadgets.kind", "--output", "plaintext-openapiv2").stdout
        assert _description(v2) == KIND, v2

        doc = json.loads(kubectl.run("get", "--raw", f"/openapi/v3/apis/{GROUP}/v1").stdout)
        schemas = doc["components"]["schemas"]
        kind = schemas["com.example.crdoapi.v1.CrdoapiGadget"]["properties"]
        assert kind["apiVersion"] == {"type": "string", "description": API_VERSION}
        assert kind["kind"] == {"type": "string", "description": KIND}
        assert kind["metadata"] == {"description": METADATA, "allOf": [
            {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]}
        listed = schemas["com.example.crdoapi.v1.CrdoapiGadgetList"]
        assert listed["description"] == "CrdoapiGadgetList is a list of CrdoapiGadget"
        assert listed["properties"]["items"] == {
            "type": "array", "description": f"List of crdoapigadgets. More info: {CONVENTIONS}",
            "items": {"$ref": "#/components/schemas/com.example.crdoapi.v1.CrdoapiGadget"}}
        assert listed["properties"]["metadata"] == {"description": LIST_METADATA, "allOf": [
            {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}]}
        assert listed["properties"]["apiVersion"]["description"] == API_VERSION
        assert listed["properties"]["kind"]["description"] == KIND

        # an embedded resource: apiVersion and kind required, with apiextensions' own texts
        template = kubectl.run("explain", "crdoapigadgets.spec.template").stdout
        assert "  apiVersion\t<string> -required-\n" in template and "  kind\t<string> -required-\n" in template
        assert "  metadata\t<ObjectMeta>\n" in template, template
        assert _description(kubectl.run("explain", "crdoapigadgets.spec.template.kind").stdout) == EMBEDDED_KIND
        embedded = schemas["com.example.crdoapi.v1.CrdoapiGadget"]["properties"]["spec"]["properties"]
        assert embedded["template"]["required"] == ["kind", "apiVersion"]
        assert embedded["template"]["properties"]["apiVersion"] == {"type": "string",
                                                                    "description": EMBEDDED_API_VERSION}
        assert embedded["template"]["properties"]["metadata"] == {"description": METADATA, "allOf": [
            {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]}
        assert set(embedded["loose"]["properties"]) == {"apiVersion", "kind", "metadata"}  # v3: preserved too

        v2doc = json.loads(kubectl.run("get", "--raw", "/openapi/v2").stdout)["definitions"]
        v2list = v2doc["com.example.crdoapi.v1.CrdoapiGadgetList"]["properties"]
        assert v2list["metadata"] == {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
                                      "description": LIST_METADATA}
        assert v2list["items"]["description"] == f"List of crdoapigadgets. More info: {CONVENTIONS}"
        v2spec = v2doc["com.example.crdoapi.v1.CrdoapiGadget"]["properties"]["spec"]["properties"]
        assert v2spec["template"]["properties"]["metadata"] == {
            "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "description": METADATA}
        # v2: an embedded object that preserves unknown fields gets no properties (kubectl's v2 validation)
        assert "properties" not in v2spec["loose"] and "required" not in v2spec["loose"], v2spec["loose"]
    finally:
        kubectl.run("delete", "crd", f"crdoapigadgets.{GROUP}", "--wait=false", check=False)
