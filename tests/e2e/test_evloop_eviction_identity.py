"""Who admission sees in the writes of ``pods/<name>/eviction``, as kube-apiserver 1.37 makes them
(pkg/registry/core/pod/storage/eviction.go).

- The PodDisruptionBudget's ``UpdateStatus`` goes through the server's loopback client: a whole request of its
  own, admitted (plugins, webhooks, ValidatingAdmissionPolicies) as the loopback user, ``system:apiserver`` in
  groups ``system:authenticated`` and ``system:masters`` (k8s.io/apiserver server/config.go
  AuthorizeClientBearerToken), never as the user who asked for the eviction; its refusal is the eviction's answer.
- The Pod's ``DisruptionTarget`` condition is written by the registry through its own (status) store with
  ``rest.ValidateAllObjectFunc`` / ``ValidateAllObjectUpdateFunc``: the status strategy runs, no admission plugin,
  webhook or policy does.

- The Eviction itself is what the requester's admission sees: a CREATE of ``pods/eviction`` (kind ``policy/v1``
  Eviction, its namespace the request's) through plugins, webhooks and policies (createHandler); the pod's delete
  runs ``r.store.Delete`` with ``rest.ValidateAllObjectFunc``, no admission at all.

So a user allowed only ``create`` on ``pods/eviction`` evicts a pod under a budget that user could not update.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import ssl
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from kapi.local.launcher import Stack
from tests.e2e.conftest import TOKENS, Kubectl
from tests.e2e.test_admission import apply, bound_policy, until
from tests.e2e.test_eviction_pdb import SUCCESS, _budget, _get, _pod
from tests.e2e.test_kube_parity_defaults import _raw

PDB_RULES = [{"apiGroups": ["policy"], "apiVersions": ["v1"], "operations": ["UPDATE"],
              "resources": ["poddisruptionbudgets/status"]}]
POD_STATUS_RULES = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"],
                     "resources": ["pods/status"]}]
# only kube's loopback user may write a budget's status, and not for pod "p2"
LOOPBACK_ONLY = [{
    "expression": "request.userInfo.username == 'system:apiserver' && "
                  "request.userInfo.groups == ['system:authenticated', 'system:masters'] && "
                  "!(has(object.status.disruptedPods) && 'p2' in object.status.disruptedPods)",
    "messageExpression": "'pdb status by ' + request.userInfo.username + ' in ' + "
                         "request.userInfo.groups.join(',')"}]


def _as_alice(stack: Stack, method: str, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    """(status, decoded body) of one request of the token user alice through Envoy."""
    code, out, _ = _send(stack, method, path, body)
    return code, out


def _send(stack: Stack, method: str, path: str, body: Any, *, admin: bool = False
          ) -> tuple[int, dict[str, Any], list[str]]:
    """(status, decoded body, Warning header values) of one request through Envoy, of alice (bearer token) or
    of the admin (client certificate)."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    headers = {"Content-Type": "application/json"}
    if admin:
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    else:
        headers["Authorization"] = f"Bearer {TOKENS['alice']}"
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname or "", url.port, context=context, timeout=60)
    try:
        conn.request(method, path, body=json.dumps(body).encode(), headers=headers)
        response = conn.getresponse()
        return response.status, json.loads(response.read()), response.headers.get_all("Warning") or []
    finally:
        conn.close()


@contextlib.contextmanager
def _warning_policy(kubectl: Kubectl, namespace: str, name: str, rules: list[dict[str, Any]], message: str
                    ) -> Iterator[str]:
    """A ValidatingAdmissionPolicy failing every request of ``rules`` in ``namespace``, bound with action Warn."""
    apply(kubectl, "", {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                        "metadata": {"name": name}, "spec": {"failurePolicy": "Fail", "matchConstraints": {
                            "resourceRules": rules}, "validations": [{"expression": "false", "message": message}]}})
    apply(kubectl, "", {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                        "metadata": {"name": name + "-b"}, "spec": {"policyName": name, "validationActions": ["Warn"],
                                                                    "matchResources": {"namespaceSelector": {
                                                                        "matchLabels": {"kubernetes.io/metadata.name":
                                                                                        namespace}}}}})
    try:
        yield f"299 - \"Validation failed for ValidatingAdmissionPolicy '{name}' with binding '{name}-b': {message}\""
    finally:
        kubectl.run("delete", "validatingadmissionpolicybinding", name + "-b")
        kubectl.run("delete", "validatingadmissionpolicy", name)


