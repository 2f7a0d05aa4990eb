"""DELETE preconditions as kube's rest.BeforeDelete checks them: before admission and on dry runs, with the kind
where the resource usually stands; namespaces keep their own check (storage's Precondition failed text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kapi.local.launcher import Stack


def _core(stack: Stack) -> Any:
    return client.CoreV1Api(config.new_client_from_config(config_file=str(Path(stack.kubeconfig))))


def _refused(call: Any) -> dict[str, Any]:
    with pytest.raises(ApiException) as exc:
        call()
    assert exc.value.status == 409
    body: dict[str, Any] = json.loads(exc.value.body)
    return body


def test_uid_and_resource_version_preconditions(stack: Stack, namespace: str) -> None:
    core = _core(stack)
    cm = core.create_namespaced_config_map(namespace, {"metadata": {"name": "pre"}, "data": {"a": "b"}})
    uid, rv = cm.metadata.uid, cm.metadata.resource_version
    for dry_run in (None, "All"):
        body = _refused(lambda dry_run=dry_run: core.delete_namespaced_config_map(
            "pre", namespace, dry_run=dry_run, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(
                uid="not-it"))))
        assert body["message"] == (f'Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition '
                                   f'(not-it) does not match the UID in record ({uid}). The object might have been '
                                   "deleted and then recreated")
        assert body["reason"] == "Conflict" and body["details"] == {"name": "pre", "kind": "ConfigMap"}
    body = _refused(lambda: core.delete_namespaced_config_map(
        "pre", namespace, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version="1"))))
    assert body["message"] == ('Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the '
                               f"precondition (1) does not match the ResourceVersion in record ({rv}). The object "
                               "might have been modified")
    core.delete_namespaced_config_map("pre", namespace, body=client.V1DeleteOptions(
        preconditions=client.V1Preconditions(uid=uid, resource_version=rv)))


def test_a_grouped_kind_is_named_kind_dot_group(stack: Stack, namespace: str) -> None:
    api = client.CoordinationV1Api(config.new_client_from_config(config_file=str(Path(stack.kubeconfig))))
    api.create_namespaced_lease(namespace, {"metadata": {"name": "rev"}})
    body = _refused(lambda: api.delete_namespaced_lease(
        "rev", namespace, body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="x"))))
    assert body["message"].startswith('Operation cannot be fulfilled on Lease.coordination.k8s.io "rev": the UID '
                                      "in the precondition (x)")
    assert body["details"] == {"name": "rev", "group": "coordination.k8s.io", "kind": "Lease"}


def test_a_namespace_keeps_its_own_precondition_text(stack: Stack) -> None:
    core = _core(stack)
    core.create_namespace({"metadata": {"name": "pre-ns-own"}})
    try:
        body = _refused(lambda: core.delete_namespace("pre-ns-own", body=client.V1DeleteOptions(
            preconditions=client.V1Preconditions(uid="x"))))
        assert "Precondition failed: UID in precondition: x" in body["message"]
    finally:
        core.delete_namespace("pre-ns-own")
