"""A real kopf operator against kapi: create, update and delete of a custom resource with a finalizer,
status patches and Events (issue 11's operator acceptance)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

GROUP = "operators.example.com"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": f"greetings.{GROUP}"},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"plural": "greetings", "singular": "greeting", "kind": "Greeting"},
             "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": {"type": "object", "properties": {"name": {"type": "string"}}},
                               "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]},
}

OPERATOR = '''
import kopf

@kopf.on.startup()
def configure(settings, **_):
    settings.persistence.finalizer = "operators.example.com/cleanup"
    settings.watching.server_timeout = 30
    settings.posting.level = 20

@kopf.on.create("operators.example.com", "v1", "greetings")
def created(spec, body, **_):
    kopf.info(body, reason="Greeted", message=f"hello {spec.get('name')}")
    return {"message": f"hello {spec.get('name')}"}

@kopf.on.update("operators.example.com", "v1", "greetings")
def updated(spec, patch, body, **_):
    patch.status["greeting"] = f"hello again {spec.get('name')}"
    kopf.info(body, reason="Regreeted", message=f"hello again {spec.get('name')}")

@kopf.on.delete("operators.example.com", "v1", "greetings")
def deleted(spec, body, **_):
    kopf.info(body, reason="Farewell", message=f"goodbye {spec.get('name')}")
'''


def _get(kubectl: Kubectl, namespace: str, name: str) -> dict[str, Any] | None:
    proc = kubectl.run("get", f"greetings.{GROUP}", name, "-n", namespace, "-o", "json", check=False)
    return json.loads(proc.stdout) if proc.returncode == 0 else None


def _wait(check: Any, what: str, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _events(kubectl: Kubectl, namespace: str) -> list[dict[str, Any]]:
    return json.loads(kubectl.run("get", "events", "-n", namespace, "-o", "json").stdout)["items"]


def test_kopf_operator(kubectl: Kubectl, stack: Stack, namespace: str, tmp_path: Path) -> None:
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(CRD))
    kubectl.run("wait", "--for=condition=Established", f"crd/greetings.{GROUP}", "--timeout=20s")
    script = tmp_path / "operator.py"
    script.write_text(OPERATOR)
    log = (tmp_path / "operator.log").open("w")
    operator = subprocess.Popen(
        [sys.executable, "-m", "kopf", "run", str(script), "--standalone", f"--namespace={namespace}"],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "KUBECONFIG": str(stack.kubeconfig)})
    try:
        manifest = {"apiVersion": f"{GROUP}/v1", "kind": "Greeting",
                    "metadata": {"name": "world", "namespace": namespace}, "spec": {"name": "world"}}
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump(manifest))
        obj = _wait(lambda: (o := _get(kubectl, namespace, "world")) and "created" in o.get("status", {}) and o,
                    "the create handler's status")
        assert obj["status"]["created"] == {"message": "hello world"}
        assert "operators.example.com/cleanup" in obj["metadata"]["finalizers"]
        _wait(lambda: any(e.get("reason") == "Greeted" and e["involvedObject"]["name"] == "world"
                          for e in _events(kubectl, namespace)), "the Greeted event")

        kubectl.run("patch", f"greetings.{GROUP}", "world", "-n", namespace, "--type=merge",
                    "-p", '{"spec":{"name":"kapi"}}')
        obj = _wait(lambda: (o := _get(kubectl, namespace, "world")) and o.get("status", {}).get("greeting") and o,
                    "the update handler's status patch")
        assert obj["status"]["greeting"] == "hello again kapi"

        kubectl.run("delete", f"greetings.{GROUP}", "world", "-n", namespace, "--wait=false")
        _wait(lambda: _get(kubectl, namespace, "world") is None, "the delete handler to release the finalizer")
        event = _wait(lambda: [e for e in _events(kubectl, namespace) if e.get("reason") == "Farewell"],
                      "the Farewell event")
        assert event[0]["message"] == "goodbye kapi" and event[0]["involvedObject"]["kind"] == "Greeting"
    except AssertionError:
        log.flush()
        raise AssertionError((tmp_path / "operator.log").read_text()[-4000:]) from None
    finally:
        operator.send_signal(signal.SIGINT)
        try:
            operator.wait(timeout=10)
        except subprocess.TimeoutExpired:
            operator.kill()
            operator.wait()
        log.close()
        if os.environ.get("KOPF_LOG"):
            print((tmp_path / "operator.log").read_text())
        kubectl.run("delete", "crd", f"greetings.{GROUP}", "--wait=false", check=False)
