"""Pod- and container-level ``securityContext`` validation (``pkg/apis/core/validation/validation.go``, kube 1.37).

kube validates the internal ``core.PodSpec``, where conversion from v1 moved ``hostNetwork``, ``hostPID``,
``hostIPC``, ``hostUsers`` and ``shareProcessNamespace`` into an always-present ``PodSecurityContext``; the
functions here read those from the v1 spec. Covered:

- validatePodSpecSecurityContext (fsGroup, runAsUser, runAsGroup, supplementalGroups, shareProcessNamespace with
  hostPID, validateSysctls with ValidateHostSysctl, validateFSGroupChangePolicy, validateSeccompProfileField,
  validateWindowsSecurityContextOptions, [appArmorProfile], validateSupplementalGroupsPolicy,
  validateSELinuxChangePolicy): :func:`validate_pod_security_context`;
- ValidateSecurityContext of a container (validateContainerCommon's last check):
  :func:`validate_container_security_context`;
- validateWindowsHostProcessPod, validateHostUsers and validateLinux / validateWindows (ValidatePodSpec):
  :func:`validate_windows_host_process_pod`, :func:`validate_host_users`, :func:`validate_os_security`.

The appArmorProfile checks themselves live in :mod:`kapi.kinds.apparmor`; the functions here call them at kube's
position only when asked (``apparmor=True``). kube-apiserver is taken to run with ``--allow-privileged=true`` (as
kubeadm and kind clusters do), so ``privileged`` and hostProcess containers are never "disallowed by cluster
policy".
"""

from __future__ import annotations

import re
from typing import Any

from kapi.errors import Cause
from kapi.kinds.apparmor import validate_apparmor_profile
from kapi.kinds.fields import duplicate, not_supported
from kapi.objectmeta import forbidden, go_quote, invalid, required
from kapi.validation import is_dns1123_subdomain
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

MAX_ID = 2147483647  # math.MaxInt32: apimachinery IsValidUserID / IsValidGroupID
ID_RANGE_MSG = f"must be between 0 and {MAX_ID}, inclusive"  # validation.InclusiveRangeError(0, MaxInt32)
SHARE_PID_MSG = "ShareProcessNamespace and HostPID cannot both be enabled"

SYSCTL_SEGMENT = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"  # validation.go SysctlSegmentFmt
SYSCTL_NAME = "(" + SYSCTL_SEGMENT + "[\\./])*" + SYSCTL_SEGMENT  # SysctlContainSlashFmt
SYSCTL_MAX_LENGTH = 253
SYSCTL_NAME_MSG = f"must have at most {SYSCTL_MAX_LENGTH} characters and match regex ^{SYSCTL_NAME}$"
_SYSCTL_RE = re.compile(SYSCTL_NAME)
# k8s.io/component-helpers/node/util/sysctl namespace.go: nameToNamespace and prefixToNamespace
_SYSCTL_IPC_NAMES = frozenset((
    "kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced", "kernel.shm",
    "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.msg"))
_SYSCTL_PREFIXES = (("net", "Net"), ("fs.mqueue", "IPC"))

SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")
FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")  # sets.List: sorted
SUPPLEMENTAL_GROUPS_POLICIES = ("Merge", "Strict")
SELINUX_CHANGE_POLICIES = ("MountOption", "Recursive")  # SELinuxChangePolicy gate on: both allowed
PROC_MOUNT_TYPES = ("Default", "Unmasked")
CONTAINER_SECTIONS = ("initContainers", "containers", "ephemeralContainers")  # podshelper.VisitContainersWithPath

GO_POINTER = "0xc000000000"  # a set pointer inside %#v is a heap address; kapi shows this stand-in
PRIVILEGED_APE_MSG = "cannot set `allowPrivilegeEscalation` to false and `privileged` to true"
SYS_ADMIN_APE_MSG = "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN"
UNMASKED_MSG = "`hostUsers` must be false to use `Unmasked`"
HOST_USERS_MSG = "when `pod.Spec.HostUsers` is false"
WINDOWS_POD_MSG = "cannot be set for a windows pod"
LINUX_POD_MSG = "windows options cannot be set for a linux pod"

