"""What a DELETE answers, as kube-apiserver 1.37 (handlers/delete.go, Store.finalizeDelete), through the official
Python client, whose typed methods deserialize the answer as kube's OpenAPI declares it: the deleted object for
the resources whose registry returns it (Pods, Services, ServiceAccounts, ...), a ``Status`` for the others, the
object marked for deletion while finalizers keep it (202 only with ``orphanDependents: false``)."""

from __future__ import annotations

import pytest
from kubernetes import client, config

from kapi.local.launcher import Stack


@pytest.fixture(scope="module")
def core(stack: Stack) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=str(stack.kubeconfig)))


def test_typed_deletes_get_the_deleted_object(core: client.CoreV1Api, namespace: str) -> None:
    """Pods, Services and ServiceAccounts come back as themselves (the Python client's e2e tests read them)."""
    pod = core.create_namespaced_pod(namespace, {"metadata": {"name": "gone"},
                                                 "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    deleted = core.delete_namespaced_pod("gone", namespace)
    assert isinstance(deleted, client.V1Pod)
    assert deleted.metadata.name == "gone" and deleted.metadata.uid == pod.metadata.uid
    core.create_namespaced_service(namespace, {"metadata": {"name": "gone"}, "spec": {"ports": [{"port": 80}]}})
    svc = core.delete_namespaced_service("gone", namespace)
    assert isinstance(svc, client.V1Service) and svc.spec.ports[0].port == 80
    core.create_namespaced_service_account(namespace, {"metadata": {"name": "gone"}})
    assert isinstance(core.delete_namespaced_service_account("gone", namespace), client.V1ServiceAccount)


def test_other_deletes_get_a_status(core: client.CoreV1Api, namespace: str) -> None:
    made = core.create_namespaced_config_map(namespace, {"metadata": {"name": "gone"}, "data": {"a": "b"}})
    status = core.delete_namespaced_config_map("gone", namespace)
    assert status["kind"] == "Status" and status["status"] == "Success"
    assert status["details"] == {"name": "gone", "kind": "configmaps", "uid": made.metadata.uid}


def test_a_kept_object_is_answered_202_only_with_orphan_dependents_false(core: client.CoreV1Api,
                                                                         namespace: str) -> None:
    for name, orphan, code in (("kept-a", None, 200), ("kept-b", False, 202)):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name, "finalizers": ["example.com/x"]}})
        body = client.V1DeleteOptions(orphan_dependents=orphan) if orphan is not None else None
        data, status, _ = core.delete_namespaced_config_map_with_http_info(name, namespace, body=body)
        assert status == code, name
        assert data["kind"] == "ConfigMap" and data["metadata"]["deletionTimestamp"]
        core.patch_namespaced_config_map(name, namespace, {"metadata": {"finalizers": None}})


def test_a_scheduled_pod_is_deleted_gracefully(core: client.CoreV1Api, kubectl, namespace: str) -> None:
    """podStrategy.CheckGracefulDelete: a scheduled, running Pod is marked (deletionTimestamp + grace) and kept
    until a delete with grace 0; an unscheduled one goes at once (kr8s' wait-for-not-Ready relies on the first)."""
    spec = {"nodeName": "node-a", "terminationGracePeriodSeconds": 30,
            "containers": [{"name": "c", "image": "busybox"}]}
    core.create_namespaced_pod(namespace, {"metadata": {"name": "graceful"}, "spec": spec})
    marked = core.delete_namespaced_pod("graceful", namespace, grace_period_seconds=10)
    assert isinstance(marked, client.V1Pod)
    assert marked.metadata.deletion_timestamp is not None and marked.metadata.deletion_grace_period_seconds == 10
    kept = core.read_namespaced_pod("graceful", namespace)
    assert kept.metadata.deletion_grace_period_seconds == 10
    longer = core.delete_namespaced_pod("graceful", namespace, grace_period_seconds=60)  # only shortened
    assert longer.metadata.deletion_grace_period_seconds == 10
    kubectl.run("-n", namespace, "delete", "pod", "graceful", "--grace-period=0", "--force")
    assert kubectl.run("-n", namespace, "get", "pod", "graceful", check=False).returncode != 0


def test_podgc_force_deletes_a_pod_whose_node_is_gone(core: client.CoreV1Api, namespace: str) -> None:
    """kube-controller-manager's PodGC: a Pod bound to a Node that does not exist (after a 40 s quarantine) is
    marked Failed with DisruptionTarget DeletionByPodGC and force-deleted, ending its graceful deletion."""
    import time

    spec = {"nodeName": "no-such-node", "containers": [{"name": "c", "image": "busybox"}]}
    core.create_namespaced_pod(namespace, {"metadata": {"name": "orphan"}, "spec": spec})
    core.delete_namespaced_pod("orphan", namespace)  # graceful: kept, Terminating
    deadline = time.monotonic() + 120
    while True:
        try:
            core.read_namespaced_pod("orphan", namespace)
        except client.ApiException as err:
            assert err.status == 404
            break
        assert time.monotonic() < deadline, "PodGC did not delete the orphaned pod"
        time.sleep(2)
