"""Audit annotations end to end, as kube-apiserver 1.37 writes them: a stack with --audit-policy-file and
--audit-log-path; each request's ResponseComplete event carries WithAuthorization's
``authorization.k8s.io/decision``/``reason`` (k8s.io/apiserver pkg/endpoints/filters/authorization.go) and
admission's annotations (PodSecurity's ``pod-security.kubernetes.io/enforce-policy`` and ``audit-violations``,
also on a refused pod: k8s.io/apiserver pkg/admission/audit.go logs them whatever the plugin answered)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, own_stack
from tests.e2e.test_audit import admin_request, events

POLICY = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "omitStages": ["RequestReceived"],
          "rules": [{"level": "None", "nonResourceURLs": ["/healthz*", "/readyz*", "/livez*"]},
                    {"level": "Metadata"}]}
NS = "psa-audited"
DECISION, REASON = "authorization.k8s.io/decision", "authorization.k8s.io/reason"
ENFORCE, AUDIT = "pod-security.kubernetes.io/enforce-policy", "pod-security.kubernetes.io/audit-violations"


@pytest.fixture(scope="module")
def audited() -> Iterator[tuple[Stack, Path]]:
    with tempfile.TemporaryDirectory(prefix="kapi-audit-notes-") as tmp:
        policy = Path(tmp) / "policy.yaml"
        policy.write_text(yaml.safe_dump(POLICY))
        log = Path(tmp) / "audit.log"
        with own_stack([f"--audit-policy-file={policy}", f"--audit-log-path={log}"]) as stack:
            kubectl = Kubectl(stack.kubeconfig)
            kubectl.run("create", "namespace", NS)
            kubectl.run("label", "namespace", NS, "pod-security.kubernetes.io/enforce=baseline",
                        "pod-security.kubernetes.io/audit=baseline")
            yield stack, log


def pod(name: str, **spec: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


def test_allowed_pod_carries_authorization_and_enforce_policy(audited):
    stack, log = audited
    status, headers, _ = admin_request(stack, "POST", f"/api/v1/namespaces/{NS}/pods", pod("ok"))
    assert status == 201
    done = events(log, headers["Audit-Id"])[-1]
    assert done["stage"] == "ResponseComplete"
    # system:masters: kube's privileged-group authorizer allows with an empty reason
    assert done["annotations"] == {DECISION: "allow", REASON: "", ENFORCE: "baseline:latest"}


def test_refused_pod_carries_enforce_policy_and_audit_violations(audited):
    stack, log = audited
    status, headers, body = admin_request(stack, "POST", f"/api/v1/namespaces/{NS}/pods",
                                          pod("hostnet", hostNetwork=True))
    assert status == 403, body
    done = events(log, headers["Audit-Id"])[-1]
    assert done["responseStatus"]["code"] == 403
    assert done["annotations"] == {
        DECISION: "allow", REASON: "", ENFORCE: "baseline:latest",
        AUDIT: 'would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'}


def test_rbac_allow_reason_and_forbid(audited):
    stack, log = audited
    kubectl = Kubectl(stack.kubeconfig)
    kubectl.run("create", "clusterrolebinding", "auditor-view", "--clusterrole=view", "--user=auditor")
    status, headers, _ = admin_request(stack, "GET", f"/api/v1/namespaces/{NS}/configmaps",
                                       headers={"Impersonate-User": "auditor"})
    assert status == 200
    done = events(log, headers["Audit-Id"])[-1]
    assert done["annotations"] == {
        DECISION: "allow",
        REASON: 'RBAC: allowed by ClusterRoleBinding "auditor-view" of ClusterRole "view" to User "auditor"'}
    status, headers, _ = admin_request(stack, "DELETE", f"/api/v1/namespaces/{NS}/configmaps/x",
                                       headers={"Impersonate-User": "auditor"})
    assert status == 403
    done = events(log, headers["Audit-Id"])[-1]
    assert done["annotations"] == {DECISION: "forbid", REASON: ""}
