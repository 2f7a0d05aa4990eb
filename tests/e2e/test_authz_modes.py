"""Node, ABAC and Webhook authorization end to end with kubectl, on a stack of their own.

The stack runs ``--authorization-mode=Node,RBAC,ABAC,Webhook`` with an ABAC
policy file and the example webhook authorizer (examples/authz-webhook)
served over TLS; authz presents a client certificate issued by the cluster
CA (kapi.local.pki) and the webhook requires it. The webhook's timeout is 1s and
one of its rules answers "allow" only after 3s.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from kapi.local import pki
from kapi.local.launcher import Stack
from tests.authn.webhookutil import tls_files
from tests.authz.webhookutil import ROOT, kubeconfig

from .conftest import Kubectl, own_stack, token_kubeconfig

TOKENS = {"abby": "abby-token-0123456789", "wendy": "wendy-token-0123456789", "dave": "dave-token-0123456789",
          "slow": "slow-token-0123456789"}
ABAC = [
    {"user": "abby", "namespace": "*", "resource": "*", "apiGroup": "*", "readonly": True},
]
POLICY = """
rules:
- users: [wendy]
  verbs: [get, list, watch]
  resources: [configmaps]
  decision: allow
  reason: wendy reads configmaps
- users: [dave]
  decision: deny
  reason: dave is suspended
- users: [slow]
  decision: allow
  delaySeconds: 3
