"""The official ``kubernetes`` Python client against the shared stack (through Envoy)."""

from __future__ import annotations

import threading

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from kapi.local.launcher import Stack


@pytest.fixture(scope="module")
def core(stack: Stack) -> client.CoreV1Api:
    api_client = config.new_client_from_config(config_file=str(stack.kubeconfig))
    return client.CoreV1Api(api_client)


def test_create_list_watch_configmaps(core: client.CoreV1Api, namespace: str):
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py", labels={"app": "py"}), data={"a": "1"})
    created = core.create_namespaced_config_map(namespace, body)
    assert created.metadata.uid and created.data == {"a": "1"}

    listed = core.list_namespaced_config_map(namespace, label_selector="app=py")
    assert [cm.metadata.name for cm in listed.items] == ["py"]
    assert int(listed.metadata.resource_version) >= int(created.metadata.resource_version)

    events: list[tuple[str, str]] = []
    w = watch.Watch()

    def run() -> None:
        for event in w.stream(core.list_namespaced_config_map, namespace,
                              resource_version=listed.metadata.resource_version, timeout_seconds=20):
            events.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                w.stop()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    core.patch_namespaced_config_map("py", namespace, {"data": {"a": "2"}})
    core.delete_namespaced_config_map("py", namespace)
    thread.join(25)
    assert events == [("MODIFIED", "py"), ("DELETED", "py")]


def test_errors_are_status_objects(core: client.CoreV1Api, namespace: str):
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("missing", namespace)
    assert info.value.status == 404
    assert '"reason":"NotFound"' in info.value.body.replace(" ", "")

    core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c")))
    stale = core.read_namespaced_config_map("c", namespace)
    core.patch_namespaced_config_map("c", namespace, {"data": {"x": "1"}})
    stale.data = {"x": "2"}
    with pytest.raises(ApiException) as info:
        core.replace_namespaced_config_map("c", namespace, stale)
    assert info.value.status == 409
    assert "the object has been modified" in info.value.body


def test_already_exists_body_is_kube_bytes(core: client.CoreV1Api, namespace: str):
    """The client's ApiException carries kube-apiserver's exact body: metav1.Status field order, no empty
    fields, a trailing newline (the official client's own e2e tests compare this string)."""
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="twice"))
    core.create_namespaced_config_map(namespace, body)
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, body)
    assert info.value.status == 409
    assert info.value.body == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"twice\\" '
        'already exists","reason":"AlreadyExists","details":{"name":"twice","kind":"configmaps"},"code":409}\n')
