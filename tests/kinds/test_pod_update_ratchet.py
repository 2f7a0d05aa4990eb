"""Update ratcheting of ValidatePodSpec: PodValidationOptions from the stored object (kube's
GetValidationOptionsFromPodSpecAndMeta, ``pkg/api/pod/util.go``), through the admission pipeline's UPDATE.

What the stored spec already had may stay (invalid label values in affinity selectors and required node
affinity, a bad topology spread labelSelector, host-namespace sysctls with hostNetwork, indivisible hugepages),
for a Pod (ValidatePodUpdate) and a workload's template (ValidatePodTemplateSpec with the old template's
options). What 1.37 does not ratchet stays strict: ``dnsConfig.nameservers`` and ``hostAliases[].ip``
(IsValidIPForLegacyField with no old IPs), while RelaxedDNSSearchValidation is GA (always relaxed).
"""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from kapi import errors, jsonutil
from kapi.attributes import Attributes, UserInfo
from kapi.kinds.podspec import PodValidationOptions, stored_object, validate_pod_spec, validation_options
from services.admission.chain import Chain
from services.admission.pipeline import Admitter

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
USER = UserInfo("alice")
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


@pytest.fixture
def admitter() -> Admitter:
    return Admitter(Chain([]), now=lambda: NOW, rng=random.Random(3))


def pod_spec(**extra: Any) -> dict[str, Any]:
    return {"containers": [{"name": "app", "image": "nginx", "imagePullPolicy": "Always",
                            "terminationMessagePolicy": "File", "terminationMessagePath": "/dev/termination-log",
                            "resources": {}}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "terminationGracePeriodSeconds": 30,
            "schedulerName": "default-scheduler", "securityContext": {}, **extra}


def deployment(replicas: int = 1, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "demo", "uid": "u1", "resourceVersion": "7", "generation": 1,
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod_spec(**extra)},
                     "strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                     "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600}}


def pod(labels: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "demo", "uid": "u1", "resourceVersion": "7",
                         "creationTimestamp": "2026-01-01T00:00:00Z", "labels": labels or {}},
            "spec": {**pod_spec(**extra), "enableServiceLinks": True, "priority": 0,
                     "preemptionPolicy": "PreemptLowerPriority"}}


def attrs(resource: str, group: str = "") -> Attributes:
    return Attributes(USER, "update", True, api_group=group, api_version="v1", resource=resource,
                      namespace="demo", name="web")


async def update_deployment(admitter: Admitter, new: dict[str, Any], old: dict[str, Any]) -> Any:
    return await admitter.admit("UPDATE", attrs("deployments", "apps"), "Deployment", jsonutil.dumps(new),
                                jsonutil.dumps(old))


async def refused(coro: Any) -> str:
    with pytest.raises(errors.StatusError) as exc:
        await coro
    assert exc.value.code == 422
    return exc.value.message


HOST_SYSCTL: dict[str, Any] = {"hostNetwork": True,
                               "securityContext": {"sysctls": [{"name": "net.core.somaxconn", "value": "1"}]}}
SYSCTL_MSG = ('spec.template.spec.securityContext.sysctls[0].name: Invalid value: "net.core.somaxconn": may not be '
              "specified when 'hostNetwork' is true")


async def test_deployment_keeps_a_stored_host_network_sysctl(admitter: Admitter) -> None:
    old = deployment(**HOST_SYSCTL)
    result = await update_deployment(admitter, deployment(replicas=3, **HOST_SYSCTL), old)
    assert jsonutil.loads(result.object)["spec"]["replicas"] == 3
    # the stored template had none: adding one is refused
    message = await refused(update_deployment(admitter, deployment(replicas=3, **HOST_SYSCTL), deployment()))
    assert message == f'Deployment.apps "web" is invalid: {SYSCTL_MSG}'


def affinity_with(value: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": [value]}]},
            "topologyKey": "kubernetes.io/hostname"}
    return {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}


async def test_deployment_keeps_an_invalid_label_value_in_a_stored_affinity_selector(admitter: Admitter) -> None:
    old = deployment(**affinity_with("bad value"))
    await update_deployment(admitter, deployment(replicas=2, **affinity_with("still bad!")), old)
    message = await refused(update_deployment(admitter, deployment(**affinity_with("bad value")), deployment()))
    assert message == (
        'Deployment.apps "web" is invalid: spec.template.spec.affinity.podAntiAffinity.'
        "requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values[0]: "
        f'Invalid value: "bad value": {LABEL_VALUE_MSG}')


def node_affinity_with(value: str) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": "zone", "operator": "In", "values": [value]}]}
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}}


async def test_deployment_keeps_an_invalid_value_in_stored_required_node_affinity(admitter: Admitter) -> None:
    old = deployment(**node_affinity_with("a b"))
    await update_deployment(admitter, deployment(replicas=2, **node_affinity_with("c d")), old)
    message = await refused(update_deployment(admitter, deployment(**node_affinity_with("a b")), deployment()))
    assert message == (
        'Deployment.apps "web" is invalid: spec.template.spec.affinity.nodeAffinity.'
        "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]: "
        f'Invalid value: "a b": {LABEL_VALUE_MSG}')


