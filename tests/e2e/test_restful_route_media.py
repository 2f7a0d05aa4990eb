"""End to end, through Envoy: kube's go-restful router refuses a built-in resource's request whose media types fit no
route before any handler runs (go-restful jsr311.go detectRoute; endpoints/installer.go Produces/Consumes; the
ServiceError as apierrors.NewGenericServerResponse: go-restful's message, ``"details": {}``), raw HTTP."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.test_hostile_input import configmap, send

MEDIA = "application/json, application/yaml, application/vnd.kubernetes.protobuf"
STREAM = "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"


def status(code: int, reason: str, message: str) -> dict[str, object]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "details": {}, "code": code}


def test_route_media_refusals_of_built_in_resources_are_gorestfuls(stack: Stack):
    path = "/api/v1/namespaces/default/configmaps"
    created = send(stack, "POST", path, configmap("route-media", data={"a": "b"}))
    assert created.status in (201, 409), created.body
    try:
        check(stack, path, f"{path}/route-media")
    finally:
        send(stack, "DELETE", f"{path}/route-media")


def check(stack: Stack, path: str, item: str) -> None:
    # a list route offers the stream media types too; application/* is no exact match
    for accept in ("text/html", "application/*", "Application/JSON"):
        reply = send(stack, "GET", path, headers={"Accept": accept})
        assert (reply.status, reply.headers["Content-Type"]) == (406, "application/json"), reply.body
        assert json.loads(reply.body) == status(406, "NotAcceptable", "406: Not Acceptable\n\nAvailable "
                                                f"representations: {MEDIA}, {STREAM}")
    # an object's route offers the media types only
    reply = send(stack, "GET", item, headers={"Accept": "text/html"})
    assert json.loads(reply.body) == status(406, "NotAcceptable",
                                            f"406: Not Acceptable\n\nAvailable representations: {MEDIA}")
    # a PATCH whose Content-Type is no patch type: 415 before the Accept is looked at
    for content_type in ("text/plain", "Application/Merge-Patch+JSON", "application/json"):
        reply = send(stack, "PATCH", item, b'{"data":{}}',
                     headers={"Content-Type": content_type, "Accept": "text/html"})
        assert reply.status == 415, reply.body
        assert json.loads(reply.body) == status(415, "UnsupportedMediaType", "415: Unsupported Media Type")
    # what the router lets through reaches the handler: kubectl's Table Accept, a parameterised patch type
    reply = send(stack, "GET", item,
                 headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    assert (reply.status, json.loads(reply.body)["kind"]) == (200, "Table")
    reply = send(stack, "PATCH", item, b"{}",
                 headers={"Content-Type": "application/merge-patch+json; charset=utf-8"})
    assert (reply.status, json.loads(reply.body)["kind"]) == (200, "ConfigMap")
