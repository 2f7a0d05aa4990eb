"""PodSecurity's versioned checks as kube's check registry (``pod-security-admission/policy/registry.go``
and each ``check_*.go``'s VersionedCheck MinimumVersion): a namespace's ``<mode>-version`` label picks the
checks of that version; ``latest`` and any version newer than the apiserver's (1.37) get the newest."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import pod_security
from tests.admission.fakes import FakeNamespaces, pod, request

GOOD_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


def good_pod(**container: Any) -> dict[str, Any]:
    """A pod restricted:latest admits, its container's securityContext updated with ``container``."""
    p = pod(securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}})
    p["spec"]["containers"][0]["securityContext"] = {**GOOD_CONTAINER, **container}
    return p


async def enforce(level: str, version: str, obj: dict[str, Any]) -> str | None:
    """The refusal's message of a pod CREATE under enforce ``level``:``version`` (None: admitted)."""
    labels = {"pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/enforce-version": version}
    plugin = pod_security.PodSecurity(FakeNamespaces({"demo": labels}))  # type: ignore[arg-type]
    try:
        await plugin.validate(request("CREATE", "pods", obj))
    except errors.StatusError as err:
        assert err.code == 403
        return err.message
    return None


def forbidden(policy: str, detail: str) -> str:
    return f'pods "web" is forbidden: violates PodSecurity "{policy}": {detail}'


async def test_capabilities_restricted_from_v1_22() -> None:
    p = good_pod()
    del p["spec"]["containers"][0]["securityContext"]["capabilities"]
    assert await enforce("restricted", "v1.21", p) is None
    assert await enforce("restricted", "v1.22", p) == forbidden(
        "restricted:v1.22", 'unrestricted capabilities (container "nginx" must set '
                            'securityContext.capabilities.drop=["ALL"])')
    # below v1.22 restricted keeps capabilities_baseline (capabilities_restricted overrides it from v1.22)
    p["spec"]["containers"][0]["securityContext"]["capabilities"] = {"add": ["NET_ADMIN"]}
    assert await enforce("restricted", "v1.21", p) == forbidden(
        "restricted:v1.21", 'non-default capabilities (container "nginx" must not include "NET_ADMIN" in '
                            "securityContext.capabilities.add)")


async def test_run_as_user_from_v1_23() -> None:
    p = good_pod(runAsUser=0)
    assert await enforce("restricted", "v1.22", p) is None
    assert await enforce("restricted", "v1.23", p) == forbidden(
        "restricted:v1.23", 'runAsUser=0 (container "nginx" must not set runAsUser=0)')


async def test_allow_privilege_escalation_from_v1_8() -> None:
    p = good_pod()
    del p["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"]
    assert await enforce("restricted", "v1.7", p) is None
    assert await enforce("restricted", "v1.8", p) == forbidden(
        "restricted:v1.8", 'allowPrivilegeEscalation != false (container "nginx" must set '
                           "securityContext.allowPrivilegeEscalation=false)")


async def test_seccomp_before_v1_19_is_the_alpha_annotations() -> None:
    p = good_pod()
    del p["spec"]["securityContext"]["seccompProfile"]
    assert await enforce("restricted", "v1.18", p) is None  # seccompProfile_restricted starts at v1.19
    assert (await enforce("restricted", "v1.19", p) or "").endswith(
        'seccompProfile (pod or container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" '
        'or "Localhost")')
    p["metadata"]["annotations"] = {"seccomp.security.alpha.kubernetes.io/pod": "unconfined",
                                    "container.seccomp.security.alpha.kubernetes.io/nginx": "localhost/x.json"}
    want = 'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")'
    assert await enforce("restricted", "v1.18", p) == forbidden("restricted:v1.18", want)
    assert await enforce("baseline", "v1.0", p) == forbidden("baseline:v1.0", want)
    assert await enforce("baseline", "v1.19", p) is None  # v1.19 checks the fields instead
    p["metadata"]["annotations"]["container.seccomp.security.alpha.kubernetes.io/nginx"] = "unconfined"
    assert await enforce("baseline", "v1.18", p) == forbidden(
        "baseline:v1.18", 'seccompProfile (forbidden annotations container.seccomp.security.alpha.kubernetes.io/'
                          'nginx="unconfined", seccomp.security.alpha.kubernetes.io/pod="unconfined")')


@pytest.mark.parametrize(("sysctl", "first"), [("net.ipv4.ip_local_reserved_ports", 27),
                                                ("net.ipv4.tcp_keepalive_time", 29),
                                                ("net.ipv4.tcp_keepalive_probes", 29)])
