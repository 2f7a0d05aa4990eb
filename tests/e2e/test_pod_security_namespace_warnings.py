"""kubectl label ns ... pod-security.kubernetes.io/enforce=... --overwrite: kube's PodSecurity dry-runs the
namespace's existing pods against the new enforce level and answers warnings, not a refusal
(EvaluatePodsInNamespace, staging/src/k8s.io/pod-security-admission/admission/admission.go); kubectl prints
each on stderr as ``Warning: <text>``."""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Kubectl

RESTRICTED_REASON = "allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile"


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}], **spec}}


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("Warning: ")]


def test_enforce_label_change_warns_about_existing_pods(kubectl: Kubectl, namespace: str) -> None:
    for pod in (_pod("p4"), _pod("p2"), _pod("p3"), _pod("h1", hostNetwork=True)):
        kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod))
    enforce = "pod-security.kubernetes.io/enforce"

    proc = kubectl.run("label", "ns", namespace, f"{enforce}=restricted", "--overwrite")
    assert proc.stdout.strip() == f"namespace/{namespace} labeled"
    assert _warnings(proc.stderr) == [
        f'Warning: existing pods in namespace "{namespace}" violate the new PodSecurity enforce level '
        '"restricted:latest"',
        "Warning: h1: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, "
        "runAsNonRoot != true, seccompProfile",  # kube's registry: baseline check IDs first
        f"Warning: p2 (and 2 other pods): {RESTRICTED_REASON}"]

    # warn and audit labels, and a relaxed enforce level, dry-run nothing
    proc = kubectl.run("label", "ns", namespace, "pod-security.kubernetes.io/warn=restricted",
                       "pod-security.kubernetes.io/audit=restricted", "--overwrite")
    assert _warnings(proc.stderr) == []
    proc = kubectl.run("label", "ns", namespace, f"{enforce}=baseline", "--overwrite")
    assert _warnings(proc.stderr) == []
    # the same level at another version is a new enforce policy
    proc = kubectl.run("label", "ns", namespace, f"{enforce}-version=v1.30", "--overwrite")
    assert _warnings(proc.stderr) == [
        f'Warning: existing pods in namespace "{namespace}" violate the new PodSecurity enforce level '
        '"baseline:v1.30"',
        "Warning: h1: host namespaces"]

    # an invalid level is refused (422), nothing is changed
    proc = kubectl.run("label", "ns", namespace, f"{enforce}=strict", "--overwrite", check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f'The Namespace "{namespace}" is invalid: metadata.labels[{enforce}]: Invalid '
                                   'value: "strict": must be one of privileged, baseline, restricted')
