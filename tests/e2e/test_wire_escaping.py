"""End to end, raw HTTP through Envoy: every JSON body is written as Go's encoding/json writes it in kube's JSON
serializer (json.NewEncoder: ``<`` ``>`` ``&`` as ``\\u003c`` ``\\u003e`` ``\\u0026``, a trailing newline; pretty:
MarshalIndent, no newline), and an error whose Accept has no acceptable media type is WriteRawJSON's indented Status
(apimachinery runtime/serializer/json/json.go doEncode; apiserver responsewriters/writers.go WriteObjectNegotiated)."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_hostile_input import configmap, send

VALUE = '<a href="x">&</a>'
ESCAPED = b'"a":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"'
GROUP = "wire-escaping.example.com"


def test_configmap_value_is_escaped_in_get_list_watch_and_pretty(stack: Stack, kubectl: Kubectl,
                                                                 namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = send(stack, "POST", path, configmap("wire-esc", data={"a": VALUE}, metadata={
        "name": "wire-esc", "annotations": {"note": "<b>&"}}))
    assert created.status == 201, created
    assert ESCAPED in created.body and b"<" not in created.body and created.body.endswith(b"}\n")

    got = send(stack, "GET", f"{path}/wire-esc")
    assert got.status == 200 and got.headers["Content-Type"] == "application/json"
    assert ESCAPED in got.body and b'"note":"\\u003cb\\u003e\\u0026"' in got.body
    assert b"<" not in got.body and b"&" not in got.body and got.body.endswith(b"}\n")
    assert json.loads(got.body)["data"] == {"a": VALUE}

    listed = send(stack, "GET", f"{path}?fieldSelector=metadata.name%3Dwire-esc")
    assert listed.status == 200 and ESCAPED in listed.body and b"<" not in listed.body
    assert listed.body.endswith(b"]}\n")

    rv = json.loads(got.body)["metadata"]["resourceVersion"]
    watched = send(stack, "GET", f"{path}?watch=true&fieldSelector=metadata.name%3Dwire-esc&timeoutSeconds=1"
                   "&resourceVersion=0")
    lines = watched.body.splitlines(keepends=True)
    assert watched.status == 200 and lines, watched
    assert lines[0].startswith(b'{"type":"ADDED","object":{') and lines[0].endswith(b"}}\n")
    assert ESCAPED in lines[0] and b"<" not in watched.body and b"&" not in watched.body

    pretty = send(stack, "GET", f"{path}/wire-esc?pretty=true")
    assert pretty.status == 200 and pretty.headers["Content-Type"] == "application/json"
    assert pretty.body.startswith(b'{\n  "kind": "ConfigMap",\n  "apiVersion": "v1",\n  "metadata": {\n')
    assert b'    "a": "\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"\n' in pretty.body
    assert b"<" not in pretty.body and pretty.body.endswith(b"\n  }\n}")  # MarshalIndent: no trailing newline
    assert json.loads(pretty.body)["metadata"]["resourceVersion"] == rv


def crd(plural: str) -> str:
    return json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": plural, "singular": plural[:-1], "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": {
                         "type": "object", "x-kubernetes-validations": [{"rule": "self.a < self.b"}],
                         "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}}}}]}})


def test_crd_rule_and_its_failure_status_are_escaped(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    plural = "wireescwidgets"
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    created = send(stack, "POST", crds, crd(plural))
    assert created.status in (201, 409), created
    kubectl.run("wait", "--for=condition=Established", f"crd/{plural}.{GROUP}", "--timeout=20s")
    got = send(stack, "GET", f"{crds}/{plural}.{GROUP}")
    assert got.status == 200 and b'"rule":"self.a \\u003c self.b"' in got.body and b"<" not in got.body

    path = f"/apis/{GROUP}/v1/namespaces/{namespace}/{plural}"
    refused = send(stack, "POST", path, json.dumps({"apiVersion": f"{GROUP}/v1", "kind": "Widget",
                                                    "metadata": {"name": "w1"}, "spec": {"a": 2, "b": 1}}))
    assert refused.is_status(422, "Invalid"), refused
    assert refused.json["message"] == 'Widget.wire-escaping.example.com "w1" is invalid: spec: Invalid value: ' \
        'failed rule: self.a < self.b'
    assert b'failed rule: self.a \\u003c self.b"' in refused.body and b"<" not in refused.body
    assert refused.body.endswith(b"}\n")


def test_status_for_an_unacceptable_accept_is_write_raw_json(stack: Stack) -> None:
    reply = send(stack, "GET", "/api/v1/namespaces/default/nosuchresources", headers={"Accept": "text/html"})
    assert (reply.status, reply.headers["Content-Type"]) == (404, "application/json")
    assert reply.body == (b'{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n'
                          b'  "status": "Failure",\n  "message": "the server could not find the requested resource",\n'
                          b'  "reason": "NotFound",\n  "details": {},\n  "code": 404\n}')
    # the same error with an acceptable Accept: json.Encoder's compact line
    reply = send(stack, "GET", "/api/v1/namespaces/default/nosuchresources")
    assert reply.body == (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
                          b'"the server could not find the requested resource","reason":"NotFound","details":{},'
                          b'"code":404}\n')


def test_scale_answer_ends_with_a_newline_and_pretty_prints(stack: Stack, namespace: str) -> None:
    # The /scale handler encodes its autoscaling/v1 Scale itself: it ends as every JSON answer (json.Encoder's
    # newline) and follows pretty like them.
    path = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "wire-scale"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    assert send(stack, "POST", path, json.dumps(deployment)).status == 201
    got = send(stack, "GET", f"{path}/wire-scale/scale")
    assert got.status == 200 and got.body.startswith(b'{"kind":"Scale",') and got.body.endswith(b"}}\n"), got.body
    pretty = send(stack, "GET", f"{path}/wire-scale/scale?pretty=true")
    assert pretty.body.startswith(b'{\n  "kind": "Scale",\n') and pretty.body.endswith(b"\n}"), pretty.body
