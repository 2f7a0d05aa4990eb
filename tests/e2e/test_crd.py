"""CustomResourceDefinitions end to end with kubectl: the acceptance list of issue 11 (CRD part)."""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, serving_cert, wait_for

GROUP = "stable.example.com"


def crd_manifest(group: str = GROUP, plural: str = "crontabs", kind: str = "CronTab") -> str:
    return yaml.safe_dump({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "shortNames": ["ct"]},
            "versions": [
                {"name": "v1beta1", "served": True, "storage": False, "deprecated": True,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
                {"name": "v1", "served": True, "storage": True,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                          "statusReplicasPath": ".status.replicas"}},
                 "additionalPrinterColumns": [
                     {"name": "Spec", "type": "string", "jsonPath": ".spec.cronSpec"},
                     {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                     {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
                 "schema": {"openAPIV3Schema": {
                     "type": "object", "description": "CronTab runs an image on a schedule.",
                     "properties": {
                         "spec": {
                             "type": "object", "description": "What the CronTab runs.",
                             "x-kubernetes-validations": [{"rule": "self.replicas <= 10",
                                                           "message": "replicas must be at most 10"}],
                             "properties": {
                                 "cronSpec": {"type": "string", "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$",
                                              "description": "The schedule in cron format."},
                                 "image": {"type": "string"},
                                 "replicas": {"type": "integer", "minimum": 1, "default": 1}}},
                         "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}},
            ],
        },
    })


def cron_tab(name: str, namespace: str, **spec: Any) -> str:
    return yaml.safe_dump({"apiVersion": f"{GROUP}/v1", "kind": "CronTab",
                           "metadata": {"name": name, "namespace": namespace},
                           "spec": {"cronSpec": "* * * * */5", "image": "my-cron-image", **spec}})


def gateway_get(stack: Stack, gateway: str, path: str) -> Any:
    """GET ``path`` straight from one gateway (not through Envoy) as the admin."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.check_hostname = False
    with urllib.request.urlopen(f"https://{stack.addresses[gateway]}{path}", context=context, timeout=10) as resp:
        return json.loads(resp.read())




def test_crd_with_kubectl(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    kubectl.run("apply", "-f", "-", input=crd_manifest())
    kubectl.run("wait", "--for=condition=Established", f"crd/crontabs.{GROUP}", "--timeout=20s")
    crd = json.loads(kubectl.run("get", "crd", f"crontabs.{GROUP}", "-o", "json").stdout)
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["acceptedNames"]["kind"] == "CronTab" and crd["status"]["storedVersions"] == ["v1"]

    # Every gateway serves it in legacy and aggregated discovery and in OpenAPI, within seconds.
    for gateway in ("gateway-1", "gateway-2"):
        doc = wait_for(lambda g=gateway: gateway_get(stack, g, f"/apis/{GROUP}/v1"))
        assert {r["name"] for r in doc["resources"]} == {"crontabs", "crontabs/status", "crontabs/scale"}
        group = gateway_get(stack, gateway, f"/apis/{GROUP}")
        assert group["preferredVersion"]["version"] == "v1"
        assert f"apis/{GROUP}/v1" in gateway_get(stack, gateway, "/openapi/v3")["paths"]
    assert "crontabs" in kubectl.run("api-resources", f"--api-group={GROUP}").stdout

    kubectl.run("apply", "-f", "-", input=cron_tab("daily", namespace))
    got = json.loads(kubectl.run("get", "ct", "daily", "-n", namespace, "-o", "json").stdout)
    assert got["spec"]["replicas"] == 1 and got["metadata"]["generation"] == 1  # defaulted
    table = kubectl.run("get", "crontabs", "-n", namespace).stdout.splitlines()
    assert table[0].split() == ["NAME", "SPEC", "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["daily", "*", "*", "*", "*", "*/5", "1"]

    explain = kubectl.run("explain", "crontab.spec").stdout
    assert "KIND:       CronTab" in explain and "What the CronTab runs." in explain and "cronSpec" in explain

    # 422s in kube-apiserver's format.
    bad = kubectl.run("patch", "ct", "daily", "-n", namespace, "--type=merge", "-p",
                      '{"spec":{"replicas":"two"}}', check=False)
    assert bad.returncode == 1
    # a type error blocks the CEL rules (kube's hasBlockingErr): kubectl lists both causes
    assert ('The CronTab "daily" is invalid: \n* spec.replicas: Invalid value: "string": spec.replicas in body must '
            'be of type integer: "string"\n* <nil>: Invalid value: null: some validation rules were not checked '
            'because the object was invalid; correct the existing errors to complete validation\n') in bad.stderr
    bad = kubectl.run("patch", "ct", "daily", "-n", namespace, "--type=merge", "-p", '{"spec":{"replicas":11}}',
                      check=False)
    assert 'The CronTab "daily" is invalid: spec: Invalid value: replicas must be at most 10' in bad.stderr
    bad = kubectl.run("patch", "ct", "daily", "-n", namespace, "--type=merge", "-p", '{"spec":{"cronSpec":"x"}}',
                      check=False)
    assert "spec.cronSpec in body should match" in bad.stderr
    bad = kubectl.run("apply", "-f", "-", input=cron_tab("extra", namespace, color="red"), check=False)
    assert 'strict decoding error: unknown field "spec.color"' in bad.stderr

    # Patches: merge, JSON, server-side apply; strategic merge is refused (415).
    kubectl.run("patch", "ct", "daily", "-n", namespace, "--type=merge", "-p", '{"spec":{"replicas":2}}')
    kubectl.run("patch", "ct", "daily", "-n", namespace, "--type=json", "-p",
                '[{"op":"replace","path":"/spec/image","value":"v2"}]')
    kubectl.run("apply", "--server-side", "--force-conflicts", "-f", "-",
                input=cron_tab("daily", namespace, replicas=3))
    smp = kubectl.run("patch", "ct", "daily", "-n", namespace, "-p", '{"spec":{"replicas":4}}', check=False)
    assert "application/strategic-merge-patch+json is not supported" in smp.stderr
    # ... so the custom resource's OpenAPI offers no strategic merge, and a second client-side `kubectl apply`
    # of a changed file sends a merge patch (it sent strategic merge, and got 415, while the OpenAPI listed it).
    kubectl.run("apply", "-f", "-", input=cron_tab("weekly", namespace))
    kubectl.run("apply", "-f", "-", input=cron_tab("weekly", namespace, replicas=7))
    assert kubectl.run("get", "ct", "weekly", "-n", namespace, "-o", "jsonpath={.spec.replicas}").stdout == "7"
    kubectl.run("delete", "ct", "weekly", "-n", namespace)
    got = json.loads(kubectl.run("get", "ct", "daily", "-n", namespace, "-o", "json").stdout)
    assert (got["spec"]["replicas"], got["spec"]["image"], got["metadata"]["generation"]) == (3, "my-cron-image", 4)

    # Subresources: status writes only status (no generation bump); scale reads/writes spec.replicas.
    kubectl.run("patch", "ct", "daily", "-n", namespace, "--subresource=status", "--type=merge",
                "-p", '{"status":{"replicas":3},"spec":{"replicas":9}}')
    kubectl.run("scale", "ct", "daily", "-n", namespace, "--replicas=5")
    got = json.loads(kubectl.run("get", "ct", "daily", "-n", namespace, "-o", "json").stdout)
    assert (got["spec"]["replicas"], got["status"], got["metadata"]["generation"]) == (5, {"replicas": 3}, 5)

    # Watch sees changes; the deprecated version answers with a Warning.
    watcher = kubectl.popen("get", "ct", "-n", namespace, "--watch", "-o", "name")
    try:
        assert watcher.stdout is not None
        assert watcher.stdout.readline().strip() == f"crontab.{GROUP}/daily"
        kubectl.run("apply", "-f", "-", input=cron_tab("hourly", namespace))
        assert watcher.stdout.readline().strip() == f"crontab.{GROUP}/hourly"
    finally:
        watcher.kill()
        watcher.wait()
    old = kubectl.run("get", f"crontabs.v1beta1.{GROUP}", "-n", namespace)
    assert f"Warning: {GROUP}/v1beta1 CronTab is deprecated; use {GROUP}/v1 CronTab" in old.stderr

    # Deleting the CRD deletes its objects first (a finalizer holds one until removed), then the CRD.
    kubectl.run("patch", "ct", "hourly", "-n", namespace, "--type=merge", "-p",
                '{"metadata":{"finalizers":["example.com/hold"]}}')
    kubectl.run("delete", "crd", f"crontabs.{GROUP}", "--wait=false")
    terminating = wait_for(lambda: [c for c in json.loads(kubectl.run(
        "get", "crd", f"crontabs.{GROUP}", "-o", "json").stdout)["status"]["conditions"]
        if c["type"] == "Terminating" and c["status"] == "True"])
    assert terminating[0]["reason"] == "InstanceDeletionInProgress"
    wait_for(lambda: kubectl.run("get", "ct", "-n", namespace, "-o", "name").stdout.strip()
             == f"crontab.{GROUP}/hourly")
    created = kubectl.run("apply", "-f", "-", input=cron_tab("late", namespace), check=False)
    assert "create not allowed while custom resource definition is terminating" in created.stderr
    kubectl.run("patch", "ct", "hourly", "-n", namespace, "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    wait_for(lambda: kubectl.run("get", "crd", f"crontabs.{GROUP}", check=False).returncode == 1)
    for gateway in ("gateway-1", "gateway-2"):
        wait_for(lambda g=gateway: GROUP not in {grp["name"] for grp in gateway_get(stack, g, "/apis")["groups"]})


def test_crd_name_conflict_and_invalid(kubectl: Kubectl) -> None:
    bad = kubectl.run("apply", "-f", "-", input=crd_manifest(group="nodot"), check=False)
    assert "should be a domain with at least one dot" in bad.stderr
    kubectl.run("apply", "-f", "-", input=crd_manifest(group="conflict.example.com", plural="widgets",
                                                       kind="Widget"))
    kubectl.run("wait", "--for=condition=Established", "crd/widgets.conflict.example.com", "--timeout=20s")
    kubectl.run("apply", "-f", "-", input=crd_manifest(group="conflict.example.com", plural="gadgets",
                                                       kind="Widget"))
    cond = wait_for(lambda: [c for c in json.loads(kubectl.run(
        "get", "crd", "gadgets.conflict.example.com", "-o", "json").stdout).get("status", {}).get("conditions", [])
        if c["type"] == "NamesAccepted"])
    assert (cond[0]["status"], cond[0]["reason"], cond[0]["message"]) == (
        "False", "ListKindConflict", "\"WidgetList\" is already in use")  # kind and listKind taken: the last
    kubectl.run("delete", "crd", "gadgets.conflict.example.com", "widgets.conflict.example.com")


def test_aggregated_extension_apiserver(kubectl: Kubectl, alice: Kubectl, stack: Stack, namespace: str,
                                        tmp_path: Path) -> None:
    cert, key, ca_pem = serving_cert(tmp_path, f"api.{namespace}.svc")
    port_file = tmp_path / "port"
    log_path = tmp_path / "server.log"
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).parents[2] / "examples" / "extension-apiserver" / "server.py"),
         "--tls-cert-file", str(cert), "--tls-private-key-file", str(key), "--port-file", str(port_file),
         "--requestheader-client-ca-file", str(stack.pki.front_proxy_ca_cert)], stdout=log_path.open("w"),
        stderr=subprocess.STDOUT)
    try:
        port = int(wait_for(lambda: port_file.exists() and port_file.read_text()))
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": namespace},
             "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}},
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "api", "namespace": namespace},
             "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}]},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
             "metadata": {"name": "v1alpha1.wardle.example.com"},
             "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 1000,
                      "versionPriority": 15, "caBundle": base64.b64encode(ca_pem).decode(),
                      "service": {"namespace": namespace, "name": "api", "port": 443}}}]))
        kubectl.run("wait", "--for=condition=Available", "apiservice/v1alpha1.wardle.example.com", "--timeout=30s")
        local = json.loads(kubectl.run("get", "apiservice", "v1.apps", "-o", "json").stdout)
        assert local["status"]["conditions"][0]["reason"] == "Local"

        doc = json.loads(alice.run("get", "--raw", "/apis/wardle.example.com/v1alpha1").stdout)
        assert doc["groupVersion"] == "wardle.example.com/v1alpha1" and doc["resources"][0]["name"] == "flunders"
        seen = [json.loads(line) for line in log_path.read_text().splitlines() if line.startswith("{")]
        last = [s for s in seen if s.get("path") == "/apis/wardle.example.com/v1alpha1"][-1]["user"]
        assert last["username"] == "alice" and {"dev", "alice-group", "system:authenticated"} <= set(last["groups"])

        denied = alice.run("get", "--raw", f"/apis/wardle.example.com/v1alpha1/namespaces/{namespace}/flunders",
                           check=False)
        assert 'cannot list resource "flunders" in API group "wardle.example.com"' in denied.stderr
        for gateway in ("gateway-1", "gateway-2"):
            groups = wait_for(lambda g=gateway: [x for x in gateway_get(stack, g, "/apis")["groups"]
                                                 if x["name"] == "wardle.example.com"])
            assert groups[0]["preferredVersion"]["version"] == "v1alpha1"
        kubectl.run("create", "-n", namespace, "-f", "-", input=yaml.safe_dump(
            {"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder", "metadata": {"name": "f1"}}))
        got = json.loads(kubectl.run("get", "flunders", "f1", "-n", namespace, "-o", "json").stdout)
        assert got["metadata"]["annotations"]["wardle.example.com/created-by"] == "kubernetes-admin"
        assert "f1" in kubectl.run("get", "flunders", "-n", namespace).stdout
    finally:
        kubectl.run("delete", "apiservice", "v1alpha1.wardle.example.com", "--ignore-not-found", check=False)
        server.kill()
        server.wait()


def test_crd_singular_and_list_kind_are_its_own(kubectl: Kubectl, stack: Stack, namespace: str) -> None:
    """kubectl's crd.sh run_non_native_resource_tests: a CRD whose singular is not its lower-cased kind resolves
    by that singular (discovery's singularName is names.singular); a list answers names.listKind."""
    group = "names.example.com"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"resources.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "resources", "singular": "resource", "kind": "Kind",
                              "listKind": "KindCollection"},
                    "versions": [{"name": "v1alpha1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kubectl.run("apply", "-f", "-", input=json.dumps(crd))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/resources.{group}", "--timeout=30s")
        obj = {"apiVersion": f"{group}/v1alpha1", "kind": "Kind", "metadata": {"name": "myobj"}}
        wait_for(lambda: kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(obj), check=False)
                 .returncode == 0, timeout=30)
        assert kubectl.run("-n", namespace, "get", "resource/myobj", "-o", "name").stdout.strip() == \
            f"kind.{group}/myobj"
        listed = json.loads(kubectl.run("get", "--raw", f"/apis/{group}/v1alpha1/namespaces/{namespace}/resources")
                            .stdout)
        assert listed["kind"] == "KindCollection" and [i["metadata"]["name"] for i in listed["items"]] == ["myobj"]
        discovery = json.loads(kubectl.run("get", "--raw", f"/apis/{group}/v1alpha1").stdout)
        assert [r["singularName"] for r in discovery["resources"]] == ["resource"]
    finally:
        kubectl.run("delete", "crd", f"resources.{group}", "--wait=false")


def test_watches_end_when_their_crd_is_deleted(kubectl: Kubectl, namespace: str) -> None:
    """apiextensions tears down a deleted CRD's storage, and with it every watch of its resources: the stream
    ends (a client relists and gets 404) instead of idling until its timeout. Both a shared watch (JSON) and a
    watch of its own (a Table) end."""
    import time

    # names no other test uses: kubectl's discovery cache would otherwise resolve them to this deleted CRD
    manifest = yaml.safe_load(crd_manifest(group="ends.example.com", plural="sprockets", kind="Sprocket"))
    del manifest["spec"]["names"]["shortNames"]  # "ct" is the crontabs'
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(manifest))
    kubectl.run("wait", "--for=condition=Established", "crd/sprockets.ends.example.com", "--timeout=30s")
    base = ["get", "--raw", f"/apis/ends.example.com/v1/namespaces/{namespace}/sprockets?watch=1&timeoutSeconds=60"]
    wait_for(lambda: kubectl.run("get", "sprockets.ends.example.com", "-n", namespace, check=False).returncode == 0,
             30)
    watches = [kubectl.popen(*base), kubectl.popen("get", "sprockets.ends.example.com", "-n", namespace, "--watch")]
    try:
        time.sleep(2)  # both streams open
        assert all(w.poll() is None for w in watches)
        started = time.monotonic()
        kubectl.run("delete", "crd", "sprockets.ends.example.com", "--wait=true", "--timeout=60s")
        for w in watches:
            w.wait(timeout=30)  # well before the 60 s the watches asked for
        assert time.monotonic() - started < 30
    finally:
        for w in watches:
            if w.poll() is None:
                w.kill()
