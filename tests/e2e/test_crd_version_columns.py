"""Each served version of a CRD prints its own additionalPrinterColumns, end to end with the real kubectl (issue 17).

apiextensions-apiserver builds one table convertor per served version (customresource_handler.go,
``GetColumnsForVersion`` + ``tableconvertor.New``): ``kubectl get widgets.v1.<group>`` shows v1's columns although
v2 (the preferred version) has none and prints NAME and AGE only.
"""

from __future__ import annotations

import json
import re

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for
from tests.e2e.test_protobuf_responses import send
from tests.gateway.test_table_columns import AGE_DOC, NAME_DOC, VERSIONS  # kube's printers' swagger texts

GROUP = "vcolumns.issue17.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"widgets.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
             "versions": VERSIONS},
}
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _lines(out: str) -> list[str]:
    """kubectl's table with the AGE cell (it ages) as <age>."""
    return [re.sub(r"\b\d+s$", "<age>", line) for line in out.splitlines()]


def test_kubectl_get_prints_the_asked_versions_columns(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(CRD))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/widgets.{GROUP}", "--timeout=30s")
        path = f"/apis/{GROUP}/v1/namespaces/{namespace}/widgets"
        wait_for(lambda: send(stack, "GET", path, "application/json")[0] == 200)
        widget = {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": namespace},
                  "spec": {"replicas": 3, "color": "red"}}
        kubectl.run("create", "-f", "-", input=json.dumps(widget))

        got = kubectl.run("get", f"widgets.v1.{GROUP}", "-n", namespace).stdout
        assert _lines(got) == ["NAME   REPLICAS   COLOR   AGE", "w1     3          red     <age>"]
        got = kubectl.run("get", f"widgets.v2.{GROUP}", "-n", namespace).stdout
        assert _lines(got) == ["NAME   AGE", "w1     <age>"]

        status, _headers, body = send(stack, "GET", path, TABLE)
        assert status == 200, body
        assert json.loads(body)["columnDefinitions"] == [
            {"name": "Name", "type": "string", "format": "name", "description": NAME_DOC, "priority": 0},
            {"name": "Replicas", "type": "integer", "format": "",
             "description": "Custom resource definition column (in JSONPath format): .spec.replicas", "priority": 0},
            {"name": "Color", "type": "string", "format": "", "description": "the colour", "priority": 0},
            {"name": "Age", "type": "date", "format": "",
             "description": "Custom resource definition column (in JSONPath format): .metadata.creationTimestamp",
             "priority": 0}]
        status, _headers, body = send(stack, "GET", path.replace("/v1/", "/v2/"), TABLE)
        assert status == 200, body
        assert json.loads(body)["columnDefinitions"] == [
            {"name": "Name", "type": "string", "format": "name", "description": NAME_DOC, "priority": 0},
            {"name": "Age", "type": "date", "format": "", "description": AGE_DOC, "priority": 0}]
    finally:
        kubectl.run("delete", "crd", f"widgets.{GROUP}", "--wait=false", check=False)
