"""Pod subresources that need a kubelet answer with kube's Status at once (kapi runs no nodes)."""

from __future__ import annotations

import json
import textwrap

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_kube_parity_defaults import _raw

POD = textwrap.dedent("""\
    apiVersion: v1
    kind: Pod
    metadata: {name: %s}
    spec:
      %s
      containers:
      - {name: app, image: busybox:1.36}
      - {name: side, image: busybox:1.36}
    """)


def test_logs_and_exec_without_a_kubelet(stack: Stack, kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "apply", "-f", "-", input=POD % ("pending", ""))
    out = kubectl.run("-n", namespace, "logs", "pending", timeout=20)  # kubectl picks the first container itself
    assert 'Defaulted container "app" out of: app, side' in out.stderr and out.stdout == ""
    raw = kubectl.run("get", "--raw", f"/api/v1/namespaces/{namespace}/pods/pending/log", check=False, timeout=20)
    assert "a container name must be specified for pod pending, choose one of: [app side]" in raw.stderr
    out = kubectl.run("-n", namespace, "logs", "pending", "-c", "nope", check=False, timeout=20)
    assert "container nope is not valid for pod pending" in out.stderr
    assert kubectl.run("-n", namespace, "logs", "pending", "-c", "app", timeout=20).stdout == ""
    # LogLocation has no location for an unscheduled pod: kube's streamer answers 204 No Content.
    code, body = _raw(stack, "GET", f"/api/v1/namespaces/{namespace}/pods/pending/log?container=app")
    assert (code, body) == (204, b"")
    code, body = _raw(stack, "GET", f"/api/v1/namespaces/{namespace}/pods/pending/log?container=app&tailLines=-1")
    assert code == 422 and json.loads(body)["message"] == (
        'PodLogOptions "pending" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0')
    out = kubectl.run("-n", namespace, "exec", "pending", "-c", "app", "--", "true", check=False, timeout=20)
    assert out.returncode != 0 and "pod pending does not have a host assigned" in out.stderr

    kubectl.run("-n", namespace, "apply", "-f", "-", input=POD % ("bound", "nodeName: node-1"))
    out = kubectl.run("-n", namespace, "logs", "bound", "-c", "app", check=False, timeout=20)
    assert out.returncode != 0 and "no kubelet is reachable" in out.stderr


def test_discovery_lists_pod_subresources(kubectl: Kubectl):
    names = {r["name"]: r for r in __import__("json").loads(kubectl.run("get", "--raw", "/api/v1").stdout)[
        "resources"]}
    assert names["pods/log"]["verbs"] == ["get"]
    assert names["pods/exec"]["kind"] == "PodExecOptions"


