"""Protobuf responses end to end (issue #17): ``Accept: application/vnd.kubernetes.protobuf`` for built-in kinds.

The official Python client cannot speak protobuf, so raw HTTPS requests (the admin's certificate, through
Envoy) ask for it and kapi.k8sproto.decode reads the answers; the pinned kubectl's typed commands
(``create configmap``/``create namespace``: client-go's protobuf clients) decode them themselves.
"""

from __future__ import annotations

import http.client
import json
import re
import ssl
import urllib.parse
import urllib.request
from typing import Any

import yaml

from kapi import k8sproto
from kapi.k8sproto import wire
from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, compact_etcd, wait_for

PROTOBUF = "application/vnd.kubernetes.protobuf"


def send(stack: Stack, method: str, path: str, accept: str, body: bytes = b"",
         content_type: str = "application/json") -> tuple[int, dict[str, str], bytes]:
    """(status, lower-cased headers, body) of one request through Envoy as the admin."""
    url = urllib.parse.urlparse(stack.url)
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    conn = http.client.HTTPSConnection(url.hostname or "127.0.0.1", url.port or 443, context=context, timeout=20)
    try:
        headers = {"Accept": accept}
        if body:
            headers["Content-Type"] = content_type
        conn.request(method, path, body=body or None, headers=headers)
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def get_json(stack: Stack, path: str) -> Any:
    status, _headers, body = send(stack, "GET", path, "application/json")
    assert status == 200, body
    return json.loads(body)


def test_get_and_list_answer_protobuf_that_decodes_to_the_json(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "configmap", "pb", "--from-literal=a=b", "--from-literal=empty=")
    path = f"/api/v1/namespaces/{namespace}/configmaps/pb"
    status, headers, body = send(stack, "GET", path, PROTOBUF)
    assert status == 200
    assert headers["content-type"] == PROTOBUF
    assert body.startswith(b"k8s\x00")
    assert k8sproto.decode(body) == get_json(stack, path)

    # a typed list: ListMeta + items without kind/apiVersion, as kube's ConfigMapList
    status, headers, body = send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps",
                                 f"{PROTOBUF}, application/json")
    assert (status, headers["content-type"]) == (200, PROTOBUF)
    listed = k8sproto.decode(body)
    as_json = get_json(stack, f"/api/v1/namespaces/{namespace}/configmaps")
    assert (listed["kind"], listed["apiVersion"]) == ("ConfigMapList", "v1")
    names = {i["metadata"]["name"] for i in listed["items"]} - {"kube-root-ca.crt"}  # may be published in between
    assert names == {i["metadata"]["name"] for i in as_json["items"]} - {"kube-root-ca.crt"}
    assert "pb" in {i["metadata"]["name"] for i in listed["items"]}
    assert all("kind" not in i for i in listed["items"])
    assert int(listed["metadata"]["resourceVersion"]) > 0

    # JSON first in the Accept: JSON, as before
    status, headers, body = send(stack, "GET", path, f"application/json, {PROTOBUF}")
    assert (status, headers["content-type"]) == (200, "application/json")
    assert json.loads(body)["data"] == {"a": "b", "empty": ""}


def test_pod_deployment_and_service_round_trip_through_protobuf(kubectl: Kubectl, stack: Stack,
                                                                namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx:1.27", "--replicas=0")
    kubectl.run("-n", namespace, "create", "service", "nodeport", "np", "--tcp=80:8080")
    kubectl.run("-n", namespace, "run", "p", "--image=busybox", "--restart=Never", "--labels=app=p",
                "--env=A=1", "--port=8080", "--", "sleep", "3600")
    for path in (f"/apis/apps/v1/namespaces/{namespace}/deployments/web",
                 f"/api/v1/namespaces/{namespace}/services/np", f"/api/v1/namespaces/{namespace}/pods/p"):
        status, headers, body = send(stack, "GET", path, PROTOBUF)
        assert (status, headers["content-type"]) == (200, PROTOBUF), body
        # decode's known caveat (decoder.py): a "" string is dropped; the objects here have none
        assert k8sproto.decode(body) == get_json(stack, path), path


def test_create_with_protobuf_body_and_answer(stack: Stack, namespace: str) -> None:
    body = k8sproto.encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sent"},
                            "binaryData": {"bin": "AAH/"}})
    status, headers, answer = send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", PROTOBUF,
                                   body, PROTOBUF)
    assert (status, headers["content-type"]) == (201, PROTOBUF), answer
    created = k8sproto.decode(answer)
    assert created["binaryData"] == {"bin": "AAH/"}
    assert created["metadata"]["namespace"] == namespace and created["metadata"]["uid"]


