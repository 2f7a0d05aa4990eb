"""kapi.k8sproto.goorder: kube-apiserver's JSON key order (Go struct order; sorted for custom resources)."""

from __future__ import annotations

from kapi.k8sproto.goorder import is_unstructured, sorted_deep, wire_order, with_resource_version
from services.storage.objects import decode, without_resource_version


def _pod() -> dict:
    return {"status": {"phase": "Pending"},
            "spec": {"restartPolicy": "Always", "nodeSelector": {"zone": "b", "disk": "ssd"},
                     "containers": [{"resources": {"limits": {"memory": "1Gi", "cpu": "1"}}, "image": "nginx",
                                     "name": "c", "livenessProbe": {"periodSeconds": 3, "exec": {"command": ["x"]}},
                                     "ports": [{"protocol": "TCP", "containerPort": 80, "name": "http"}]}]},
            "metadata": {"managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}, "f:metadata": {}}}],
                         "annotations": {"z": "1", "a": "2"}, "uid": "u-1", "labels": {"b": "1", "a": "2"},
                         "creationTimestamp": "2026-12-03T00:00:00Z", "namespace": "d", "name": "p"},
            "apiVersion": "v1", "kind": "Pod"}


def test_a_built_in_kind_is_in_go_struct_order_with_maps_sorted() -> None:
    out = wire_order(_pod())
    assert list(out) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert list(out["metadata"]) == ["name", "namespace", "uid", "creationTimestamp", "labels", "annotations",
                                     "managedFields"]
    assert list(out["metadata"]["labels"]) == ["a", "b"] and list(out["metadata"]["annotations"]) == ["a", "z"]
    assert list(out["spec"]) == ["containers", "restartPolicy", "nodeSelector"]
    assert list(out["spec"]["nodeSelector"]) == ["disk", "zone"]
    container = out["spec"]["containers"][0]
    assert list(container) == ["name", "image", "ports", "resources", "livenessProbe"]
    assert list(container["ports"][0]) == ["name", "containerPort", "protocol"]
    assert list(container["resources"]["limits"]) == ["cpu", "memory"]
    # Probe's inline ProbeHandler: its fields stand where the member does, before periodSeconds
    assert list(container["livenessProbe"]) == ["exec", "periodSeconds"]
    # FieldsV1 is raw JSON: written as received
    assert list(out["metadata"]["managedFields"][0]["fieldsV1"]) == ["f:spec", "f:metadata"]
    assert out == _pod()  # the same content


def test_a_custom_resource_is_sorted_at_every_level() -> None:
    cr = {"spec": {"z": [{"y": 1, "b": 2}], "a": 1}, "metadata": {"uid": "u", "name": "n"}, "kind": "Widget",
          "apiVersion": "example.com/v1"}
    assert is_unstructured(cr)
    out = wire_order(cr)
    assert list(out) == ["apiVersion", "kind", "metadata", "spec"]
    assert list(out["metadata"]) == ["name", "uid"] and list(out["spec"]) == ["a", "z"]
    assert list(out["spec"]["z"][0]) == ["b", "y"]
    assert sorted_deep({"b": {"d": 1, "c": 2}, "a": 0}) == {"a": 0, "b": {"c": 2, "d": 1}}


def test_a_built_in_kind_without_a_protobuf_message_has_its_go_order_too() -> None:
    crd = {"spec": {}, "metadata": {"name": "x"}, "kind": "CustomResourceDefinition",
           "apiVersion": "apiextensions.k8s.io/v1"}
    assert not is_unstructured(crd)
    assert list(wire_order(crd)) == ["kind", "apiVersion", "metadata", "spec"]  # tests/test_goorder_composed.py


def test_resource_version_goes_where_kube_writes_it() -> None:
    go = {"name": "p", "namespace": "d", "uid": "u", "generation": 1, "labels": {}}
    assert list(with_resource_version(go, "7", False)) == ["name", "namespace", "uid", "resourceVersion",
                                                           "generation", "labels"]
    cr = {"creationTimestamp": "t", "name": "n", "namespace": "d", "uid": "u"}
    assert list(with_resource_version(cr, "7", True)) == ["creationTimestamp", "name", "namespace",
                                                          "resourceVersion", "uid"]
    assert list(with_resource_version({"name": "n"}, "7", False)) == ["name", "resourceVersion"]


def test_storage_writes_in_wire_order_and_reads_put_the_resource_version_back_in_place() -> None:
    stored = without_resource_version({**_pod(), "metadata": {**_pod()["metadata"], "resourceVersion": "3"}})
    assert "resourceVersion" not in stored["metadata"]
    import json
    served = decode(json.dumps(stored).encode(), 9, b"/registry/pods/d/p")
    assert list(served["metadata"])[:4] == ["name", "namespace", "uid", "resourceVersion"]
    assert served["metadata"]["resourceVersion"] == "9"
