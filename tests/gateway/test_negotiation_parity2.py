"""Content negotiation details as kube-apiserver 1.37 has them (second pass):

- ``as=PartialObjectMetadata`` on a list and ``as=PartialObjectMetadataList`` on one object are 406 after the read
  (handlers/response.go doTransformObject: asPartialObjectMetadata / asPartialObjectMetadataList, Go's ``%T``);
- Accept media ranges and parameter names are compared as written (munnerz/goautoneg ParseAccept does not fold
  case), while a request body's Content-Type is lower-cased (mime.ParseMediaType in
  NegotiateInputSerializerForMediaType) and its parameters must parse;
- ``text/yaml`` (and ``application/x-yaml``) bodies are 415: only application/yaml is a serializer's;
- a custom resource's ``/scale`` with ``as=Table`` is the CRD's printer columns over the Scale (the scale scope
  keeps the custom resource's TableConvertor).
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request

from kapi import errors
from kapi.resources import REGISTRY, Resource
from services.gateway import negotiation, printers
from services.gateway.dynamic import printer as crd_printer
from services.gateway.handlers import list as list_handler
from services.gateway.handlers import patch as patch_handler
from services.gateway.handlers import scale as scale_handler
from services.gateway.scope import RequestScope, decode_request, go_type

META = "g=meta.k8s.io;v=v1"
POM = f"application/json;as=PartialObjectMetadata;{META}"
POML = f"application/json;as=PartialObjectMetadataList;{META}"
ALL_FORMS_PB = ("only the following media types are accepted: application/json, application/yaml, "
                "application/vnd.kubernetes.protobuf")
UNSUPPORTED = ("the body of the request was in an unknown format - accepted media types include: application/json, "
               "application/yaml, application/vnd.kubernetes.protobuf")
CONFIGMAPS = REGISTRY.get("", "v1", "configmaps")
CM = {"kind": "ConfigMap", "apiVersion": "v1",
      "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7", "uid": "u1",
                   "creationTimestamp": "2026-01-01T00:00:00Z"}, "data": {"k": "v"}}
WIDGETS = Resource("example.com", "v1", "widgets", "Widget", True, subresources=("status", "scale"))


class Storage:
    """Storage Get/List over one stored object."""

    def __init__(self, obj: dict[str, Any]):
        self.obj = obj

    async def Get(self, request: Any, timeout: float, metadata: Any = None) -> Any:  # noqa: N802 - the gRPC name
        return SimpleNamespace(object=json.dumps(self.obj).encode())

    async def List(self, request: Any, timeout: float, metadata: Any = None) -> Any:  # noqa: N802
        reply = SimpleNamespace(items=[json.dumps(self.obj).encode()], resource_version=9,
                                has_remaining_item_count=False, remaining_item_count=0)
        setattr(reply, "continue", "")
        return reply


def scope(resource: Resource, accept: str, verb: str = "get", obj: dict[str, Any] | None = None,
          headers: dict[str, str] | None = None, query: str = "") -> RequestScope:
    request = make_mocked_request("GET", "/x" + query, headers={"Accept": accept, **(headers or {})})
    info = SimpleNamespace(verb=verb, name="a" if verb != "list" else "", namespace="ns", subresource="")
    backends = SimpleNamespace(storage=Storage(obj or CM), custom_resources=None)
    return RequestScope(request=request, info=info, attrs=None, resource=resource,  # type: ignore[arg-type]
                        query=request.query, output=negotiation.negotiate(accept), backends=backends,  # type: ignore
                        timeout=5.0)


def status_of(call: Any) -> tuple[int, str, str]:
    with pytest.raises(errors.StatusError) as info:
        call()
    return info.value.code, info.value.reason, info.value.message


# --- 1. PartialObjectMetadata vs PartialObjectMetadataList ------------------------------------------------------


def test_negotiate_tells_the_list_form_apart():
    assert (negotiation.negotiate(POM).partial_metadata, negotiation.negotiate(POM).partial_list) == (True, False)
    assert (negotiation.negotiate(POML).partial_metadata, negotiation.negotiate(POML).partial_list) == (True, True)


async def test_partial_object_metadata_on_a_list_is_406():
    with pytest.raises(errors.StatusError) as info:
        await list_handler.list_(scope(CONFIGMAPS, POM, verb="list"))
    assert (info.value.code, info.value.reason, info.value.message) == (
        406, "NotAcceptable",
        "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)")


async def test_partial_object_metadata_list_on_a_list_is_served():
    response = await list_handler.list_(scope(CONFIGMAPS, POML, verb="list"))
    body = json.loads(response.body)
    assert (body["kind"], body["items"][0]["kind"]) == ("PartialObjectMetadataList", "PartialObjectMetadata")


def test_partial_object_metadata_list_on_one_object_is_406():
    assert status_of(lambda: scope(CONFIGMAPS, POML).respond(dict(CM))) == (
        406, "NotAcceptable",
        "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)")
    served = json.loads(scope(CONFIGMAPS, POM).respond(dict(CM)).body)
    assert (served["kind"], served["metadata"]["name"]) == ("PartialObjectMetadata", "a")


def test_go_types_of_kubes_handlers():
    assert go_type(REGISTRY.get("apps", "v1", "deployments"), list_=True) == "*apps.DeploymentList"
    assert go_type(REGISTRY.get("events.k8s.io", "v1", "events")) == "*core.Event"
    assert go_type(REGISTRY.get("rbac.authorization.k8s.io", "v1", "roles")) == "*rbac.Role"
    assert go_type(WIDGETS) == "*unstructured.Unstructured"
    assert go_type(WIDGETS, list_=True) == "*unstructured.UnstructuredList"


async def test_scale_with_partial_object_metadata_list_is_406_naming_the_scale_type(monkeypatch):
    deploy = {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "a", "namespace": "ns"},
              "spec": {"replicas": 2}}
    s = scope(REGISTRY.get("apps", "v1", "deployments"), POML, obj=deploy)
    with pytest.raises(errors.StatusError) as info:
        await scale_handler.scale(s)
    assert info.value.message == ("you requested PartialObjectMetadataList, but the requested object is not a list "
                                  "(*autoscaling.Scale)")


# --- 2. case: Accept as written, Content-Type folded --------------------------------------------------------------


@pytest.mark.parametrize("accept", ["Application/JSON", "APPLICATION/YAML", "application/JSON",
                                    "Application/Json;as=Table;v=v1;g=meta.k8s.io"])
def test_accept_media_types_are_case_sensitive_as_goautoneg(accept):
    assert status_of(lambda: negotiation.negotiate(accept, protobuf=True)) == (406, "NotAcceptable", ALL_FORMS_PB)


@pytest.mark.parametrize("accept", ["application/json;AS=Table;v=v1;g=meta.k8s.io",  # g/v: a conversion to no kind
                                    'application/json;as="Table";v=v1;g=meta.k8s.io'])  # the kind '"Table"'
def test_accept_parameter_names_and_values_are_kept_as_written(accept):
    assert status_of(lambda: negotiation.negotiate(accept, protobuf=True)) == (406, "NotAcceptable", ALL_FORMS_PB)


def test_an_upper_case_parameter_name_is_an_unknown_parameter():
    out = negotiation.negotiate("application/json;AS=Table")
    assert (out.mime, out.table) == ("application/json", False)


def test_accept_q_is_a_float32_and_untrimmed():
    # "q= 0.5" does not parse in Go (0: refused), so YAML (q=1) serves even though JSON came first
    assert negotiation.negotiate("application/json;q= 0.5, application/yaml;q=0.4").mime == "application/yaml"
    assert [c.q for c in negotiation.clauses("a/b;q=0.3")] == [pytest.approx(0.30000001192092896, abs=0)]


@pytest.mark.parametrize("content_type,mime", [
    ("Application/JSON", "application/json"), ("APPLICATION/YAML", "application/yaml"),
    ("application/json; charset=utf-8", "application/json"), ("application/json;", "application/json"),
    ('application/json; a="x;y"', "application/json"), ("", "application/json"),
    ("application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"),
])
def test_content_type_is_folded_as_mime_parse_media_type(content_type, mime):
    assert negotiation.negotiate_input(content_type) == mime


@pytest.mark.parametrize("content_type", ["application/json; charset", "application/json;=x", "application/json x",
                                          "application/json; a=1; A=2", "application/", 'application/json;a="x',
                                          "application/merge-patch+json", "text/plain"])
def test_content_types_go_refuses_or_no_serializer_has_are_415(content_type):
    assert status_of(lambda: negotiation.negotiate_input(content_type)) == (415, "UnsupportedMediaType",
                                                                             UNSUPPORTED)


def test_a_create_body_with_an_upper_case_content_type_decodes():
    s = scope(CONFIGMAPS, "application/json", verb="create", headers={"Content-Type": "Application/JSON"})
    obj = decode_request(s, json.dumps(CM).encode(), name_from_url=False)
    assert obj["data"] == {"k": "v"}


# --- 3. text/yaml is no serializer's ---------------------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/yaml", "application/x-yaml", "text/yaml; charset=utf-8"])
def test_text_yaml_bodies_are_415(content_type):
    assert status_of(lambda: negotiation.decode_body(b"a: 1\n", content_type)) == (415, "UnsupportedMediaType",
                                                                                    UNSUPPORTED)
    s = scope(CONFIGMAPS, "application/json", verb="create", headers={"Content-Type": content_type})
    assert status_of(lambda: decode_request(s, b"kind: ConfigMap\n", name_from_url=False))[0] == 415


def test_415_comes_before_413():
    assert status_of(lambda: negotiation.decode_body(b" " * (4 << 20), "text/yaml"))[0] == 415


def test_yaml_and_patch_bodies_still_decode():
    assert negotiation.decode_body(b"a: 1\n", "application/yaml") == {"a": 1}
    assert negotiation.decode_body(b'{"a":1}', negotiation.MERGE_PATCH) == {"a": 1}
    assert negotiation.decode_body(b"a: 1\n", negotiation.APPLY_PATCH) == {"a": 1}


# --- 4. a custom resource's /scale as a Table ------------------------------------------------------------------

CRD = {"metadata": {"name": "widgets.example.com"},
       "spec": {"group": "example.com", "names": {"plural": "widgets", "kind": "Widget"}, "scope": "Namespaced",
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "subresources": {"scale": {"specReplicasPath": ".spec.size",
                                                         "statusReplicasPath": ".status.count"}},
                              "additionalPrinterColumns": [
                                  {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                                  {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                  {"name": "Observed", "type": "integer", "jsonPath": ".status.replicas"}]}]}}
WIDGET = {"apiVersion": "example.com/v1", "kind": "Widget",
          "metadata": {"name": "a", "namespace": "ns", "uid": "w1", "resourceVersion": "12",
                       "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"x": "y"}},
          "spec": {"size": 3}, "status": {"count": 2}}


async def test_custom_resource_scale_table_is_the_crds_columns_over_the_scale(monkeypatch):
    monkeypatch.setitem(printers.PRINTERS, ("example.com", "widgets"), crd_printer(CRD, "v1"))
    s = scope(WIDGETS, f"application/json;as=Table;{META}", obj=WIDGET)
    s.backends.custom_resources = SimpleNamespace(crd_of=lambda resource: CRD)
    body = json.loads((await scale_handler.scale(s)).body)
    assert (body["kind"], body["apiVersion"], body["metadata"]) == ("Table", "meta.k8s.io/v1",
                                                                    {"resourceVersion": "12"})
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Replicas", "Size", "Observed"]
    # the Scale's fields: spec.replicas 3 (from .spec.size), no spec.size, status.replicas 2
    assert body["rows"][0]["cells"] == ["a", 3, None, 2]
    assert body["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                         "metadata": {"name": "a", "namespace": "ns", "uid": "w1",
                                                      "resourceVersion": "12",
                                                      "creationTimestamp": "2026-01-01T00:00:00Z"}}


async def test_custom_resource_scale_table_without_columns_is_name_and_age(monkeypatch):
    plain = json.loads(json.dumps(CRD))
    del plain["spec"]["versions"][0]["additionalPrinterColumns"]
    monkeypatch.setitem(printers.PRINTERS, ("example.com", "widgets"), crd_printer(plain, "v1"))
    s = scope(WIDGETS, f"application/json;as=Table;{META}", obj=WIDGET, query="?includeObject=None")
    s.backends.custom_resources = SimpleNamespace(crd_of=lambda resource: plain)
    body = json.loads((await scale_handler.scale(s)).body)
    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Age"]
    assert body["rows"] == [{"cells": ["a", body["rows"][0]["cells"][1]]}]
    assert body["rows"][0]["cells"][1].endswith("d")  # created 2026-01-01: days old


async def test_custom_resource_scale_partial_list_is_406_naming_v1_scale():
    s = scope(WIDGETS, POML, obj=WIDGET)
    s.backends.custom_resources = SimpleNamespace(crd_of=lambda resource: CRD)
    with pytest.raises(errors.StatusError) as info:
        await scale_handler.scale(s)
    assert info.value.message == ("you requested PartialObjectMetadataList, but the requested object is not a list "
                                  "(*v1.Scale)")


# --- a PATCH's Content-Type: cut at ';', compared as written (handlers/patch.go PatchResource) ------------------

PATCH_415 = "the body of the request was in an unknown format - accepted media types include: "


@pytest.mark.parametrize("content_type", ["Application/Merge-Patch+JSON", "application/merge-patch+json ;x=y",
                                          "application/json", "text/yaml"])
async def test_patch_types_are_compared_as_written(content_type):
    s = scope(CONFIGMAPS, "application/json", verb="patch", headers={"Content-Type": content_type})
    with pytest.raises(errors.StatusError) as info:
        await patch_handler.read_patch(s)
    assert (info.value.code, info.value.reason, info.value.message) == (
        415, "UnsupportedMediaType", PATCH_415 + "application/json-patch+json, application/merge-patch+json, "
        "application/strategic-merge-patch+json, application/apply-patch+yaml")


async def test_a_custom_resources_patch_types_have_no_strategic_merge_patch():
    s = scope(WIDGETS, "application/json", verb="patch",
              headers={"Content-Type": "application/strategic-merge-patch+json"})
    with pytest.raises(errors.StatusError) as info:
        await patch_handler.read_patch(s)
    assert info.value.message == PATCH_415 + ("application/json-patch+json, application/merge-patch+json, "
                                              "application/apply-patch+yaml")


@pytest.mark.parametrize("content_type", ["application/merge-patch+json", "application/merge-patch+json; charset=utf-8",
                                          "application/apply-patch+yaml;x"])
async def test_patch_types_with_parameters_are_read(content_type):
    s = scope(CONFIGMAPS, "application/json", verb="patch", headers={"Content-Type": content_type})
    assert await patch_handler.read_patch(s) == b""
