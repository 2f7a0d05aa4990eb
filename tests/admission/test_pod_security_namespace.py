"""PodSecurity on Namespace CREATE/UPDATE as kube's ValidateNamespace and EvaluatePodsInNamespace
(staging/src/k8s.io/pod-security-admission/admission/admission.go): label errors are a 422 on the Namespace;
an UPDATE that makes the enforce policy stricter (or changes its version) answers warnings for the namespace's
existing pods, never a refusal."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import pod_security
from tests.admission.fakes import FakeInformers, FakeNamespaces, pod, request

ENFORCE = "pod-security.kubernetes.io/enforce"
RESTRICTED_REASON = "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"
BASELINE_REASON = "host namespaces, privileged"


def namespace(labels: dict[str, str], name: str = "demo") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def relabel(old: dict[str, str], new: dict[str, str], *, name: str = "demo", dry_run: bool = False,
            subresource: str = "") -> Any:
    return request("UPDATE", "namespaces", namespace(new, name), old=namespace(old, name), dry_run=dry_run,
                   subresource=subresource)


def privileged_pod(name: str) -> dict[str, Any]:
    p = pod(name, hostNetwork=True)
    p["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    return p


def restricted_pod(name: str) -> dict[str, Any]:
    p = pod(name, securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}})
    p["spec"]["containers"][0]["securityContext"] = {"allowPrivilegeEscalation": False,
                                                     "capabilities": {"drop": ["ALL"]}}
    return p


def plugin_with(*pods: dict[str, Any], config: dict[str, Any] | None = None) -> pod_security.PodSecurity:
    inf = FakeInformers()
    for p in pods:
        inf.put("", "pods", p)
    return pod_security.PodSecurity(FakeNamespaces({"demo": {}}), config, inf)  # type: ignore[arg-type]


async def warnings_of(plugin: pod_security.PodSecurity, req: Any) -> list[str]:
    await plugin.validate(req)
    return list(req.warnings)


async def test_issue_example_existing_pod_violates_new_enforce_level() -> None:
    inf = FakeInformers()
    for p in (pod("p4"), restricted_pod("ok"), pod("elsewhere")):
        p["metadata"]["namespace"] = "t1" if p["metadata"]["name"] != "elsewhere" else "other"
        inf.put("", "pods", p)
    plugin = pod_security.PodSecurity(FakeNamespaces({}), None, inf)  # type: ignore[arg-type]
    req = relabel({}, {ENFORCE: "restricted"}, name="t1")
    await plugin.validate(req)  # allowed: warnings only
    assert req.warnings == [
        'existing pods in namespace "t1" violate the new PodSecurity enforce level "restricted:latest"',
        f"p4: {RESTRICTED_REASON}"]


async def test_identical_warnings_collapse_and_sort() -> None:
    plugin = plugin_with(pod("p3"), pod("p1"), pod("p2"), privileged_pod("b1"), privileged_pod("b2"),
                         privileged_pod("z9"), pod("solo", hostPID=True), restricted_pod("fine"))
    got = await warnings_of(plugin, relabel({ENFORCE: "baseline"}, {ENFORCE: "restricted"}))
    assert got == [
        'existing pods in namespace "demo" violate the new PodSecurity enforce level "restricted:latest"',
        # kube's registry orders the baseline checks' IDs first, then the restricted ones
        "b1 (and 2 other pods): host namespaces, privileged, allowPrivilegeEscalation != false, unrestricted "
        "capabilities, runAsNonRoot != true, seccompProfile",
        f"p1 (and 2 other pods): {RESTRICTED_REASON}",
        "solo: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
        "seccompProfile"]
    got = await warnings_of(plugin_with(privileged_pod("x"), privileged_pod("a"), pod("w")),
                            relabel({}, {ENFORCE: "baseline"}))
    assert got == ['existing pods in namespace "demo" violate the new PodSecurity enforce level "baseline:latest"',
                   f"a (and 1 other pod): {BASELINE_REASON}"]


class UnsortedPods:
    """A pod lister answering in a given order (kube's informer lister has no order)."""

    def __init__(self, pods: list[dict[str, Any]] | None = None, fail: bool = False):
        self.items = pods or []
        self.fail = fail
        self.timeouts: list[float] = []

    async def list_live(self, group: str, resource: str, namespace: str, timeout: float) -> list[dict[str, Any]]:
        self.timeouts.append(timeout)
        if self.fail:
            raise errors.StatusError(504, "Timeout", "storage timed out")
        return copy.deepcopy(self.items)


async def test_lexically_first_pod_named_whatever_the_order() -> None:
    plugin = pod_security.PodSecurity(FakeNamespaces({}), None,  # type: ignore[arg-type]
                                      UnsortedPods([pod("m"), pod("c"), pod("x")]))
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == [
        'existing pods in namespace "demo" violate the new PodSecurity enforce level "restricted:latest"',
        f"c (and 2 other pods): {RESTRICTED_REASON}"]


async def test_only_a_stricter_or_reversioned_enforce_policy_triggers() -> None:
    plugin = plugin_with(privileged_pod("p"))
    # warn and audit changes, an unchanged enforce label, privileged, a relaxation: no evaluation
    for old, new in [({}, {"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit":
                           "restricted"}),
                     ({ENFORCE: "baseline"}, {ENFORCE: "baseline", "team": "a"}),
                     ({ENFORCE: "restricted"}, {ENFORCE: "privileged"}),
                     ({ENFORCE: "restricted"}, {ENFORCE: "baseline"}),
                     ({ENFORCE: "baseline", f"{ENFORCE}-version": "v1.30"},
                      {ENFORCE: "privileged", f"{ENFORCE}-version": "latest"})]:
        assert await warnings_of(plugin, relabel(old, new)) == [], (old, new)
    # the same level at another version is evaluated, and the version is in the warning
    got = await warnings_of(plugin, relabel({ENFORCE: "baseline"}, {ENFORCE: "baseline",
                                                                    f"{ENFORCE}-version": "v1.30"}))
    assert got == ['existing pods in namespace "demo" violate the new PodSecurity enforce level "baseline:v1.30"',
                   f"p: {BASELINE_REASON}"]
    # a relaxation at another version is evaluated too (only same-version relaxations are skipped)
    got = await warnings_of(plugin, relabel({ENFORCE: "restricted", f"{ENFORCE}-version": "v1.30"},
                                            {ENFORCE: "baseline"}))
    assert got[1:] == [f"p: {BASELINE_REASON}"]
    # CREATE never evaluates pods; neither does a subresource, nor a dry run differ
    await plugin.validate(request("CREATE", "namespaces", namespace({ENFORCE: "restricted"})))
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"}, subresource="status")) == []
    dry = await warnings_of(plugin, relabel({}, {ENFORCE: "baseline"}, dry_run=True))
    assert dry == ['existing pods in namespace "demo" violate the new PodSecurity enforce level "baseline:latest"',
                   f"p: {BASELINE_REASON}"]


async def test_defaults_are_the_old_policy_when_labels_are_absent() -> None:
    plugin = plugin_with(pod("p"), config={"defaults": {"enforce": "baseline"}})
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "baseline"})) == []
    assert (await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})))[1:] == [f"p: {RESTRICTED_REASON}"]