def test_errors_are_protobuf_status_when_protobuf_was_negotiated(stack: Stack, namespace: str) -> None:
    status, headers, body = send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/missing", PROTOBUF)
    assert (status, headers["content-type"]) == (404, PROTOBUF)
    assert k8sproto.decode(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "missing" not found', "reason": "NotFound",
        "details": {"name": "missing", "kind": "configmaps"}, "code": 404}
    # JSON asked first: JSON Status
    status, headers, body = send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/missing",
                                 f"application/json, {PROTOBUF}")
    assert (status, headers["content-type"], json.loads(body)["reason"]) == (404, "application/json", "NotFound")


def test_kubectl_typed_commands_decode_kapis_protobuf(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    proc = kubectl.run("-n", namespace, "create", "configmap", "typed", "--from-literal=k=v", "-o", "json", "-v=8")
    printed = json.loads(proc.stdout)
    assert printed["data"] == {"k": "v"} and printed["metadata"]["uid"]
    assert f"Accept: {PROTOBUF}" in proc.stderr
    response = proc.stderr[proc.stderr.index('"Response" status="201 Created"'):]  # client-go's -v=8 trace
    assert f"Content-Type: {PROTOBUF}" in response
    assert "00000000  6b 38 73 00" in response[response.index('"Response Body"'):]  # the magic prefix it decoded
    # an error answered in protobuf: kubectl shows kube's words from the decoded Status
    proc = kubectl.run("create", "namespace", namespace, check=False)
    assert proc.returncode == 1
    assert f'Error from server (AlreadyExists): namespaces "{namespace}" already exists' in proc.stderr


def test_kubectl_get_raw_is_json_but_protobuf_accept_gives_the_envelope(kubectl: Kubectl, stack: Stack,
                                                                         namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "configmap", "raw", "--from-literal=a=b")
    raw = kubectl.run("get", "--raw", f"/api/v1/namespaces/{namespace}/configmaps/raw").stdout
    assert json.loads(raw)["data"] == {"a": "b"}  # kubectl's raw client asks for JSON
    status, _headers, body = send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/raw", PROTOBUF)
    assert status == 200 and body[:4] == b"k8s\x00"


def _frames(data: bytes) -> list[dict[str, Any]]:
    """Split a protobuf watch stream into its WatchEvents: {"type": ..., "object": decoded envelope}."""
    events, pos = [], 0
    while pos + 4 <= len(data):
        size = int.from_bytes(data[pos:pos + 4], "big")
        frame = data[pos + 4:pos + 4 + size]
        assert len(frame) == size, "truncated frame"
        pos += 4 + size
        event: dict[str, Any] = {}
        for number, wire_type, value, stop in wire.fields(frame, 0, len(frame)):
            assert wire_type == wire.LEN
            if number == 1:
                event["type"] = frame[value:stop].decode()
            elif number == 2:
                for n, _w, v, s in wire.fields(frame, value, stop):
                    if n == 1:
                        event["object"] = k8sproto.decode(frame[v:s])
        events.append(event)
    assert pos == len(data)
    return events


def test_watch_streams_length_prefixed_protobuf_events(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = get_json(stack, base)["metadata"]["resourceVersion"]
    kubectl.run("-n", namespace, "create", "configmap", "w1", "--from-literal=a=1")
    kubectl.run("-n", namespace, "delete", "configmap", "w1")
    status, headers, body = send(stack, "GET", f"{base}?watch=1&resourceVersion={rv}&timeoutSeconds=2"
                                 "&allowWatchBookmarks=true", f"{PROTOBUF};stream=watch")
    assert status == 200
    assert headers["content-type"] == f"{PROTOBUF};stream=watch"
    events = [e for e in _frames(body)  # the namespace's root CA ConfigMap may be published meanwhile
              if e["type"] != "BOOKMARK" and e["object"]["metadata"]["name"] != "kube-root-ca.crt"]
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]
    assert all(e["object"]["kind"] == "ConfigMap" and e["object"]["metadata"]["name"] == "w1" for e in events)
    assert events[0]["object"]["data"] == {"a": "1"}


def test_watch_error_event_is_a_protobuf_status(stack: Stack, namespace: str) -> None:
    """etcd compacted (as test_grpc_api does, through etcd's HTTP API): the 410 ERROR event is a protobuf frame."""
    compact_etcd(stack, b"/kapi-test/protobuf-compaction")
    status, headers, body = send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?watch=1"
                                 "&resourceVersion=1&timeoutSeconds=5", f"{PROTOBUF};stream=watch")
    assert (status, headers["content-type"]) == (200, f"{PROTOBUF};stream=watch")
    events = _frames(body)
    assert [e["type"] for e in events] == ["ERROR"]
    expired = events[0]["object"]
    assert re.fullmatch(r"too old resource version: 1 \(\d+\)", expired.pop("message")), expired
    assert expired == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "reason": "Expired", "code": 410}


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "gizmos.pb.example.com"},
    "spec": {"group": "pb.example.com", "scope": "Namespaced",
             "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}


METADATA_LIST = ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
                 "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")


