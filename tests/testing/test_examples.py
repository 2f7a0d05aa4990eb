"""The examples of docs/testing.md, run against the plugin's own ``kapi_cluster`` (one cluster for the module).

The official client, an RBAC check as an ordinary user, ``reset()``, the asyncio
context manager on a running cluster, and a kopf operator under
``kopf.testing.KopfRunner``: what a user of the plugin writes.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import kubernetes
import pytest
import yaml
from kopf.testing import KopfRunner

from kapi import testing

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "greetings.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "greetings", "singular": "greeting", "kind": "Greeting"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}

OPERATOR = '''
import kopf

@kopf.on.create("example.com", "v1", "greetings")
def greet(spec, **_):
    return {"message": f"hello {spec.get('name', 'world')}"}
'''


def _until(check, timeout: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.2)
    return result


def test_official_client(kapi_cluster: testing.Cluster, kapi_namespace: str) -> None:
    core = kubernetes.client.CoreV1Api(kapi_cluster.api_client())
    core.create_namespaced_config_map(kapi_namespace, {"metadata": {"name": "app"}, "data": {"k": "v"}})
    assert core.read_namespaced_config_map("app", kapi_namespace).data == {"k": "v"}
    assert kapi_cluster.kubectl("get", "cm", "app", "-n", kapi_namespace, "-o", "jsonpath={.data.k}").stdout == "v"


def test_rbac_as_an_ordinary_user(kapi_cluster: testing.Cluster, kapi_namespace: str) -> None:
    alice = kapi_cluster.as_user("alice", ["dev"])
    core = kubernetes.client.CoreV1Api(alice.api_client())
    with pytest.raises(kubernetes.client.ApiException) as denied:
        core.list_namespaced_config_map(kapi_namespace)
    assert denied.value.status == 403
    kapi_cluster.kubectl("create", "rolebinding", "dev-view", "--clusterrole=view", "--group=dev",
                         "-n", kapi_namespace)
    kapi_cluster.wait_for_authorization(alice, "list", "configmaps", kapi_namespace)
    assert alice.kubectl("auth", "can-i", "list", "configmaps", "-n", kapi_namespace).stdout.strip() == "yes"
    core.list_namespaced_config_map(kapi_namespace)
    assert alice.kubectl("auth", "can-i", "delete", "configmaps", "-n", kapi_namespace,
                         check=False).stdout.strip() == "no"
    kapi_cluster.wait_for_authorization(alice, "delete", "configmaps", kapi_namespace, allowed=False)
    with pytest.raises(TimeoutError):
        kapi_cluster.wait_for_authorization(alice, "delete", "configmaps", kapi_namespace, timeout=0.3)


def test_reset_leaves_no_user_object(kapi_cluster: testing.Cluster) -> None:
    kapi_cluster.kubectl("create", "namespace", "scratch")
    kapi_cluster.kubectl("-n", "scratch", "create", "configmap", "inside")
    kapi_cluster.kubectl("-n", "default", "create", "configmap", "leftover")
    kapi_cluster.kubectl("create", "clusterrole", "leftover", "--verb=get", "--resource=pods")
    kapi_cluster.kubectl("apply", "-f", "-", input=json.dumps(CRD))
    started = time.monotonic()
    kapi_cluster.reset()
    assert time.monotonic() - started < 30
    assert kapi_cluster.leftovers() == []
    assert kapi_cluster.kubectl("get", "namespace", "scratch", check=False).returncode != 0
    assert kapi_cluster.kubectl("get", "cm", "leftover", "-n", "default", check=False).returncode != 0
    assert kapi_cluster.kubectl("get", "ns", "default", "kube-system", "-o", "name").stdout.split() == [
        "namespace/default", "namespace/kube-system"]


def test_async_cluster_on_a_running_cluster(kapi_cluster: testing.Cluster) -> None:
    async def main() -> str:
        async with testing.async_cluster(kubeconfig=kapi_cluster.kubeconfig) as c:
            assert c.stack is None and c.server == kapi_cluster.server
            await asyncio.to_thread(c.kubectl, "create", "namespace", "async-scratch")
            await c.areset()
            return c.kubectl("get", "namespace", "async-scratch", check=False).stderr

    assert "NotFound" in asyncio.run(main())


def test_kopf_operator(kapi_cluster: testing.Cluster, kapi_namespace: str, tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kapi_cluster.kubeconfig))
    (tmp_path / "greeter.py").write_text(OPERATOR)
    kapi_cluster.kubectl("apply", "-f", "-", input=json.dumps(CRD))
    kapi_cluster.kubectl("wait", "--for=condition=Established", "crd/greetings.example.com", "--timeout=20s")
    greeting = {"apiVersion": "example.com/v1", "kind": "Greeting", "metadata": {"name": "kapi"},
                "spec": {"name": "kapi"}}
    with KopfRunner(["run", "--standalone", f"--namespace={kapi_namespace}", str(tmp_path / "greeter.py")],
                    timeout=60) as runner:
        kapi_cluster.kubectl("apply", "-n", kapi_namespace, "-f", "-", input=yaml.safe_dump(greeting))

        def status() -> dict[str, object]:
            out = kapi_cluster.kubectl("get", "greetings.example.com", "kapi", "-n", kapi_namespace, "-o", "json")
            return dict(json.loads(out.stdout).get("status", {}))

        assert _until(lambda: status().get("greet")) == {"message": "hello kapi"}
        kapi_cluster.kubectl("delete", "greetings.example.com", "kapi", "-n", kapi_namespace)
    assert runner.exit_code == 0 and runner.exception is None
    assert "Handler 'greet' succeeded" in runner.output
    kapi_cluster.reset()
