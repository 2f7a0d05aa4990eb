"""Built-in plugins over in-memory caches: ServiceAccount, LimitRanger, ResourceQuota, PodSecurity, the small ones."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import limit_ranger, pod_security, resource_quota, service_account, simple
from services.admission.policy import ValidatingAdmissionPolicy
from tests.admission.fakes import FakeInformers, FakeNamespaces, pod, request


async def refusal(coro: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as exc:
        await coro
    return exc.value


def with_resources(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
                   name: str = "web") -> dict[str, Any]:
    p = pod(name)
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = requests
    if limits:
        res["limits"] = limits
    p["spec"]["containers"][0]["resources"] = res
    return p


# ---------------------------------------------------------------- ServiceAccount

async def test_service_account_default_and_token_volume() -> None:
    inf = FakeInformers()
    plugin = service_account.ServiceAccount(inf)  # type: ignore[arg-type]
    inf.put("", "serviceaccounts", {"metadata": {"name": "default", "namespace": "demo"},
                                    "imagePullSecrets": [{"name": "regcred"}]})
    req = request("CREATE", "pods", pod())
    await plugin.admit(req)
    spec = req.object["spec"]
    assert spec["serviceAccountName"] == "default" and spec["imagePullSecrets"] == [{"name": "regcred"}]
    volume = spec["volumes"][0]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == len("kube-api-access-") + 5
    assert volume["projected"] == service_account.token_volume(volume["name"])["projected"]
    assert volume["projected"]["sources"][0] == {"serviceAccountToken": {"expirationSeconds": 3607,
                                                                         "path": "token"}}
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]


async def test_service_account_missing_and_automount_false() -> None:
    inf = FakeInformers()
    plugin = service_account.ServiceAccount(inf)  # type: ignore[arg-type]
    err = await refusal(plugin.admit(request("CREATE", "pods", pod(serviceAccountName="robot"))))
    assert (err.code, err.message) == (403, 'pods "web" is forbidden: error looking up service account demo/robot: '
                                            'serviceaccount "robot" not found')
    inf.put("", "serviceaccounts", {"metadata": {"name": "robot", "namespace": "demo"},
                                    "automountServiceAccountToken": False})
    req = request("CREATE", "pods", pod(serviceAccountName="robot"))
    await plugin.admit(req)
    assert "volumes" not in req.object["spec"]
    req = request("CREATE", "pods", pod(serviceAccountName="robot", automountServiceAccountToken=True))
    await plugin.admit(req)  # the pod's choice wins
    assert req.object["spec"]["volumes"][0]["name"].startswith("kube-api-access-")


# ---------------------------------------------------------------- LimitRanger

def limit_range(*items: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "limits", "namespace": "demo"}, "spec": {"limits": list(items)}}


async def test_limit_ranger_defaults_and_annotation() -> None:
    inf = FakeInformers()
    plugin = limit_ranger.LimitRanger(inf)  # type: ignore[arg-type]
    inf.put("", "limitranges", limit_range({"type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
                                            "defaultRequest": {"cpu": "100m"}}))
    req = request("CREATE", "pods", pod())
    await plugin.admit(req)
    res = req.object["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert req.object["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container nginx; cpu, memory limit for container nginx")
    await plugin.validate(req)


@pytest.mark.parametrize(("item", "requests", "limits", "message"), [
    ({"type": "Container", "min": {"cpu": "100m"}}, {"cpu": "50m"}, {"cpu": "1"},
     "minimum cpu usage per Container is 100m, but request is 50m"),
    ({"type": "Container", "max": {"cpu": "1"}}, {"cpu": "500m"}, {"cpu": "2"},
     "maximum cpu usage per Container is 1, but limit is 2"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}, {"cpu": "250m"}, {"cpu": "1"},
     "cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000"),
    ({"type": "Pod", "max": {"memory": "1Gi"}}, {"memory": "1Gi"}, {"memory": "2Gi"},
     "maximum memory usage per Pod is 1Gi, but limit is 2Gi"),
])
async def test_limit_ranger_constraints(item: dict[str, Any], requests: dict[str, str], limits: dict[str, str],
                                        message: str) -> None:
    inf = FakeInformers()
    plugin = limit_ranger.LimitRanger(inf)  # type: ignore[arg-type]
    inf.put("", "limitranges", limit_range(item))
    err = await refusal(plugin.validate(request("CREATE", "pods", with_resources(requests, limits))))
    assert (err.code, err.message) == (403, f'pods "web" is forbidden: {message}')


# ---------------------------------------------------------------- ResourceQuota

def quota(name: str = "compute", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "demo"}, "spec": spec}


async def test_quota_counts_and_exceeded_message() -> None:
    inf = FakeInformers()
    plugin = resource_quota.ResourceQuota(inf)  # type: ignore[arg-type]
    inf.put("", "resourcequotas", quota(hard={"count/configmaps": "2", "configmaps": "5"}))
    for i in range(2):
        await plugin.validate(request("CREATE", "configmaps", {"metadata": {"name": f"c{i}"}}))
    stored = inf.cache("", "resourcequotas").get("demo", "compute")
    assert stored["status"] == {"hard": {"count/configmaps": "2", "configmaps": "5"},
                                "used": {"count/configmaps": "2", "configmaps": "2"}}
    err = await refusal(plugin.validate(request("CREATE", "configmaps", {"metadata": {"name": "c9"}})))
    assert (err.code, err.message) == (403, 'configmaps "c9" is forbidden: exceeded quota: compute, requested: '
                                            "count/configmaps=1, used: count/configmaps=2, limited: "
                                            "count/configmaps=2")
    # dry run checks without charging; delete refunds
    await plugin.validate(request("DELETE", "configmaps", None, old={"metadata": {"name": "c0"}}))
    await plugin.validate(request("CREATE", "configmaps", {"metadata": {"name": "c9"}}, dry_run=True))
    assert inf.cache("", "resourcequotas").get("demo", "compute")["status"]["used"]["count/configmaps"] == "1"


async def test_quota_compute_scopes_and_must_specify() -> None:
    inf = FakeInformers()
    plugin = resource_quota.ResourceQuota(inf)  # type: ignore[arg-type]
    inf.put("", "resourcequotas", quota(hard={"requests.cpu": "1", "limits.memory": "1Gi", "pods": "10"},
                                        scopes=["NotBestEffort"]))
    await plugin.validate(request("CREATE", "pods", pod("besteffort")))  # out of scope: not charged, no demands
    err = await refusal(plugin.validate(request("CREATE", "pods", with_resources({"cpu": "500m"}, name="a"))))
    assert err.message == 'pods "a" is forbidden: failed quota: compute: must specify limits.memory for: nginx'
    await plugin.validate(request("CREATE", "pods", with_resources({"cpu": "600m"}, {"memory": "512Mi"}, "b")))
    used = inf.cache("", "resourcequotas").get("demo", "compute")["status"]["used"]
    assert used == {"requests.cpu": "600m", "limits.memory": "512Mi", "pods": "1"}
    err = await refusal(plugin.validate(request("CREATE", "pods", with_resources({"cpu": "500m"},
                                                                                   {"memory": "1Gi"}, "c"))))
    assert err.message == ('pods "c" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi,'
                           "requests.cpu=500m, used: limits.memory=512Mi,requests.cpu=600m, limited: "
                           "limits.memory=1Gi,requests.cpu=1")


async def test_quota_services() -> None:
    inf = FakeInformers()
    plugin = resource_quota.ResourceQuota(inf)  # type: ignore[arg-type]
    inf.put("", "resourcequotas", quota(hard={"services.loadbalancers": "1", "services.nodeports": "2"}))
    lb = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    await plugin.validate(request("CREATE", "services", lb))
    np = {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}}
    err = await refusal(plugin.validate(request("CREATE", "services", np)))
    assert "exceeded quota: compute, requested: services.nodeports=2, used: services.nodeports=1" in err.message
    err = await refusal(plugin.validate(request("CREATE", "services", {**lb, "metadata": {"name": "lb2"}})))
    assert "requested: services.loadbalancers=1" in err.message


async def test_quota_concurrent_creates_never_overshoot() -> None:
    inf = FakeInformers()
    plugin = resource_quota.ResourceQuota(inf)  # type: ignore[arg-type]
    inf.put("", "resourcequotas", quota(hard={"count/secrets": "5"}))
    real_get = inf.get

    async def slow_get(*args: Any) -> Any:
        got = await real_get(*args)
        await asyncio.sleep(0)  # let other creates read the same revision
        return got

    inf.get = slow_get  # type: ignore[method-assign]
    results = await asyncio.gather(*(plugin.validate(request("CREATE", "secrets", {"metadata": {"name": f"s{i}"}}))
                                     for i in range(20)), return_exceptions=True)
    assert sum(r is None for r in results) == 5
    assert all(isinstance(r, errors.StatusError) and r.code == 403 for r in results if r is not None)
    assert inf.cache("", "resourcequotas").get("demo", "compute")["status"]["used"] == {"count/secrets": "5"}


# ---------------------------------------------------------------- PodSecurity

async def test_pod_security_enforce_warn_audit() -> None:
    ns: Any = FakeNamespaces({"demo": {"pod-security.kubernetes.io/enforce": "baseline",
                                       "pod-security.kubernetes.io/warn": "restricted",
                                       "pod-security.kubernetes.io/audit": "restricted"}})
    plugin = pod_security.PodSecurity(ns)
    privileged = pod(hostNetwork=True)
    privileged["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    err = await refusal(plugin.validate(request("CREATE", "pods", privileged)))
    assert (err.code, err.message) == (403, 'pods "web" is forbidden: violates PodSecurity "baseline:latest": '
                                            "host namespaces (hostNetwork=true), privileged (container \"nginx\" "
                                            "must set securityContext.privileged=true)".replace(
                                                "must set", "must not set"))
    req = request("CREATE", "pods", pod())
    await plugin.validate(req)
    expected = ('would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container '
                '"nginx" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
                '(container "nginx" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true '
                '(pod or container "nginx" must set securityContext.runAsNonRoot=true), seccompProfile (pod or '
                'container "nginx" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
    assert req.warnings == [expected]
    assert req.audit_annotations["pod-security.kubernetes.io/audit-violations"] == expected
    good = pod(securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}})
    good["spec"]["containers"][0]["securityContext"] = {"allowPrivilegeEscalation": False,
                                                        "capabilities": {"drop": ["ALL"]}}
    req = request("CREATE", "pods", good)
    await plugin.validate(req)  # kube's EvaluatePod records the enforce policy on every evaluated pod
    assert req.warnings == [] and req.audit_annotations == {"pod-security.kubernetes.io/enforce-policy":
                                                            "baseline:latest"}


async def test_pod_security_bad_namespace_label_and_exemptions() -> None:
    plugin = pod_security.PodSecurity(FakeNamespaces({"demo": {"pod-security.kubernetes.io/enforce": "restricted"}}),
                                      {"exemptions": {"usernames": ["ci-bot"]}})  # type: ignore[arg-type]
    ns = {"metadata": {"name": "x", "labels": {"pod-security.kubernetes.io/enforce": "strict"}}}
    err = await refusal(plugin.validate(request("CREATE", "namespaces", ns)))
    assert (err.code, err.message) == (422, 'Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/'
                                            'enforce]: Invalid value: "strict": must be one of privileged, baseline, '
                                            'restricted')
    await plugin.validate(request("CREATE", "pods", pod(), user="ci-bot"))
    assert (await refusal(plugin.validate(request("CREATE", "pods", pod())))).code == 403


# ---------------------------------------------------------------- small plugins

async def test_small_plugins() -> None:
    req = request("CREATE", "pods", pod())
    await simple.DefaultTolerationSeconds().admit(req)
    assert req.object["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    await simple.AlwaysPullImages().admit(req)
    assert req.object["spec"]["containers"][0]["imagePullPolicy"] == "Always"
    err = await refusal(simple.AlwaysDeny().validate(req))
    assert (err.code, err.message) == (403, "admission control is denying all modifications")
    svc = {"metadata": {"name": "s"}, "spec": {"externalIPs": ["1.2.3.4"]}}
    assert (await refusal(simple.DenyServiceExternalIPs().validate(request("CREATE", "services", svc)))).code == 403

    inf = FakeInformers()
    inf.put("storage.k8s.io", "storageclasses", {"metadata": {"name": "fast", "annotations": {
        "storageclass.kubernetes.io/is-default-class": "true"}}})
    pvc = request("CREATE", "persistentvolumeclaims", {"metadata": {"name": "data"}, "spec": {}})
    await simple.DefaultStorageClass(inf).admit(pvc)  # type: ignore[arg-type]
    assert pvc.object["spec"]["storageClassName"] == "fast"

    inf.put("scheduling.k8s.io", "priorityclasses", {"metadata": {"name": "high"}, "value": 1000})
    prio = simple.Priority(inf)  # type: ignore[arg-type]
    req = request("CREATE", "pods", pod(priorityClassName="high"))
    await prio.admit(req)
    assert (req.object["spec"]["priority"], req.object["spec"]["preemptionPolicy"]) == (1000, "PreemptLowerPriority")
    err = await refusal(prio.admit(request("CREATE", "pods", pod(priorityClassName="nope"))))
    assert err.message == 'pods "web" is forbidden: no PriorityClass with name nope was found'


async def test_priority_admission_as_kube() -> None:
    """plugin/pkg/admission/priority admitPod: defaults, mismatches and updates."""
    inf = FakeInformers()
    prio = simple.Priority(inf)  # type: ignore[arg-type]
    req = request("CREATE", "pods", pod())  # no default class: 0 and PreemptLowerPriority, no class name
    await prio.admit(req)
    assert (req.object["spec"]["priority"], req.object["spec"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert "priorityClassName" not in req.object["spec"]
    err = await refusal(prio.admit(request("CREATE", "pods", pod(priority=7))))
    assert err.message == ('pods "web" is forbidden: the integer value of priority (7) must not be provided in pod '
                           'spec; priority admission controller computed 0 from the given PriorityClass name')
    inf.put("scheduling.k8s.io", "priorityclasses", {"metadata": {"name": "b"}, "value": 50, "globalDefault": True,
                                                     "preemptionPolicy": "Never"})
    inf.put("scheduling.k8s.io", "priorityclasses", {"metadata": {"name": "a"}, "value": 10, "globalDefault": True,
                                                     "preemptionPolicy": "Never"})
    req = request("CREATE", "pods", pod())  # two defaults (a race): the lowest value wins
    await prio.admit(req)
    assert [req.object["spec"][k] for k in ("priorityClassName", "priority", "preemptionPolicy")] == ["a", 10, "Never"]
    err = await refusal(prio.admit(request("CREATE", "pods", pod(preemptionPolicy="PreemptLowerPriority"))))
    assert err.message == ('pods "web" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) '
                           'must not be provided in pod spec; priority admission controller computed Never from the '
                           'given PriorityClass name')
    old = pod(priority=10, preemptionPolicy="Never")
    upd = request("UPDATE", "pods", pod(), old=old)  # a PUT without the fields keeps the old ones
    await prio.admit(upd)
    assert (upd.object["spec"]["priority"], upd.object["spec"]["preemptionPolicy"]) == (10, "Never")
    upd = request("UPDATE", "pods", pod(priority=3), old=old)  # a change is left for validation to refuse
    await prio.admit(upd)
    assert upd.object["spec"]["priority"] == 3


# ---------------------------------------------------------------- ValidatingAdmissionPolicy

async def test_validating_admission_policy_actions_and_params() -> None:
    inf = FakeInformers()
    group = "admissionregistration.k8s.io"
    plugin = ValidatingAdmissionPolicy(inf, FakeNamespaces({"demo": {}}))  # type: ignore[arg-type]
    inf.put(group, "validatingadmissionpolicies", {"metadata": {"name": "max-replicas"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
        "validations": [{"expression": "object.spec.replicas <= int(params.data.max)",
                         "messageExpression": "'replicas must be at most ' + params.data.max"}]}})
    inf.put(group, "validatingadmissionpolicybindings", {"metadata": {"name": "max-replicas-binding"}, "spec": {
        "policyName": "max-replicas", "validationActions": ["Deny"],
        "paramRef": {"name": "limits", "namespace": "demo"}}})
    deploy = {"metadata": {"name": "d"}, "spec": {"replicas": 5}}
    err = await refusal(plugin.validate(request("CREATE", "deployments", deploy, group="apps")))
    assert err.message == ('deployments.apps "d" is forbidden: ValidatingAdmissionPolicy \'max-replicas\' with '
                           "binding 'max-replicas-binding' denied request: failed to configure binding: no params "
                           "found for policy binding with `Deny` parameterNotFoundAction")
    inf.put("", "configmaps", {"metadata": {"name": "limits", "namespace": "demo"}, "data": {"max": "3"}})
    err = await refusal(plugin.validate(request("CREATE", "deployments", deploy, group="apps")))
    denial = "ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: " \
             "replicas must be at most 3"
    # kube's shape: admission.NewForbidden with the validation's reason/code, the denial again as a cause
    assert (err.code, err.reason, err.message) == (422, "Invalid", f'deployments.apps "d" is forbidden: {denial}')
    assert err.details == {"name": "d", "group": "apps", "kind": "deployments", "causes": [{"message": denial}]}
    await plugin.validate(request("CREATE", "deployments", {"metadata": {"name": "d"}, "spec": {"replicas": 2}},
                                  group="apps"))
    await plugin.validate(request("CREATE", "configmaps", {"metadata": {"name": "x"}}))  # not matched
    binding = inf.cache(group, "validatingadmissionpolicybindings").get("", "max-replicas-binding")
    binding["spec"]["validationActions"] = ["Warn", "Audit"]
    req = request("CREATE", "deployments", deploy, group="apps")
    await plugin.validate(req)
    assert req.warnings == ["Validation failed for ValidatingAdmissionPolicy 'max-replicas' with binding "
                            "'max-replicas-binding': replicas must be at most 3"]
    assert "validation.policy.admission.k8s.io/validation_failure" in req.audit_annotations
