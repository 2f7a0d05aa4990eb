"""NodeRestriction, EventRateLimit and ImagePolicyWebhook end to end with kubectl, on a stack of their own.

The stack runs ``--authorization-mode=Node,RBAC`` with a static token for
the kubelet ``system:node:n1`` (group ``system:nodes``), the three plugins
enabled, and an admission control config file giving EventRateLimit a
per-namespace bucket and ImagePolicyWebhook the example backend
(``examples/webhooks/image_policy.py``) over TLS.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from examples.webhooks import common, image_policy
from kapi.local import pki
from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, own_stack, token_kubeconfig

NODE_TOKEN = "n1-token-0123456789"
BURST = 3


class Backend:
    """The example ImageReview backend served over TLS from a thread of the test process."""

    def __init__(self, cert: Path, key: Path):
        self.loop = asyncio.new_event_loop()
        self.app = image_policy.make_app()
        ready = threading.Event()

        async def main() -> None:
            self.runner, self.port = await common.start(self.app, cert, key)
            ready.set()

        self.thread = threading.Thread(target=lambda: (self.loop.run_until_complete(main()),
                                                       self.loop.run_forever()), daemon=True)
        self.thread.start()
        assert ready.wait(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture(scope="module")
def env() -> Iterator[tuple[Stack, Kubectl, Kubectl, Backend]]:
    with tempfile.TemporaryDirectory(prefix="kapi-adm-more-") as tmp_name:
        tmp = Path(tmp_name)
        certs = pki.ensure_pki(tmp / "backend", port=None)
        backend = Backend(certs.apiserver_cert, certs.apiserver_key)
        kubeconfig = tmp / "image-policy.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "images", "cluster": {
                "server": f"https://127.0.0.1:{backend.port}/image-policy",
                "certificate-authority": str(certs.ca_cert)}}],
            "users": [{"name": "apiserver", "user": {}}],
            "contexts": [{"name": "c", "context": {"cluster": "images", "user": "apiserver"}}],
            "current-context": "c"}))
        config = tmp / "admission.yaml"
        config.write_text(yaml.safe_dump({
            "apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration", "plugins": [
                {"name": "EventRateLimit", "configuration": {
                    "apiVersion": "eventratelimit.admission.k8s.io/v1alpha1", "kind": "Configuration",
                    "limits": [{"type": "Namespace", "qps": 1, "burst": BURST}]}},
                {"name": "ImagePolicyWebhook", "configuration": {"imagePolicy": {
                    "kubeConfigFile": str(kubeconfig), "allowTTL": 50, "denyTTL": 50, "retryBackoff": 500,
                    "defaultAllow": False}}}]}))
        tokens = tmp / "tokens.csv"
        tokens.write_text(f'{NODE_TOKEN},system:node:n1,uid-n1,"system:nodes"\n')
        with own_stack([
            f"--token-auth-file={tokens}", "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction,EventRateLimit,ImagePolicyWebhook",
            f"--admission-control-config-file={config}"]) as stack:
            admin = Kubectl(Path(stack.kubeconfig))
            node = Kubectl(token_kubeconfig(stack, "n1", NODE_TOKEN, tmp / "n1.kubeconfig"))
            yield stack, admin, node, backend
            backend.stop()


def create(k: Kubectl, doc: dict[str, Any], namespace: str = "", check: bool = True) -> Any:
    args = ("-n", namespace) if namespace else ()
    return k.run(*args, "create", "-f", "-", input=json.dumps(doc), check=check)


def event(name: str, namespace: str) -> dict[str, Any]:
    # the involved object's namespace is the event's (legacyValidateEvent refuses another, or none outside default)
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name},
            "involvedObject": {"kind": "Pod", "name": "web", "apiVersion": "v1", "namespace": namespace},
            "reason": "Tested", "message": "hello", "type": "Normal", "source": {"component": "e2e"}}


def test_event_rate_limit_per_namespace(env: tuple[Stack, Kubectl, Kubectl, Backend]) -> None:
    _, admin, _, _ = env
    admin.run("create", "namespace", "events-a")
    admin.run("create", "namespace", "events-b")
    batch = {"apiVersion": "v1", "kind": "List", "items": [event(f"e{i}", "events-a") for i in range(BURST + 3)]}
    proc = admin.run("-n", "events-a", "create", "--validate=false", "-f", "-", input=json.dumps(batch), check=False)
    assert proc.returncode != 0
    assert ('Error from server (TooManyRequests): error when creating "STDIN": Too many requests: limit reached on '
            "type Namespace for key events-a") in proc.stderr
    created = admin.run("-n", "events-a", "get", "events", "-o", "name").stdout.split()
    assert BURST <= len(created) < BURST + 3
    create(admin, event("other", "events-b"), "events-b")  # another namespace has its own bucket
    create(admin, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}, "events-a")  # not an Event


def test_node_restriction(env: tuple[Stack, Kubectl, Kubectl, Backend]) -> None:
    _, admin, node, _ = env
    # kapi's Node authorizer already refuses writes to other nodes by name; a create names it in the body only
    other = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n3"}}
    proc = create(node, other, check=False)
    assert 'nodes "n3" is forbidden: node "n1" is not allowed to modify node "n3"' in proc.stderr
    own = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
        "kubernetes.io/hostname": "n1", "node-role.kubernetes.io/control-plane": ""}}}
    proc = create(node, own, check=False)
    assert ('nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: '
            "node-role.kubernetes.io/control-plane") in proc.stderr
    del own["metadata"]["labels"]["node-role.kubernetes.io/control-plane"]
    create(node, own)
    node.run("label", "node", "n1", "team=a", "topology.kubernetes.io/zone=z1")
    proc = node.run("label", "node", "n1", "node-restriction.kubernetes.io/pool=gold", check=False)
    assert ('nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool'
            in proc.stderr)
    labels = yaml.safe_load(admin.run("get", "node", "n1", "-o", "yaml").stdout)["metadata"]["labels"]
    assert labels == {"kubernetes.io/hostname": "n1", "team": "a", "topology.kubernetes.io/zone": "z1"}
    create(admin, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}})

    admin.run("create", "namespace", "nodes-pods")
    proc = node.run("-n", "nodes-pods", "run", "web", "--image=nginx:1.27", check=False)
    assert ('pods "web" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can '
            "only create mirror pods") in proc.stderr
    bound = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "elsewhere"},
             "spec": {"nodeName": "n2", "containers": [{"name": "c", "image": "nginx:1.27"}]}}
    create(admin, bound, "nodes-pods")
    proc = node.run("-n", "nodes-pods", "delete", "pod", "elsewhere", "--wait=false", check=False)
    assert ('pods "elsewhere" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself'
            in proc.stderr)

    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "n2"},
             "spec": {"holderIdentity": "n2"}}
    proc = create(node, lease, "kube-node-lease", check=False)
    assert ('leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the '
            "requesting node") in proc.stderr
    create(node, {**lease, "metadata": {"name": "n1"}, "spec": {"holderIdentity": "n1"}}, "kube-node-lease")


def test_image_policy_webhook(env: tuple[Stack, Kubectl, Kubectl, Backend]) -> None:
    _, admin, _, backend = env
    admin.run("create", "namespace", "images")
    admin.run("-n", "images", "run", "web", "--image=nginx:1.27")
    proc = admin.run("-n", "images", "run", "latest", "--image=nginx", check=False)
    assert ('Error from server (Forbidden): pods "latest" is forbidden: image policy webhook backend denied one or '
            "more images: Images using latest tag are not allowed") in proc.stderr
    admin.run("-n", "images", "run", "glass", "--image=nginx",
              "--annotations=break-glass.image-policy.k8s.io/reason=INC-7")
    reviews = backend.app[image_policy.REVIEWS]
    assert {"containers": [{"image": "nginx"}], "namespace": "images",
            "annotations": {"break-glass.image-policy.k8s.io/reason": "INC-7"}} in reviews
    assert admin.run("-n", "images", "get", "pods", "-o", "name").stdout.split() == ["pod/glass", "pod/web"]