# validateWindowsSecurityContextOptions
MAX_GMSA_SPEC_KIB = 64
MAX_RUN_AS_USER_NAME_DOMAIN = 256
MAX_RUN_AS_USER_NAME_USER = 104
_CTRL_RE = re.compile(r"[\x00-\x1f\x7f]")  # Go [[:cntrl:]] (ASCII)
_NETBIOS_RE = re.compile(r'[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}')
_DNS_LABEL = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
_DOMAIN_DNS_RE = re.compile(rf"{_DNS_LABEL}(?:\.{_DNS_LABEL})*")
_USER_BAD_CHARS_RE = re.compile(r'["/\\:;|=,+*?<>@\[\]]')
_USER_DOTS_SPACES_RE = re.compile(r"[. ]+")


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _ids(out: list[Cause], path: str, value: Any) -> None:
    """IsValidUserID / IsValidGroupID of an optional int64 field."""
    number = _int(value)
    if number is not None and not 0 <= number <= MAX_ID:
        out.append(invalid(path, number, ID_RANGE_MSG))


def _go_pointer(value: Any, go_type: str) -> str:
    return f"({go_type})(nil)" if value is None else f"({go_type})({GO_POINTER})"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# ------------------------------------------------------------ shared pieces


def validate_seccomp_profile(profile: Any, path: str) -> list[Cause]:
    """validateSeccompProfileField of a ``seccompProfile`` at ``path`` (absent or ``null``: nothing).

    ``type`` must be Localhost, RuntimeDefault or Unconfined (``Required value: type is required when
    seccompProfile is set`` when empty, else ``Unsupported value``). Localhost needs a ``localhostProfile``
    (``Required value: must be set when seccomp type is Localhost``) that is relative (``must be a relative path``)
    and has no ``..`` element (``must not contain '..'``); another type refuses one with ``Invalid value:
    core.SeccompProfile{...}: can only be set when seccomp type is Localhost`` (the struct as ``%#v`` prints it,
    the pointer's address a stand-in).
    """
    if not isinstance(profile, dict):
        return []
    out: list[Cause] = []
    kind = profile.get("type")
    kind = kind if isinstance(kind, str) else ""
    if kind == "":
        out.append(required(f"{path}.type", "type is required when seccompProfile is set"))
    elif kind not in SECCOMP_TYPES:
        out.append(not_supported(f"{path}.type", kind, SECCOMP_TYPES))
    local = profile.get("localhostProfile")
    lpath = f"{path}.localhostProfile"
    if kind == "Localhost":
        if local is None:
            out.append(required(lpath, "must be set when seccomp type is Localhost"))
        elif isinstance(local, str):
            out.extend(_local_descending_path(local, lpath))
    elif local is not None:
        shown = (f"core.SeccompProfile{{Type:{go_quote(kind)}, "
                 f"LocalhostProfile:{_go_pointer(local, '*string')}}}")
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: can only be set when seccomp type is "
                                              "Localhost", lpath))
    return out


def _local_descending_path(target: str, path: str) -> list[Cause]:
    """validateLocalDescendingPath: not absolute, no ``..`` element (one error for any number of them)."""
    out: list[Cause] = []
    if target.startswith("/"):
        out.append(invalid(path, target, "must be a relative path"))
    if ".." in target.split("/"):
        out.append(invalid(path, target, "must not contain '..'"))
    return out


