"""kube's JSON key order for the kinds the protobuf table lacks (CustomResourceDefinition, autoscaling/v1 Scale:
kapi.k8sproto.goorder's explicit Go struct table) and for the objects the gateway composes and answers without
storing them (RequestScope.respond(..., composed=True): the review kinds, TokenRequest)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from aiohttp.test_utils import make_mocked_request

from kapi.k8sproto.goorder import wire_order
from kapi.resources import REGISTRY
from services.gateway import negotiation
from services.gateway.handlers.scale import to_scale
from services.gateway.scope import RequestScope

CRD_SPEC_ORDER = ["group", "names", "scope", "versions", "conversion", "preserveUnknownFields"]


def _crd() -> dict[str, Any]:
    """A CRD with every level in an order kube never writes."""
    schema = {
        "x-kubernetes-validations": [{"message": "m", "rule": "self.a > 0"}],
        "properties": {
            "spec": {"required": ["a"], "type": "object", "additionalProperties": False,
                     "properties": {"z": {"type": "string", "enum": [{"y": 1, "b": 2}]},
                                    "a": {"minimum": 1, "default": {"q": 1, "c": 2}, "type": "integer"},
                                    "list": {"items": {"type": "string", "description": "d"}, "type": "array"},
                                    "tuple": {"items": [{"type": "string", "format": "f"}], "type": "array"},
                                    "m": {"additionalProperties": {"type": "string", "format": "f"},
                                          "type": "object"}}},
            "apiVersion": {"type": "string"}},
        "type": "object", "description": "top",
    }
    return {
        "status": {"storedVersions": ["v1"], "acceptedNames": {"kind": "Gear", "plural": "gears"},
                   "conditions": [{"reason": "r", "status": "True", "type": "Established", "message": "m"}]},
        "spec": {"preserveUnknownFields": False,
                 "conversion": {"webhook": {"conversionReviewVersions": ["v1"],
                                            "clientConfig": {"service": {"port": 443, "name": "s", "namespace": "n"},
                                                             "caBundle": "Zm9v"}},
                                "strategy": "Webhook"},
                 "versions": [{"subresources": {"scale": {"statusReplicasPath": ".status.r",
                                                          "specReplicasPath": ".spec.r"}, "status": {}},
                               "schema": {"openAPIV3Schema": schema}, "storage": True, "served": True,
                               "additionalPrinterColumns": [{"jsonPath": ".spec.a", "type": "integer", "name": "A"}],
                               "name": "v1"}],
                 "scope": "Namespaced", "names": {"singular": "gear", "kind": "Gear", "plural": "gears"},
                 "group": "keyorder.example.com"},
        "metadata": {"uid": "u", "name": "gears.keyorder.example.com"},
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}


def test_a_crd_is_in_go_struct_order_at_every_level() -> None:
    out = wire_order(_crd())
    assert out == _crd()  # the same content
    assert list(out) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(out["metadata"]) == ["name", "uid"]
    spec = out["spec"]
    assert list(spec) == CRD_SPEC_ORDER
    assert list(spec["names"]) == ["plural", "singular", "kind"]
    assert list(spec["conversion"]) == ["strategy", "webhook"]
    assert list(spec["conversion"]["webhook"]) == ["clientConfig", "conversionReviewVersions"]
    assert list(spec["conversion"]["webhook"]["clientConfig"]) == ["service", "caBundle"]
    assert list(spec["conversion"]["webhook"]["clientConfig"]["service"]) == ["namespace", "name", "port"]
    version = spec["versions"][0]
    assert list(version) == ["name", "served", "storage", "schema", "subresources", "additionalPrinterColumns"]
    assert list(version["subresources"]) == ["status", "scale"]
    assert list(version["subresources"]["scale"]) == ["specReplicasPath", "statusReplicasPath"]
    assert list(version["additionalPrinterColumns"][0]) == ["name", "type", "jsonPath"]
    status = out["status"]
    assert list(status) == ["conditions", "acceptedNames", "storedVersions"]
    assert list(status["conditions"][0]) == ["type", "status", "reason", "message"]
    assert list(status["acceptedNames"]) == ["plural", "kind"]


def test_json_schema_props_in_go_order_properties_sorted_raw_json_as_received() -> None:
    root = wire_order(_crd())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert list(root) == ["description", "type", "properties", "x-kubernetes-validations"]
    assert list(root["x-kubernetes-validations"][0]) == ["rule", "message"]
    assert list(root["properties"]) == ["apiVersion", "spec"]  # map[string]JSONSchemaProps: sorted
    spec = root["properties"]["spec"]
    assert list(spec) == ["type", "required", "properties", "additionalProperties"]
    assert spec["additionalProperties"] is False  # JSONSchemaPropsOrBool as a bool
    assert list(spec["properties"]) == ["a", "list", "m", "tuple", "z"]
    a = spec["properties"]["a"]
    assert list(a) == ["type", "default", "minimum"]
    assert list(a["default"]) == ["q", "c"]  # JSON: raw, as received
    assert list(spec["properties"]["z"]["enum"][0]) == ["y", "b"]
    assert list(spec["properties"]["list"]["items"]) == ["description", "type"]  # JSONSchemaPropsOrArray: a schema
    assert list(spec["properties"]["tuple"]["items"][0]) == ["type", "format"]  # or a list of them
    assert list(spec["properties"]["m"]["additionalProperties"]) == ["type", "format"]  # OrBool: a schema


def test_the_scale_the_gateway_composes_is_in_go_order() -> None:
    deployment = {"status": {"replicas": 2}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "replicas": 3},
                  "metadata": {"creationTimestamp": "t", "resourceVersion": "5", "uid": "u", "namespace": "d",
                               "name": "web"}, "kind": "Deployment", "apiVersion": "apps/v1"}
    scale = to_scale(deployment)
    assert json.dumps(wire_order(scale)) == json.dumps(scale)
    assert list(scale) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(scale["metadata"]) == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"]
    assert list(wire_order({"status": {"selector": "app=x", "replicas": 1}, "kind": "Scale",
                            "apiVersion": "autoscaling/v1"})["status"]) == ["replicas", "selector"]


def _scope(resource: Any) -> RequestScope:
    request = make_mocked_request("POST", "/x", headers={"Accept": "application/json"})
    info = SimpleNamespace(verb="create", name="", namespace="", subresource="")
    return RequestScope(request=request, info=info, attrs=None, resource=resource,  # type: ignore[arg-type]
                        query=request.query, output=negotiation.negotiate("application/json"),
                        backends=SimpleNamespace(custom_resources=None), timeout=5.0)  # type: ignore[arg-type]


def test_a_composed_answer_is_encoded_in_go_order_a_stored_one_as_it_is() -> None:
    resource = REGISTRY.get("authorization.k8s.io", "v1", "subjectaccessreviews")
    assert resource is not None
    answer = {"status": {"reason": "r", "allowed": True},
              "spec": {"user": "u", "resourceAttributes": {"resource": "pods", "verb": "get", "namespace": "d"}},
              "metadata": {"creationTimestamp": None}, "apiVersion": "authorization.k8s.io/v1",
              "kind": "SubjectAccessReview"}
    body = _scope(resource).respond(answer, 201, composed=True).body
    assert isinstance(body, bytes)
    assert body == (b'{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":'
                    b'{"creationTimestamp":null},"spec":{"resourceAttributes":{"namespace":"d","verb":"get",'
                    b'"resource":"pods"},"user":"u"},"status":{"allowed":true,"reason":"r"}}\n')
    plain = _scope(resource).respond(answer, 201).body
    assert isinstance(plain, bytes) and plain.startswith(b'{"status":')
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    assert _scope(resource).respond(status, 201, composed=True).body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201}\n')


def test_an_api_service_is_in_go_struct_order() -> None:
    # kube-aggregator's types.go order is the protobuf field-number order the plan falls back to (kubectl does not
    # link the type, so gofields.json has no order for it)
    service = {"status": {"conditions": [{"message": "m", "reason": "r", "status": "True", "type": "Available"}]},
               "spec": {"versionPriority": 15, "groupPriorityMinimum": 100, "caBundle": "Zm9v",
                        "insecureSkipTLSVerify": False, "version": "v1", "group": "g.example.com",
                        "service": {"port": 443, "name": "s", "namespace": "n"}},
               "metadata": {"name": "v1.g.example.com"}, "apiVersion": "apiregistration.k8s.io/v1",
               "kind": "APIService"}
    out = wire_order(service)
    assert list(out) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(out["spec"]) == ["service", "group", "version", "insecureSkipTLSVerify", "caBundle",
                                 "groupPriorityMinimum", "versionPriority"]
    assert list(out["spec"]["service"]) == ["namespace", "name", "port"]
    assert list(out["status"]["conditions"][0]) == ["type", "status", "reason", "message"]