def test_custom_resources_have_no_protobuf_but_their_metadata_and_errors_do(kubectl: Kubectl, stack: Stack,
                                                                            namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(CRD))
    try:
        kubectl.run("wait", "--for=condition=Established", "crd/gizmos.pb.example.com", "--timeout=30s")
        path = f"/apis/pb.example.com/v1/namespaces/{namespace}/gizmos"
        wait_for(lambda: send(stack, "GET", path, "application/json")[0] == 200)
        gizmo = {"apiVersion": "pb.example.com/v1", "kind": "Gizmo", "metadata": {"name": "g1", "labels": {"a": "b"}},
                 "spec": {"size": 3}}
        status, _headers, body = send(stack, "POST", path, "application/json", json.dumps(gizmo).encode())
        assert status == 201, body
        # protobuf-only: 406, its Status in protobuf (kube's ErrorNegotiated; PR #77817), naming JSON and YAML
        status, headers, body = send(stack, "GET", path, PROTOBUF)
        assert (status, headers["content-type"]) == (406, PROTOBUF)
        refused = k8sproto.decode(body)
        assert (refused["reason"], refused["message"]) == (
            "NotAcceptable", "only the following media types are accepted: application/json, application/yaml")
        # protobuf then JSON: the object in JSON
        status, headers, body = send(stack, "GET", f"{path}/g1", f"{PROTOBUF}, application/json")
        assert (status, headers["content-type"]) == (200, "application/json")
        assert json.loads(body)["spec"] == {"size": 3}
        # the metadata client's Accept: PartialObjectMetadataList in protobuf, custom resources included
        status, headers, body = send(stack, "GET", path, METADATA_LIST)
        assert (status, headers["content-type"]) == (200, PROTOBUF)
        listed = k8sproto.decode(body)
        assert (listed["kind"], listed["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
        assert [(i["metadata"]["name"], i["metadata"]["labels"]) for i in listed["items"]] == [("g1", {"a": "b"})]
        # a built-in kind's 406 offers protobuf too, and is JSON when protobuf was not asked for
        status, headers, body = send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps",
                                     "application/json;as=Foo;v=v1;g=meta.k8s.io")
        assert (status, headers["content-type"]) == (406, "application/json")
        assert json.loads(body)["message"] == ("only the following media types are accepted: application/json, "
                                               "application/yaml, application/vnd.kubernetes.protobuf")
    finally:
        kubectl.run("delete", "crd", "gizmos.pb.example.com", "--wait=false", check=False)


def test_partial_object_metadata_in_protobuf_for_get_list_and_watch(kubectl: Kubectl, stack: Stack,
                                                                   namespace: str) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = get_json(stack, base)["metadata"]["resourceVersion"]
    kubectl.run("-n", namespace, "create", "configmap", "meta", "--from-literal=a=1")
    expected = get_json(stack, f"{base}/meta")["metadata"]
    status, headers, body = send(stack, "GET", f"{base}/meta", METADATA_LIST.replace("List;", ";"))
    assert (status, headers["content-type"]) == (200, PROTOBUF)
    assert k8sproto.decode(body) == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                     "metadata": expected}
    status, _headers, body = send(stack, "GET", base, METADATA_LIST)
    assert status == 200
    assert [i["metadata"] for i in k8sproto.decode(body)["items"] if i["metadata"]["name"] == "meta"] == [expected]
    status, headers, body = send(stack, "GET", f"{base}?watch=1&resourceVersion={rv}&timeoutSeconds=1",
                                 METADATA_LIST.replace("List;", ";"))
    assert (status, headers["content-type"]) == (200, f"{PROTOBUF};stream=watch")
    events = [e for e in _frames(body) if e["object"]["metadata"]["name"] != "kube-root-ca.crt"]  # its controller's
    assert [(e["type"], e["object"]["kind"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "PartialObjectMetadata", "meta")]


def _status(body: bytes) -> tuple[int, str, str]:
    """(code, reason, message) of a Status body (JSON, or YAML where kube answers in YAML)."""
    status = yaml.safe_load(body)
    return status["code"], status["reason"], status["message"]


ALL_FORMS = ("only the following media types are accepted: application/json, application/yaml, "
             "application/vnd.kubernetes.protobuf")


def test_meta_v1beta1_yaml_tables_and_unknown_conversions_as_kube_negotiates(kubectl: Kubectl, stack: Stack,
                                                                             namespace: str) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    kubectl.run("-n", namespace, "create", "configmap", "forms", "--from-literal=a=1")
    # meta.k8s.io/v1beta1 Table and PartialObjectMetadataList are still served (transformObject takes v1beta1)
    status, _headers, body = send(stack, "GET", f"{base}/forms", "application/json;as=Table;v=v1beta1;g=meta.k8s.io")
    got = json.loads(body)
    assert (status, got["kind"], got["apiVersion"]) == (200, "Table", "meta.k8s.io/v1beta1")
    assert got["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
    status, _headers, body = send(stack, "GET", base,
                                  "application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io")
    got = json.loads(body)
    assert (status, got["kind"], got["apiVersion"]) == (200, "PartialObjectMetadataList", "meta.k8s.io/v1beta1")
    assert {i["apiVersion"] for i in got["items"]} == {"meta.k8s.io/v1beta1"}
    # an unknown as= (or g/v alone) is no servable entry: 406, or the next entry
    for accept in ("application/json;as=Foo;v=v1;g=meta.k8s.io", "application/json;v=v1;g=meta.k8s.io"):
        status, _headers, body = send(stack, "GET", f"{base}/forms", accept)
        assert (status, *_status(body)) == (406, 406, "NotAcceptable", ALL_FORMS)
    status, headers, body = send(stack, "GET", f"{base}/forms", "application/json;as=Foo;v=v1;g=meta.k8s.io, "
                                                                "application/json")
    assert (status, headers["content-type"], json.loads(body)["kind"]) == (200, "application/json", "ConfigMap")
    # a Table in YAML
    status, headers, body = send(stack, "GET", base, "application/yaml;as=Table;v=v1;g=meta.k8s.io")
    assert (status, headers["content-type"]) == (200, "application/yaml")
    got = yaml.safe_load(body)
    assert (got["kind"], got["columnDefinitions"][0]["name"]) == ("Table", "Name")
    assert "forms" in [r["cells"][0] for r in got["rows"]]


def test_table_options_watch_forms_and_scale_tables_as_kube(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = get_json(stack, base)["metadata"]["resourceVersion"]
    kubectl.run("-n", namespace, "create", "configmap", "watched", "--from-literal=a=1")
    table_accept = "application/json;as=Table;v=v1;g=meta.k8s.io"
    status, _headers, body = send(stack, "GET", f"{base}?includeObject=X", table_accept)
    assert (status, *_status(body)) == (400, 400, "BadRequest", "Unable to convert to Table as requested: "
                                        "includeObject: Invalid value: \"X\": must be 'Metadata', 'Object', "
                                        "'None', or empty")
    status, _headers, body = send(stack, "GET", f"{base}/watched?includeObject=X", "application/json")
    assert status == 200  # TableOptions are read only for a Table
    # YAML has no stream serializer: a watch in YAML is 406
    status, _headers, body = send(stack, "GET", f"{base}?watch=1&resourceVersion={rv}&timeoutSeconds=1",
                                  "application/yaml")
    assert (status, *_status(body)) == (406, 406, "NotAcceptable", "only the following media types are accepted: "
                                        "application/json;stream=watch, "
                                        "application/vnd.kubernetes.protobuf;stream=watch")
    # a Table watch streams one-row Tables (headers in the first), rows per includeObject
    status, headers, body = send(stack, "GET", f"{base}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
                                 "&includeObject=Object", table_accept)
    assert (status, headers["content-type"]) == (200, "application/json")
    events = [json.loads(line) for line in body.splitlines() if line.strip()]
    mine = [e for e in events if e["object"]["rows"][0]["cells"][0] == "watched"]
    assert [(e["type"], e["object"]["kind"], e["object"]["rows"][0]["object"]["kind"]) for e in mine] == [
        ("ADDED", "Table", "ConfigMap")]
    assert events[0]["object"]["columnDefinitions"]
    # a workload's Scale as a Table: kube's printScale columns
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx", "--replicas=2")
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale"
    status, _headers, body = send(stack, "GET", path, table_accept)
    got = json.loads(body)
    assert (status, got["kind"]) == (200, "Table")
    assert [c["name"] for c in got["columnDefinitions"]] == ["Name", "Desired", "Available", "Age"]
    assert got["rows"][0]["cells"][:2] == ["web", 2]
    assert got["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
