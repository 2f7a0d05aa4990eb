"""Fields kube-apiserver 1.37 always writes, against the whole stack (exact bytes):

- a StatefulSet's ``spec.volumeClaimTemplates[*]`` carry ``kind: PersistentVolumeClaim`` / ``apiVersion: v1``
  (Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec, kubernetes#87583), in the create answer and in reads;
- a watch BOOKMARK's object is the kind's zero typed object (the watch cache's ``c.newFunc()``) in Go field order;
- Events write the fields without ``omitempty`` (and the zero structs and times), each API its own.
"""

from __future__ import annotations

import json
import re

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for
from tests.e2e.test_crd import crd_manifest
from tests.e2e.test_grpc_api import rest

CLAIMS = (b'"volumeClaimTemplates":[{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"www"},'
          b'"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},'
          b'"volumeMode":"Filesystem"},"status":{"phase":"Pending"}}]')


def _statefulset(namespace: str) -> dict[str, object]:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web", "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "serviceName": "web",
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "www"}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}


def test_statefulset_claim_templates_carry_their_type_meta(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    status, body = rest(stack, "POST", f"/apis/apps/v1/namespaces/{namespace}/statefulsets", _statefulset(namespace))
    assert status == 201, body
    assert CLAIMS in body
    status, body = rest(stack, "GET", f"/apis/apps/v1/namespaces/{namespace}/statefulsets/web")
    assert status == 200 and CLAIMS in body
    shown = json.loads(kubectl.run("get", "sts", "web", "-n", namespace, "-o", "json").stdout)
    claim = shown["spec"]["volumeClaimTemplates"][0]
    assert list(claim)[:2] == ["apiVersion", "kind"]  # kubectl prints sorted keys
    assert (claim["apiVersion"], claim["kind"]) == ("v1", "PersistentVolumeClaim")


def test_a_pod_watch_bookmark_is_the_zero_pod(stack: Stack, namespace: str) -> None:
    status, body = rest(stack, "GET", f"/api/v1/namespaces/{namespace}/pods?watch=1&sendInitialEvents=true"
                                      "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1")
    assert status == 200
    line = body.splitlines()[0]
    rv = re.fullmatch(rb'\{"type":"BOOKMARK","object":\{"kind":"Pod","apiVersion":"v1","metadata":'
                      rb'\{"resourceVersion":"(\d+)","annotations":\{"k8s.io/initial-events-end":"true"\}\},'
                      rb'"spec":\{"containers":null\},"status":\{\}\}\}', line)
    assert rv is not None, line


def test_a_custom_resource_watch_bookmark_is_unstructured(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    manifest = yaml.safe_load(crd_manifest(group="zero.example.com", plural="gadgets", kind="Gadget"))
    del manifest["spec"]["names"]["shortNames"]  # "ct" is the crontabs'
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(manifest))
    kubectl.run("wait", "--for=condition=Established", "crd/gadgets.zero.example.com", "--timeout=30s")
    path = (f"/apis/zero.example.com/v1/namespaces/{namespace}/gadgets?watch=1&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1")
    status, body = wait_for(lambda: (lambda r: r if r[0] == 200 else None)(rest(stack, "GET", path)), 30)
    assert re.fullmatch(rb'\{"type":"BOOKMARK","object":\{"apiVersion":"zero.example.com/v1","kind":"Gadget",'
                        rb'"metadata":\{"annotations":\{"k8s.io/initial-events-end":"true"\},'
                        rb'"resourceVersion":"\d+"\}\}\}', body.splitlines()[0]), body


def _without_server_metadata(body: bytes) -> bytes:
    """The answer with its metadata's server-set members (uid, resourceVersion, creationTimestamp, managedFields)
    cut out, so the rest can be compared byte for byte."""
    obj = json.loads(body)
    obj["metadata"] = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace")}
    return json.dumps(obj, separators=(",", ":")).encode()


def test_events_write_their_zero_fields_each_api_its_own(stack: Stack, namespace: str) -> None:
    core = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": namespace},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace}, "reason": "Started",
            "message": "hi", "type": "Normal"}
    status, body = rest(stack, "POST", f"/api/v1/namespaces/{namespace}/events", core)
    assert status == 201, body
    shown = (b'{"kind":"Event","apiVersion":"v1","metadata":{"name":"e1","namespace":"%s"},"involvedObject":'
             b'{"kind":"Pod","namespace":"%s","name":"p"},"reason":"Started","message":"hi","source":{},'
             b'"firstTimestamp":null,"lastTimestamp":null,"type":"Normal","eventTime":null,'
             b'"reportingComponent":"","reportingInstance":""}') % (namespace.encode(), namespace.encode())
    assert _without_server_metadata(body) == shown
    status, body = rest(stack, "GET", f"/api/v1/namespaces/{namespace}/events/e1")
    assert status == 200 and _without_server_metadata(body) == shown
    status, body = rest(stack, "GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/e1")
    assert status == 200
    assert _without_server_metadata(body) == (
        b'{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"e1","namespace":"%s"},'
        b'"eventTime":null,"reason":"Started","regarding":{"kind":"Pod","namespace":"%s","name":"p"},"note":"hi",'
        b'"type":"Normal","deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}'
        % (namespace.encode(), namespace.encode()))
    assert b'"creationTimestamp":"' in body and b'"resourceVersion":"' in body


def test_an_events_api_event_reads_back_through_core_with_core_s_zero_fields(stack: Stack, namespace: str) -> None:
    new = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e2", "namespace": namespace},
           "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "kapi.io/c", "reportingInstance": "i",
           "action": "Act", "reason": "R", "regarding": {"kind": "Pod", "name": "p", "namespace": namespace},
           "type": "Normal"}
    status, body = rest(stack, "POST", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", new)
    assert status == 201, body
    assert _without_server_metadata(body) == (
        b'{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"e2","namespace":"%s"},'
        b'"eventTime":"2026-01-01T00:00:00.000000Z","reportingController":"kapi.io/c","reportingInstance":"i",'
        b'"action":"Act","reason":"R","regarding":{"kind":"Pod","namespace":"%s","name":"p"},"type":"Normal",'
        b'"deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null}'
        % (namespace.encode(), namespace.encode()))
    status, body = rest(stack, "GET", f"/api/v1/namespaces/{namespace}/events/e2")
    assert status == 200 and _without_server_metadata(body) == (
        b'{"kind":"Event","apiVersion":"v1","metadata":{"name":"e2","namespace":"%s"},"involvedObject":'
        b'{"kind":"Pod","namespace":"%s","name":"p"},"reason":"R","source":{},"firstTimestamp":null,'
        b'"lastTimestamp":null,"type":"Normal","eventTime":"2026-01-01T00:00:00.000000Z","action":"Act",'
        b'"reportingComponent":"kapi.io/c","reportingInstance":"i"}' % (namespace.encode(), namespace.encode()))
