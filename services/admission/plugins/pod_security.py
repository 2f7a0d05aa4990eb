"""PodSecurity: the Pod Security Standards enforced per namespace (KEP-2579, "Pod Security Admission").

Namespace labels ``pod-security.kubernetes.io/<mode>`` (mode enforce,
audit, warn) name a level (privileged, baseline, restricted) and
``...-version`` a version (``latest`` or ``v1.X``: each check's version of
that release, :func:`checks_for`). Defaults come from the plugin configuration
(PodSecurityConfiguration ``defaults``; all privileged) and
``exemptions`` (usernames, namespaces, runtimeClasses) skip evaluation.

- Pod CREATE/UPDATE (the main resource and every subresource but
  ignoredPodSubresources' exec, attach, binding, eviction, log,
  portforward, proxy and status: ephemeralcontainers and resize are
  evaluated; an UPDATE only when :func:`significant_pod_update`, never a
  resize): enforce ->
  403 ``pods "x" is forbidden: violates PodSecurity "restricted:latest":
  <check> (<detail>), ...``; warn -> a warning ``would violate PodSecurity
  "baseline:latest": ...``; audit -> the audit annotation
  ``pod-security.kubernetes.io/audit-violations``; every evaluated pod
  records ``pod-security.kubernetes.io/enforce-policy`` (``<level>:<version>``),
  an exempt request ``pod-security.kubernetes.io/exempt`` and invalid labels
  ``pod-security.kubernetes.io/error`` (:meth:`PodSecurity.validate`).
- Workload templates (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
  CronJob, ReplicationController, PodTemplate; main resource only, no
  subresource): warn and audit only, never enforced, on every CREATE and
  UPDATE, an UPDATE whose template is unchanged included
  (``ValidatePodController`` in
  ``pod-security-admission/admission/admission.go`` has no
  significant-update check).
- Namespace CREATE/UPDATE (main resource only): an invalid level or version
  label -> 422 ``Namespace "x" is invalid: metadata.labels[pod-security.
  kubernetes.io/enforce]: Invalid value: "strict": must be one of
  privileged, baseline, restricted`` (an UPDATE only when the label errors
  changed). An UPDATE that makes the enforce level stricter (or changes its
  version) dry-runs the namespace's existing pods against it and answers
  warnings, never a refusal (:meth:`PodSecurity.evaluate_pods_in_namespace`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any, Protocol

from kapi import errors
from kapi.errors import Cause
from kapi.gofmt import go_quote
from kapi.kinds.apparmor import APPARMOR_CONTAINER_PREFIX
from kapi.objectmeta import invalid
from services.admission.chain import CREATE, UPDATE, AdmissionRequest
from services.admission.namespaces import NamespaceCache

PREFIX = "pod-security.kubernetes.io/"
MODES = ("enforce", "audit", "warn")
LEVELS = ("privileged", "baseline", "restricted")  # least to most strict (CompareLevels)
# defaultNamespaceMaxPodsToCheck, defaultNamespacePodCheckTimeout (pod-security-admission/admission/admission.go)
NAMESPACE_MAX_PODS_TO_CHECK = 3000
NAMESPACE_POD_CHECK_TIMEOUT = 1.0  # seconds
LIST_PODS_FAILED = "failed to list pods while checking new PodSecurity enforce level"
# the audit annotations (api.AuditAnnotationPrefix + ExemptionReasonAnnotationKey, AuditViolationsAnnotationKey,
# EnforcedPolicyAnnotationKey, "error"; pod-security-admission/api/constants.go, admission/admission.go)
AUDIT_ANNOTATION = "pod-security.kubernetes.io/audit-violations"
ENFORCE_ANNOTATION = "pod-security.kubernetes.io/enforce-policy"
EXEMPT_ANNOTATION = "pod-security.kubernetes.io/exempt"
ERROR_ANNOTATION = "pod-security.kubernetes.io/error"
_VERSION = re.compile(r"^(latest|v1\.(0|[1-9]\d*))$")
_BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE",
                  "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}
_RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                       "projected", "secret"}
_VOLUME_SOURCES = {"hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi", "glusterfs",
                   "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile", "vsphereVolume",
                   "quobyte", "azureDisk", "portworxVolume", "photonPersistentDisk", "scaleIO", "storageos", "image",
                   *_RESTRICTED_VOLUMES}
# sysctlsAllowedV1Dot0 / V1Dot27 / V1Dot29 (pod-security-admission/policy/check_sysctls.go)
_SYSCTLS_1_0 = frozenset({"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
                          "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start"})
_SYSCTLS_1_27 = _SYSCTLS_1_0 | {"net.ipv4.ip_local_reserved_ports"}
_SYSCTLS_1_29 = _SYSCTLS_1_27 | {"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                                 "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
_SAFE_SYSCTLS = _SYSCTLS_1_29
_TEMPLATES = {("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"), ("apps", "daemonsets"),
              ("batch", "jobs"), ("", "replicationcontrollers"), ("", "podtemplates"), ("batch", "cronjobs")}

Container = tuple[str, dict[str, Any]]
Check = Callable[[dict[str, Any], dict[str, Any], list[Container]], str | None]


def _names(containers: list[Container]) -> str:
    names = [f'"{n}"' for n, _ in containers]
    return ("container " if len(names) == 1 else "containers ") + ", ".join(names)


def _sc(c: dict[str, Any]) -> dict[str, Any]:
    sc = c.get("securityContext")
    return sc if isinstance(sc, dict) else {}


def _join_quote(items: list[str]) -> str:
    """kube's joinQuote: each item in double quotes (no escaping), ``", "`` between."""
    return ", ".join(f'"{x}"' for x in items)


