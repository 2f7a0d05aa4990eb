"""PodSecurity's audit annotations as kube-apiserver 1.37 sets them: the library's keys
(``pod-security-admission/api/constants.go``: ExemptionReasonAnnotationKey "exempt",
AuditViolationsAnnotationKey "audit-violations", EnforcedPolicyAnnotationKey "enforce-policy", and "error")
prefixed with ``pod-security.kubernetes.io/`` by the in-tree plugin
(``plugin/pkg/admission/security/podsecurity/admission.go``), in the cases of
``pod-security-admission/admission/admission.go`` (ValidatePod, ValidatePodController, EvaluatePod) and
``response.go`` (the exemption responses)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import pod_security
from tests.admission.fakes import FakeNamespaces, pod, request

ENFORCE = "pod-security.kubernetes.io/enforce-policy"
AUDIT = "pod-security.kubernetes.io/audit-violations"
EXEMPT = "pod-security.kubernetes.io/exempt"
ERROR = "pod-security.kubernetes.io/error"
HOST_NET = 'would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'


def plugin(labels: dict[str, str], config: dict[str, Any] | None = None) -> pod_security.PodSecurity:
    return pod_security.PodSecurity(FakeNamespaces({"demo": labels}), config)  # type: ignore[arg-type]


def deployment(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "web", "namespace": "demo"},
            "spec": {"selector": {}, "template": {"metadata": {}, "spec": pod(**spec)["spec"]}}}


async def test_allowed_pod_records_the_enforce_policy() -> None:
    req = request("CREATE", "pods", pod())
    await plugin({"pod-security.kubernetes.io/enforce": "baseline",
                  "pod-security.kubernetes.io/enforce-version": "v1.30"}).validate(req)
    assert req.audit_annotations == {ENFORCE: "baseline:v1.30"}
    req = request("CREATE", "pods", pod())  # warn alone is evaluated too: enforce is the default privileged
    await plugin({"pod-security.kubernetes.io/warn": "baseline"}).validate(req)
    assert req.audit_annotations == {ENFORCE: "privileged:latest"}


async def test_all_privileged_namespace_records_nothing() -> None:
    req = request("CREATE", "pods", pod(hostNetwork=True))
    await plugin({}).validate(req)
    assert req.audit_annotations == {} and req.warnings == []


async def test_refused_pod_records_enforce_policy_and_audit_violations() -> None:
    p = plugin({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/audit": "baseline",
                "pod-security.kubernetes.io/warn": "baseline"})
    req = request("CREATE", "pods", pod(hostNetwork=True))
    with pytest.raises(errors.StatusError) as info:
        await p.validate(req)
    assert info.value.message == 'pods "web" is forbidden: violates PodSecurity "baseline:latest": host ' \
                                 "namespaces (hostNetwork=true)"
    assert req.audit_annotations == {ENFORCE: "baseline:latest", AUDIT: HOST_NET}
    assert req.warnings == []  # no warning on a request already refused


async def test_controller_records_audit_violations_but_no_enforce_policy() -> None:
    p = plugin({"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/audit": "baseline"})
    req = request("CREATE", "deployments", deployment(hostNetwork=True), group="apps")
    await p.validate(req)
    assert req.audit_annotations == {AUDIT: HOST_NET}
    req = request("CREATE", "deployments", deployment(), group="apps")
    await p.validate(req)
    assert req.audit_annotations == {}
    # enforce alone: ValidatePodController's short-circuit (warn and audit privileged), nothing recorded
    req = request("CREATE", "deployments", deployment(hostNetwork=True), group="apps")
    await plugin({"pod-security.kubernetes.io/enforce": "restricted"}).validate(req)
    assert req.audit_annotations == {} and req.warnings == []


@pytest.mark.parametrize(("resource", "group"), [("pods", ""), ("deployments", "apps")])
async def test_exemptions_record_the_reason(resource: str, group: str) -> None:
    labels = {"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/audit": "baseline"}
    obj = pod(hostNetwork=True) if resource == "pods" else deployment(hostNetwork=True)
    cases = [({"usernames": ["alice"]}, "user"), ({"namespaces": ["demo"]}, "namespace"),
             ({"runtimeClasses": ["kata"]}, "runtimeClass")]
    for exemptions, reason in cases:
        o = copy.deepcopy(obj)
        spec = o["spec"] if resource == "pods" else o["spec"]["template"]["spec"]
        spec["runtimeClassName"] = "kata"
        req = request("CREATE", resource, o, group=group)
        await plugin(labels, {"exemptions": exemptions}).validate(req)
        assert req.audit_annotations == {EXEMPT: reason}, exemptions
    # the namespace and user exemptions come before the namespace lookup: an all-privileged namespace too
    req = request("CREATE", resource, copy.deepcopy(obj), group=group)
    await plugin({}, {"exemptions": {"namespaces": ["demo"]}}).validate(req)
    assert req.audit_annotations == {EXEMPT: "namespace"}


async def test_invalid_labels_record_the_parse_error() -> None:
    req = request("CREATE", "pods", pod(hostNetwork=True))
    p = plugin({"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/audit-version": "1.2"})
    with pytest.raises(errors.StatusError):
        await p.validate(req)
    assert req.audit_annotations == {
        ERROR: 'Failed to parse policy: metadata.labels[pod-security.kubernetes.io/audit-version]: Invalid value: '
               '"1.2": must be "latest" or "v1.x"',
        ENFORCE: "baseline:latest"}
    req = request("CREATE", "deployments", deployment(), group="apps")  # a controller in the same namespace
    await plugin({"pod-security.kubernetes.io/warn": "strict"}).validate(req)
    assert req.audit_annotations == {
        ERROR: 'Failed to parse policy: metadata.labels[pod-security.kubernetes.io/warn]: Invalid value: '
               '"strict": must be one of privileged, baseline, restricted'}


async def test_insignificant_update_and_ignored_subresource_record_nothing() -> None:
    p = plugin({"pod-security.kubernetes.io/enforce": "baseline"})
    old = pod(hostNetwork=True)
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"tier": "2"}
    req = request("UPDATE", "pods", new, old=old)
    await p.validate(req)
    assert req.audit_annotations == {}
    req = request("UPDATE", "pods", copy.deepcopy(old), old=old, subresource="status")
    await p.validate(req)
    assert req.audit_annotations == {}


async def test_namespace_exempt_from_the_pod_dry_run_records_the_exemption() -> None:
    p = pod_security.PodSecurity(FakeNamespaces({}), {"exemptions": {"namespaces": ["demo"]}},  # type: ignore[arg-type]
                                 pods=None)
    old = {"metadata": {"name": "demo", "labels": {}}}
    new = {"metadata": {"name": "demo", "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}
    req = request("UPDATE", "namespaces", new, old=old, namespace="demo")
    await p.validate(req)
    assert req.audit_annotations == {EXEMPT: "namespace"} and req.warnings == []
