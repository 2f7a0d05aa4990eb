"""CRD rules using kube's CEL libraries (isIP, split, lowerAscii, isURL, quantity) and escaped names
(self.__namespace__) through kubectl: a valid custom resource is created, an invalid one gets kube's 422."""

from __future__ import annotations

from typing import Any

import yaml

from tests.e2e.conftest import Kubectl

GROUP = "cellib.example.com"
CRD = f"routes.{GROUP}"

RULES = [
    {"rule": "isIP(self.address)", "message": "address must be an IP"},
    {"rule": "self.hosts.split(',').all(h, h == h.lowerAscii())", "message": "hosts must be lower case"},
    {"rule": "self.parentRef.__namespace__ != 'kube-system'", "message": "parentRef.namespace must not be kube-system"},
    {"rule": "isURL(self.endpoint)", "message": "endpoint must be a URL"},
    {"rule": "quantity(self.size).isLessThan(quantity('1Gi'))", "message": "size must be below 1Gi"},
]


def route_crd() -> dict[str, Any]:
    spec = {"type": "object", "x-kubernetes-validations": RULES, "properties": {
        "address": {"type": "string"}, "hosts": {"type": "string"}, "endpoint": {"type": "string"},
        "size": {"type": "string"},
        "parentRef": {"type": "object", "properties": {"name": {"type": "string"}, "namespace": {"type": "string"}}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": CRD},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "routes", "singular": "route", "kind": "Route"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": spec}}}}]}}


def route(name: str, **spec: Any) -> str:
    return yaml.safe_dump({"apiVersion": f"{GROUP}/v1", "kind": "Route", "metadata": {"name": name}, "spec": spec})


def test_crd_rules_with_kube_cel_libraries(kubectl: Kubectl, namespace: str) -> None:
    bad_crd = route_crd()
    bad_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"] = [{"rule": "isIPv9(self.address)"}]
    proc = kubectl.run("apply", "-f", "-", input=yaml.safe_dump(bad_crd), check=False)
    assert proc.returncode == 1
    assert "compilation failed: ERROR: <input>:1:7: undeclared reference to 'isIPv9' (in container '')" in proc.stderr
    try:
        kubectl.run("apply", "-f", "-", input=yaml.safe_dump(route_crd()))
        kubectl.run("wait", "--for=condition=Established", f"crd/{CRD}", "--timeout=20s")
        valid = dict(address="10.0.0.1", hosts="a.example.com,b.example.com", endpoint="https://example.com/x",
                     size="512Mi", parentRef={"name": "gw", "namespace": "infra"})
        kubectl.run("apply", "-n", namespace, "-f", "-", input=route("good", **valid))
        got = kubectl.run("get", "-n", namespace, "routes.cellib.example.com", "good", "-o", "yaml").stdout
        assert yaml.safe_load(got)["spec"]["parentRef"] == {"name": "gw", "namespace": "infra"}

        invalid = dict(address="10.0.0", hosts="A.example.com", endpoint="example.com", size="2Gi",
                       parentRef={"name": "gw", "namespace": "kube-system"})
        proc = kubectl.run("apply", "-n", namespace, "-f", "-", input=route("bad", **invalid), check=False)
        assert proc.returncode == 1
        stderr = proc.stderr
        assert 'The Route "bad" is invalid' in stderr
        for message in ("address must be an IP", "hosts must be lower case",
                        "parentRef.namespace must not be kube-system", "endpoint must be a URL",
                        "size must be below 1Gi"):
            assert f"spec: Invalid value: {message}" in stderr, stderr  # an object's value is omitted
        assert kubectl.run("get", "-n", namespace, f"routes.{GROUP}", "bad", check=False).returncode == 1

        broken = dict(valid, size="lots")  # quantity() refuses: kube's evaluation error
        proc = kubectl.run("apply", "-n", namespace, "-f", "-", input=route("broken", **broken), check=False)
        assert proc.returncode == 1
        assert ("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' "
                "evaluating rule: size must be below 1Gi") in proc.stderr
    finally:
        kubectl.run("delete", "crd", CRD, "--ignore-not-found", "--timeout=30s")
