"""The seeds' multi-tenant cluster end to end: alice and bob (token users) create and use their own namespaces.

Namespace creation is granted to every authenticated user (kapi:namespace-provisioners); the NamespaceCreator
admission plugin records the creator; the tenant-rbac controller binds namespace-creator to them; the
tenant-quota controller creates the quotas of the kube-system template; deleting the namespace empties it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kapi import tenancy
from kapi.local.launcher import Stack
from tests.e2e.conftest import TOKENS, Kubectl, token_kubeconfig

TEMPLATE = {
    "tenant-best-effort-pods": "scopes: [BestEffort]\nhard: {pods: \"2\"}\n",
    "tenant-not-best-effort-pods": "scopes: [NotBestEffort]\nhard: {pods: \"1\"}\n",
    "tenant-services": "hard: {services: \"3\", services.loadbalancers: \"1\", "
                       "count/ingresses.networking.k8s.io: \"2\"}\n",
}


def eventually(check: Callable[[], bool], timeout: float = 10.0, interval: float = 0.2) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout}s: {check}")
        time.sleep(interval)


def ok(k: Kubectl, *args: str) -> bool:
    return k.run(*args, check=False).returncode == 0


@pytest.fixture(scope="module")
def bob(stack: Stack, stack_dir: Path) -> Kubectl:
    return Kubectl(token_kubeconfig(stack, "bob", TOKENS["bob"], stack_dir / "bob.kubeconfig"))


@pytest.fixture(scope="module")
def template(kubectl: Kubectl) -> Iterator[None]:
    # A small quota template (the controllers create the default one at start).
    eventually(lambda: ok(kubectl, "-n", "kube-system", "get", "configmap", "tenant-quota-template"), 20)
    kubectl.run("apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tenant-quota-template",
                                                              "namespace": "kube-system"}, "data": TEMPLATE}))
    yield


def pod(name: str, requests: bool = False) -> str:
    container: dict[str, object] = {"name": "c", "image": "nginx"}
    if requests:
        container["resources"] = {"requests": {"cpu": "10m"}, "limits": {"cpu": "10m"}}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [container]}})


def test_tenants_own_their_namespaces(kubectl: Kubectl, alice: Kubectl, bob: Kubectl, template: None) -> None:
    started = time.monotonic()
    alice.run("create", "namespace", "a")
    bob.run("create", "namespace", "b")
    try:
        # within seconds the creator can work in the namespace
        eventually(lambda: ok(alice, "-n", "a", "create", "configmap", "settings", "--from-literal=k=v"))
        bound_after = time.monotonic() - started
        assert bound_after < 10
        alice.run("-n", "a", "create", "-f", "-", input=pod("web"))
        assert "settings" in alice.run("-n", "a", "get", "configmaps", "-o", "name").stdout
        assert "pod/web" in alice.run("-n", "a", "get", "pods", "-o", "name").stdout
        eventually(lambda: ok(bob, "-n", "b", "create", "configmap", "mine"))

        # not in the other tenant's namespace, nor cluster-wide
        for who, other in ((alice, "b"), (bob, "a")):
            for args in (("get", "configmaps"), ("get", "pods"), ("create", "configmap", "x")):
                refused = who.run("-n", other, *args, check=False)
                assert refused.returncode != 0 and "forbidden" in refused.stderr.lower(), refused.stderr
        for args in (("get", "nodes"), ("get", "namespaces"), ("create", "clusterrole", "x", "--verb=get",
                                                                 "--resource=pods")):
            refused = alice.run(*args, check=False)
            assert refused.returncode != 0 and "forbidden" in refused.stderr.lower(), refused.stderr

        # the creator annotations, immutable afterwards
        ns = json.loads(kubectl.run("get", "namespace", "a", "-o", "json").stdout)
        annotations = ns["metadata"]["annotations"]
        assert (annotations[tenancy.CREATOR], annotations[tenancy.CREATOR_UID],
                annotations[tenancy.CREATOR_GROUPS]) == ("alice", "uid-alice", "dev,alice-group")
        kubectl.run("annotate", "namespace", "a", f"{tenancy.CREATOR}=bob", "--overwrite")
        ns = json.loads(kubectl.run("get", "namespace", "a", "-o", "json").stdout)
        assert ns["metadata"]["annotations"][tenancy.CREATOR] == "alice"
        binding = json.loads(kubectl.run("-n", "a", "get", "rolebinding", "namespace-creator", "-o", "json").stdout)
        assert binding["roleRef"]["name"] == "namespace-creator"
        assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]

        # the quota from the template, enforced
        quotas = json.loads(alice.run("-n", "a", "get", "resourcequotas", "-o", "json").stdout)["items"]
        assert {q["metadata"]["name"]: q["spec"] for q in quotas} == {
            "tenant-best-effort-pods": {"scopes": ["BestEffort"], "hard": {"pods": "2"}},
            "tenant-not-best-effort-pods": {"scopes": ["NotBestEffort"], "hard": {"pods": "1"}},
            "tenant-services": {"hard": {"services": "3", "services.loadbalancers": "1",
                                         "count/ingresses.networking.k8s.io": "2"}}}
        alice.run("-n", "a", "create", "-f", "-", input=pod("web2"))
        refused = alice.run("-n", "a", "create", "-f", "-", input=pod("web3"), check=False)
        assert "exceeded quota: tenant-best-effort-pods, requested: pods=1, used: pods=2, limited: pods=2" in \
            refused.stderr, refused.stderr
        alice.run("-n", "a", "create", "-f", "-", input=pod("qos", requests=True))
        refused = alice.run("-n", "a", "create", "-f", "-", input=pod("qos2", requests=True), check=False)
        assert "exceeded quota: tenant-not-best-effort-pods" in refused.stderr, refused.stderr
        alice.run("-n", "a", "create", "service", "loadbalancer", "lb1", "--tcp=80:80")
        refused = alice.run("-n", "a", "create", "service", "loadbalancer", "lb2", "--tcp=80:80", check=False)
        assert "exceeded quota: tenant-services" in refused.stderr and "services.loadbalancers" in refused.stderr

        # deleting the namespace removes everything in it, then the namespace
        kubectl.run("delete", "namespace", "a", "--timeout=30s")
        assert "NotFound" in kubectl.run("get", "namespace", "a", check=False).stderr
        for resource in ("pods", "configmaps", "services", "resourcequotas", "rolebindings", "serviceaccounts"):
            assert kubectl.run("-n", "a", "get", resource, "-o", "name").stdout.strip() == "", resource
    finally:
        for name in ("a", "b"):
            kubectl.run("delete", "namespace", name, "--ignore-not-found", "--wait=false", check=False)


def test_group_tenancy_binds_the_chosen_group(kubectl: Kubectl, alice: Kubectl, bob: Kubectl) -> None:
    manifest = {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "team-a", "annotations": {tenancy.TENANT_GROUP: "alice-group"}}}
    refused = bob.run("create", "-f", "-", input=json.dumps(manifest), check=False)
    assert "not a member of group 'alice-group'" in refused.stderr
    alice.run("create", "-f", "-", input=json.dumps(manifest))
    try:
        def bound() -> bool:
            proc = kubectl.run("-n", "team-a", "get", "rolebinding", "namespace-creator", "-o", "json", check=False)
            return proc.returncode == 0 and {"kind": "Group", "name": "alice-group",
                                             "apiGroup": "rbac.authorization.k8s.io"} in json.loads(
                proc.stdout)["subjects"]
        eventually(bound)
        # alice's namespace is still not bob's, though both are in the group "dev"
        assert "forbidden" in bob.run("-n", "team-a", "get", "pods", check=False).stderr.lower()
    finally:
        kubectl.run("delete", "namespace", "team-a", "--wait=false", check=False)


def test_finalize_and_status_cannot_rewrite_the_creator(kubectl: Kubectl, alice: Kubectl, tmp_path: Path) -> None:
    """A break-it finding: PUT .../finalize (and /status) carry metadata too; the creator annotations the tenant
    RBAC controller trusts stay as recorded, so nobody becomes admin of a namespace they did not create."""
    name = "t-finalize-creator"
    kubectl.run("create", "namespace", name)
    try:
        recorded = json.loads(kubectl.run("get", "namespace", name, "-o", "json").stdout)["metadata"][
            "annotations"][tenancy.CREATOR]
        forged = tmp_path / "ns.json"
        for subresource in ("finalize", "status"):
            ns = json.loads(kubectl.run("get", "namespace", name, "-o", "json").stdout)
            ns["metadata"]["annotations"].update({tenancy.CREATOR: "alice", tenancy.CREATOR_UID: "uid-alice",
                                                  tenancy.CREATOR_GROUPS: "dev"})
            forged.write_text(json.dumps(ns))
            kubectl.run("replace", "--raw", f"/api/v1/namespaces/{name}/{subresource}", "-f", str(forged))
            after = json.loads(kubectl.run("get", "namespace", name, "-o", "json").stdout)["metadata"]["annotations"]
            assert after[tenancy.CREATOR] == recorded != "alice", (subresource, after)
        time.sleep(1)
        assert not ok(alice, "-n", name, "get", "configmaps")  # no namespace-creator binding for alice
    finally:
        kubectl.run("delete", "namespace", name, "--wait=false")
