"""The default-on admission plugins on an UPDATE of ``pods/resize`` (in-place pod resize), as kube treats it.

- ResourceQuota: the pod evaluator's Handles (``pkg/quota/v1/evaluator/core/pods.go``) takes a Pod CREATE and a
  resize UPDATE only; CheckRequest charges ``new - old`` clamped at zero, after Constraints; usage counts the
  status resources (PodRequests with UseStatusResources).
- LimitRanger: SupportsAttributes takes a resize UPDATE (defaults and constraints as on create), never a plain Pod
  UPDATE; runLimitFunc skips an object being deleted.
- PodSecurity: resize is not in ignoredPodSubresources, but isSignificantPodUpdate is false for it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import limit_ranger, pod_security, resource_quota
from tests.admission.fakes import FakeInformers, FakeNamespaces, pod, request


async def refusal(coro: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as exc:
        await coro
    return exc.value


def sized(cpu: str, limit: str | None = None, name: str = "web") -> dict[str, Any]:
    p = pod(name)
    res: dict[str, Any] = {"requests": {"cpu": cpu}}
    if limit is not None:
        res["limits"] = {"cpu": limit}
    p["spec"]["containers"][0]["resources"] = res
    p["metadata"]["resourceVersion"] = "7"
    return p


def resized(old: dict[str, Any], cpu: str, limit: str | None = None) -> dict[str, Any]:
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu
    if limit is not None:
        new["spec"]["containers"][0]["resources"].setdefault("limits", {})["cpu"] = limit
    return new


def resize(new: dict[str, Any], old: dict[str, Any], **kw: Any) -> Any:
    return request("UPDATE", "pods", new, old=old, subresource="resize", **kw)


# ---------------------------------------------------------------- ResourceQuota

def quota_plugin(hard: dict[str, str], used: dict[str, str] | None = None
                 ) -> tuple[FakeInformers, resource_quota.ResourceQuota]:
    inf = FakeInformers()
    q: dict[str, Any] = {"metadata": {"name": "compute", "namespace": "demo"}, "spec": {"hard": hard}}
    if used is not None:
        q["status"] = {"hard": dict(hard), "used": used}
    inf.put("", "resourcequotas", q)
    return inf, resource_quota.ResourceQuota(inf)  # type: ignore[arg-type]


def used_of(inf: FakeInformers) -> dict[str, str]:
    stored: Any = inf.cache("", "resourcequotas").get("demo", "compute")
    return stored["status"]["used"]


async def test_quota_refuses_a_resize_past_hard_with_kubes_message() -> None:
    inf, plugin = quota_plugin({"requests.cpu": "1"}, {"requests.cpu": "500m"})
    old = sized("500m")
    err = await refusal(plugin.validate(resize(resized(old, "2"), old)))
    assert (err.code, err.message) == (403, 'pods "web" is forbidden: exceeded quota: compute, requested: '
                                            "requests.cpu=1500m, used: requests.cpu=500m, limited: requests.cpu=1")
    assert used_of(inf) == {"requests.cpu": "500m"}


async def test_quota_charges_a_resize_up_and_frees_nothing_on_a_resize_down() -> None:
    inf, plugin = quota_plugin({"requests.cpu": "2", "pods": "5"}, {"requests.cpu": "500m", "pods": "1"})
    old = sized("500m")
    up = resized(old, "1200m")
    await plugin.validate(resize(up, old))
    assert used_of(inf) == {"requests.cpu": "1200m", "pods": "1"}  # +700m, the pod count unchanged
    await plugin.validate(resize(resized(up, "100m"), up))  # SubtractWithNonNegativeResult: no refund
    assert used_of(inf) == {"requests.cpu": "1200m", "pods": "1"}


async def test_quota_dry_run_resize_checks_without_charging() -> None:
    inf, plugin = quota_plugin({"requests.cpu": "2"}, {"requests.cpu": "500m"})
    old = sized("500m")
    await plugin.validate(resize(resized(old, "1"), old, dry_run=True))
    assert used_of(inf) == {"requests.cpu": "500m"}


@pytest.mark.parametrize("subresource", ["", "status", "ephemeralcontainers"])
async def test_quota_ignores_pod_updates_other_than_resize(subresource: str) -> None:
    inf, plugin = quota_plugin({"requests.cpu": "1"}, {"requests.cpu": "500m"})
    old = sized("500m")
    await plugin.validate(request("UPDATE", "pods", resized(old, "5"), old=old, subresource=subresource))
    assert used_of(inf) == {"requests.cpu": "500m"} and inf.updates == 0


async def test_quota_constraints_apply_to_a_resize_containers_and_init_containers_sorted() -> None:
    _, plugin = quota_plugin({"limits.cpu": "4", "cpu": "4"}, {"limits.cpu": "0", "cpu": "0"})
    old = sized("500m")
    old["spec"]["containers"].insert(0, {"name": "zeta", "image": "busybox", "resources": {"limits": {"cpu": "1"}}})
    old["spec"]["initContainers"] = [{"name": "alpha", "image": "busybox"}]
    err = await refusal(plugin.validate(resize(resized_at(old, 1, "600m"), old)))
    assert err.message == ('pods "web" is forbidden: failed quota: compute: must specify cpu for: alpha,zeta; '
                           "limits.cpu for: alpha,nginx")


def resized_at(old: dict[str, Any], index: int, cpu: str) -> dict[str, Any]:
    new = copy.deepcopy(old)
    new["spec"]["containers"][index]["resources"]["requests"]["cpu"] = cpu
    return new


def with_status(p: dict[str, Any], actual: str, allocated: str | None = None,
                infeasible: bool = False) -> dict[str, Any]:
    status: dict[str, Any] = {"name": "nginx", "resources": {"requests": {"cpu": actual}}}
    if allocated is not None:
        status["allocatedResources"] = {"cpu": allocated}
    p["status"] = {"phase": "Running", "containerStatuses": [status]}
    if infeasible:
        p["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    return p


async def test_quota_usage_of_a_resize_counts_the_running_resources() -> None:
    # the container runs with 1 CPU (status): a resize to 800m charges max(800m, 1) - max(500m, 1) = 0
    inf, plugin = quota_plugin({"requests.cpu": "1"}, {"requests.cpu": "1"})
    old = with_status(sized("500m"), "1")
    await plugin.validate(resize(resized(old, "800m"), old))
    assert inf.updates == 0
    # allocatedResources counts too: max(1500m, 1, 2) - max(500m, 1, 2) = 0
    old = with_status(sized("500m"), "1", allocated="2")
    await plugin.validate(resize(resized(old, "1500m"), old))
    assert inf.updates == 0
    # past the running value the difference is charged
    old = with_status(sized("500m"), "1")
    err = await refusal(plugin.validate(resize(resized(old, "1500m"), old)))
    assert err.message == ('pods "web" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, '
                           "used: requests.cpu=1, limited: requests.cpu=1")


def test_pod_usage_follows_pod_requests() -> None:
    from fractions import Fraction

    from kapi.quota import pod_compute, pod_resources

    p = with_status(sized("500m"), "1", infeasible=True)  # Infeasible: the status alone
    assert pod_resources(p, "requests")["cpu"] == Fraction(1)
    p = with_status(sized("3"), "1", infeasible=True)
    assert pod_resources(p, "requests")["cpu"] == Fraction(1)
    assert pod_resources(p, "requests", use_status=False)["cpu"] == Fraction(3)
    # sidecars add to the containers; a plain init container counts with the sidecars before it
    p = sized("1")
    p["spec"]["initContainers"] = [
        {"name": "side", "image": "x", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}},
        {"name": "init", "image": "x", "resources": {"requests": {"cpu": "2500m"}}},
    ]
    p["spec"]["overhead"] = {"cpu": "100m"}
    assert pod_resources(p, "requests")["cpu"] == Fraction(36, 10)  # max(1+1, 1+2.5) + 0.1
    assert pod_compute(p)["cpu"] == Fraction(36, 10)


# ---------------------------------------------------------------- LimitRanger

def ranger(*items: dict[str, Any]) -> limit_ranger.LimitRanger:
    inf = FakeInformers()
    inf.put("", "limitranges", {"metadata": {"name": "limits", "namespace": "demo"}, "spec": {"limits": list(items)}})
    return limit_ranger.LimitRanger(inf)  # type: ignore[arg-type]


async def test_limit_ranger_validates_a_resize() -> None:
    plugin = ranger({"type": "Container", "max": {"cpu": "1"}})
    old = sized("500m", "1")
    err = await refusal(plugin.validate(resize(resized(old, "500m", "2"), old)))
    assert (err.code, err.message) == (403, 'pods "web" is forbidden: maximum cpu usage per Container is 1, '
                                            "but limit is 2")
    await plugin.validate(resize(resized(old, "800m", "1"), old))


async def test_limit_ranger_pod_item_on_a_resize_uses_the_sidecar_formula() -> None:
    plugin = ranger({"type": "Pod", "max": {"cpu": "3"}})
    old = sized("1", "1")
    old["spec"]["initContainers"] = [{"name": "init", "image": "x",
                                      "resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "3"}}}]
    await plugin.validate(resize(resized(old, "2", "2"), old))  # max(2, 3) = 3: within
    old["spec"]["initContainers"][0]["restartPolicy"] = "Always"  # a sidecar: 2 + 3 = 5
    err = await refusal(plugin.validate(resize(resized(old, "2", "2"), old)))
    assert err.message == 'pods "web" is forbidden: maximum cpu usage per Pod is 3, but limit is 5'


async def test_limit_ranger_defaults_a_resize() -> None:
    plugin = ranger({"type": "Container", "default": {"cpu": "700m", "memory": "64Mi"}})
    old = sized("500m", "1")
    new = resized(old, "600m")
    req = resize(new, old)
    await plugin.admit(req)
    obj: Any = req.object
    assert obj["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "600m", "memory": "64Mi"},
                                                                 "limits": {"cpu": "1", "memory": "64Mi"}}
    assert obj["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: memory request for container nginx; memory limit for container nginx")


async def test_limit_ranger_annotation_names_init_containers_after_containers() -> None:
    plugin = ranger({"type": "Container", "default": {"cpu": "700m"}})
    p = pod()
    p["spec"]["initContainers"] = [{"name": "setup", "image": "busybox"}]
    req = request("CREATE", "pods", p)
    await plugin.admit(req)
    assert p["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu request for container nginx; cpu limit for container nginx; "
        "cpu request for init container setup; cpu limit for init container setup")


@pytest.mark.parametrize("subresource", ["", "status"])
async def test_limit_ranger_skips_other_pod_updates(subresource: str) -> None:
    plugin = ranger({"type": "Container", "max": {"cpu": "1"}, "default": {"memory": "1Gi"}})
    old = sized("500m", "1")
    req = request("UPDATE", "pods", resized(old, "500m", "2"), old=old, subresource=subresource)
    await plugin.admit(req)
    await plugin.validate(req)
    obj: Any = req.object
    assert "memory" not in obj["spec"]["containers"][0]["resources"]["requests"]


async def test_limit_ranger_skips_a_pod_being_deleted() -> None:
    plugin = ranger({"type": "Container", "max": {"cpu": "1"}})
    old = sized("500m", "1")
    old["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    await plugin.validate(resize(resized(old, "500m", "2"), old))


# ---------------------------------------------------------------- PodSecurity

def restricted() -> pod_security.PodSecurity:
    ns: Any = FakeNamespaces({"demo": {"pod-security.kubernetes.io/enforce": "baseline",
                                       "pod-security.kubernetes.io/warn": "restricted",
                                       "pod-security.kubernetes.io/audit": "restricted"}})
    return pod_security.PodSecurity(ns)


def privileged_pod() -> dict[str, Any]:
    p = sized("500m")
    p["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    return p


async def test_pod_security_allows_a_resize_of_a_violating_pod_without_warnings() -> None:
    plugin = restricted()
    old = privileged_pod()  # stored before the namespace was labelled
    req = resize(resized(old, "1"), old)
    await plugin.validate(req)
    assert req.warnings == [] and req.audit_annotations == {}


async def test_pod_security_evaluates_significant_updates_on_any_evaluated_subresource() -> None:
    plugin = restricted()
    old = privileged_pod()
    new = resized(old, "1")
    new["spec"]["containers"][0]["image"] = "nginx:1.28"  # an image change is significant, resize or not
    err = await refusal(plugin.validate(resize(new, old)))
    assert (err.code, err.message) == (403, 'pods "web" is forbidden: violates PodSecurity "baseline:latest": '
                                            'privileged (container "nginx" must not set '
                                            "securityContext.privileged=true)")
    # a plain update that is not significant (a toleration added) is not evaluated
    new = copy.deepcopy(old)
    new["spec"]["tolerations"] = [{"key": "k", "operator": "Exists"}]
    req = request("UPDATE", "pods", new, old=old)
    await plugin.validate(req)
    assert req.warnings == []


@pytest.mark.parametrize("subresource", sorted(pod_security.IGNORED_POD_SUBRESOURCES))
async def test_pod_security_ignores_the_ignored_subresources(subresource: str) -> None:
    plugin = restricted()
    old = privileged_pod()
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.28"
    req = request("UPDATE", "pods", new, old=old, subresource=subresource)
    await plugin.validate(req)
    assert req.warnings == []


@pytest.mark.parametrize(("change", "significant"), [
    (lambda p: p["metadata"].setdefault("annotations", {}).update(
        {"seccomp.security.alpha.kubernetes.io/pod": "runtime/default"}), True),
    (lambda p: p["metadata"].setdefault("annotations", {}).update(
        {"container.seccomp.security.alpha.kubernetes.io/nginx": "runtime/default"}), True),
    (lambda p: p["metadata"].setdefault("annotations", {}).update({"other": "x"}), False),
    (lambda p: p["spec"]["containers"].append({"name": "b", "image": "x"}), True),
    (lambda p: p["spec"].update(ephemeralContainers=[{"name": "debug", "image": "busybox"}]), True),
    (lambda p: p["spec"]["containers"][0].update(resources={"requests": {"cpu": "2"}}), False),
    (lambda p: p["spec"].update(activeDeadlineSeconds=5), False),
])
def test_significant_pod_update(change: Any, significant: bool) -> None:
    old = sized("500m")
    new = copy.deepcopy(old)
    change(new)
    assert pod_security.significant_pod_update(new, old) is significant