def validate_windows_options(options: Any, path: str) -> list[Cause]:
    """validateWindowsSecurityContextOptions of a ``windowsOptions`` at ``path`` (absent or ``null``: nothing).

    ``gmsaCredentialSpecName`` a DNS-1123 subdomain; ``gmsaCredentialSpec`` not empty and at most 64 KiB;
    ``runAsUserName`` not empty, without control characters, at most one backslash, a domain (before the
    backslash) under 256 bytes in NetBios or DNS form, and a user of 1 to 104 bytes that is not only dots or
    spaces and holds none of ``"/\\:;|=,+*?<>@[]``. Each problem is ``Invalid value: "<value>": <why>``.
    """
    if not isinstance(options, dict):
        return []
    out: list[Cause] = []
    name = options.get("gmsaCredentialSpecName")
    if isinstance(name, str):
        out.extend(invalid(f"{path}.gmsaCredentialSpecName", name, msg) for msg in is_dns1123_subdomain(name))
    spec = options.get("gmsaCredentialSpec")
    if isinstance(spec, str):
        spath = f"{path}.gmsaCredentialSpec"
        if not spec:
            out.append(invalid(spath, spec, "gmsaCredentialSpec cannot be an empty string"))
        elif _utf8_len(spec) > MAX_GMSA_SPEC_KIB * 1024:
            out.append(invalid(spath, spec, f"gmsaCredentialSpec size must be under {MAX_GMSA_SPEC_KIB} KiB"))
    user_name = options.get("runAsUserName")
    if isinstance(user_name, str):
        out.extend(_run_as_user_name(user_name, f"{path}.runAsUserName"))
    return out


def _run_as_user_name(value: str, path: str) -> list[Cause]:
    if not value:
        return [invalid(path, value, "runAsUserName cannot be an empty string")]
    if _CTRL_RE.search(value):
        return [invalid(path, value, "runAsUserName cannot contain control characters")]
    parts = value.split("\\")
    if len(parts) > 2:
        return [invalid(path, value, "runAsUserName cannot contain more than one backslash")]
    has_domain = len(parts) == 2
    domain, user = (parts[0], parts[1]) if has_domain else ("", parts[0])
    out: list[Cause] = []
    if _utf8_len(domain) >= MAX_RUN_AS_USER_NAME_DOMAIN:
        out.append(invalid(path, value, f"runAsUserName's Domain length must be under "
                                        f"{MAX_RUN_AS_USER_NAME_DOMAIN} characters"))
    if has_domain and not (_NETBIOS_RE.fullmatch(domain) or _DOMAIN_DNS_RE.fullmatch(domain)):
        out.append(invalid(path, value, "runAsUserName's Domain doesn't match the NetBios nor the DNS format"))
    user_len = _utf8_len(user)
    if user_len == 0:
        out.append(invalid(path, value, "runAsUserName's User cannot be empty"))
    elif user_len > MAX_RUN_AS_USER_NAME_USER:
        out.append(invalid(path, value, f"runAsUserName's User length must not be longer than "
                                        f"{MAX_RUN_AS_USER_NAME_USER} characters"))
    if _USER_DOTS_SPACES_RE.fullmatch(user):
        out.append(invalid(path, value, "runAsUserName's User cannot contain only periods or spaces"))
    if _USER_BAD_CHARS_RE.search(user):
        out.append(invalid(path, value, "runAsUserName's User cannot contain the following characters: "
                                        '"/\\:;|=,+*?<>@[]'))
    return out


# ------------------------------------------------------------ pod level


def sysctl_namespace(name: str) -> str:
    """utilsysctl.GetNamespace's namespace of a sysctl name: ``"Net"``, ``"IPC"`` or ``""`` (unknown).

    A name whose first separator is ``/`` has its dots and slashes swapped first (NormalizeName); a ``*`` cuts
    the name there (a prefix)."""
    if name:
        first = min((i for i in (name.find("."), name.find("/")) if i >= 0), default=-1)
        if first >= 0 and name[first] == "/":
            name = name.translate(str.maketrans("./", "/."))
    star = name.find("*")
    if star >= 0:
        name = name[:star]
    if name in _SYSCTL_IPC_NAMES:
        return "IPC"
    for prefix, namespace in _SYSCTL_PREFIXES:
        if name.startswith(prefix + "."):
            return namespace
    return ""