def _app_armor(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """appArmorProfile_1_0 (``check_appArmorProfile.go``): the pod's and each container's
    ``securityContext.appArmorProfile.type`` must be RuntimeDefault or Localhost, and the deprecated
    ``container.apparmor.security.beta.kubernetes.io/*`` annotations empty, ``runtime/default`` or ``localhost/*``.
    Detail ``<pod and container(s) "a" and annotation(s)> must not set AppArmor profile type to "<values>"``:
    the sorted bad types, then the sorted ``<key>="<value>"`` annotations."""
    setters, types = _bad_profile_setters("appArmorProfile", spec, cs)
    annotations = sorted(f"{k}={go_quote(str(v))}" for k, v in (meta.get("annotations") or {}).items()
                         if str(k).startswith(APPARMOR_CONTAINER_PREFIX) and str(v or "")
                         and v != "runtime/default" and not str(v).startswith("localhost/"))
    if annotations:
        setters.append("annotation" if len(annotations) == 1 else "annotations")
    if not setters:
        return None
    values = sorted(types) + annotations
    reason = "forbidden AppArmor profile" if len(values) == 1 else "forbidden AppArmor profiles"
    return f"{reason} ({' and '.join(setters)} must not set AppArmor profile type to {_join_quote(values)})"


_SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})  # selinux_allowed_types_1_0


