"""kapi.kinds.nodes: kube 1.37's ValidateNode / ValidateNodeUpdate, cause for cause."""

from __future__ import annotations

import json

from kapi.kinds.nodes import (
    PREFER_AVOID_PODS_ANNOTATION,
    TAINTS_ANNOTATION,
    drop_disabled_node_fields,
    drop_status_config,
    pod_cidrs,
    validate_node,
    validate_node_specific_annotations,
    validate_node_taints,
    validate_node_update,
)
from kapi.validation import LABEL_VALUE_MSG, VALID_CIDR_MSG

EFFECTS = 'supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"'
CIDR_CHANGE = 'Forbidden: node updates may not change podCIDR except from "" to valid'


def pairs(causes):
    return [(c.field, c.message) for c in causes]


def node(**spec):
    return {"metadata": {"name": "n1"}, "spec": spec, "status": {}}


def test_valid_node_has_no_causes():
    obj = {"metadata": {"name": "n1", "annotations": {TAINTS_ANNOTATION: ""}},
           "spec": {"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24", "fd00::/64"], "providerID": "p",
                    "taints": [{"key": "example.com/a", "value": "v", "effect": "NoSchedule"},
                               {"key": "example.com/a", "effect": "NoExecute"}]},
           "status": {"capacity": {"cpu": "4", "memory": "1Gi"}, "allocatable": {"cpu": "3500m"},
                      "nodeInfo": {"swap": {"capacity": 1024}}, "declaredFeatures": ["A", "B/c"],
                      "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}}
    assert validate_node(obj) == []
    assert validate_node_update(obj, obj) == []


def test_taints_rooted_at_metadata():
    obj = node(taints=[{"key": "", "value": "a b", "effect": ""}, {"key": "k", "effect": "Sometimes"}])
    assert pairs(validate_node(obj)) == [
        ("metadata.taints[0].key", 'Invalid value: "": name part must be non-empty'),
        ("metadata.taints[0].key", 'Invalid value: "": name part must consist of alphanumeric characters, \'-\', '
                                   "'_' or '.', and must start and end with an alphanumeric character (e.g. "
                                   "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                                   "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ("metadata.taints[0].value", f'Invalid value: "a b": {LABEL_VALUE_MSG} (e.g. \'MyValue\',  or '
                                     "'my_value',  or '12345', regex used for validation is "
                                     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        ("metadata.taints[0].effect", "Required value"),
        ("metadata.taints[1].effect", f'Unsupported value: "Sometimes": {EFFECTS}'),
    ]


def test_duplicate_taints_by_key_and_effect():
    taints = [{"key": "k", "value": "a", "effect": "NoSchedule"}, {"key": "k", "value": "b", "effect": "NoSchedule"},
              {"key": "k", "effect": "NoSchedule", "timeAdded": "2024-01-01T00:00:00Z"},
              {"key": "k", "effect": "PreferNoSchedule"}]
    assert pairs(validate_node_taints(taints, "metadata.taints")) == [
        ("metadata.taints[1]", 'Duplicate value: core.Taint{Key:"k", Value:"b", Effect:"NoSchedule", '
                               "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"),
        ("metadata.taints[2]", 'Duplicate value: core.Taint{Key:"k", Value:"", Effect:"NoSchedule", '
                               "TimeAdded:(*v1.Time)(0xc000000000)}: taints must be unique by key and effect pair"),
    ]


def test_taints_annotation():
    path = f"metadata.annotations.{TAINTS_ANNOTATION}"
    text = json.dumps([{"key": "k", "effect": "NoSchedule"}, {"Key": "k", "EFFECT": "NoSchedule"},
                       {"key": "j", "effect": "Bad"}])
    assert pairs(validate_node_specific_annotations({TAINTS_ANNOTATION: text})) == [
        (f"{path}[1]", 'Duplicate value: core.Taint{Key:"k", Value:"", Effect:"NoSchedule", '
                       "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"),
        (f"{path}[2].effect", f'Unsupported value: "Bad": {EFFECTS}'),
    ]


def test_taints_annotation_decode_errors():
    cases = {
        "[": "unexpected end of JSON input",
        "x": "invalid character 'x' looking for beginning of value",
        '[{"key": "a"} {}]': "invalid character '{' after array element",
        '{"key": "a"}': "json: cannot unmarshal object into Go value of type []core.Taint",
        "[1]": "json: cannot unmarshal number into Go value of type core.Taint",
        '[{"key": 1}]': "json: cannot unmarshal number into Go struct field Taint.Key of type string",
        '[{"effect": true}]': "json: cannot unmarshal bool into Go struct field Taint.Effect of type core.TaintEffect",
    }
    for text, message in cases.items():
        assert pairs(validate_node_specific_annotations({TAINTS_ANNOTATION: text})) == [
            ("metadata.annotations", f'Invalid value: "{TAINTS_ANNOTATION}": {message}')], text
    assert validate_node_specific_annotations({TAINTS_ANNOTATION: "null"}) == []


def test_prefer_avoid_pods_annotation():
    text = json.dumps({"preferAvoidPods": [{"podSignature": {}},
                                           {"podSignature": {"podController": {"controller": False}}},
                                           {"podSignature": {"podController": {"controller": True}}}]})
    path = f"metadata.annotations.{PREFER_AVOID_PODS_ANNOTATION}"
    assert pairs(validate_node_specific_annotations({PREFER_AVOID_PODS_ANNOTATION: text})) == [
        (f"{path}[0].PodSignature", "Required value"),
        (f"{path}[1].PodSignature.PodController.Controller", "Invalid value: false: must point to a controller"),
    ]
    assert pairs(validate_node_specific_annotations({PREFER_AVOID_PODS_ANNOTATION: "[]"})) == [
        ("metadata.annotations.AvoidPods", f'Invalid value: "{PREFER_AVOID_PODS_ANNOTATION}": json: cannot '
                                           "unmarshal array into Go value of type core.AvoidPods")]


def test_status_quantities_swap_and_declared_features():
    obj = node()
    obj["status"] = {"capacity": {"cpu": "-1", "memory": "1Gi"}, "allocatable": {"example.com/gpu": "-2"},
                     "nodeInfo": {"swap": {"capacity": 0}},
                     "declaredFeatures": ["lower", "B", "A", "A", "X" * 254]}
    assert pairs(validate_node(obj)) == [
        ("status.capacity.cpu", 'Invalid value: "-1": must be greater than or equal to 0'),
        ("status.allocatable.example.com/gpu", 'Invalid value: "-2": must be greater than or equal to 0'),
        ("metadata.nodeSwapStatus.capacity", "Invalid value: 0: must be greater than zero"),
        ("status.declaredFeatures[0]", 'Invalid value: "lower": invalid feature name "lower": must start with an '
                                       "UpperCamelCase segment, with subsequent segments separated by '/' (e.g., "
                                       "MyFeature or MyFeature/mySubFeature), and contain only alphanumeric "
                                       "characters and slashes"),
        ("status.declaredFeatures[1]", 'Invalid value: "B": list must be sorted alphabetically'),
        ("status.declaredFeatures[2]", 'Invalid value: "A": list must be sorted alphabetically'),
        ("status.declaredFeatures[3]", 'Duplicate value: "A"'),
        ("status.declaredFeatures[4]", f'Invalid value: "{"X" * 254}": invalid feature name "{"X" * 254}": must be '
                                       "no more than 253 characters"),
    ]


def test_pod_cidrs_conversion():
    assert pod_cidrs({"podCIDR": "10.0.0.0/24"}) == ["10.0.0.0/24"]
    assert pod_cidrs({"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.1.0/24", "fd00::/64"]}) == ["10.0.0.0/24"]
    assert pod_cidrs({"podCIDR": "10.0.1.0/24", "podCIDRs": ["10.0.1.0/24", "fd00::/64"]}) == [
        "10.0.1.0/24", "fd00::/64"]
    assert pod_cidrs({"podCIDRs": ["fd00::/64"]}) == ["fd00::/64"]
    assert pod_cidrs({}) == []


def test_pod_cidrs():
    assert pairs(validate_node(node(podCIDR="10.0.0.1/24"))) == [
        ("spec.podCIDRs[0]", 'Invalid value: "10.0.0.1/24": must not have bits set beyond the prefix length')]
    assert pairs(validate_node(node(podCIDRs=["010.0.0.0/24"]))) == [
        ("spec.podCIDRs[0]", 'Invalid value: "010.0.0.0/24": must not have leading 0s in IP or prefix length')]
    # legacy field: a non-canonical IPv6 CIDR is fine
    assert validate_node(node(podCIDRs=["FD00:0::/64"])) == []
    assert pairs(validate_node(node(podCIDRs=["10.0.0.0/24", "10.1.0.0/24"]))) == [
        ("spec.podCIDRs", 'Invalid value: []string{"10.0.0.0/24", "10.1.0.0/24"}: may specify no more than one '
                          "CIDR for each IP family")]
    assert pairs(validate_node(node(podCIDRs=["10.0.0.0/24", "fd00::/64", "fd01::/64"]))) == [
        ("spec.podCIDRs", 'Invalid value: []string{"10.0.0.0/24", "fd00::/64", "fd01::/64"}: may specify no more '
                          "than one CIDR for each IP family")]
    assert pairs(validate_node(node(podCIDRs=["bad", "fd00::/64"]))) == [
        ("spec.podCIDRs[0]", f'Invalid value: "bad": {VALID_CIDR_MSG}'),
        ("spec.podCIDRs", "Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid "
                          "CIDR[0]: <nil> (invalid CIDR address: bad)"),
        ("spec.podCIDRs", 'Invalid value: []string{"bad", "fd00::/64"}: may specify no more than one CIDR for each '
                          "IP family"),
    ]


def test_update_immutable_spec_fields():
    old = node(podCIDRs=["10.0.0.0/24", "fd00::/64"], providerID="aws://a", externalID="e")
    new = node(podCIDRs=["10.0.1.0/24", "fd01::/64"], providerID="aws://b")
    assert pairs(validate_node_update(new, old)) == [
        ("spec.podCIDRs", CIDR_CHANGE), ("spec.podCIDRs", CIDR_CHANGE),
        ("spec.providerID", 'Forbidden: node updates may not change providerID except from "" to valid'),
        ("spec.externalID", "Forbidden: may not be updated"),
    ]
    assert pairs(validate_node_update(node(podCIDR="10.0.0.0/24"), old)) == [
        ("spec.podCIDRs", CIDR_CHANGE),
        ("spec.providerID", 'Forbidden: node updates may not change providerID except from "" to valid'),
        ("spec.externalID", "Forbidden: may not be updated")]
    # unset -> set is allowed
    assert validate_node_update(node(podCIDR="10.0.0.0/24", providerID="p"), node()) == []


def test_update_duplicate_addresses_and_taints():
    new = node(taints=[{"key": "k", "effect": ""}])
    new["status"] = {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"},
                                   {"type": "Hostname", "address": "10.0.0.1"},
                                   {"type": "InternalIP", "address": "10.0.0.1"}]}
    assert pairs(validate_node_update(new, node())) == [
        ("status.addresses[2]", 'Duplicate value: core.NodeAddress{Type:"InternalIP", Address:"10.0.0.1"}'),
        ("metadata.taints[0].effect", "Required value"),
    ]


def test_update_config_source_and_status_config():
    new = node(configSource={})
    new["status"] = {"config": {"assigned": {"configMap": {"namespace": "Bad_NS", "name": "cm", "uid": "u"}},
                                "active": {"configMap": {"uid": "u", "resourceVersion": "1", "namespace": "ns",
                                                         "name": "cm", "kubeletConfigKey": "k"}}}}
    assert pairs(validate_node_update(new, node())) == [
        ("spec.configSource", "Invalid value: core.NodeConfigSource{ConfigMap:(*core.ConfigMapNodeConfigSource)(nil)}"
                              ": exactly one reference subfield must be non-nil"),
        ("status.config.assigned.configMap.resourceVersion", "Required value"),
        ("status.config.assigned.configMap.namespace",
         'Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '
         "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
         "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
        ("status.config.assigned.configMap.kubeletConfigKey", "Required value"),
    ]
    spec_source = node(configSource={"configMap": {"uid": "u", "resourceVersion": "1", "namespace": "ns",
                                                   "name": "cm", "kubeletConfigKey": "k"}})
    assert pairs(validate_node_update(spec_source, node())) == [
        ("spec.configSource.configMap.uid", "Forbidden: uid must not be set in spec"),
        ("spec.configSource.configMap.resourceVersion", "Forbidden: resourceVersion must not be set in spec"),
    ]


def test_drop_disabled_fields():
    created = node(configSource={"configMap": {}})
    created["status"] = {"config": {"active": {}}}
    drop_disabled_node_fields(created)
    assert "configSource" not in created["spec"] and "config" not in created["status"]
    updated = node(configSource={"configMap": {}})
    drop_disabled_node_fields(updated, node())
    assert "configSource" not in updated["spec"]
    kept = node(configSource={"configMap": {}})
    drop_disabled_node_fields(kept, node(configSource={"configMap": {}}))
    assert "configSource" in kept["spec"]
    status = node()
    status["status"] = {"config": {"active": {}}}
    drop_status_config(status, node())
    assert "config" not in status["status"]


def test_wrong_types_do_not_raise():
    bad = {"metadata": {"annotations": {TAINTS_ANNOTATION: 5}}, "spec": {"taints": "x", "podCIDRs": [1, 2]},
           "status": {"capacity": [], "nodeInfo": {"swap": "x"}, "declaredFeatures": [3], "addresses": ["a"]}}
    validate_node(bad)
    validate_node_update(bad, {"spec": "x"})
