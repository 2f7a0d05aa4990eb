"""Legacy discovery documents' content negotiation as kube-apiserver's discovery handlers (issue 17).

kube: apiserver endpoints/discovery/unaggregated (root.go, legacy.go, group.go, version.go) write the documents with
WriteObjectNegotiated and DefaultEndpointRestrictions over the server's codecs (JSON, YAML, protobuf); the
aggregated wrapper (discovery/aggregated/wrapper.go) sends only /api and /apis to the aggregated handler.
"""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from kapi import errors, jsonutil
from kapi.k8sproto import MAGIC
from services.gateway import discovery
from services.gateway.requestinfo import resolve
from services.gateway.routes import non_resource

AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
NOT_ACCEPTABLE = ("only the following media types are accepted: application/json, application/yaml, "
                  "application/vnd.kubernetes.protobuf")


def _request(accept: str | None = None, query: str = "", agent: str = "") -> object:
    headers = {} if accept is None else {"Accept": accept}
    if agent:
        headers["User-Agent"] = agent
    return make_mocked_request("GET", "/apis/apps" + (f"?{query}" if query else ""), headers=headers)


def test_aggregated_accept_alone_is_406_for_a_legacy_document() -> None:
    """The aggregated media type asks for a conversion; DefaultEndpointRestrictions allow none, so the handler of
    /apis/<group>, /apis/<group>/<version> and /api/v1 finds nothing acceptable."""
    for doc in (discovery.group("apps"), discovery.resource_list("apps", "v1"), discovery.resource_list("", "v1")):
        with pytest.raises(errors.StatusError) as err:
            discovery.legacy_response(_request(AGGREGATED), doc)  # type: ignore[arg-type]
        assert (err.value.code, err.value.reason, err.value.message) == (406, "NotAcceptable", NOT_ACCEPTABLE)


def test_aggregated_accept_with_json_fallback_is_json() -> None:
    """kubectl's Accept (aggregated v2, v2beta1, then application/json) gets the JSON document."""
    response = discovery.legacy_response(_request(AGGREGATED + ",application/json"), discovery.group("apps"))
    assert response.headers["Content-Type"] == "application/json"
    assert response.body == (b'{"kind":"APIGroup","apiVersion":"v1","name":"apps","versions":[{"groupVersion":'
                             b'"apps/v1","version":"v1"}],"preferredVersion":{"groupVersion":"apps/v1",'
                             b'"version":"v1"}}\n')


def test_route_refuses_an_accept_it_does_not_produce() -> None:
    """go-restful's route match comes first: text/html is its plain-text 406."""
    with pytest.raises(errors.StatusError) as err:
        discovery.legacy_response(_request("text/html"), discovery.group("apps"))  # type: ignore[arg-type]
    assert err.value.code == 406
    assert err.value.message == ("406: Not Acceptable\n\nAvailable representations: application/json, "
                                 "application/yaml, application/vnd.kubernetes.protobuf")


def test_yaml() -> None:
    response = discovery.legacy_response(_request("application/yaml"), discovery.group("apps"))
    assert response.headers["Content-Type"] == "application/yaml"
    assert response.body == (b"apiVersion: v1\nkind: APIGroup\nname: apps\npreferredVersion:\n  groupVersion: apps/v1\n"
                             b"  version: v1\nversions:\n- groupVersion: apps/v1\n  version: v1\n")


def test_protobuf_envelope_of_the_meta_v1_message() -> None:
    response = discovery.legacy_response(_request("application/vnd.kubernetes.protobuf"), discovery.group("apps"))
    assert response.headers["Content-Type"] == "application/vnd.kubernetes.protobuf"
    gv = b"\x0a\x07apps/v1\x12\x02v1"  # GroupVersionForDiscovery{groupVersion, version}
    raw = b"\x0a\x04apps" + b"\x12" + bytes([len(gv)]) + gv + b"\x1a" + bytes([len(gv)]) + gv
    type_meta = b"\x0a\x02v1\x12\x08APIGroup"
    unknown = b"\x0a" + bytes([len(type_meta)]) + type_meta + b"\x12" + bytes([len(raw)]) + raw + b"\x1a\x00\x22\x00"
    assert response.body == MAGIC + unknown


