"""kube-apiserver 1.37's answers for rules docs/kube-parity.md listed as gaps (issue 17), through kubectl.

- Pod applyAppArmorVersionSkew: a deprecated ``container.apparmor.security.beta.kubernetes.io/<container>``
  annotation becomes the container's ``securityContext.appArmorProfile`` on create, with kube's deprecation
  warning ahead of WarningsOnCreate's.
"""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl

APPARMOR = "container.apparmor.security.beta.kubernetes.io/"


def test_pod_apparmor_annotation_becomes_the_field_with_a_warning(kubectl: Kubectl, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "armored", "annotations": {APPARMOR + "c": "localhost/custom",
                                                           APPARMOR + "d": "runtime/default"}},
           "spec": {"securityContext": {"appArmorProfile": {"type": "RuntimeDefault"}},
                    "containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "nginx"}]}}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod))
    assert proc.stderr.splitlines() == [
        f'Warning: metadata.annotations[{APPARMOR}c]: deprecated since v1.30; use the "appArmorProfile" field '
        "instead"], proc.stderr
    stored = json.loads(kubectl.run("-n", namespace, "get", "pod", "armored", "-o", "json").stdout)
    containers = stored["spec"]["containers"]
    assert containers[0]["securityContext"] == {"appArmorProfile": {"type": "Localhost",
                                                                    "localhostProfile": "custom"}}
    assert "securityContext" not in containers[1]  # the Pod's profile already says runtime/default
    assert stored["metadata"]["annotations"] == pod["metadata"]["annotations"]