def test_binding_and_eviction(kubectl: Kubectl, namespace: str):
    import json as _json

    kubectl.run("-n", namespace, "apply", "-f", "-", input=POD % ("tobind", ""))
    binding = _json.dumps({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "tobind"},
                           "target": {"apiVersion": "v1", "kind": "Node", "name": "node-7"}})
    kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/tobind/binding", "-f", "-", input=binding)
    pod = _json.loads(kubectl.run("-n", namespace, "get", "pod", "tobind", "-o", "json").stdout)
    assert pod["spec"]["nodeName"] == "node-7"
    again = kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/tobind/binding", "-f", "-",
                        input=binding, check=False)
    assert 'is already assigned to node "node-7"' in again.stderr

    kubectl.run("-n", namespace, "apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: keep-one}
        spec:
          minAvailable: 1
          selector: {matchLabels: {app: guarded}}
        """))
    kubectl.run("-n", namespace, "apply", "-f", "-", input=(POD % ("guarded", "")).replace(
        "metadata: {name: guarded}", "metadata: {name: guarded, labels: {app: guarded}}"))
    # The budget guards running pods only (kube's canIgnorePDB lets a Pending pod go): report it Running first.
    kubectl.run("-n", namespace, "patch", "pod", "guarded", "--subresource=status", "--type=merge",
                "-p", '{"status": {"phase": "Running"}}')
    eviction = _json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "guarded"}})
    refused = kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/guarded/eviction", "-f", "-",
                          input=eviction, check=False)
    assert "Cannot evict pod as it would violate the pod's disruption budget." in refused.stderr
    # A body naming another pod than the URL is kube's 400, for Eviction and Binding alike.
    other = kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/tobind/eviction", "-f", "-",
                        input=eviction, check=False)
    assert "name in URL does not match name in Eviction object" in other.stderr, other.stderr
    other = kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/guarded/binding", "-f", "-",
                        input=binding, check=False)
    assert "name in URL does not match name in Binding object" in other.stderr, other.stderr
    kubectl.run("-n", namespace, "apply", "-f", "-", input=(POD % ("pending", "")).replace(
        "metadata: {name: pending}", "metadata: {name: pending, labels: {app: guarded}}"))
    pending = _json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "pending"}})
    kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/pending/eviction", "-f", "-", input=pending)
    free = _json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "tobind"}})
    kubectl.run("create", "--raw", f"/api/v1/namespaces/{namespace}/pods/tobind/eviction", "-f", "-", input=free)
    # a scheduled pod is deleted gracefully (podStrategy.CheckGracefulDelete): Terminating, kept for the kubelet
    terminating = _json.loads(kubectl.run("-n", namespace, "get", "pod", "tobind", "-o", "json").stdout)
    assert terminating["metadata"]["deletionTimestamp"] and terminating["metadata"]["deletionGracePeriodSeconds"] > 0
    kubectl.run("-n", namespace, "delete", "pod", "tobind", "--grace-period=0", "--force")
    gone = kubectl.run("-n", namespace, "get", "pod", "tobind", check=False)
    assert "NotFound" in gone.stderr


def test_the_legacy_bindings_resource(stack, kubectl: Kubectl, namespace: str):
    """core/v1 ``bindings`` (kube's LegacyBindingREST): listed by discovery, create only; the Python client's
    create_namespaced_binding binds the Pod the Binding names (201 Status Success), once."""
    import json

    from kubernetes import client, config

    rows = [line.split() for line in kubectl.run("api-resources", "--api-group=").stdout.splitlines()]
    assert ["bindings", "v1", "true", "Binding"] in rows
    core = client.CoreV1Api(config.new_client_from_config(config_file=str(stack.kubeconfig)))
    core.create_namespaced_pod(namespace, {"metadata": {"name": "tobind"},
                                           "spec": {"containers": [{"name": "c", "image": "busybox"}]}})
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "tobind"},
            "target": {"kind": "Node", "name": "node-b"}}
    raw = core.create_namespaced_binding(namespace, body, _preload_content=False)
    assert raw.status == 201 and json.loads(raw.data)["status"] == "Success"
    assert core.read_namespaced_pod("tobind", namespace).spec.node_name == "node-b"
    again = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(body), check=False)
    assert 'pod tobind is already assigned to node "node-b"' in again.stderr, again.stderr


def test_the_legacy_bindings_resource_is_authorized_as_its_own_resource(kubectl: Kubectl, namespace: str):
    """The write path's guards run on it: creating a Binding needs ``create`` on ``bindings`` (kube's RBAC
    attributes for the legacy resource), refused with kube's 403 otherwise, and nothing is bound."""
    import json

    kubectl.run("-n", namespace, "apply", "-f", "-", input=POD % ("guardbind", ""))
    body = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "guardbind"},
            "target": {"kind": "Node", "name": "node-c"}}
    # --validate=false: kubectl validates create-only kinds itself (no PATCH operation in kube's OpenAPI) and
    # "nobody" may not list the CRDs that check reads
    refused = kubectl.run("--as=nobody", "-n", namespace, "create", "--validate=false", "-f", "-",
                          input=json.dumps(body), check=False)
    assert (f'bindings is forbidden: User "nobody" cannot create resource "bindings" in API group "" in the '
            f'namespace "{namespace}"') in refused.stderr, refused.stderr
    pod = json.loads(kubectl.run("-n", namespace, "get", "pod", "guardbind", "-o", "json").stdout)
    assert "nodeName" not in pod["spec"]
