"""kapi.kinds.podcontainers: kube 1.37's per-container rules beyond name/image/ports/env names/mount basics."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds import podcontainers as pc

C = "spec.containers[0]"
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
             "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
ENV_NAME_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"
ENV_PATHS = ('"metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName", '
             '"status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"')


def pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


# ------------------------------------------------------------ terminationMessagePolicy, imagePullPolicy

@pytest.mark.parametrize(("value", "expected"), [
    ("File", []),
    ("FallbackToLogsOnError", []),
    ("", [(f"{C}.terminationMessagePolicy", "Required value")]),
    ("Log", [(f"{C}.terminationMessagePolicy",
              'Unsupported value: "Log": supported values: "File", "FallbackToLogsOnError"')]),
    (3, []),  # the schema's
])
def test_termination_message_policy(value: Any, expected: list[tuple[str, str]]) -> None:
    assert pairs(pc.validate_termination_message_policy({"terminationMessagePolicy": value}, C)) == expected


def test_termination_message_policy_empty_is_required_absent_is_defaulting_s() -> None:
    assert pairs(pc.validate_termination_message_policy({"terminationMessagePolicy": ""}, C)) == [
        (f"{C}.terminationMessagePolicy", "Required value")]
    assert pc.validate_termination_message_policy({}, C) == []  # v1 defaulting sets File first


@pytest.mark.parametrize(("value", "expected"), [
    ("Always", []), ("IfNotPresent", []), ("Never", []),
    ("", [(f"{C}.imagePullPolicy", "Required value")]),
    ("always", [(f"{C}.imagePullPolicy",
                 'Unsupported value: "always": supported values: "Always", "IfNotPresent", "Never"')]),
    (["Always"], []),
])
def test_pull_policy(value: Any, expected: list[tuple[str, str]]) -> None:
    assert pairs(pc.validate_pull_policy({"imagePullPolicy": value}, C)) == expected


# ------------------------------------------------------------ env valueFrom

def vf(source: dict[str, Any], **var: Any) -> list[tuple[str, str]]:
    return pairs(pc.env_var_value_from({"name": "A", "valueFrom": source, **var}, f"{C}.env[0]"))


V = f"{C}.env[0].valueFrom"


def test_value_from_absent_or_valid() -> None:
    assert vf({"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}) == []
    assert vf({"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.host"}}) == []  # converted to spec.nodeName
    assert vf({"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['app']"}}) == []
    assert vf({"resourceFieldRef": {"resource": "requests.hugepages-2Mi"}}) == []
    assert vf({"configMapKeyRef": {"name": "cm", "key": "k.1"}}) == []
    assert vf({"fileKeyRef": {"volumeName": "env", "path": "a/b.env", "key": "K"}}) == []
    assert pairs(pc.env_var_value_from({"name": "A", "value": "x"}, f"{C}.env[0]")) == []


def test_value_from_no_source() -> None:
    assert vf({}) == [(V, 'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, '
                          '`secretKeyRef` or `fileKeyRef`')]


def test_value_from_no_source_without_env_files() -> None:
    causes = pc.env_var_value_from({"name": "A", "valueFrom": {"fileKeyRef": {}}}, f"{C}.env[0]", env_files=False)
    assert pairs(causes) == [(V, 'Invalid value: "": must specify one of: `fieldRef`, `resourceFieldRef`, '
                                 '`configMapKeyRef` or `secretKeyRef`')]


def test_value_from_with_value_and_two_sources() -> None:
    assert vf({"configMapKeyRef": {"name": "a", "key": "k"}}, value="x") == [
        (V, 'Invalid value: "": may not be specified when `value` is not empty')]
    assert vf({"configMapKeyRef": {"name": "a", "key": "k"}, "secretKeyRef": {"name": "b", "key": "k"}}) == [
        (V, 'Invalid value: "": may not have more than one field specified at a time')]
    # a set value wins over the count
    assert vf({"configMapKeyRef": {"name": "a", "key": "k"}, "secretKeyRef": {"name": "b", "key": "k"}},
              value="x") == [(V, 'Invalid value: "": may not be specified when `value` is not empty')]


def test_field_ref_required_and_conversion() -> None:
    assert vf({"fieldRef": {"fieldPath": "metadata.name"}}) == [(f"{V}.fieldRef.apiVersion", "Required value")]
    assert vf({"fieldRef": {"apiVersion": "v1"}}) == [(f"{V}.fieldRef.fieldPath", "Required value")]
    assert vf({"fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.name"}}) == [
        (f"{V}.fieldRef.fieldPath", 'Invalid value: "metadata.name": error converting fieldPath: unsupported pod '
                                    'version: v2')]


@pytest.mark.parametrize("field_path", ["metadata.labels", "metadata.annotations", "status.phase"])
def test_field_ref_env_paths(field_path: str) -> None:
    # labels and annotations only through a subscript; volume-only paths are not for env
    assert vf({"fieldRef": {"apiVersion": "v1", "fieldPath": field_path}}) == [
        (f"{V}.fieldRef.fieldPath", f'Unsupported value: "{field_path}": supported values: {ENV_PATHS}')]


def test_field_ref_env_only_path() -> None:
    assert vf({"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}) == []


def test_field_ref_subscript_key() -> None:
    assert vf({"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['a b']"}}) == [
        (f"{V}.fieldRef", 'Invalid value: "a b": name part must consist of alphanumeric characters, \'-\', \'_\' or '
                          "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
                          "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]


def test_resource_field_ref() -> None:
    # no containerName needed for env (validateContainerResourceFieldSelector with volume false)
    assert vf({"resourceFieldRef": {"resource": "limits.memory"}}) == []
    assert vf({"resourceFieldRef": {}}) == [(f"{V}.resourceFieldRef.resource", "Required value")]
    assert vf({"resourceFieldRef": {"resource": "limits.gpu"}}) == [
        (f"{V}.resourceFieldRef.resource", 'Unsupported value: "limits.gpu": supported values: "limits.cpu", '
                                           '"limits.ephemeral-storage", "limits.memory", "requests.cpu", '
                                           '"requests.ephemeral-storage", "requests.memory"')]
    assert vf({"resourceFieldRef": {"resource": "limits.cpu", "divisor": "2"}}) == [
        (f"{V}.resourceFieldRef.divisor", 'Invalid value: "limits.cpu": only divisor\'s values 1m and 1 are '
                                          'supported with the cpu resource')]


def test_key_selectors() -> None:
    # the name is checked even when empty (nameFn on ""), not Required
    assert vf({"configMapKeyRef": {"key": "k"}}) == [
        (f"{V}.configMapKeyRef.name", f'Invalid value: "": {SUBDOMAIN_MSG}')]
    assert vf({"secretKeyRef": {"name": "s"}}) == [(f"{V}.secretKeyRef.key", "Required value")]
    assert vf({"secretKeyRef": {"name": "Bad", "key": "a b"}}) == [
        (f"{V}.secretKeyRef.name", f'Invalid value: "Bad": {SUBDOMAIN_MSG}'),
        (f"{V}.secretKeyRef.key", 'Invalid value: "a b": a valid config key must consist of alphanumeric characters, '
                                  "'-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for "
                                  "validation is '[-._a-zA-Z0-9]+')")]
    assert vf({"configMapKeyRef": {"name": "c", "key": "..a"}}) == [
        (f"{V}.configMapKeyRef.key", "Invalid value: \"..a\": must not start with '..'")]


def test_file_key_ref() -> None:
    assert vf({"fileKeyRef": {}}) == [(f"{V}.fileKeyRef.key", "Required value"),
                                      (f"{V}.fileKeyRef.volumeName", "Required value"),
                                      (f"{V}.fileKeyRef.path", "Required value")]
    assert vf({"fileKeyRef": {"key": "a=b", "volumeName": "V", "path": "x/../y"}}) == [
        (f"{V}.fileKeyRef.key", f'Invalid value: "a=b": {ENV_NAME_MSG}'),
        (f"{V}.fileKeyRef.volumeName", f'Invalid value: "V": {LABEL_MSG}'),
        (f"{V}.fileKeyRef.path", "Invalid value: \"x/../y\": must not contain '..'")]


def test_validate_env_value_from_indexes_vars() -> None:
    container = {"env": [{"name": "A", "value": "1"}, {"name": "B", "valueFrom": {}}]}
    assert [c.field for c in pc.validate_env_value_from(container, C)] == [f"{C}.env[1].valueFrom"]


# ------------------------------------------------------------ envFrom

def test_env_from_valid() -> None:
    container = {"envFrom": [{"prefix": "P_", "configMapRef": {"name": "cm-"}}, {"secretRef": {"name": "s"}}]}
    assert pc.validate_env_from(container, C) == []  # ConfigMap/Secret names with generateName rules: "cm-" is fine


def test_env_from_errors() -> None:
    container = {"envFrom": [{"prefix": "a=", "configMapRef": {"name": "x"}}, {},
                             {"configMapRef": {}, "secretRef": {"name": "Bad"}}]}
    assert pairs(pc.validate_env_from(container, C)) == [
        (f"{C}.envFrom[0].prefix", f'Invalid value: "a=": {ENV_NAME_MSG}'),
        (f"{C}.envFrom", 'Invalid value: "": must specify one of: `configMapRef` or `secretRef`'),
        (f"{C}.envFrom[2].configMapRef.name", "Required value"),
        (f"{C}.envFrom[2].secretRef.name", f'Invalid value: "Bad": {SUBDOMAIN_MSG}'),
        (f"{C}.envFrom", 'Invalid value: "": may not have more than one field specified at a time')]


# ------------------------------------------------------------ volumeMounts (the rest) and volumeDevices

M = f"{C}.volumeMounts"


def test_mounts_valid() -> None:
    container = {"volumeMounts": [{"name": "a", "mountPath": "/a", "subPath": "x/y", "mountPropagation": "None",
                                   "readOnly": True, "recursiveReadOnly": "Enabled"},
                                  {"name": "b", "mountPath": "/b", "subPathExpr": "$(POD)", "recursiveReadOnly":
                                   "Disabled", "mountPropagation": "HostToContainer"}]}
    assert pc.validate_volume_mounts(container, C) == []


def test_mount_sub_paths() -> None:
    container = {"volumeMounts": [{"name": "a", "mountPath": "/a", "subPath": "/abs/../x"},
                                  {"name": "b", "mountPath": "/b", "subPathExpr": ".."}]}
    assert pairs(pc.validate_volume_mounts(container, C)) == [
        (f"{M}.subPath", 'Invalid value: "/abs/../x": must be a relative path'),
        (f"{M}.subPath", "Invalid value: \"/abs/../x\": must not contain '..'"),
        (f"{M}.subPathExpr", "Invalid value: \"..\": must not contain '..'")]


def test_mount_propagation() -> None:
    mounts = [{"name": "a", "mountPath": "/a", "mountPropagation": "Shared"},
              {"name": "b", "mountPath": "/b", "mountPropagation": "Bidirectional"}]
    container: dict[str, Any] = {"volumeMounts": mounts}
    assert pairs(pc.validate_volume_mounts(container, C)) == [
        (f"{M}.mountPropagation",
         'Unsupported value: "Shared": supported values: "Bidirectional", "HostToContainer", "None"'),
        (f"{M}.mountPropagation", "Forbidden: Bidirectional mount propagation is available only to privileged "
                                  "containers")]
    container["securityContext"] = {"privileged": True}
    assert pairs(pc.validate_volume_mounts(container, C)) == [
        (f"{M}.mountPropagation",
         'Unsupported value: "Shared": supported values: "Bidirectional", "HostToContainer", "None"')]


def test_recursive_read_only() -> None:
    container = {"volumeMounts": [
        {"name": "a", "mountPath": "/a", "recursiveReadOnly": "IfPossible", "mountPropagation": "HostToContainer"},
        {"name": "b", "mountPath": "/b", "recursiveReadOnly": "Always", "readOnly": True}]}
    assert pairs(pc.validate_volume_mounts(container, C)) == [
        (f"{M}.recursiveReadOnly", "Forbidden: may only be specified when readOnly is true"),
        (f"{M}.recursiveReadOnly", "Forbidden: may only be specified when mountPropagation is None or not specified"),
        (f"{M}.recursiveReadOnly",
         'Unsupported value: "Always": supported values: "Disabled", "Enabled", "IfPossible"')]


def test_mount_device_overlap_and_split() -> None:
    container = {"volumeMounts": [{"name": "d", "mountPath": "/dev/xvda", "subPath": "/x", "subPathExpr": "/y"}],
                 "volumeDevices": [{"name": "d", "devicePath": "/dev/xvda"}]}
    before, after = pc.volume_mount_extras(container, C, 0)
    assert pairs(before) == [(f"{M}[0].name", 'Invalid value: "d": must not already exist in volumeDevices'),
                             (f"{M}[0].mountPath",
                              'Invalid value: "/dev/xvda": must not already exist as a path in volumeDevices'),
                             (f"{M}.subPath", 'Invalid value: "/x": must be a relative path')]
    assert pairs(after) == [(f"{M}.subPathExpr", 'Invalid value: "/y": must be a relative path')]
    assert pc.volume_mount_extras(container, C, 5) == ([], [])


D = f"{C}.volumeDevices"
PVC = {"persistentVolumeClaim": {"claimName": "c"}}


def test_devices_valid() -> None:
    volumes = {"blk": {"name": "blk", **PVC}, "eph": {"name": "eph", "ephemeral": {"volumeClaimTemplate": {}}}}
    container = {"volumeDevices": [{"name": "blk", "devicePath": "/dev/a"}, {"name": "eph", "devicePath": "/dev/b"}]}
    assert pc.validate_volume_devices(container, C, volumes) == []


def test_devices_errors() -> None:
    volumes = {"blk": {"name": "blk", **PVC}, "tmp": {"name": "tmp", "emptyDir": {}}}
    container = {
        "volumeMounts": [{"name": "blk2", "mountPath": "/dev/m"}],
        "volumeDevices": [
            {"devicePath": "/dev/a"},
            {"name": "blk", "devicePath": "/dev/a"},
            {"name": "blk", "devicePath": "/dev/../x"},
            {"name": "tmp"},
            {"name": "nope", "devicePath": "/dev/m"},
            {"name": "blk2", "devicePath": "/dev/c"},
        ]}
    assert pairs(pc.validate_volume_devices(container, C, volumes)) == [
        (f"{D}[0].name", "Required value"),
        (f"{D}[0].name", 'Not found: ""'),
        (f"{D}[1].devicePath", 'Invalid value: "/dev/a": must be unique'),
        (f"{D}[2].name", 'Invalid value: "blk": must be unique'),
        (f"{D}[2].devicePath", "Invalid value: \"/dev/../x\": can not contain backsteps ('..')"),
        (f"{D}[3].name", 'Invalid value: "tmp": can only use volume source type of PersistentVolumeClaim or '
                         'Ephemeral for block mode'),
        (f"{D}[3].devicePath", "Required value"),
        (f"{D}[4].name", 'Not found: "nope"'),
        (f"{D}[4].devicePath", 'Invalid value: "/dev/m": must not already exist as a path in volumeMounts'),
        (f"{D}[5].name", 'Not found: "blk2"'),
        (f"{D}[5].name", 'Invalid value: "blk2": must not already exist in volumeMounts'),
    ]


# ------------------------------------------------------------ resizePolicy

R = f"{C}.resizePolicy"


def test_resize_policy_valid() -> None:
    container = {"resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                                  {"resourceName": "memory", "restartPolicy": "RestartContainer"}]}
    assert pc.validate_resize_policy(container, C, "Always") == []


def test_resize_policy_errors() -> None:
    container = {"resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                                  {"resourceName": "cpu", "restartPolicy": "Sometimes"},
                                  {"resourceName": "", "restartPolicy": ""},
                                  {"resourceName": "gpu", "restartPolicy": "NotRequired"}]}
    assert pairs(pc.validate_resize_policy(container, C, "Always")) == [
        (f"{R}[1]", 'Duplicate value: "cpu"'),
        (R, 'Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer"'),
        (R, "Required value"),
        (R, "Required value"),
        (R, 'Unsupported value: "gpu": supported values: "cpu", "memory"')]


def test_resize_policy_pod_never() -> None:
    container = {"resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                                  {"resourceName": "memory", "restartPolicy": "RestartContainer"}]}
    assert pairs(pc.validate_resize_policy(container, C, "Never")) == [
        (R, "Invalid value: \"RestartContainer\": must be 'NotRequired' when pod `restartPolicy` is 'Never'")]


def test_init_container_resize_restart_container() -> None:
    i = "spec.initContainers[1]"
    container = {"resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"},
                                  {"resourceName": "memory", "restartPolicy": "RestartContainer"}]}
    assert pairs(pc.validate_init_container_resize_policy(container, i)) == [
        (f"{i}.resizePolicy[1].restartPolicy",
         "Invalid value: \"RestartContainer\": must not be set to 'RestartContainer' for non-sidecar initContainers")]
    assert pc.validate_init_container_resize_policy({**container, "restartPolicy": "Always"}, i) == []


# ------------------------------------------------------------ container restartPolicy / restartPolicyRules

RULE = {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}


def test_regular_restart_policy_with_rules_gate() -> None:
    assert pc.validate_container_restart_policy({}, C) == []
    assert pc.validate_container_restart_policy({"restartPolicy": "Never", "restartPolicyRules": [RULE]}, C) == []
    assert pairs(pc.validate_container_restart_policy({"restartPolicy": "Sometimes"}, C)) == [
        (f"{C}.restartPolicy", 'Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"')]
    assert pairs(pc.validate_container_restart_policy({"restartPolicyRules": [RULE]}, C)) == [
        (f"{C}.restartPolicy", "Required value: must specify restartPolicy when restart rules are used")]


def test_regular_restart_policy_without_rules_gate() -> None:
    assert pairs(pc.validate_container_restart_policy({"restartPolicy": "Always"}, C, restart_rules=False)) == [
        (f"{C}.restartPolicy", "Forbidden: may not be set for non-init containers")]
    assert pc.validate_container_restart_policy({}, C, restart_rules=False) == []


def test_restart_policy_rules() -> None:
    rules = [{"action": "Stop", "exitCodes": {"operator": "Is", "values": list(range(256))}}, {"action": "Restart"}]
    assert pairs(pc.validate_container_restart_policy({"restartPolicy": "Never", "restartPolicyRules": rules}, C)) == [
        (f"{C}.restartPolicyRules[0].action", 'Unsupported value: "Stop": supported values: "Restart"'),
        (f"{C}.restartPolicyRules[0].exitCodes.operator", 'Unsupported value: "Is": supported values: "In", "NotIn"'),
        (f"{C}.restartPolicyRules[0].exitCodes.values", "Too many: 256: must have at most 255 items"),
        (f"{C}.restartPolicyRules[1].exitCodes", "Required value: must be specified")]
    many = {"restartPolicy": "OnFailure", "restartPolicyRules": [RULE] * 21}
    assert pairs(pc.validate_container_restart_policy(many, C)) == [
        (f"{C}.restartPolicyRules", "Too many: 21: must have at most 20 items")]


def test_init_restart_policy() -> None:
    i = "spec.initContainers[0]"
    assert pc.validate_container_restart_policy({"restartPolicy": "Always"}, i, init=True) == []
    assert pc.validate_container_restart_policy({"restartPolicy": "Never"}, i, init=True) == []
    assert pairs(pc.validate_container_restart_policy({"restartPolicy": "Always", "restartPolicyRules": [RULE]}, i,
                                                      init=True)) == [
        (f"{i}.restartPolicyRules",
         "Forbidden: restartPolicyRules are not allowed for init containers with restart policy Always")]
    assert pairs(pc.validate_container_restart_policy({"restartPolicyRules": [RULE]}, i, init=True)) == [
        (f"{i}.restartPolicy", "Required value: must specify restartPolicy when restart rules are used")]
    assert pairs(pc.validate_container_restart_policy({"restartPolicy": "Sometimes"}, i, init=True)) == [
        (f"{i}.restartPolicy", 'Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"')]


def test_init_restart_policy_without_rules_gate() -> None:
    i = "spec.initContainers[0]"
    assert pairs(pc.validate_container_restart_policy({"restartPolicy": "Never"}, i, init=True,
                                                      restart_rules=False)) == [
        (f"{i}.restartPolicy", 'Unsupported value: "Never": supported values: "Always"')]
    assert pc.validate_container_restart_policy({"restartPolicy": "Always"}, i, init=True, restart_rules=False) == []


# ------------------------------------------------------------ host ports

def test_host_port_conflicts() -> None:
    containers = [
        {"ports": [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"},
                   {"containerPort": 81, "hostPort": 80, "protocol": "UDP"}]},
        {"ports": [{"containerPort": 80, "hostPort": 80, "protocol": "TCP"},
                   {"containerPort": 80, "hostPort": 80, "protocol": "TCP", "hostIP": "10.0.0.1"},
                   {"containerPort": 90}]},
        {"ports": [{"containerPort": 80, "hostPort": 80, "protocol": "TCP", "hostIP": "10.0.0.1"}]},
    ]
    assert pairs(pc.validate_host_port_conflicts(containers, "spec.containers")) == [
        ("spec.containers[1].ports[0].hostPort", 'Duplicate value: "TCP//80"'),
        ("spec.containers[2].ports[0].hostPort", 'Duplicate value: "TCP/10.0.0.1/80"')]


def test_host_port_conflicts_init_container_quirk() -> None:
    init = {"ports": [{"containerPort": 1, "hostPort": 53, "protocol": "UDP"},
                      {"containerPort": 2, "hostPort": 53, "protocol": "UDP"}]}
    # validateInitContainers checks each init container alone, as a one-element list
    assert pairs(pc.validate_host_port_conflicts([init], "spec.initContainers")) == [
        ("spec.initContainers[0].ports[1].hostPort", 'Duplicate value: "UDP//53"')]


# ------------------------------------------------------------ ephemeral containers and image whitespace

E = "spec.ephemeralContainers[0]"


def test_image_whitespace() -> None:
    assert pc.validate_image_whitespace({"image": "busybox"}, E) == []
    assert pc.validate_image_whitespace({"image": "\x1cbusybox"}, E) == []  # not unicode.IsSpace
    assert pairs(pc.validate_image_whitespace({"image": " busybox\u00a0"}, E)) == [
        (f"{E}.image", 'Invalid value: " busybox\\u00a0": must not have leading or trailing whitespace')]  # %q escapes


def test_ephemeral_valid() -> None:
    container = {"name": "debug", "image": "busybox", "targetContainerName": "app", "resources": {},
                 "volumeMounts": [{"name": "v", "mountPath": "/v"}], "env": [{"name": "A", "value": "1"}],
                 "securityContext": {}, "stdin": True}
    assert pc.validate_ephemeral_container(container, E, {"app", "init"}) == []


def test_ephemeral_forbidden_fields() -> None:
    container = {"targetContainerName": "missing", "ports": [], "resources": {"limits": {}}, "resizePolicy": [],
                 "restartPolicy": "Always", "restartPolicyRules": [RULE], "livenessProbe": {},
                 "readinessProbe": {}, "startupProbe": {}, "lifecycle": {},
                 "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "x", "subPathExpr": "y"}]}
    forbidden = "Forbidden: cannot be set for an Ephemeral Container"
    assert pairs(pc.validate_ephemeral_container(container, E, {"app"})) == [
        (f"{E}.targetContainerName", 'Not found: "missing"'),
        *[(f"{E}.{key}", forbidden) for key in ("ports", "resources", "resizePolicy", "restartPolicy",
                                                "restartPolicyRules", "livenessProbe", "readinessProbe",
                                                "startupProbe", "lifecycle")],
        (f"{E}.volumeMounts[0].subPath", forbidden),
        (f"{E}.volumeMounts[0].subPathExpr", forbidden)]


# ------------------------------------------------------------ robustness

@pytest.mark.parametrize("bad", [None, "x", 3, [], {"env": "x", "envFrom": 1, "volumeMounts": {}, "volumeDevices": 2,
                                                    "resizePolicy": "cpu", "ports": "80"}])
def test_wrong_types_do_not_raise(bad: Any) -> None:
    container = bad if isinstance(bad, dict) else {"env": [bad], "envFrom": [bad], "volumeMounts": [bad],
                                                   "volumeDevices": [bad], "resizePolicy": [bad], "ports": [bad],
                                                   "restartPolicyRules": [bad], "restartPolicy": "Never"}
    pc.validate_env_value_from(container, C)
    pc.validate_env_from(container, C)
    pc.validate_volume_mounts(container, C)
    pc.validate_volume_devices(container, C, {})
    pc.validate_resize_policy(container, C, "Never")
    pc.validate_container_restart_policy(container, C)
    pc.validate_container_restart_policy(container, C, init=True)
    pc.validate_host_port_conflicts([container, bad], "spec.containers")
    pc.validate_ephemeral_container(container, E, set())
    pc.env_var_value_from({"valueFrom": {"fieldRef": bad, "configMapKeyRef": bad}}, f"{C}.env[0]")
