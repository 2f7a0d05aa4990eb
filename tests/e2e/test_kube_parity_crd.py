"""CustomResourceDefinitions answer as apiextensions-apiserver 1.37 does (issue #17 item 5).

- v1 defaults: ``spec.names.listKind`` ``<Kind>List``, ``singular``, ``spec.conversion`` ``{strategy: None}``;
- PrepareForCreate: the zero status typed-encoded (``conditions: null``, ``acceptedNames`` with empty plural
  and kind, ``storedVersions: [<storage version>]``), no finalizer;
- the naming/establishing controllers write acceptedNames and conditions as ``kube-apiserver`` on the
  ``status`` subresource (managedFields), leaving the creator's spec fields alone;
- the first DELETE adds the ``customresourcecleanup.apiextensions.k8s.io`` finalizer and Terminating
  ``InstanceDeletionPending`` and answers the marked CRD (REST.Delete), the finalizer controller then
  deletes the objects and the CRD.
"""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl, wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _crd(group: str) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"widgets.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _get(kubectl: Kubectl, name: str) -> dict:
    return json.loads(kubectl.run("get", "--raw", f"{CRDS}/{name}").stdout)


def test_crd_create_defaults_and_zero_status(kubectl: Kubectl, tmp_path) -> None:
    group = "parity-create.example.com"
    body = tmp_path / "crd.json"
    body.write_text(json.dumps(_crd(group)))
    raw = kubectl.run("create", "--raw", CRDS, "-f", str(body)).stdout
    # kube's typed encoding, in Go's field order: conditions (nil -> null), acceptedNames, storedVersions
    assert '"status":{"conditions":null,"acceptedNames":{"plural":"","kind":""},"storedVersions":["v1"]}' in raw
    created = json.loads(raw)
    try:
        assert created["spec"]["names"] == {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                            "listKind": "WidgetList"}
        assert created["spec"]["conversion"] == {"strategy": "None"}
        assert "finalizers" not in created["metadata"]  # added by DELETE, not by create
        assert created["metadata"]["generation"] == 1

        def established() -> dict | None:
            crd = _get(kubectl, f"widgets.{group}")
            return crd if any(c["type"] == "Established" and c["status"] == "True"
                              for c in crd["status"].get("conditions") or []) else None
        crd = wait_for(established)
        assert crd["status"]["acceptedNames"] == {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                                  "listKind": "WidgetList"}
        assert [(c["type"], c["status"], c["reason"], c["message"]) for c in crd["status"]["conditions"]] == [
            ("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
            ("Established", "True", "InitialNamesAccepted", "the initial names have been accepted")]
        entries = {(e["manager"], e["operation"], e.get("subresource", "")): e
                   for e in crd["metadata"]["managedFields"]}
        status_entry = entries[("kube-apiserver", "Update", "status")]
        assert status_entry["apiVersion"] == "apiextensions.k8s.io/v1"
        assert list(status_entry["fieldsV1"]) == ["f:status"]
        status_fields = status_entry["fieldsV1"]["f:status"]
        assert status_fields["f:acceptedNames"] == {"f:kind": {}, "f:listKind": {}, "f:plural": {},
                                                    "f:singular": {}}
        assert set(status_fields["f:conditions"]) == {'k:{"type":"Established"}', 'k:{"type":"NamesAccepted"}'}
        assert status_fields["f:conditions"]['k:{"type":"Established"}'] == {
            ".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}}
        creator = entries[("kubectl", "Update", "")]  # kubectl create --raw: the User-Agent's "kubectl"
        assert "f:spec" in creator["fieldsV1"] and "f:status" not in creator["fieldsV1"]
    finally:
        kubectl.run("delete", "crd", f"widgets.{group}", "--wait=false", check=False)


def test_crd_delete_adds_the_cleanup_finalizer_and_terminating(kubectl: Kubectl, namespace: str, tmp_path) -> None:
    group = "parity-delete.example.com"
    name = f"widgets.{group}"
    kubectl.run("create", "-f", "-", input=json.dumps(_crd(group)))
    wait_for(lambda: kubectl.run("-n", namespace, "get", f"widgets.{group}", check=False).returncode == 0)
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": f"{group}/v1", "kind": "Widget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}))

    # a dry run answers the CRD as the first DELETE would mark it, and changes nothing
    preview = json.loads(kubectl.run("delete", "--raw", f"{CRDS}/{name}?dryRun=All").stdout)
    assert preview["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert [c["reason"] for c in preview["status"]["conditions"] if c["type"] == "Terminating"] == [
        "InstanceDeletionPending"]
    untouched = _get(kubectl, name)
    assert "deletionTimestamp" not in untouched["metadata"] and "finalizers" not in untouched["metadata"]

    marked = json.loads(kubectl.run("delete", "--raw", f"{CRDS}/{name}").stdout)
    assert marked["kind"] == "CustomResourceDefinition"  # 200 with the marked CRD, not a Status
    assert marked["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert marked["metadata"]["deletionTimestamp"]
    terminating = [c for c in marked["status"]["conditions"] if c["type"] == "Terminating"]
    assert [(c["status"], c["reason"], c["message"]) for c in terminating] == [
        ("True", "InstanceDeletionPending",
         "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon")]

    def in_progress() -> bool:
        conds = {c["type"]: c for c in _get(kubectl, name)["status"]["conditions"]}
        return conds["Terminating"]["reason"] == "InstanceDeletionInProgress"
    wait_for(in_progress)
    crd = _get(kubectl, name)
    assert {(e["manager"], e.get("subresource")) for e in crd["metadata"]["managedFields"]} >= {
        ("kube-apiserver", "status")}
    # the finalizer controller deleted the object: it waits on its own finalizer
    wait_for(lambda: json.loads(kubectl.run("-n", namespace, "get", f"widgets.{group}", "held", "-o", "json"
                                            ).stdout)["metadata"].get("deletionTimestamp"))
    kubectl.run("-n", namespace, "patch", f"widgets.{group}", "held", "--type=merge",
                "-p", '{"metadata":{"finalizers":null}}')
    wait_for(lambda: "NotFound" in kubectl.run("get", "crd", name, check=False).stderr, timeout=30)


def test_custom_resource_update_sets_own_every_node_that_appears(kubectl: Kubectl, namespace: str, tmp_path) -> None:
    """A custom resource is unstructured to kube's field manager: the nodes a create adds are Added
    (``f:spec: {.: {}}``, nested objects too), but ``f:metadata``, which the field manager strips."""
    group = "parity-cr-fields.example.com"
    body = tmp_path / "crd.json"
    body.write_text(json.dumps(_crd(group)))
    kubectl.run("create", "-f", str(body))
    try:
        wait_for(lambda: kubectl.run("-n", namespace, "get", f"widgets.{group}", check=False).returncode == 0)
        widget = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": "w", "labels": {"x": "y"}},
                  "spec": {"size": 1, "nested": {"a": 1}}}
        kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(widget))
        obj = json.loads(kubectl.run("-n", namespace, "get", f"widgets.{group}", "w", "-o", "json",
                                     "--show-managed-fields").stdout)
        assert [(e["manager"], e["fieldsV1"]) for e in obj["metadata"]["managedFields"]] == [("kubectl-create", {
            "f:metadata": {"f:labels": {".": {}, "f:x": {}}},
            "f:spec": {".": {}, "f:nested": {".": {}, "f:a": {}}, "f:size": {}}})]
    finally:
        kubectl.run("delete", "crd", f"widgets.{group}", "--wait=false", check=False)
