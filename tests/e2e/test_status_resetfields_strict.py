"""/status reset fields in managedFields and strict decoding of duplicate plus unknown fields, end to end with kubectl.

- a CustomResourceDefinition's ``/status`` (merge patch, server-side apply) may change labels, but kube's CRD
  statusStrategy GetResetFields (``metadata``, ``spec``) keeps its manager from owning them: the creator keeps
  its label entries, and an apply's labels are stored and owned by nobody;
- a Service's ``/status`` resets only ``spec``: its manager owns the labels it changed;
- fieldValidation of a body with duplicate and unknown fields (``kubectl create --raw``): Strict names them in one
  400 in the decoder's order, Warn gives one warning per field (none ``duplicate`` for a repeated unknown field).
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Kubectl, wait_for


def _entries(kubectl: Kubectl, *target: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    obj = json.loads(kubectl.run("get", *target, "-o", "json", "--show-managed-fields").stdout)
    return {(e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"]
            for e in obj["metadata"]["managedFields"]}


def test_crd_status_writes_own_no_metadata(kubectl: Kubectl) -> None:
    group = "resetfields.example.com"
    name = f"widgets.{group}"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": name, "labels": {"tier": "one", "keep": "yes"}},
           "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kubectl.run("create", "--field-manager=creator", "-f", "-", input=json.dumps(crd))
    try:
        wait_for(lambda: kubectl.run("patch", "crd", name, "--subresource=status", "--type=merge",
                                     "--field-manager=status-writer", "-p",
                                     json.dumps({"metadata": {"labels": {"tier": "two"}}})))
        entries = _entries(kubectl, "crd", name)
        assert ("status-writer", "Update", "status") not in entries  # it changed only metadata: owns nothing
        assert entries[("creator", "Update", "")]["f:metadata"]["f:labels"] == {".": {}, "f:keep": {}, "f:tier": {}}

        applied = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": name, "labels": {"tier": "three", "applied": "yes"}},
                   "status": {"storedVersions": ["v1"]}}
        kubectl.run("apply", "--server-side", "--subresource=status", "--field-manager=status-applier", "-f", "-",
                    input=json.dumps(applied))  # no conflict with the creator's f:tier
        obj = json.loads(kubectl.run("get", "crd", name, "-o", "json").stdout)
        assert obj["metadata"]["labels"] == {"tier": "three", "keep": "yes", "applied": "yes"}
        entries = _entries(kubectl, "crd", name)
        assert entries[("status-applier", "Apply", "status")] == {"f:status": {"f:storedVersions": {}}}
        assert "f:applied" not in entries[("creator", "Update", "")]["f:metadata"]["f:labels"]
    finally:
        kubectl.run("delete", "crd", name, "--wait=false", check=False)


def test_service_status_writer_owns_the_labels_it_changed(kubectl: Kubectl, namespace: str) -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "labels": {"tier": "one"}},
           "spec": {"ports": [{"port": 80}]}}
    kubectl.run("-n", namespace, "create", "--field-manager=creator", "-f", "-", input=json.dumps(svc))
    kubectl.run("-n", namespace, "patch", "service", "web", "--subresource=status", "--type=merge",
                "--field-manager=status-writer", "-p", json.dumps({"metadata": {"labels": {"tier": "two"}}}))
    entries = _entries(kubectl, "-n", namespace, "service", "web")
    assert entries[("status-writer", "Update", "status")] == {"f:metadata": {"f:labels": {"f:tier": {}}}}
    assert "f:tier" not in entries[("creator", "Update", "")]["f:metadata"]["f:labels"]


POD = ('{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","labels":{"a":"1","a":"2"}},'
       '"spec":{"x":1,"x":2,"containers":[{"name":"c","image":"nginx","image":"nginx"}]}}')


def test_strict_decoding_names_unknown_and_duplicate_fields_together(kubectl: Kubectl, namespace: str,
                                                                    tmp_path: Any) -> None:
    body = tmp_path / "pod.json"
    body.write_text(POD % "strict")
    strict = kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods?fieldValidation=Strict",
                         "-f", str(body), check=False)
    assert strict.returncode != 0
    assert strict.stderr.strip() == (
        'Error from server (BadRequest): Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'duplicate field "metadata.labels.a", unknown field "spec.x", duplicate field "spec.containers[0].image"'
    ), strict.stderr
    body.write_text(POD % "warn")
    warn = kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods?fieldValidation=Warn",
                       "-f", str(body))
    warnings = [line for line in warn.stderr.splitlines() if line.startswith("Warning: ")]
    assert sorted(warnings) == sorted([  # one warning per field: no "duplicate field" for the repeated spec.x
        'Warning: duplicate field "metadata.labels.a"', 'Warning: unknown field "spec.x"',
        'Warning: duplicate field "spec.containers[0].image"']), warn.stderr
