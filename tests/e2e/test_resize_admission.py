"""pods/resize through the default-on admission plugins end to end: ResourceQuota charges a resize up (and refuses
one past ``hard`` with kube's message), LimitRanger checks the resized limits, PodSecurity lets a resize of a Pod
that violates the namespace's enforce level through without a warning (isSignificantPodUpdate)."""

from __future__ import annotations

import json
import subprocess

from tests.e2e.conftest import Kubectl

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "c", "image": "nginx",
                                "resources": {"requests": {"cpu": "500m", "memory": "128Mi"},
                                              "limits": {"cpu": "1", "memory": "256Mi"}}}]}}
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute"},
         "spec": {"hard": {"requests.cpu": "900m"}}}
LIMITS = {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
          "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}


def resize(kubectl: Kubectl, namespace: str, resources: dict[str, object], check: bool = True
           ) -> subprocess.CompletedProcess[str]:
    return kubectl.run("-n", namespace, "patch", "pod", "web", "--subresource", "resize", "-p", json.dumps(
        {"spec": {"containers": [{"name": "c", "resources": resources}]}}), check=check)


def used(kubectl: Kubectl, namespace: str) -> dict[str, str]:
    quota = json.loads(kubectl.run("-n", namespace, "get", "resourcequota", "compute", "-o", "json").stdout)
    return dict((quota.get("status") or {}).get("used") or {})


def test_resize_goes_through_quota_limit_ranger_and_pod_security(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(QUOTA))
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(POD))
    assert used(kubectl, namespace) == {"requests.cpu": "500m"}
    resize(kubectl, namespace, {"requests": {"cpu": "800m"}})
    assert used(kubectl, namespace) == {"requests.cpu": "800m"}
    proc = resize(kubectl, namespace, {"requests": {"cpu": "1"}}, check=False)
    assert proc.returncode != 0
    assert ('Error from server (Forbidden): pods "web" is forbidden: exceeded quota: compute, requested: '
            "requests.cpu=200m, used: requests.cpu=800m, limited: requests.cpu=900m") in proc.stderr
    # LimitRanger validates the resized container
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(LIMITS))
    proc = resize(kubectl, namespace, {"requests": {"cpu": "800m"}, "limits": {"cpu": "2"}}, check=False)
    assert ('Error from server (Forbidden): pods "web" is forbidden: maximum cpu usage per Container is 1, but '
            "limit is 2") in proc.stderr, proc.stderr
    # the Pod violates restricted, which the namespace now enforces: a resize is still allowed, with no warning
    kubectl.run("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted",
                "pod-security.kubernetes.io/warn=restricted")
    proc = resize(kubectl, namespace, {"requests": {"cpu": "700m"}})
    assert "would violate PodSecurity" not in proc.stderr, proc.stderr
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json").stdout)
    assert stored["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "700m"