def spread_with(value: str) -> dict[str, Any]:
    return {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": [value]}]}}]}


async def test_deployment_keeps_a_stored_invalid_topology_spread_selector(admitter: Admitter) -> None:
    old = deployment(**spread_with("x y"))
    await update_deployment(admitter, deployment(replicas=2, **spread_with("x y")), old)
    message = await refused(update_deployment(admitter, deployment(**spread_with("x y")), deployment()))
    assert message == (
        'Deployment.apps "web" is invalid: spec.template.spec.topologySpreadConstraints[0].labelSelector.'
        f'matchExpressions[0].values[0]: Invalid value: "x y": {LABEL_VALUE_MSG}')


async def test_deployment_keeps_a_stored_indivisible_hugepages_overhead(admitter: Admitter) -> None:
    overhead: dict[str, Any] = {"overhead": {"cpu": "100m", "hugepages-2Mi": "3Mi"}}
    old = deployment(**overhead)
    await update_deployment(admitter, deployment(replicas=2, **overhead), old)
    message = await refused(update_deployment(admitter, deployment(**overhead), deployment()))
    assert message == ('Deployment.apps "web" is invalid: spec.template.spec.overhead[hugepages-2Mi]: Invalid value: '
                       '"3Mi": 3Mi is not positive integer multiple of hugepages-2Mi')


async def test_pod_label_update_keeps_a_stored_host_network_sysctl(admitter: Admitter) -> None:
    old = pod(**HOST_SYSCTL)
    result = await admitter.admit("UPDATE", attrs("pods"), "Pod", jsonutil.dumps(pod({"tier": "web"}, **HOST_SYSCTL)),
                                  jsonutil.dumps(old))
    assert jsonutil.loads(result.object)["metadata"]["labels"] == {"tier": "web"}


# ---------------------------------------------------------------- what 1.37 does not ratchet

BAD_NAMESERVER: dict[str, Any] = {"dnsConfig": {"nameservers": ["1.2.3.04"]}}
BAD_ALIAS: dict[str, Any] = {"hostAliases": [{"ip": "::ffff:1.2.3.4", "hostnames": ["db"]}]}


async def test_a_stored_invalid_nameserver_or_host_alias_ip_is_not_ratcheted(admitter: Admitter) -> None:
    message = await refused(update_deployment(admitter, deployment(replicas=2, **BAD_NAMESERVER),
                                              deployment(**BAD_NAMESERVER)))
    assert message == ('Deployment.apps "web" is invalid: spec.template.spec.dnsConfig.nameservers[0]: Invalid value: '
                       '"1.2.3.04": must not have leading 0s')
    message = await refused(update_deployment(admitter, deployment(replicas=2, **BAD_ALIAS), deployment(**BAD_ALIAS)))
    assert message == ('Deployment.apps "web" is invalid: spec.template.spec.hostAliases[0].ip: Invalid value: '
                       '"::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address')
    # a Pod: ValidatePodUpdate revalidates the (unchanged) spec, the stored value is no excuse
    message = await refused(admitter.admit("UPDATE", attrs("pods"), "Pod",
                                           jsonutil.dumps(pod({"tier": "web"}, **BAD_NAMESERVER)),
                                           jsonutil.dumps(pod(**BAD_NAMESERVER))))
    assert message == ('Pod "web" is invalid: spec.dnsConfig.nameservers[0]: Invalid value: "1.2.3.04": must not '
                       "have leading 0s")


def test_relaxed_dns_searches_need_no_stored_example() -> None:
    """RelaxedDNSSearchValidation is GA: ``_`` and ``.`` searches pass without an old spec that had them."""
    spec = pod_spec(dnsConfig={"searches": ["_sip._tcp.example.com", "."]})
    assert validate_pod_spec(spec, "spec") == []


# ---------------------------------------------------------------- the options themselves

def test_validation_options_from_the_stored_spec() -> None:
    assert validation_options(None) == PodValidationOptions()
    assert validation_options(pod_spec()) == PodValidationOptions()
    assert validation_options(pod_spec(**HOST_SYSCTL)) == PodValidationOptions(
        allow_namespaced_sysctls_for_host_net_and_ipc=True)
    ipc = pod_spec(hostIPC=True, securityContext={"sysctls": [{"name": "kernel.shm_rmid_forced", "value": "1"}]})
    assert validation_options(ipc).allow_namespaced_sysctls_for_host_net_and_ipc
    # a net sysctl without hostNetwork is fine as it is: nothing to ratchet
    assert not validation_options(pod_spec(securityContext=HOST_SYSCTL["securityContext"])) \
        .allow_namespaced_sysctls_for_host_net_and_ipc
    assert validation_options(pod_spec(**affinity_with("bad value"))).allow_invalid_label_value_in_selector
    assert validation_options(pod_spec(**node_affinity_with("a b"))) \
        .allow_invalid_label_value_in_required_node_affinity
    assert validation_options(pod_spec(**spread_with("x y"))).allow_invalid_topology_spread_label_selector
    hugepages = pod_spec()
    hugepages["containers"][0]["resources"] = {"limits": {"hugepages-2Mi": "3Mi", "memory": "1Gi"}}
    assert validation_options(hugepages).allow_indivisible_hugepages


def test_stored_object_scopes_the_options_to_the_block_and_the_path() -> None:
    spec = pod_spec(**HOST_SYSCTL)
    causes = validate_pod_spec(copy.deepcopy(spec), "spec.template.spec")
    assert [c.message for c in causes] == [SYSCTL_MSG.split(": ", 1)[1]]
    with stored_object({"spec": {"template": {"spec": spec}}}):
        assert validate_pod_spec(copy.deepcopy(spec), "spec.template.spec") == []
        assert validate_pod_spec(copy.deepcopy(spec), "template.spec") != []  # another path: no stored spec
    assert validate_pod_spec(copy.deepcopy(spec), "spec.template.spec") != []
