"""Client-side apply upgraded to server-side apply as kube's field manager does it (issue #17 item 9).

kube's lastAppliedManager (k8s.io/apiserver pkg/endpoints/handlers/fieldmanager): when
``kubectl apply --server-side`` (manager ``kubectl``) conflicts only on fields that the live object's
``kubectl.kubernetes.io/last-applied-configuration`` annotation records with their live value, the apply
is forced and those fields move to ``kubectl``; conflicts outside that set still fail, and only they are
listed. lastAppliedUpdater then rewrites the annotation to the applied configuration.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conftest import Kubectl


def _pod(name: str, label: str, image: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"name": label}},
                       "spec": {"containers": [{"name": "c", "image": image}]}})


def _managers(kubectl: Kubectl, namespace: str, name: str) -> dict[str, dict]:
    pod = json.loads(kubectl.run("-n", namespace, "get", "pod", name, "-o", "json", "--show-managed-fields").stdout)
    return {f"{e['manager']}/{e['operation']}": e["fieldsV1"] for e in pod["metadata"]["managedFields"]}


def test_server_side_apply_after_client_side_apply_takes_the_last_applied_fields(
        kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    first, changed = tmp_path / "pod.yaml", tmp_path / "pod-changed.yaml"
    first.write_text(_pod("csa", "one", "nginx:1"))
    changed.write_text(_pod("csa", "two", "nginx:2"))
    assert kubectl.run("-n", namespace, "apply", "-f", str(first)).stdout == "pod/csa created\n"

    diff = kubectl.run("-n", namespace, "diff", "--server-side", "-f", str(changed), check=False)
    assert diff.returncode == 1, diff.stderr  # 1: differences found; >1 would be an error (a 409 before)
    assert "conflict" not in diff.stderr.lower()
    assert "-    name: one\n+    name: two\n" in diff.stdout
    assert "-  - image: nginx:1\n+  - image: nginx:2\n" in diff.stdout
    # The dry run rewrote the last-applied annotation to the applied configuration, Go-encoded (keys sorted).
    last_applied = ('{"apiVersion":"v1","kind":"Pod","metadata":{"labels":{"name":"two"},"name":"csa",'
                    f'"namespace":"{namespace}"}},"spec":{{"containers":[{{"image":"nginx:2","name":"c"}}]}}}}\n')
    assert "+      " + last_applied in diff.stdout

    applied = kubectl.run("-n", namespace, "apply", "--server-side", "-f", str(changed), check=False)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout == "pod/csa serverside-applied\n"
    # Nothing on stderr: no conflict, and kubectl's managed-fields migration and re-apply that follow succeed
    # (the service-account volume, added by admission, belongs to no manager, so the re-apply keeps it).
    assert applied.stderr == ""
    pod = json.loads(kubectl.run("-n", namespace, "get", "pod", "csa", "-o", "json").stdout)
    assert pod["metadata"]["labels"] == {"name": "two"}
    assert pod["spec"]["containers"][0]["image"] == "nginx:2"
    assert pod["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == last_applied
    kubectl_fields = _managers(kubectl, namespace, "csa")["kubectl/Apply"]
    assert "f:name" in kubectl_fields["f:metadata"]["f:labels"]
    assert "f:image" in kubectl_fields["f:spec"]["f:containers"]['k:{"name":"c"}']


def test_fields_added_by_admission_belong_to_no_manager(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(_pod("owned", "one", "nginx:1"))
    kubectl.run("-n", namespace, "apply", "-f", str(path))
    spec = _managers(kubectl, namespace, "owned")["kubectl-client-side-apply/Update"]["f:spec"]
    # defaults (SetDefaults_PodSpec, SetDefaults_Container) are the writer's; admission's additions are nobody's
    assert {"f:dnsPolicy", "f:restartPolicy", "f:schedulerName", "f:terminationGracePeriodSeconds"} <= set(spec)
    assert not {"f:volumes", "f:tolerations", "f:serviceAccountName", "f:priority"} & set(spec)
    assert "f:volumeMounts" not in spec["f:containers"]['k:{"name":"c"}']
    pod = json.loads(kubectl.run("-n", namespace, "get", "pod", "owned", "-o", "json").stdout)
    assert pod["spec"]["volumes"][0]["name"].startswith("kube-api-access-")  # admission did add them


def test_conflicts_outside_the_last_applied_fields_still_fail_and_only_they_are_listed(
        kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    first, changed = tmp_path / "pod.yaml", tmp_path / "pod-changed.yaml"
    first.write_text(_pod("mixed", "one", "nginx:1"))
    assert kubectl.run("-n", namespace, "apply", "-f", str(first)).stdout == "pod/mixed created\n"
    # Another manager changes the image: the annotation's image (nginx:1) no longer matches the live value.
    kubectl.run("-n", namespace, "set", "image", "pod/mixed", "c=nginx:9")
    changed.write_text(_pod("mixed", "two", "nginx:2"))
    out = kubectl.run("-n", namespace, "apply", "--server-side", "-f", str(changed), check=False)
    assert out.returncode == 1
    # The label conflict (kubectl-client-side-apply, recorded in the annotation) is allowed and not listed.
    assert out.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl-set" using v1: '
                                 '.spec.containers[name="c"].image\n'), out.stderr
    pod = json.loads(kubectl.run("-n", namespace, "get", "pod", "mixed", "-o", "json").stdout)
    assert pod["metadata"]["labels"] == {"name": "one"}  # nothing was applied


def test_other_managers_do_not_get_the_upgrade(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    first, changed = tmp_path / "pod.yaml", tmp_path / "pod-changed.yaml"
    first.write_text(_pod("other", "one", "nginx:1"))
    kubectl.run("-n", namespace, "apply", "-f", str(first))
    changed.write_text(_pod("other", "two", "nginx:1"))
    out = kubectl.run("-n", namespace, "apply", "--server-side", "--field-manager=mine", "-f", str(changed),
                      check=False)
    assert out.returncode == 1
    assert out.stderr.startswith('error: Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
                                 'using v1: .metadata.labels.name\n'), out.stderr


def _fields(kubectl: Kubectl, namespace: str, kind: str, name: str) -> list[tuple[str, dict]]:
    obj = json.loads(kubectl.run("-n", namespace, "get", kind, name, "-o", "json", "--show-managed-fields").stdout)
    return [(e["manager"], e["fieldsV1"]) for e in obj["metadata"].get("managedFields", [])]


def test_update_sets_mark_only_the_nodes_the_go_struct_lacks(kubectl: Kubectl, namespace: str) -> None:
    """kube compares the written object with the kind's zero Go object: nodes the struct always has (``spec``,
    ``strategy``, ``template``, ``containers`` without omitempty) are no members, nodes that appear are (``"."``:
    pointer structs such as ``rollingUpdate``, omitempty maps and lists such as ``labels`` and ``ports``,
    every node of a new list item such as a container's ``resources``)."""
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx:1.27")
    labels = {".": {}, "f:app": {}}
    assert _fields(kubectl, namespace, "deployment", "web") == [("kubectl-create", {
        "f:metadata": {"f:labels": labels},
        "f:spec": {
            "f:progressDeadlineSeconds": {}, "f:replicas": {}, "f:revisionHistoryLimit": {}, "f:selector": {},
            "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}, "f:type": {}},
            "f:template": {"f:metadata": {"f:labels": labels}, "f:spec": {
                "f:containers": {'k:{"name":"nginx"}': {
                    ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:resources": {},
                    "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}},
                "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
                "f:terminationGracePeriodSeconds": {}}}}})]
    kubectl.run("-n", namespace, "create", "service", "clusterip", "svc", "--tcp=80:8080")
    spec = _fields(kubectl, namespace, "service", "svc")[0][1]["f:spec"]
    assert spec["f:ports"] == {".": {}, 'k:{"port":80,"protocol":"TCP"}': {
        ".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}, "f:targetPort": {}}}
    # the IP families are the REST storage's (BeginCreate, after the field manager): nobody's
    assert sorted(spec) == ["f:internalTrafficPolicy", "f:ports", "f:selector", "f:sessionAffinity", "f:type"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "nginx", "resources": {"limits": {"cpu": "1"}}}]}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod))
    container = _fields(kubectl, namespace, "pod", "p")[0][1]["f:spec"]["f:containers"]['k:{"name":"c"}']
    # requests are defaulted from the limits when decoded, before kube's field manager runs: the writer's too
    cpu = {".": {}, "f:cpu": {}}
    assert container["f:resources"] == {".": {}, "f:limits": cpu, "f:requests": cpu}
    # a create that sets nothing the zero object lacks leaves no entry (structured-merge-diff drops empty sets)
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(
        {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "bare"}}))
    assert _fields(kubectl, namespace, "lease", "bare") == []