def _se_linux(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """seLinuxOptions_1_0 (``check_seLinuxOptions.go``): the pod's and each container's
    ``securityContext.seLinuxOptions`` may set ``type`` only to container_t, container_init_t or container_kvm_t
    and never ``user`` or ``role``. Detail ``<pod and container(s) "a"> set forbidden
    securityContext.seLinuxOptions: type(s) "<sorted>"; user may not be set; role may not be set``."""
    bad_types: set[str] = set()
    user = role = False

    def valid(options: Any) -> bool:
        nonlocal user, role
        if not isinstance(options, dict):
            return True
        kind = str(options.get("type") or "")
        if kind not in _SELINUX_TYPES:
            bad_types.add(kind)
        user = user or bool(options.get("user"))
        role = role or bool(options.get("role"))
        return kind in _SELINUX_TYPES and not options.get("user") and not options.get("role")

    setters = []
    if not valid((spec.get("securityContext") or {}).get("seLinuxOptions")):
        setters.append("pod")
    bad = [(n, c) for n, c in cs if not valid(_sc(c).get("seLinuxOptions"))]
    if bad:
        setters.append(_names(bad))
    if not setters:
        return None
    data = [f"{'type' if len(bad_types) == 1 else 'types'} {_join_quote(sorted(bad_types))}"] if bad_types else []
    data += ["user may not be set"] if user else []
    data += ["role may not be set"] if role else []
    return f"seLinuxOptions ({' and '.join(setters)} set forbidden securityContext.seLinuxOptions: {'; '.join(data)})"


def _probe_hosts(handler: Any) -> list[str]:
    """The non-empty ``httpGet.host`` and ``tcpSocket.host`` of a probe or lifecycle handler."""
    if not isinstance(handler, dict):
        return []
    return [str(h) for key in ("httpGet", "tcpSocket")
            if isinstance(handler.get(key), dict) and (h := handler[key].get("host"))]


def _host_probes(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """hostProbesAndHostLifecycle v1.34 (``check_hostProbesAndhostLifecycle.go``): no container's liveness,
    readiness or startup probe nor postStart/preStop handler sets ``httpGet.host`` or ``tcpSocket.host``. Detail
    ``container(s) "<sorted names>" use(s) probe or lifecycle host(s) "<sorted hosts>"``."""
    names: set[str] = set()
    hosts: set[str] = set()
    for n, c in cs:
        given = c.get("lifecycle")
        lifecycle: dict[str, Any] = given if isinstance(given, dict) else {}
        found = [h for handler in (c.get("livenessProbe"), c.get("readinessProbe"), c.get("startupProbe"),
                                   lifecycle.get("postStart"), lifecycle.get("preStop"))
                 for h in _probe_hosts(handler)]
        if found:
            names.add(n)
            hosts.update(found)
    if not names:
        return None
    one = len(names) == 1
    return (f"probe or lifecycle host ({'container' if one else 'containers'} {_join_quote(sorted(names))} "
            f"{'uses' if one else 'use'} {'probe or lifecycle host' if len(hosts) == 1 else 'probe or lifecycle hosts'}"
            f" {_join_quote(sorted(hosts))})")


def _host_namespaces(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    bad = [f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if spec.get(k) is True]
    return f"host namespaces ({', '.join(bad)})" if bad else None


def _privileged(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    bad = [(n, c) for n, c in cs if _sc(c).get("privileged") is True]
    return f"privileged ({_names(bad)} must not set securityContext.privileged=true)" if bad else None


def _baseline_caps(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    bad, caps = [], set()
    for n, c in cs:
        added = {str(x) for x in (_sc(c).get("capabilities") or {}).get("add") or []} - _BASELINE_CAPS
        if added:
            bad.append((n, c))
            caps |= added
    if not bad:
        return None
    shown = ", ".join(f'"{x}"' for x in sorted(caps))
    return f"non-default capabilities ({_names(bad)} must not include {shown} in securityContext.capabilities.add)"


def _volume_type(v: dict[str, Any]) -> str:
    return next((k for k in v if k in _VOLUME_SOURCES), "")


def _host_path(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    bad = [f'"{v.get("name", "")}"' for v in spec.get("volumes") or [] if isinstance(v, dict) and "hostPath" in v]
    if not bad:
        return None
    return f"hostPath volumes ({'volume' if len(bad) == 1 else 'volumes'} {', '.join(bad)})"


def _host_ports(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """hostPorts_1_0: detail ``container(s) "a" use(s) hostPort(s) <unique ports, sorted as strings>``."""
    bad: list[Container] = []
    ports: set[str] = set()
    for n, c in cs:
        hp = [p.get("hostPort") for p in c.get("ports") or [] if isinstance(p, dict) and p.get("hostPort")]
        if hp:
            bad.append((n, c))
            ports.update(str(p) for p in hp)
    if not bad:
        return None
    return f"hostPort ({_names(bad)} {'uses' if len(bad) == 1 else 'use'} hostPort{'s' if len(ports) > 1 else ''} " \
           f"{', '.join(sorted(ports))})"


def _user_namespace(spec: dict[str, Any]) -> bool:
    """relaxPolicyForUserNamespacePod from policy v1.35 (the UserNamespacesPodSecurityStandards gate gone):
    a pod with ``hostUsers: false`` runs in a user namespace."""
    return spec.get("hostUsers") is False


def _proc_mount(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """procMount_1_0: detail ``container(s) "a" must not set securityContext.procMount to "<sorted values>"``."""
    bad = [(n, c) for n, c in cs if _sc(c).get("procMount") not in (None, "Default")]
    if not bad:
        return None
    values = _join_quote(sorted({str(_sc(c).get("procMount")) for _, c in bad}))
    return f"procMount ({_names(bad)} must not set securityContext.procMount to {values})"


def _proc_mount_1_35(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """procMount_1_35_baseline: any procMount in a user namespace (``hostUsers: false``), else procMount_1_0."""
    return None if _user_namespace(spec) else _proc_mount(meta, spec, cs)


def _bad_profile_setters(field: str, spec: dict[str, Any], cs: list[Container]) -> tuple[list[str], set[str]]:
    """The pod and containers whose ``securityContext.<field>.type`` (seccompProfile, appArmorProfile) is set to
    neither RuntimeDefault nor Localhost (``pod``, ``container(s) "a"``), and those types."""
    setters: list[str] = []
    values: set[str] = set()
    pod = (spec.get("securityContext") or {}).get(field)
    if isinstance(pod, dict) and pod.get("type") not in ("RuntimeDefault", "Localhost"):
        setters.append("pod")
        values.add(str(pod.get("type") or ""))
    bad = []
    for n, c in cs:
        profile = _sc(c).get(field)
        if isinstance(profile, dict) and profile.get("type") not in ("RuntimeDefault", "Localhost"):
            bad.append((n, c))
            values.add(str(profile.get("type") or ""))
    if bad:
        setters.append(_names(bad))
    return setters, values


def _seccomp_baseline(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """seccompProfileBaseline_1_19: detail ``pod and container(s) "a" must not set
    securityContext.seccompProfile.type to "<sorted types>"``."""
    setters, values = _bad_profile_setters("seccompProfile", spec, cs)
    if not setters:
        return None
    return f"seccompProfile ({' and '.join(setters)} must not set securityContext.seccompProfile.type to " \
           f"{_join_quote(sorted(values))})"


def _sysctls_of(allowed: frozenset[str]) -> Check:
    def check(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
        bad = [s.get("name", "") for s in (spec.get("securityContext") or {}).get("sysctls") or []
               if isinstance(s, dict) and s.get("name") not in allowed]
        return f"forbidden sysctls ({', '.join(bad)})" if bad else None
    return check


_sysctls = _sysctls_of(_SYSCTLS_1_29)
_sysctls_1_27 = _sysctls_of(_SYSCTLS_1_27)
_sysctls_1_0 = _sysctls_of(_SYSCTLS_1_0)


def _volume_types(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    bad = []
    for v in spec.get("volumes") or []:
        if isinstance(v, dict):
            kind = _volume_type(v)
            if kind and kind not in _RESTRICTED_VOLUMES:
                bad.append((v.get("name", ""), kind))
    if not bad:
        return None
    if len(bad) == 1:
        return f'restricted volume types (volume "{bad[0][0]}" uses restricted volume type "{bad[0][1]}")'
    names = ", ".join(f'"{n}"' for n, _ in bad)
    kinds = ", ".join(f'"{k}"' for k in sorted({k for _, k in bad}))
    return f"restricted volume types (volumes {names} use restricted volume types {kinds})"


def _privilege_escalation(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    bad = [(n, c) for n, c in cs if _sc(c).get("allowPrivilegeEscalation") is not False]
    if not bad:
        return None
    return f"allowPrivilegeEscalation != false ({_names(bad)} must set securityContext.allowPrivilegeEscalation=false)"


def _run_as_non_root(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """runAsNonRoot_1_0: ``pod and container(s) "a" must not set securityContext.runAsNonRoot=false`` (explicit
    false), else ``pod or container(s) "b" must set securityContext.runAsNonRoot=true`` (containers without the
    field when the pod does not set it true)."""
    pod = (spec.get("securityContext") or {}).get("runAsNonRoot")
    setters = ["pod"] if pod is False else []
    explicit = [(n, c) for n, c in cs if _sc(c).get("runAsNonRoot") is False]
    if explicit:
        setters.append(_names(explicit))
    if setters:
        return f"runAsNonRoot != true ({' and '.join(setters)} must not set securityContext.runAsNonRoot=false)"
    implicit = [(n, c) for n, c in cs if _sc(c).get("runAsNonRoot") is None and pod is not True]
    if implicit:
        return f"runAsNonRoot != true (pod or {_names(implicit)} must set securityContext.runAsNonRoot=true)"
    return None


def _run_as_user(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """runAsUser_1_23: detail ``pod and container(s) "a" must not set runAsUser=0``."""
    setters = ["pod"] if (spec.get("securityContext") or {}).get("runAsUser") == 0 else []
    bad = [(n, c) for n, c in cs if _sc(c).get("runAsUser") == 0]
    if bad:
        setters.append(_names(bad))
    return f"runAsUser=0 ({' and '.join(setters)} must not set runAsUser=0)" if setters else None


def _in_host_users_only(check: Check) -> Check:
    """The v1.35 versions of runAsNonRoot and runAsUser: a pod in a user namespace (``hostUsers: false``)
    passes."""
    def relaxed(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
        return None if _user_namespace(spec) else check(meta, spec, cs)
    return relaxed


_run_as_non_root_1_35 = _in_host_users_only(_run_as_non_root)
_run_as_user_1_35 = _in_host_users_only(_run_as_user)


def _seccomp_restricted(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """seccompProfileRestricted_1_19: a bad type set by the pod or a container is ``pod and container(s) "a" must
    not set securityContext.seccompProfile.type to "<types>"``; else containers without a profile when the pod
    has no valid one: ``pod or container(s) "b" must set securityContext.seccompProfile.type to "RuntimeDefault"
    or "Localhost"``."""
    setters, values = _bad_profile_setters("seccompProfile", spec, cs)
    if setters:
        return f"seccompProfile ({' and '.join(setters)} must not set securityContext.seccompProfile.type to " \
               f"{_join_quote(sorted(values))})"
    pod_set = isinstance((spec.get("securityContext") or {}).get("seccompProfile"), dict)
    implicit = [(n, c) for n, c in cs if not isinstance(_sc(c).get("seccompProfile"), dict) and not pod_set]
    if not implicit:
        return None
    return f'seccompProfile (pod or {_names(implicit)} must set securityContext.seccompProfile.type to ' \
           '"RuntimeDefault" or "Localhost")'


def _capabilities_restricted(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    parts = []
    no_drop = [(n, c) for n, c in cs if "ALL" not in ((_sc(c).get("capabilities") or {}).get("drop") or [])]
    if no_drop:
        parts.append(f'{_names(no_drop)} must set securityContext.capabilities.drop=["ALL"]')
    bad, caps = [], set()
    for n, c in cs:
        added = {str(x) for x in (_sc(c).get("capabilities") or {}).get("add") or []} - {"NET_BIND_SERVICE"}
        if added:
            bad.append((n, c))
            caps |= added
    if bad:
        shown = ", ".join(f'"{x}"' for x in sorted(caps))
        parts.append(f"{_names(bad)} must not include {shown} in securityContext.capabilities.add")
    return f"unrestricted capabilities ({'; '.join(parts)})" if parts else None


def _host_process(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """windowsHostProcess_1_0: neither the pod nor a container may set windowsOptions.hostProcess=true."""
    setters = ["pod"] if ((spec.get("securityContext") or {}).get("windowsOptions") or {}).get("hostProcess") is True \
        else []
    bad = [(n, c) for n, c in cs if (_sc(c).get("windowsOptions") or {}).get("hostProcess") is True]
    if bad:
        setters.append(_names(bad))
    if not setters:
        return None
    return f"hostProcess ({' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true)"


def _seccomp_annotations(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
    """seccompProfileBaseline_1_0: the alpha seccomp annotations may only be runtime/default, docker/default or
    localhost/*; detail ``forbidden annotation(s) <key>="<value>", ...`` (sorted)."""
    ann = meta.get("annotations") or {}
    keys = [SECCOMP_POD_ANNOTATION] + [SECCOMP_CONTAINER_ANNOTATION_PREFIX + n for n, _ in cs]
    bad = sorted({f"{k}={go_quote(str(ann[k]))}" for k in keys if k in ann and not (
        ann[k] in ("runtime/default", "docker/default") or str(ann[k]).startswith("localhost/"))})
    if not bad:
        return None
    return f"seccompProfile (forbidden {'annotation' if len(bad) == 1 else 'annotations'} {', '.join(bad)})"


def _unless_windows(check: Check) -> Check:
    """The v1.25 versions of capabilities_restricted and seccompProfile_restricted: a pod with
    ``spec.os.name: windows`` passes."""
    def windows_exempt(meta: dict[str, Any], spec: dict[str, Any], cs: list[Container]) -> str | None:
        if (spec.get("os") or {}).get("name") == "windows":
            return None
        return check(meta, spec, cs)
    return windows_exempt


_capabilities_restricted_1_25 = _unless_windows(_capabilities_restricted)
_seccomp_restricted_1_25 = _unless_windows(_seccomp_restricted)

LATEST_MINOR = 37  # "latest": the apiserver's own version (1.37); a newer v1.x evaluates as it


def _minor(version: str) -> int:
    """The minor of a policy version (``latest`` or ``v1.x``), at most :data:`LATEST_MINOR`."""
    if version.startswith("v1."):
        return min(int(version[3:]), LATEST_MINOR)
    return LATEST_MINOR


def checks_for(level: str, version: str) -> tuple[Check, ...]:
    """The checks of ``level`` at ``version`` (``latest`` or ``v1.x``) in kube's order (checkRegistry in
    ``pod-security-admission/policy/registry.go``): the baseline checks by ID (a restricted check overriding
    one replaces it), then the restricted checks by ID. Each check takes the newest of its versions whose
    MinimumVersion is at most ``version`` and is absent below its first: allowPrivilegeEscalation v1.8,
    appArmorProfile v1.0, hostProbesAndHostLifecycle v1.34, seLinuxOptions v1.0, procMount_baseline v1.0 and
    v1.35 (any value with ``hostUsers: false``), procMount_restricted v1.35 (the strict v1.0 check, overriding
    procMount_baseline), runAsNonRoot v1.0 and v1.35 and runAsUser v1.23 and v1.35 (v1.35: a ``hostUsers: false``
    pod passes; before, kube's UserNamespacesPodSecurityStandards gate, off by default, decided),
    capabilities_restricted v1.22 (overrides capabilities_baseline; v1.25 exempts windows pods), runAsUser
    v1.23, seccompProfile_baseline v1.0 (the alpha annotations) and v1.19 (the fields), seccompProfile_restricted
    v1.19 (overrides seccompProfile_baseline; v1.25 exempts windows pods), restrictedVolumes v1.0 (overrides
    hostPathVolumes), sysctls v1.0, v1.27, v1.29 (the allowed names), windowsHostProcess v1.0.
    ``privileged``: none."""
    if level not in ("baseline", "restricted"):
        return ()
    minor = _minor(version)
    restricted = level == "restricted"
    caps_restricted = _capabilities_restricted_1_25 if minor >= 25 else _capabilities_restricted \
        if minor >= 22 else None
    seccomp_restricted = _seccomp_restricted_1_25 if minor >= 25 else _seccomp_restricted if minor >= 19 else None
    baseline: list[Check | None] = [
        _app_armor,
        None if restricted and caps_restricted else _baseline_caps,
        _host_namespaces,
        None if restricted else _host_path,
        _host_ports, _host_probes if minor >= 34 else None, _privileged,
        None if restricted and minor >= 35 else _proc_mount_1_35 if minor >= 35 else _proc_mount, _se_linux,
        None if restricted and seccomp_restricted else _seccomp_baseline if minor >= 19 else _seccomp_annotations,
        _sysctls if minor >= 29 else _sysctls_1_27 if minor >= 27 else _sysctls_1_0,
        _host_process,
    ]
    extra: list[Check | None] = [
        _privilege_escalation if minor >= 8 else None, caps_restricted, _proc_mount if minor >= 35 else None,
        _volume_types, _run_as_non_root_1_35 if minor >= 35 else _run_as_non_root,
        _run_as_user_1_35 if minor >= 35 else _run_as_user if minor >= 23 else None, seccomp_restricted,
    ] if restricted else []
    return tuple(c for c in baseline + extra if c is not None)


def evaluate(level: str, meta: dict[str, Any], spec: dict[str, Any], version: str = "latest") -> list[str]:
    """Violations of ``level`` ("baseline" or "restricted"; else none) at ``version`` (``latest`` or ``v1.x``,
    :func:`checks_for`) by a pod, in kube's order, each ``<reason> (<detail>)``."""
    cs = [(str(c.get("name", "")), c) for key in ("initContainers", "containers", "ephemeralContainers")
          for c in spec.get(key) or [] if isinstance(c, dict)]
    return [msg for check in checks_for(level, version) if (msg := check(meta, spec, cs))]


def forbidden_reason(violations: list[str]) -> str:
    """AggregateCheckResult.ForbiddenReason (``pod-security-admission/policy/checks.go``): the violated checks'
    reasons without their details, joined by ", " (``allowPrivilegeEscalation != false, seccompProfile``).

    ``violations`` are :func:`evaluate`'s ``<reason> (<detail>)`` strings; no reason contains " (", so the
    reason is the text before the first one."""
    return ", ".join(v.split(" (", 1)[0] for v in violations)


Policy = dict[str, tuple[str, str]]  # mode -> (level, version)


def _aggregate(causes: list[Cause]) -> str:
    """field.ErrorList.ToAggregate().Error(): ``<field>: <message>``, each distinct one once; more than one is
    ``[a, b]``."""
    parts = list(dict.fromkeys(f"{c.field}: {c.message}" for c in causes))
    return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"


def policy_to_evaluate(labels: dict[str, str], defaults: Policy) -> tuple[Policy, list[Cause]]:
    """api.PolicyToEvaluate (``pod-security-admission/api/helpers.go``): the namespace's policy per mode from its
    ``pod-security.kubernetes.io/<mode>[-version]`` labels, ``defaults`` for an absent label.

    A label that is present but invalid (the empty string included) is a field error on
    ``metadata.labels[<label>]`` (``must be one of privileged, baseline, restricted`` / ``must be "latest" or
    "v1.x"``), in the order enforce, enforce-version, audit, audit-version, warn, warn-version; the policy still
    answers: an invalid enforce level is "restricted", an invalid audit or warn level "privileged" (fail open),
    an invalid version "latest"."""
    policy = dict(defaults)
    problems: list[Cause] = []
    if not labels:
        return policy, problems
    for mode in MODES:
        level, version = policy[mode]
        key = PREFIX + mode
        if key in labels:
            level = str(labels[key])
            if level not in LEVELS:
                problems.append(invalid(f"metadata.labels[{key}]", level,
                                        "must be one of privileged, baseline, restricted"))
                level = "restricted" if mode == "enforce" else "privileged"
        key = f"{PREFIX}{mode}-version"
        if key in labels:
            version = str(labels[key])
            if not _VERSION.match(version):
                problems.append(invalid(f"metadata.labels[{key}]", version, 'must be "latest" or "v1.x"'))
                version = "latest"
        policy[mode] = (level, version)
    return policy, problems


class PodLister(Protocol):
    """What the namespace check needs of :class:`services.admission.informers.Informers`."""

    async def list_live(self, group: str, resource: str, namespace: str, timeout: float
                        ) -> list[dict[str, Any]]: ...


# ignoredPodSubresources (staging/src/k8s.io/pod-security-admission/admission/admission.go): every other pods
# subresource (ephemeralcontainers, resize, ...) carries a Pod and is evaluated
IGNORED_POD_SUBRESOURCES = frozenset({"attach", "binding", "eviction", "exec", "log", "portforward", "proxy",
                                      "status"})
SECCOMP_POD_ANNOTATION = "seccomp.security.alpha.kubernetes.io/pod"
SECCOMP_CONTAINER_ANNOTATION_PREFIX = "container.seccomp.security.alpha.kubernetes.io/"


def _list_of(spec: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = spec.get(key)
    return [c if isinstance(c, dict) else {} for c in items] if isinstance(items, list) else []


def significant_pod_update(pod: dict[str, Any], old: dict[str, Any]) -> bool:
    """isSignificantPodUpdate (``pod-security-admission/admission/admission.go``): whether a Pod UPDATE (of the
    Pod, ``pods/ephemeralcontainers`` or ``pods/resize``) is evaluated at all. Only these count: the seccomp pod
    annotation, the number of containers or init containers, a container's image or seccomp container
    annotation (by index), an ephemeral container added or its image or annotation changed (by name). A
    resize (resources only) is never significant, so it is allowed without a warning whatever the policy."""
    ann = (pod.get("metadata") or {}).get("annotations") or {}
    old_ann = (old.get("metadata") or {}).get("annotations") or {}
    if ann.get(SECCOMP_POD_ANNOTATION) != old_ann.get(SECCOMP_POD_ANNOTATION):
        return True
    spec, old_spec = pod.get("spec") or {}, old.get("spec") or {}

    def changed(c: dict[str, Any], oc: dict[str, Any]) -> bool:
        key = SECCOMP_CONTAINER_ANNOTATION_PREFIX + str(c.get("name", ""))
        return c.get("image") != oc.get("image") or ann.get(key) != old_ann.get(key)

    for key in ("containers", "initContainers"):
        if len(_list_of(spec, key)) != len(_list_of(old_spec, key)):
            return True
    for key in ("containers", "initContainers"):
        if any(changed(c, oc) for c, oc in zip(_list_of(spec, key), _list_of(old_spec, key), strict=True)):
            return True
    olds = {c.get("name"): c for c in _list_of(old_spec, "ephemeralContainers")}
    for c in _list_of(spec, "ephemeralContainers"):
        oc = olds.get(c.get("name"))
        if oc is None or changed(c, oc):
            return True
    return False


def _pod_of(request: AdmissionRequest) -> tuple[dict[str, Any], dict[str, Any]] | None:
    obj = request.object or {}
    res = request.resource
    if res.group == "" and res.resource == "pods":
        return obj.get("metadata") or {}, obj.get("spec") or {}
    if (res.group, res.resource) in _TEMPLATES:
        spec = obj.get("spec") or {}
        if res.resource == "cronjobs":
            spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
        template = spec.get("template") if res.resource != "podtemplates" else obj.get("template")
        if isinstance(template, dict):
            return template.get("metadata") or {}, template.get("spec") or {}
    return None


class PodSecurity:
    """The validating PodSecurity plugin."""

    name = "PodSecurity"

    def __init__(self, namespaces: NamespaceCache, config: dict[str, Any] | None = None,
                 pods: PodLister | None = None):
        """``config`` is a PodSecurityConfiguration (``defaults``: ``enforce``, ``enforce-version``, ...;
        ``exemptions``); ``pods`` lists a namespace's pods for the enforce-change check (without it that check
        is skipped)."""
        self.namespaces = namespaces
        self.pods = pods
        config = config or {}
        defaults = config.get("defaults") or {}
        self.defaults: Policy = {m: (str(defaults.get(m) or "privileged"), str(defaults.get(f"{m}-version") or
                                                                            "latest")) for m in MODES}
        exemptions = config.get("exemptions") or {}
        self.exempt_users = set(exemptions.get("usernames") or [])
        self.exempt_namespaces = set(exemptions.get("namespaces") or [])
        self.exempt_runtime_classes = set(exemptions.get("runtimeClasses") or [])
        self.max_pods_to_check = NAMESPACE_MAX_PODS_TO_CHECK
        self.pod_check_timeout = NAMESPACE_POD_CHECK_TIMEOUT

    def handles(self, operation: str) -> bool:
        """CREATE and UPDATE."""
        return operation in (CREATE, UPDATE)

    def _levels(self, labels: dict[str, str]) -> Policy:
        return policy_to_evaluate(labels, self.defaults)[0]

    async def validate(self, request: AdmissionRequest) -> None:
        """Enforce, warn and audit as described in the module docstring; raises 403 (a Pod) or 422 (a
        Namespace's labels). Audit annotations as kube's (``Validate`` in
        ``plugin/pkg/admission/security/podsecurity/admission.go`` prefixes the library's keys with
        ``pod-security.kubernetes.io/``): ``exempt`` (``namespace``, ``user``, ``runtimeClass``) on an exempt
        request; on an evaluated one ``error`` (``Failed to parse policy: <label errors>``) when a label is
        invalid, ``enforce-policy`` (``<level>:<version>``; pods only) and ``audit-violations`` when the audit
        level is violated, a refused pod's included."""
        res = request.resource
        if res.group == "" and res.resource == "namespaces":
            await self._validate_namespace(request)
            return
        is_pod = res.group == "" and res.resource == "pods"
        if not is_pod and (res.group, res.resource) not in _TEMPLATES:
            return
        if request.object is None or (request.subresource in IGNORED_POD_SUBRESOURCES if is_pod
                                      else request.subresource != ""):
            return
        if request.namespace and request.namespace in self.exempt_namespaces:
            request.audit_annotations[EXEMPT_ANNOTATION] = "namespace"
            return
        if request.attributes.user.username and request.attributes.user.username in self.exempt_users:
            request.audit_annotations[EXEMPT_ANNOTATION] = "user"
            return
        ns = await self.namespaces.get(request.namespace, request.timeout) or {}
        labels = ((ns.get("metadata") or {}).get("labels")) or {}
        levels, problems = policy_to_evaluate(labels, self.defaults)
        modes = ("enforce", "warn", "audit") if is_pod else ("warn", "audit")
        if not problems and all(levels[m][0] == "privileged" for m in modes):
            return
        # ValidatePod skips an UPDATE that is not isSignificantPodUpdate; ValidatePodController has no such
        # check: every UPDATE of a workload (its template changed or not) is evaluated, for warn and audit only
        if is_pod and request.operation == UPDATE and request.old_object is not None \
                and not significant_pod_update(request.object, request.old_object):
            return  # nothing PodSecurity checks can have changed: allowed, no warning
        pod = _pod_of(request)
        if pod is None:
            return  # a controller without a pod template
        meta, spec = pod
        if spec.get("runtimeClassName") and spec.get("runtimeClassName") in self.exempt_runtime_classes:
            request.audit_annotations[EXEMPT_ANNOTATION] = "runtimeClass"
            return
        annotations: dict[str, str] = {}
        if problems:
            annotations[ERROR_ANNOTATION] = f"Failed to parse policy: {_aggregate(problems)}"
        results: dict[tuple[str, str], list[str]] = {}

        def result(lv: tuple[str, str]) -> list[str]:
            if lv not in results:
                results[lv] = evaluate(lv[0], meta, spec, lv[1])
            return results[lv]

        refusal = None
        if is_pod:
            level, version = levels["enforce"]
            annotations[ENFORCE_ANNOTATION] = f"{level}:{version}"
            if violations := result(levels["enforce"]):
                refusal = errors.forbidden("pods", request.name,
                                           f'violates PodSecurity "{level}:{version}": {", ".join(violations)}')
        if violations := result(levels["audit"]):
            level, version = levels["audit"]
            annotations[AUDIT_ANNOTATION] = f'would violate PodSecurity "{level}:{version}": {", ".join(violations)}'
        if refusal is None and (violations := result(levels["warn"])):
            level, version = levels["warn"]
            request.warnings.append(f'would violate PodSecurity "{level}:{version}": {", ".join(violations)}')
        request.audit_annotations.update(annotations)
        if refusal is not None:
            raise refusal

    async def _validate_namespace(self, request: AdmissionRequest) -> None:
        """ValidateNamespace (``pod-security-admission/admission/admission.go``).

        Subresources (``status``, ``finalize``) are skipped. CREATE: any label error -> 422 on the Namespace.
        UPDATE: a label error -> 422 unless the old labels had the very same errors; then, when the enforce
        policy changed to a non-privileged one that is stricter or of another version, and the namespace is not
        exempt, the existing pods' violations become the request's warnings. A dry run is checked the same way.
        """
        if request.subresource != "" or request.object is None:
            return
        meta = request.object.get("metadata") or {}
        name = str(meta.get("name") or request.name)
        policy, problems = policy_to_evaluate(meta.get("labels") or {}, self.defaults)
        if request.operation == CREATE:
            if problems:
                raise errors.invalid("Namespace", name, problems)
            return
        if request.operation != UPDATE or request.old_object is None:
            return
        old_labels = (request.old_object.get("metadata") or {}).get("labels") or {}
        old_policy, old_problems = policy_to_evaluate(old_labels, self.defaults)
        if problems and (not old_problems or problems != old_problems):
            raise errors.invalid("Namespace", name, problems)
        new, old = policy["enforce"], old_policy["enforce"]
        if new == old or new[0] == "privileged":
            return
        if new[1] == old[1] and LEVELS.index(new[0]) <= LEVELS.index(old[0]):
            return  # relaxed (or the same level) at the same version
        if (request.namespace or name) in self.exempt_namespaces:
            request.audit_annotations[EXEMPT_ANNOTATION] = "namespace"  # sharedAllowedByNamespaceExemptionResponse
            return
        if self.pods is None:
            return
        request.warnings.extend(await self.evaluate_pods_in_namespace(name, new, request.timeout))

    def _prioritize(self, pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """prioritizePods: drop pods of an exempt runtimeClass; of the pods one controller owns (by the
        controller ownerReference's uid) the first comes in order, the others after every other pod."""
        first: list[dict[str, Any]] = []
        later: list[dict[str, Any]] = []
        seen: set[str] = set()
        for pod in pods:
            spec = pod.get("spec") or {}
            runtime_class = spec.get("runtimeClassName")
            if runtime_class and runtime_class in self.exempt_runtime_classes:
                continue
            owner = next((r for r in (pod.get("metadata") or {}).get("ownerReferences") or []
                          if isinstance(r, dict) and r.get("controller") is True), None)
            if owner is None:
                first.append(pod)
            elif str(owner.get("uid", "")) in seen:
                later.append(pod)
            else:
                seen.add(str(owner.get("uid", "")))
                first.append(pod)
        return first + later

    async def evaluate_pods_in_namespace(self, namespace: str, enforce: tuple[str, str], timeout: float
                                         ) -> list[str]:
        """EvaluatePodsInNamespace: the warnings for a namespace whose enforce policy becomes ``enforce``
        ((level, version)); ``timeout`` is the seconds the request has left.

        The check gets :attr:`pod_check_timeout` (1 s) or half of ``timeout`` if less, for the pod list and the
        evaluation together; at most :attr:`max_pods_to_check` (3000) pods, in :meth:`_prioritize` order, are
        evaluated, and evaluation stops at the deadline. Answer, in order: ``new PodSecurity enforce level only
        checked against the first N of M existing pods`` when not all were checked; ``existing pods in namespace
        "ns" violate the new PodSecurity enforce level "restricted:latest"`` when any does; then one warning per
        distinct set of violated checks (:func:`forbidden_reason`), prefixed by the lexically first pod with it
        (``p1: ...``, ``p1 (and 1 other pod): ...``, ``p1 (and 2 other pods): ...``), sorted. A failed pod list
        is the one warning ``failed to list pods while checking new PodSecurity enforce level``."""
        budget = min(self.pod_check_timeout, timeout / 2)
        deadline = time.monotonic() + budget
        assert self.pods is not None
        try:
            pods = await self.pods.list_live("", "pods", namespace, max(budget, 0.001))
        except errors.StatusError:
            return [LIST_PODS_FAILED]
        prioritized = self._prioritize(pods)
        total = len(prioritized)
        prioritized = prioritized[:self.max_pods_to_check]
        checked = len(prioritized)
        level = enforce[0]
        first_pod: dict[str, str] = {}  # forbidden reason -> lexically first pod name (insertion = first seen)
        counts: dict[str, int] = {}
        for i, pod in enumerate(prioritized):
            meta = pod.get("metadata") or {}
            violations = evaluate(level, meta, pod.get("spec") or {}, enforce[1])
            if violations:
                reason = forbidden_reason(violations)
                pod_name = str(meta.get("name", ""))
                if reason not in first_pod or pod_name < first_pod[reason]:
                    first_pod[reason] = pod_name
                counts[reason] = counts.get(reason, 0) + 1
            if time.monotonic() >= deadline:
                checked = i + 1
                break
        warnings = []
        if checked < total:
            warnings.append(f"new PodSecurity enforce level only checked against the first {checked} of {total} "
                            "existing pods")
        if first_pod:
            warnings.append(f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level '
                            f'"{enforce[0]}:{enforce[1]}"')
        decorated = []
        for reason, pod_name in first_pod.items():
            others = counts[reason] - 1
            prefix = pod_name if others == 0 else \
                f"{pod_name} (and 1 other pod)" if others == 1 else f"{pod_name} (and {others} other pods)"
            decorated.append(f"{prefix}: {reason}")
        return warnings + sorted(decorated)
