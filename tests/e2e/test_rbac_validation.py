"""kube's RBAC validation through the whole stack: bad rules, roleRefs and subjects are 422 Invalid with kube's
field paths and messages as kubectl shows them, nothing is stored, a binding's roleRef never changes, and
kubectl's own RBAC objects stay valid. And the Service refusals of the same break-it pass (nodePort on a
ClusterIP Service, clusterIP/clusterIPs out of sync, two IPs in kapi's single-stack cluster, ExternalName with
a clusterIP, a headless Service given an IP)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import Kubectl

G = "rbac.authorization.k8s.io"
V1 = f"{G}/v1"
NS = "t-rbac-validation"


@pytest.fixture(scope="module")
def ns(kubectl: Kubectl) -> str:
    kubectl.run("create", "namespace", NS)
    return NS


def _refused(kubectl: Kubectl, obj: dict[str, Any]) -> str:
    """Create ``obj`` with kubectl; assert it failed and nothing was stored; kubectl's stderr."""
    scope = ["-n", NS] if obj["kind"] in ("Role", "RoleBinding") else []
    proc = kubectl.run(*scope, "create", "-f", "-", input=json.dumps(obj), check=False)
    assert proc.returncode != 0, proc.stdout
    plural = obj["kind"].lower() + "s"
    assert kubectl.run(*scope, "get", f"{plural}.{G}", obj["metadata"]["name"], check=False).returncode != 0
    return proc.stderr


@pytest.mark.parametrize(("obj", "error"), [
    ({"apiVersion": V1, "kind": "Role", "metadata": {"name": "no-verbs"},
      "rules": [{"apiGroups": [""], "resources": ["pods"]}]},
     'The Role "no-verbs" is invalid: rules[0].verbs: Required value: verbs must contain at least one value'),
    ({"apiVersion": V1, "kind": "Role", "metadata": {"name": "urls"},
      "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]},
     'The Role "urls" is invalid: rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules '
     "cannot apply to non-resource URLs"),
    ({"apiVersion": V1, "kind": "ClusterRole", "metadata": {"name": "t-rbac-mixed"},
      "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"], "resources": ["pods"]}]},
     'The ClusterRole "t-rbac-mixed" is invalid: rules[0].nonResourceURLs: Invalid value: []string{"/healthz"}: '
     "rules cannot apply to both regular resources and non-resource URLs"),
    ({"apiVersion": V1, "kind": "RoleBinding", "metadata": {"name": "evil"},
      "roleRef": {"apiGroup": "evil.io", "kind": "ClusterRole", "name": "view"}},
     'The RoleBinding "evil" is invalid: roleRef.apiGroup: Unsupported value: "evil.io": supported values: '
     '"rbac.authorization.k8s.io"'),
    ({"apiVersion": V1, "kind": "RoleBinding", "metadata": {"name": "foo"},
      "roleRef": {"apiGroup": G, "kind": "Foo", "name": ""}},
     'The RoleBinding "foo" is invalid: \n* roleRef.kind: Unsupported value: "Foo": supported values: "Role", '
     '"ClusterRole"\n* roleRef.name: Required value\n'),
    ({"apiVersion": V1, "kind": "ClusterRoleBinding", "metadata": {"name": "t-rbac-sa"},
      "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "view"},
      "subjects": [{"kind": "ServiceAccount", "name": "builder"}, {"kind": "Robot", "name": "r2"}]},
     'The ClusterRoleBinding "t-rbac-sa" is invalid: \n* subjects[0].namespace: Required value\n* subjects[1].kind: '
     'Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"\n'),
], ids=["no-verbs", "namespaced-urls", "urls-and-resources", "ref-group", "ref-kind-and-name", "subjects"])
def test_invalid_rbac_is_refused(kubectl: Kubectl, ns: str, obj: dict[str, Any], error: str) -> None:
    stderr = _refused(kubectl, obj)
    assert error in stderr, stderr


