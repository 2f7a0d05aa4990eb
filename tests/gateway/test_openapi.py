"""OpenAPI v3 and v2 documents: schema normalisation and the documents kubectl reads."""

import pytest

from kapi import errors, jsonutil
from services.gateway import openapi

V3 = "#/components/schemas/"


@pytest.mark.parametrize("raw,expected", [
    ({"type": ["string", "null"]}, {"type": "string"}),
    ({"type": ["array", "null"], "items": {"type": ["string", "null"]}},
     {"type": "array", "items": {"type": "string"}}),
    ({"enum": ["A", None], "type": ["string", "null"]}, {"enum": ["A"], "type": "string"}),
    ({"$ref": "#/$defs/io.k8s.X"}, {"$ref": V3 + "io.k8s.X"}),
    ({"$ref": "#/$defs/io.k8s.X", "description": "d"}, {"description": "d", "allOf": [{"$ref": V3 + "io.k8s.X"}]}),
    ({"properties": {"type": {"type": ["string", "null"]}}}, {"properties": {"type": {"type": "string"}}}),
])
def test_openapi_schema_v3(raw, expected):
    assert openapi.openapi_schema(raw, V3) == expected


def test_openapi_schema_v2_keeps_ref_siblings():
    out = openapi.openapi_schema({"$ref": "#/$defs/io.k8s.X", "description": "d"}, "#/definitions/", v2=True)
    assert out == {"$ref": "#/definitions/io.k8s.X", "description": "d"}


def test_v3_core_document_has_single_types_and_int_or_string():
    doc = jsonutil.loads(openapi.group_version_document("", "v1"))
    schemas = doc["components"]["schemas"]
    container = schemas["io.k8s.api.core.v1.Container"]
    assert container["properties"]["args"]["type"] == "array"
    assert container["properties"]["image"]["type"] == "string"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    text = jsonutil.dumps(schemas).decode()
    assert '"null"' not in text and "#/$defs/" not in text


def test_v2_document():
    doc = jsonutil.loads(openapi.swagger_v2())
    assert doc["swagger"] == "2.0"
    assert "/api/v1/namespaces/{namespace}/pods/{name}" in doc["paths"]
    assert "/apis/apps/v1/namespaces/{namespace}/deployments" in doc["paths"]
    pod = doc["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert doc["definitions"]["io.k8s.apimachinery.pkg.api.resource.Quantity"]["type"] == "string"
    text = jsonutil.dumps(doc).decode()
    assert "#/components/" not in text and "#/$defs/" not in text


@pytest.mark.parametrize("accept,code", [("", 200), ("application/json", 200), ("*/*", 200),
                                         ("application/yaml, application/json", 200),
                                         ("application/yaml", 406)])
def test_v2_negotiation(accept, code):  # the protobuf form: tests/gateway/test_openapi_v2pb.py
    try:
        response = openapi.v2_response(accept)
    except errors.StatusError as err:
        assert err.code == code
    else:
        assert response.status == code
        assert response.content_type == "application/json"


def test_delete_responses_name_the_object_only_where_kube_returns_it():
    """DELETE's 200/202: the object for ReturnDeletedObject resources (pods), a plain object elsewhere (configmaps)."""
    paths = jsonutil.loads(openapi.swagger_v2())["paths"]
    pod = paths["/api/v1/namespaces/{namespace}/pods/{name}"]["delete"]["responses"]
    assert pod["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.Pod"} == pod["202"]["schema"]
    cm = paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]["delete"]["responses"]
    assert cm["200"]["schema"] == {"type": "object"} == cm["202"]["schema"]
    v3 = jsonutil.loads(openapi.group_version_document("storage.k8s.io", "v1"))["paths"]
    sc = v3["/apis/storage.k8s.io/v1/storageclasses/{name}"]["delete"]["responses"]["200"]
    assert sc["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/io.k8s.api.storage.v1.StorageClass"}


def test_lists_take_list_options_and_answer_the_list_kind():
    """A collection's GET is list and watch: ListOptions' query parameters, the watch stream media types, and the
    ``<Kind>List`` definition as its answer (v2 and v3)."""
    v2 = jsonutil.loads(openapi.swagger_v2())
    listing = v2["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["get"]
    assert [p["name"] for p in listing["parameters"]] == [
        "allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
        "resourceVersionMatch", "sendInitialEvents", "timeoutSeconds", "watch"]
    assert {p["name"]: p["type"] for p in listing["parameters"]}["limit"] == "integer"
    assert "application/json;stream=watch" in listing["produces"]
    assert listing["responses"]["200"]["schema"] == {"$ref": "#/definitions/io.k8s.api.core.v1.ConfigMapList"}
    assert v2["definitions"]["io.k8s.api.core.v1.ServiceList"]["properties"]["items"]["description"] == \
        "List of services"
    v3 = jsonutil.loads(openapi.group_version_document("apps", "v1"))
    ok = v3["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["get"]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentList"}
    assert "io.k8s.api.apps.v1.DeploymentList" in v3["components"]["schemas"]
