"""Aggregated discovery's ETag, 304 Not Modified, ``Vary: Accept`` and ``Cache-Control: public`` (issue 17).

kube: apiserver endpoints/discovery/aggregated etag.go (ServeHTTPWithETag, calculateETag) and handler.go
(fetchFromCache): the ETag is the quoted upper-case hex SHA-512 of ``json.Marshal`` of the cached
``APIGroupDiscoveryList{Items: ...}`` (no kind, no apiVersion), the same for v2 and v2beta1; an
``If-None-Match`` equal to it is 304 with no body. The legacy documents carry none.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request

from kapi.attributes import UserInfo
from kapi.resources import REGISTRY, Registry, Resource
from services.gateway import aggregation, discovery
from services.gateway.filters import cachecontrol
from services.gateway.requestinfo import resolve
from services.gateway.routes import non_resource

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
KUBECTL_ACCEPT = f"{V2},{V2BETA1},application/json"  # client-go's discovery Accept


def get(path: str, **headers: str) -> web.Response:
    request = make_mocked_request("GET", path, headers=headers)
    response = non_resource(request, resolve("GET", path, {}))
    asyncio.run(cachecontrol.on_response_prepare(request, response))
    return response


def kube_etag(body: bytes) -> str:
    """What kube's calculateETag gives for a served document: Go's json.Marshal of it without its TypeMeta."""
    doc = json.loads(body)
    rest = {"metadata": doc["metadata"], "items": doc["items"]}
    marshalled = json.dumps(rest, separators=(",", ":"), ensure_ascii=False).encode()
    return '"' + hashlib.sha512(marshalled).hexdigest().upper() + '"'


@pytest.mark.parametrize("path", ["/api", "/apis"])
def test_aggregated_discovery_has_kubes_etag_vary_and_cache_control(path: str) -> None:
    response = get(path, Accept=KUBECTL_ACCEPT)
    assert response.status == 200
    assert response.headers["Content-Type"] == V2
    etag = response.headers["ETag"]
    assert re.fullmatch(r'"[0-9A-F]{128}"', etag), etag
    assert etag == kube_etag(response.body)
    assert response.headers["Vary"] == "Accept"
    assert response.headers["Cache-Control"] == "public"  # the filter's "no-cache, private" stays out
    assert response.body.endswith(b"}\n") and b"\n" not in response.body[:-1]  # json.Encoder: one trailing newline


def test_v2beta1_shares_the_etag_of_v2() -> None:
    v2, beta = get("/apis", Accept=V2), get("/apis", Accept=V2BETA1)
    assert beta.headers["Content-Type"] == V2BETA1
    assert json.loads(beta.body)["apiVersion"] == "apidiscovery.k8s.io/v2beta1"
    assert beta.headers["ETag"] == v2.headers["ETag"]
    assert get("/api", Accept=V2).headers["ETag"] != v2.headers["ETag"]


@pytest.mark.parametrize("path", ["/api", "/apis"])
def test_if_none_match_equal_to_the_etag_is_304_without_a_body(path: str) -> None:
    etag = get(path, Accept=V2).headers["ETag"]
    response = get(path, **{"Accept": V2, "If-None-Match": etag})
    assert response.status == 304
    assert response.body is None
    assert "Content-Type" not in response.headers
    assert (response.headers["ETag"], response.headers["Vary"], response.headers["Cache-Control"]) == (
        etag, "Accept", "public")


@pytest.mark.parametrize("value", ['"0"', "*", "W/{etag}", "{etag}, \"0\"", "{bare}"])
def test_if_none_match_is_compared_as_a_plain_string(value: str) -> None:
    etag = get("/apis", Accept=V2).headers["ETag"]
    sent = value.format(etag=etag, bare=etag.strip('"'))
    response = get("/apis", **{"Accept": V2, "If-None-Match": sent})
    assert response.status == 200 and response.headers["ETag"] == etag


@pytest.mark.parametrize(("path", "accept", "kind"), [
    ("/api", "application/json", "APIVersions"), ("/apis", "application/json", "APIGroupList"),
    ("/api", "", "APIVersions"), ("/apis/apps", KUBECTL_ACCEPT, "APIGroup"),
    ("/apis/apps/v1", KUBECTL_ACCEPT, "APIResourceList"),
    ("/api/v1", KUBECTL_ACCEPT, "APIResourceList"), ("/version", "application/json", None)])
def test_legacy_discovery_has_no_etag(path: str, accept: str, kind: str | None) -> None:
    response = get(path, Accept=accept)
    assert response.status == 200
    assert "ETag" not in response.headers and "Vary" not in response.headers
    assert response.headers["Cache-Control"] == "no-cache, private"
    assert response.headers["Content-Type"] == "application/json"
    assert json.loads(response.body).get("kind") == kind  # no per-group-version aggregated document


def test_core_group_item_has_no_name_and_versions_in_go_field_order() -> None:
    doc = json.loads(get("/api", Accept=V2).body)
    item = doc["items"][0]
    assert item["metadata"] == {}  # ObjectMeta.name is omitempty, creationTimestamp omitzero (apimachinery 1.37)
    assert list(item["versions"][0]) == ["version", "resources", "freshness"]
    assert get("/api", Accept=V2).body.startswith(
        b'{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":'
        b'[{"metadata":{},"versions":[{"version":"v1","resources":[')


def widget(group: str = "example.com") -> Resource:
    return Resource(group, "v1", "widgets", "Widget", True)


def test_the_etag_changes_when_a_custom_resource_is_added() -> None:
    registry = Registry(REGISTRY.static)
    before_body, before = discovery.aggregated_document(False, "v2", registry)
    assert discovery.aggregated_document(False, "v2", registry) == (before_body, before)  # cached
    registry.set_overlay([widget()])
    body, after = discovery.aggregated_document(False, "v2", registry)
    assert after != before and b'"name":"example.com"' in body
    assert '"' + after + '"' == kube_etag(body)
    registry.set_overlay([])
    assert discovery.aggregated_document(False, "v2", registry)[1] == before  # same document, same ETag


def test_the_document_is_built_once_per_version(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = Registry(REGISTRY.static)
    built = []
    real = discovery.aggregated

    def counting(*args: Any, **kwargs: Any) -> dict[str, Any]:
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(discovery, "aggregated", counting)
    for _ in range(3):
        discovery.aggregated_document(True, "v2", registry)
    assert len(built) == 1
    discovery.aggregated_document(True, "v2", registry, key="other")
    assert len(built) == 2


def test_encode_aggregated_hashes_the_list_without_its_type_meta() -> None:
    doc = {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
           "items": [{"metadata": {"name": "a<b"}, "versions": []}]}
    body, digest = discovery.encode_aggregated(doc)
    assert body == (b'{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},'
                    b'"items":[{"metadata":{"name":"a\\u003cb"},"versions":[]}]}\n')
    go_marshal = b'{"metadata":{},"items":[{"metadata":{"name":"a\\u003cb"},"versions":[]}]}'
    assert digest == hashlib.sha512(go_marshal).hexdigest().upper()


class _Aggregator(aggregation.Aggregator):
    def __init__(self, items: dict[str, dict[str, Any]]) -> None:
        super().__init__(storage=None)
        self._watcher.items = items


def _apiservice(name: str, group: str, priority: int) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"group": group, "version": "v1", "groupPriorityMinimum": priority,
                                                  "versionPriority": 15}}


def test_the_aggregators_apis_document_has_the_etag_and_follows_apiservice_changes() -> None:
    agg = _Aggregator({"v1.apps": _apiservice("v1.apps", "apps", 17800)})

    async def serve(**headers: str) -> web.Response:
        request = make_mocked_request("GET", "/apis", headers={"Accept": V2, **headers})
        response = await agg.serve(request, "/apis", UserInfo("admin"), 10.0)
        assert isinstance(response, web.Response)
        return response

    first = asyncio.run(serve())
    etag = first.headers["ETag"]
    assert (first.status, first.headers["Vary"], first.headers["Cache-Control"]) == (200, "Accept", "public")
    assert etag == kube_etag(first.body) and first.body.endswith(b"\n")
    assert asyncio.run(serve(**{"If-None-Match": etag})).status == 304
    agg._watcher.items["v1.apps"] = _apiservice("v1.apps", "apps", 1)  # apps goes last: another document
    moved = asyncio.run(serve(**{"If-None-Match": etag}))
    assert moved.status == 200 and moved.headers["ETag"] != etag
    assert json.loads(moved.body)["items"][-1]["metadata"]["name"] == "apps"
