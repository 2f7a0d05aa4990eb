"""Field managers as kube records them: kapi's controllers write as ``kube-controller-manager``; a Namespace's
defaulted name label is its creator's.

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


def test_kubectl_create_namespace_owns_the_defaulted_name_label(kubectl: Kubectl, namespace: str) -> None:
    # core.sh run_namespace_tests: kubectl create namespace my-namespace; SetDefaults_Namespace adds the label while
    # decoding, before the field manager, so kubectl-create owns it
    name = f"{namespace}-own"
    kubectl.run("create", "namespace", name)
    try:
        obj = json.loads(kubectl.run("get", "namespace", name, "-o", "json", "--show-managed-fields").stdout)
        assert obj["metadata"]["labels"]["kubernetes.io/metadata.name"] == name
        assert [(m["manager"], m["operation"], m["fieldsV1"]) for m in obj["metadata"]["managedFields"]] == [
            ("kubectl-create", "Update",
             {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/metadata.name": {}}}})]
    finally:
        kubectl.run("delete", "namespace", name, "--wait=false")
