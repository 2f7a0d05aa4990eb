"""kube's own kubectl test scripts (test/cmd rbac.sh, legacy-script.sh's can-i and reconcile blocks,
authorization.txtar, certificate.txtar, node-management.sh, events.sh, storage.sh) replayed with the pinned
kubectl: each assertion the scripts make of kube-apiserver 1.37, against kapi. Names carry the test's namespace
so the shared stack's other tests are not touched (the scripts' cluster-wide ``--all`` forms are left out).
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Kubectl, wait_for

# test/fixtures and hack/testdata inputs (hack/testdata/csr.yml's request, a CSR for CN kube-admin)
CSR_REQUEST = (
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlJQ2d6Q0NBV3NDQVFBd0ZURVRNQkVHQTFVRUF4TUthM1ZpWlMxaFpHMXBiakNDQVNJ"
    "d0RRWUpLb1pJaHZjTgpBUUVCQlFBRGdnRVBBRENDQVFvQ2dnRUJBTlJ5dFhkcWV6ZTFBdXFjZkpWYlFBY1BJejZWY2pXSTZ5WmlQa3lrCjAzUW9GaHJG"
    "RXhUQXNPTGVFUHlrQXc1YndUOWZiajRXMzZmR2k4RGxsd1FzVGoyYzVUTnBnQkkwbElDbzI4aGcKbHYvTDJsMnRsWUVKdDdTbVhjblNvaGJ5S0h4TERR"
    "UHVmTVBBTkZsaEFmTUdCWEhRcmZMajhrTk1MUDA4UlBsbAp0N3V4RDVRdFA0cHlGL1Nhbm1XVEtRNU56WlJ4TC82UmhJMEpxSHJmNFFjQmg2dlR5bnFa"
    "RGVmMWVxNjBnQXllClNPRkpKYWRuK3h2VEFqLzgxZk1TbjdOSlNnaktDYkNEeXQ1eS9UZHd0SzZnVUQzM01paE5uNXhKTVF0MUZXUVAKRzY3eTA1QVh6"
    "b0pqTm5sWVA1MnJsTlhvNzh6aVMrN1E4RklxQzY0c05vWWhxeGNDQXdFQUFhQXBNQ2NHQ1NxRwpTSWIzRFFFSkRqRWFNQmd3Q1FZRFZSMFRCQUl3QURB"
    "TEJnTlZIUThFQkFNQ0JlQXdEUVlKS29aSWh2Y05BUUVMCkJRQURnZ0VCQU5CazlwaHpWYUJBci9xZHN4bXdPR1NQa094UkZlR1lyemRvaW5LTzVGUGZE"
    "R2JkU0VWQ0o1K0wKeWJTNUtmaUZYU1EvNmk0RE9WRWtxcnFrVElIc1JNSlJwbTZ5Zjk1TU4zSWVLak9jQlV2b2VWVlpxMUNOUU8zagp2dklmK1A1NStL"
    "dXpvK0NIT1F5RWlvTlRPaUtGWTJseStEZEEwMXMxbU9FMTZSWGlWeFhGcFhGeGRJVmRPK0oxClZ1MW5yWG5ZVFJQRmtyaG80MTlpaDQzNjRPcGZqYXFX"
    "VCtmd20ySVZQSlBoaUJpYi9RRzRhUGJJcFh3amlCUUMKemV6WlM2L01nQkt1bUdMZ3Z5MitXNU9UWTJ5ZFFMZFVxbERFNEU2MFhmdVZ6bk5zWjZDS0tY"
    "Y1pVaW1ZTkkwNgpKa0t4bGRjd0V2cmI0SmN3M2RFQjdOOUwvSW9ZNXFBPQotLS0tLUVORCBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0K")


def _tmpl(kubectl: Kubectl, what: str, template: str, *flags: str) -> str:
    """kube::test::get_object_assert's read: ``kubectl get <what> -o go-template=<template>``."""
    return kubectl.run("get", *what.split(), *flags, "-o", f"go-template={template}").stdout


