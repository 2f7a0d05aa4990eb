"""EndpointSlice, RuntimeClass and the CSI kinds: defaults, validation, immutable fields (kapi.kinds)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds import discovery, storage, strategy_for


def slice_(**fields: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}],
                           "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}
    obj.update(fields)
    return obj


OBJECTS: dict[str, tuple[str, dict[str, Any]]] = {
    "EndpointSlice": ("discovery.k8s.io", slice_()),
    "RuntimeClass": ("node.k8s.io", {"handler": "runc"}),
    "CSIDriver": ("storage.k8s.io", {"metadata": {"name": "csi.example.com"}, "spec": {}}),
    "CSINode": ("storage.k8s.io", {"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n1",
                                                         "topologyKeys": ["topology.example.com/zone"]}]}}),
    "VolumeAttachment": ("storage.k8s.io", {"spec": {"attacher": "csi.example.com", "nodeName": "n1",
                                                     "source": {"persistentVolumeName": "pv1"}}}),
    "CSIStorageCapacity": ("storage.k8s.io", {"storageClassName": "fast", "capacity": "10Gi"}),
}


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_valid_objects(kind: str) -> None:
    group, obj = OBJECTS[kind]
    if kind == "CSIDriver":
        storage.default_csi_driver(obj)
    assert strategy_for(group, kind).validate(obj) == []


BAD = [
    ("discovery.k8s.io", "EndpointSlice", slice_(addressType=""), "addressType", "Required value"),
    ("discovery.k8s.io", "EndpointSlice", slice_(addressType="IPv5"), "addressType",
     'Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"'),
    ("discovery.k8s.io", "EndpointSlice", slice_(endpoints=[{"addresses": ["10.0.0.1"]}] * 1001), "endpoints",
     "Too many: 1001: must have at most 1000 items"),
    ("discovery.k8s.io", "EndpointSlice", slice_(endpoints=[{"addresses": []}]), "endpoints[0].addresses",
     "Required value: must contain at least 1 address"),
    ("discovery.k8s.io", "EndpointSlice", slice_(endpoints=[{"addresses": ["::1"]}]), "endpoints[0].addresses[0]",
     'Invalid value: "::1": must be a valid IPv4 address'),
    ("discovery.k8s.io", "EndpointSlice", slice_(ports=[{"name": "a", "protocol": "TCP"},
                                                        {"name": "a", "protocol": "TCP"}]), "ports[1].name",
     'Duplicate value: "a"'),
    ("discovery.k8s.io", "EndpointSlice", slice_(ports=[{"name": "a", "protocol": "ICMP"}]), "ports[0].protocol",
     'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'),
    ("node.k8s.io", "RuntimeClass", {"handler": "Not_A_Label"}, "handler", 'Invalid value: "Not_A_Label": '),
    ("storage.k8s.io", "CSIDriver", {"metadata": {"name": "d.io"}, "spec": {"podInfoOnMount": False}},
     "spec.attachedRequired", "Required value"),  # kube's path (sic)
    ("storage.k8s.io", "CSIDriver", {"metadata": {"name": "d.io"}, "spec": {
        "attachRequired": True, "podInfoOnMount": False, "fsGroupPolicy": "Sometimes"}}, "spec.fsGroupPolicy",
     'Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType"'),
    ("storage.k8s.io", "CSINode", {"spec": {"drivers": [{"name": "d.io", "nodeID": "1"}, {"name": "d.io",
                                                                                        "nodeID": "2"}]}},
     "spec.drivers[1].name", 'Duplicate value: "d.io"'),
    ("storage.k8s.io", "VolumeAttachment", {"spec": {"attacher": "d.io", "nodeName": "n", "source": {}}},
     "spec.source", "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"),
    ("storage.k8s.io", "VolumeAttachment", {"spec": {"attacher": "d.io", "source": {"persistentVolumeName": ""}}},
     "spec.source.persistentVolumeName", "Required value: must specify non empty persistentVolumeName"),
    ("storage.k8s.io", "VolumeAttachment", {"spec": {"attacher": "d.io", "source": {"persistentVolumeName": "p"}}},
     "spec.nodeName", 'Invalid value: "": a lowercase RFC 1123 subdomain'),
    ("storage.k8s.io", "CSIStorageCapacity", {"storageClassName": "fast", "capacity": "-1"}, "capacity",
     'Invalid value: "-1": must be greater than or equal to 0'),
]


@pytest.mark.parametrize(("group", "kind", "obj", "field", "message"), BAD)
def test_invalid_objects(group: str, kind: str, obj: dict[str, Any], field: str, message: str) -> None:
    causes = [(c.field, c.message) for c in strategy_for(group, kind).validate(obj)]
    assert any(f == field and m.startswith(message) for f, m in causes), causes


@pytest.mark.parametrize(("group", "kind", "old", "new", "field"), [
    ("discovery.k8s.io", "EndpointSlice", slice_(), slice_(addressType="IPv6"), "addressType"),
    ("node.k8s.io", "RuntimeClass", {"handler": "a"}, {"handler": "b"}, "handler"),
    ("storage.k8s.io", "CSIDriver", {"spec": {"attachRequired": True}}, {"spec": {"attachRequired": False}},
     "spec.attachedRequired"),
    ("storage.k8s.io", "VolumeAttachment", {"spec": {"nodeName": "a"}}, {"spec": {"nodeName": "b"}}, "spec"),
    ("storage.k8s.io", "CSIStorageCapacity", {"storageClassName": "a"}, {"storageClassName": "b"},
     "storageClassName"),
])
def test_immutable_fields(group: str, kind: str, old: dict[str, Any], new: dict[str, Any], field: str) -> None:
    (cause,) = strategy_for(group, kind).validate_update(new, old)
    assert cause.field == field and cause.message.endswith("field is immutable")
    assert strategy_for(group, kind).validate_update(old, old) == []
    assert strategy_for(group, kind).validate_update(new, old, "status") == []


def test_defaults() -> None:
    obj = slice_(ports=[{"port": 80}])
    discovery.default_endpoint_slice(obj)
    assert obj["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}]
    driver: dict[str, Any] = {"spec": {"attachRequired": False}}
    storage.default_csi_driver(driver)
    assert driver["spec"] == {"attachRequired": False, "podInfoOnMount": False, "storageCapacity": False,
                              "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
                              "seLinuxMount": False, "volumeLifecycleModes": ["Persistent"]}


def test_endpoint_slice_update_moves_a_stored_hostname_topology_into_node_name() -> None:
    strategy = strategy_for("discovery.k8s.io", "EndpointSlice")
    topology = {"kubernetes.io/hostname": "node-1", "topology.kubernetes.io/zone": "a"}
    old = {"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"], "deprecatedTopology": topology}]}

    def updated(*endpoints: dict[str, Any]) -> list[dict[str, Any]]:
        new = {"addressType": "IPv4", "endpoints": list(endpoints)}
        strategy.prepare_for_update(new, old)
        return new["endpoints"]

    # a partial update (the stored topology sent back, the addresses changed): the node is kept as nodeName
    assert updated({"addresses": ["10.0.0.2"], "deprecatedTopology": dict(topology)}) == [
        {"addresses": ["10.0.0.2"], "nodeName": "node-1"}]
    # a nodeName already set wins; a hostname the stored slice never named, or no valid node name, is dropped
    assert updated({"addresses": ["10.0.0.2"], "nodeName": "node-2", "deprecatedTopology": dict(topology)}) == [
        {"addresses": ["10.0.0.2"], "nodeName": "node-2"}]
    assert updated({"addresses": ["10.0.0.2"], "deprecatedTopology": {"kubernetes.io/hostname": "node-9"}}) == [
        {"addresses": ["10.0.0.2"]}]
    # unchanged endpoints keep their topology; a create never copies it
    assert updated(*old["endpoints"]) == old["endpoints"]
    created = {"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"], "deprecatedTopology": topology}]}
    strategy.prepare_for_create(created)
    assert created["endpoints"] == [{"addresses": ["10.0.0.1"]}]


def test_endpoint_slice_topology_node_name_must_be_a_valid_node_name() -> None:
    old = {"endpoints": [{"addresses": ["10.0.0.1"], "deprecatedTopology": {"kubernetes.io/hostname": "Not_Valid"}}]}
    new = {"endpoints": [{"addresses": ["10.0.0.2"], "deprecatedTopology": {"kubernetes.io/hostname": "Not_Valid"}}]}
    discovery.drop_deprecated_topology(new, old)
    assert new["endpoints"] == [{"addresses": ["10.0.0.2"]}]
