"""/openapi/v2 as gnostic protobuf (services/gateway/openapi_v2pb.py): conversion, negotiation, caching."""

from __future__ import annotations

import gzip
from typing import Any

import pytest
import yaml

from kapi import errors, jsonutil
from kapi_proto.openapi.v2 import openapiv2_pb2 as pb
from services.gateway import openapi
from services.gateway import openapi_v2pb as v2pb


@pytest.mark.parametrize("value,text", [
    ("v1", "v1\n"),
    ("", '""\n'),
    ("true", '"true"\n'),
    ("No", '"No"\n'),
    ("a: b", '"a: b"\n'),
    ("3", '"3"\n'),
    (3, "3\n"),
    (1.5, "1.5\n"),
    (True, "true\n"),
    (None, "null\n"),
    ([], "[]\n"),
    ({}, "{}\n"),
    (["a", "b"], "- a\n- b\n"),
    ([{"group": "", "kind": "Pod", "version": "v1"}], '- group: ""\n  kind: Pod\n  version: v1\n'),
    ({"a": {"b": [1, {"c": "d"}]}, "e": []}, "a:\n  b:\n    - 1\n    - c: d\ne: []\n"),
    ([["x"], []], "- - x\n- []\n"),
])
def test_yaml_text(value: Any, text: str) -> None:
    assert v2pb.yaml_text(value) == text
    assert yaml.safe_load(text) == value


SWAGGER: dict[str, Any] = {
    "swagger": "2.0",
    "info": {"title": "T", "version": "v9", "x-info": 1},
    "basePath": "/base",
    "schemes": ["https"],
    "x-top": {"k": "v"},
    "paths": {
        "x-paths": True,
        "/things/{name}": {
            "parameters": [{"name": "name", "in": "path", "required": True, "type": "string"},
                           {"$ref": "#/parameters/pretty"}],
            "get": {"operationId": "readThing", "tags": ["t"], "produces": ["application/json"],
                    "parameters": [{"name": "body", "in": "body", "required": True,
                                    "schema": {"$ref": "#/definitions/Thing"}},
                                   {"name": "h", "in": "header", "type": "string"},
                                   {"name": "f", "in": "formData", "type": "file"},
                                   {"name": "q", "in": "query", "type": "array", "items": {"type": "integer"},
                                    "enum": [1, 2], "maximum": 9, "uniqueItems": True}],
                    "responses": {"200": {"description": "OK", "schema": {"$ref": "#/definitions/Thing"}},
                                  "401": {"$ref": "#/responses/unauthorized"},
                                  "default": {"description": "blob", "schema": {"type": "file"}},
                                  "x-resp": "r"},
                    "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Thing"}},
        },
    },
    "definitions": {
        "Thing": {
            "type": "object", "required": ["spec"], "description": "a thing",
            "properties": {
                "spec": {"$ref": "#/definitions/Spec"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "open": {"type": "object", "additionalProperties": False},
                "list": {"type": "array", "items": {"type": "string"}},
                "tuple": {"items": [{"type": "string"}, {"type": "integer"}]},
                "multi": {"type": ["string", "integer"], "default": "x", "minLength": 1, "multipleOf": 2.5},
                "bogus": {"oneOf": [{"type": "string"}], "nullable": True, "maxLength": "not a number"},
            },
            "x-kubernetes-group-version-kind": [{"group": "", "kind": "Thing", "version": "v1"}],
        },
        "Spec": {"type": "object", "properties": {}},
    },
    "parameters": {"pretty": {"name": "pretty", "in": "query", "type": "string"}},
    "responses": {"unauthorized": {"description": "Unauthorized"}},
    "securityDefinitions": {"BearerToken": {"type": "apiKey", "name": "authorization", "in": "header"},
                            "basic": {"type": "basic"},
                            "oauth": {"type": "oauth2", "flow": "accessCode", "scopes": {"read": "r"},
                                      "tokenUrl": "https://t", "authorizationUrl": "https://a"}},
    "security": [{"BearerToken": []}, {"oauth": ["read"]}],
    "tags": [{"name": "t", "externalDocs": {"url": "https://d"}}],
}


def _extensions(entries: Any) -> dict[str, Any]:
    return {e.name: yaml.safe_load(e.value.yaml) for e in entries}