async def test_exempt_namespace_and_runtime_class() -> None:
    plugin = plugin_with(pod("p"), config={"exemptions": {"namespaces": ["demo"]}})
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == []
    gvisor = pod("g", runtimeClassName="gvisor")
    plugin = plugin_with(gvisor, config={"exemptions": {"runtimeClasses": ["gvisor"]}})
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == []
    plugin = plugin_with(gvisor, pod("p"), pod("q"), config={"exemptions": {"runtimeClasses": ["gvisor"]}})
    plugin.max_pods_to_check = 2  # the exempt pod is not counted among the existing pods
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == [
        'existing pods in namespace "demo" violate the new PodSecurity enforce level "restricted:latest"',
        f"p (and 1 other pod): {RESTRICTED_REASON}"]


def owned(p: dict[str, Any], uid: str) -> dict[str, Any]:
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs-" + uid,
                                         "uid": uid, "controller": True}]
    return p


async def test_limit_and_controller_prioritisation() -> None:
    # rs-1's second pod goes after every other pod, so the limit of 2 checks a and c, not b
    lister = UnsortedPods([owned(pod("a"), "1"), owned(privileged_pod("b"), "1"), restricted_pod("c")])
    plugin = pod_security.PodSecurity(FakeNamespaces({}), None, lister)  # type: ignore[arg-type]
    plugin.max_pods_to_check = 2
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == [
        "new PodSecurity enforce level only checked against the first 2 of 3 existing pods",
        'existing pods in namespace "demo" violate the new PodSecurity enforce level "restricted:latest"',
        f"a: {RESTRICTED_REASON}"]
    # the truncation warning stands alone when the checked pods are fine
    plugin = pod_security.PodSecurity(FakeNamespaces({}), None, UnsortedPods(  # type: ignore[arg-type]
        [restricted_pod("a"), pod("b")]))
    plugin.max_pods_to_check = 1
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == [
        "new PodSecurity enforce level only checked against the first 1 of 2 existing pods"]
    assert pod_security.NAMESPACE_MAX_PODS_TO_CHECK == 3000 and pod_security.NAMESPACE_POD_CHECK_TIMEOUT == 1.0


