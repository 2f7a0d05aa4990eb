"""APIServices end to end: Local APIServices (built-in and CRD), discovery order, the authentication ConfigMap,
and the example extension server configured from that ConfigMap (issue 11, aggregation part)."""

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

LABEL = "kube-aggregator.kubernetes.io/automanaged"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"




def gateway_get(stack: Stack, gateway: str, path: str, accept: str = "application/json") -> Any:
    """GET ``path`` straight from one gateway as the admin."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.check_hostname = False
    request = urllib.request.Request(f"https://{stack.addresses[gateway]}{path}", headers={"Accept": accept})
    with urllib.request.urlopen(request, context=context, timeout=10) as resp:
        return json.loads(resp.read())


def test_local_apiservices_for_builtin_groups(kubectl: Kubectl) -> None:
    def table() -> dict[str, list[str]]:
        out = kubectl.run("get", "apiservices").stdout.splitlines()
        return {line.split()[0]: line.split()[1:3] for line in out[1:]}

    rows = wait_for(lambda: (t := table()) and all(t.get(n) == ["Local", "True"] for n in (
        "v1.", "v1.apps", "v1.rbac.authorization.k8s.io", "v1.flowcontrol.apiserver.k8s.io")) and t)
    assert "v1.apiregistration.k8s.io" not in rows  # kube keeps none for the aggregator's own group
    apps = json.loads(kubectl.run("get", "apiservice", "v1.apps", "-o", "json").stdout)
    assert apps["metadata"]["labels"][LABEL] == "onstart"
    assert apps["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15}
    available = apps["status"]["conditions"][0]
    assert (available["type"], available["status"], available["reason"], available["message"]) == (
        "Available", "True", "Local", "Local APIServices are always available")


def test_apiservice_validation(kubectl: Kubectl) -> None:
    bad = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
           "metadata": {"name": "v1.wrong.example.com"},
           "spec": {"group": "x.example.com", "version": "v1", "groupPriorityMinimum": 30000, "versionPriority": 0,
                    "insecureSkipTLSVerify": True, "caBundle": base64.b64encode(b"abc").decode(),
                    "service": {"namespace": "ns", "name": "svc", "port": 70000}}}
    proc = kubectl.run("create", "-f", "-", input=json.dumps(bad), check=False)
    assert proc.returncode != 0
    assert ('The APIService "v1.wrong.example.com" is invalid: \n'
            '* metadata.name: Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: '
            '"v1.x.example.com"\n'
            '* spec.groupPriorityMinimum: Invalid value: 30000: must be positive and less than 20000\n'
            '* spec.versionPriority: Invalid value: 0: must be positive and less than 1000\n'
            '* spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive\n'
            '* spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present') in proc.stderr


def test_crd_group_apiservice_follows_the_crd_and_discovery_order(kubectl: Kubectl, stack: Stack) -> None:
    group = "apisvc.example.com"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"gadgets.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": n, "served": True, "storage": n == "v1beta1",
                                  "schema": {"openAPIV3Schema": {"type": "object",
                                                                 "x-kubernetes-preserve-unknown-fields": True}}}
                                 for n in ("v1alpha1", "v1beta1", "v1")]}}
    kubectl.run("apply", "-f", "-", input=json.dumps(crd))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/gadgets.{group}", "--timeout=30s")
        kubectl.run("wait", "--for=condition=Available", f"apiservice/v1.{group}", "--timeout=30s")
        got = json.loads(kubectl.run("get", "apiservice", f"v1beta1.{group}", "-o", "json").stdout)
        assert got["metadata"]["labels"][LABEL] == "true"
        assert (got["spec"]["groupPriorityMinimum"], got["spec"]["versionPriority"]) == (1000, 100)

        for gateway in ("gateway-1", "gateway-2"):
            groups = wait_for(lambda g=gateway: (names := [x["name"] for x in gateway_get(stack, g, "/apis")["groups"]])
                              and group in names and gateway_get(stack, g, "/apis")["groups"])
            names = [x["name"] for x in groups]
            assert names[:5] == ["apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
                                 "authorization.k8s.io"]
            assert names.index(group) > names.index("flowcontrol.apiserver.k8s.io")  # CRDs (1000) after built-ins
            mine = next(x for x in groups if x["name"] == group)
            assert [v["version"] for v in mine["versions"]] == ["v1", "v1beta1", "v1alpha1"]
            assert mine["preferredVersion"]["version"] == "v1"  # kube's version order, not the storage version
            items = gateway_get(stack, gateway, "/apis", AGGREGATED)["items"]
            agg = [i["metadata"]["name"] for i in items]
            assert agg[:3] == ["apps", "events.k8s.io", "authentication.k8s.io"]
            assert [v["version"] for v in items[agg.index(group)]["versions"]] == ["v1", "v1beta1", "v1alpha1"]
        versions = kubectl.run("api-versions").stdout.split()
        assert versions == sorted(versions) and f"{group}/v1alpha1" in versions  # kubectl sorts, as against kube
    finally:
        kubectl.run("delete", "crd", f"gadgets.{group}", "--ignore-not-found", "--wait=false")
    wait_for(lambda: not kubectl.run("get", "apiservice", f"v1.{group}", "--ignore-not-found").stdout.strip(), 30)
    assert not kubectl.run("get", "apiservice", f"v1alpha1.{group}", "--ignore-not-found").stdout.strip()


def test_extension_apiserver_authentication_configmap(kubectl: Kubectl, stack: Stack) -> None:
    cm = wait_for(lambda: json.loads(kubectl.run("get", "configmap", "-n", "kube-system",
                                                 "extension-apiserver-authentication", "-o", "json").stdout))
    data = cm["data"]
    assert data["client-ca-file"] == stack.pki.ca_cert.read_text()
    assert data["requestheader-client-ca-file"] == stack.pki.front_proxy_ca_cert.read_text()  # a CA of its own
    assert json.loads(data["requestheader-allowed-names"]) == ["front-proxy-client"]
    assert json.loads(data["requestheader-username-headers"]) == ["X-Remote-User"]
    assert json.loads(data["requestheader-group-headers"]) == ["X-Remote-Group"]
    assert json.loads(data["requestheader-extra-headers-prefix"]) == ["X-Remote-Extra-"]
    for user, allowed in (("system:kube-scheduler", "yes"), ("system:kube-controller-manager", "yes"),
                          ("someone", "no")):
        proc = kubectl.run("auth", "can-i", "get", "configmap/extension-apiserver-authentication", "-n",
                           "kube-system", "--as", user, check=False)
        assert proc.stdout.strip() == allowed, user
    assert kubectl.run("auth", "can-i", "get", "configmap/other", "-n", "kube-system", "--as",
                       "system:kube-scheduler", check=False).stdout.strip() == "no"


def test_example_server_trusts_the_front_proxy_from_the_configmap(kubectl: Kubectl, stack: Stack, namespace: str,
                                                                   tmp_path: Path) -> None:
    # The example extension server gets no CA file: it reads kube-system/extension-apiserver-authentication.
    cert, key, ca_pem = serving_cert(tmp_path, f"api.{namespace}.svc")
    port_file, log_path = tmp_path / "port", tmp_path / "server.log"
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).parents[2] / "examples" / "extension-apiserver" / "server.py"),
         "--tls-cert-file", str(cert), "--tls-private-key-file", str(key), "--port-file", str(port_file),
         "--authentication-kubeconfig", str(stack.kubeconfig)], stdout=log_path.open("w"), stderr=subprocess.STDOUT)
    name = "v1alpha1.wardle.example.com"
    try:
        port = int(wait_for(lambda: port_file.exists() and port_file.read_text()))
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump_all([
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": namespace},
             "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}},
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "api", "namespace": namespace},
             "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port}]}]},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name},
             "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 1000,
                      "versionPriority": 15, "caBundle": base64.b64encode(ca_pem).decode(),
                      "service": {"namespace": namespace, "name": "api"}}}]))
        kubectl.run("wait", "--for=condition=Available", f"apiservice/{name}", "--timeout=30s")
        who = json.loads(kubectl.run("get", "--raw", "/apis/wardle.example.com/v1alpha1/whoami").stdout)["user"]
        assert who["username"] == "kubernetes-admin" and "system:masters" in who["groups"]
        port_default = json.loads(kubectl.run("get", "apiservice", name, "-o", "json").stdout)
        assert port_default["spec"]["service"]["port"] == 443  # defaulted, as apiregistration/v1
    finally:
        kubectl.run("delete", "apiservice", name, "--ignore-not-found", check=False)
        server.kill()
        server.wait()
