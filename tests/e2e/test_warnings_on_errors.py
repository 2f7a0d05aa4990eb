"""Warnings of a refused request reach the client (issue #17), through Envoy, with real kubectl, the official Python
client and the gRPC API.

kube-apiserver's warning recorder (k8s.io/apiserver ``pkg/endpoints/filters/warning.go``) writes each warning to
the response headers as it is added, so a request refused later still carries what it gathered before:

- ``rest.BeforeCreate`` runs PrepareForCreate (a Pod's AppArmor annotation -> the deprecation warning), then
  Validate (422: only what came before), then WarningsOnCreate (the Pod name's warning: only once validation
  passed);
- validating admission (ResourceQuota's 403) and the storage write (409 AlreadyExists) come after all of it;
- unknown fields under ``fieldValidation=Warn`` warn at decoding, before anything else.

kubectl prints each ``Warning:`` line to stderr, then the error.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
import pytest
from grpc_status import rpc_status
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kapi.local.launcher import Stack
from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc
from tests.e2e.conftest import Kubectl, wait_for
from tests.e2e.test_grpc_api import channel, status_of

APPARMOR = "container.apparmor.security.beta.kubernetes.io/c"
APPARMOR_WARNING = f'metadata.annotations[{APPARMOR}]: deprecated since v1.30; use the "appArmorProfile" field instead'
NAME_WARNING = ("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; "
                "a DNS label is recommended: [must not contain dots]")


def pod(image: str | None = "nginx", name: str = "my.pod") -> dict[str, Any]:
    """A Pod whose create warns twice when it passes validation: PrepareForCreate's AppArmor deprecation, then
    WarningsOnCreate's name warning; without ``image`` it fails validation (422)."""
    container: dict[str, Any] = {"name": "c"}
    if image is not None:
        container["image"] = image
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": {APPARMOR: "runtime/default"}},
            "spec": {"containers": [container]}}


def warnings_of(stderr: str) -> list[str]:
    return [line.removeprefix("Warning: ") for line in stderr.splitlines() if line.startswith("Warning: ")]


def test_an_invalid_pod_gets_prepare_for_create_warnings_but_not_warnings_on_create(
        kubectl: Kubectl, namespace: str) -> None:
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod(image=None)), check=False)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"Warning: {APPARMOR_WARNING}",
        'The Pod "my.pod" is invalid: spec.containers[0].image: Required value'], proc.stderr


def test_a_conflicting_create_gets_every_warning_before_the_write(kubectl: Kubectl, namespace: str) -> None:
    created = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod()))
    assert warnings_of(created.stderr) == [APPARMOR_WARNING, NAME_WARNING], created.stderr
    again = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod()), check=False)
    assert again.returncode == 1
    assert again.stderr.splitlines() == [
        f"Warning: {APPARMOR_WARNING}", f"Warning: {NAME_WARNING}",
        'Error from server (AlreadyExists): error when creating "STDIN": pods "my.pod" already exists'], again.stderr


def test_unknown_field_warnings_come_with_a_conflict(kubectl: Kubectl, namespace: str) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}, "data": {"a": "1"}, "spec": {}}
    kubectl.run("-n", namespace, "create", "--validate=warn", "-f", "-", input=json.dumps(cm))
    again = kubectl.run("-n", namespace, "create", "--validate=warn", "-f", "-", input=json.dumps(cm), check=False)
    assert again.returncode == 1
    assert again.stderr.splitlines() == [
        'Warning: unknown field "spec"',
        'Error from server (AlreadyExists): error when creating "STDIN": configmaps "app" already exists'], \
        again.stderr


@pytest.fixture(scope="module")
def api_client(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(stack.kubeconfig))


