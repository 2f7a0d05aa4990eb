"""PodSecurity's baseline checks appArmorProfile, seLinuxOptions and hostProbesAndHostLifecycle, with kube's
forbidden reasons and details (``pod-security-admission/policy/check_appArmorProfile.go``,
``check_seLinuxOptions.go``, ``check_hostProbesAndhostLifecycle.go``; ``helpers.go`` joinQuote/pluralize) and
their place in the registry's order (checks by file, baseline before restricted)."""

from __future__ import annotations

from typing import Any

from services.admission.plugins import pod_security
from tests.admission.fakes import pod
from tests.admission.test_pod_security_versions import enforce, forbidden


def two_containers(a: dict[str, Any], b: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A pod with containers "a" and "b" (each dict merged into its container)."""
    return pod(containers=[{"name": "a", "image": "nginx", **a}, {"name": "b", "image": "nginx", **b}], **spec)


def baseline(obj: dict[str, Any], version: str = "latest") -> list[str]:
    return pod_security.evaluate("baseline", obj["metadata"], obj["spec"], version)


def test_app_armor_fields_and_annotations() -> None:
    obj = two_containers({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}},
                         {"securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "x"}}},
                         securityContext={"appArmorProfile": {"type": "Unconfined"}})
    obj["metadata"]["annotations"] = {"container.apparmor.security.beta.kubernetes.io/b": "unconfined",
                                      "container.apparmor.security.beta.kubernetes.io/a": "runtime/default"}
    assert baseline(obj) == [
        'forbidden AppArmor profiles (pod and container "a" and annotation must not set AppArmor profile type to '
        '"Unconfined", "container.apparmor.security.beta.kubernetes.io/b="unconfined"")']


def test_app_armor_allowed_values_pass() -> None:
    obj = two_containers({"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}}},
                         {"securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "p"}}})
    obj["metadata"]["annotations"] = {"container.apparmor.security.beta.kubernetes.io/a": "localhost/p",
                                      "container.apparmor.security.beta.kubernetes.io/b": ""}
    assert baseline(obj) == []


def test_app_armor_one_annotation() -> None:
    obj = pod()
    obj["metadata"]["annotations"] = {"container.apparmor.security.beta.kubernetes.io/nginx": "unconfined"}
    assert baseline(obj) == ['forbidden AppArmor profile (annotation must not set AppArmor profile type to '
                             '"container.apparmor.security.beta.kubernetes.io/nginx="unconfined"")']


def test_se_linux_types_user_and_role() -> None:
    obj = two_containers({"securityContext": {"seLinuxOptions": {"type": "spc_t", "user": "u"}}},
                         {"securityContext": {"seLinuxOptions": {"type": "container_t", "level": "s0:c1"}}},
                         securityContext={"seLinuxOptions": {"type": "unconfined_t", "role": "r"}})
    assert baseline(obj) == [
        'seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: types "spc_t", '
        '"unconfined_t"; user may not be set; role may not be set)']


def test_se_linux_user_alone_names_no_type() -> None:
    obj = two_containers({"securityContext": {"seLinuxOptions": {"user": "u"}}},
                         {"securityContext": {"seLinuxOptions": {"user": "v", "type": "container_kvm_t"}}})
    assert baseline(obj) == ['seLinuxOptions (containers "a", "b" set forbidden securityContext.seLinuxOptions: '
                             'user may not be set)']


def test_se_linux_allowed_types_and_level_pass() -> None:
    obj = two_containers({"securityContext": {"seLinuxOptions": {"type": "container_init_t", "level": "s0"}}},
                         {"securityContext": {"seLinuxOptions": {"type": ""}}})
    assert baseline(obj) == []


def test_host_probes_and_lifecycle_from_v1_34() -> None:
    obj = two_containers(
        {"livenessProbe": {"httpGet": {"port": 80, "host": "10.0.0.1"}},
         "lifecycle": {"preStop": {"tcpSocket": {"port": 1, "host": "a.example"}}}},
        {"startupProbe": {"tcpSocket": {"port": 80, "host": "10.0.0.1"}},
         "readinessProbe": {"httpGet": {"port": 80, "host": ""}}})
    want = ('probe or lifecycle host (containers "a", "b" use probe or lifecycle hosts "10.0.0.1", "a.example")')
    assert baseline(obj) == [want]
    assert baseline(obj, "v1.34") == [want]
    assert baseline(obj, "v1.33") == []


def test_host_probe_one_container_one_host() -> None:
    obj = pod(containers=[{"name": "c", "image": "x", "lifecycle": {"postStart": {"httpGet": {"port": 8,
                                                                                               "host": "h"}}}}])
    assert baseline(obj) == ['probe or lifecycle host (container "c" uses probe or lifecycle host "h")']


def test_new_checks_take_kubes_order_among_the_baseline_checks() -> None:
    obj = pod(hostNetwork=True, securityContext={"seLinuxOptions": {"role": "r"},
                                                 "appArmorProfile": {"type": "Unconfined"}},
              containers=[{"name": "c", "image": "x", "securityContext": {"privileged": True},
                           "livenessProbe": {"tcpSocket": {"port": 1, "host": "h"}}}])
    reasons = [v.split(" (")[0] for v in baseline(obj)]
    assert reasons == ["forbidden AppArmor profile", "host namespaces", "probe or lifecycle host", "privileged",
                       "seLinuxOptions"]


async def test_enforced_as_a_403_for_baseline_and_restricted() -> None:
    obj = pod(securityContext={"seLinuxOptions": {"type": "spc_t"}})
    detail = 'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t")'
    assert await enforce("baseline", "latest", obj) == forbidden("baseline:latest", detail)
    message = await enforce("restricted", "latest", obj)
    assert message is not None and detail in message
    assert await enforce("privileged", "latest", obj) is None


def restricted(obj: dict[str, Any], version: str = "latest") -> list[str]:
    return pod_security.evaluate("restricted", obj["metadata"], obj["spec"], version)


def named(name: str, **sc: Any) -> dict[str, Any]:
    return {"name": name, "image": "x", "securityContext": sc} if sc else {"name": name, "image": "x"}


def check(obj: dict[str, Any], reason: str, version: str = "latest") -> list[str]:
    return [v for v in restricted(obj, version) if v.startswith(reason + " (")]


def test_run_as_non_root_details_as_kubes_table() -> None:
    """check_runAsNonRoot_test.go TestRunAsNonRoot's cases."""
    assert check(pod(containers=[named("a")]), "runAsNonRoot != true") == [
        'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)']
    assert check(pod(securityContext={"runAsNonRoot": False}, containers=[named("a")]), "runAsNonRoot != true") == [
        "runAsNonRoot != true (pod must not set securityContext.runAsNonRoot=false)"]
    assert check(pod(securityContext={"runAsNonRoot": True}, containers=[
        named("a"), named("b", privileged=False), named("c", runAsNonRoot=False), named("d", runAsNonRoot=False),
        named("e", runAsNonRoot=True)]), "runAsNonRoot != true") == [
        'runAsNonRoot != true (containers "c", "d" must not set securityContext.runAsNonRoot=false)']
    assert check(pod(containers=[named("a"), named("b", privileged=False), named("d", runAsNonRoot=True)]),
                 "runAsNonRoot != true") == [
        'runAsNonRoot != true (pod or containers "a", "b" must set securityContext.runAsNonRoot=true)']
    assert check(pod(securityContext={"runAsNonRoot": False}, containers=[named("a", runAsNonRoot=False)]),
                 "runAsNonRoot != true") == [
        'runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)']


def test_run_as_user_and_seccomp_join_their_setters_with_and() -> None:
    obj = pod(securityContext={"runAsUser": 0, "seccompProfile": {"type": "Unconfined"}},
              containers=[named("a", runAsUser=0, seccompProfile={"type": "Unconfined"}), named("b")])
    assert check(obj, "runAsUser=0") == ['runAsUser=0 (pod and container "a" must not set runAsUser=0)']
    assert check(obj, "seccompProfile") == [
        'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")']
    assert baseline(obj) == [
        'seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")']


def test_seccomp_restricted_names_a_bad_type_before_a_missing_one() -> None:
    obj = pod(containers=[named("a", seccompProfile={"type": "Unconfined"}), named("b")])
    assert check(obj, "seccompProfile") == [
        'seccompProfile (container "a" must not set securityContext.seccompProfile.type to "Unconfined")']
    obj = pod(containers=[named("a", seccompProfile={"type": "RuntimeDefault"}), named("b")])
    assert check(obj, "seccompProfile") == [
        'seccompProfile (pod or container "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost")']


def test_host_ports_are_unique_and_sorted_as_strings() -> None:
    obj = pod(containers=[{"name": "a", "image": "x", "ports": [{"containerPort": 1, "hostPort": 9000},
                                                                 {"containerPort": 2, "hostPort": 80}]},
                          {"name": "b", "image": "x", "ports": [{"containerPort": 3, "hostPort": 80}]}])
    assert baseline(obj) == ['hostPort (containers "a", "b" use hostPorts 80, 9000)']
    one = pod(containers=[{"name": "a", "image": "x", "ports": [{"containerPort": 1, "hostPort": 80}]},
                          {"name": "b", "image": "x", "ports": [{"containerPort": 2, "hostPort": 80}]}])
    assert baseline(one) == ['hostPort (containers "a", "b" use hostPort 80)']


def test_user_namespace_pods_are_relaxed_from_v1_35() -> None:
    """v1.35: runAsNonRoot, runAsUser and baseline procMount pass a ``hostUsers: false`` pod; restricted keeps
    procMount strict (procMount_restricted, after the capabilities check)."""
    obj = pod(hostUsers=False, securityContext={"runAsUser": 0},
              containers=[named("a", procMount="Unmasked")])
    assert baseline(obj) == []
    assert baseline(obj, "v1.34") == [
        'procMount (container "a" must not set securityContext.procMount to "Unmasked")']
    reasons = [v.split(" (")[0] for v in restricted(obj)]
    assert reasons == ["allowPrivilegeEscalation != false", "unrestricted capabilities", "procMount",
                       "seccompProfile"]
    reasons = [v.split(" (")[0] for v in restricted(obj, "v1.34")]
    assert reasons == ["procMount", "allowPrivilegeEscalation != false", "unrestricted capabilities",
                       "runAsNonRoot != true", "runAsUser=0", "seccompProfile"]
    host = pod(securityContext={"runAsUser": 0}, containers=[named("a", procMount="Unmasked")])
    assert [v.split(" (")[0] for v in restricted(host)] == [
        "allowPrivilegeEscalation != false", "unrestricted capabilities", "procMount", "runAsNonRoot != true",
        "runAsUser=0", "seccompProfile"]
