"""A strategic merge patch whose result the kind's Go struct cannot hold is kube's 422 from applyPatchToObject
(apiserver handlers/patch.go): ``"" is invalid: patch: Invalid value: "<the patch, as Go's %+v>": <the unstructured
converter's error>``, which kubectl prints as ``The request is invalid: patch: ...`` (no kind in the details);
kubectl's own test/cmd/core.sh checks ``cannot restore map from string``."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_decode_limits import _request


def test_kubectl_patch_labels_as_a_string(kubectl: Kubectl, namespace: str) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "valid-pod", "labels": {"name": "valid-pod"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod))
    out = kubectl.run("-n", namespace, "patch", "pod", "valid-pod", "-p", '{"metadata":{"labels":"invalid"}}',
                      check=False)
    assert out.returncode != 0
    assert ('The request is invalid: patch: Invalid value: "map[metadata:map[labels:invalid]]": cannot restore map '
            "from string") in out.stderr, out.stderr
    raw = kubectl.run("-n", namespace, "patch", "pod", "valid-pod", "-p", '{"spec":{"containers":{"a":1}}}',
                      "-v=0", "-o", "json", check=False)
    assert "cannot restore slice from map" in raw.stderr, raw.stderr
    labels = json.loads(kubectl.run("-n", namespace, "get", "pod", "valid-pod", "-o", "json").stdout)
    assert labels["metadata"]["labels"] == {"name": "valid-pod"}  # nothing written


def test_a_patched_int_field_given_a_string(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx")
    out = kubectl.run("-n", namespace, "patch", "deployment", "web", "-p", '{"spec":{"replicas":"3"}}', check=False)
    assert out.returncode != 0
    assert ('The request is invalid: patch: Invalid value: "map[spec:map[replicas:3]]": unrecognized type: int32'
            in out.stderr), out.stderr


def test_unknown_fields_in_a_patch_under_strict_validation(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """fieldValidation=Strict: an unknown field in a strategic merge patch shows the patch map, in a merge patch the
    patched object's JSON; a wrong type in a merge patch is the same 422 (kube's jsonPatcher); kubectl patch (no
    fieldValidation: Warn) gets the warning."""
    kubectl.run("-n", namespace, "create", "configmap", "cfg", "--from-literal=a=b")
    warned = kubectl.run("-n", namespace, "patch", "configmap", "cfg", "-p", '{"spec":{"foo":1}}')
    assert 'Warning: unknown field "spec"' in warned.stderr
    path = f"/api/v1/namespaces/{namespace}/configmaps/cfg?fieldValidation=Strict"
    status, reply = _request(stack, "PATCH", path, '{"spec":{"foo":1}}', "application/strategic-merge-patch+json")
    assert (status, reply["message"]) == (422, ' "" is invalid: patch: Invalid value: "map[spec:map[foo:1]]": strict '
                                               'decoding error: unknown field "spec"')
    assert reply["details"] == {"causes": [{"reason": "FieldValueInvalid", "field": "patch", "message": (
        'Invalid value: "map[spec:map[foo:1]]": strict decoding error: unknown field "spec"')}]}
    status, reply = _request(stack, "PATCH", path, '{"spec":{"foo":1}}', "application/merge-patch+json")
    assert status == 422 and reply["message"].startswith(' "" is invalid: patch: Invalid value: "{'), reply
    assert reply["message"].endswith('": strict decoding error: unknown field "spec"'), reply
    out = kubectl.run("-n", namespace, "patch", "configmap", "cfg", "--type=merge", "-p", '{"data":{"a":true}}',
                      check=False)
    assert out.returncode != 0
    assert out.stderr.startswith('The request is invalid: patch: Invalid value: "{'), out.stderr
    assert out.stderr.rstrip().endswith('": json: cannot unmarshal bool into Go struct field ConfigMap.data of type '
                                        "string"), out.stderr
    assert '\\"name\\":\\"cfg\\"' in out.stderr  # the value is the patched object


def test_server_side_apply_of_an_undeclared_field_is_refused(kubectl: Kubectl, namespace: str) -> None:
    """structuredmerge's typed conversion of the apply configuration refuses a field the schema does not declare,
    whatever the field validation (kube's message; kube answers it as a 500, kubernetes#139253, kapi 400)."""
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "typo", "namespace": namespace},
          "data": {"a": "b"}, "spec": {"foo": 1}}
    for validate in ("--validate=strict", "--validate=false"):
        out = kubectl.run("apply", "--server-side", validate, "-f", "-", input=json.dumps(cm), check=False)
        assert out.returncode != 0, validate
        assert (f"failed to create typed patch object ({namespace}/typo; /v1, Kind=ConfigMap): .spec: field not "
                "declared in schema") in out.stderr, out.stderr
    assert kubectl.run("-n", namespace, "get", "configmap", "typo", check=False).returncode != 0
    del cm["spec"]
    kubectl.run("apply", "--server-side", "-f", "-", input=json.dumps(cm))
