"""Admission end to end with kubectl: built-in plugins, example webhooks over TLS, quota under concurrency."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from kapi.local import pki
from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

ROOT = Path(__file__).resolve().parents[2]


def apply(kubectl: Kubectl, namespace: str, doc: dict[str, Any], check: bool = True
          ) -> subprocess.CompletedProcess[str]:
    args = ("-n", namespace) if namespace else ()
    return kubectl.run(*args, "create", "-f", "-", input=json.dumps(doc), check=check)


def get(kubectl: Kubectl, namespace: str, *what: str) -> dict[str, Any]:
    return yaml.safe_load(kubectl.run("-n", namespace, "get", *what, "-o", "yaml").stdout)


def until(fn: Any, timeout: float = 10.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
       "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}


def test_service_account_and_default_tolerations(kubectl: Kubectl, namespace: str) -> None:
    apply(kubectl, namespace, POD)
    pod = get(kubectl, namespace, "pod", "web")
    spec = pod["spec"]
    assert spec["serviceAccountName"] == "default" and spec["priority"] == 0
    assert spec["volumes"][0]["name"].startswith("kube-api-access-")
    assert spec["containers"][0]["volumeMounts"][0]["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"
    assert {t["key"] for t in spec["tolerations"]} == {"node.kubernetes.io/not-ready",
                                                       "node.kubernetes.io/unreachable"}
    bad = {**POD, "metadata": {"name": "robot"}, "spec": {**POD["spec"], "serviceAccountName": "robot"}}
    proc = apply(kubectl, namespace, bad, check=False)
    assert proc.returncode != 0
    assert (f'pods "robot" is forbidden: error looking up service account {namespace}/robot: serviceaccount '
            '"robot" not found') in proc.stderr


def test_limit_range_defaults_and_max(kubectl: Kubectl, namespace: str) -> None:
    apply(kubectl, namespace, {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "limits"},
                               "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"},
                                                    "default": {"cpu": "500m", "memory": "128Mi"},
                                                    "defaultRequest": {"cpu": "100m"}}]}})
    until(lambda: apply(kubectl, namespace, POD, check=False).returncode == 0)
    res = get(kubectl, namespace, "pod", "web")["spec"]["containers"][0]["resources"]
    assert res == {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}}
    big = json.loads(json.dumps(POD))
    big["metadata"]["name"] = "big"
    big["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "2"}}
    proc = apply(kubectl, namespace, big, check=False)
    assert 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2' in proc.stderr


def test_resource_quota_concurrent_creates_never_overshoot(kubectl: Kubectl, namespace: str) -> None:
    # As on kube, the root-ca-cert-publisher's kube-root-ca.crt is one of the namespace's ConfigMaps.
    until(lambda: kubectl.run("-n", namespace, "get", "cm", "kube-root-ca.crt", check=False).returncode == 0)
    apply(kubectl, namespace, {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "tight"},
                               "spec": {"hard": {"count/configmaps": "4"}}})
    time.sleep(0.5)  # the quota reaches admission's cache

    def create(i: int) -> subprocess.CompletedProcess[str]:
        return kubectl.run("-n", namespace, "create", "configmap", f"c{i}", check=False)

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(create, range(8)))
    assert sum(r.returncode == 0 for r in results) == 3
    denied = [r.stderr for r in results if r.returncode != 0]
    assert all("exceeded quota: tight, requested: count/configmaps=1, used: count/configmaps=4, limited: "
               "count/configmaps=4" in e for e in denied), denied
    assert len(kubectl.run("-n", namespace, "get", "cm", "-o", "name").stdout.split()) == 4
    quota = get(kubectl, namespace, "resourcequota", "tight")
    assert quota["status"]["used"] == {"count/configmaps": "4"}


def test_pod_security_enforce_and_warn(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=baseline",
                "pod-security.kubernetes.io/warn=restricted")
    priv = json.loads(json.dumps(POD))
    priv["spec"]["containers"][0]["securityContext"] = {"privileged": True}

    def refused() -> bool:
        return 'violates PodSecurity "baseline:latest": privileged' in apply(kubectl, namespace, priv,
                                                                              check=False).stderr
    assert until(refused)
    proc = apply(kubectl, namespace, POD)
    assert 'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false' in proc.stderr


# ------------------------------------------------------------------ webhooks

class WebhookServer:
    """The example webhooks served over TLS from a thread of the test process."""

    def __init__(self, cert: Path, key: Path):
        from examples.webhooks import common, pod_defaults, require_labels

        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.port = 0

        async def main() -> None:
            app = common.make_app({**pod_defaults.ROUTES, **require_labels.ROUTES})
            from aiohttp import web

            async def slow(_: web.Request) -> web.Response:
                await asyncio.sleep(5)
                return web.Response(status=500)

            app.router.add_post("/slow", slow)
            self.runner, self.port = await common.start(app, cert, key)
            self.ready.set()

        self.thread = threading.Thread(target=lambda: (self.loop.run_until_complete(main()),
                                                       self.loop.run_forever()), daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WebhookServer, str]]:
    certs = pki.ensure_pki(tmp_path_factory.mktemp("webhook-pki"), port=None)
    server = WebhookServer(certs.apiserver_cert, certs.apiserver_key)
    yield server, base64.b64encode(Path(certs.ca_cert).read_bytes()).decode()
    server.stop()


def webhook_config(kind: str, name: str, url: str, ca: str, namespace: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": name},
            "webhooks": [{"name": f"{name}.example.com", "clientConfig": {"url": url, "caBundle": ca},
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                                     "resources": ["pods", "configmaps"]}],
                          "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                          "sideEffects": "None", "admissionReviewVersions": ["v1"], "timeoutSeconds": 2, **extra}]}


def test_pod_defaults_webhook(kubectl: Kubectl, namespace: str, webhook: tuple[WebhookServer, str]) -> None:
    server, ca = webhook
    name = f"pod-defaults-{namespace}"[:60]
    apply(kubectl, "", webhook_config("MutatingWebhookConfiguration", name,
                                      f"https://127.0.0.1:{server.port}/mutate", ca, namespace))
    try:
        assert until(lambda: apply(kubectl, namespace, POD, check=False).returncode == 0)
        sc = get(kubectl, namespace, "pod", "web")["spec"]["securityContext"]
        if "runAsUser" not in sc:  # created before the webhook reached admission's cache: try again
            kubectl.run("-n", namespace, "delete", "pod", "web")
            apply(kubectl, namespace, POD)
            sc = get(kubectl, namespace, "pod", "web")["spec"]["securityContext"]
        assert sc == {"runAsNonRoot": True, "runAsUser": 1234}
        root = json.loads(json.dumps(POD))
        root["metadata"]["name"] = "root"
        root["spec"]["securityContext"] = {"runAsNonRoot": True, "runAsUser": 0}
        proc = apply(kubectl, namespace, root, check=False)
        assert (f'admission webhook "{name}.example.com" denied the request: runAsNonRoot specified, but '
                "runAsUser set to 0 (the root user)") in proc.stderr
    finally:
        kubectl.run("delete", "mutatingwebhookconfiguration", name)


def test_validating_webhook_and_failure_policy(kubectl: Kubectl, namespace: str,
                                               webhook: tuple[WebhookServer, str]) -> None:
    server, ca = webhook
    name = f"labels-{namespace}"[:60]
    apply(kubectl, "", webhook_config("ValidatingWebhookConfiguration", name,
                                      f"https://127.0.0.1:{server.port}/validate", ca, namespace))
    slow = f"slow-{namespace}"[:60]
    try:
        msg = f'admission webhook "{name}.example.com" denied the request: missing required label "team"'
        assert until(lambda: msg in kubectl.run("-n", namespace, "create", "cm", "plain", check=False).stderr)
        # The denial keeps the webhook's own code and no reason (kube's ToStatusErr): kubectl prints no reason.
        refused = apply(kubectl, namespace, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bare"}},
                        check=False)
        assert f'Error from server: error when creating "STDIN": {msg}' in refused.stderr, refused.stderr
        proc = apply(kubectl, namespace, {"apiVersion": "v1", "kind": "ConfigMap",
                                          "metadata": {"name": "ok", "labels": {"team": "a"}}})
        assert 'Warning: label "owner" is recommended' in proc.stderr
        kubectl.run("delete", "validatingwebhookconfiguration", name)
        # an unreachable-in-time webhook: Fail refuses naming it, Ignore lets the request through
        apply(kubectl, "", webhook_config("ValidatingWebhookConfiguration", slow,
                                          f"https://127.0.0.1:{server.port}/slow", ca, namespace, timeoutSeconds=1))
        expected = (f'Internal error occurred: failed calling webhook "{slow}.example.com": failed to call webhook: '
                    f'Post "https://127.0.0.1:{server.port}/slow?timeout=1s": context deadline exceeded')
        assert until(lambda: expected in kubectl.run("-n", namespace, "create", "cm", "x", check=False).stderr)
        kubectl.run("patch", "validatingwebhookconfiguration", slow, "--type=json",
                    "-p", '[{"op": "add", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}]')
        assert until(lambda: kubectl.run("-n", namespace, "create", "cm", "y", check=False).returncode == 0)
    finally:
        kubectl.run("delete", "validatingwebhookconfiguration", name, slow, "--ignore-not-found")


def test_unreachable_webhook_fails_with_go_s_dial_error(kubectl: Kubectl, namespace: str,
                                                        webhook: tuple[WebhookServer, str]) -> None:
    _, ca = webhook
    name = f"down-{namespace}"[:60]
    apply(kubectl, "", webhook_config("ValidatingWebhookConfiguration", name, "https://127.0.0.1:1/validate", ca,
                                      namespace))
    expected = (f'Error from server (InternalError): error when creating "STDIN": Internal error occurred: failed '
                f'calling webhook "{name}.example.com": failed to call webhook: Post '
                f'"https://127.0.0.1:1/validate?timeout=2s": dial tcp 127.0.0.1:1: connect: connection refused')
    try:
        assert until(lambda: expected in apply(kubectl, namespace, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "down"}}, check=False).stderr)
    finally:
        kubectl.run("delete", "validatingwebhookconfiguration", name, "--ignore-not-found")


@contextlib.contextmanager
def bound_policy(kubectl: Kubectl, namespace: str, name: str, rules: list[dict[str, Any]],
                 validations: list[dict[str, str]]) -> Iterator[str]:
    """A ValidatingAdmissionPolicy (failurePolicy Fail) with a Deny binding to ``namespace``; yields its name and
    deletes both after the block."""
    pname = name[:60]
    apply(kubectl, "", {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                        "metadata": {"name": pname},
                        "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
                                 "validations": validations}})
    apply(kubectl, "", {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                        "metadata": {"name": pname + "-b"},
                        "spec": {"policyName": pname, "validationActions": ["Deny"], "matchResources": {
                            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}}})
    try:
        yield pname
    finally:
        kubectl.run("delete", "validatingadmissionpolicybinding", pname + "-b")
        kubectl.run("delete", "validatingadmissionpolicy", pname)


def test_validating_admission_policy(kubectl: Kubectl, namespace: str) -> None:
    rules = [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
              "resources": ["deployments"]}]
    with bound_policy(kubectl, namespace, f"replicas-{namespace}", rules,
                      [{"expression": "object.spec.replicas <= 3", "message": "at most 3 replicas"}]) as pname:
        expected = (f"ValidatingAdmissionPolicy '{pname}' with binding '{pname}-b' denied request: at most 3 "
                    "replicas")
        # kube's denial: admission.NewForbidden's message (422 Invalid, details and the denial as a cause)
        assert until(lambda: f'deployments.apps "web" is forbidden: {expected}' in kubectl.run(
            "-n", namespace, "create", "deployment", "web", "--image=nginx", "--replicas=5", check=False).stderr)
        kubectl.run("-n", namespace, "create", "deployment", "small", "--image=nginx", "--replicas=2")


def test_admission_unreachable_writes_503_reads_served(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("-n", namespace, "create", "configmap", "before")
    name = next(n for n in stack.processes if n.startswith("admission"))
    stack.kill_process(name)
    try:
        refused = kubectl.run("-n", namespace, "create", "configmap", "during", "--request-timeout=20s", check=False)
        assert refused.returncode == 1
        assert "ServiceUnavailable" in refused.stderr or "503" in refused.stderr or \
            "unavailable" in refused.stderr.lower(), refused.stderr
        assert "before" in kubectl.run("-n", namespace, "get", "configmap", "before", "-o", "name").stdout
    finally:
        stack.restart_process(name)
    assert until(lambda: kubectl.run("-n", namespace, "create", "configmap", "after", check=False).returncode == 0,
                 20)


def test_policies_see_the_operations_options(kubectl: Kubectl, namespace: str) -> None:
    """request.options as kube hands it to admission: CreateOptions/UpdateOptions with the query's fieldManager
    and fieldValidation (a PATCH's converted), DeleteOptions as decoded (kubectl sends propagationPolicy)."""
    checks = [
        ("request.operation != 'CREATE' || (request.options.kind == 'CreateOptions' && "
         "request.options.apiVersion == 'meta.k8s.io/v1' && request.options.fieldValidation == 'Strict' && "
         "request.options.fieldManager != 'blocked')", "create options"),
        ("request.operation != 'UPDATE' || (request.options.kind == 'UpdateOptions' && "
         "request.options.fieldManager != 'blocked')", "update options"),
        ("request.operation != 'DELETE' || (request.options.kind == 'DeleteOptions' && "
         "request.options.propagationPolicy != 'Orphan')", "delete options"),
    ]
    rules = [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE", "DELETE"],
              "resources": ["configmaps"]}]
    with bound_policy(kubectl, namespace, f"options-{namespace}", rules,
                      [{"expression": e, "message": m} for e, m in checks]):
        assert until(lambda: "denied request: create options" in kubectl.run(
            "-n", namespace, "create", "cm", "a", "--field-manager=blocked", check=False).stderr)
        kubectl.run("-n", namespace, "create", "cm", "a")  # kubectl-create, fieldValidation=Strict
        proc = kubectl.run("-n", namespace, "patch", "cm", "a", "--field-manager=blocked", "-p", '{"data":{"k":"v"}}',
                           check=False)
        assert "denied request: update options" in proc.stderr, proc.stderr
        kubectl.run("-n", namespace, "patch", "cm", "a", "-p", '{"data":{"k":"v"}}')
        proc = kubectl.run("-n", namespace, "delete", "cm", "a", "--cascade=orphan", check=False)
        assert "denied request: delete options" in proc.stderr, proc.stderr
        kubectl.run("-n", namespace, "delete", "cm", "a")
