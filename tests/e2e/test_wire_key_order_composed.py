"""kube's JSON key order for the kinds outside the protobuf table and for the answers the gateway composes itself:
a CustomResourceDefinition written with shuffled keys is answered (and stored) in its Go struct order
(apiextensions v1 types.go; JSONSchemaProps' ``properties`` sorted, raw ``default`` as sent); a
SelfSubjectAccessReview, a TokenReview and a TokenRequest, never stored, are answered in their Go struct order
too (kapi.k8sproto.goorder, RequestScope.respond(composed=True))."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubernetes import client, config

from kapi.local.launcher import Stack

GROUP = "composedorder.example.com"
CRD_NAME = f"bolts.{GROUP}"


def _api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(Path(stack.kubeconfig)))


def _keys(raw: Any) -> dict[str, Any]:
    return json.loads(raw.data)


def _crd() -> dict[str, Any]:
    # every level in an order kube never writes
    schema = {"properties": {"spec": {"properties": {"size": {"default": {"w": 1, "h": 2}, "type": "object",
                                                              "x-kubernetes-preserve-unknown-fields": True},
                                                     "count": {"minimum": 0, "type": "integer"}},
                                      "type": "object"},
                             "apiVersion": {"type": "string"}},
              "type": "object"}
    return {"spec": {"versions": [{"storage": True, "schema": {"openAPIV3Schema": schema}, "served": True,
                                   "name": "v1"}],
                     "scope": "Namespaced", "names": {"kind": "Bolt", "singular": "bolt", "plural": "bolts"},
                     "group": GROUP},
            "metadata": {"name": CRD_NAME}, "kind": "CustomResourceDefinition",
            "apiVersion": "apiextensions.k8s.io/v1"}


def test_a_crd_is_answered_and_stored_in_go_struct_order(stack: Stack) -> None:
    ext: Any = client.ApiextensionsV1Api(_api(stack))
    try:
        created = _keys(ext.create_custom_resource_definition(_crd(), _preload_content=False))
        assert list(created) == ["kind", "apiVersion", "metadata", "spec", "status"]
        assert list(created["metadata"])[:3] == ["name", "uid", "resourceVersion"]
        spec = created["spec"]
        assert list(spec) == ["group", "names", "scope", "versions", "conversion"]
        assert list(spec["names"]) == ["plural", "singular", "kind", "listKind"]
        version = spec["versions"][0]
        assert list(version) == ["name", "served", "storage", "schema"]
        root = version["schema"]["openAPIV3Schema"]
        assert list(root) == ["type", "properties"]
        assert list(root["properties"]) == ["apiVersion", "spec"]  # a Go map: sorted
        inner = root["properties"]["spec"]
        assert list(inner) == ["type", "properties"] and list(inner["properties"]) == ["count", "size"]
        size = inner["properties"]["size"]
        assert list(size) == ["type", "default", "x-kubernetes-preserve-unknown-fields"]
        assert list(size["default"]) == ["w", "h"]  # raw JSON: as sent
        assert list(inner["properties"]["count"]) == ["type", "minimum"]
        got = _keys(ext.read_custom_resource_definition(CRD_NAME, _preload_content=False))
        assert list(got) == list(created) and list(got["spec"]) == list(spec)
        assert list(got["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]) == ["apiVersion", "spec"]
    finally:
        ext.delete_custom_resource_definition(CRD_NAME)


def test_review_answers_are_in_go_struct_order(stack: Stack) -> None:
    api = _api(stack)
    authz: Any = client.AuthorizationV1Api(api)
    body = {"spec": {"resourceAttributes": {"resource": "pods", "verb": "get", "namespace": "default"}},
            "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1"}
    answer = _keys(authz.create_self_subject_access_review(body, _preload_content=False))
    assert list(answer) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(answer["spec"]["resourceAttributes"]) == ["namespace", "verb", "resource"]
    assert list(answer["status"])[0] == "allowed"
    authn: Any = client.AuthenticationV1Api(api)
    review = _keys(authn.create_token_review({"spec": {"token": "not-a-token"}, "kind": "TokenReview",
                                              "apiVersion": "authentication.k8s.io/v1"}, _preload_content=False))
    assert list(review)[:2] == ["kind", "apiVersion"] and list(review)[-2:] == ["spec", "status"]


def test_a_token_request_is_answered_in_go_struct_order(stack: Stack) -> None:
    core: Any = client.CoreV1Api(_api(stack))
    body = {"spec": {"expirationSeconds": 3600, "audiences": ["https://kubernetes.default.svc"]},
            "metadata": {"name": "default"}, "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1"}
    answer = _keys(core.create_namespaced_service_account_token("default", "default", body,
                                                                 _preload_content=False))
    assert list(answer) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(answer["spec"]) == ["audiences", "expirationSeconds"]
    assert list(answer["status"]) == ["token", "expirationTimestamp"]