def test_a_quota_refusal_carries_the_create_warnings(kubectl: Kubectl, namespace: str,
                                                    api_client: client.ApiClient) -> None:
    kubectl.run("-n", namespace, "create", "quota", "none", "--hard=pods=0")
    core: Any = client.CoreV1Api(api_client)  # a dict body, as the client sends it

    def refused(**options: str) -> Any:
        with pytest.raises(ApiException) as info:
            core.create_namespaced_pod(namespace, pod(), **options)
        return info.value

    wait_for(lambda: refused(dry_run="All").status == 403)  # admission's informer has the quota (dry run: no Pod)
    err = refused()
    assert err.status == 403, err.body
    assert json.loads(err.body)["message"] == (
        'pods "my.pod" is forbidden: exceeded quota: none, requested: pods=1, used: pods=0, limited: pods=0')
    assert err.headers.getlist("Warning") == [  # RFC 9110 quoted-strings
        '299 - "{}"'.format(text.replace('"', '\\"')) for text in (APPARMOR_WARNING, NAME_WARNING)]
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(pod()), check=False)
    assert proc.returncode == 1
    assert warnings_of(proc.stderr) == [APPARMOR_WARNING, NAME_WARNING], proc.stderr
    assert proc.stderr.splitlines()[-1].startswith('Error from server (Forbidden): error when creating "STDIN": '
                                                   'pods "my.pod" is forbidden: exceeded quota: none'), proc.stderr


def test_grpc_refusals_carry_the_warnings_in_the_status_detail(stack: Stack, namespace: str) -> None:
    async def create(obj: dict[str, Any]) -> tuple[grpc.StatusCode, dict[str, Any], list[str]]:
        async with channel(stack, admin=True) as ch:
            api = api_pb2_grpc.ResourcesStub(ch)
            try:
                await api.Create(api_pb2.CreateRequest(
                    ref=api_pb2.ResourceRef(version="v1", resource="pods", namespace=namespace),
                    object=json.dumps(obj).encode()))
            except grpc.aio.AioRpcError as err:
                rich = rpc_status.from_call(err)
                assert rich is not None
                detail = api_pb2.StatusDetail()
                assert rich.details[0].Unpack(detail)
                return err.code(), status_of(err), list(detail.warnings)
        raise AssertionError("the create succeeded")

    code, status, warnings = asyncio.run(create(pod(image=None)))
    assert (code, status["code"], status["reason"]) == (grpc.StatusCode.INVALID_ARGUMENT, 422, "Invalid")
    assert warnings == [APPARMOR_WARNING]


WIDGETS = "warnerrors.example.com"


def test_a_deprecated_versions_warning_comes_with_every_refusal(kubectl: Kubectl, namespace: str) -> None:
    # apiextensions' crdHandler adds the deprecated version's warning before it serves anything: the 404 of a get,
    # the 422 of an invalid create and the 415 of a strategic merge patch all carry it.
    schema = {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "minimum": 1}}}}}}
    kubectl.run("apply", "-f", "-", input=json.dumps({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{WIDGETS}"},
        "spec": {"group": WIDGETS, "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1beta1", "served": True, "storage": False, "deprecated": True,
                               "schema": schema},
                              {"name": "v1", "served": True, "storage": True, "schema": schema}]}}))
    kubectl.run("wait", "--for=condition=Established", f"crd/widgets.{WIDGETS}", "--timeout=20s")
    deprecated = f"Warning: {WIDGETS}/v1beta1 Widget is deprecated; use {WIDGETS}/v1 Widget"
    resource = f"widgets.v1beta1.{WIDGETS}"
    try:
        missing = wait_for(lambda: (p := kubectl.run("-n", namespace, "get", resource, "nope", check=False))
                           .returncode == 1 and "NotFound" in p.stderr and p)  # served by every gateway
        assert missing.stderr.splitlines() == [
            deprecated, f'Error from server (NotFound): widgets.{WIDGETS} "nope" not found'], missing.stderr
        widget = {"apiVersion": f"{WIDGETS}/v1beta1", "kind": "Widget", "metadata": {"name": "w"},
                  "spec": {"replicas": 0}}
        invalid = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(widget), check=False)
        assert invalid.returncode == 1
        assert invalid.stderr.splitlines()[0] == deprecated, invalid.stderr
        assert 'The Widget "w" is invalid: spec.replicas: Invalid value: 0: spec.replicas in body should be ' \
               "greater than or equal to 1" in invalid.stderr, invalid.stderr
        widget["spec"] = {"replicas": 1}
        kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(widget))
        patched = kubectl.run("-n", namespace, "patch", resource, "w", "--type=strategic", "-p",
                              '{"spec":{"replicas":2}}', check=False)
        assert patched.returncode == 1
        assert patched.stderr.splitlines() == [  # kubectl's words for the 415
            deprecated, f"error: application/strategic-merge-patch+json is not supported by {WIDGETS}/v1beta1, "
            "Kind=Widget: the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"], patched.stderr
    finally:
        kubectl.run("delete", "crd", f"widgets.{WIDGETS}", "--wait=false")
