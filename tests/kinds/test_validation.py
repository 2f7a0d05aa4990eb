"""kapi.kinds: the built-in kinds' semantic rules (Strategy.validate), message for message."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from kapi import validation
from kapi.errors import Cause
from kapi.kinds import podspec, strategy_for
from kapi.validation import regex_error

PORT_MSG = "must be between 1 and 65535, inclusive"
KEY_MSG = regex_error(validation.CONFIG_KEY_MSG, validation.CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
             "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
PROTOCOLS = 'supported values: "SCTP", "TCP", "UDP"'
TOO_LONG = Cause("FieldValueTooLong", "Too long: must have at most 1048576 bytes", "data")


def _inv(path: str, value: str, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {value}: {detail}", path)


def _req(path: str) -> Cause:
    return Cause("FieldValueRequired", "Required value", path)


def _ns(path: str, value: str, supported: str) -> Cause:
    return Cause("FieldValueNotSupported", f'Unsupported value: "{value}": {supported}', path)


def _dup(path: str, value: str) -> Cause:
    return Cause("FieldValueDuplicate", f'Duplicate value: "{value}"', path)


POD_SPEC: dict[str, Any] = {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}]}
TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC}
WORKLOAD_SPEC: dict[str, Any] = {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": TEMPLATE}


def _obj(group: str, kind: str, **fields: Any) -> dict[str, Any]:
    obj = {"apiVersion": f"{group}/v1" if group else "v1", "kind": kind, "metadata": {"name": "x", "namespace": "d"},
           **copy.deepcopy(fields)}
    strategy_for(group, kind).default(obj)
    return obj


def _spec(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``base`` with the dotted ``path`` (list indexes as numbers) set to ``value`` (None deletes)."""
    out = copy.deepcopy(base)
    node: Any = out
    parts = [int(p) if p.isdigit() else p for p in path.split(".")]
    for part in parts[:-1]:
        node = node[part]
    if value is None:
        del node[parts[-1]]
    else:
        node[parts[-1]] = value
    return out


SERVICE_SPEC: dict[str, Any] = {"selector": {"app": "web"}, "ports": [{"port": 80}]}
TWO_PORTS = [{"name": "http", "port": 80}, {"name": "https", "port": 443}]

