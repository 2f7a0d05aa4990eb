"""request.options on a DELETE as kube hands it to admission: the DeleteOptions after rest.BeforeDelete filled
them in (apiserver/pkg/registry/rest/delete.go; pkg/registry/core/pod/strategy.go CheckGracefulDelete): a Pod's
grace period is always there (the asked one, else terminationGracePeriodSeconds, 0 for an unscheduled Pod), a
negative one is 1 for every kind, and a DELETE of a Pod whose graceful deletion is pending (not shortened) is
answered without admission (Store.Delete's gracefulPending)."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl
from tests.e2e.test_admission import bound_policy, until

GRACE = ("'grace ' + (has(request.options.gracePeriodSeconds) ? string(request.options.gracePeriodSeconds) : "
         "'unset')")


def _pod(name: str, node: str = "") -> str:
    spec = {"terminationGracePeriodSeconds": 17, "containers": [{"name": "c", "image": "nginx"}]}
    if node:
        spec["nodeName"] = node
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def _denied(kubectl: Kubectl, pname: str, *args: str) -> str:
    proc = kubectl.run(*args, check=False)
    assert proc.returncode != 0, proc.stdout
    prefix = f"ValidatingAdmissionPolicy '{pname}' with binding '{pname}-b' denied request: "
    return proc.stderr.split(prefix, 1)[1].split('"', 1)[0].strip() if prefix in proc.stderr else proc.stderr


def test_delete_options_as_before_delete_filled_them(kubectl: Kubectl, namespace: str) -> None:
    ns = ("-n", namespace)
    kubectl.run(*ns, "create", "-f", "-", input=_pod("loose"))
    kubectl.run(*ns, "create", "-f", "-", input=_pod("bound", node="n1"))
    kubectl.run(*ns, "create", "-f", "-", input=_pod("leaving", node="n1"))
    kubectl.run(*ns, "create", "configmap", "cm")
    kubectl.run(*ns, "delete", "pod", "leaving", "--wait=false")  # graceful: pending for 17 s
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"],
              "resources": ["pods", "configmaps"]}]
    base = f"/api/v1/namespaces/{namespace}"
    with bound_policy(kubectl, namespace, f"grace-{namespace}", rules,
                      [{"expression": "false", "messageExpression": GRACE}]) as pname:
        assert until(lambda: _denied(kubectl, pname, *ns, "delete", "pod", "loose") == "grace 0", 20)
        assert _denied(kubectl, pname, *ns, "delete", "pod", "bound", "--wait=false") == "grace 17"
        assert _denied(kubectl, pname, *ns, "delete", "pod", "bound", "--grace-period=5") == "grace 5"
        assert _denied(kubectl, pname, "delete", "--raw", f"{base}/pods/bound?gracePeriodSeconds=-5") == "grace 1"
        assert _denied(kubectl, pname, *ns, "delete", "configmap", "cm") == "grace unset"
        assert _denied(kubectl, pname, "delete", "--raw", f"{base}/configmaps/cm?gracePeriodSeconds=-5") == \
            "grace 1"
        # pending and not shortened: no admission, the Pod is answered as it is
        kubectl.run(*ns, "delete", "pod", "leaving", "--wait=false")
        assert _denied(kubectl, pname, *ns, "delete", "pod", "leaving", "--grace-period=3") == "grace 3"
    kubectl.run(*ns, "delete", "pod", "--all", "--grace-period=0", "--force")
