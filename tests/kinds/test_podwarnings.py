"""kapi.kinds.podwarnings: GetWarningsForPod / GetWarningsForPodTemplate texts (kube's pkg/api/pod/warnings.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds import strategy_for
from kapi.kinds.podwarnings import pod_spec_warnings

C = {"name": "c", "image": "x"}


def _spec(**extra: Any) -> dict[str, Any]:
    return {"containers": [dict(C)], **extra}


@pytest.mark.parametrize(("spec", "meta", "expected"), [
    (_spec(), {}, []),
    (_spec(nodeSelector={"beta.kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux"}), {},
     ['spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use "kubernetes.io/arch" instead']),
    (_spec(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Exists"},
                                  {"key": "failure-domain.beta.kubernetes.io/zone", "operator": "Exists"}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "node-role.kubernetes.io/master",
                                                               "operator": "Exists"}]}}]}}), {},
     ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
      ".matchExpressions[1].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "
      '"topology.kubernetes.io/zone" instead',
      "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0]"
      '.key: node-role.kubernetes.io/master is use "node-role.kubernetes.io/control-plane" instead']),
    (_spec(topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "beta.kubernetes.io/os",
                                       "whenUnsatisfiable": "DoNotSchedule"}]), {},
     ['spec.topologySpreadConstraints[0].topologyKey: beta.kubernetes.io/os is deprecated since v1.14; use '
      '"kubernetes.io/os" instead',
      "spec.topologySpreadConstraints[0].labelSelector: a null labelSelector results in matching no pod"]),
    (_spec(), {"annotations": {"scheduler.alpha.kubernetes.io/critical-pod": "",
                               "seccomp.security.alpha.kubernetes.io/pod": "runtime/default",
                               "container.seccomp.security.alpha.kubernetes.io/c": "runtime/default"}},
     ['metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the '
      '"priorityClassName" field instead',
      'metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the '
      '"seccompProfile" field instead',
      'metadata.annotations[container.seccomp.security.alpha.kubernetes.io/c]: non-functional in v1.27+; use the '
      '"seccompProfile" field instead']),
    (_spec(securityContext={"seccompProfile": {"type": "RuntimeDefault"}}),
     {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}}, []),
    (_spec(volumes=[{"name": "g", "gitRepo": {"repository": "r"}}, {"name": "e", "emptyDir": {}},
                    {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}}]), {},
     ["spec.volumes[0].gitRepo: deprecated in v1.11", "spec.volumes[2].rbd: deprecated in v1.28, non-functional in "
      "v1.31+"]),
    (_spec(hostAliases=[{"ip": "1.2.3.4"}, {"ip": "1.2.3.4"}], imagePullSecrets=[{"name": "a"}, {"name": "a"}, {}]),
     {}, ['spec.hostAliases[1].ip: duplicate ip "1.2.3.4"', 'spec.imagePullSecrets[1].name: duplicate name "a"',
          'spec.imagePullSecrets[2].name: invalid empty name ""']),
    ({"containers": [{**C, "resources": {"limits": {"memory": "1.5"}, "requests": {"memory": "1Gi",
                                                                                   "ephemeral-storage": "100m"}}}],
      "overhead": {"memory": "0.5"}}, {},
     ['spec.overhead[memory]: fractional byte value "500m" is invalid, must be an integer',
      'spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, must be an integer',
      'spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "100m" is invalid, must be '
      "an integer"]),
    ({"containers": [{**C, "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "$(A)2"},
                                   {"name": "A", "value": "3"}, {"name": "B"}]}]}, {},
     ['spec.containers[0].env[2]: hides previous definition of "A", which may be dropped when using apply']),
    ({"initContainers": [{**C, "name": "i", "ports": [{"containerPort": 80, "protocol": "TCP"}]}],
      "containers": [{**C, "ports": [{"containerPort": 80, "protocol": "TCP"},
                                     {"containerPort": 81, "protocol": "TCP", "hostIP": "10.0.0.1"},
                                     {"containerPort": 82, "protocol": "TCP", "hostPort": 8080},
                                     {"containerPort": 82, "protocol": "TCP", "hostPort": 8080, "hostIP": "10.0.0.1"},
                                     {"containerPort": 82, "protocol": "TCP"}]}]}, {},
     ["spec.containers[0].ports[0]: duplicate port definition with spec.initContainers[0].ports[0]",
      "spec.containers[0].ports[1]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:81 Protocol:TCP "
      "HostIP:10.0.0.1}",
      "spec.containers[0].ports[3]: dangerously ambiguous port definition with spec.containers[0].ports[2]",
      "spec.containers[0].ports[4]: overlapping port definition with spec.containers[0].ports[2]",
      "spec.containers[0].ports[4]: overlapping port definition with spec.containers[0].ports[3]"]),
    (_spec(terminationGracePeriodSeconds=-5, affinity={
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k"}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "k"}}]}}), {},
     ["spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1",
      "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null "
      "labelSelector results in matching no pod",
      "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm"
      ".labelSelector: a null labelSelector results in matching no pod"]),
])
def test_pod_warnings(spec: dict[str, Any], meta: dict[str, Any], expected: list[str]) -> None:
    assert pod_spec_warnings(spec, meta) == expected


def test_template_warnings_carry_the_template_path() -> None:
    """Workloads warn under their template's path; the AppArmor annotation warns only in templates."""
    template = {"metadata": {"annotations": {"container.apparmor.security.beta.kubernetes.io/c": "runtime/default"}},
                "spec": _spec(nodeSelector={"beta.kubernetes.io/os": "linux"})}
    apparmor = ('metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: deprecated since v1.30; '
                'use the "appArmorProfile" field instead')
    node = 'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead'
    for group, kind, path in (("apps", "Deployment", "spec.template"), ("apps", "StatefulSet", "spec.template"),
                              ("apps", "DaemonSet", "spec.template"), ("apps", "ReplicaSet", "spec.template"),
                              ("batch", "Job", "spec.template"), ("", "ReplicationController", "spec.template"),
                              ("batch", "CronJob", "spec.jobTemplate.spec.template"), ("", "PodTemplate", "template")):
        obj: dict[str, Any] = {"metadata": {"name": "web"}}
        node_ = obj
        parts = path.split(".")
        for part in parts[:-1]:
            node_ = node_.setdefault(part, {})
        node_[parts[-1]] = template
        assert strategy_for(group, kind).warnings_on_create(obj) == [f"{path}.{node}", f"{path}.{apparmor}"], kind
    pod = {"metadata": {"name": "a.b", **template["metadata"]}, "spec": template["spec"]}
    assert strategy_for("", "Pod").warnings_on_create(pod) == [
        "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is "
        "recommended: [must not contain dots]", node]


