"""Authorization end to end with kubectl: ``auth can-i``, access reviews, RBAC escalation, the seeds' pitfalls, 503.

The two operating pitfalls from the seeds ("运营过程中出现过的陷阱"): a component
switched from update to patch without the ``patch`` verb is refused, and a
component reading a resource it was never granted is refused.
"""

from __future__ import annotations

import json
import time

from kapi.local.launcher import Stack

from .conftest import Kubectl


def can_i(k: Kubectl, *args: str) -> tuple[str, int]:
    proc = k.run("auth", "can-i", *args, check=False)
    return proc.stdout.strip(), proc.returncode


def eventually(check: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if check():  # type: ignore[operator]
            return
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.05)


def test_auth_can_i(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    assert can_i(kubectl, "create", "pods", "-n", namespace) == ("yes", 0)
    assert can_i(kubectl, "get", "/logs") == ("yes", 0)
    assert can_i(alice, "create", "pods", "-n", namespace) == ("no", 1)
    assert can_i(alice, "get", "/healthz") == ("yes", 0)  # system:public-info-viewer
    assert can_i(alice, "get", "/logs") == ("no", 1)
    assert can_i(alice, "create", "selfsubjectaccessreviews") == ("yes", 0)  # system:basic-user
    kubectl.run("create", "role", "log-reader", "-n", namespace, "--verb=get", "--resource=pods/log")
    kubectl.run("create", "rolebinding", "alice-logs", "-n", namespace, "--role=log-reader", "--user=alice")
    eventually(lambda: can_i(alice, "get", "pods", "--subresource=log", "-n", namespace) == ("yes", 0))
    assert can_i(alice, "get", "pods", "-n", namespace) == ("no", 1)
    assert can_i(alice, "get", "pods", "--subresource=log", "-n", "default") == ("no", 1)
    listing = alice.run("auth", "can-i", "--list", "-n", namespace).stdout
    assert "pods/log" in listing and "[get]" in listing
    assert "selfsubjectaccessreviews.authorization.k8s.io" in listing and "[/healthz]" in listing
    assert "pods/log" not in alice.run("auth", "can-i", "--list", "-n", "default").stdout


def test_subject_access_reviews(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    def review(k: Kubectl, body: dict[str, object]) -> dict[str, object]:
        return json.loads(k.run("create", "--validate=false", "-o", "json", "-f", "-", input=json.dumps(body)).stdout)

    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
           "spec": {"user": "alice", "groups": ["dev"],
                    "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": namespace}}}
    assert review(kubectl, sar)["status"] == {"allowed": False}
    kubectl.run("create", "rolebinding", "dev-view", "-n", namespace, "--clusterrole=view", "--group=dev")
    eventually(lambda: review(kubectl, sar)["status"].get("allowed") is True)  # type: ignore[union-attr]
    assert review(kubectl, sar)["status"] == {
        "allowed": True, "reason": f'RBAC: allowed by RoleBinding "dev-view/{namespace}" of ClusterRole "view" '
                                   f'to Group "dev"'}
    local = {**sar, "kind": "LocalSubjectAccessReview", "metadata": {"namespace": namespace}}
    assert review(kubectl, local)["status"]["allowed"] is True  # type: ignore[index]
    wrong = {**local, "spec": {**sar["spec"], "resourceAttributes": {"verb": "list", "resource": "configmaps",  # type: ignore[dict-item]
                                                                     "namespace": "default"}}}
    refused = kubectl.run("create", "-f", "-", input=json.dumps(wrong), check=False)
    assert refused.returncode == 1 and "must match metadata.namespace" in refused.stderr
    invalid = kubectl.run("create", "--validate=false", "-f", "-", check=False, input=json.dumps(
        {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"user": "x"}}))
    assert "exactly one of nonResourceAttributes or resourceAttributes must be specified" in invalid.stderr
    # Only SelfSubject* reviews are open to everyone: alice may not ask about others.
    # --validate=false: kubectl validates create-only kinds itself (no PATCH operation in kube's OpenAPI), and
    # alice may not list the CRDs that check reads
    refused = alice.run("create", "--validate=false", "-f", "-", input=json.dumps(sar), check=False)
    assert 'cannot create resource "subjectaccessreviews" in API group "authorization.k8s.io"' in refused.stderr
    ssar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"nonResourceAttributes": {"verb": "get", "path": "/version"}}}
    assert review(alice, ssar)["status"]["allowed"] is True  # type: ignore[index]


