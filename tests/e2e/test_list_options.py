"""ListOptions validation of list, watch and deletecollection, byte for byte as kube-apiserver 1.37.

kube's ListResource and DeleteCollection run ValidateListOptions (apimachinery
``pkg/apis/meta/internalversion/validation``) after SetListOptionsDefaults and answer every problem in
one 422 ``ListOptions.meta.k8s.io "" is invalid``; the expected bodies below are what that Status encodes
to (Go's field order, a trailing newline).
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest

from kapi.local.launcher import Stack
from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc
from tests.e2e.conftest import compact_etcd
from tests.e2e.test_grpc_api import channel, cm_ref, configmap, refused, rest

FORBIDDEN = "FieldValueForbidden"
NOT_SUPPORTED = "FieldValueNotSupported"

NO_RV = (FORBIDDEN, "resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided")
WITH_CONTINUE = (FORBIDDEN, "resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided")
EXACT_ZERO = (FORBIDDEN, "resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
INITIAL_ON_LIST = (FORBIDDEN, "sendInitialEvents", "sendInitialEvents is forbidden for list")
NEEDS_NOT_OLDER = (FORBIDDEN, "resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to "
                                                      "NotOlderThan")
WATCH_MATCH = (FORBIDDEN, "resourceVersionMatch",
               "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")


def unsupported(value: str, *supported: str) -> tuple[str, str, str]:
    return (NOT_SUPPORTED, "resourceVersionMatch",
            f'"{value}": supported values: ' + ", ".join(f'"{s}"' for s in supported))


def kube_body(*errs: tuple[str, str, str]) -> bytes:
    """The bytes kube-apiserver writes for NewInvalid(GroupKind{meta.k8s.io, ListOptions}, "", errs)."""
    label = {FORBIDDEN: "Forbidden", NOT_SUPPORTED: "Unsupported value"}
    bodies = [f"{label[kind]}: {detail}" for kind, _, detail in errs]
    parts = [f"{field}: {body}" for (_, field, _), body in zip(errs, bodies, strict=True)]
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": f'ListOptions.meta.k8s.io "" is invalid: {summary}', "reason": "Invalid",
              "details": {"group": "meta.k8s.io", "kind": "ListOptions",
                          "causes": [{"reason": kind, "message": body, "field": field}
                                     for (kind, field, _), body in zip(errs, bodies, strict=True)]},
              "code": 422}
    return json.dumps(status, separators=(",", ":")).encode() + b"\n"


LIST_CASES = [
    ("resourceVersionMatch=NotOlderThan", [NO_RV]),
    ("resourceVersionMatch=Exact&resourceVersion=0", [EXACT_ZERO]),
    ("resourceVersionMatch=Sometimes&resourceVersion=1", [unsupported("Sometimes", "Exact", "NotOlderThan", "")]),
    ("resourceVersionMatch=Exact&continue=abc", [NO_RV, WITH_CONTINUE]),
    ("sendInitialEvents=false", [INITIAL_ON_LIST]),  # a *bool: present at all is set
    ("resourceVersionMatch=Sometimes&sendInitialEvents=true",
     [NO_RV, unsupported("Sometimes", "Exact", "NotOlderThan", ""), INITIAL_ON_LIST]),
    # validated before the resourceVersion is parsed (storage's "invalid resource version" 400 comes later)
    ("resourceVersion=abc&resourceVersionMatch=Sometimes", [unsupported("Sometimes", "Exact", "NotOlderThan", "")]),
]

WATCH_CASES = [
    ("resourceVersionMatch=NotOlderThan&resourceVersion=5", [WATCH_MATCH]),
    ("resourceVersionMatch=Exact&resourceVersion=5", [WATCH_MATCH, unsupported("Exact", "NotOlderThan")]),
    ("sendInitialEvents=true", [NEEDS_NOT_OLDER]),
    ("sendInitialEvents=false&resourceVersion=3", [NEEDS_NOT_OLDER]),
    ("sendInitialEvents=true&resourceVersionMatch=Exact", [NEEDS_NOT_OLDER, unsupported("Exact", "NotOlderThan")]),
    ("sendInitialEvents=true&resourceVersionMatch=NotOlderThan&continue=x", [WITH_CONTINUE]),
    # SetListOptionsDefaults: a watch from "" or "0" without either is one with sendInitialEvents=true and
    # resourceVersionMatch=NotOlderThan, so a continue token is refused
    ("continue=x", [WITH_CONTINUE]),
    ("resourceVersion=0&continue=x", [WITH_CONTINUE]),
]


@pytest.mark.parametrize(("query", "errs"), LIST_CASES)
def test_list_options_are_validated(stack: Stack, query: str, errs: list[tuple[str, str, str]]) -> None:
    status, body = rest(stack, "GET", f"/api/v1/namespaces/default/configmaps?{query}")
    assert (status, body) == (422, kube_body(*errs))


@pytest.mark.parametrize(("query", "errs"), WATCH_CASES)
def test_watch_options_are_validated(stack: Stack, query: str, errs: list[tuple[str, str, str]]) -> None:
    status, body = rest(stack, "GET", f"/api/v1/namespaces/default/configmaps?watch=1&{query}")
    assert (status, body) == (422, kube_body(*errs))


def test_valid_combinations_are_served(stack: Stack, namespace: str) -> None:
    """NotOlderThan with rv 0 lists; a watch list needs no allowWatchBookmarks (kube keeps old rv=0 clients
    working); sendInitialEvents=false with NotOlderThan is an ordinary watch; continue without a match lists."""
    assert rest(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps",
                json.loads(configmap(namespace, "one", {"a": "b"})))[0] == 201
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    one = "fieldSelector=metadata.name%3Done"  # not kube-root-ca.crt, which the controllers publish meanwhile
    status, body = rest(stack, "GET", f"{base}?{one}&resourceVersion=0&resourceVersionMatch=NotOlderThan")
    assert status == 200 and [i["metadata"]["name"] for i in json.loads(body)["items"]] == ["one"]
    status, body = rest(stack, "GET", f"{base}?{one}&watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                      "&allowWatchBookmarks=true&timeoutSeconds=1")
    events = [json.loads(line) for line in body.splitlines()]
    assert status == 200 and [e["type"] for e in events][:2] == ["ADDED", "BOOKMARK"]
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    status, body = rest(stack, "GET", f"{base}?{one}&watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                      "&timeoutSeconds=1")
    assert status == 200 and [json.loads(line)["type"] for line in body.splitlines()] == ["ADDED"]
    rv = json.loads(rest(stack, "GET", base)[1])["metadata"]["resourceVersion"]
    status, body = rest(stack, "GET", f"{base}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan"
                                      f"&resourceVersion={rv}&timeoutSeconds=1")
    assert (status, body) == (200, b"")


def test_parameter_decoding_comes_first(stack: Stack, namespace: str) -> None:
    """A parameter that does not decode is the codec's 400 before any ListOptions rule (ListResource's order)."""
    status, body = rest(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?limit=x&sendInitialEvents=true")
    assert status == 400 and json.loads(body)["message"] == 'strconv.ParseInt: parsing "x": invalid syntax'


def test_delete_collection_checks_list_options(stack: Stack, namespace: str) -> None:
    """DeleteCollection validates its ListOptions before reading the body or deleting anything."""
    assert rest(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps",
                json.loads(configmap(namespace, "kept", {})))[0] == 201
    status, body = rest(stack, "DELETE", f"/api/v1/namespaces/{namespace}/configmaps?sendInitialEvents=true")
    assert (status, body) == (422, kube_body(INITIAL_ON_LIST))
    assert rest(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/kept")[0] == 200


async def test_grpc_watch_gets_the_same_status(stack: Stack, namespace: str) -> None:
    """The public gRPC API passes its options as these query parameters: same Status as REST, INVALID_ARGUMENT."""
    async with channel(stack, admin=True) as ch:
        api = api_pb2_grpc.ResourcesStub(ch)
        call: Any = api.Watch(api_pb2.WatchRequest(ref=cm_ref(namespace), resource_version="5",
                                                   resource_version_match="NotOlderThan", timeout_seconds=5))

        async def drain() -> None:
            async for _ in call:
                pass

        code, status = await refused(drain())
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert status == json.loads(kube_body(WATCH_MATCH))


@pytest.mark.parametrize(("query", "message"), [
    ("resourceVersion=abc", 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: '
                            'parsing "abc": invalid syntax'),
    ("resourceVersion=5&continue=%25%25", "invalid continue token: continue key is not valid: illegal base64 data at "
                                       "input byte 0"),  # the token first, then "not allowed when using continue"
])
def test_list_resource_version_and_continue_errors(stack: Stack, query: str, message: str) -> None:
    """storage.ValidateListOptions: 400 BadRequest, the continue token decoded before the resourceVersion."""
    status, body = rest(stack, "GET", f"/api/v1/namespaces/default/configmaps?{query}")
    assert status == 400 and json.loads(body)["message"] == message, body


def test_list_timeout_seconds_must_be_an_integer(stack: Stack) -> None:
    """ListOptions decodes timeoutSeconds for a list too (unused there): a bad one is the same 400 a watch gets."""
    list_status, list_body = rest(stack, "GET", "/api/v1/namespaces/default/configmaps?timeoutSeconds=x")
    watch_status, watch_body = rest(stack, "GET", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=x")
    assert (list_status, watch_status) == (400, 400)
    assert json.loads(list_body)["message"] == json.loads(watch_body)["message"]
    assert rest(stack, "GET", "/api/v1/namespaces/default/configmaps?timeoutSeconds=5")[0] == 200


def test_an_expired_continue_token_is_410_with_a_token_to_go_on(stack: Stack, namespace: str) -> None:
    """etcd3 handleCompactedErrorForPaging: once etcd compacted the token's revision the 410 says so and carries
    a new token (the same key, revision -1) in its metadata, which lists the rest at the latest revision."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for name in ("a", "b", "c"):
        cm = json.loads(configmap(namespace, name, {"k": "v"}))
        cm["metadata"]["labels"] = {"set": "paged"}
        assert rest(stack, "POST", base, cm)[0] == 201
    status, body = rest(stack, "GET", f"{base}?labelSelector=set%3Dpaged&limit=1")
    first = json.loads(body)
    assert status == 200 and [i["metadata"]["name"] for i in first["items"]] == ["a"]
    # a later configmap write: the watch cache moves past the token's revision (it could serve that one exactly)
    assert rest(stack, "POST", base, json.loads(configmap(namespace, "later", {"k": "v"})))[0] == 201
    compact_etcd(stack, b"/kapi-test/continue-expired")
    old_token = first["metadata"]["continue"]
    status, body = rest(stack, "GET", f"{base}?labelSelector=set%3Dpaged&limit=1&continue={old_token}")
    expired = json.loads(body)
    assert (status, expired["reason"], expired["code"]) == (410, "Expired", 410), expired
    assert expired["message"] == (
        "The provided continue parameter is too old to display a consistent list result. You can start a new list "
        "without the continue parameter, or use the continue token in this response to retrieve the remainder of "
        "the results. Continuing with the provided token results in an inconsistent list - objects that were "
        "created, modified, or deleted between the time the first chunk was returned and now may show up in the "
        "list.")
    token = expired["metadata"]["continue"]
    status, body = rest(stack, "GET", f"{base}?labelSelector=set%3Dpaged&limit=10&continue={token}")
    assert status == 200 and [i["metadata"]["name"] for i in json.loads(body)["items"]] == ["b", "c"]
