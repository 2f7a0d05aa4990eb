"""Server-side apply of configurations that do not fit their type: kube's structuredMergeManager.Apply fails
typing the configuration (structured-merge-diff v6): ``failed to create typed patch object (<ns>/<name>;
<group>/<version>, Kind=<Kind>): ...``. kube writes that plain error as a 500 without reason; kapi answers the
same message as 400 BadRequest (bad input never gets a 500)."""

from __future__ import annotations

import json
from typing import Any

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_hostile_input import send

APPLY = {"Content-Type": "application/apply-patch+yaml"}
MISSING_NAME = ('.spec.template.spec.containers: element 1: associative list with keys has an element that omits '
                'key field "name" (and doesn\'t have default value)')


def _deployment(name: str, spec: dict[str, Any] | list[Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec}


def _template(containers: Any) -> dict[str, Any]:
    return {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": containers}}}


def _status(message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": "BadRequest", "code": 400}


CASES = [
    ("apps/v1", "deployments", "Deployment", _deployment("d1", {"replicas": "3"}),
     ".spec.replicas: expected numeric (int or float), got string"),
    ("apps/v1", "deployments", "Deployment", _deployment("d2", []), ".spec: expected map, got &{[]}"),
    ("apps/v1", "deployments", "Deployment", _deployment("d3", _template({})),
     ".spec.template.spec.containers: expected list, got &{map[]}"),
    ("apps/v1", "deployments", "Deployment",
     _deployment("d4", _template([{"name": "a", "image": "x"}, {"name": "a", "image": "y"}])),
     '.spec.template.spec.containers: duplicate entries for key [name="a"]'),
    ("apps/v1", "deployments", "Deployment", _deployment("d5", _template([{"name": "a", "image": "x"},
                                                                         {"image": "y"}])), MISSING_NAME),
    ("v1", "services", "Service", {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s1"},
                                   "spec": {"ports": [{"name": "http", "protocol": "TCP"}]}},
     '.spec.ports: element 0: associative list with keys has an element that omits key field "port" (and '
     "doesn't have default value)"),
    ("v1", "configmaps", "ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"},
                                       "data": {"a": 1}},
     ".data.a: expected string, got &value.valueUnstructured{Value:1}"),
]


def test_a_configuration_that_does_not_fit_is_a_400_with_kubes_message(stack: Stack, namespace: str) -> None:
    for api, resource, kind, body, error in CASES:
        prefix = "/api/v1" if api == "v1" else f"/apis/{api}"
        name = body["metadata"]["name"]
        reply = send(stack, "PATCH", f"{prefix}/namespaces/{namespace}/{resource}/{name}?fieldManager=me",
                     json.dumps(body), APPLY)
        group = "" if api == "v1" else api.split("/")[0]
        version = api.split("/")[-1]
        assert (reply.status, reply.json) == (400, _status(f"failed to create typed patch object (/{name}; "
                                                           f"{group}/{version}, Kind={kind}): {error}")), name
        assert send(stack, "GET", f"{prefix}/namespaces/{namespace}/{resource}/{name}").status == 404


def test_several_errors_are_listed(stack: Stack, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c2", "namespace": namespace},
            "data": {"a": 1, "b": True}}
    reply = send(stack, "PATCH", f"/api/v1/namespaces/{namespace}/configmaps/c2?fieldManager=me",
                 json.dumps(body), APPLY)
    assert (reply.status, reply.json) == (400, _status(
        f"failed to create typed patch object ({namespace}/c2; /v1, Kind=ConfigMap): errors:\n"
        "  .data.a: expected string, got &value.valueUnstructured{Value:1}\n"
        "  .data.b: expected string, got &value.valueUnstructured{Value:true}"))


def test_kubectl_server_side_apply_shows_the_error(kubectl: Kubectl, namespace: str) -> None:
    body = _deployment("d6", {**_template([{"name": "a", "image": "x"}]), "replicas": "3"})
    body["metadata"]["namespace"] = namespace
    out = kubectl.run("apply", "--server-side", "-f", "-", input=json.dumps(body), check=False)
    assert out.returncode != 0
    assert (f"failed to create typed patch object ({namespace}/d6; apps/v1, Kind=Deployment): .spec.replicas: "
            "expected numeric (int or float), got string") in out.stderr, out.stderr


def test_any_force_value_is_a_bool(stack: Stack, namespace: str) -> None:
    """kube's Convert_Slice_string_To_bool never refuses a force value: only "0" and "false" (any case) are false,
    so ``force=yes`` takes the field from its owner and ``force=FALSE`` is the conflict."""
    path = f"/api/v1/namespaces/{namespace}/configmaps/f"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "f"}, "data": {"a": "b"}}
    assert send(stack, "PATCH", f"{path}?fieldManager=one", json.dumps(body), APPLY).status == 201
    body["data"]["a"] = "c"
    for value in ("FALSE", "0", "false"):
        reply = send(stack, "PATCH", f"{path}?fieldManager=two&force={value}", json.dumps(body), APPLY)
        assert reply.status == 409, (value, reply.body)
    for value in ("yes", "", "no"):
        reply = send(stack, "PATCH", f"{path}?fieldManager=two&force={value}", json.dumps(body), APPLY)
        assert reply.status == 200, (value, reply.body)


def test_a_scale_that_does_not_fit_is_a_400_with_kubes_message(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """The Scale's field manager types the configuration as autoscaling/v1 Scale (structuredmerge.go)."""
    deployment = _deployment("sd", _template([{"name": "a", "image": "x"}]))
    deployment["metadata"]["namespace"] = namespace
    kubectl.run("apply", "-f", "-", input=json.dumps(deployment))
    body = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "sd"}, "spec": {"replicas": "3"}}
    reply = send(stack, "PATCH", f"/apis/apps/v1/namespaces/{namespace}/deployments/sd/scale?fieldManager=me",
                 json.dumps(body), APPLY)
    assert (reply.status, reply.json) == (400, _status("failed to create typed patch object (/sd; autoscaling/v1, "
                                                       "Kind=Scale): .spec.replicas: expected numeric (int or "
                                                       "float), got string"))
