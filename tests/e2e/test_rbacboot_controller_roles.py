"""kube-apiserver's bootstrap controller roles over the wire (bootstrappolicy/controller_policy.go and
namespace_policy.go): ``system:controller:deployment-controller`` is kube's ClusterRole, bound to the
ServiceAccount kube-system/deployment-controller, which may update deployments/status and may not delete
secrets; the kube-system leader-locking RoleBinding is kube's."""

from __future__ import annotations

import yaml

from tests.e2e.conftest import Kubectl

EVENTS = {"apiGroups": ["", "events.k8s.io"], "resources": ["events"], "verbs": ["create", "patch", "update"]}
DEPLOYMENT_CONTROLLER_RULES = [
    {"apiGroups": ["apps", "extensions"], "resources": ["deployments"], "verbs": ["get", "list", "update", "watch"]},
    {"apiGroups": ["apps", "extensions"], "resources": ["deployments/status"], "verbs": ["update"]},
    {"apiGroups": ["apps", "extensions"], "resources": ["deployments/finalizers"], "verbs": ["update"]},
    {"apiGroups": ["apps", "extensions"], "resources": ["replicasets"],
     "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "update", "watch"]},
    EVENTS,
]
SA = "system:serviceaccount:kube-system:deployment-controller"


def test_deployment_controller_role_is_kubes(kubectl: Kubectl) -> None:
    role = yaml.safe_load(kubectl.run("get", "clusterrole", "system:controller:deployment-controller",
                                      "-o", "yaml").stdout)
    assert role["rules"] == DEPLOYMENT_CONTROLLER_RULES
    assert role["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert role["metadata"]["annotations"] == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    assert "aggregationRule" not in role
    binding = yaml.safe_load(kubectl.run("get", "clusterrolebinding", "system:controller:deployment-controller",
                                         "-o", "yaml").stdout)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "system:controller:deployment-controller"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "deployment-controller",
                                    "namespace": "kube-system"}]


def test_deployment_controller_service_account_can_and_cannot(kubectl: Kubectl) -> None:
    yes = kubectl.run("auth", "can-i", f"--as={SA}", "update", "deployments/status", "-A", check=False)
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes"), yes.stderr
    no = kubectl.run("auth", "can-i", f"--as={SA}", "delete", "secrets", "-A", check=False)
    assert (no.returncode, no.stdout.strip()) == (1, "no"), no.stderr


def test_leader_locking_role_binding_is_kubes(kubectl: Kubectl) -> None:
    binding = yaml.safe_load(kubectl.run("-n", "kube-system", "get", "rolebinding",
                                         "system::leader-locking-kube-controller-manager", "-o", "yaml").stdout)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                  "name": "system::leader-locking-kube-controller-manager"}
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "system:kube-controller-manager"},
        {"kind": "ServiceAccount", "name": "kube-controller-manager", "namespace": "kube-system"},
        {"kind": "ServiceAccount", "name": "leader-election-controller", "namespace": "kube-system"}]
    can = kubectl.run("auth", "can-i", "--as=system:serviceaccount:kube-system:leader-election-controller",
                      "update", "leases.coordination.k8s.io", "-n", "kube-system", check=False)
    assert can.stdout.strip() == "yes", can.stderr
    public = kubectl.run("auth", "can-i", "--as=system:serviceaccount:kube-system:bootstrap-signer",
                         "update", "configmap/cluster-info", "-n", "kube-public", check=False)
    assert public.stdout.strip() == "yes", public.stderr
