"""Which refusal a write gets first, and what a watch with a meta.k8s.io conversion streams, as kube-apiserver 1.37:

- PatchResource (handlers/patch.go) checks the Content-Type against the route's patch types (415) before it
  negotiates the response (406); createHandler (create.go) and UpdateResource (update.go) negotiate the response
  first, so a POST or PUT with both wrong is 406;
- a watch asked for as PartialObjectMetadataList (watch.go serveWatchHandler, watchEmbeddedEncoder): each event's
  object fails asPartialObjectMetadataList, the untransformed object has no kind in the meta.k8s.io encoder, and
  the stream ends at the first event (200, no event written); as PartialObjectMetadata, a bookmark is transformed
  too; as Table, events after the first carry ``columnDefinitions: null`` (NoHeaders leaves them nil).
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request

from kapi import errors
from kapi.resources import REGISTRY
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation, routes
from services.gateway.handlers import watch as watch_handler
from services.gateway.requestinfo import RequestInfo
from services.gateway.scope import RequestScope

# Accept and PATCH Content-Type values go-restful's router lets through (it cuts each entry at ";") and kube's
# handlers refuse; text/html or a bare text/plain PATCH are the router's own 406/415 (test_restful_route_media.py).
BAD_ACCEPT = "application/json;as=Foo;g=meta.k8s.io;v=v1"
BAD_PATCH_TYPE = "text/plain, application/merge-patch+json"
NOT_ACCEPTABLE = ("only the following media types are accepted: application/json, application/yaml, "
                  "application/vnd.kubernetes.protobuf")
PATCH_415 = ("the body of the request was in an unknown format - accepted media types include: "
             "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, "
             "application/apply-patch+yaml")
BODY_415 = ("the body of the request was in an unknown format - accepted media types include: application/json, "
            "application/yaml, application/vnd.kubernetes.protobuf")
META = "g=meta.k8s.io;v=v1"
CONFIGMAPS = REGISTRY.get("", "v1", "configmaps")
CM = {"kind": "ConfigMap", "apiVersion": "v1",
      "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7", "uid": "u1",
                   "creationTimestamp": "2026-01-01T00:00:00Z"}, "data": {"k": "v"}}


async def refusal(method: str, path: str, verb: str, content_type: str, accept: str = BAD_ACCEPT,
                  subresource: str = "") -> tuple[int, str, str]:
    """Route a request whose handler must never run; the StatusError routes.py raises before it."""
    group, version, resource = ("apps", "v1", "deployments") if "deployments" in path else ("", "v1", "configmaps")
    request = make_mocked_request(method, path, headers={"Accept": accept, "Content-Type": content_type})
    name = "" if verb == "create" else "a"
    parts = tuple(p for p in (resource, name, subresource) if p)
    info = RequestInfo(path=path, verb=verb, is_resource_request=True, api_prefix="api" if not group else "apis",
                       api_group=group, api_version=version, namespace="ns", resource=resource,
                       subresource=subresource, name=name, parts=parts)
    backends: Any = SimpleNamespace(aggregator=None, custom_resources=None)
    with pytest.raises(errors.StatusError) as caught:
        await routes.resource_request(request, info, None, backends, 5.0)  # type: ignore[arg-type]
    return caught.value.code, caught.value.reason, caught.value.message


async def test_a_patch_with_an_unknown_patch_type_is_415_before_its_accept_is_406():
    assert await refusal("PATCH", "/api/v1/namespaces/ns/configmaps/a", "patch", BAD_PATCH_TYPE) == \
        (415, "UnsupportedMediaType", PATCH_415)


async def test_a_scale_patch_with_an_unknown_patch_type_is_415_before_406():
    assert await refusal("PATCH", "/apis/apps/v1/namespaces/ns/deployments/a/scale", "patch", BAD_PATCH_TYPE,
                         subresource="scale") == (415, "UnsupportedMediaType", PATCH_415)


async def test_a_patch_with_a_patch_type_and_a_bad_accept_is_406():
    assert await refusal("PATCH", "/api/v1/namespaces/ns/configmaps/a", "patch",
                         "application/merge-patch+json") == (406, "NotAcceptable", NOT_ACCEPTABLE)


@pytest.mark.parametrize(("method", "verb"), [("POST", "create"), ("PUT", "update")])
async def test_a_create_or_update_negotiates_the_response_before_the_body_type(method, verb):
    path = "/api/v1/namespaces/ns/configmaps" + ("" if verb == "create" else "/a")
    assert await refusal(method, path, verb, "text/plain") == (406, "NotAcceptable", NOT_ACCEPTABLE)


def test_the_body_type_of_a_create_is_still_415_when_the_accept_is_fine():
    with pytest.raises(errors.StatusError) as caught:
        negotiation.negotiate_input("text/plain")
    assert (caught.value.code, caught.value.message) == (415, BODY_415)


# --- watch ------------------------------------------------------------------------------------------------------


class Writer:
    """The payload writer of a mocked request: keeps what the response writes."""

    def __init__(self) -> None:
        self.data = b""
        self.buffer_size = 0
        self.output_size = 0
        self.length = None

    async def write_headers(self, status_line: str, headers: Any) -> None:
        self.status_line = status_line

    def send_headers(self) -> None:
        pass

    def set_eof(self) -> None:
        pass

    async def write(self, data: bytes) -> None:
        self.data += bytes(data)

    async def write_eof(self, data: bytes = b"") -> None:
        self.data += bytes(data)

    async def drain(self) -> None:
        pass

    def enable_chunking(self) -> None:
        pass

    def enable_compression(self, *args: Any, **kwargs: Any) -> None:
        pass


class Call:
    """A storage Watch call: yields the given batches, then ends."""

    def __init__(self, batches: list[list[storage_pb2.WatchEvent]]) -> None:
        self.batches = batches

    def __aiter__(self) -> Call:
        return self

    async def __anext__(self) -> Any:
        if not self.batches:
            raise StopAsyncIteration
        return SimpleNamespace(events=self.batches.pop(0))

    def cancel(self) -> None:
        pass


def event(kind: str, obj: dict[str, Any] | None, rv: int = 7) -> storage_pb2.WatchEvent:
    return storage_pb2.WatchEvent(type=kind, object=json.dumps(obj).encode() if obj else b"", resource_version=rv)


async def stream(accept: str, batches: list[list[storage_pb2.WatchEvent]], query: str = "") -> tuple[bytes, int]:
    writer = Writer()
    request = make_mocked_request("GET", "/api/v1/namespaces/ns/configmaps?watch=1" + query,
                                  headers={"Accept": accept}, writer=writer)
    info = SimpleNamespace(verb="watch", name="", namespace="ns", subresource="")
    backends = SimpleNamespace(watches=set(), shutting_down=False, custom_resources=None)
    scope = RequestScope(request=request, info=info, attrs=None, resource=CONFIGMAPS,  # type: ignore[arg-type]
                         query=request.query, output=negotiation.negotiate(accept), backends=backends,  # type: ignore
                         timeout=5.0)
    response = await watch_handler._stream(scope, storage_pb2.WatchRequest(resource_version="7"), Call(batches), 1e12)
    return writer.data, response.status


def lines(data: bytes) -> list[dict[str, Any]]:
    """The JSON events of a chunked body (chunk sizes dropped)."""
    out = []
    for line in data.split(b"\r\n"):
        line = line.strip()
        if line.startswith(b"{"):
            out.extend(json.loads(part) for part in line.split(b"\n") if part)
    return out


async def test_a_partial_object_metadata_list_watch_ends_at_its_first_event_without_writing_it():
    data, status = await stream(f"application/json;as=PartialObjectMetadataList;{META}",
                                [[event("ADDED", CM)], [event("MODIFIED", CM, 8)]])
    assert status == 200
    assert lines(data) == []


async def test_a_partial_object_metadata_watch_streams_partial_objects_and_bookmarks():
    data, _ = await stream(f"application/json;as=PartialObjectMetadata;{META}",
                           [[event("ADDED", CM)], [event("BOOKMARK", None, 9)]])
    assert lines(data) == [
        {"type": "ADDED", "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                     "metadata": CM["metadata"]}},
        {"type": "BOOKMARK", "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                        "metadata": {"resourceVersion": "9"}}},
    ]


async def test_a_table_watch_sends_column_definitions_once_then_null():
    second = {**CM, "metadata": {**CM["metadata"], "name": "b", "resourceVersion": "8"}}
    data, _ = await stream(f"application/json;as=Table;{META}", [[event("ADDED", CM)], [event("ADDED", second, 8)]])
    first, later = lines(data)
    assert first["object"]["kind"] == "Table"
    assert [c["name"] for c in first["object"]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert later["object"]["columnDefinitions"] is None
    assert [r["cells"][0] for r in (first["object"]["rows"] + later["object"]["rows"])] == ["a", "b"]


async def test_a_table_watch_sends_its_bookmarks_as_tables_too():
    data, _ = await stream(f"application/json;as=Table;{META}", [[event("BOOKMARK", None, 9)], [event("ADDED", CM)]])
    bookmark, added = lines(data)
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["kind"] == "Table" and bookmark["object"]["metadata"] == {"resourceVersion": "9"}
    assert [c["name"] for c in bookmark["object"]["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert bookmark["object"]["rows"] == [{"cells": ["", 0, "<unknown>"], "object": {
        "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "9"}}}]
    assert added["object"]["columnDefinitions"] is None and added["object"]["rows"][0]["cells"][0] == "a"
