"""kube-apiserver's go-restful router refuses a built-in resource's request before kube's handlers run when its media
types fit no route (emicklei/go-restful v3 jsr311.go detectRoute, route.go matchesContentType and matchesAccept;
endpoints/installer.go declares the routes' Produces and Consumes; server/handler.go serviceErrorHandler writes the
ServiceError through apierrors.NewGenericServerResponse):

- after the path (404) and the method (405): a PATCH whose Content-Type (each comma-separated entry cut at ``;``,
  trimmed of spaces, compared as written; absent is application/octet-stream) is none of the patch types is 415
  ``415: Unsupported Media Type`` (every other route consumes ``*/*``);
- then an Accept none of whose entries (cut at ``;``, trimmed of spaces, case-sensitive) is ``*/*`` or one of the
  route's Produces is 406 ``406: Not Acceptable\\n\\nAvailable representations: <Produces>``: the legacy codecs'
  JSON, YAML, protobuf, plus their ``;stream=watch`` forms on list and watch routes, ``text/plain`` first on
  pods/log; an absent Accept is ``*/*``; connecter routes (exec, attach, portforward, proxy) produce ``*/*``;
- both Statuses keep go-restful's message, reason NotAcceptable / UnsupportedMediaType, ``"details": {}``;
- custom resources (the apiextensions handler, no go-restful) keep kube's handler negotiation messages.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request

from kapi import errors
from kapi.resources import REGISTRY
from services.gateway import negotiation, requestinfo, routes
from services.gateway.filters.recovery import status_response

MEDIA = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
STREAM = "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
ITEM_406 = f"406: Not Acceptable\n\nAvailable representations: {MEDIA}"
LIST_406 = f"406: Not Acceptable\n\nAvailable representations: {MEDIA}, {STREAM}"
LOG_406 = f"406: Not Acceptable\n\nAvailable representations: text/plain, {MEDIA}"
ROUTE_415 = "415: Unsupported Media Type"
HANDLER_406 = f"only the following media types are accepted: {MEDIA}"
MERGE = "application/merge-patch+json"
CONFIGMAP = "/api/v1/namespaces/ns/configmaps"


async def refusal(method: str, path: str, verb: str, headers: dict[str, str],
                  subresource: str = "") -> errors.StatusError:
    """Route a request whose handler must never run; the StatusError routes.py raises before it."""
    request = make_mocked_request(method, path, headers=headers)
    info = requestinfo.resolve(method, request.path, request.query)
    assert (info.verb, info.subresource) == (verb, subresource)
    backends: Any = SimpleNamespace(aggregator=None, custom_resources=None)
    with pytest.raises(errors.StatusError) as caught:
        await routes.resource_request(request, info, None, backends, 5.0)  # type: ignore[arg-type]
    return caught.value


def triple(err: errors.StatusError) -> tuple[int, str, str]:
    return err.code, err.reason, err.message


# --- Accept: 406 from the route's Produces -----------------------------------------------------------------------


async def test_a_get_whose_accept_no_route_produces_is_gorestfuls_406_with_an_empty_details():
    err = await refusal("GET", f"{CONFIGMAP}/a", "get", {"Accept": "text/html"})
    assert triple(err) == (406, "NotAcceptable", ITEM_406)
    assert status_response(err).body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"406: Not Acceptable\\n\\n'
        b'Available representations: application/json, application/yaml, application/vnd.kubernetes.protobuf",'
        b'"reason":"NotAcceptable","details":{},"code":406}\n')


@pytest.mark.parametrize(("path", "verb"), [(CONFIGMAP, "list"), (f"{CONFIGMAP}?watch=1", "watch"),
                                            ("/api/v1/configmaps", "list"),
                                            ("/api/v1/watch/namespaces/ns/configmaps", "watch")])
async def test_list_and_watch_routes_also_offer_the_stream_media_types(path, verb):
    assert triple(await refusal("GET", path, verb, {"Accept": "text/html"})) == (406, "NotAcceptable", LIST_406)


@pytest.mark.parametrize(("method", "path", "verb"), [
    ("POST", CONFIGMAP, "create"), ("PUT", f"{CONFIGMAP}/a", "update"), ("DELETE", f"{CONFIGMAP}/a", "delete"),
    ("DELETE", CONFIGMAP, "deletecollection"), ("PATCH", f"{CONFIGMAP}/a", "patch"),
])
async def test_write_routes_offer_the_media_types_only(method, path, verb):
    headers = {"Accept": "text/html", "Content-Type": MERGE if method == "PATCH" else "text/plain"}
    assert triple(await refusal(method, path, verb, headers)) == (406, "NotAcceptable", ITEM_406)


@pytest.mark.parametrize("accept", ["application/*", "Application/JSON", "application/json\t", "text/*",
                                    "application/jsonx, text/plain;q=1", "*/json"])
async def test_gorestful_compares_each_entry_exactly_without_wildcard_subtypes_or_case_folding(accept):
    assert triple(await refusal("GET", f"{CONFIGMAP}/a", "get", {"Accept": accept})) == \
        (406, "NotAcceptable", ITEM_406)


async def test_pods_log_offers_its_storages_text_plain_first():
    err = await refusal("GET", "/api/v1/namespaces/ns/pods/p/log", "get", {"Accept": "text/html"}, "log")
    assert triple(err) == (406, "NotAcceptable", LOG_406)


@pytest.mark.parametrize("accept", [
    "", "*/*", "*/*;q=0", " */* ", "text/html, */*;q=0.8", "application/json", "application/yaml",
    "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf, application/json",
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
    "application/json;stream=watch", "text/html, application/yaml", "  application/json  ;q=0.5",
])
def test_accepts_the_route_lets_through(accept):
    for produces in (negotiation.ROUTE_MEDIA_TYPES, negotiation.route_produces("", "configmaps", "", "list")):
        negotiation.check_route_accept(accept, produces)


def test_text_plain_passes_pods_log_only_and_connecter_routes_take_anything():
    negotiation.check_route_accept("text/plain", negotiation.route_produces("", "pods", "log", "get"))
    with pytest.raises(errors.StatusError):
        negotiation.check_route_accept("text/plain", negotiation.route_produces("", "pods", "", "get"))
    for sub in ("exec", "attach", "portforward", "proxy"):
        negotiation.check_route_accept("text/html", negotiation.route_produces("", "pods", sub, "get"))


async def test_an_accept_the_route_takes_but_the_handler_refuses_is_the_handlers_406():
    err = await refusal("GET", f"{CONFIGMAP}/a", "get", {"Accept": "application/json;as=Foo;v=v1;g=meta.k8s.io"})
    assert triple(err) == (406, "NotAcceptable", HANDLER_406)
    assert "details" not in err.status()


async def test_the_method_is_checked_before_the_media_types():
    err = await refusal("POST", f"{CONFIGMAP}/a", "create", {"Accept": "text/html", "Content-Type": "text/plain"})
    assert err.code == 405


async def test_a_custom_resource_keeps_the_handlers_negotiation(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(REGISTRY, "is_static", lambda resource: False)  # as a CRD's row: no go-restful route
    err = await refusal("GET", f"{CONFIGMAP}/a", "get", {"Accept": "text/html"})
    assert triple(err) == (406, "NotAcceptable", "only the following media types are accepted: application/json, "
                                                 "application/yaml")


# --- Content-Type: 415 from a PATCH route's Consumes, before the Accept -------------------------------------------


@pytest.mark.parametrize("content_type", [
    "text/plain", "application/json", "Application/Merge-Patch+JSON", "*/*", "application/merge-patch+json+x",
])
async def test_a_patch_whose_content_type_is_no_patch_type_is_gorestfuls_415_before_its_accept(content_type):
    err = await refusal("PATCH", f"{CONFIGMAP}/a", "patch", {"Accept": "text/html", "Content-Type": content_type})
    assert triple(err) == (415, "UnsupportedMediaType", ROUTE_415)
    assert status_response(err).body == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type",'
        b'"reason":"UnsupportedMediaType","details":{},"code":415}\n')


async def test_a_patch_without_a_content_type_is_octet_stream_to_the_router():
    err = await refusal("PATCH", f"{CONFIGMAP}/a", "patch", {"Accept": "application/json"})
    assert triple(err) == (415, "UnsupportedMediaType", ROUTE_415)


async def test_a_subresource_patch_is_the_same_route_check():
    err = await refusal("PATCH", "/apis/apps/v1/namespaces/ns/deployments/d/scale", "patch",
                        {"Content-Type": "text/plain"}, "scale")
    assert triple(err) == (415, "UnsupportedMediaType", ROUTE_415)


@pytest.mark.parametrize("content_type", [f"{MERGE}; charset=utf-8", f" {MERGE} ", f"text/plain, {MERGE}",
                                          "application/apply-patch+yaml", "application/strategic-merge-patch+json"])
def test_patch_types_the_route_takes(content_type):
    negotiation.check_route_content_type(content_type, routes.BUILTIN_PATCH_TYPES)


async def test_a_patch_type_the_route_takes_but_the_handler_refuses_is_the_handlers_415():
    err = await refusal("PATCH", f"{CONFIGMAP}/a", "patch", {"Content-Type": f"text/plain, {MERGE}"})
    assert (err.code, err.message.split(" - ")[0]) == (415, "the body of the request was in an unknown format")


@pytest.mark.parametrize(("method", "path", "verb"), [("POST", CONFIGMAP, "create"),
                                                      ("PUT", f"{CONFIGMAP}/a", "update")])
async def test_create_and_update_routes_consume_anything_so_the_body_type_is_the_handlers(method, path, verb):
    err = await refusal(method, path, verb, {"Accept": "application/json;as=Foo;v=v1;g=meta.k8s.io",
                                             "Content-Type": "text/plain"})
    assert triple(err) == (406, "NotAcceptable", HANDLER_406)  # handler order: the response first, then the body