def test_escalation_is_refused(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    kubectl.run("create", "rolebinding", "alice-admin", "-n", namespace, "--clusterrole=admin", "--user=alice")
    eventually(lambda: can_i(alice, "create", "roles", "-n", namespace) == ("yes", 0))
    alice.run("create", "role", "secret-reader", "-n", namespace, "--verb=get", "--resource=secrets")
    alice.run("create", "rolebinding", "bob-reads", "-n", namespace, "--role=secret-reader", "--user=bob")
    refused = alice.run("create", "role", "nodes", "-n", namespace, "--verb=get", "--resource=nodes",
                        check=False)
    assert refused.returncode == 1
    assert ('roles.rbac.authorization.k8s.io "nodes" is forbidden: user "alice" (groups=["dev" "alice-group" '
            '"system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n'
            '{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}') in refused.stderr
    refused = alice.run("create", "rolebinding", "root", "-n", namespace, "--clusterrole=cluster-admin",
                        "--user=alice", check=False)
    assert "is attempting to grant RBAC permissions not currently held" in refused.stderr
    # Widening an existing role by patch is an update of its rules: refused as well.
    refused = alice.run("patch", "role", "secret-reader", "-n", namespace, "--type=json", "-p",
                        '[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["nodes"],'
                        '"verbs":["list"]}}]', check=False)
    assert 'Resources:["nodes"], Verbs:["list"]' in refused.stderr
    # Relabelling grants nothing new and passes.
    alice.run("label", "role", "secret-reader", "-n", namespace, "team=a")


def test_pitfall_update_switched_to_patch_without_patch_verb(kubectl: Kubectl, alice: Kubectl,
                                                             namespace: str) -> None:
    kubectl.run("create", "configmap", "settings", "-n", namespace, "--from-literal=mode=a")
    kubectl.run("create", "role", "cm-updater", "-n", namespace, "--verb=get,update", "--resource=configmaps")
    kubectl.run("create", "rolebinding", "component", "-n", namespace, "--role=cm-updater", "--user=alice")
    eventually(lambda: can_i(alice, "update", "configmaps", "-n", namespace) == ("yes", 0))
    current = json.loads(alice.run("get", "configmap", "settings", "-n", namespace, "-o", "json").stdout)
    current["data"]["mode"] = "b"
    alice.run("replace", "-f", "-", input=json.dumps(current))  # the update the component used to do
    refused = alice.run("patch", "configmap", "settings", "-n", namespace, "-p", '{"data":{"mode":"c"}}',
                        check=False)
    assert refused.returncode == 1
    assert (f'Error from server (Forbidden): configmaps "settings" is forbidden: User "alice" cannot patch '
            f'resource "configmaps" in API group "" in the namespace "{namespace}"') in refused.stderr
    kubectl.run("patch", "role", "cm-updater", "-n", namespace, "--type=json", "-p",
                '[{"op":"add","path":"/rules/0/verbs/-","value":"patch"}]')
    eventually(lambda: alice.run("patch", "configmap", "settings", "-n", namespace, "-p", '{"data":{"mode":"c"}}',
                                 check=False).returncode == 0)


def test_pitfall_reading_a_resource_never_granted(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    kubectl.run("create", "role", "component", "-n", namespace, "--verb=get,list,watch", "--resource=configmaps")
    kubectl.run("create", "rolebinding", "component", "-n", namespace, "--role=component", "--user=alice")
    eventually(lambda: alice.run("get", "configmaps", "-n", namespace, check=False).returncode == 0)
    refused = alice.run("get", "leases.coordination.k8s.io", "-n", namespace, check=False)
    assert refused.returncode == 1
    assert (f'leases.coordination.k8s.io is forbidden: User "alice" cannot list resource "leases" in API group '
            f'"coordination.k8s.io" in the namespace "{namespace}"') in refused.stderr


def test_authz_unreachable_fails_closed(stack: Stack, kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    name = next(n for n in stack.processes if n.startswith("authz"))
    stack.kill_process(name)
    try:
        for k in (kubectl, alice):
            refused = k.run("get", "configmaps", "-n", namespace, "--request-timeout=20s", check=False)
            assert refused.returncode == 1
            assert "ServiceUnavailable" in refused.stderr or "503" in refused.stderr or \
                "service unavailable" in refused.stderr.lower(), refused.stderr
    finally:
        stack.restart_process(name)
    eventually(lambda: kubectl.run("get", "configmaps", "-n", namespace, check=False).returncode == 0, 20)


def test_aggregation_and_default_roles(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    scheduler = kubectl.run("describe", "clusterrole", "system:kube-scheduler").stdout
    assert "pods/status" in scheduler and "[patch update]" in scheduler
    assert "rbac.authorization.kubernetes.io/autoupdate" in scheduler
    kubectl.run("create", "rolebinding", "alice-view", "-n", namespace, "--clusterrole=view", "--user=alice")
    assert can_i(alice, "list", "leases.coordination.k8s.io", "-n", namespace) == ("no", 1)
    kubectl.run("create", "-f", "-", input=json.dumps({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": f"{namespace}-lease-viewer",
                     "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list"]}]}))
    try:
        eventually(lambda: can_i(alice, "list", "leases.coordination.k8s.io", "-n", namespace) == ("yes", 0))
        lease_rule = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list"]}
        eventually(lambda: lease_rule in json.loads(kubectl.run("get", "clusterrole", "admin", "-o", "json").stdout)[
            "rules"])  # view -> edit -> admin
    finally:
        kubectl.run("delete", "clusterrole", f"{namespace}-lease-viewer")
    eventually(lambda: can_i(alice, "list", "leases.coordination.k8s.io", "-n", namespace) == ("no", 1))
