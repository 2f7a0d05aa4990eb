"""Pod- and container-level securityContext validation (kapi.kinds.podsecurity): validatePodSpecSecurityContext,
ValidateSecurityContext, validateSeccompProfileField, validateSysctls, validateWindowsSecurityContextOptions,
validateWindowsHostProcessPod, validateHostUsers, validateLinux/validateWindows."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds.podsecurity import (
    SYSCTL_NAME_MSG,
    go_security_context,
    sysctl_namespace,
    validate_container_security_context,
    validate_host_users,
    validate_os_security,
    validate_pod_security_context,
    validate_seccomp_profile,
    validate_windows_host_process_pod,
    validate_windows_options,
)

RANGE = "must be between 0 and 2147483647, inclusive"
SC = "spec.securityContext"
CSC = "spec.containers[0].securityContext"


def pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


def pod(context: dict[str, Any] | None = None, **spec: Any) -> list[tuple[str, str]]:
    body: dict[str, Any] = {"containers": [{"name": "c", "image": "i"}], **spec}
    if context is not None:
        body["securityContext"] = context
    return pairs(validate_pod_security_context(body, "spec"))


def ctr(context: Any, pod_spec: dict[str, Any] | None = None, **kw: Any) -> list[tuple[str, str]]:
    container = {"name": "c", "image": "i", "securityContext": context}
    return pairs(validate_container_security_context(container, "spec.containers[0]", pod_spec or {}, **kw))


# ------------------------------------------------------------ pod level


def test_pod_valid_and_absent() -> None:
    assert pod() == []
    assert pod({}) == []
    assert pod({"runAsUser": 0, "runAsGroup": 2147483647, "fsGroup": 1000, "supplementalGroups": [1, 2],
                "runAsNonRoot": True, "fsGroupChangePolicy": "OnRootMismatch", "supplementalGroupsPolicy": "Strict",
                "seLinuxChangePolicy": "MountOption", "seccompProfile": {"type": "RuntimeDefault"},
                "sysctls": [{"name": "kernel.shm_rmid_forced", "value": "0"}, {"name": "net/ipv4/ip_forward"}],
                "seLinuxOptions": {"level": "s0:c123,c456"}, "windowsOptions": {"runAsUserName": "DOMAIN\\user"}},
               shareProcessNamespace=True) == []
    assert validate_pod_security_context("nope", "spec") == []
    assert validate_pod_security_context({"securityContext": "x"}, "spec") == []


def test_pod_ids_in_kube_order() -> None:
    assert pod({"runAsGroup": -2, "runAsUser": -1, "fsGroup": 2147483648, "supplementalGroups": [5, -3, -4]}) == [
        (f"{SC}.fsGroup", f"Invalid value: 2147483648: {RANGE}"),
        (f"{SC}.runAsUser", f"Invalid value: -1: {RANGE}"),
        (f"{SC}.runAsGroup", f"Invalid value: -2: {RANGE}"),
        (f"{SC}.supplementalGroups[1]", f"Invalid value: -3: {RANGE}"),
        (f"{SC}.supplementalGroups[2]", f"Invalid value: -4: {RANGE}"),
    ]


def test_pod_wrong_types_do_not_crash() -> None:
    assert pod({"runAsUser": "1", "fsGroup": True, "supplementalGroups": "x", "sysctls": {"a": 1},
                "seccompProfile": [], "windowsOptions": 3, "fsGroupChangePolicy": 5}) == []
    assert pod({"sysctls": ["x", None]}) == [(f"{SC}.sysctls[1].name", "Required value")]


def test_share_process_namespace_with_host_pid() -> None:
    assert pod(shareProcessNamespace=True, hostPID=True) == [
        (f"{SC}.shareProcessNamespace", "Invalid value: true: ShareProcessNamespace and HostPID cannot both be "
                                        "enabled")]
    assert pod(shareProcessNamespace=False, hostPID=True) == []


def test_sysctl_names() -> None:
    long = "a" * 254
    assert pod({"sysctls": [{"name": ""}, {"name": "Kernel.Bad"}, {"name": "kernel.msgmax"}, {"name": "kernel.msgmax"},
                            {"name": long}, {"name": "a..b"}]}) == [
        (f"{SC}.sysctls[0].name", "Required value"),
        (f"{SC}.sysctls[1].name", f'Invalid value: "Kernel.Bad": {SYSCTL_NAME_MSG}'),
        (f"{SC}.sysctls[3].name", 'Duplicate value: "kernel.msgmax"'),
        (f"{SC}.sysctls[4].name", f'Invalid value: "{long}": {SYSCTL_NAME_MSG}'),
        (f"{SC}.sysctls[5].name", f'Invalid value: "a..b": {SYSCTL_NAME_MSG}'),
    ]
    assert SYSCTL_NAME_MSG == ("must have at most 253 characters and match regex "
                               r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$")
    # an invalid name is never a duplicate, but it is remembered
    assert pod({"sysctls": [{"name": "X"}, {"name": "X"}]}) == [
        (f"{SC}.sysctls[0].name", f'Invalid value: "X": {SYSCTL_NAME_MSG}'),
        (f"{SC}.sysctls[1].name", f'Invalid value: "X": {SYSCTL_NAME_MSG}')]


def test_sysctl_host_namespaces() -> None:
    context = {"sysctls": [{"name": "net.core.somaxconn"}, {"name": "kernel.sem"}, {"name": "fs.mqueue.msg_max"},
                           {"name": "net/ipv4/conf/eth0.100/rp_filter"}, {"name": "kernel.pid_max"}]}
    assert pod(context, hostNetwork=True, hostIPC=True) == [
        (f"{SC}.sysctls[0].name", "Invalid value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' is "
                                  "true"),
        (f"{SC}.sysctls[1].name", "Invalid value: \"kernel.sem\": may not be specified when 'hostIPC' is true"),
        (f"{SC}.sysctls[2].name", "Invalid value: \"fs.mqueue.msg_max\": may not be specified when 'hostIPC' is "
                                  "true"),
        (f"{SC}.sysctls[3].name", "Invalid value: \"net/ipv4/conf/eth0.100/rp_filter\": may not be specified when "
                                  "'hostNetwork' is true"),
    ]
    assert pod(context) == []
    body = {"securityContext": context, "hostNetwork": True}
    assert validate_pod_security_context(body, "spec", allow_host_sysctls=True) == []


@pytest.mark.parametrize(("name", "namespace"), [
    ("net.ipv4.ip_forward", "Net"), ("net/ipv4/ip_forward", "Net"), ("net.*", "Net"), ("network.x", ""),
    ("kernel.shm", "IPC"), ("kernel/msgmni", "IPC"), ("fs.mqueue.queues_max", "IPC"), ("fs.mqueue", ""),
    ("kernel.shm_rmid_forced", "IPC"), ("kernel.pid_max", ""), ("", "")])
def test_sysctl_namespace(name: str, namespace: str) -> None:
    assert sysctl_namespace(name) == namespace


def test_pod_enums() -> None:
    assert pod({"fsGroupChangePolicy": "", "supplementalGroupsPolicy": "Loose", "seLinuxChangePolicy": "Never"}) == [
        (f"{SC}.fsGroupChangePolicy", 'Unsupported value: "": supported values: "Always", "OnRootMismatch"'),
        (f"{SC}.supplementalGroupsPolicy", 'Unsupported value: "Loose": supported values: "Merge", "Strict"'),
        (f"{SC}.seLinuxChangePolicy", 'Unsupported value: "Never": supported values: "MountOption", "Recursive"'),
    ]


def test_pod_order_around_apparmor() -> None:
    context = {"supplementalGroupsPolicy": "X", "appArmorProfile": {"type": "Bogus"},
               "windowsOptions": {"runAsUserName": ""}, "seccompProfile": {}, "fsGroupChangePolicy": "Y",
               "sysctls": [{"name": ""}], "runAsUser": -1}
    body = {"securityContext": context, "shareProcessNamespace": True, "hostPID": True}
    want = [
        (f"{SC}.runAsUser", f"Invalid value: -1: {RANGE}"),
        (f"{SC}.shareProcessNamespace", "Invalid value: true: ShareProcessNamespace and HostPID cannot both be "
                                        "enabled"),
        (f"{SC}.sysctls[0].name", "Required value"),
        (f"{SC}.fsGroupChangePolicy", 'Unsupported value: "Y": supported values: "Always", "OnRootMismatch"'),
        (f"{SC}.seccompProfile.type", "Required value: type is required when seccompProfile is set"),
        (f"{SC}.windowsOptions.runAsUserName", 'Invalid value: "": runAsUserName cannot be an empty string'),
        (f"{SC}.appArmorProfile.type", 'Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", '
                                       '"Unconfined"'),
        (f"{SC}.supplementalGroupsPolicy", 'Unsupported value: "X": supported values: "Merge", "Strict"'),
    ]
    assert pairs(validate_pod_security_context(body, "spec", apparmor=True)) == want
    assert pairs(validate_pod_security_context(body, "spec")) == want[:6] + want[7:]


# ------------------------------------------------------------ seccomp


def test_seccomp_profile() -> None:
    path = "p.seccompProfile"
    assert validate_seccomp_profile(None, path) == []
    assert validate_seccomp_profile({"type": "Unconfined"}, path) == []
    assert validate_seccomp_profile({"type": "Localhost", "localhostProfile": "profiles/audit.json"}, path) == []
    assert validate_seccomp_profile({"type": "Localhost", "localhostProfile": ""}, path) == []
    assert pairs(validate_seccomp_profile({"type": "Localhost"}, path)) == [
        (f"{path}.localhostProfile", "Required value: must be set when seccomp type is Localhost")]
    assert pairs(validate_seccomp_profile({"type": "Localhost", "localhostProfile": "/etc/../x"}, path)) == [
        (f"{path}.localhostProfile", 'Invalid value: "/etc/../x": must be a relative path'),
        (f"{path}.localhostProfile", "Invalid value: \"/etc/../x\": must not contain '..'")]
    assert pairs(validate_seccomp_profile({"type": "Localhost", "localhostProfile": "../../a/.."}, path)) == [
        (f"{path}.localhostProfile", "Invalid value: \"../../a/..\": must not contain '..'")]
    assert pairs(validate_seccomp_profile({"type": "Bogus"}, path)) == [
        (f"{path}.type", 'Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", "Unconfined"')]
    assert pairs(validate_seccomp_profile({"type": "RuntimeDefault", "localhostProfile": "x"}, path)) == [
        (f"{path}.localhostProfile", 'Invalid value: core.SeccompProfile{Type:"RuntimeDefault", '
                                     'LocalhostProfile:(*string)(0xc000000000)}: can only be set when seccomp type '
                                     'is Localhost')]
    assert pairs(validate_seccomp_profile({"localhostProfile": "x"}, path)) == [
        (f"{path}.type", "Required value: type is required when seccompProfile is set"),
        (f"{path}.localhostProfile", 'Invalid value: core.SeccompProfile{Type:"", '
                                     'LocalhostProfile:(*string)(0xc000000000)}: can only be set when seccomp type '
                                     'is Localhost')]


# ------------------------------------------------------------ windowsOptions


def _win(**options: Any) -> list[tuple[str, str]]:
    return pairs(validate_windows_options(options, "w"))


def test_windows_options_valid() -> None:
    assert validate_windows_options(None, "w") == []
    assert _win(gmsaCredentialSpecName="gmsa-webapp-1", gmsaCredentialSpec="{}", runAsUserName="ContainerUser",
                hostProcess=True) == []
    assert _win(runAsUserName="NT AUTHORITY\\NETWORK SERVICE") == []
    assert _win(runAsUserName="corp.example.com\\alice") == []


def test_windows_options_gmsa() -> None:
    assert _win(gmsaCredentialSpecName="Bad_Name") == [
        ("w.gmsaCredentialSpecName", 'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower '
                                     "case alphanumeric characters, '-' or '.', and must start and end with an "
                                     "alphanumeric character (e.g. 'example.com', regex used for validation is "
                                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    assert _win(gmsaCredentialSpec="") == [
        ("w.gmsaCredentialSpec", 'Invalid value: "": gmsaCredentialSpec cannot be an empty string')]
    big = "x" * (64 * 1024 + 1)
    assert _win(gmsaCredentialSpec=big) == [
        ("w.gmsaCredentialSpec", f'Invalid value: "{big}": gmsaCredentialSpec size must be under 64 KiB')]
    assert _win(gmsaCredentialSpec="x" * (64 * 1024)) == []


@pytest.mark.parametrize(("name", "messages"), [
    ("", ["runAsUserName cannot be an empty string"]),
    ("a\tb", ["runAsUserName cannot contain control characters"]),
    ("a\\b\\c", ["runAsUserName cannot contain more than one backslash"]),
    ("d" * 256 + "\\u", ["runAsUserName's Domain length must be under 256 characters",
                         "runAsUserName's Domain doesn't match the NetBios nor the DNS format"]),
    (".dom\\u", ["runAsUserName's Domain doesn't match the NetBios nor the DNS format"]),
    ("\\u", ["runAsUserName's Domain doesn't match the NetBios nor the DNS format"]),
    ("dom\\", ["runAsUserName's User cannot be empty"]),
    ("u" * 105, ["runAsUserName's User length must not be longer than 104 characters"]),
    (". .", ["runAsUserName's User cannot contain only periods or spaces"]),
    ("us@er", ['runAsUserName\'s User cannot contain the following characters: "/\\:;|=,+*?<>@[]']),
])
def test_windows_run_as_user_name(name: str, messages: list[str]) -> None:
    from kapi.objectmeta import bad_value
    assert _win(runAsUserName=name) == [("w.runAsUserName", f"Invalid value: {bad_value(name)}: {m}")
                                        for m in messages]


# ------------------------------------------------------------ container level


def test_container_valid_and_absent() -> None:
    assert validate_container_security_context({"name": "c"}, "spec.containers[0]", {}) == []
    assert validate_container_security_context("x", "spec.containers[0]", {}) == []
    assert ctr(None) == []
    assert ctr({}) == []
    assert ctr({"privileged": True, "allowPrivilegeEscalation": True, "runAsUser": 1000, "runAsGroup": 0,
                "readOnlyRootFilesystem": True, "procMount": "Default", "capabilities": {"add": ["CAP_SYS_ADMIN"]},
                "seccompProfile": {"type": "RuntimeDefault"}, "seLinuxOptions": {"type": "spc_t"}}) == []
    assert ctr({"procMount": "Unmasked"}, {"hostUsers": False}) == []


def test_container_ids_and_proc_mount() -> None:
    assert ctr({"runAsGroup": -1, "runAsUser": 2147483648, "procMount": "Masked"}) == [
        (f"{CSC}.runAsUser", f"Invalid value: 2147483648: {RANGE}"),
        (f"{CSC}.runAsGroup", f"Invalid value: -1: {RANGE}"),
        (f"{CSC}.procMount", 'Unsupported value: "Masked": supported values: "Default", "Unmasked"')]
    assert ctr({"procMount": "Unmasked"}) == [
        (f"{CSC}.procMount", 'Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`')]
    assert ctr({"procMount": "Unmasked"}, {"hostUsers": True}) == [
        (f"{CSC}.procMount", 'Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`')]


def test_container_privilege_escalation() -> None:
    context = {"privileged": True, "allowPrivilegeEscalation": False,
               "capabilities": {"add": ["CAP_SYS_ADMIN", "NET_ADMIN", "CAP_SYS_ADMIN"]}}
    shown = ("core.SecurityContext{Capabilities:(*core.Capabilities)(0xc000000000), Privileged:(*bool)(0xc000000000), "
             "SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), "
             "RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), "
             "ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(0xc000000000), "
             "ProcMount:(*core.ProcMountType)(nil), SeccompProfile:(*core.SeccompProfile)(nil), "
             "AppArmorProfile:(*core.AppArmorProfile)(nil)}")
    assert go_security_context(context) == shown
    assert ctr(context) == [
        (CSC, f"Invalid value: {shown}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"),
        (CSC, f"Invalid value: {shown}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
              "CAP_SYS_ADMIN"),
        (CSC, f"Invalid value: {shown}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` "
              "CAP_SYS_ADMIN")]
    assert ctr({"privileged": True, "capabilities": {"add": ["CAP_SYS_ADMIN"]}}) == []
    assert ctr({"allowPrivilegeEscalation": False, "capabilities": {"add": ["SYS_ADMIN"]}, "privileged": False}) == []


def test_container_order() -> None:
    context = {"appArmorProfile": {"type": ""}, "windowsOptions": {"gmsaCredentialSpec": ""},
               "allowPrivilegeEscalation": False, "privileged": True, "seccompProfile": {"type": "Bogus"},
               "procMount": "X", "runAsUser": -5}
    got = ctr(context, apparmor=True)
    assert [f for f, _ in got] == [f"{CSC}.runAsUser", f"{CSC}.procMount", f"{CSC}.seccompProfile.type", CSC,
                                   f"{CSC}.windowsOptions.gmsaCredentialSpec", f"{CSC}.appArmorProfile.type"]
    assert got[-1][1] == "Required value: type is required when appArmorProfile is set"
    assert ctr(context) == got[:-1]


# ------------------------------------------------------------ ValidatePodSpec's other host/os checks


def test_host_users() -> None:
    assert validate_host_users({"hostNetwork": True, "hostPID": True, "hostIPC": True}, "spec") == []
    assert validate_host_users({"hostUsers": True, "hostNetwork": True}, "spec") == []
    assert validate_host_users({"hostUsers": False}, "spec") == []
    assert pairs(validate_host_users({"hostUsers": False, "hostNetwork": True, "hostPID": True, "hostIPC": True},
                                     "spec")) == [
        ("spec.hostNetwork", "Forbidden: when `pod.Spec.HostUsers` is false"),
        ("spec.HostPID", "Forbidden: when `pod.Spec.HostUsers` is false"),
        ("spec.HostIPC", "Forbidden: when `pod.Spec.HostUsers` is false")]


def _hp(value: bool | None) -> dict[str, Any]:
    return {} if value is None else {"securityContext": {"windowsOptions": {"hostProcess": value}}}


def test_windows_host_process_pod() -> None:
    def spec(pod_value: bool | None, *containers: bool | None, **extra: Any) -> dict[str, Any]:
        return {"containers": [{"name": f"c{i}", **_hp(v)} for i, v in enumerate(containers)], **_hp(pod_value),
                **extra}

    assert validate_windows_host_process_pod(spec(None, None, False), "spec") == []
    assert validate_windows_host_process_pod(spec(True, None, True, hostNetwork=True), "spec") == []
    assert pairs(validate_windows_host_process_pod(spec(None, True, None), "spec")) == [
        ("spec", 'Invalid value: "": If pod contains any hostProcess containers then all containers must be '
                 "HostProcess containers"),
        ("spec.hostNetwork", "Invalid value: false: hostNetwork must be true if pod contains any hostProcess "
                             "containers")]
    assert pairs(validate_windows_host_process_pod(spec(True, False, None, hostNetwork=True), "spec")) == [
        ("spec.containers[0].securityContext.windowsOptions.hostProcess",
         "Invalid value: false: pod hostProcess value must be identical if both are specified, was true"),
        ("spec", 'Invalid value: "": If pod contains any hostProcess containers then all containers must be '
                 "HostProcess containers")]
    body = spec(None, True, hostNetwork=True)
    body["initContainers"] = [{"name": "i"}]
    assert [c.field for c in validate_windows_host_process_pod(body, "spec")] == ["spec"]


def test_os_linux() -> None:
    body = {"os": {"name": "linux"}, "securityContext": {"windowsOptions": {}},
            "initContainers": [{"name": "i", "securityContext": {"windowsOptions": {"runAsUserName": "u"}}}],
            "containers": [{"name": "c", "securityContext": {"runAsUser": 1}}]}
    assert pairs(validate_os_security(body, "spec")) == [
        ("spec.securityContext.windowsOptions", "Forbidden: windows options cannot be set for a linux pod"),
        ("spec.initContainers[0].securityContext.windowsOptions",
         "Forbidden: windows options cannot be set for a linux pod")]
    body["os"] = {"name": "plan9"}
    assert validate_os_security(body, "spec") == []
    del body["os"]
    assert validate_os_security(body, "spec") == []


def test_os_windows() -> None:
    forbidden = "Forbidden: cannot be set for a windows pod"
    body = {"os": {"name": "windows"}, "hostUsers": False, "hostPID": True, "hostIPC": False,
            "shareProcessNamespace": False,
            "securityContext": {"runAsGroup": 1, "runAsUser": 1, "seLinuxOptions": {}, "appArmorProfile": {},
                                "seccompProfile": {}, "fsGroup": 1, "fsGroupChangePolicy": "Always",
                                "sysctls": [{"name": "a"}], "supplementalGroups": [],
                                "supplementalGroupsPolicy": "Merge", "seLinuxChangePolicy": "Recursive",
                                "windowsOptions": {"hostProcess": False}},
            "containers": [{"name": "c", "securityContext": {
                "runAsGroup": 1, "runAsUser": 1, "procMount": "Default", "allowPrivilegeEscalation": False,
                "privileged": False, "readOnlyRootFilesystem": False, "capabilities": {}, "seccompProfile": {},
                "seLinuxOptions": {}, "appArmorProfile": {}, "runAsNonRoot": True, "windowsOptions": {}}}]}
    pod_fields = ["securityContext.appArmorProfile", "securityContext.seLinuxOptions", "hostUsers", "hostPID",
                  "securityContext.seccompProfile", "securityContext.fsGroup", "securityContext.fsGroupChangePolicy",
                  "securityContext.sysctls", "shareProcessNamespace", "securityContext.runAsUser",
                  "securityContext.runAsGroup", "securityContext.supplementalGroups",
                  "securityContext.supplementalGroupsPolicy", "securityContext.seLinuxChangePolicy"]
    container_fields = ["appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities", "readOnlyRootFilesystem",
                        "privileged", "allowPrivilegeEscalation", "procMount", "runAsUser", "runAsGroup"]
    assert pairs(validate_os_security(body, "spec")) == (
        [(f"spec.{f}", forbidden) for f in pod_fields]
        + [(f"spec.containers[0].securityContext.{f}", forbidden) for f in container_fields])
    assert validate_os_security({"os": {"name": "windows"}, "securityContext": {"sysctls": []},
                                 "containers": [{"name": "c"}]}, "spec") == []