def _csr(name: str) -> str:
    return json.dumps({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                       "metadata": {"name": name},
                       "spec": {"request": CSR_REQUEST, "signerName": "kubernetes.io/kube-apiserver-client",
                                "usages": ["client auth"]}})


SUBJECTS = "{{range.subjects}}{{.name}}:{{end}}"
VERBS, RESOURCES, GROUPS = ("{{range.rules}}{{range." + field + "}}{{.}}:{{end}}{{end}}"
                            for field in ("verbs", "resources", "apiGroups"))


def test_rbac_sh_create_and_set_subject(kubectl: Kubectl, namespace: str) -> None:
    ns = ("-n", namespace)
    cr = f"{namespace}-reader"
    kubectl.run("create", "clusterrole", cr, "--dry-run=server", "--verb=get,list",
                "--resource=pods,deployments.apps")
    assert f'clusterroles.rbac.authorization.k8s.io "{cr}" not found' in kubectl.run(
        "get", "clusterrole", cr, check=False).stderr
    kubectl.run("create", "clusterrole", cr, "--verb=get,list", "--resource=pods,deployments.apps",
                "--resource-name=foo")
    try:
        assert _tmpl(kubectl, f"clusterrole/{cr}", VERBS) == "get:list:get:list:"
        assert _tmpl(kubectl, f"clusterrole/{cr}", RESOURCES) == "pods:deployments:"
        assert _tmpl(kubectl, f"clusterrole/{cr}", GROUPS) == ":apps:"
        out = kubectl.run("delete", "clusterrole", cr, "-n", "test")
        assert "deleting cluster-scoped resources" in out.stderr
        assert f'clusterrole.rbac.authorization.k8s.io "{cr}" deleted' in out.stdout
    finally:
        kubectl.run("delete", "clusterrole", cr, "--ignore-not-found")

    kubectl.run(*ns, "create", "rolebinding", "admin", "--clusterrole=admin", "--user=default-admin")
    kubectl.run(*ns, "set", "subject", "rolebinding", "admin", "--user=foo", "--dry-run=server")
    assert _tmpl(kubectl, f"rolebinding/admin {' '.join(ns)}", SUBJECTS) == "default-admin:"
    kubectl.run(*ns, "set", "subject", "rolebinding", "admin", "--user=foo")
    kubectl.run(*ns, "create", "rolebinding", "localrole", "--role=localrole", "--group=the-group")
    kubectl.run(*ns, "create", "rolebinding", "sarole", "--role=localrole", "--serviceaccount=otherns:sa-name")
    kubectl.run(*ns, "set", "subject", "rolebinding", "sarole", "--serviceaccount=otherfoo:foo")
    assert _tmpl(kubectl, f"rolebinding/sarole {' '.join(ns)}", "{{range.subjects}}{{.namespace}}:{{end}}") == \
        "otherns:otherfoo:"
    kubectl.run(*ns, "set", "subject", "rolebinding", "--all", "--user=test-all-user")
    assert _tmpl(kubectl, f"rolebinding/admin {' '.join(ns)}", "{{.roleRef.kind}}") == "ClusterRole"
    assert _tmpl(kubectl, f"rolebinding/localrole {' '.join(ns)}", "{{.roleRef.kind}}") == "Role"
    assert _tmpl(kubectl, f"rolebinding/admin {' '.join(ns)}", SUBJECTS) == "default-admin:foo:test-all-user:"
    assert _tmpl(kubectl, f"rolebinding/localrole {' '.join(ns)}", SUBJECTS) == "the-group:test-all-user:"
    assert _tmpl(kubectl, f"rolebinding/sarole {' '.join(ns)}", SUBJECTS) == "sa-name:foo:test-all-user:"

    kubectl.run(*ns, "create", "role", "sub", "--verb=get,list", "--resource=pods/status,replicasets.apps/scale")
    assert _tmpl(kubectl, f"role/sub {' '.join(ns)}", RESOURCES) == "pods/status:replicasets/scale:"
    assert _tmpl(kubectl, f"role/sub {' '.join(ns)}", GROUPS) == ":apps:"
    for resource, message in (("invalid-resource", 'the server doesn\'t have a resource type "invalid-resource"'),
                              ("deployments.invalid-group", 'the server doesn\'t have a resource type "deployments" '
                                                            'in group "invalid-group"'),
                              ("rs.invalid-group/scale", 'the server doesn\'t have a resource type "rs" in group '
                                                         '"invalid-group"')):
        out = kubectl.run(*ns, "create", "role", "bad", "--verb=get", f"--resource={resource}", check=False)
        assert out.returncode != 0 and message in out.stderr


