"""CRD validation ratcheting (KEP-4008) through the real stack: a tightened schema does not break updates that
leave the now-invalid values alone, on the main resource and on /status."""

from __future__ import annotations

import http.client
import json
import ssl
from typing import Any
from urllib.parse import urlparse

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for

GROUP = "ratchet.example.com"
CRD = f"gizmos.{GROUP}"


_NOT_CHECKED = ("<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; "
                "correct the existing errors to complete validation")


def _crd(tight: bool) -> dict[str, Any]:
    name: dict[str, Any] = {"type": "string"}
    mode: dict[str, Any] = {"type": "string"}
    phase: dict[str, Any] = {"type": "string"}
    if tight:
        name["maxLength"] = 5
        mode["x-kubernetes-validations"] = [{"rule": "self.startsWith('new')", "message": "must start with new",
                                             "reason": "FieldValueForbidden"}]
        phase["enum"] = ["Ready", "Pending"]
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"name": name, "mode": mode, "other": {"type": "string"}}},
        "status": {"type": "object", "properties": {"phase": phase, "note": {"type": "string"}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": CRD},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": schema}}]}}


def _send(stack: Stack, method: str, path: str, body: Any) -> tuple[int, Any, list[str]]:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=60)
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    try:
        conn.request(method, path, body=json.dumps(body).encode(),
                     headers={"Content-Type": content_type, "Accept": "application/json"})
        response = conn.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data else {}, response.headers.get_all("Warning") or []
    finally:
        conn.close()


def test_tightened_schema_ratchets_unchanged_values(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/gizmos"
    invalid = f'Gizmo.{GROUP} "g" is invalid: '
    try:
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump(_crd(tight=False)))
        kubectl.run("wait", "--for=condition=established", f"crd/{CRD}", "--timeout=30s")
        status, reply, _ = wait_for(lambda: (r := _send(stack, "POST", base, {
            "apiVersion": f"{GROUP}/v1", "kind": "Gizmo", "metadata": {"name": "g"},
            "spec": {"name": "toolong", "mode": "legacy", "other": "a"}}))[0] == 201 and r)
        status, reply, _ = _send(stack, "PATCH", f"{base}/g/status", {"status": {"phase": "Weird"}})
        assert status == 200 and reply["status"] == {"phase": "Weird"}, reply

        kubectl.run("apply", "-f", "-", input=yaml.safe_dump(_crd(tight=True)))
        # the tightened schema is in force once a new object with the same values is refused
        wait_for(lambda: _send(stack, "POST", base + "?dryRun=All", {
            "apiVersion": f"{GROUP}/v1", "kind": "Gizmo", "metadata": {"name": "probe"},
            "spec": {"name": "toolong"}})[0] == 422)

        # an unrelated change: the invalid name and mode are unchanged, so ratcheted; the failing rule is a warning
        status, reply, warnings = _send(stack, "PATCH", f"{base}/g", {"spec": {"other": "b"}})
        assert status == 200, reply
        assert reply["spec"] == {"name": "toolong", "mode": "legacy", "other": "b"}
        assert warnings == ['299 - "spec.mode: Forbidden: must start with new"']

        # changing a violating field to another violating value: kube's 422
        # (a too-long error blocks every CEL rule, kube's hasBlockingErr: one fieldless cause, no rule warning)
        status, reply, warnings = _send(stack, "PATCH", f"{base}/g", {"spec": {"name": "stilltoolong"}})
        assert status == 422, reply
        assert reply["message"] == invalid + ("[spec.name: Too long: may not be more than 5 bytes, " + _NOT_CHECKED
                                              + "]")
        assert reply["details"]["causes"] == [{"reason": "FieldValueTooLong", "field": "spec.name",
                                               "message": "Too long: may not be more than 5 bytes"},
                                              {"reason": "FieldValueInvalid", "field": "<nil>",
                                               "message": _NOT_CHECKED.removeprefix("<nil>: ")}]
        assert warnings == []
        status, reply, _ = _send(stack, "PATCH", f"{base}/g", {"spec": {"mode": "old"}})
        assert status == 422, reply
        assert reply["message"] == invalid + "spec.mode: Forbidden: must start with new"
        assert reply["details"]["causes"] == [{"reason": "FieldValueForbidden", "field": "spec.mode",
                                               "message": "Forbidden: must start with new"}]

        # /status: the unchanged phase ratchets, a new invalid one is refused
        status, reply, _ = _send(stack, "PATCH", f"{base}/g/status", {"status": {"note": "checked"}})
        assert status == 200 and reply["status"] == {"phase": "Weird", "note": "checked"}, reply
        status, reply, _ = _send(stack, "PATCH", f"{base}/g/status", {"status": {"phase": "Strange"}})
        assert status == 422, reply
        assert reply["message"] == invalid + ('[status.phase: Unsupported value: "Strange": supported values: '
                                              '"Ready", "Pending", ' + _NOT_CHECKED + "]")
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")
