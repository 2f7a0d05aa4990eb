"""A custom resource's ``/scale`` as a Table, and the negotiation refusals of kube-apiserver 1.37, end to end.

kube keeps the custom resource's TableConvertor on the scale request scope (apiextensions-apiserver
customresource_handler.go), so ``as=Table`` on ``<cr>/scale`` prints the CRD's additionalPrinterColumns over the
autoscaling/v1 Scale; PartialObjectMetadata forms that do not fit the answer are 406 (handlers/response.go);
Accept is compared as written, Content-Type folded (negotiation/negotiate.go); ``text/yaml`` bodies are 415.
"""

from __future__ import annotations

import json

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for
from tests.e2e.test_protobuf_responses import send

GROUP = "scaletable.parity2.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"sprockets.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "sprockets", "singular": "sprocket", "kind": "Sprocket", "listKind": "SprocketList"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}},
                           "subresources": {"scale": {"specReplicasPath": ".spec.size",
                                                      "statusReplicasPath": ".status.count"}},
                           "additionalPrinterColumns": [
                               {"name": "Desired", "type": "integer", "jsonPath": ".spec.replicas"},
                               {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]}]},
}
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
UNSUPPORTED = ("the body of the request was in an unknown format - accepted media types include: application/json, "
               "application/yaml, application/vnd.kubernetes.protobuf")


def _status(body: bytes) -> tuple[int, str, str]:
    got = json.loads(body)
    return got["code"], got["reason"], got["message"]


def test_custom_resource_scale_table_and_negotiation_refusals(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(CRD))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/sprockets.{GROUP}", "--timeout=30s")
        path = f"/apis/{GROUP}/v1/namespaces/{namespace}/sprockets"
        wait_for(lambda: send(stack, "GET", path, "application/json")[0] == 200)
        sprocket = {"apiVersion": f"{GROUP}/v1", "kind": "Sprocket", "metadata": {"name": "s1"}, "spec": {"size": 4}}
        # an upper-case Content-Type is JSON (mime.ParseMediaType folds it)
        status, _headers, body = send(stack, "POST", path, "application/json", json.dumps(sprocket).encode(),
                                      content_type="Application/JSON")
        assert status == 201, body
        # the Scale's Table: the CRD's columns over the Scale (.spec.replicas is 4; the Scale has no .spec.size)
        status, headers, body = send(stack, "GET", f"{path}/s1/scale", TABLE)
        assert (status, headers["content-type"]) == (200, "application/json"), body
        table = json.loads(body)
        columns = [c["name"] for c in table["columnDefinitions"]]
        assert (table["kind"], columns) == ("Table", ["Name", "Desired", "Size"])
        assert table["rows"][0]["cells"] == ["s1", 4, None]
        assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
        assert table["metadata"]["resourceVersion"] == table["rows"][0]["object"]["metadata"]["resourceVersion"]
        # PartialObjectMetadata on a list, PartialObjectMetadataList on one object: 406
        status, _headers, body = send(stack, "GET", path,
                                      "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
        assert (status, *_status(body)) == (406, 406, "NotAcceptable", "you requested PartialObjectMetadata, but the "
                                            "requested object is a list (*unstructured.UnstructuredList)")
        status, _headers, body = send(stack, "GET", f"{path}/s1",
                                      "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
        assert (status, *_status(body)) == (406, 406, "NotAcceptable", "you requested PartialObjectMetadataList, but "
                                            "the requested object is not a list (*unstructured.Unstructured)")
        # Accept is compared as written (a built-in kind: its serializers' three media types)
        kubectl.run("-n", namespace, "create", "configmap", "cased", "--from-literal=a=1")
        status, _headers, body = send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/cased",
                                      "Application/JSON")
        assert (status, *_status(body)) == (406, 406, "NotAcceptable", "406: Not Acceptable\n\nAvailable "
                                            "representations: application/json, application/yaml, "
                                            "application/vnd.kubernetes.protobuf")  # go-restful's route check
        # text/yaml is no serializer's media type
        status, _headers, body = send(stack, "POST", path, "application/json", b"kind: Sprocket\n",
                                      content_type="text/yaml")
        assert (status, *_status(body)) == (415, 415, "UnsupportedMediaType", UNSUPPORTED)
    finally:
        kubectl.run("delete", "crd", f"sprockets.{GROUP}", "--wait=false")