"""


@pytest.fixture(scope="module")
def modes_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Path]]:
    tmp = tmp_path_factory.mktemp("authz-modes")
    cluster = pki.ensure_pki(tmp / "state", port=None)  # the stack keeps this PKI
    client_cert, client_key = pki.issue_client_cert(cluster, "kapi-authz-webhook-client")
    _, ca, cert, key = tls_files(tmp)
    (tmp / "policy.yaml").write_text(POLICY)
    port_file = tmp / "webhook.port"
    webhook = subprocess.Popen([sys.executable, str(ROOT / "examples" / "authz-webhook" / "server.py"),
                                "--policy-file", str(tmp / "policy.yaml"), "--tls-cert-file", str(cert),
                                "--tls-private-key-file", str(key), "--client-ca-file", str(cluster.ca_cert),
                                "--port", "0", "--port-file", str(port_file)],
                               stdout=subprocess.DEVNULL, stderr=(tmp / "webhook.log").open("w"))
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() or not port_file.read_text():
            assert time.monotonic() < deadline and webhook.poll() is None, "the example webhook did not start"
            time.sleep(0.05)
        config = kubeconfig(tmp / "webhook.kubeconfig", f"https://127.0.0.1:{port_file.read_text()}/authorize", ca,
                            client_cert, client_key)
        (tmp / "abac.jsonl").write_text("".join(json.dumps({
            "apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": p}) + "\n"
            for p in ABAC))
        (tmp / "tokens.csv").write_text("".join(f"{token},{user},uid-{user},\"\"\n" for user, token in TOKENS.items()))
        with own_stack([
            "--authorization-mode=Node,RBAC,ABAC,Webhook", f"--authorization-policy-file={tmp / 'abac.jsonl'}",
            f"--authorization-webhook-config-file={config}", "--authorization-webhook-timeout=1s",
            f"--token-auth-file={tmp / 'tokens.csv'}"]) as stack:
            yield stack, tmp
    finally:
        webhook.terminate()
        webhook.wait(10)


@pytest.fixture(scope="module")
def admin(modes_stack: tuple[Stack, Path]) -> Kubectl:
    return Kubectl(Path(modes_stack[0].kubeconfig))


def as_user(modes_stack: tuple[Stack, Path], user: str) -> Kubectl:
    stack, tmp = modes_stack
    return Kubectl(token_kubeconfig(stack, user, TOKENS[user], tmp / f"{user}.kubeconfig"))


def as_node(modes_stack: tuple[Stack, Path], node: str) -> Kubectl:
    stack, tmp = modes_stack
    cert, key = pki.issue_client_cert(stack.pki, f"system:node:{node}", ["system:nodes"])
    return Kubectl(pki.write_kubeconfig(tmp / f"{node}.kubeconfig", stack.url, stack.pki.ca_cert, cert, key,
                                        user=node))


def forbidden(proc: subprocess.CompletedProcess[str], user: str, verb: str, resource: str) -> None:
    assert proc.returncode != 0, proc.stdout
    assert f'User "{user}" cannot {verb} resource "{resource}"' in proc.stderr, proc.stderr


def eventually_ok(k: Kubectl, *args: str, timeout: float = 10) -> subprocess.CompletedProcess[str]:
    deadline = time.monotonic() + timeout
    while True:
        proc = k.run(*args, check=False)
        if proc.returncode == 0 or time.monotonic() > deadline:
            return proc
        time.sleep(0.2)


def test_node_reads_only_what_its_pods_reference(modes_stack: tuple[Stack, Path], admin: Kubectl) -> None:
    admin.run("create", "namespace", "work")
    for name in ("mounted", "env", "unrelated", "other-node"):
        admin.run("create", "secret", "generic", name, "-n", "work", f"--from-literal=k={name}")
    admin.run("create", "configmap", "settings", "-n", "work", "--from-literal=a=b")
    for pod in (
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "work"},
         "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox",
                                                    "envFrom": [{"secretRef": {"name": "env"}},
                                                                {"configMapRef": {"name": "settings"}}]}],
                  "volumes": [{"name": "v", "secret": {"secretName": "mounted"}}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2", "namespace": "work"},
         "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "busybox"}],
                  "volumes": [{"name": "v", "secret": {"secretName": "other-node"}}]}},
    ):
        admin.run("create", "-f", "-", input=json.dumps(pod))
    n1 = as_node(modes_stack, "n1")
    got = eventually_ok(n1, "get", "secret", "mounted", "-n", "work", "-o", "jsonpath={.data.k}")
    assert got.returncode == 0, got.stderr
    n1.run("get", "secret", "env", "-n", "work")
    n1.run("get", "configmap", "settings", "-n", "work")
    for name in ("unrelated", "other-node"):
        proc = n1.run("get", "secret", name, "-n", "work", check=False)
        forbidden(proc, "system:node:n1", "get", "secrets")
        assert "no relationship found between node 'n1' and this object" in proc.stderr
    forbidden(n1.run("get", "secrets", "-n", "work", check=False), "system:node:n1", "list", "secrets")
    forbidden(n1.run("delete", "secret", "mounted", "-n", "work", check=False), "system:node:n1", "delete",
              "secrets")
    # The graph follows pod changes: p1 gone takes the access away (a scheduled pod is deleted gracefully and
    # keeps its edges while Terminating; the kubelet's grace-0 delete removes it: done here by force).
    admin.run("delete", "pod", "p1", "-n", "work", "--grace-period=0", "--force", "--wait=false")
    deadline = time.monotonic() + 10
    while n1.run("get", "secret", "mounted", "-n", "work", check=False).returncode == 0:
        assert time.monotonic() < deadline, "the node kept access after its pod was deleted"
        time.sleep(0.2)


def test_node_writes_its_own_node_and_pod_status(modes_stack: tuple[Stack, Path], admin: Kubectl) -> None:
    admin.run("create", "namespace", "status")
    admin.run("create", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "mine", "namespace": "status"},
         "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]}}))
    admin.run("create", "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "theirs", "namespace": "status"},
         "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "busybox"}]}}))
    n1 = as_node(modes_stack, "n1")
    n1.run("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))
    n1.run("label", "node", "n1", "kapi.test/ready=yes")
    admin.run("create", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}}))
    proc = n1.run("patch", "node", "n2", "--type=merge", "-p", '{"metadata": {"labels": {"stolen": "yes"}}}',
                  check=False)
    assert proc.returncode != 0 and "node 'n1' cannot get node 'n2'" in proc.stderr, proc.stderr  # kubectl GETs first
    answer = n1.run("auth", "can-i", "patch", "nodes/n2", check=False).stdout
    assert answer.startswith("no - node 'n1' cannot patch node 'n2'"), answer
    assert n1.run("auth", "can-i", "patch", "nodes/n1").stdout.strip() == "yes"
    forbidden(n1.run("get", "node", "n2", check=False), "system:node:n1", "get", "nodes")  # its own Node only
    patch = json.dumps({"status": {"phase": "Running"}})
    done = eventually_ok(n1, "patch", "pod", "mine", "-n", "status", "--subresource=status", "--type=merge",
                         "-p", patch)
    assert done.returncode == 0, done.stderr
    assert admin.run("get", "pod", "mine", "-n", "status", "-o", "jsonpath={.status.phase}").stdout == "Running"
    proc = n1.run("patch", "pod", "theirs", "-n", "status", "--subresource=status", "--type=merge", "-p", patch,
                  check=False)
    forbidden(proc, "system:node:n1", "get", "pods/status")  # kubectl GETs the status first
    assert "no relationship found between node 'n1' and this object" in proc.stderr


def test_abac_user_reads_but_cannot_write(modes_stack: tuple[Stack, Path], admin: Kubectl) -> None:
    admin.run("create", "namespace", "abac")
    admin.run("create", "configmap", "seen", "-n", "abac")
    abby = as_user(modes_stack, "abby")
    assert "seen" in abby.run("get", "configmaps", "-n", "abac").stdout
    abby.run("get", "namespaces")
    forbidden(abby.run("create", "configmap", "new", "-n", "abac", check=False), "abby", "create", "configmaps")
    forbidden(abby.run("delete", "configmap", "seen", "-n", "abac", check=False), "abby", "delete", "configmaps")
    assert abby.run("auth", "can-i", "list", "secrets", "-n", "abac").stdout.strip() == "yes"
    assert abby.run("auth", "can-i", "create", "secrets", "-n", "abac", check=False).stdout.strip().startswith("no")


def test_webhook_allows_and_denies(modes_stack: tuple[Stack, Path], admin: Kubectl) -> None:
    admin.run("create", "namespace", "hook")
    admin.run("create", "configmap", "visible", "-n", "hook")
    wendy = as_user(modes_stack, "wendy")
    assert "visible" in wendy.run("get", "configmaps", "-n", "hook").stdout
    forbidden(wendy.run("get", "secrets", "-n", "hook", check=False), "wendy", "list", "secrets")
    forbidden(wendy.run("delete", "configmap", "visible", "-n", "hook", check=False), "wendy", "delete",
              "configmaps")
    dave = as_user(modes_stack, "dave")
    proc = dave.run("get", "configmaps", "-n", "hook", check=False)
    forbidden(proc, "dave", "list", "configmaps")
    assert "dave is suspended" in proc.stderr


def test_webhook_timeout_is_no_opinion_never_allow(modes_stack: tuple[Stack, Path], admin: Kubectl) -> None:
    stack, _ = modes_stack
    admin.run("create", "namespace", "late")
    slow = as_user(modes_stack, "slow")
    started = time.monotonic()
    proc = slow.run("get", "configmaps", "-n", "late", check=False)
    forbidden(proc, "slow", "list", "configmaps")  # the webhook would have allowed, 3s late
    assert time.monotonic() - started < 10
    log = stack.log_path("authz").read_text()
    assert "Failed to make webhook authorizer request" in log
    assert "did not answer within 1s" in log


def test_always_allow_turns_anonymous_off(tmp_path: Path) -> None:
    """kube's ApplyAuthorization: with AlwaysAllow among the authorizers a request without a credential is 401,
    not system:anonymous with every permission; a token user gets everything."""
    (tmp_path / "tokens.csv").write_text('abby-token-0123456789,abby,uid-abby,""\n')
    with own_stack(["--authorization-mode=AlwaysAllow", f"--token-auth-file={tmp_path / 'tokens.csv'}"]) as stack:
        context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
        for method, body in (("GET", None), ("POST", b'{"metadata": {"name": "anon-made"}}')):
            request = urllib.request.Request(f"{stack.url}/api/v1/namespaces", data=body, method=method,
                                             headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(request, context=context, timeout=10)
            assert info.value.code == 401
            assert json.loads(info.value.read())["message"] == "Unauthorized"
        abby = Kubectl(token_kubeconfig(stack, "abby", "abby-token-0123456789", tmp_path / "abby.kubeconfig"))
        abby.run("create", "namespace", "abby-made")  # no RBAC binding: AlwaysAllow decides
