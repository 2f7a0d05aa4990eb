"""A DaemonSet's ``deprecated.daemonset.template.generation`` annotation through the whole stack (issue 17).

kube-apiserver writes the internal ``spec.templateGeneration`` as that annotation on every apps/v1 DaemonSet
(pkg/apis/apps/v1/conversion.go): 1 on create (a client value of at least 1 kept), plus 1 with each template change,
unchanged by any other update (pkg/registry/apps/daemonset/strategy.go); the zero DaemonSet of a watch bookmark
carries ``"0"``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_grpc_api import rest

ANNOTATION = "deprecated.daemonset.template.generation"


def _manifest(name: str = "web", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def _path(namespace: str, name: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{namespace}/daemonsets" + (f"/{name}" if name else "")


def _shown(kubectl: Kubectl, namespace: str) -> dict[str, Any]:
    """``kubectl get ds web -o yaml``'s metadata."""
    meta: dict[str, Any] = yaml.safe_load(kubectl.run("-n", namespace, "get", "ds", "web", "-o", "yaml").stdout)[
        "metadata"]
    return meta


def test_create_template_update_and_metadata_update(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    status, body = rest(stack, "POST", _path(namespace), _manifest(annotations={"team": "a"}))
    assert status == 201, body
    created = json.loads(body)["metadata"]
    assert (created["annotations"], created["generation"]) == ({ANNOTATION: "1", "team": "a"}, 1)
    assert b'"annotations":{"deprecated.daemonset.template.generation":"1","team":"a"}' in body  # sorted keys
    meta = _shown(kubectl, namespace)
    assert (meta["annotations"], meta["generation"]) == ({ANNOTATION: "1", "team": "a"}, 1)

    kubectl.run("-n", namespace, "set", "image", "ds/web", "c=nginx:2")
    meta = _shown(kubectl, namespace)
    assert (meta["annotations"], meta["generation"]) == ({ANNOTATION: "2", "team": "a"}, 2)

    kubectl.run("-n", namespace, "annotate", "ds", "web", "team=b", "--overwrite")
    meta = _shown(kubectl, namespace)
    assert (meta["annotations"], meta["generation"]) == ({ANNOTATION: "2", "team": "b"}, 2)

    status, body = rest(stack, "GET", _path(namespace, "web"))
    current = json.loads(body)
    current["metadata"]["annotations"] = {ANNOTATION: "40"}  # the client's value is not taken on update
    status, body = rest(stack, "PUT", _path(namespace, "web"), current)
    assert status == 200, body
    meta = json.loads(body)["metadata"]
    assert (meta["annotations"], meta["generation"]) == ({ANNOTATION: "2"}, 2)

    status, body = rest(stack, "PATCH", _path(namespace, "web"),
                        {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:3"}]}}}},
                        content_type="application/strategic-merge-patch+json")
    assert status == 200, body
    meta = json.loads(body)["metadata"]
    assert (meta["annotations"], meta["generation"]) == ({ANNOTATION: "3"}, 3)


def test_create_keeps_a_client_value_of_at_least_1_and_refuses_a_non_number(stack: Stack, namespace: str) -> None:
    status, body = rest(stack, "POST", _path(namespace), _manifest("five", {ANNOTATION: "5"}))
    assert status == 201, body
    assert json.loads(body)["metadata"]["annotations"] == {ANNOTATION: "5"}
    status, body = rest(stack, "POST", _path(namespace), _manifest("zero", {ANNOTATION: "0"}))
    assert status == 201, body
    assert json.loads(body)["metadata"]["annotations"] == {ANNOTATION: "1"}
    status, body = rest(stack, "POST", _path(namespace), _manifest("bad", {ANNOTATION: "abc"}))
    assert status == 400, body
    assert json.loads(body)["message"] == ('DaemonSet in version "v1" cannot be handled as a DaemonSet: '
                                           'strconv.ParseInt: parsing "abc": invalid syntax')


def test_a_daemonset_watch_bookmark_carries_0(stack: Stack, namespace: str) -> None:
    status, body = rest(stack, "GET", _path(namespace) + "?watch=1&sendInitialEvents=true"
                                                         "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
                                                         "&timeoutSeconds=1")
    assert status == 200
    line = body.splitlines()[0]
    assert re.fullmatch(rb'\{"type":"BOOKMARK","object":\{"kind":"DaemonSet","apiVersion":"apps/v1","metadata":'
                        rb'\{"resourceVersion":"\d+","annotations":\{"deprecated.daemonset.template.generation":"0",'
                        rb'"k8s.io/initial-events-end":"true"\}\},"spec":\{"selector":null,"template":\{"metadata":'
                        rb'\{\},"spec":\{"containers":null\}\},"updateStrategy":\{\}\},"status":\{'
                        rb'"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,'
                        rb'"numberReady":0\}\}\}', line), line