def test_document_shapes() -> None:
    doc = pb.Document.FromString(v2pb.document(SWAGGER).SerializeToString())
    assert (doc.swagger, doc.info.title, doc.info.version, doc.base_path, list(doc.schemes)) == (
        "2.0", "T", "v9", "/base", ["https"])
    assert _extensions(doc.vendor_extension) == {"x-top": {"k": "v"}}
    assert _extensions(doc.info.vendor_extension) == {"x-info": 1}
    assert _extensions(doc.paths.vendor_extension) == {"x-paths": True}

    [item] = doc.paths.path
    assert item.name == "/things/{name}"
    path_param, ref_param = item.value.parameters
    assert path_param.parameter.non_body_parameter.path_parameter_sub_schema.required
    assert ref_param.json_reference._ref == "#/parameters/pretty"
    get = item.value.get
    assert get.operation_id == "readThing" and list(get.tags) == ["t"] and not item.value.HasField("post")
    body, header, form, query = (p.parameter for p in get.parameters)
    assert body.body_parameter.schema._ref == "#/definitions/Thing" and body.body_parameter.required
    assert getattr(body.body_parameter, "in") == "body"  # noqa: B009 - "in" is a Python keyword
    assert header.non_body_parameter.header_parameter_sub_schema.name == "h"
    assert form.non_body_parameter.form_data_parameter_sub_schema.type == "file"
    q = query.non_body_parameter.query_parameter_sub_schema
    assert (q.type, q.items.type, q.maximum, q.unique_items) == ("array", "integer", 9.0, True)
    assert [yaml.safe_load(e.yaml) for e in q.enum] == [1, 2]
    codes = {r.name: r.value for r in get.responses.response_code}
    assert list(codes) == ["200", "401", "default"]
    assert codes["200"].response.schema.schema._ref == "#/definitions/Thing"
    assert codes["401"].json_reference._ref == "#/responses/unauthorized"
    assert codes["default"].response.schema.file_schema.type == "file"
    assert _extensions(get.responses.vendor_extension) == {"x-resp": "r"}
    assert _extensions(get.vendor_extension) == {
        "x-kubernetes-group-version-kind": {"group": "", "version": "v1", "kind": "Thing"}}

    defs = {d.name: d.value for d in doc.definitions.additional_properties}
    assert list(defs) == ["Thing", "Spec"]
    thing = defs["Thing"]
    assert (list(thing.type.value), list(thing.required), thing.description) == (["object"], ["spec"], "a thing")
    props = {p.name: p.value for p in thing.properties.additional_properties}
    assert list(props) == ["spec", "labels", "open", "list", "tuple", "multi", "bogus"]
    assert props["spec"]._ref == "#/definitions/Spec" and not props["spec"].HasField("type")
    assert list(props["labels"].additional_properties.schema.type.value) == ["string"]
    assert props["open"].additional_properties.WhichOneof("oneof") == "boolean"
    assert not props["open"].additional_properties.boolean
    assert [list(s.type.value) for s in props["list"].items.schema] == [["string"]]
    assert [list(s.type.value) for s in props["tuple"].items.schema] == [["string"], ["integer"]]
    multi = props["multi"]
    assert (list(multi.type.value), multi.default.yaml, multi.min_length, multi.multiple_of) == (
        ["string", "integer"], "x\n", 1, 2.5)
    assert props["bogus"] == pb.Schema()  # keys Swagger 2.0 lacks and mistyped values are dropped
    assert _extensions(thing.vendor_extension) == {
        "x-kubernetes-group-version-kind": [{"group": "", "kind": "Thing", "version": "v1"}]}
    assert defs["Spec"].HasField("properties") and not defs["Spec"].properties.additional_properties

    [(pname, pretty)] = [(p.name, p.value) for p in doc.parameters.additional_properties]
    assert pname == "pretty" and pretty.non_body_parameter.query_parameter_sub_schema.name == "pretty"
    assert [r.name for r in doc.responses.additional_properties] == ["unauthorized"]
    security = {s.name: s.value for s in doc.security_definitions.additional_properties}
    assert security["BearerToken"].api_key_security.name == "authorization"
    assert security["basic"].WhichOneof("oneof") == "basic_authentication_security"
    oauth = security["oauth"].oauth2_access_code_security
    assert (oauth.token_url, oauth.authorization_url, oauth.scopes.additional_properties[0].value) == (
        "https://t", "https://a", "r")
    assert [[(a.name, list(a.value.value)) for a in s.additional_properties] for s in doc.security] == [
        [("BearerToken", [])], [("oauth", ["read"])]]
    assert doc.tags[0].external_docs.url == "https://d"


def _kubectl_model_errors(doc: pb.Document) -> list[str]:
    """The rules kubectl's OpenAPI v2 models (k8s.io/kube-openapi pkg/util/proto NewOpenAPIData) enforce.

    Any violation makes kubectl fail validation for every object, so the served document must have none.
    """
    names = {d.name for d in doc.definitions.additional_properties}
    problems: list[str] = []

    def check(s: pb.Schema, path: str) -> None:
        types = list(s.type.value)
        if s._ref:
            if s.properties.additional_properties or types:
                problems.append(f"{path}: $ref with properties or type")
            if not s._ref.startswith("#/definitions/") or s._ref.removeprefix("#/definitions/") not in names:
                problems.append(f"{path}: bad reference {s._ref}")
            return
        if len(types) > 1:
            problems.append(f"{path}: several types")
        elif types == ["array"]:
            if len(s.items.schema) != 1:
                problems.append(f"{path}: array without exactly one item schema")
            else:
                check(s.items.schema[0], path + "[]")
            return
        elif types and types[0] not in ("object", "string", "number", "integer", "boolean"):
            problems.append(f"{path}: unknown type {types[0]}")
        for p in s.properties.additional_properties:
            check(p.value, f"{path}.{p.name}")
        if s.additional_properties.HasField("schema"):
            check(s.additional_properties.schema, path + "{}")

    for d in doc.definitions.additional_properties:
        check(d.value, d.name)
    return problems