def test_workload_updates_warn_when_the_generation_moves_on() -> None:
    """WarningsOnUpdate (deployment, replicaset, statefulset, daemonset, job, cronjob, replicationcontroller
    strategies): the template's warnings when the generation changed; a Pod's updates never warn."""
    template = {"spec": _spec(nodeSelector={"beta.kubernetes.io/os": "linux"})}
    old = {"metadata": {"name": "web", "generation": 1}, "spec": {"template": template}}
    new = {"metadata": {"name": "web", "generation": 2}, "spec": {"template": template}}
    warning = ('spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use '
               '"kubernetes.io/os" instead')
    for group, kind in (("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"),
                        ("apps", "DaemonSet"), ("batch", "Job"), ("", "ReplicationController")):
        strategy = strategy_for(group, kind)
        assert strategy.warnings_on_update(new, old) == [warning], kind
        assert strategy.warnings_on_update(old, old) == [], kind
    cron_old = {"metadata": {"generation": 1}, "spec": {"jobTemplate": {"spec": {"template": template}}}}
    cron_new = {"metadata": {"generation": 2}, "spec": {"jobTemplate": {"spec": {"template": template}}}}
    assert strategy_for("batch", "CronJob").warnings_on_update(cron_new, cron_old) == [
        "spec.jobTemplate." + warning]
    pod = {"metadata": {"name": "p"}, "spec": template["spec"]}
    assert strategy_for("", "Pod").warnings_on_update(pod, pod) == []


@pytest.mark.parametrize(("memory", "expected"), [
    ("0.9999", []),        # SetDefaults_ResourceList rounds up to 1 (milli scale): whole bytes
    ("1.0001", ['spec.containers[0].resources.limits[memory]: fractional byte value "1001m" is invalid, must be an '
                "integer"]),
    ("1", []), ("1500m", ['spec.containers[0].resources.limits[memory]: fractional byte value "1500m" is invalid, '
                          "must be an integer"]),
])
def test_fractional_bytes_follow_the_milli_rounded_value(memory: str, expected: list[str]) -> None:
    """MilliValue() % 1000 of the value SetDefaults_ResourceList left (rounded up to milli-units)."""
    spec = {"containers": [{**C, "resources": {"limits": {"memory": memory}}}]}
    assert pod_spec_warnings(spec, {}) == expected