async def test_sysctls_allowed_by_version(sysctl: str, first: int) -> None:
    p = pod(securityContext={"sysctls": [{"name": sysctl, "value": "1"}]})
    assert await enforce("baseline", f"v1.{first - 1}", p) == forbidden(
        f"baseline:v1.{first - 1}", f"forbidden sysctls ({sysctl})")
    assert await enforce("baseline", f"v1.{first}", p) is None
    assert await enforce("baseline", "latest", p) is None


async def test_windows_pods_pass_capabilities_and_seccomp_restricted_from_v1_25() -> None:
    p = good_pod()
    p["spec"]["os"] = {"name": "windows"}
    del p["spec"]["securityContext"]["seccompProfile"]
    del p["spec"]["containers"][0]["securityContext"]["capabilities"]
    assert await enforce("restricted", "v1.25", p) is None
    assert await enforce("restricted", "latest", p) is None
    assert await enforce("restricted", "v1.24", p) == forbidden(
        "restricted:v1.24", 'unrestricted capabilities (container "nginx" must set '
                            'securityContext.capabilities.drop=["ALL"]), seccompProfile (pod or container "nginx" '
                            'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')


async def test_newer_than_latest_evaluates_as_latest_and_keeps_its_name() -> None:
    p = good_pod(runAsUser=0)
    assert await enforce("restricted", "v1.99", p) == forbidden(
        "restricted:v1.99", 'runAsUser=0 (container "nginx" must not set runAsUser=0)')
    assert pod_security.checks_for("restricted", "v1.99") == pod_security.checks_for("restricted", "latest") \
        == pod_security.checks_for("restricted", "v1.37")
    assert pod_security.checks_for("privileged", "latest") == ()


async def test_baseline_checks_come_first_and_restricted_volumes_replace_host_path() -> None:
    p = good_pod()
    p["spec"]["hostNetwork"] = True
    p["spec"]["volumes"] = [{"name": "h", "hostPath": {"path": "/"}}]
    p["spec"]["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    assert await enforce("restricted", "latest", p) == forbidden(
        "restricted:latest", 'host namespaces (hostNetwork=true), allowPrivilegeEscalation != false (container '
                             '"nginx" must set securityContext.allowPrivilegeEscalation=false), restricted volume '
                             'types (volume "h" uses restricted volume type "hostPath")')
    assert await enforce("baseline", "latest", p) == forbidden(
        "baseline:latest", 'host namespaces (hostNetwork=true), hostPath volumes (volume "h")')


async def test_namespace_dry_run_uses_the_new_enforce_version() -> None:
    class Pods:
        async def list_live(self, group: str, resource: str, namespace: str, timeout: float) -> list[Any]:
            return [good_pod(runAsUser=0)]

    plugin = pod_security.PodSecurity(FakeNamespaces({}), pods=Pods())  # type: ignore[arg-type]
    old = {"metadata": {"name": "demo", "labels": {}}}

    async def warnings(version: str) -> list[str]:
        new = {"metadata": {"name": "demo", "labels": {"pod-security.kubernetes.io/enforce": "restricted",
                                                       "pod-security.kubernetes.io/enforce-version": version}}}
        req = request("UPDATE", "namespaces", new, old=old, namespace="demo")
        await plugin.validate(req)
        return req.warnings

    assert await warnings("v1.22") == []
    assert await warnings("v1.23") == [
        'existing pods in namespace "demo" violate the new PodSecurity enforce level "restricted:v1.23"',
        "web: runAsUser=0"]


async def test_windows_host_process_is_baseline_and_the_last_baseline_check() -> None:
    p = pod(hostNetwork=True, securityContext={"windowsOptions": {"hostProcess": True}})
    p["spec"]["containers"][0]["securityContext"] = {"windowsOptions": {"hostProcess": True}}
    assert await enforce("baseline", "v1.0", p) == forbidden(
        "baseline:v1.0", 'host namespaces (hostNetwork=true), hostProcess (pod and container "nginx" must not set '
                         "securityContext.windowsOptions.hostProcess=true)")
    del p["spec"]["securityContext"]
    assert (await enforce("restricted", "latest", p) or "").startswith(forbidden(
        "restricted:latest", 'host namespaces (hostNetwork=true), hostProcess (container "nginx" must not set '
                             "securityContext.windowsOptions.hostProcess=true), allowPrivilegeEscalation != false"))
