"""PodSecurity over workload controllers as kube's ValidatePodController
(staging/src/k8s.io/pod-security-admission/admission/admission.go): every CREATE and UPDATE of the main
resource is evaluated for warn and audit (an UPDATE whose template is unchanged included), never enforced;
subresources are skipped. A Pod UPDATE is evaluated only when isSignificantPodUpdate."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi import errors
from services.admission.plugins import pod_security
from tests.admission.fakes import FakeNamespaces, pod, request

LABELS = {"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/warn": "baseline",
          "pod-security.kubernetes.io/audit": "baseline"}
WARNING = ('would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (container '
           '"nginx" must not set securityContext.privileged=true)')


def _template() -> dict[str, Any]:
    spec = pod(hostNetwork=True)["spec"]
    spec["containers"][0]["securityContext"] = {"privileged": True}
    return {"metadata": {"labels": {"app": "web"}}, "spec": spec}


def _workload(group: str, resource: str) -> dict[str, Any]:
    meta = {"name": "web", "namespace": "demo", "labels": {"tier": "1"}}
    if resource == "podtemplates":
        return {"metadata": meta, "template": _template()}
    if resource == "cronjobs":
        return {"metadata": meta, "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {
            "template": _template()}}}}
    return {"metadata": meta, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": _template()}}


WORKLOADS = [("apps", "deployments"), ("apps", "replicasets"), ("apps", "statefulsets"), ("apps", "daemonsets"),
             ("batch", "jobs"), ("batch", "cronjobs"), ("", "replicationcontrollers"), ("", "podtemplates")]


@pytest.mark.parametrize(("group", "resource"), WORKLOADS)
async def test_unchanged_template_update_is_evaluated(group: str, resource: str) -> None:
    plugin = pod_security.PodSecurity(FakeNamespaces({"demo": LABELS}))  # type: ignore[arg-type]
    old = _workload(group, resource)
    new = copy.deepcopy(old)
    new["metadata"]["labels"]["tier"] = "2"  # a metadata-only change: the template is the same
    req = request("UPDATE", resource, new, group=group, old=old)
    await plugin.validate(req)  # warn and audit only: never refused, even under enforce baseline
    assert req.warnings == [WARNING]
    assert req.audit_annotations == {"pod-security.kubernetes.io/audit-violations": WARNING}
    same = request("UPDATE", resource, copy.deepcopy(old), group=group, old=old)  # a no-op update too
    await plugin.validate(same)
    assert same.warnings == [WARNING]


@pytest.mark.parametrize(("group", "resource"), [("apps", "deployments"), ("batch", "jobs")])
async def test_workload_subresource_is_skipped(group: str, resource: str) -> None:
    plugin = pod_security.PodSecurity(FakeNamespaces({"demo": LABELS}))  # type: ignore[arg-type]
    old = _workload(group, resource)
    req = request("UPDATE", resource, copy.deepcopy(old), group=group, old=old, subresource="status")
    await plugin.validate(req)
    assert req.warnings == [] and req.audit_annotations == {}


async def test_insignificant_pod_update_is_not_evaluated() -> None:
    plugin = pod_security.PodSecurity(FakeNamespaces({"demo": LABELS}))  # type: ignore[arg-type]
    old = pod(hostNetwork=True)
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"tier": "2"}
    req = request("UPDATE", "pods", new, old=old)
    await plugin.validate(req)  # isSignificantPodUpdate false: allowed without a warning
    assert req.warnings == [] and req.audit_annotations == {}
    new["spec"]["containers"][0]["image"] = "nginx:1.28"  # an image change is significant: enforced
    with pytest.raises(errors.StatusError) as info:
        await plugin.validate(request("UPDATE", "pods", new, old=old))
    assert (info.value.code, info.value.message) == (403,
        'pods "web" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)')