async def test_deadline_stops_evaluation() -> None:
    lister = UnsortedPods([pod("a"), pod("b"), pod("c")])
    plugin = pod_security.PodSecurity(FakeNamespaces({}), None, lister)  # type: ignore[arg-type]
    plugin.pod_check_timeout = 0.0
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == [
        "new PodSecurity enforce level only checked against the first 1 of 3 existing pods",
        'existing pods in namespace "demo" violate the new PodSecurity enforce level "restricted:latest"',
        f"a: {RESTRICTED_REASON}"]
    # the budget is 1 s, or half the time the request has left if less
    plugin = pod_security.PodSecurity(FakeNamespaces({}), None, lister)  # type: ignore[arg-type]
    req = relabel({}, {ENFORCE: "restricted"})
    req.timeout = 0.5
    await plugin.validate(req)
    req.timeout = 30.0
    await plugin.validate(req)
    assert lister.timeouts[-2:] == [0.25, 1.0]


async def test_list_failure_is_a_warning() -> None:
    plugin = pod_security.PodSecurity(FakeNamespaces({}), None, UnsortedPods(fail=True))  # type: ignore[arg-type]
    assert await warnings_of(plugin, relabel({}, {ENFORCE: "restricted"})) == [
        "failed to list pods while checking new PodSecurity enforce level"]


async def refusal(coro: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as info:
        await coro
    return info.value


async def test_invalid_labels_are_422_on_create_and_on_a_changed_update() -> None:
    plugin = plugin_with(pod("p"))
    err = await refusal(plugin.validate(request("CREATE", "namespaces", namespace({ENFORCE: "strict"}, "x"))))
    assert (err.code, err.reason, err.message) == (
        422, "Invalid", 'Namespace "x" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid '
                        'value: "strict": must be one of privileged, baseline, restricted')
    assert err.details["causes"] == [{"reason": "FieldValueInvalid", "field":
                                      "metadata.labels[pod-security.kubernetes.io/enforce]",
                                      "message": 'Invalid value: "strict": must be one of privileged, baseline, '
                                                 "restricted"}]
    both = {ENFORCE: "", "pod-security.kubernetes.io/warn-version": "1.30"}
    err = await refusal(plugin.validate(request("CREATE", "namespaces", namespace(both, "x"))))
    assert err.message == ('Namespace "x" is invalid: [metadata.labels[pod-security.kubernetes.io/enforce]: Invalid '
                           'value: "": must be one of privileged, baseline, restricted, metadata.labels['
                           'pod-security.kubernetes.io/warn-version]: Invalid value: "1.30": must be "latest" or '
                           '"v1.x"]')
    # an UPDATE keeping the same invalid labels is allowed (and an invalid enforce level is "restricted")
    bad = {ENFORCE: "strict"}
    assert await warnings_of(plugin, relabel(bad, {**bad, "team": "a"})) == []
    err = await refusal(plugin.validate(relabel({}, bad)))
    assert err.code == 422
    err = await refusal(plugin.validate(relabel(bad, {ENFORCE: "stricter"})))
    assert err.message.endswith('Invalid value: "stricter": must be one of privileged, baseline, restricted')
    # fixing the label to the level the invalid one meant (restricted) is no change of policy: no warnings
    assert await warnings_of(plugin, relabel(bad, {ENFORCE: "restricted"})) == []


async def test_invalid_warn_level_fails_open_invalid_enforce_is_restricted() -> None:
    plugin = pod_security.PodSecurity(FakeNamespaces({"demo": {  # type: ignore[arg-type]
        "pod-security.kubernetes.io/warn": "bogus", "pod-security.kubernetes.io/audit": "bogus"}}))
    req = request("CREATE", "pods", pod())
    await plugin.validate(req)  # no warning; the label errors are the audit annotation "error"
    assert req.warnings == [] and req.audit_annotations == {
        "pod-security.kubernetes.io/error": "Failed to parse policy: [metadata.labels[pod-security.kubernetes.io/"
        'audit]: Invalid value: "bogus": must be one of privileged, baseline, restricted, metadata.labels['
        'pod-security.kubernetes.io/warn]: Invalid value: "bogus": must be one of privileged, baseline, restricted]',
        "pod-security.kubernetes.io/enforce-policy": "privileged:latest"}
    plugin = pod_security.PodSecurity(FakeNamespaces({"demo": {ENFORCE: "bogus"}}))  # type: ignore[arg-type]
    err = await refusal(plugin.validate(request("CREATE", "pods", pod())))
    assert err.code == 403 and 'violates PodSecurity "restricted:latest"' in err.message