def test_legacy_script_can_i_and_reconcile(kubectl: Kubectl, namespace: str) -> None:
    assert kubectl.run("auth", "can-i", "*", "*").stdout.strip() == "yes"
    assert kubectl.run("auth", "can-i", "get", "pods", "--subresource=log").stdout.strip() == "yes"
    assert kubectl.run("auth", "can-i", "get", "/logs/").stdout.strip() == "yes"
    out = kubectl.run("auth", "can-i", "get", "/logs/", "--subresource=log", check=False)
    assert out.returncode != 0 and "subresource can not be used with NonResourceURL" in out.stderr
    assert kubectl.run("auth", "can-i", "list", "jobs.batch/bar", "-n", "foo", "--quiet").stdout == ""
    assert "Warning: resource 'nodes' is not namespace scoped" in kubectl.run("auth", "can-i", "get", "nodes").stderr
    assert "Warning" not in kubectl.run("auth", "can-i", "get", "pods").stderr

    other = f"{namespace}-other"
    cr = f"{namespace}-cr"
    items = [
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": cr, "labels": {"test-cmd": namespace}},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "testing-RB", "namespace": other, "labels": {"test-cmd": namespace}},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cr},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:masters"}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "testing-R", "namespace": other, "labels": {"test-cmd": namespace}},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]},
    ]
    manifest = json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    label = f"test-cmd={namespace}"
    try:
        kubectl.run("auth", "reconcile", "--dry-run=client", "-f", "-", input=manifest)
        assert _tmpl(kubectl, f"clusterroles -l {label}", "{{range.items}}{{.metadata.name}}:{{end}}") == ""
        out = kubectl.run("auth", "reconcile", "-f", "-", input=manifest)
        assert f"clusterrole.rbac.authorization.k8s.io/{cr} reconciled" in out.stdout
        assert _tmpl(kubectl, f"rolebindings -n {other} -l {label}",
                     "{{range.items}}{{.metadata.name}}:{{end}}") == "testing-RB:"
        assert _tmpl(kubectl, f"roles -n {other} -l {label}", "{{range.items}}{{.metadata.name}}:{{end}}") == \
            "testing-R:"
        assert _tmpl(kubectl, f"clusterroles -l {label}", "{{range.items}}{{.metadata.name}}:{{end}}") == f"{cr}:"
        again = kubectl.run("auth", "reconcile", "-f", "-", input=manifest)
        assert "reconciliation required" not in again.stderr  # nothing left to add
        v1beta1 = json.dumps({**items[0], "apiVersion": "rbac.authorization.k8s.io/v1beta1"})
        out = kubectl.run("auth", "reconcile", "-f", "-", input=v1beta1, check=False)
        assert out.returncode != 0 and "only rbac.authorization.k8s.io/v1 is supported" in out.stderr
    finally:
        kubectl.run("delete", "clusterrole", cr, "--ignore-not-found")
        kubectl.run("delete", "namespace", other, "--ignore-not-found", "--wait=false")


