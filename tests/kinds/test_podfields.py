"""ValidatePodSpec's pod-level field rules in kapi.kinds.podfields: resourceClaims and containers' resources.claims,
hostNetwork ports, nodeSelector, schedulingGates, hostnameOverride, the name/number fields, priorityClassName,
runtimeClassName, preemptionPolicy, overhead, os and fileKeyRef volumes (kube 1.37's messages and paths)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds.podfields import (
    pod_claim_names,
    validate_active_deadline_seconds,
    validate_file_key_ref_volumes,
    validate_hostname,
    validate_hostname_override,
    validate_node_name,
    validate_node_selector,
    validate_os,
    validate_overhead,
    validate_pod_class_fields,
    validate_pod_host_network_deps,
    validate_pod_names,
    validate_pod_resource_claims,
    validate_preemption_policy,
    validate_priority_class_name,
    validate_resource_claim_names,
    validate_runtime_class_name,
    validate_scheduling_gates,
    validate_service_account_name,
    validate_subdomain,
)

SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


def pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


# ------------------------------------------------------------ resource claims

def test_resource_claims_valid_and_absent() -> None:
    spec = {"resourceClaims": [{"name": "gpu", "resourceClaimName": "my-claim"},
                               {"name": "tpl", "resourceClaimTemplateName": "my.template"}]}
    assert validate_pod_resource_claims(spec, "spec") == []
    assert validate_pod_resource_claims({}, "spec") == []
    assert pod_claim_names(spec) == {"gpu", "tpl"}


def test_resource_claims_names_sources_and_duplicates() -> None:
    spec = {"resourceClaims": [
        {"name": "", "resourceClaimName": "ok"},
        {"name": "Bad.Name", "resourceClaimName": "ok"},
        {"name": "a", "resourceClaimName": "Bad_Claim"},
        {"name": "a", "resourceClaimTemplateName": "ok"},
        {"name": "b"},
        {"name": "c", "resourceClaimName": "x", "resourceClaimTemplateName": "y"},
    ]}
    assert pairs(validate_pod_resource_claims(spec, "spec.template.spec")) == [
        ("spec.template.spec.resourceClaims[0].name", "Required value"),
        ("spec.template.spec.resourceClaims[1].name", f'Invalid value: "Bad.Name": {LABEL_MSG}'),
        ("spec.template.spec.resourceClaims[2].resourceClaimName", f'Invalid value: "Bad_Claim": {SUBDOMAIN_MSG}'),
        ("spec.template.spec.resourceClaims[3].name", 'Duplicate value: "a"'),
        ("spec.template.spec.resourceClaims[4]",
         'Invalid value: core.PodResourceClaim{Name:"b", ResourceClaimName:(*string)(nil), '
         'ResourceClaimTemplateName:(*string)(nil)}: '
         "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"),
        ("spec.template.spec.resourceClaims[5]",
         'Invalid value: core.PodResourceClaim{Name:"c", ResourceClaimName:(*string)(0xc000000000), '
         'ResourceClaimTemplateName:(*string)(0xc000000000)}: '
         "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"),
    ]


def test_resource_claims_empty_pointer_name_is_validated() -> None:
    spec = {"resourceClaims": [{"name": "a", "resourceClaimTemplateName": ""}]}
    assert pairs(validate_pod_resource_claims(spec, "spec")) == [
        ("spec.resourceClaims[0].resourceClaimTemplateName", f'Invalid value: "": {SUBDOMAIN_MSG}')]


def test_resource_claims_static_pod() -> None:
    spec = {"resourceClaims": [{"name": "a", "resourceClaimName": "x"}, {"name": ""}]}
    causes = validate_pod_resource_claims(spec, "spec", pod_annotations={"kubernetes.io/config.mirror": "x"})
    assert pairs(causes) == [("", "Forbidden: static pods do not support resource claims")] * 2
    one = {"resourceClaims": spec["resourceClaims"][:1]}
    assert validate_pod_resource_claims(one, "spec", pod_annotations={"other": "x"}) == []


def test_container_claims_valid() -> None:
    spec = {"resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}, {"name": "net", "resourceClaimName": "d"}]}
    resources = {"claims": [{"name": "gpu", "request": "r1"}, {"name": "gpu", "request": "r2"}, {"name": "net"}]}
    assert validate_resource_claim_names(resources, spec, "spec.containers[0].resources") == []
    assert validate_resource_claim_names({}, spec, "spec.containers[0].resources") == []


def test_container_claims_errors() -> None:
    spec = {"resourceClaims": [{"name": "net", "resourceClaimName": "d"}, {"name": "gpu", "resourceClaimName": "c"}]}
    resources = {"claims": [
        {"name": ""},
        {"name": "gpu", "request": "r1"},
        {"name": "gpu", "request": "r1"},
        {"name": "gpu"},
        {"name": "net", "request": "Bad_Req"},
        {"name": "net"},
        {"name": "missing"},
    ]}
    p = "spec.initContainers[1].resources"
    assert pairs(validate_resource_claim_names(resources, spec, p)) == [
        (f"{p}.claims[0]", "Required value"),
        (f"{p}.claims[2]", 'Duplicate value: "gpu/r1"'),
        (f"{p}.claims[3]", 'Duplicate value: "gpu"'),
        (f"{p}.claims[4].request", f'Invalid value: "Bad_Req": {LABEL_MSG}'),
        (f"{p}.claims[5]", 'Duplicate value: "net"'),
        (f"{p}.claims[6]", 'Not found: "missing": must be one of the names in pod.spec.resourceClaims: gpu, net'),
    ]


def test_container_claims_name_then_request_is_duplicate_and_empty_pod_claims() -> None:
    resources = {"claims": [{"name": "gpu"}, {"name": "gpu", "request": "r"}]}
    p = "spec.containers[0].resources"
    assert pairs(validate_resource_claim_names(resources, {}, p)) == [
        (f"{p}.claims[0]", 'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty'),
        (f"{p}.claims[1]", 'Duplicate value: "gpu"'),
        (f"{p}.claims[1]", 'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty'),
    ]


# ------------------------------------------------------------ hostNetwork

HOST_NET_MSG = "must match `containerPort` when `hostNetwork` is true"


def test_host_network_ports() -> None:
    spec = {"hostNetwork": True,
            "containers": [{"ports": [{"containerPort": 80, "hostPort": 80}, {"containerPort": 81, "hostPort": 8081},
                                      {"containerPort": 82}]}],
            "initContainers": [{"ports": [{"containerPort": 1, "hostPort": 2}]}]}
    assert pairs(validate_pod_host_network_deps(spec, "spec.template.spec")) == [
        ("spec.template.spec.containers[0].ports[1].hostPort", f"Invalid value: 8081: {HOST_NET_MSG}")]
    assert pairs(validate_pod_host_network_deps(spec, "spec", resource_is_pod=True)) == [
        ("spec.containers[0].ports[1].hostPort", f"Invalid value: 8081: {HOST_NET_MSG}"),
        ("spec.containers[0].ports[2].hostPort", f"Invalid value: 0: {HOST_NET_MSG}"),
    ]


def test_host_network_off() -> None:
    spec = {"containers": [{"ports": [{"containerPort": 81, "hostPort": 8081}]}]}
    assert validate_pod_host_network_deps(spec, "spec", resource_is_pod=True) == []
    assert validate_pod_host_network_deps({"hostNetwork": "yes", **spec}, "spec") == []


# ------------------------------------------------------------ nodeSelector, schedulingGates

def test_node_selector() -> None:
    assert validate_node_selector({"nodeSelector": {"kubernetes.io/os": "linux"}}, "spec") == []
    assert pairs(validate_node_selector({"nodeSelector": {"bad key": "bad value!"}}, "spec")) == [
        ("spec.nodeSelector", f'Invalid value: "bad key": {QUALIFIED_MSG}'),
        ("spec.nodeSelector", f'Invalid value: "bad value!": {LABEL_VALUE_MSG}'),
    ]
    assert validate_node_selector({"nodeSelector": ["x"]}, "spec") == []


def test_scheduling_gates() -> None:
    assert validate_scheduling_gates({"schedulingGates": [{"name": "example.com/gate"}]}, "spec") == []
    spec = {"schedulingGates": [{"name": "a"}, {"name": "bad gate"}, {"name": "a"}, {}]}
    assert pairs(validate_scheduling_gates(spec, "spec")) == [
        ("spec.schedulingGates[1]", f'Invalid value: "bad gate": {QUALIFIED_MSG}'),
        ("spec.schedulingGates[2]", 'Duplicate value: "a"'),
        ("spec.schedulingGates[3]", 'Invalid value: "": name part must be non-empty'),
        ("spec.schedulingGates[3]", f'Invalid value: "": {QUALIFIED_MSG}'),
    ]


# ------------------------------------------------------------ hostnameOverride

def test_hostname_override() -> None:
    assert validate_hostname_override({"hostnameOverride": "busybox-2.busybox.example.domain"}, "spec") == []
    assert validate_hostname_override({}, "spec") == []
    spec = {"hostnameOverride": "A" * 65, "setHostnameAsFQDN": True, "hostNetwork": True}
    assert pairs(validate_hostname_override(spec, "spec")) == [
        ("spec.hostnameOverride", "Forbidden: may not be specified when setHostnameAsFQDN is true"),
        ("spec.hostnameOverride", "Forbidden: may not be specified when hostNetwork is true"),
        ("spec.hostnameOverride", "Too long: may not be more than 64 bytes"),
        ("spec.hostnameOverride", f'Invalid value: "{"A" * 65}": {SUBDOMAIN_MSG}'),
    ]
    assert pairs(validate_hostname_override({"hostnameOverride": ""}, "spec")) == [
        ("spec.hostnameOverride", f'Invalid value: "": {SUBDOMAIN_MSG}')]


# ------------------------------------------------------------ names and numbers

def test_pod_names_valid() -> None:
    spec = {"serviceAccountName": "default", "nodeName": "node-1.example", "activeDeadlineSeconds": 2147483647,
            "hostname": "web-0", "subdomain": "web"}
    assert validate_pod_names(spec, "spec") == []
    assert validate_pod_names({"serviceAccountName": "", "nodeName": "", "hostname": "", "subdomain": ""},
                              "spec") == []


def test_pod_names_in_kube_order() -> None:
    spec = {"subdomain": "a.b", "hostname": "Web", "activeDeadlineSeconds": 0, "nodeName": "Node_1",
            "serviceAccountName": "Default"}
    assert pairs(validate_pod_names(spec, "spec.template.spec")) == [
        ("spec.template.spec.serviceAccountName", f'Invalid value: "Default": {SUBDOMAIN_MSG}'),
        ("spec.template.spec.nodeName", f'Invalid value: "Node_1": {SUBDOMAIN_MSG}'),
        ("spec.template.spec.activeDeadlineSeconds", "Invalid value: 0: must be between 1 and 2147483647, inclusive"),
        ("spec.template.spec.hostname", f'Invalid value: "Web": {LABEL_MSG}'),
        ("spec.template.spec.subdomain", 'Invalid value: "a.b": must not contain dots'),
    ]


@pytest.mark.parametrize("value", [2147483648, -1])
def test_active_deadline_out_of_range(value: int) -> None:
    assert pairs(validate_active_deadline_seconds({"activeDeadlineSeconds": value}, "spec")) == [
        ("spec.activeDeadlineSeconds", f"Invalid value: {value}: must be between 1 and 2147483647, inclusive")]
    assert validate_active_deadline_seconds({"activeDeadlineSeconds": "10"}, "spec") == []


def test_single_name_helpers() -> None:
    assert len(validate_service_account_name({"serviceAccountName": "x" * 254}, "spec")) == 1
    assert validate_node_name({"nodeName": "n"}, "spec") == []
    assert validate_hostname({"hostname": 5}, "spec") == []
    assert pairs(validate_subdomain({"subdomain": "-x"}, "spec")) == [
        ("spec.subdomain", f'Invalid value: "-x": {LABEL_MSG}')]


def test_priority_runtime_class_and_preemption() -> None:
    assert validate_pod_class_fields({"priorityClassName": "system-node-critical", "runtimeClassName": "gvisor",
                                      "preemptionPolicy": "Never"}, "spec") == []
    assert validate_priority_class_name({"priorityClassName": ""}, "spec") == []
    assert pairs(validate_runtime_class_name({"runtimeClassName": ""}, "spec")) == [
        ("spec.runtimeClassName", f'Invalid value: "": {SUBDOMAIN_MSG}')]
    assert validate_runtime_class_name({"runtimeClassName": None}, "spec") == []
    assert pairs(validate_preemption_policy({"preemptionPolicy": ""}, "spec")) == [
        ("spec.preemptionPolicy", "Required value")]
    spec = {"priorityClassName": "High", "runtimeClassName": "Bad", "preemptionPolicy": "Always"}
    assert pairs(validate_pod_class_fields(spec, "spec")) == [
        ("spec.priorityClassName", f'Invalid value: "High": {SUBDOMAIN_MSG}'),
        ("spec.runtimeClassName", f'Invalid value: "Bad": {SUBDOMAIN_MSG}'),
        ("spec.preemptionPolicy",
         'Unsupported value: "Always": supported values: "PreemptLowerPriority", "Never"'),
    ]


# ------------------------------------------------------------ overhead

def test_overhead_valid() -> None:
    assert validate_overhead({"overhead": {"cpu": "250m", "memory": "120Mi", "example.com/dev": "1"}}, "spec") == []
    assert validate_overhead({}, "spec") == []
    assert validate_overhead({"overhead": {"cpu": "1", "hugepages-2Mi": "4Mi"}}, "spec") == []


def test_overhead_errors() -> None:
    long_domain = "a" * 250 + "/x"  # a valid qualified name, but requests.<name> has a prefix over 253 characters
    spec = {"overhead": {"cpu": "-1", "foo": "1", "pods": "1", long_domain: "1", "example.com/a b": "1",
                         "hugepages-2Mi": "3Mi"}}
    assert pairs(validate_overhead(spec, "spec")) == [
        ("spec.overhead[cpu]", 'Invalid value: "-1": must be greater than or equal to 0'),
        ("spec.overhead[foo]", 'Invalid value: "foo": must be a standard resource type or fully qualified'),
        ("spec.overhead[foo]", 'Invalid value: "foo": must be a standard resource for containers'),
        ("spec.overhead[pods]", 'Invalid value: "pods": must be a standard resource for containers'),
        (f"spec.overhead[{long_domain}]",
         f'Invalid value: "{long_domain}": doesn\'t follow extended resource name standard'),
        ("spec.overhead[example.com/a b]", f'Invalid value: "example.com/a b": {QUALIFIED_MSG}'),
        ("spec.overhead[example.com/a b]",
         'Invalid value: "example.com/a b": doesn\'t follow extended resource name standard'),
        ("spec.overhead[hugepages-2Mi]", 'Invalid value: "3Mi": 3Mi is not positive integer multiple of hugepages-2Mi'),
    ]


def test_overhead_hugepages_need_cpu_or_memory() -> None:
    assert pairs(validate_overhead({"overhead": {"hugepages-1Gi": "1Gi"}}, "spec.template.spec")) == [
        ("spec.template.spec.overhead", "Forbidden: HugePages require cpu or memory")]
    assert pairs(validate_overhead({"overhead": {"memory": "1Gi", "hugepages-x": "1"}}, "spec")) == [
        ("spec.overhead[hugepages-x]", 'Invalid value: "1": 1 is not positive integer multiple of hugepages-x')]


# ------------------------------------------------------------ os

def test_os() -> None:
    assert validate_os({"os": {"name": "linux"}}, "spec") == []
    assert validate_os({"os": {"name": "windows"}}, "spec") == []
    assert validate_os({}, "spec") == []
    assert pairs(validate_os({"os": {}}, "spec")) == [("spec.os.name", "Required value")]
    assert pairs(validate_os({"os": {"name": "darwin"}}, "spec.template.spec")) == [
        ("spec.template.spec.os", 'Unsupported value: "darwin": supported values: "linux", "windows"')]


# ------------------------------------------------------------ fileKeyRef volumes

def test_file_key_ref_volumes() -> None:
    def env(volume: str) -> dict[str, Any]:
        return {"name": "K", "valueFrom": {"fileKeyRef": {"volumeName": volume, "path": "e.env", "key": "K"}}}
    spec = {"volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "c"}}],
            "containers": [{"env": [{"name": "A", "value": "1"}, env("scratch"), env("cfg")]}],
            "initContainers": [{"env": [env("nope")]}]}
    assert pairs(validate_file_key_ref_volumes(spec, "spec")) == [
        ("spec.initContainers[0].env[0].valueFrom.fileKeyRef.volumeName", 'Not found: "nope"'),
        ("spec.containers[0].env[2].valueFrom.fileKeyRef.volumeName",
         'Invalid value: "cfg": referenced volume must be of type emptyDir'),
    ]
    assert validate_file_key_ref_volumes({"containers": [{"env": [env("scratch")]}],
                                          "volumes": [{"name": "scratch", "emptyDir": {}}]}, "spec") == []


def test_wrong_types_do_not_raise() -> None:
    bad: dict[str, Any] = {"resourceClaims": "x", "containers": "x", "hostNetwork": True, "schedulingGates": [1],
                           "overhead": ["x"], "os": "linux", "hostnameOverride": 5, "preemptionPolicy": 1,
                           "volumes": [1]}
    for fn in (validate_pod_resource_claims, validate_pod_host_network_deps, validate_node_selector,
               validate_scheduling_gates, validate_hostname_override, validate_pod_names, validate_pod_class_fields,
               validate_os, validate_file_key_ref_volumes):
        fn(bad, "spec")
        fn("not a spec", "spec")
    assert validate_resource_claim_names("x", bad, "spec.containers[0].resources") == []
