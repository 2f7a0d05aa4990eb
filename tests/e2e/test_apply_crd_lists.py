"""Server-side apply on a custom resource follows its CRD's list types, with the real kubectl.

kube-apiserver builds the custom resource's structured-merge-diff type from the CRD version's structural
schema (apiextensions-apiserver pkg/controller/openapi/builder, kube-openapi pkg/schemaconv): an
``x-kubernetes-list-type: map`` list merges by its ``x-kubernetes-list-map-keys`` (``k:{"name":"first"}``),
a ``set`` list by value (``v:"alpha"``), a list without a list type is atomic. Two managers applying
different items do not conflict; the same key with another value does; a manager that stops applying an item
removes only its own.
"""

from __future__ import annotations

import json
import subprocess

import yaml

from tests.e2e.conftest import Kubectl, wait_for

GROUP = "ssalists.example.com"
CRD = f"widgets.{GROUP}"
RESOURCE = CRD  # qualified in every command: other tests serve "widgets" in other groups


def manifest() -> str:
    item = {"type": "object", "required": ["name"],
            "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}
    spec = {"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": item},
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "plain": {"type": "array", "items": {"type": "string"}}}}
    return yaml.safe_dump({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": CRD},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}})


def _widget(spec: dict) -> str:
    return json.dumps({"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})


def _apply(kubectl: Kubectl, namespace: str, manager: str, spec: dict, check: bool = True
           ) -> subprocess.CompletedProcess[str]:
    return kubectl.run("-n", namespace, "apply", "--server-side", f"--field-manager={manager}", "-f", "-",
                       input=_widget(spec), check=check)


def _get(kubectl: Kubectl, namespace: str) -> dict:
    return json.loads(kubectl.run("-n", namespace, "get", f"{RESOURCE}/w", "-o", "json",
                                  "--show-managed-fields").stdout)


def _fields(obj: dict) -> dict[str, dict]:
    return {e["manager"]: e["fieldsV1"] for e in obj["metadata"]["managedFields"]}


def test_apply_merges_map_and_set_lists_by_key(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=manifest())
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=30s")
        first = wait_for(lambda: _apply(kubectl, namespace, "m1", {"items": [{"name": "first"}], "tags": ["alpha"],
                                                                    "plain": ["x"]}))
        assert first.stdout == "widget.ssalists.example.com/w serverside-applied\n"
        assert _fields(_get(kubectl, namespace)) == {"m1": {"f:spec": {
            "f:items": {'k:{"name":"first"}': {".": {}, "f:name": {}}}, "f:plain": {}, "f:tags": {'v:"alpha"': {}}}}}

        second = _apply(kubectl, namespace, "m2", {"items": [{"name": "second"}], "tags": ["beta"]}, check=False)
        assert second.returncode == 0, second.stderr
        obj = _get(kubectl, namespace)
        assert obj["spec"] == {"items": [{"name": "first"}, {"name": "second"}], "plain": ["x"],
                               "tags": ["alpha", "beta"]}
        assert _fields(obj) == {
            "m1": {"f:spec": {"f:items": {'k:{"name":"first"}': {".": {}, "f:name": {}}}, "f:plain": {},
                              "f:tags": {'v:"alpha"': {}}}},
            "m2": {"f:spec": {"f:items": {'k:{"name":"second"}': {".": {}, "f:name": {}}},
                              "f:tags": {'v:"beta"': {}}}}}

        # the same key with another value, and an atomic list: conflicts, on exactly those fields
        clash = _apply(kubectl, namespace, "m2", {"items": [{"name": "second"}, {"name": "first", "value": "v"}],
                                                  "tags": ["beta"], "plain": ["y"]}, check=False)
        assert clash.returncode == 1
        assert 'Apply failed with 1 conflict: conflict with "m1": .spec.plain' in clash.stderr
        assert ".spec.items" not in clash.stderr and ".spec.tags" not in clash.stderr

        # m1 stops applying its item and tag: they go; m2's stay
        _apply(kubectl, namespace, "m1", {"plain": ["x"]})
        obj = _get(kubectl, namespace)
        assert obj["spec"] == {"items": [{"name": "second"}], "plain": ["x"], "tags": ["beta"]}
        assert _fields(obj)["m1"] == {"f:spec": {"f:plain": {}}}
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")


def test_create_records_map_and_set_items_and_an_apply_shares_them(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=manifest())
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=30s")
        wait_for(lambda: kubectl.run("-n", namespace, "create", "-f", "-",
                                     input=_widget({"items": [{"name": "a", "value": "1"}], "tags": ["x"]})))
        assert _fields(_get(kubectl, namespace)) == {"kubectl-create": {"f:spec": {
            ".": {}, "f:items": {".": {}, 'k:{"name":"a"}': {".": {}, "f:name": {}, "f:value": {}}},
            "f:tags": {".": {}, 'v:"x"': {}}}}}
        applied = _apply(kubectl, namespace, "m1", {"items": [{"name": "b"}], "tags": ["y"]}, check=False)
        assert applied.returncode == 0, applied.stderr
        obj = _get(kubectl, namespace)
        assert obj["spec"] == {"items": [{"name": "a", "value": "1"}, {"name": "b"}], "tags": ["x", "y"]}
        assert _fields(obj)["m1"] == {"f:spec": {"f:items": {'k:{"name":"b"}': {".": {}, "f:name": {}}},
                                                 "f:tags": {'v:"y"': {}}}}
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")