def _sysctls(spec: dict[str, Any], sysctls: list[Any], path: str, allow_host_sysctls: bool) -> list[Cause]:
    """validateSysctls (and ValidateHostSysctl unless ``allow_host_sysctls``)."""
    out: list[Cause] = []
    names: set[str] = set()
    host_network = spec.get("hostNetwork") is True
    host_ipc = spec.get("hostIPC") is True
    for i, sysctl in enumerate(sysctls):
        if sysctl is not None and not isinstance(sysctl, dict):
            continue  # the schema's to refuse; a null item is Go's zero Sysctl
        name = _dict(sysctl).get("name")
        name = name if isinstance(name, str) else ""
        npath = f"{path}[{i}].name"
        if not name:
            out.append(required(npath))
        elif _utf8_len(name) > SYSCTL_MAX_LENGTH or not _SYSCTL_RE.fullmatch(name):
            out.append(invalid(npath, name, SYSCTL_NAME_MSG))
        elif name in names:
            out.append(duplicate(npath, name))
        if not allow_host_sysctls:
            namespace = sysctl_namespace(name)
            if host_network and namespace == "Net":
                out.append(invalid(npath, name, "may not be specified when 'hostNetwork' is true"))
            elif host_ipc and namespace == "IPC":
                out.append(invalid(npath, name, "may not be specified when 'hostIPC' is true"))
        names.add(name)
    return out


def _string_enum(out: list[Cause], context: dict[str, Any], key: str, path: str, supported: tuple[str, ...]) -> None:
    value = context.get(key)
    if isinstance(value, str) and value not in supported:
        out.append(not_supported(f"{path}.{key}", value, supported))


def validate_pod_security_context(spec: Any, path: str, *, apparmor: bool = False,
                                  allow_host_sysctls: bool = False) -> list[Cause]:
    """validatePodSpecSecurityContext of the PodSpec ``spec`` (a v1 JSON dict) at ``path`` (e.g. ``spec``,
    ``spec.template.spec``); causes under ``<path>.securityContext``, in kube's order:

    ``fsGroup``, ``runAsUser``, ``runAsGroup`` and each ``supplementalGroups[i]`` in 0..2147483647 (``Invalid
    value: -1: must be between 0 and 2147483647, inclusive``); ``shareProcessNamespace`` with ``hostPID``
    (``securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both
    be enabled``); each sysctl's name (Required, ``must have at most 253 characters and match regex ...``,
    Duplicate) and, unless ``allow_host_sysctls`` (kube's AllowNamespacedSysctlsForHostNetAndHostIPC, set on
    updates of objects that already had such sysctls), no net.* sysctl with ``hostNetwork`` nor IPC one with
    ``hostIPC``; ``fsGroupChangePolicy`` Always/OnRootMismatch; ``seccompProfile``
    (:func:`validate_seccomp_profile`); ``windowsOptions`` (:func:`validate_windows_options`);
    ``appArmorProfile`` (:func:`kapi.kinds.apparmor.validate_apparmor_profile`, only with ``apparmor=True``);
    ``supplementalGroupsPolicy`` Merge/Strict; ``seLinuxChangePolicy`` MountOption/Recursive.

    An absent securityContext is checked as an empty one (kube's conversion always makes one). Returns [] when
    valid or ``spec`` is not an object.
    """
    if not isinstance(spec, dict):
        return []
    context = _dict(spec.get("securityContext"))
    cpath = f"{path}.securityContext"
    out: list[Cause] = []
    _ids(out, f"{cpath}.fsGroup", context.get("fsGroup"))
    _ids(out, f"{cpath}.runAsUser", context.get("runAsUser"))
    _ids(out, f"{cpath}.runAsGroup", context.get("runAsGroup"))
    for i, gid in enumerate(_list(context.get("supplementalGroups"))):
        _ids(out, f"{cpath}.supplementalGroups[{i}]", gid)
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        out.append(invalid(f"{cpath}.shareProcessNamespace", True, SHARE_PID_MSG))
    sysctls = _list(context.get("sysctls"))
    if sysctls:
        out.extend(_sysctls(spec, sysctls, f"{cpath}.sysctls", allow_host_sysctls))
    _string_enum(out, context, "fsGroupChangePolicy", cpath, FS_GROUP_CHANGE_POLICIES)
    out.extend(validate_seccomp_profile(context.get("seccompProfile"), f"{cpath}.seccompProfile"))
    out.extend(validate_windows_options(context.get("windowsOptions"), f"{cpath}.windowsOptions"))
    if apparmor:
        out.extend(validate_apparmor_profile(context.get("appArmorProfile"), f"{cpath}.appArmorProfile"))
    _string_enum(out, context, "supplementalGroupsPolicy", cpath, SUPPLEMENTAL_GROUPS_POLICIES)
    _string_enum(out, context, "seLinuxChangePolicy", cpath, SELINUX_CHANGE_POLICIES)
    return out


