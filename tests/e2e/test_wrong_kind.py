"""A body of another kind than the URL's resource is refused with kube's decoder messages (kubectl's own
test/cmd/create.sh checks ``cannot be handled as a Namespace: converting (v1.Pod)``)."""

from __future__ import annotations

import json

import pytest

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_decode_limits import _request

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "valid-pod"},
       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def test_kubectl_create_raw_pod_to_namespaces(kubectl: Kubectl) -> None:
    out = kubectl.run("create", "--raw", "/api/v1/namespaces", "-f", "-", input=json.dumps(POD), check=False)
    assert out.returncode != 0
    assert ('Pod in version "v1" cannot be handled as a Namespace: converting (v1.Pod) to (core.Namespace): '
            "unknown conversion") in out.stderr


@pytest.mark.parametrize(("path", "body", "message"), [
    ("/api/v1/namespaces", {**POD, "apiVersion": "apps/v1", "kind": "Deployment"},
     'Deployment in version "v1" cannot be handled as a Namespace: converting (v1.Deployment) to '
     "(core.Namespace): unknown conversion"),
    ("/api/v1/namespaces/default/pods", {**POD, "kind": "pod"},
     'pod in version "v1" cannot be handled as a Pod: no kind "pod" is registered for version "v1" in scheme '
     '"pkg/api/legacyscheme/scheme.go:30"'),
    ("/apis/apps/v1/namespaces/default/deployments", {**POD, "apiVersion": "apps/v2", "kind": "Deployment"},
     'Deployment in version "v2" cannot be handled as a Deployment: no kind "Deployment" is registered for '
     'version "apps/v2" in scheme "pkg/api/legacyscheme/scheme.go:30"'),
    ("/api/v1/namespaces", {"apiVersion": "v1", "kind": 7, "metadata": {"name": "x"}},
     "the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse "
     'error: json: cannot unmarshal number into Go struct field .kind of type string ({"apiVersion": "v1", '
     '"kind": 7 ...)'),
])
def test_wrong_kind_messages(stack: Stack, path: str, body: dict[str, object], message: str) -> None:
    status, reply = _request(stack, "POST", path, json.dumps(body))
    assert (status, reply["reason"], reply["message"]) == (400, "BadRequest", message)


def test_kubectl_create_raw_yaml_to_namespaces(kubectl: Kubectl, tmp_path) -> None:
    """kubectl's test/cmd create.txtar: ``create --raw`` sends a YAML file's bytes with no Content-Type, so kube's
    JSON decoder fails before it knows a kind; transformDecodeError names the expected kind and shows the first
    30 bytes (in hex: they do not start an object)."""
    manifest = tmp_path / "valid-pod.yaml"
    manifest.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: valid-pod\nspec:\n  containers:\n"
                        "  - name: c\n    image: nginx\n")
    out = kubectl.run("create", "--raw", "/api/v1/namespaces", "-f", str(manifest), check=False)
    assert out.returncode != 0
    head = manifest.read_bytes()[:30].hex()
    assert ("the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse "
            f"error: invalid character 'a' looking for beginning of value ({head} ...)") in out.stderr, out.stderr


@pytest.mark.parametrize(("method", "path", "body", "message"), [
    ("POST", "/api/v1/namespaces/default/configmaps", '{"a":',
     "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
     'error: unexpected end of JSON input ({"a":)'),
    ("PUT", "/api/v1/namespaces/default/configmaps/x", '{"metadata": {"name": "x"}, "data": {"k": 1,,}}',
     "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
     "error: invalid character ',' looking for beginning of object key string "
     """({"metadata": {"name": "x"}, "d ...)"""),
    ("POST", "/api/v1/namespaces/default/configmaps", "[1, 2]",
     "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
     'error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,'
     'omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b312c20325d)'),
])
def test_undecodable_bodies_are_unrecognized(stack: Stack, method: str, path: str, body: str, message: str) -> None:
    """kube's create and update handlers: transformDecodeError of a body the decoder found no kind in."""
    status, reply = _request(stack, method, path, body)
    assert (status, reply["reason"], reply["message"]) == (400, "BadRequest", message)


def test_a_put_with_resource_version_zero_is_unconditional(kubectl: Kubectl, namespace: str) -> None:
    """kubectl's core.sh: ``replace`` of an object whose resourceVersion is "0" succeeds (kube's Store.Update:
    a resourceVersion that parses to 0 is no precondition); another stale one is 409."""
    kubectl.run("-n", namespace, "create", "configmap", "rv0", "--from-literal=a=b")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rv0", "resourceVersion": "0",
                                                                 "annotations": {"a": "b"}}, "data": {"x": "y"}}
    kubectl.run("-n", namespace, "replace", "-f", "-", input=json.dumps(body))
    got = json.loads(kubectl.run("-n", namespace, "get", "configmap", "rv0", "-o", "json").stdout)
    assert got["metadata"]["annotations"] == {"a": "b"} and got["data"] == {"x": "y"}
    body["metadata"]["resourceVersion"] = "1"
    stale = kubectl.run("-n", namespace, "replace", "-f", "-", input=json.dumps(body), check=False)
    assert stale.returncode != 0 and "the object has been modified" in stale.stderr
