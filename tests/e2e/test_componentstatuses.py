"""The deprecated core/v1 componentstatuses through the whole stack, as kube-apiserver 1.37 serves them to kubectl
and the official Python client: probed at request time; kapi runs no scheduler and its controllers serve no
/healthz, so both show kube's Unhealthy with the dial error; etcd-0 is storage's etcd."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

WARNING = "Warning: v1 ComponentStatus is deprecated in v1.19+"


def refused(port: int) -> str:
    return f'Get "https://127.0.0.1:{port}/healthz": dial tcp 127.0.0.1:{port}: connect: connection refused'


def test_kubectl_get_cs(kubectl: Kubectl) -> None:
    out = kubectl.run("get", "cs")
    assert out.stderr.strip() == WARNING
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    rows = [line.split(None, 2) for line in lines[1:]]
    assert [r[:2] for r in rows] == [["controller-manager", "Unhealthy"], ["scheduler", "Unhealthy"],
                                     ["etcd-0", "Healthy"]]
    assert rows[0][2].strip() == refused(10257) and rows[1][2].strip() == refused(10259)
    assert rows[2][2].strip() == "ok"


def test_kubectl_get_one_as_json_and_an_unknown_name(kubectl: Kubectl) -> None:
    out = kubectl.run("get", "componentstatus", "etcd-0", "-o", "json")
    assert json.loads(out.stdout) == {"apiVersion": "v1", "kind": "ComponentStatus",
                                      "metadata": {"creationTimestamp": None, "name": "etcd-0"},
                                      "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}
    missing = kubectl.run("get", "cs", "nope", check=False)
    assert missing.returncode != 0
    assert "Error from server: Component not found: nope" in missing.stderr, missing.stderr
    raw = kubectl.run("get", "--raw", "/api/v1/componentstatuses?fieldSelector=metadata.name%3Dscheduler")
    body = json.loads(raw.stdout)
    assert [i["metadata"]["name"] for i in body["items"]] == ["scheduler"]
    assert body["items"][0]["conditions"] == [{"type": "Healthy", "status": "False", "message": refused(10259)}]


def test_api_resources_and_the_python_client(stack: Stack, kubectl: Kubectl) -> None:
    rows = [line.split() for line in kubectl.run("api-resources", "-o", "wide", "--api-group=").stdout.splitlines()]
    assert ["componentstatuses", "cs", "v1", "false", "ComponentStatus", "get,list"] in rows

    from kubernetes import client, config

    core = client.CoreV1Api(config.new_client_from_config(config_file=str(stack.kubeconfig)))
    listed = core.list_component_status()
    assert [i.metadata.name for i in listed.items] == ["controller-manager", "scheduler", "etcd-0"]
    etcd = core.read_component_status("etcd-0")
    assert (etcd.conditions[0].type, etcd.conditions[0].status, etcd.conditions[0].message) == ("Healthy", "True",
                                                                                               "ok")
