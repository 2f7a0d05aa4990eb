"""Answers carry kube's JSON key order whatever order the client wrote (kapi.k8sproto.goorder): a built-in kind
in its Go struct's field order with map keys sorted (encoding/json), a custom resource with every object's keys
sorted (unstructured), resourceVersion where the encoder puts it; on create, get, list, watch and dry run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubernetes import client, config

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gears.keyorder.example.com
spec:
  group: keyorder.example.com
  scope: Namespaced
  names: {plural: gears, singular: gear, kind: Gear}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
"""


def _api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(Path(stack.kubeconfig)))


def _pod(name: str) -> dict[str, Any]:
    # every level in an order kube never writes
    return {"spec": {"restartPolicy": "Never", "containers": [
                {"resources": {"limits": {"memory": "64Mi", "cpu": "1"}}, "image": "nginx", "name": "app"}]},
            "metadata": {"annotations": {"zeta": "1", "alpha": "2"}, "labels": {"b": "1", "a": "2"}, "name": name},
            "kind": "Pod", "apiVersion": "v1"}


def _keys(raw: Any) -> dict[str, Any]:
    return json.loads(raw.data)


def test_a_pod_is_answered_in_go_struct_order(stack: Stack, namespace: str) -> None:
    core: Any = client.CoreV1Api(_api(stack))
    created = _keys(core.create_namespaced_pod(namespace, _pod("ordered"), _preload_content=False))
    assert list(created) == ["kind", "apiVersion", "metadata", "spec", "status"]
    meta = list(created["metadata"])
    assert meta == ["name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "labels",
                    "annotations", "managedFields"]
    assert list(created["metadata"]["labels"]) == ["a", "b"]
    assert list(created["metadata"]["annotations"]) == ["alpha", "zeta"]
    container = created["spec"]["containers"][0]
    assert list(container)[:3] == ["name", "image", "resources"]
    assert list(container["resources"]["limits"]) == ["cpu", "memory"]
    assert list(created["spec"])[:3] == ["volumes", "containers", "restartPolicy"]  # the token volume: first
    got = _keys(core.read_namespaced_pod("ordered", namespace, _preload_content=False))
    assert list(got) == list(created) and list(got["metadata"]) == meta
    listed = _keys(core.list_namespaced_pod(namespace, _preload_content=False))
    assert list(listed["items"][0]["metadata"])[:4] == ["name", "namespace", "uid", "resourceVersion"]
    dry = _keys(core.create_namespaced_pod(namespace, _pod("dry"), dry_run="All", _preload_content=False))
    assert list(dry) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(dry["metadata"]["labels"]) == ["a", "b"]


def test_a_watch_event_object_is_in_go_struct_order(stack: Stack, namespace: str) -> None:
    core: Any = client.CoreV1Api(_api(stack))
    core.create_namespaced_config_map(namespace, {"data": {"z": "1", "a": "2"}, "metadata": {"name": "cm"},
                                                  "apiVersion": "v1", "kind": "ConfigMap"})
    stream = core.list_namespaced_config_map(namespace, watch=True, timeout_seconds=5,
                                             field_selector="metadata.name=cm", _preload_content=False)
    first = b""
    for chunk in stream.stream():
        first += chunk
        if b"\n" in first:
            break
    stream.release_conn()
    event = json.loads(first.split(b"\n")[0])
    assert list(event) == ["type", "object"]
    assert list(event["object"]) == ["kind", "apiVersion", "metadata", "data"]  # ObjectMeta, Immutable, Data
    assert list(event["object"]["data"]) == ["a", "z"]


def test_a_custom_resource_has_its_keys_sorted(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=CRD)
    kubectl.run("wait", "--for", "condition=Established", "crd/gears.keyorder.example.com", "--timeout=60s")
    custom: Any = client.CustomObjectsApi(_api(stack))
    body = {"spec": {"teeth": 12, "size": {"w": 1, "h": 2}}, "metadata": {"name": "g1", "labels": {"b": "1"}},
            "kind": "Gear", "apiVersion": "keyorder.example.com/v1"}
    created = _keys(custom.create_namespaced_custom_object("keyorder.example.com", "v1", namespace, "gears", body,
                                                           _preload_content=False))
    assert list(created) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(created["metadata"]) == sorted(created["metadata"])
    assert "resourceVersion" in created["metadata"]
    assert list(created["spec"]) == ["size", "teeth"] and list(created["spec"]["size"]) == ["h", "w"]
    got = _keys(custom.get_namespaced_custom_object("keyorder.example.com", "v1", namespace, "gears", "g1",
                                                    _preload_content=False))
    assert list(got["metadata"]) == sorted(got["metadata"])