def test_served_document_is_what_kubectl_reads() -> None:
    encoded = v2pb.encoded(openapi.swagger_v2())
    doc = pb.Document.FromString(encoded.protobuf)
    assert _kubectl_model_errors(doc) == []
    source = jsonutil.loads(encoded.json)
    defs = {d.name: d.value for d in doc.definitions.additional_properties}
    assert list(defs) == list(source["definitions"])
    assert [p.name for p in doc.paths.path] == list(source["paths"])
    config_map = defs["io.k8s.api.core.v1.ConfigMap"]
    assert _extensions(config_map.vendor_extension)["x-kubernetes-group-version-kind"] == [
        {"group": "", "kind": "ConfigMap", "version": "v1"}]
    assert {p.name for p in config_map.properties.additional_properties} >= {"data", "binaryData", "metadata"}
    # kubectl's fieldValidation probe (QueryParamVerifier) reads the query parameters of the POST operation.
    post = next(p.value.post for p in doc.paths.path if p.name == "/api/v1/namespaces/{namespace}/configmaps")
    query = {p.parameter.non_body_parameter.query_parameter_sub_schema.name for p in post.parameters}
    assert "fieldValidation" in query
    assert gzip.decompress(encoded.protobuf_gzip) == encoded.protobuf


def test_encodings_cached_until_the_document_changes() -> None:
    first = v2pb.encoded(openapi.swagger_v2())
    assert v2pb.encoded(openapi.swagger_v2()) is first
    assert first.protobuf is first.protobuf
    openapi.set_custom(dict(openapi._CUSTOM_KINDS), dict(openapi._CUSTOM_DEFINITIONS))
    second = v2pb.encoded(openapi.swagger_v2())
    assert second is not first and second.etag == first.etag


@pytest.mark.parametrize("accept,form", [
    ("", "json"),
    ("*/*", "json"),
    ("application/json", "json"),
    ("application/*", "json"),
    ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "protobuf"),
    ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "protobuf"),
    ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json", "protobuf"),
    ("application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "protobuf"),
    ("*/*, application/com.github.proto-openapi.spec.v2.v1.0+protobuf;q=0.9", "json"),
    ("*/*;q=0.8, application/com.github.proto-openapi.spec.v2.v1.0+protobuf", "protobuf"),
    ("application/json;q=0", None),
    ("application/yaml", None),
    ("text/html, application/vnd.kubernetes.protobuf", None),
])
def test_negotiate(accept: str, form: str | None) -> None:
    assert v2pb.negotiate(accept) == form


def test_v2_response() -> None:
    proto_accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
    response = openapi.v2_response(proto_accept, {})
    assert response.status == 200
    assert response.headers["Content-Type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert response.headers["Vary"] == "Accept"
    assert "Content-Encoding" not in response.headers
    assert isinstance(response.body, bytes)
    assert pb.Document.FromString(response.body).swagger == "2.0"
    etag = response.headers["ETag"]
    assert etag.startswith('"') and len(etag) == 130 and etag == etag.upper()

    zipped = openapi.v2_response(proto_accept, {"Accept-Encoding": "gzip, deflate"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert isinstance(zipped.body, bytes) and gzip.decompress(zipped.body) == response.body

    as_json = openapi.v2_response("application/json", {})
    assert as_json.content_type == "application/json" and as_json.headers["ETag"] == etag
    assert isinstance(as_json.body, bytes) and jsonutil.loads(as_json.body)["swagger"] == "2.0"

    assert openapi.v2_response(proto_accept, {"If-None-Match": etag}).status == 304
    assert openapi.v2_response("", {"If-None-Match": '"other"'}).status == 200
    with pytest.raises(errors.StatusError) as refused:
        openapi.v2_response("application/yaml", {})
    assert refused.value.code == 406


@pytest.mark.parametrize("schema,published", [
    ({"type": "string", "nullable": True}, {}),
    ({"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {"type": "string"}}},
     {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
    ({"type": "array", "x-kubernetes-preserve-unknown-fields": True, "items": {"type": "string"}},
     {"x-kubernetes-preserve-unknown-fields": True}),
    ({"type": "string", "anyOf": [{"pattern": "^a"}], "oneOf": [{}], "allOf": [{}], "not": {}}, {"type": "string"}),
    ({"x-kubernetes-int-or-string": True}, {"x-kubernetes-int-or-string": True}),
    ({"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string", "nullable": True},
                                                               "b": {"type": "array", "items": {"type": "integer"}}}},
     {"type": "object", "required": ["b"],
      "properties": {"a": {}, "b": {"type": "array", "items": {"type": "integer"}}}}),
    ({"type": "object", "additionalProperties": {"type": "object", "nullable": True, "properties": {"x": {}}}},
     {"type": "object", "additionalProperties": {}}),
])
def test_crd_schema_v2(schema: dict[str, Any], published: dict[str, Any]) -> None:
    assert v2pb.crd_schema_v2(schema) == published
