"""NodeRestriction: what node users (system:node:<name> in system:nodes) may write, as a table."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from kapi.resources import REGISTRY, Resource
from services.admission.chain import AdmissionRequest
from services.admission.plugins.node_restriction import NodeRestriction, forbidden_labels, is_kubelet_label
from tests.admission.fakes import FakeInformers

NODE_UID = "node-uid-1"
N1 = ("system:node:n1", ("system:nodes", "system:authenticated"))


def node(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}, "spec": spec}


def pod(name: str = "web", node_name: str = "n1", mirror: bool = False, owner: dict[str, Any] | None = None,
        labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "demo", "labels": labels or {}}
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "hash"}
        meta["ownerReferences"] = [owner if owner is not None else
                                   {"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": NODE_UID,
                                    "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node_name, "containers": [{"name": "c", "image": "nginx:1.27"}], **spec}}


def csr(cn: str) -> dict[str, Any]:
    key = ec.generate_private_key(ec.SECP256R1())
    req = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, cn)])).sign(key, hashes.SHA256())
    pem = req.public_bytes(serialization.Encoding.PEM)
    return {"metadata": {"name": "csr-1"}, "spec": {"signerName": "kubernetes.io/kubelet-serving",
                                                    "request": base64.b64encode(pem).decode()}}


def row(group: str, resource: str) -> Resource:
    found = next((r for r in REGISTRY.rows if r.group == group and r.resource == resource), None)
    return found or Resource(group, "v1", resource, resource.capitalize()[:-1], False)


def req(operation: str, resource: str, obj: dict[str, Any] | None, *, old: dict[str, Any] | None = None,
        group: str = "", subresource: str = "", namespace: str = "", name: str = "",
        user: tuple[str, tuple[str, ...]] = N1, kind: str = "") -> AdmissionRequest:
    res = row(group, resource)
    attrs = Attributes(UserInfo(user[0], "", user[1]), operation.lower(), True, api_group=group,
                       api_version=res.version, resource=resource, subresource=subresource, namespace=namespace,
                       name=name)
    return AdmissionRequest(operation, attrs, res, kind or res.kind, obj, old)


def labelled(base: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    out["metadata"]["labels"].update(labels)
    return out


N1_NODE = node("n1", {"kubernetes.io/hostname": "n1"})
SECRET_VOLUME = [{"name": "s", "secret": {"secretName": "creds"}}]
PVC_VOLUME = [{"name": "p", "persistentVolumeClaim": {"claimName": "data"}}]
STATUS_POD = pod(status={})
PVC = {"metadata": {"name": "data", "namespace": "demo", "labels": {}}, "spec": {}, "status": {"phase": "Bound"}}
LEASE = {"metadata": {"name": "n2", "namespace": "kube-node-lease"}, "spec": {}}

CASES: list[tuple[str, AdmissionRequest, str]] = [
    ("not a node", req("UPDATE", "nodes", node("n2", {"a": "b"}), old=node("n2"), name="n2",
                       user=("alice", ("system:authenticated",))), ""),
    ("node name without the nodes group", req("UPDATE", "nodes", node("n2"), old=node("n2"), name="n2",
                                              user=("system:node:n1", ("system:authenticated",))), ""),
    ("node user without a name", req("UPDATE", "nodes", node("n2"), old=node("n2"), name="n2",
                                     user=("system:node:", ("system:nodes",))),
     'nodes "n2" is forbidden: could not determine node from user "system:node:"'),
    ("another node", req("UPDATE", "nodes", node("n2", {"a": "b"}), old=node("n2"), name="n2"),
     'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
    ("another node's status", req("UPDATE", "nodes", node("n2"), old=node("n2"), name="n2", subresource="status"),
     'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
    ("create another node", req("CREATE", "nodes", node("n2")),
     'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
    ("own node, free label", req("UPDATE", "nodes", labelled(N1_NODE, {"team": "a"}), old=N1_NODE, name="n1"), ""),
    ("own node, kubelet labels", req("UPDATE", "nodes", labelled(
        N1_NODE, {"topology.kubernetes.io/zone": "z", "kubelet.kubernetes.io/x": "1", "foo.node.kubernetes.io/y": "1"}),
        old=N1_NODE, name="n1"), ""),
    ("own node, node-restriction label", req("UPDATE", "nodes", labelled(
        N1_NODE, {"node-restriction.kubernetes.io/pool": "gold"}), old=N1_NODE, name="n1"),
     'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool'),
    ("own node, removing a kubernetes.io label", req("UPDATE", "nodes", N1_NODE, old=labelled(
        N1_NODE, {"node-role.kubernetes.io/control-plane": ""}), name="n1"),
     'nodes "n1" is forbidden: is not allowed to modify labels: node-role.kubernetes.io/control-plane'),
    ("own node, taints", req("UPDATE", "nodes", node("n1", taints=[{"key": "k", "effect": "NoSchedule"}]),
                             old=node("n1"), name="n1"), 'nodes "n1" is forbidden: node "n1" is not allowed to '
                                                         "modify taints"),
    ("own node, configSource", req("UPDATE", "nodes", node("n1", configSource={"configMap": {}}),
                                   old=node("n1"), name="n1"),
     'nodes "n1" is forbidden: node "n1" is not allowed to update configSource to a new non-nil configSource'),
    ("register with k8s.io label", req("CREATE", "nodes", node("n1", {"a.k8s.io/b": "c", "kubernetes.io/os": "x"})),
     'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: a.k8s.io/b'),
    ("register", req("CREATE", "nodes", N1_NODE), ""),
    ("delete another node", req("DELETE", "nodes", None, old=node("n2"), name="n2"),
     'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"'),
    # pods
    ("create a regular pod", req("CREATE", "pods", pod(), namespace="demo"),
     'pods "web" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only '
     "create mirror pods"),
    ("mirror pod", req("CREATE", "pods", pod(mirror=True), namespace="demo"), ""),
    ("mirror pod on another node", req("CREATE", "pods", pod(node_name="n2", mirror=True), namespace="demo"),
     'pods "web" is forbidden: node "n1" can only create pods with spec.nodeName set to itself'),
    ("mirror pod owned by another node", req("CREATE", "pods", pod(mirror=True, owner={
        "apiVersion": "v1", "kind": "Node", "name": "n2", "uid": NODE_UID, "controller": True}), namespace="demo"),
     'pods "web" is forbidden: node "n1" can only create pods with an owner reference set to itself'),
    ("mirror pod without controller", req("CREATE", "pods", pod(mirror=True, owner={
        "apiVersion": "v1", "kind": "Node", "name": "n1", "uid": NODE_UID}), namespace="demo"),
     'pods "web" is forbidden: node "n1" can only create pods with a controller owner reference set to itself'),
    ("mirror pod blocking owner deletion", req("CREATE", "pods", pod(mirror=True, owner={
        "apiVersion": "v1", "kind": "Node", "name": "n1", "uid": NODE_UID, "controller": True,
        "blockOwnerDeletion": True}), namespace="demo"),
     'pods "web" is forbidden: node "n1" must not set blockOwnerDeletion on an owner reference'),
    ("mirror pod, wrong node uid", req("CREATE", "pods", pod(mirror=True, owner={
        "apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "other", "controller": True}), namespace="demo"),
     f'pods "web" is forbidden: node n1 UID mismatch: expected other got {NODE_UID}'),
    ("mirror pod with a service account", req("CREATE", "pods", pod(mirror=True, serviceAccountName="robot"),
                                              namespace="demo"),
     'pods "web" is forbidden: node "n1" can not create pods that reference a service account'),
    ("mirror pod with a secret", req("CREATE", "pods", pod(mirror=True, volumes=SECRET_VOLUME), namespace="demo"),
     'pods "web" is forbidden: node "n1" can not create pods that reference secrets'),
    ("mirror pod with a configmap env", req("CREATE", "pods", pod(mirror=True, containers=[
        {"name": "c", "image": "x:1", "envFrom": [{"configMapRef": {"name": "cfg"}}]}]), namespace="demo"),
     'pods "web" is forbidden: node "n1" can not create pods that reference configmaps'),
    ("mirror pod with a PVC", req("CREATE", "pods", pod(mirror=True, volumes=PVC_VOLUME), namespace="demo"),
     'pods "web" is forbidden: node "n1" can not create pods that reference persistentvolumeclaims'),
    ("update a pod", req("UPDATE", "pods", pod(), old=pod(), namespace="demo", name="web"),
     'pods "web" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods'),
    ("delete own pod", req("DELETE", "pods", None, old=pod(), namespace="demo", name="web"), ""),
    ("delete another node's pod", req("DELETE", "pods", None, old=pod(node_name="n2"), namespace="demo",
                                      name="web"),
     'pods "web" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'),
    ("own pod status", req("UPDATE", "pods", pod(status={"phase": "Running"}), old=STATUS_POD, namespace="demo",
                           name="web", subresource="status"), ""),
    ("another node's pod status", req("UPDATE", "pods", pod(node_name="n2"), old=pod(node_name="n2"),
                                      namespace="demo", name="web", subresource="status"),
     'pods "web" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself'),
    ("labels through pod status", req("UPDATE", "pods", pod(labels={"a": "b"}), old=pod(), namespace="demo",
                                      name="web", subresource="status"),
     'pods "web" is forbidden: node "n1" cannot update labels through pod status'),
    ("other pod subresource", req("CREATE", "pods", {"target": {"name": "n1"}}, namespace="demo", name="web",
                                  subresource="binding", kind="Binding"),
     'pods "web" is forbidden: unexpected pod subresource "binding", only \'status\' and \'eviction\' are allowed'),
    ("evict own pod", req("CREATE", "pods", {"metadata": {"name": "web"}}, namespace="demo", name="web",
                          subresource="eviction", kind="Eviction"), ""),
    ("evict another node's pod", req("CREATE", "pods", {"metadata": {"name": "other"}}, namespace="demo",
                                     name="other", subresource="eviction", kind="Eviction"),
     'pods "other" is forbidden: node n1 can only evict pods with spec.nodeName set to itself'),
    # leases, PVCs, tokens, CSRs
    ("own lease", req("CREATE", "leases", {**LEASE, "metadata": {"name": "n1"}}, group="coordination.k8s.io",
                      namespace="kube-node-lease"), ""),
    ("another node's lease", req("CREATE", "leases", LEASE, group="coordination.k8s.io",
                                 namespace="kube-node-lease"),
     'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the '
     "requesting node"),
    ("update another node's lease", req("UPDATE", "leases", LEASE, old=LEASE, group="coordination.k8s.io",
                                        namespace="kube-node-lease", name="n2"),
     'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the '
     "requesting node"),
    ("lease elsewhere", req("CREATE", "leases", {"metadata": {"name": "n1"}}, group="coordination.k8s.io",
                            namespace="demo"),
     'leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" system '
     "namespace"),
    ("PVC spec", req("UPDATE", "persistentvolumeclaims", PVC, old=PVC, namespace="demo", name="data"),
     'persistentvolumeclaims "data" is forbidden: may only update PVC status'),
    ("PVC capacity", req("UPDATE", "persistentvolumeclaims", {**PVC, "status": {
        "phase": "Bound", "capacity": {"storage": "2Gi"}}}, old=PVC, namespace="demo", name="data",
        subresource="status"), ""),
    ("PVC labels through status", req("UPDATE", "persistentvolumeclaims", {**PVC, "metadata": {
        **PVC["metadata"], "labels": {"a": "b"}}}, old=PVC, namespace="demo", name="data", subresource="status"),
     'persistentvolumeclaims "data" is forbidden: node "n1" is not allowed to update fields other than '
     "status.quantity and status.conditions"),
    ("unbound token", req("CREATE", "serviceaccounts", {"spec": {}}, namespace="demo", name="default",
                          subresource="token", kind="TokenRequest"),
     'serviceaccounts "default" is forbidden: node requested token not bound to a pod'),
    ("token for own pod", req("CREATE", "serviceaccounts", {"spec": {"boundObjectRef": {
        "apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "pod-uid"}}}, namespace="demo", name="default",
        subresource="token", kind="TokenRequest"), ""),
    ("token for another node's pod", req("CREATE", "serviceaccounts", {"spec": {"boundObjectRef": {
        "apiVersion": "v1", "kind": "Pod", "name": "other", "uid": "other-uid"}}}, namespace="demo",
        name="default", subresource="token", kind="TokenRequest"),
     'serviceaccounts "default" is forbidden: node requested token bound to a pod scheduled on a different node'),
    ("own CSR", req("CREATE", "certificatesigningrequests", csr("system:node:n1"), group="certificates.k8s.io"),
     ""),
    ("CSR for another node", req("CREATE", "certificatesigningrequests", csr("system:node:n2"),
                                 group="certificates.k8s.io"),
     'certificatesigningrequests.certificates.k8s.io "csr-1" is forbidden: can only create a node CSR with '
     "CN=system:node:n1"),
]


@pytest.fixture
def plugin() -> NodeRestriction:
    inf = FakeInformers()
    inf.put("", "nodes", {"metadata": {"name": "n1", "uid": NODE_UID}})
    web = pod()
    web["metadata"]["uid"] = "pod-uid"
    inf.put("", "pods", web)
    other = pod("other", node_name="n2")
    other["metadata"]["uid"] = "other-uid"
    inf.put("", "pods", other)
    return NodeRestriction(inf)  # type: ignore[arg-type]


@pytest.mark.parametrize(("case", "request_", "message"), CASES, ids=[c[0] for c in CASES])
async def test_node_restriction(plugin: NodeRestriction, case: str, request_: AdmissionRequest,
                                message: str) -> None:
    request_ = copy.deepcopy(request_)
    if not message:
        await plugin.admit(request_)
        return
    with pytest.raises(errors.StatusError) as exc:
        await plugin.admit(request_)
    assert (exc.value.code, exc.value.message) == (403, message)


async def test_missing_pod_is_not_found(plugin: NodeRestriction) -> None:
    with pytest.raises(errors.StatusError) as exc:
        await plugin.admit(req("CREATE", "pods", {"metadata": {"name": "gone"}}, namespace="demo", name="gone",
                               subresource="eviction", kind="Eviction"))
    assert (exc.value.code, exc.value.message) == (404, 'pods "gone" not found')


@pytest.mark.parametrize(("key", "kubelet"), [
    ("kubernetes.io/hostname", True), ("topology.kubernetes.io/zone", True), ("kubelet.kubernetes.io/x", True),
    ("a.node.kubernetes.io/x", True), ("node-role.kubernetes.io/worker", False), ("example.com/x", False),
])
def test_kubelet_labels(key: str, kubelet: bool) -> None:
    assert is_kubelet_label(key) is kubelet


def test_forbidden_labels_compares_both_ways() -> None:
    assert forbidden_labels({"x.k8s.io/a": "1", "team": "a"}, {"x.k8s.io/a": "2", "foo.kubernetes.io/b": "1"}) == [
        "foo.kubernetes.io/b", "x.k8s.io/a"]
    assert forbidden_labels({"node-restriction.kubernetes.io/a": "1"}, {"node-restriction.kubernetes.io/a": "1"}) == []
