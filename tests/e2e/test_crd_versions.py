"""CRD versions end to end with kubectl: conversion strategy None between two served versions, selectableFields."""

from __future__ import annotations

import json

import yaml

from tests.e2e.conftest import Kubectl, wait_for

GROUP = "colors.example.com"
SCHEMA = {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {"color": {"type": "string"}, "size": {"type": "integer"}}}}}}


def widget_crd() -> str:
    return yaml.safe_dump({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [
                     {"name": "v1", "served": True, "storage": True, "schema": SCHEMA,
                      "selectableFields": [{"jsonPath": ".spec.color"}]},
                     {"name": "v2", "served": True, "storage": False, "schema": SCHEMA,
                      "selectableFields": [{"jsonPath": ".spec.color"}]}]}})


def widget(name: str, namespace: str, version: str, color: str) -> str:
    return yaml.safe_dump({"apiVersion": f"{GROUP}/{version}", "kind": "Widget",
                           "metadata": {"name": name, "namespace": namespace}, "spec": {"color": color, "size": 1}})


def test_versions_with_conversion_none(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=widget_crd())
    kubectl.run("wait", "--for=condition=Established", f"crd/widgets.{GROUP}", "--timeout=20s")
    wait_for(lambda: kubectl.run("get", "--raw", f"/apis/{GROUP}/v2"))
    base = f"/apis/{GROUP}/{{}}/namespaces/{namespace}/widgets"

    kubectl.run("create", "-f", "-", input=widget("red-one", namespace, "v2", "red"))
    kubectl.run("create", "-f", "-", input=widget("blue-one", namespace, "v1", "blue"))
    for version in ("v1", "v2"):
        got = json.loads(kubectl.run("get", f"widgets.{version}.{GROUP}", "red-one", "-n", namespace,
                                     "-o", "json").stdout)
        assert got["apiVersion"] == f"{GROUP}/{version}" and got["spec"] == {"color": "red", "size": 1}
        listed = json.loads(kubectl.run("get", "--raw", base.format(version)).stdout)
        assert listed["apiVersion"] == f"{GROUP}/{version}"
        assert {i["apiVersion"] for i in listed["items"]} == {f"{GROUP}/{version}"}
        assert len(listed["items"]) == 2

    # Writes through v2 (patch, replace) are stored and answered per version; storedVersions stays at v1.
    patched = json.loads(kubectl.run("patch", f"widgets.v2.{GROUP}", "red-one", "-n", namespace, "--type=merge",
                                     "-p", '{"spec":{"size":3}}', "-o", "json").stdout)
    assert patched["apiVersion"] == f"{GROUP}/v2" and patched["spec"]["size"] == 3
    got = json.loads(kubectl.run("get", f"widgets.v1.{GROUP}", "red-one", "-n", namespace, "-o", "json").stdout)
    assert got["apiVersion"] == f"{GROUP}/v1" and got["spec"]["size"] == 3
    crd = json.loads(kubectl.run("get", "crd", f"widgets.{GROUP}", "-o", "json").stdout)
    assert crd["status"]["storedVersions"] == ["v1"]

    # A watch through v2 sees v2 objects.
    watched = kubectl.run("get", "--raw", base.format("v2") + "?watch=true&timeoutSeconds=1").stdout
    events = [json.loads(line) for line in watched.splitlines() if line]
    assert events and {e["object"]["apiVersion"] for e in events} == {f"{GROUP}/v2"}
    # selectableFields: a field selector on spec.color (list and watch); other fields are refused as on kube.
    for version in ("v1", "v2"):
        names = kubectl.run("get", f"widgets.{version}.{GROUP}", "-n", namespace, "--field-selector",
                            "spec.color=red", "-o", "name").stdout.split()
        assert names == [f"widget.{GROUP}/red-one"]
    watched = kubectl.run("get", "--raw", base.format("v1") + "?watch=true&timeoutSeconds=1"
                          "&fieldSelector=spec.color%3Dblue").stdout
    assert [json.loads(line)["object"]["metadata"]["name"] for line in watched.splitlines() if line] == ["blue-one"]
    refused = kubectl.run("get", f"widgets.{GROUP}", "-n", namespace, "--field-selector", "spec.size=1",
                          check=False)
    assert refused.returncode != 0 and "field label not supported: spec.size" in refused.stderr
    kubectl.run("delete", "crd", f"widgets.{GROUP}", "--timeout=30s")
