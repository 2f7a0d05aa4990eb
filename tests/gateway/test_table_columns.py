"""Table columnDefinitions as kube-apiserver 1.37 serves them (kapi issue 17).

Custom resources: one table convertor per served version (apiextensions-apiserver customresource_handler.go,
``GetColumnsForVersion`` + ``tableconvertor.New``), a column without a description described by its JSONPath,
the default Age column by the ObjectMeta creationTimestamp doc (``serveDefaultColumnsIfEmpty``).
Built-ins: pkg/printers/internalversion/printers.go, whose Name/Age descriptions are
``metav1.ObjectMeta{}.SwaggerDoc()[...]`` and whose per-kind columns carry their own types and docs.
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi.resources import Registry
from services.gateway import dynamic, openapi, printers, table

NAME_DOC = ("Name must be unique within a namespace. Is required when creating resources, although some resources "
            "may allow a client to request the generation of an appropriate name automatically. Name is primarily "
            "intended for creation idempotence and configuration definition. Cannot be updated. More info: "
            "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names")
AGE_DOC = ("CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
           "guaranteed to be set in happens-before order across separate operations. Clients may not set this "
           "value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for "
           "lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
           "#metadata")
CM_DATA_DOC = ("Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or "
               "'.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data "
               "must not overlap with the keys in the BinaryData field, this is enforced during validation process.")

SCHEMA = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
# v2 preferred without columns, v1 with its own (the e2e test serves the same versions)
VERSIONS: list[dict[str, Any]] = [
    {"name": "v2", "served": True, "storage": True, "schema": SCHEMA},
    {"name": "v1", "served": True, "storage": False, "schema": SCHEMA,
     "additionalPrinterColumns": [
         {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
         {"name": "Color", "type": "string", "jsonPath": ".spec.color", "description": "the colour"},
         {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.ex.com", "uid": "u1"},
    "spec": {"group": "ex.com", "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
             "versions": VERSIONS},
    "status": {"acceptedNames": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                 "listKind": "WidgetList"},
               "conditions": [{"type": "Established", "status": "True"},
                              {"type": "NamesAccepted", "status": "True"}]},
}
WIDGET = {"apiVersion": "ex.com/v1", "kind": "Widget",
          "metadata": {"name": "w", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
          "spec": {"replicas": 3, "color": "red"}}


def _col(name: str, type_: str, description: str, format_: str = "", priority: int = 0) -> dict[str, Any]:
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Registry:
    """The CRD served by a CustomResourceRegistry over a private resource table."""
    monkeypatch.setattr(printers, "VERSIONED", {})
    monkeypatch.setattr(openapi, "set_custom", lambda *a, **k: None)
    monkeypatch.setattr(dynamic.CustomResourceRegistry, "_reconcile_soon", lambda self, name, definition: None)
    registry = Registry()
    crs = dynamic.CustomResourceRegistry(storage=None, registry=registry)
    crs._changed({"widgets.ex.com": CRD})
    return registry


def test_each_served_version_prints_its_own_columns(served: Registry) -> None:
    v1 = served.get("ex.com", "v1", "widgets")
    v2 = served.get("ex.com", "v2", "widgets")
    assert v1 is not None and v2 is not None
    assert table.column_definitions(v1) == [
        _col("Name", "string", NAME_DOC, "name"),
        _col("Replicas", "integer", "Custom resource definition column (in JSONPath format): .spec.replicas"),
        _col("Color", "string", "the colour"),
        _col("Age", "date", "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp")]
    assert table.row(v1, WIDGET, "None")["cells"][:3] == ["w", 3, "red"]
    # v2 (the preferred version) has none: serveDefaultColumnsIfEmpty's Age with the creationTimestamp doc
    assert table.column_definitions(v2) == [_col("Name", "string", NAME_DOC, "name"), _col("Age", "date", AGE_DOC)]
    assert len(table.row(v2, WIDGET, "None")["cells"]) == 2


def test_a_version_no_longer_served_drops_its_printer(monkeypatch: pytest.MonkeyPatch, served: Registry) -> None:
    assert ("ex.com", "v1", "widgets") in printers.VERSIONED
    crs = dynamic.CustomResourceRegistry(storage=None, registry=served)
    crs._printed = set(printers.VERSIONED)
    crs._changed({})
    assert printers.VERSIONED == {}


def _builtin(group: str, resource: str) -> list[tuple[str, str, str, int]]:
    r = next(r for r in Registry().static if (r.group, r.resource) == (group, resource))
    return [(c["name"], c["type"], c["description"], c["priority"]) for c in table.column_definitions(r)]


def test_builtin_name_and_age_are_the_objectmeta_swagger_docs() -> None:
    assert _builtin("", "configmaps") == [("Name", "string", NAME_DOC, 0), ("Data", "string", CM_DATA_DOC, 0),
                                          ("Age", "string", AGE_DOC, 0)]


def test_builtin_columns_types_and_descriptions_as_printers_go() -> None:
    secret = _builtin("", "secrets")
    assert [(n, t) for n, t, _d, _p in secret] == [("Name", "string"), ("Type", "string"), ("Data", "string"),
                                                   ("Age", "string")]
    assert secret[1][2].startswith("Used to facilitate programmatic handling of secret data.")
    assert secret[2][2].startswith("Data contains the secret data. Each key must consist of alphanumeric")
    pod = _builtin("", "pods")
    assert [(n, d) for n, _t, d, _p in pod[1:4]] == [
        ("Ready", "The aggregate readiness state of this pod for accepting traffic."),
        ("Status", "The aggregate status of the containers in this pod."),
        ("Restarts", "The number of times the containers in this pod have been restarted and when the last "
                     "container in this pod has restarted.")]
    assert pod[5][:2] == ("IP", "string") and pod[5][2].startswith("podIP address allocated to the pod.")
    assert pod[6][2].startswith("NodeName indicates in which node this pod is scheduled.")
    deployment = _builtin("apps", "deployments")
    assert [(n, t, p) for n, t, _d, p in deployment] == [
        ("Name", "string", 0), ("Ready", "string", 0), ("Up-to-date", "string", 0), ("Available", "string", 0),
        ("Age", "string", 0), ("Containers", "string", 1), ("Images", "string", 1), ("Selector", "string", 1)]
    assert [d for _n, _t, d, _p in deployment[1:4]] == [
        "Number of the pod with ready state",
        # extensions/v1beta1's DeploymentStatus docs; 1.37's say non-terminating (KEP-3973), as apps/v1's
        "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
        "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this "
        "deployment."]
    assert deployment[5][2] == "Names of each container in the template."
    assert deployment[7][2] == ("Label selector for pods. Existing ReplicaSets whose pods are selected by this will "
                                "be the ones affected by this deployment.")
    service = _builtin("", "services")
    assert [n for n, *_ in service] == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    assert service[2][2].startswith("clusterIP is the IP address of the service")
    node = _builtin("", "nodes")
    assert [(n, d) for n, _t, d, _p in node[1:3]] == [("Status", "The status of the node"),
                                                      ("Roles", "The roles of the node")]
    assert node[4][:2] == ("Version", "string") and node[4][2] == "Kubelet Version reported by the node."
    assert node[5][2].startswith("List of addresses reachable to the node.")


def test_more_builtin_columns_as_printers_go() -> None:
    assert _builtin("", "namespaces")[1][:3] == ("Status", "string", "The status of the namespace")
    secrets = _builtin("", "serviceaccounts")[1]
    assert secrets[:2] == ("Secrets", "string")
    assert secrets[2].startswith("Secrets is a list of the secrets in the same namespace that pods running using "
                                 "this ServiceAccount are allowed to use.")
    assert _builtin("", "endpoints")[1][2].startswith("The set of all endpoints is the union of all subsets.")
    assert [(n, d) for n, _t, d, _p in _builtin("apps", "statefulsets")] == [
        ("Name", NAME_DOC), ("Ready", "Number of the pod with ready state"), ("Age", AGE_DOC),
        ("Containers", "Names of each container in the template."),
        ("Images", "Images referenced by each container in the template.")]