def host_users(spec: Any) -> bool:
    """ValidatePodSpec's ``hostUsers``: true unless the spec sets ``hostUsers: false``."""
    return _dict(spec).get("hostUsers") is not False


def validate_host_users(spec: Any, path: str) -> list[Cause]:
    """validateHostUsers of the PodSpec ``spec`` at ``path``: with ``hostUsers: false`` the Pod may not share the
    host's namespaces: ``<path>.hostNetwork``, ``<path>.HostPID``, ``<path>.HostIPC`` (kube's capitals):
    ``Forbidden: when `pod.Spec.HostUsers` is false``."""
    spec = _dict(spec)
    if host_users(spec):
        return []
    out: list[Cause] = []
    for key, shown in (("hostNetwork", "hostNetwork"), ("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
        if spec.get(key) is True:
            out.append(forbidden(f"{path}.{shown}", HOST_USERS_MSG))
    return out


def _containers(spec: dict[str, Any], path: str) -> list[tuple[dict[str, Any], str]]:
    return [(_dict(c), f"{path}.{section}[{i}]") for section in CONTAINER_SECTIONS
            for i, c in enumerate(_list(spec.get(section)))]


def validate_windows_host_process_pod(spec: Any, path: str) -> list[Cause]:
    """validateWindowsHostProcessPod of the PodSpec ``spec`` at ``path``.

    A container's ``windowsOptions.hostProcess`` must equal the Pod's when both are set (``Invalid value: true:
    pod hostProcess value must be identical if both are specified, was false``); if any container is a
    hostProcess one (its own or inherited), all must be (``<path>: Invalid value: "": If pod contains any
    hostProcess containers then all containers must be HostProcess containers``) and ``hostNetwork`` must be true
    (``<path>.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any hostProcess
    containers``). Containers are visited init, regular, ephemeral.
    """
    spec = _dict(spec)
    pod_value = _bool(_dict(_dict(spec.get("securityContext")).get("windowsOptions")).get("hostProcess"))
    out: list[Cause] = []
    count = host_process_count = 0
    for container, cpath in _containers(spec, path):
        count += 1
        own = _bool(_dict(_dict(container.get("securityContext")).get("windowsOptions")).get("hostProcess"))
        if pod_value is not None and own is not None and pod_value != own:
            out.append(invalid(f"{cpath}.securityContext.windowsOptions.hostProcess", own,
                               "pod hostProcess value must be identical if both are specified, was "
                               + ("true" if pod_value else "false")))
        if own is True or (own is None and pod_value is True):
            host_process_count += 1
    if host_process_count:
        if host_process_count != count:
            out.append(invalid(path, "", "If pod contains any hostProcess containers then all containers must be "
                                         "HostProcess containers"))
        if spec.get("hostNetwork") is not True:
            out.append(invalid(f"{path}.hostNetwork", False,
                               "hostNetwork must be true if pod contains any hostProcess containers"))
    return out


_WINDOWS_POD_FIELDS = (  # validateWindows: the PodSecurityContext fields, in kube's order (None: on the spec)
    ("appArmorProfile", "securityContext"), ("seLinuxOptions", "securityContext"), ("hostUsers", None),
    ("hostPID", None), ("hostIPC", None), ("seccompProfile", "securityContext"), ("fsGroup", "securityContext"),
    ("fsGroupChangePolicy", "securityContext"), ("sysctls", "securityContext"), ("shareProcessNamespace", None),
    ("runAsUser", "securityContext"), ("runAsGroup", "securityContext"), ("supplementalGroups", "securityContext"),
    ("supplementalGroupsPolicy", "securityContext"), ("seLinuxChangePolicy", "securityContext"))
_WINDOWS_CONTAINER_FIELDS = ("appArmorProfile", "seLinuxOptions", "seccompProfile", "capabilities",
                             "readOnlyRootFilesystem", "privileged", "allowPrivilegeEscalation", "procMount",
                             "runAsUser", "runAsGroup")


def _windows_pod_field_set(spec: dict[str, Any], context: dict[str, Any], key: str, where: str | None) -> bool:
    if where is None:
        value = spec.get(key)
        return value is True if key in ("hostPID", "hostIPC") else value is not None
    value = context.get(key)
    if key == "sysctls":
        return bool(_list(value))
    return value is not None


def validate_os_security(spec: Any, path: str) -> list[Cause]:
    """validateLinux / validateWindows of the PodSpec ``spec`` at ``path`` (ValidatePodSpec's last checks, run
    only when ``os.name`` is ``linux`` or ``windows``; another or absent ``os``: nothing here).

    linux: no ``windowsOptions`` on the Pod's or any container's securityContext (``Forbidden: windows options
    cannot be set for a linux pod``). windows: none of the Linux-only Pod fields (``securityContext.
    appArmorProfile``, ``seLinuxOptions``, ``hostUsers``, ``hostPID``, ``hostIPC``, ``securityContext.
    seccompProfile``, ``fsGroup``, ``fsGroupChangePolicy``, ``sysctls``, ``shareProcessNamespace``, ``runAsUser``,
    ``runAsGroup``, ``supplementalGroups``, ``supplementalGroupsPolicy``, ``seLinuxChangePolicy``) nor container
    ones (appArmorProfile, seLinuxOptions, seccompProfile, capabilities, readOnlyRootFilesystem, privileged,
    allowPrivilegeEscalation, procMount, runAsUser, runAsGroup): ``Forbidden: cannot be set for a windows pod``.
    """
    spec = _dict(spec)
    os_name = _dict(spec.get("os")).get("name")
    context = _dict(spec.get("securityContext"))
    out: list[Cause] = []
    if os_name == "linux":
        if context.get("windowsOptions") is not None:
            out.append(forbidden(f"{path}.securityContext.windowsOptions", LINUX_POD_MSG))
        for container, cpath in _containers(spec, path):
            if _dict(container.get("securityContext")).get("windowsOptions") is not None:
                out.append(forbidden(f"{cpath}.securityContext.windowsOptions", LINUX_POD_MSG))
    elif os_name == "windows":
        for key, where in _WINDOWS_POD_FIELDS:
            if _windows_pod_field_set(spec, context, key, where):
                fpath = f"{path}.securityContext.{key}" if where else f"{path}.{key}"
                out.append(forbidden(fpath, WINDOWS_POD_MSG))
        for container, cpath in _containers(spec, path):
            sc = container.get("securityContext")
            if not isinstance(sc, dict):
                continue
            for key in _WINDOWS_CONTAINER_FIELDS:
                if sc.get(key) is not None:
                    out.append(forbidden(f"{cpath}.securityContext.{key}", WINDOWS_POD_MSG))
    return out


# ------------------------------------------------------------ container level


_SC_FIELDS = (  # core.SecurityContext's fields in declaration order, with their Go pointer types
    ("capabilities", "Capabilities", "*core.Capabilities"), ("privileged", "Privileged", "*bool"),
    ("seLinuxOptions", "SELinuxOptions", "*core.SELinuxOptions"),
    ("windowsOptions", "WindowsOptions", "*core.WindowsSecurityContextOptions"),
    ("runAsUser", "RunAsUser", "*int64"), ("runAsGroup", "RunAsGroup", "*int64"),
    ("runAsNonRoot", "RunAsNonRoot", "*bool"), ("readOnlyRootFilesystem", "ReadOnlyRootFilesystem", "*bool"),
    ("allowPrivilegeEscalation", "AllowPrivilegeEscalation", "*bool"),
    ("procMount", "ProcMount", "*core.ProcMountType"), ("seccompProfile", "SeccompProfile", "*core.SeccompProfile"),
    ("appArmorProfile", "AppArmorProfile", "*core.AppArmorProfile"))


def go_security_context(context: dict[str, Any]) -> str:
    """A ``core.SecurityContext`` as ``%#v`` prints it: every field a pointer, ``(*T)(nil)`` or an address
    (kapi's stand-in ``0xc000000000``)."""
    fields = ", ".join(f"{go}:{_go_pointer(context.get(key), go_type)}" for key, go, go_type in _SC_FIELDS)
    return f"core.SecurityContext{{{fields}}}"


def validate_container_security_context(container: Any, path: str, pod_spec: Any = None, *,
                                        apparmor: bool = False) -> list[Cause]:
    """ValidateSecurityContext of the container ``container`` (a v1 JSON dict) at ``path`` (the container's path,
    e.g. ``spec.containers[0]``); causes under ``<path>.securityContext``, in kube's order:

    ``runAsUser`` and ``runAsGroup`` in 0..2147483647; ``procMount`` Default/Unmasked (``Unsupported value``),
    Unmasked only when the Pod sets ``hostUsers: false`` (``Invalid value: "Unmasked": `hostUsers` must be false
    to use `Unmasked```); ``seccompProfile`` (:func:`validate_seccomp_profile`); with ``allowPrivilegeEscalation:
    false``, ``privileged: true`` and each ``CAP_SYS_ADMIN`` in ``capabilities.add`` are ``<path>.securityContext:
    Invalid value: core.SecurityContext{...}: cannot set `allowPrivilegeEscalation` to false and ...`` (the
    struct as ``%#v`` prints it, addresses stand-ins); ``windowsOptions`` (:func:`validate_windows_options`);
    ``appArmorProfile`` last (only with ``apparmor=True``). ``pod_spec`` is the PodSpec the container is in (for
    ``hostUsers``). Returns [] when valid or the securityContext is absent.
    """
    context = _dict(container).get("securityContext")
    if not isinstance(context, dict):
        return []
    spath = f"{path}.securityContext"
    out: list[Cause] = []
    # privileged: "disallowed by cluster policy" only without --allow-privileged (see the module docstring)
    _ids(out, f"{spath}.runAsUser", context.get("runAsUser"))
    _ids(out, f"{spath}.runAsGroup", context.get("runAsGroup"))
    proc_mount = context.get("procMount")
    if isinstance(proc_mount, str):
        if proc_mount not in PROC_MOUNT_TYPES:
            out.append(not_supported(f"{spath}.procMount", proc_mount, PROC_MOUNT_TYPES))
        if proc_mount == "Unmasked" and host_users(pod_spec):
            out.append(invalid(f"{spath}.procMount", proc_mount, UNMASKED_MSG))
    out.extend(validate_seccomp_profile(context.get("seccompProfile"), f"{spath}.seccompProfile"))
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged") is True:
            out.append(Cause("FieldValueInvalid", f"Invalid value: {go_security_context(context)}: "
                                                  f"{PRIVILEGED_APE_MSG}", spath))
        for cap in _list(_dict(context.get("capabilities")).get("add")):
            if cap == "CAP_SYS_ADMIN":
                out.append(Cause("FieldValueInvalid", f"Invalid value: {go_security_context(context)}: "
                                                      f"{SYS_ADMIN_APE_MSG}", spath))
    out.extend(validate_windows_options(context.get("windowsOptions"), f"{spath}.windowsOptions"))
    if apparmor:
        out.extend(validate_apparmor_profile(context.get("appArmorProfile"), f"{spath}.appArmorProfile"))
    return out
