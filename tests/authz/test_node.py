"""The Node authorizer ("Using Node Authorization"): pod references, the graph, decisions, and its sync."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from services.authz.authorizer import Decision
from services.authz.node import NodeAuthorizer, NodeGraph, node_identity, references
from services.authz.policy import PolicySync

from .fakestorage import FakeStorage
from .test_sync import eventually, storage_server

N1 = UserInfo("system:node:n1", "", ("system:nodes", "system:authenticated"))
N2 = UserInfo("system:node:n2", "", ("system:nodes", "system:authenticated"))


def pod(name: str, node: str = "n1", namespace: str = "ns", **spec: Any) -> dict[str, Any]:
    body = {"containers": [{"name": "c", "image": "busybox"}], **spec}
    if node:
        body["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}, "spec": body}


FULL = pod(
    "full", serviceAccountName="builder",
    imagePullSecrets=[{"name": "pull"}],
    containers=[{"name": "c", "image": "x",
                 "envFrom": [{"secretRef": {"name": "env-secret"}}, {"configMapRef": {"name": "env-cm"}}],
                 "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "key-secret", "key": "k"}}},
                         {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "key-cm", "key": "k"}}},
                         {"name": "C", "value": "plain"}]}],
    initContainers=[{"name": "i", "image": "x", "envFrom": [{"secretRef": {"name": "init-secret"}}]}],
    ephemeralContainers=[{"name": "e", "image": "x", "envFrom": [{"configMapRef": {"name": "debug-cm"}}]}],
    volumes=[{"name": "s", "secret": {"secretName": "vol-secret"}},
             {"name": "c", "configMap": {"name": "vol-cm"}},
             {"name": "p", "persistentVolumeClaim": {"claimName": "data"}},
             {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
             {"name": "proj", "projected": {"sources": [{"secret": {"name": "proj-secret"}},
                                                        {"configMap": {"name": "proj-cm"}},
                                                        {"serviceAccountToken": {"path": "t"}}]}},
             {"name": "csi", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi-secret"}}},
             {"name": "rbd", "rbd": {"monitors": [], "image": "i", "secretRef": {"name": "rbd-secret"}}},
             {"name": "az", "azureFile": {"secretName": "az-secret", "shareName": "s"}},
             {"name": "empty", "emptyDir": {}}],
)


def test_references() -> None:
    assert references(FULL) == {
        ("serviceaccount", "ns", "builder"),
        *(("secret", "ns", n) for n in ("pull", "env-secret", "key-secret", "init-secret", "vol-secret",
                                         "proj-secret", "csi-secret", "rbd-secret", "az-secret")),
        *(("configmap", "ns", n) for n in ("env-cm", "key-cm", "debug-cm", "vol-cm", "proj-cm")),
        ("pvc", "ns", "data"), ("pvc", "ns", "full-scratch"),
    }
    assert references({"metadata": {"name": "x", "namespace": "ns"}, "spec": "garbage"}) == set()
    assert references({"metadata": {}, "spec": {"volumes": [None, {"secret": 3}], "containers": "x"}}) == set()


@pytest.mark.parametrize(
    ("user", "identity"),
    [
        (N1, ("n1", True)),
        (UserInfo("system:node:n1", "", ("other",)), ("", False)),
        (UserInfo("n1", "", ("system:nodes",)), ("", False)),
        (UserInfo("system:node:", "", ("system:nodes",)), ("", True)),
    ],
)
def test_node_identity(user: UserInfo, identity: tuple[str, bool]) -> None:
    assert node_identity(user) == identity


def graph_with(*pods: dict[str, Any]) -> NodeGraph:
    graph = NodeGraph()
    graph.replace("pods", pods, 10)
    return graph


def req(user: UserInfo, verb: str, resource: str, name: str = "", namespace: str = "ns", subresource: str = "",
        group: str = "") -> Attributes:
    return Attributes(user=user, verb=verb, resource_request=True, resource=resource, name=name,
                      namespace=namespace, subresource=subresource, api_group=group)


A, N = Decision.ALLOW, Decision.NO_OPINION
NO_REL = "no relationship found between node 'n1' and this object"


@pytest.mark.parametrize(
    ("attributes", "decision", "reason"),
    [
        # Objects referenced by pods bound to n1.
        (req(N1, "get", "secrets", "vol-secret"), A, ""),
        (req(N1, "list", "secrets", "env-secret"), A, ""),  # list/watch with metadata.name
        (req(N1, "watch", "configmaps", "key-cm"), A, ""),
        (req(N1, "get", "persistentvolumeclaims", "data"), A, ""),
        (req(N1, "get", "persistentvolumeclaims", "full-scratch"), A, ""),
        (req(N1, "patch", "persistentvolumeclaims", "data", subresource="status"), A, ""),
        (req(N1, "get", "serviceaccounts", "builder"), A, ""),
        (req(N1, "create", "serviceaccounts", "builder", subresource="token"), A, ""),
        # Not referenced, wrong namespace, another node's, or a verb a node may not use.
        (req(N1, "get", "secrets", "unrelated"), N, NO_REL),
        (req(N1, "get", "secrets", "vol-secret", namespace="other"), N, NO_REL),
        (req(N2, "get", "secrets", "vol-secret"), N, "no relationship found between node 'n2' and this object"),
        (req(N1, "get", "secrets", "other-node-secret"), N, NO_REL),
        (req(N1, "get", "secrets", "pending-secret"), N, NO_REL),  # unscheduled pod: no edge
        (req(N1, "list", "secrets"), N, "No Object name found"),
        (req(N1, "update", "secrets", "vol-secret"), N, "can only read resources of this type"),
        (req(N1, "get", "secrets", "vol-secret", subresource="x"), N, "cannot read subresource"),
        (req(N1, "get", "secrets", "vol-secret", namespace=""), N, "can only read namespaced object of this type"),
        (req(N1, "list", "persistentvolumeclaims", "data"), N, "can only get individual resources of this type"),
        (req(N1, "delete", "serviceaccounts", "builder"), N,
         "can only read or create tokens for individual service accounts"),
        # Its own Node, not others; node status.
        (req(N1, "get", "nodes", "n1", namespace=""), A, ""),
        (req(N1, "create", "nodes", namespace=""), A, ""),
        (req(N1, "update", "nodes", "n1", namespace=""), A, ""),
        (req(N1, "patch", "nodes", "n1", namespace="", subresource="status"), A, ""),
        (req(N1, "patch", "nodes", "n2", namespace=""), N, "node 'n1' cannot patch node 'n2'"),
        (req(N1, "update", "nodes", "n2", namespace="", subresource="status"), N, "node 'n1' cannot update node 'n2'"),
        (req(N1, "delete", "nodes", "n1", namespace=""), N,
         "can only create/get/list/patch/update/watch its own Node"),
        # Pod status of its own pods only; other pod verbs by the static node rules.
        (req(N1, "update", "pods", "full", subresource="status"), A, ""),
        (req(N1, "patch", "pods", "elsewhere", subresource="status"), N, NO_REL),
        (req(N1, "list", "pods", namespace=""), A, ""),
        (req(N1, "create", "pods", "mirror"), A, ""),
        (req(N1, "update", "pods", "full"), N, ""),
        # Leases and CSINodes: its own only.
        (req(N1, "update", "leases", "n1", namespace="kube-node-lease", group="coordination.k8s.io"), A, ""),
        (req(N1, "update", "leases", "n2", namespace="kube-node-lease", group="coordination.k8s.io"), N,
         "can only access its own object"),
        (req(N1, "get", "leases", "n1", namespace="default", group="coordination.k8s.io"), N,
         "can only access objects in the kube-node-lease scope"),
        (req(N1, "get", "csinodes", "n1", namespace="", group="storage.k8s.io"), A, ""),
        # Static rules: events, reviews; nothing else.
        (req(N1, "create", "events"), A, ""),
        (req(N1, "create", "subjectaccessreviews", namespace="", group="authorization.k8s.io"), A, ""),
        (req(N1, "list", "deployments", group="apps"), N, ""),
        (req(N1, "get", "endpoints", "kubernetes"), A, ""),
    ],
)
async def test_decisions(attributes: Attributes, decision: Decision, reason: str) -> None:
    graph = graph_with(FULL,
                       pod("elsewhere", "n2", volumes=[{"name": "v", "secret": {"secretName": "other-node-secret"}}]),
                       pod("pending", "", volumes=[{"name": "v", "secret": {"secretName": "pending-secret"}}]))
    result = await NodeAuthorizer(graph).authorize(attributes)
    assert (result.decision, result.reason) == (decision, reason)
    assert not result.cacheable  # graph answers do not follow the RBAC policy revision


async def test_non_nodes_are_not_its_business() -> None:
    authorizer = NodeAuthorizer(NodeGraph())  # not even synced: non-nodes never wait for the graph
    for user in (UserInfo("alice", "", ("system:nodes",)), UserInfo("system:node:n1", "", ("dev",))):
        result = await authorizer.authorize(req(user, "get", "secrets", "vol-secret"))
        assert (result.decision, result.reason, result.cacheable) == (N, "", True)
    with pytest.raises(errors.StatusError) as info:
        await authorizer.authorize(req(N1, "get", "secrets", "vol-secret"))
    assert info.value.code == 503
    assert authorizer.rules_for(N1, "ns").incomplete
    assert not authorizer.rules_for(UserInfo("alice"), "ns").incomplete


def test_graph_follows_pod_events() -> None:
    graph = graph_with(pod("a", volumes=[{"name": "v", "secret": {"secretName": "s"}}]),
                       pod("b", volumes=[{"name": "v", "secret": {"secretName": "s"}}]))
    ref = ("secret", "ns", "s")
    assert graph.has_reference("n1", ref)
    graph.apply("pods", "DELETED", pod("a"), 11)
    assert graph.has_reference("n1", ref)  # still referenced by b
    graph.apply("pods", "MODIFIED", pod("b", volumes=[]), 12)
    assert not graph.has_reference("n1", ref)
    graph.apply("pods", "ADDED", pod("c", "n2", volumes=[{"name": "v", "secret": {"secretName": "s"}}]), 13)
    assert graph.has_reference("n2", ref) and not graph.has_reference("n1", ref)
    assert graph.pod_node("ns", "c") == "n2"
    graph.apply("pods", "MODIFIED", pod("c", "n1", volumes=[{"name": "v", "secret": {"secretName": "s"}}]), 14)
    assert graph.has_reference("n1", ref) and not graph.has_reference("n2", ref)
    graph.apply("pods", "BOOKMARK", {}, 15)
    assert graph.revision == 14
    graph.replace("pods", [], 20)
    assert not graph.has_reference("n1", ref) and graph.pod_node("ns", "c") == ""


async def test_graph_sync_from_storage_relists_after_410() -> None:
    fake = FakeStorage()
    await fake.put("pods", pod("a", volumes=[{"name": "v", "secret": {"secretName": "s1"}}]))
    async with storage_server(fake) as (_, stub):
        graph = NodeGraph()
        sync = PolicySync(stub, graph, group="", resources=("pods",), what="node graph", min_backoff=0.01)
        task = asyncio.create_task(sync.run())
        try:
            await asyncio.wait_for(sync.synced.wait(), 5)
            assert graph.has_reference("n1", ("secret", "ns", "s1"))
            await eventually(lambda: fake.open_watches["pods"] == 1)
            await fake.put("pods", pod("b", volumes=[{"name": "v", "configMap": {"name": "c1"}}]))
            await eventually(lambda: graph.has_reference("n1", ("configmap", "ns", "c1")))
            fake.expire_watches = 1
            await fake.cut_watches()
            await fake.delete("pods", "ns", "a")
            await eventually(lambda: not graph.has_reference("n1", ("secret", "ns", "s1")))
            assert fake.lists["pods"] >= 2
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