def test_role_ref_cannot_change(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("-n", ns, "create", "rolebinding", "viewers", "--clusterrole=view", "--user=alice",
                "--serviceaccount=t-rbac-validation:builder")
    proc = kubectl.run("-n", ns, "patch", "rolebinding", "viewers", "--type=merge", "-p",
                       json.dumps({"roleRef": {"name": "edit"}}), check=False)
    assert proc.returncode != 0
    assert ('The RoleBinding "viewers" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:'
            '"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef') in proc.stderr
    stored = json.loads(kubectl.run("-n", ns, "get", "rolebinding", "viewers", "-o", "json").stdout)
    assert stored["roleRef"]["name"] == "view"
    # Subjects may change; kubectl's own objects (create role/clusterrole with URLs) are valid.
    kubectl.run("-n", ns, "patch", "rolebinding", "viewers", "--type=merge", "-p",
                json.dumps({"subjects": [{"kind": "Group", "name": "devs"}]}))
    stored = json.loads(kubectl.run("-n", ns, "get", "rolebinding", "viewers", "-o", "json").stdout)
    assert stored["subjects"] == [{"apiGroup": G, "kind": "Group", "name": "devs"}]
    kubectl.run("-n", ns, "create", "role", "reader", "--verb=get,list", "--resource=pods,deployments.apps")
    kubectl.run("create", "clusterrole", "t-rbac-health", "--verb=get", "--non-resource-url=/healthz")
    kubectl.run("delete", "clusterrole", "t-rbac-health")


# ------------------------------------------------------------ Service refusals of the same break-it pass

def _service(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80}], **spec}}


@pytest.mark.parametrize(("obj", "error"), [
    (_service("np", ports=[{"port": 80, "nodePort": 30099}]),
     "The Service \"np\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"),
    (_service("mismatch", clusterIP="10.96.0.50", clusterIPs=["10.96.0.51"]),
     'The Service "mismatch" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.51"}: first value must '
     "match `clusterIP`"),
    (_service("two", clusterIP="10.96.0.50", clusterIPs=["10.96.0.50", "fd00::50"]),
     "The Service \"two\" is invalid: \n* spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be "
     "'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified\n* spec.clusterIPs[1]: "
     'Invalid value: []string{"10.96.0.50", "fd00::50"}: IPv6 is not configured on this cluster\n'),
    (_service("ext", type="ExternalName", externalName="db.example.com", clusterIP="10.96.0.50"),
     'The Service "ext" is invalid: spec.clusterIPs: Forbidden: may not be set for ExternalName services'),
], ids=["nodeport-on-clusterip", "clusterip-mismatch", "two-ips-single-stack", "externalname-clusterip"])
def test_invalid_service_is_refused(kubectl: Kubectl, ns: str, obj: dict[str, Any], error: str) -> None:
    proc = kubectl.run("-n", ns, "create", "-f", "-", input=json.dumps(obj), check=False)
    assert proc.returncode != 0 and error in proc.stderr, proc.stderr
    assert kubectl.run("-n", ns, "get", "service", obj["metadata"]["name"], check=False).returncode != 0


def test_headless_service_stays_headless(kubectl: Kubectl, ns: str) -> None:
    kubectl.run("-n", ns, "create", "-f", "-", input=json.dumps(_service("headless", clusterIP="None")))
    proc = kubectl.run("-n", ns, "patch", "service", "headless", "--type=merge", "-p",
                       json.dumps({"spec": {"clusterIP": "10.96.0.60"}}), check=False)
    assert proc.returncode != 0
    assert ('The Service "headless" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.60"}: may '
            "not change once set") in proc.stderr, proc.stderr
    stored = json.loads(kubectl.run("-n", ns, "get", "service", "headless", "-o", "json").stdout)
    assert (stored["spec"]["clusterIP"], stored["spec"]["clusterIPs"]) == ("None", ["None"])
    # A NodePort Service patched to ClusterIP drops its node port, as kube's type change does.
    kubectl.run("-n", ns, "create", "service", "nodeport", "np2", "--tcp=80:80")
    kubectl.run("-n", ns, "patch", "service", "np2", "--type=merge", "-p", json.dumps({"spec": {"type": "ClusterIP"}}))
    stored = json.loads(kubectl.run("-n", ns, "get", "service", "np2", "-o", "json").stdout)
    assert "nodePort" not in stored["spec"]["ports"][0]
