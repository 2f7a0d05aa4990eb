"""CRD status conditions and DRA/VolumeAttributesClass controller roles as kube-apiserver 1.37 has them (issue #17).

- the naming controller writes Established False ``Installing`` before the establishing controller's True
  ``InitialNamesAccepted`` (two status writes, seen in a watch);
- ``api-approved.kubernetes.io``: a CRD of a protected group (``*.k8s.io``, ``*.kubernetes.io``) needs it
  (422 with kube's messages), and the apiapproval controller writes KubernetesAPIApprovalPolicyConformant;
- the finalizer: a CRD never Established is finalized with Terminating False ``NeverEstablished``; objects
  still there a minute after their delete set Terminating True ``InstanceDeletionCheck``;
- the bootstrap ClusterRoles ``system:controller:resource-claim-controller`` and
  ``system:controller:volumeattributesclass-protection-controller`` (controller_policy.go).
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Kubectl, wait_for

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _crd(group: str, plural: str = "widgets", kind: str = "Widget", annotations: dict[str, str] | None = None
         ) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"{plural}.{group}"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": meta,
            "spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _rv(kubectl: Kubectl) -> str:
    return str(json.loads(kubectl.run("get", "--raw", f"{CRDS}?limit=1").stdout)["metadata"]["resourceVersion"])


def _events(kubectl: Kubectl, since: str, name: str, seconds: int = 1) -> list[dict[str, Any]]:
    """The watch events of CRD ``name`` after resourceVersion ``since`` (the watch ends after ``seconds``)."""
    out = kubectl.run("get", "--raw", f"{CRDS}?watch=true&resourceVersion={since}&timeoutSeconds={seconds}",
                      timeout=seconds + 30).stdout
    decoder, pos, events = json.JSONDecoder(), 0, []
    while pos < len(out):
        if out[pos].isspace():
            pos += 1
            continue
        event, pos = decoder.raw_decode(out, pos)
        if event["object"]["metadata"]["name"] == name:
            events.append(event)
    return events


def _conditions(obj: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in obj["status"].get("conditions") or []}


def _get(kubectl: Kubectl, name: str) -> dict[str, Any]:
    return json.loads(kubectl.run("get", "--raw", f"{CRDS}/{name}").stdout)


def test_crd_is_established_after_the_naming_controllers_installing(kubectl: Kubectl) -> None:
    group = "two-writes.example.com"
    name = f"widgets.{group}"
    since = _rv(kubectl)
    kubectl.run("create", "-f", "-", input=json.dumps(_crd(group)))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/{name}", "--timeout=20s")
        events = _events(kubectl, since, name)
        assert events[0]["type"] == "ADDED" and events[0]["object"]["status"]["conditions"] is None
        established = [_conditions(e["object"]).get("Established") for e in events[1:]]
        assert established == [("False", "Installing", "the initial names have been accepted"),
                               ("True", "InitialNamesAccepted", "the initial names have been accepted")]
        first = events[1]["object"]
        assert _conditions(first)["NamesAccepted"] == ("True", "NoConflicts", "no conflicts found")
        assert first["status"]["acceptedNames"] == {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                                    "listKind": "WidgetList"}
    finally:
        kubectl.run("delete", "crd", name, "--wait=false", check=False)


def test_protected_groups_need_the_api_approval_annotation(kubectl: Kubectl) -> None:
    group = "parity-approval.k8s.io"
    name = f"widgets.{group}"
    missing = kubectl.run("create", "-f", "-", input=json.dumps(_crd(group)), check=False)
    assert missing.returncode == 1
    assert ('metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval '
            'annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111'
            ) in missing.stderr
    invalid = kubectl.run("create", "-f", "-", check=False, input=json.dumps(
        _crd(group, annotations={"api-approved.kubernetes.io": "soon"})))
    assert ('metadata.annotations[api-approved.kubernetes.io]: Invalid value: "soon": protected groups must have '
            'approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with '
            '"unapproved", see https://github.com/kubernetes/enhancements/pull/1111') in invalid.stderr

    kubectl.run("create", "-f", "-", input=json.dumps(
        _crd(group, annotations={"api-approved.kubernetes.io": "unapproved, testing only"})))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/{name}", "--timeout=20s")
        crd = _get(kubectl, name)
        assert [c["type"] for c in crd["status"]["conditions"]] == [
            "KubernetesAPIApprovalPolicyConformant", "NamesAccepted", "Established"]
        assert _conditions(crd)["KubernetesAPIApprovalPolicyConformant"] == (
            "False", "UnapprovedAnnotation", 'not approved: "unapproved, testing only"')
        url = "https://github.com/kubernetes/enhancements/pull/1111"
        kubectl.run("annotate", "--overwrite", "crd", name, f"api-approved.kubernetes.io={url}")
        assert wait_for(lambda: _conditions(_get(kubectl, name))["KubernetesAPIApprovalPolicyConformant"] == (
            "True", "ApprovedAnnotation", f"approved in {url}"))
        # back to a state the validation refuses on a change
        refused = kubectl.run("annotate", "--overwrite", "crd", name, "api-approved.kubernetes.io=later",
                              check=False)
        assert 'Invalid value: "later"' in refused.stderr
        # a CRD outside the protected groups gets no such condition
        assert "KubernetesAPIApprovalPolicyConformant" not in _conditions(_get_established(kubectl))
    finally:
        kubectl.run("delete", "crd", name, "--wait=false", check=False)


def _get_established(kubectl: Kubectl) -> dict[str, Any]:
    group = "no-approval.example.com"
    kubectl.run("apply", "-f", "-", input=json.dumps(_crd(group)))
    kubectl.run("wait", "--for=condition=Established", f"crd/widgets.{group}", "--timeout=20s")
    crd = _get(kubectl, f"widgets.{group}")
    kubectl.run("delete", "crd", f"widgets.{group}", "--wait=false", check=False)
    return crd


def test_a_crd_never_established_is_finalized_as_never_established(kubectl: Kubectl) -> None:
    group = "never-established.example.com"
    kubectl.run("create", "-f", "-", input=json.dumps(_crd(group)))
    kubectl.run("wait", "--for=condition=Established", f"crd/widgets.{group}", "--timeout=20s")
    name = f"gadgets.{group}"
    gadgets = _crd(group, plural="gadgets", kind="Widget")  # its kind is taken: never Established
    gadgets["metadata"]["finalizers"] = ["example.com/keep"]  # keeps the finalized state readable
    try:
        kubectl.run("create", "-f", "-", input=json.dumps(gadgets))
        assert wait_for(lambda: _conditions(_get(kubectl, name)).get("NamesAccepted", ("",))[0] == "False")
        since = _rv(kubectl)
        kubectl.run("delete", "crd", name, "--wait=false")
        crd = wait_for(lambda: (c := _get(kubectl, name))["metadata"]["finalizers"] == ["example.com/keep"] and c)
        assert _conditions(crd)["Terminating"] == ("False", "NeverEstablished", "resource was never established")
        assert _conditions(crd)["Established"] == ("False", "NotAccepted", "not all names are accepted")
        events = _events(kubectl, since, name)
        assert [_conditions(e["object"])["Terminating"][1] for e in events] == [
            "InstanceDeletionPending", "InstanceDeletionInProgress", "NeverEstablished"]
    finally:
        kubectl.run("patch", "crd", name, "--type=merge", "-p", '{"metadata":{"finalizers":null}}', check=False)
        kubectl.run("delete", "crd", name, f"widgets.{group}", "--wait=false", check=False)


def test_objects_left_a_minute_after_their_delete_set_instance_deletion_check(kubectl: Kubectl,
                                                                              namespace: str) -> None:
    group = "deletion-check.example.com"
    name = f"widgets.{group}"
    kubectl.run("create", "-f", "-", input=json.dumps(_crd(group)))
    kubectl.run("wait", "--for=condition=Established", f"crd/{name}", "--timeout=20s")
    wait_for(lambda: kubectl.run("-n", namespace, "get", name, check=False).returncode == 0)
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": f"{group}/v1", "kind": "Widget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}}))
    try:
        since = _rv(kubectl)
        kubectl.run("delete", "crd", name, "--wait=false")
        events = _events(kubectl, since, name, seconds=75)
        terminating = [_conditions(e["object"])["Terminating"] for e in events]
        assert ("True", "InstanceDeletionCheck",
                "could not confirm zero CustomResources remaining: context deadline exceeded") in terminating
        check = terminating.index(("True", "InstanceDeletionCheck",
                                   "could not confirm zero CustomResources remaining: context deadline exceeded"))
        assert terminating[check - 1][1] == "InstanceDeletionInProgress"
        assert _get(kubectl, name)["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    finally:
        kubectl.run("-n", namespace, "patch", name, "held", "--type=merge", "-p",
                    '{"metadata":{"finalizers":null}}', check=False)
        wait_for(lambda: "NotFound" in kubectl.run("get", "crd", name, check=False).stderr, timeout=30)


def test_dra_and_volume_attributes_class_controller_roles(kubectl: Kubectl) -> None:
    def rules(name: str) -> list[dict[str, Any]]:
        role = json.loads(kubectl.run("get", "clusterrole", name, "-o", "json").stdout)
        assert role["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
        return [(r.get("apiGroups"), r.get("resources"), r["verbs"]) for r in role["rules"]]

    events = (["", "events.k8s.io"], ["events"], ["create", "patch", "update"])
    assert rules("system:controller:resource-claim-controller") == [
        ([""], ["pods"], ["get", "list", "watch"]),
        ([""], ["pods/finalizers"], ["update"]),
        (["resource.k8s.io"], ["resourceclaims"], ["create", "delete", "get", "list", "watch"]),
        (["resource.k8s.io"], ["resourceclaims", "resourceclaims/status"], ["patch", "update"]),
        ([""], ["pods/status"], ["patch", "update"]),
        events,
        (["resource.k8s.io"], ["resourceclaims/binding"], ["patch", "update"])]
    assert rules("system:controller:volumeattributesclass-protection-controller") == [
        ([""], ["persistentvolumeclaims"], ["get", "list", "watch"]),
        ([""], ["persistentvolumes"], ["get", "list", "watch"]),
        (["storage.k8s.io"], ["volumeattributesclasses"], ["get", "list", "update", "watch"]),
        events]
    can = kubectl.run("auth", "can-i", "create", "resourceclaims.resource.k8s.io", "-n", "default",
                      "--as", "system:kube-controller-manager", check=False)
    assert can.stdout.strip() == "yes"
