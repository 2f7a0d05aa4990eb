"""Legacy discovery documents' content negotiation through Envoy, as kube-apiserver (issue 17).

kube: apiserver endpoints/discovery/unaggregated (root.go, legacy.go, group.go, version.go) answer with
WriteObjectNegotiated and DefaultEndpointRestrictions over JSON, YAML and protobuf; the aggregated wrapper
(discovery/aggregated/wrapper.go) wraps /api and /apis only, so the APIGroupDiscoveryList Accept alone is a 406 on
/api/v1, /apis/<group> and /apis/<group>/<version>.
"""

from __future__ import annotations

import json

import yaml

from kapi.k8sproto import MAGIC
from kapi.local.launcher import Stack
from tests.e2e.test_discovery_etag import KUBECTL_ACCEPT, V2, fetch

NOT_ACCEPTABLE = ("only the following media types are accepted: application/json, application/yaml, "
                  "application/vnd.kubernetes.protobuf")


def test_aggregated_accept_alone_is_406_on_per_group_documents(stack: Stack) -> None:
    for path in ("/api/v1", "/apis/apps", "/apis/apps/v1"):
        status, headers, body = fetch(stack, path, Accept=V2)
        assert status == 406, (path, body)
        assert headers["Content-Type"] == "application/json"
        status_obj = json.loads(body)
        assert (status_obj["kind"], status_obj["reason"], status_obj["code"]) == ("Status", "NotAcceptable", 406)
        assert status_obj["message"] == NOT_ACCEPTABLE
        status, headers, body = fetch(stack, path, Accept=KUBECTL_ACCEPT)  # kubectl's: JSON fallback
        assert status == 200 and headers["Content-Type"] == "application/json" and body.endswith(b"}\n")


def test_root_documents_with_an_unknown_aggregated_version_are_406(stack: Stack) -> None:
    for path in ("/api", "/apis"):
        status, _, body = fetch(stack, path, Accept=V2.replace("v=v2", "v=v3"))
        assert status == 406 and json.loads(body)["message"] == NOT_ACCEPTABLE, (path, body)


def test_yaml_documents(stack: Stack) -> None:
    for path, kind in (("/api", "APIVersions"), ("/apis", "APIGroupList"), ("/apis/apps", "APIGroup"),
                       ("/apis/apps/v1", "APIResourceList"), ("/api/v1", "APIResourceList")):
        status, headers, body = fetch(stack, path, Accept="application/yaml")
        assert status == 200 and headers["Content-Type"] == "application/yaml", path
        assert b"&id" not in body and yaml.safe_load(body)["kind"] == kind
        json_doc = json.loads(fetch(stack, path, Accept="application/json")[2])
        assert yaml.safe_load(body) == json_doc
    _, _, body = fetch(stack, "/apis/apps", Accept="application/yaml")
    assert body == (b"apiVersion: v1\nkind: APIGroup\nname: apps\npreferredVersion:\n  groupVersion: apps/v1\n"
                    b"  version: v1\nversions:\n- groupVersion: apps/v1\n  version: v1\n")


def test_protobuf_documents(stack: Stack) -> None:
    for path, api_version, kind in (("/api", b"", b"APIVersions"), ("/apis", b"v1", b"APIGroupList"),
                                    ("/apis/apps", b"v1", b"APIGroup"), ("/apis/apps/v1", b"v1", b"APIResourceList"),
                                    ("/api/v1", b"", b"APIResourceList")):
        status, headers, body = fetch(stack, path, Accept="application/vnd.kubernetes.protobuf")
        assert status == 200 and headers["Content-Type"] == "application/vnd.kubernetes.protobuf", path
        type_meta = b"\x0a" + bytes([len(api_version)]) + api_version + b"\x12" + bytes([len(kind)]) + kind
        assert body.startswith(MAGIC + b"\x0a" + bytes([len(type_meta)]) + type_meta), (path, body[:40])
        assert body.endswith(b"\x1a\x00\x22\x00")


def test_pretty_and_route_406(stack: Stack) -> None:
    _, _, compact = fetch(stack, "/apis/apps")
    _, headers, pretty = fetch(stack, "/apis/apps?pretty=true")
    assert pretty == json.dumps(json.loads(compact), indent=2).encode() and not pretty.endswith(b"\n")
    _, _, curl = fetch(stack, "/apis/apps", **{"User-Agent": "curl/8.5.0"})
    assert curl == pretty
    status, headers, body = fetch(stack, "/apis/apps", Accept="text/html")
    assert status == 406  # go-restful's route match; serviceErrorHandler's Status, written raw (no serializer fits)
    status_obj = json.loads(body)
    assert (status_obj["reason"], status_obj["details"]) == ("NotAcceptable", {})
    assert status_obj["message"] == ("406: Not Acceptable\n\nAvailable representations: application/json, "
                                     "application/yaml, application/vnd.kubernetes.protobuf")