def test_certificate_txtar_approve_and_deny(kubectl: Kubectl, namespace: str) -> None:
    name = f"{namespace}-csr"
    for verb, condition in (("approve", "Approved"), ("deny", "Denied")):
        for by_file in (False, True):
            out = kubectl.run("create", "-f", "-", input=_csr(name))
            assert f"certificatesigningrequest.certificates.k8s.io/{name} created" in out.stdout
            assert _tmpl(kubectl, f"csr/{name}", "{{range.status.conditions}}{{.type}}{{end}}") == ""
            args = ("-f", "-") if by_file else (name,)
            out = kubectl.run("certificate", verb, *args, input=_csr(name) if by_file else None)
            done = {"approve": "approved", "deny": "denied"}[verb]
            assert f"certificatesigningrequest.certificates.k8s.io/{name} {done}" in out.stdout
            got = json.loads(kubectl.run("get", f"csr/{name}", "-o", "json").stdout)
            [cond] = got["status"]["conditions"]
            assert (cond["type"], cond["status"], cond["reason"]) == (condition, "True", f"Kubectl{verb.title()}")
            out = kubectl.run("delete", "csr", name)
            assert f'certificatesigningrequest.certificates.k8s.io "{name}" deleted' in out.stdout


def test_authorization_txtar_impersonation_fills_the_csr_spec(kubectl: Kubectl, namespace: str) -> None:
    name = f"{namespace}-csr"
    for flag in ("--as-group=foo", "--as-uid=abc123"):
        out = kubectl.run("get", "pods", "-n", namespace, flag, check=False)
        assert out.returncode != 0 and "without impersonating a user" in out.stderr
    kubectl.run("create", "-f", "-", "--as=user1", "--as-group=system:masters", "--as-group=group2",
                "--as-group=,,,chameleon", "--as-uid=abc123", "--as-user-extra=key1=hello there",
                "--as-user-extra=key1=one,two", "--as-user-extra=key2=val3", input=_csr(name))
    try:
        spec = json.loads(kubectl.run("get", f"csr/{name}", "-o", "json").stdout)["spec"]
        assert (spec["username"], spec["uid"]) == ("user1", "abc123")
        assert spec["groups"] == ["system:masters", "group2", ",,,chameleon", "system:authenticated"]
        assert spec["extra"] == {"key1": ["hello there", "one,two"], "key2": ["val3"]}
    finally:
        kubectl.run("delete", "csr", name)


def _node_pod(kubectl: Kubectl, namespace: str, name: str, node: str, labels: dict[str, str]) -> None:
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "labels": labels},
        # a 1 s grace period: the evicted pod's deletionTimestamp (now + grace) is soon past, so
        # --skip-wait-for-delete-timeout=1 lets drain go on within seconds (no kubelet ends the pod)
        "spec": {"nodeName": node, "terminationGracePeriodSeconds": 1,
                 "containers": [{"name": "container-1", "image": "test-image"}]}}))