CASES: list[tuple[str, str, str, dict[str, Any], list[Cause]]] = [
    # ConfigMap / Secret
    ("cm-valid", "", "ConfigMap", {"data": {"a.b_C-1": "v"}, "binaryData": {"bin": "AAEC"}}, []),
    ("cm-bad-key", "", "ConfigMap", {"data": {"a/b": "v"}}, [_inv("data[a/b]", '"a/b"', KEY_MSG)]),
    ("cm-dot-keys", "", "ConfigMap", {"data": {"..x": "v"}, "binaryData": {".": "AA=="}},
     [_inv("data[..x]", '"..x"', "must not start with '..'"), _inv("binaryData[.]", '"."', "must not be '.'")]),
    ("cm-dup-binary", "", "ConfigMap", {"data": {"k": "v"}, "binaryData": {"k": "AA=="}},
     [_inv("binaryData[k]", '"k"', "duplicate of key present in data")]),
    ("cm-1MiB", "", "ConfigMap", {"data": {"a": "x" * (1 << 20)}}, []),
    ("cm-too-big", "", "ConfigMap", {"data": {"a": "x" * (1 << 19)}, "binaryData": {"b": base64.b64encode(
        b"y" * ((1 << 19) + 1)).decode()}}, [TOO_LONG]),
    ("secret-valid", "", "Secret", {"data": {"tls.crt": "AAEC"}}, []),
    ("secret-bad-key", "", "Secret", {"data": {"a b": "AAEC"}}, [_inv("data[a b]", '"a b"', KEY_MSG)]),
    ("secret-too-big", "", "Secret", {"data": {"a": base64.b64encode(b"y" * ((1 << 20) + 1)).decode()}}, [TOO_LONG]),
    ("secret-stringdata-too-big", "", "Secret", {"stringData": {"a": "y" * ((1 << 20) + 1)}}, [TOO_LONG]),
    # Service
    ("svc-valid", "", "Service", {"spec": SERVICE_SPEC}, []),
    ("svc-port-range", "", "Service", {"spec": _spec(SERVICE_SPEC, "ports.0.port", 70000)},
     [_inv("spec.ports[0].port", "70000", PORT_MSG), _inv("spec.ports[0].targetPort", "70000", PORT_MSG)]),
    # a targetPort of 0 is unset to SetDefaults_Service (it becomes the port); one out of range is refused
    ("svc-target-port", "", "Service", {"spec": _spec(SERVICE_SPEC, "ports.0.targetPort", 70000)},
     [_inv("spec.ports[0].targetPort", "70000", PORT_MSG)]),
    ("svc-no-ports", "", "Service", {"spec": {"selector": {"a": "b"}}}, [_req("spec.ports")]),
    ("svc-no-ports-nodeport", "", "Service", {"spec": {"type": "NodePort"}}, [_req("spec.ports")]),
    ("svc-headless-no-ports", "", "Service", {"spec": {"clusterIP": "None"}}, []),
    ("svc-externalname-no-ports", "", "Service", {"spec": {"type": "ExternalName", "externalName": "a.b"}}, []),
    ("svc-type", "", "Service", {"spec": _spec(SERVICE_SPEC, "type", "Foo")},
     [_ns("spec.type", "Foo", 'supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"')]),
    ("svc-protocol", "", "Service", {"spec": _spec(SERVICE_SPEC, "ports.0.protocol", "HTTP")},
     [_ns("spec.ports[0].protocol", "HTTP", PROTOCOLS)]),
    ("svc-two-ports-named", "", "Service", {"spec": {"ports": TWO_PORTS}}, []),
    ("svc-names-required", "", "Service", {"spec": {"ports": [{"port": 80}, {"name": "b", "port": 81}]}},
     [_req("spec.ports[0].name")]),
    ("svc-names-unique", "", "Service", {"spec": {"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 81}]}},
     [_dup("spec.ports[1].name", "a")]),
    ("svc-name-label", "", "Service", {"spec": {"ports": [{"name": "Web", "port": 80}]}},
     [_inv("spec.ports[0].name", '"Web"', LABEL_MSG)]),
    # Pod
    ("pod-valid", "", "Pod", {"spec": POD_SPEC}, []),
    ("pod-no-containers", "", "Pod", {"spec": {"containers": []}}, [_req("spec.containers")]),
    ("pod-container-name", "", "Pod", {"spec": _spec(POD_SPEC, "containers.0.name", "Web_1")},
     [_inv("spec.containers[0].name", '"Web_1"', LABEL_MSG)]),
    ("pod-dup-names", "", "Pod", {"spec": {"initContainers": [{"name": "web", "image": "i"}],
                                           "containers": POD_SPEC["containers"]}},
     [_dup("spec.initContainers[0].name", "web")]),  # regular containers are validated first
    ("pod-no-image", "", "Pod", {"spec": _spec(POD_SPEC, "containers.0.image", "")},
     [_req("spec.containers[0].image")]),
    ("pod-container-port", "", "Pod", {"spec": _spec(POD_SPEC, "containers.0.ports.0.containerPort", 70000)},
     [_inv("spec.containers[0].ports[0].containerPort", "70000", PORT_MSG)]),
    ("pod-container-port-zero", "", "Pod", {"spec": _spec(POD_SPEC, "containers.0.ports.0.containerPort", 0)},
     [_req("spec.containers[0].ports[0].containerPort")]),
    ("pod-host-port", "", "Pod", {"spec": _spec(POD_SPEC, "containers.0.ports.0.hostPort", -1)},
     [_inv("spec.containers[0].ports[0].hostPort", "-1", PORT_MSG)]),
    ("pod-port-protocol", "", "Pod", {"spec": _spec(POD_SPEC, "containers.0.ports.0.protocol", "tcp")},
     [_ns("spec.containers[0].ports[0].protocol", "tcp", PROTOCOLS)]),
    ("pod-restart-policy", "", "Pod", {"spec": _spec(POD_SPEC, "restartPolicy", "Sometimes")},
     [_ns("spec.restartPolicy", "Sometimes", 'supported values: "Always", "OnFailure", "Never"')]),
    ("pod-dns-policy", "", "Pod", {"spec": _spec(POD_SPEC, "dnsPolicy", "Google")},
     [_ns("spec.dnsPolicy", "Google",
          'supported values: "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"')]),
    ("podtemplate-no-containers", "", "PodTemplate", {"template": {"spec": {"containers": []}}},
     [_req("template.spec.containers")]),
    # workloads
    ("deploy-valid", "apps", "Deployment", {"spec": WORKLOAD_SPEC}, []),
    ("deploy-negative-replicas", "apps", "Deployment", {"spec": _spec(WORKLOAD_SPEC, "replicas", -1)},
     [_inv("spec.replicas", "-1", "must be greater than or equal to 0")]),
    ("deploy-no-selector", "apps", "Deployment", {"spec": _spec(WORKLOAD_SPEC, "selector", None)},
     [_req("spec.selector")]),
    ("deploy-empty-selector", "apps", "Deployment", {"spec": _spec(WORKLOAD_SPEC, "selector", {"matchLabels": {}})},
     [_inv("spec.selector", podspec.EMPTY_SELECTOR, "empty selector is invalid for deployment")]),
    ("deploy-selector-mismatch", "apps", "Deployment",
     {"spec": _spec(WORKLOAD_SPEC, "selector", {"matchLabels": {"app": "db"}})},
     [_inv("spec.template.metadata.labels", 'map[string]string{"app":"web"}', podspec.SELECTOR_MISMATCH)]),
    ("deploy-selector-expression", "apps", "Deployment", {"spec": _spec(WORKLOAD_SPEC, "selector", {
        "matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]})}, []),
    ("deploy-restart-policy", "apps", "Deployment",
     {"spec": _spec(WORKLOAD_SPEC, "template.spec.restartPolicy", "Never")},
     [_ns("spec.template.spec.restartPolicy", "Never", 'supported values: "Always"')]),
    ("deploy-template-pod-spec", "apps", "Deployment",
     {"spec": _spec(WORKLOAD_SPEC, "template.spec.containers.0.image", "")},
     [_req("spec.template.spec.containers[0].image")]),
    ("rs-mismatch", "apps", "ReplicaSet", {"spec": _spec(WORKLOAD_SPEC, "template.metadata.labels", None)},
     [_inv("spec.template.metadata.labels", "map[string]string(nil)", podspec.SELECTOR_MISMATCH)]),
    ("sts-valid", "apps", "StatefulSet", {"spec": {**WORKLOAD_SPEC, "serviceName": "web"}}, []),
    ("sts-negative-replicas", "apps", "StatefulSet", {"spec": _spec(WORKLOAD_SPEC, "replicas", -2)},
     [_inv("spec.replicas", "-2", "must be greater than or equal to 0")]),
    ("ds-no-containers", "apps", "DaemonSet", {"spec": _spec(WORKLOAD_SPEC, "template.spec.containers", [])},
     [_req("spec.template.spec.containers")]),
    ("job-valid", "batch", "Job", {"spec": {"template": _spec(TEMPLATE, "spec.restartPolicy", "Never")}}, []),
    # validateJobSpec: Always (the PodSpec default) is a missing restartPolicy to a Job
    ("job-restart-always", "batch", "Job", {"spec": {"template": TEMPLATE}},
     [Cause("FieldValueRequired", 'Required value: valid values: "OnFailure", "Never"',
            "spec.template.spec.restartPolicy")]),
    ("job-restart-unknown", "batch", "Job", {"spec": {"template": _spec(TEMPLATE, "spec.restartPolicy", "Sometimes")}},
     [_ns("spec.template.spec.restartPolicy", "Sometimes", 'supported values: "Always", "OnFailure", "Never"'),
      _ns("spec.template.spec.restartPolicy", "Sometimes", 'supported values: "OnFailure", "Never"')]),
    ("cronjob-template", "batch", "CronJob", {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {
        "template": _spec(TEMPLATE, "spec.containers.0.name", "")}}}},
     [_req("spec.jobTemplate.spec.template.spec.containers[0].name"),
      Cause("FieldValueRequired", 'Required value: valid values: "OnFailure", "Never"',
            "spec.jobTemplate.spec.template.spec.restartPolicy")]),
    ("rc-valid", "", "ReplicationController", {"spec": {"replicas": 1, "selector": {"app": "web"},
                                                        "template": TEMPLATE}}, []),
    ("unknown-kind", "example.com", "Widget", {"spec": {"replicas": -1}}, []),
]


@pytest.mark.parametrize(("group", "kind", "fields", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validate(group: str, kind: str, fields: dict[str, Any], expected: list[Cause]) -> None:
    assert strategy_for(group, kind).validate(_obj(group, kind, **fields)) == expected


@pytest.mark.parametrize(("key", "messages"), [
    ("key.name", []), ("KEY_NAME", []), ("a" * 253, []),
    ("a" * 254, ["must be no more than 253 characters"]),
    ("", [KEY_MSG]), ("..", ["must not be '..'"]), ("a:b", [KEY_MSG]),
])
def test_is_config_map_key(key: str, messages: list[str]) -> None:
    assert validation.is_config_map_key(key) == messages


def test_bad_shapes_never_raise() -> None:
    for group, kind in [("", "Pod"), ("", "Service"), ("apps", "Deployment"), ("batch", "CronJob"), ("", "Secret")]:
        for junk in [{"spec": 1}, {"spec": {"containers": "x", "ports": [1], "template": []}}, {"data": [1]}]:
            strategy_for(group, kind).validate({"kind": kind, **junk})
