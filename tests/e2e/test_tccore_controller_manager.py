"""The field manager of what kapi's controllers write is kube's, ``kube-controller-manager``.

kube-controller-manager's clients send client-go's DefaultKubernetesUserAgent (``kube-controller-manager/<version>
(<os>/<arch>) kubernetes/<commit>/<controller>``) and the apiserver names a write's field manager after the
User-Agent's first segment, so a namespace's ``kube-root-ca.crt`` (root-ca-cert-publisher) and a ResourceQuota's
status (resourcequota controller, seen replaying kube's test/cmd/core.sh quota steps) show
``manager: kube-controller-manager`` (was: ``kapi-controllers``).
"""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl, wait_for


def _managers(kubectl: Kubectl, namespace: str, *what: str) -> list[tuple[str, str, str]]:
    obj = json.loads(kubectl.run("get", "-n", namespace, *what, "-o", "json", "--show-managed-fields").stdout)
    return [(m["manager"], m["operation"], m.get("subresource", "")) for m in obj["metadata"].get("managedFields", [])]


def test_controller_writes_are_managed_by_kube_controller_manager(kubectl: Kubectl, namespace: str) -> None:
    ca = wait_for(lambda: _managers(kubectl, namespace, "configmap", "kube-root-ca.crt"))
    assert ca == [("kube-controller-manager", "Update", "")]
    kubectl.run("create", "-n", namespace, "quota", "test-quota", "--hard=pods=3")

    def status_written() -> list[tuple[str, str, str]]:
        return [m for m in _managers(kubectl, namespace, "quota", "test-quota") if m[2] == "status"]

    assert wait_for(status_written) == [("kube-controller-manager", "Update", "status")]