def test_node_management_sh_taint_cordon_drain(kubectl: Kubectl, namespace: str) -> None:
    node = f"{namespace}-node"[:63]
    kubectl.run("create", "-f", "-", input=json.dumps({
        "kind": "Node", "apiVersion": "v1", "metadata": {"name": node, "annotations": {"save-managers": "true"}},
        "status": {"capacity": {"memory": "1Gi"}}}))
    try:
        _node_pod(kubectl, namespace, "test-pod-1", node, {"e": "f", "type": "test-pod"})
        _node_pod(kubectl, namespace, "test-pod-2", node, {"c": "d", "type": "test-pod"})
        taint = '{{range .spec.taints}}{{if eq .key "dedicated"}}{{.key}}={{.value}}:{{.effect}}{{end}}{{end}}'
        for dry in ("--dry-run=client", "--dry-run=server"):
            kubectl.run("taint", "node", node, dry, "dedicated=foo:PreferNoSchedule")
        assert _tmpl(kubectl, f"nodes {node}", taint) == ""
        kubectl.run("taint", "node", node, "dedicated=foo:PreferNoSchedule")
        assert _tmpl(kubectl, f"nodes {node}", taint) == "dedicated=foo:PreferNoSchedule"
        kubectl.run("taint", "node", node, "dedicated-")
        kubectl.run("taint", "node", node, "dedicated:PreferNoSchedule")
        assert _tmpl(kubectl, f"nodes {node}", taint) == "dedicated=<no value>:PreferNoSchedule"
        managers = kubectl.run("get", "node", node, "--show-managed-fields",
                               "-o=jsonpath={.metadata.managedFields[*].manager}").stdout
        assert "kubectl-taint" in managers.split()
        kubectl.run("taint", "node", node, "--dry-run=server", "dedicated-")
        assert _tmpl(kubectl, f"nodes {node}", taint) == "dedicated=<no value>:PreferNoSchedule"
        kubectl.run("taint", "node", node, "dedicated-")
        assert _tmpl(kubectl, f"nodes {node}", taint) == ""

        unschedulable = "{{.spec.unschedulable}}"
        kubectl.run("cordon", node, "--dry-run=server")
        kubectl.run("drain", node, "--dry-run=server", "--force")
        assert _tmpl(kubectl, f"nodes {node}", unschedulable) == "<no value>"
        pods = ("pods", "-n", namespace)
        assert _tmpl(kubectl, " ".join(pods), "{{range .items}}{{.metadata.name}},{{end}}") == \
            "test-pod-1,test-pod-2,"
        out = kubectl.run("drain", node, "--force", "--pod-selector", "e in (f)", "--skip-wait-for-delete-timeout=1")
        assert f"evicting pod {namespace}/test-pod-1" in out.stdout
        assert _tmpl(kubectl, f"pods/test-pod-2 -n {namespace}", "{{.metadata.deletionTimestamp}}") == "<no value>"
        assert _tmpl(kubectl, f"pods/test-pod-1 -n {namespace}", "{{.metadata.deletionTimestamp}}") != "<no value>"
        assert _tmpl(kubectl, f"nodes {node}", unschedulable) == "true"
        kubectl.run("uncordon", node)
        assert "already uncordoned" in kubectl.run("uncordon", node, "--dry-run=server").stdout
        kubectl.run("label", "node", node, f"test={namespace}")
        out = kubectl.run("cordon", "--selector", f"test={namespace}")
        assert f"node/{node} cordoned" in out.stdout
        assert _tmpl(kubectl, f"nodes {node}", unschedulable) == "true"
    finally:
        kubectl.run("-n", namespace, "delete", "pod", "--all", "--force", "--grace-period=0")
        kubectl.run("delete", "node", node, "--wait=false")


def test_events_sh_for_and_types(kubectl: Kubectl, namespace: str) -> None:
    """The event a cronjob controller records for a schedule that never fires, written here (kapi runs no
    cronjob controller), listed as ``kubectl events`` asks for it (involvedObject field selectors)."""
    kubectl.run("-n", namespace, "create", "cronjob", "pi", "--schedule=59 23 31 2 *", "--image=registry.k8s.io/perl",
                "--", "perl", "-Mbignum=bpi", "-wle", "print bpi(20)")
    uid = json.loads(kubectl.run("-n", namespace, "get", "cronjob", "pi", "-o", "json").stdout)["metadata"]["uid"]
    event: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "pi.invalid"},
        "involvedObject": {"apiVersion": "batch/v1", "kind": "CronJob", "name": "pi", "namespace": namespace,
                           "uid": uid},
        "reason": "InvalidSchedule", "type": "Warning", "source": {"component": "cronjob-controller"},
        "message": "invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second"}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(event))
    ns = ("-n", namespace)
    out = wait_for(lambda: (o := kubectl.run("events", *ns, "--for=Cronjob/pi").stdout) and "InvalidSchedule" in o
                   and o)
    assert "Warning" in out and "CronJob/pi" in out
    assert "InvalidSchedule" in kubectl.run("events", *ns, "--for=Cronjob/pi", "--types=Warning").stdout
    assert "InvalidSchedule" not in kubectl.run("events", *ns, "--for=Cronjob/pi", "--types=Normal").stdout
    out = kubectl.run("events", *ns, "--for=Cronjob/pi", "--no-headers").stdout
    assert "LAST SEEN" not in out and "InvalidSchedule" in out
    assert "InvalidSchedule" in kubectl.run("events", *ns, "--for=Cronjob/pi", "--output=json").stdout
    assert "InvalidSchedule" not in kubectl.run("events", *ns, "--for=Cronjob/other").stdout