def _evictor(kubectl: Kubectl, namespace: str) -> None:
    """alice may create pods/eviction in ``namespace``, nothing else."""
    kubectl.run("-n", namespace, "create", "role", "evictor", "--verb=create", "--resource=pods/eviction")
    kubectl.run("-n", namespace, "create", "rolebinding", "evictor", "--role=evictor", "--user=alice")


def _evict(stack: Stack, namespace: str, name: str, meta: dict[str, str] | None = None
           ) -> tuple[int, dict[str, Any]]:
    return _as_alice(stack, "POST", f"/api/v1/namespaces/{namespace}/pods/{name}/eviction",
                     {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, **(meta or {})}})


def test_budget_status_is_admitted_as_the_loopback_user(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """A policy admitting budget status writes of system:apiserver only: alice's eviction passes it (she could not
    write the status herself, and the admin's own write is refused naming the admin), and a refusal of the
    loopback write (here for pod p2) is the eviction's answer, naming system:apiserver; p2 stays."""
    for name in ("p1", "p2"):
        _pod(stack, namespace, name, {"app": "ev"})
    pdb = _budget(stack, namespace, "budget", {"matchLabels": {"app": "ev"}},
                  {"disruptionsAllowed": 2, "currentHealthy": 2, "desiredHealthy": 0, "expectedPods": 2},
                  spec={"minAvailable": 0})  # what a disruption controller would compute too
    _evictor(kubectl, namespace)
    status_path = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/budget/status"
    code, body = _as_alice(stack, "PUT", status_path, pdb)
    assert (code, body["reason"], body["message"]) == (403, "Forbidden", (
        f'poddisruptionbudgets.policy "budget" is forbidden: User "alice" cannot update resource '
        f'"poddisruptionbudgets/status" in API group "policy" in the namespace "{namespace}"'))
    with bound_policy(kubectl, namespace, f"pdbst-{namespace}", PDB_RULES, LOOPBACK_ONLY) as pname:
        denied = f"ValidatingAdmissionPolicy '{pname}' with binding '{pname}-b' denied request: pdb status by "

        def admin_refused() -> bool:
            _, current = _get(stack, status_path)
            code, out = _raw(stack, "PUT", status_path, current)
            return code == 422 and json.loads(out)["message"] == (
                f'poddisruptionbudgets.policy "budget" is forbidden: {denied}kubernetes-admin in '
                "system:masters,system:authenticated")

        assert until(admin_refused, 20)
        assert _evict(stack, namespace, "p1") == (201, SUCCESS)
        _, stored = _get(stack, status_path)
        assert stored["status"]["disruptionsAllowed"] == 1 and list(stored["status"]["disruptedPods"]) == ["p1"]
        assert _get(stack, f"/api/v1/namespaces/{namespace}/pods/p1")[0] == 404
        code, body = _evict(stack, namespace, "p2")
        assert (code, body["reason"], body["message"]) == (422, "Invalid", (
            f'poddisruptionbudgets.policy "budget" is forbidden: {denied}system:apiserver in '
            "system:authenticated,system:masters"))
        assert _get(stack, f"/api/v1/namespaces/{namespace}/pods/p2")[0] == 200
        _, stored = _get(stack, status_path)
        assert list(stored["status"]["disruptedPods"]) == ["p1"]


def test_pod_condition_write_runs_no_admission_policy(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """A policy refusing every pods/status update: the admin's own is refused, yet alice's eviction of a pod
    bound to a node writes its DisruptionTarget condition (no policy runs on the registry's own write)."""
    _pod(stack, namespace, "bound", {"app": "bound"}, spec={"nodeName": "n1"})
    _evictor(kubectl, namespace)
    pod_path = f"/api/v1/namespaces/{namespace}/pods/bound"
    refusal = [{"expression": "false", "message": "no pod status"}]
    with bound_policy(kubectl, namespace, f"podst-{namespace}", POD_STATUS_RULES, refusal) as pname:
        def admin_refused() -> bool:
            _, current = _get(stack, pod_path)
            code, out = _raw(stack, "PUT", f"{pod_path}/status", current)
            return code == 422 and json.loads(out)["message"] == (
                f"pods \"bound\" is forbidden: ValidatingAdmissionPolicy '{pname}' with binding '{pname}-b' "
                "denied request: no pod status")

        assert until(admin_refused, 20)
        assert _evict(stack, namespace, "bound") == (201, SUCCESS)
        code, pod = _get(stack, pod_path)
        assert code == 200 and pod["metadata"]["deletionTimestamp"]
        assert [(c["type"], c["status"], c["reason"]) for c in pod["status"]["conditions"]
                if c["type"] == "DisruptionTarget"] == [("DisruptionTarget", "True", "EvictionByEvictionAPI")]
    _raw(stack, "DELETE", f"{pod_path}?gracePeriodSeconds=0")


def test_the_eviction_is_admitted_and_the_pod_delete_is_not(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """A policy on pods/eviction CREATE sees alice's Eviction (kind policy/v1 Eviction, namespace filled in) and
    refuses pod "keep"; a policy refusing every pod DELETE refuses the admin's, yet alice's eviction of "go"
    deletes it. An Eviction of another namespace is kube's 400."""
    for name in ("keep", "go"):
        _pod(stack, namespace, name, {"app": "adm"}, ready=None)  # Pending: deleted whatever the budgets
    _evictor(kubectl, namespace)
    evictions = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods/eviction"]}]
    deletes = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["pods"]}]
    seen = [{"expression": "object.metadata.name != 'keep'",
             "messageExpression": "'no evicting ' + object.metadata.name + ' as ' + request.userInfo.username + "
                                  "' kind ' + request.kind.group + '/' + request.kind.version + ' ' + "
                                  "request.kind.kind + ' in ' + object.metadata.namespace"}]
    with bound_policy(kubectl, namespace, f"evc-{namespace}", evictions, seen) as evc, \
            bound_policy(kubectl, namespace, f"del-{namespace}", deletes,
                         [{"expression": "false", "message": "no pod deletes"}]) as dels:
        def refused(name: str) -> bool:
            code, out = _raw(stack, "DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}?dryRun=All")
            return code == 422 and json.loads(out)["message"] == (
                f"pods \"{name}\" is forbidden: ValidatingAdmissionPolicy '{dels}' with binding '{dels}-b' "
                "denied request: no pod deletes")

        assert until(lambda: refused("keep") and _evict(stack, namespace, "keep")[0] == 422, 20)
        code, body = _evict(stack, namespace, "keep")
        assert (code, body["reason"], body["message"]) == (422, "Invalid", (
            f"pods \"keep\" is forbidden: ValidatingAdmissionPolicy '{evc}' with binding '{evc}-b' denied request: "
            f"no evicting keep as alice kind policy/v1 Eviction in {namespace}"))
        assert _get(stack, f"/api/v1/namespaces/{namespace}/pods/keep")[0] == 200
        code, body = _evict(stack, namespace, "go", {"namespace": "elsewhere"})
        assert (code, body["message"]) == (400, "the namespace of the provided object does not match the "
                                                "namespace sent on the request")
        assert _evict(stack, namespace, "go") == (201, SUCCESS)
        assert _get(stack, f"/api/v1/namespaces/{namespace}/pods/go")[0] == 404


def test_the_loopback_write_s_warnings_stay_with_the_loopback_client(stack: Stack, kubectl: Kubectl,
                                                                     namespace: str) -> None:
    """Warn-bound policies on the Eviction and on the budget's status: alice's answer carries the Eviction's
    warning (her request's admission), not the budget write's (the loopback client's own request)."""
    _pod(stack, namespace, "w1", {"app": "warn"})
    _budget(stack, namespace, "budget", {"matchLabels": {"app": "warn"}},
            {"disruptionsAllowed": 1, "currentHealthy": 1, "desiredHealthy": 0, "expectedPods": 1},
            spec={"minAvailable": 0})
    _evictor(kubectl, namespace)
    evictions = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods/eviction"]}]
    status_path = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets/budget/status"
    eviction_path = f"/api/v1/namespaces/{namespace}/pods/w1/eviction"
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "w1"}}
    with _warning_policy(kubectl, namespace, f"wev-{namespace}", evictions, "eviction noted") as on_eviction, \
            _warning_policy(kubectl, namespace, f"wpdb-{namespace}", PDB_RULES, "budget noted") as on_budget:
        # both policies in force: a dry-run eviction (no budget write) and the admin's own status write warn
        assert until(lambda: on_eviction in _send(stack, "POST", f"{eviction_path}?dryRun=All", eviction)[2], 20)
        assert until(lambda: on_budget in _send(stack, "PUT", status_path, _get(stack, status_path)[1],
                                                admin=True)[2], 20)
        code, out, warnings = _send(stack, "POST", eviction_path, eviction)
        assert (code, out, warnings) == (201, SUCCESS, [on_eviction])
        _, stored = _get(stack, status_path)
        assert list(stored["status"]["disruptedPods"]) == ["w1"]  # the loopback write ran, with its warning