def test_protobuf_api_versions_has_no_api_version() -> None:
    """/api's APIVersions goes through stripVersionNegotiatedSerializer: the envelope's apiVersion is empty."""
    body = discovery.encode_legacy(discovery.api_versions("10.0.0.1:6443"), "application/vnd.kubernetes.protobuf")
    assert body.startswith(MAGIC + b"\x0a\x0f\x0a\x00\x12\x0bAPIVersions")
    assert b"\x0a\x02v1" in body and b"10.0.0.1:6443" in body


@pytest.mark.parametrize(("query", "agent", "pretty"), [
    ("pretty=true", "", True), ("pretty=1", "", True), ("pretty=false", "curl/8.5.0", False),
    ("", "curl/8.5.0", True), ("", "kubectl/v1.37.0", False)])
def test_pretty_json(query: str, agent: str, pretty: bool) -> None:
    doc = discovery.group("apps")
    response = discovery.legacy_response(_request(None, query, agent), doc)  # type: ignore[arg-type]
    want = jsonutil.dumps_go_indent(doc) if pretty else jsonutil.dumps(doc) + b"\n"  # type: ignore[arg-type]
    assert response.body == want
    if pretty:
        assert response.body.startswith(b'{\n  "kind": "APIGroup",\n  "apiVersion": "v1",')


def test_pretty_does_not_apply_to_yaml() -> None:
    response = discovery.legacy_response(_request("application/yaml", "pretty=true"), discovery.group("apps"))
    assert response.body.startswith(b"apiVersion: v1\n")


def _route(path: str, accept: str) -> web.Response:
    request = make_mocked_request("GET", path, headers={"Accept": accept})
    return non_resource(request, resolve("GET", path, {}))


@pytest.mark.parametrize("path", ["/api/v1", "/apis/apps", "/apis/apps/v1"])
def test_routes_refuse_the_aggregated_accept_on_per_group_documents(path: str) -> None:
    """Only /api and /apis are wrapped by the aggregated handler (aggregated/wrapper.go)."""
    with pytest.raises(errors.StatusError) as err:
        _route(path, AGGREGATED)
    assert (err.value.code, err.value.message) == (406, NOT_ACCEPTABLE)


@pytest.mark.parametrize("path", ["/api", "/apis"])
def test_root_documents_fall_back_to_legacy_negotiation(path: str) -> None:
    """The wrapper serves the aggregated list for a v2/v2beta1 APIGroupDiscoveryList; any other Accept goes to the
    legacy handler, whose negotiation refuses an unknown aggregated version (v=v3) and serves YAML."""
    assert _route(path, AGGREGATED).headers["Content-Type"] == AGGREGATED
    with pytest.raises(errors.StatusError) as err:
        _route(path, AGGREGATED.replace("v=v2", "v=v3"))
    assert (err.value.code, err.value.message) == (406, NOT_ACCEPTABLE)
    response = _route(path, "application/yaml")
    assert response.headers["Content-Type"] == "application/yaml"
    assert response.body.startswith(b"apiVersion: v1\n" if path == "/apis" else b"kind: APIVersions\n")


def test_route_api_v1_protobuf_and_json_escaping() -> None:
    response = _route("/api/v1", "application/vnd.kubernetes.protobuf")
    assert response.headers["Content-Type"] == "application/vnd.kubernetes.protobuf"
    assert response.body.startswith(MAGIC + b"\x0a\x13\x0a\x00\x12\x0fAPIResourceList")  # apiVersion stripped
    assert b"configmaps" in response.body
    body = _route("/api/v1", "application/json").body
    assert body.startswith(b'{"kind":"APIResourceList","groupVersion":"v1","resources":[') and body.endswith(b"}\n")
    assert _route("/apis/apps/v1", "application/json").body.startswith(
        b'{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[')
