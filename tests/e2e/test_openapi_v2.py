"""kubectl's client-side validation through ``/openapi/v2`` as gnostic protobuf (issue 4).

kubectl validates a ``kind: List`` on the client (the server-side
fieldValidation check does not apply to List) with the OpenAPI v2 document it
fetches as protobuf; ``kubectl explain --output plaintext-openapiv2`` reads the
same document.
"""

from __future__ import annotations

import yaml

from tests.e2e.conftest import Kubectl, wait_for

CLIENT_SIDE = "error validating data: ValidationError"


def config_map_list(namespace: str, **extra: object) -> str:
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}", "namespace": namespace},
              "data": {"k": str(i)}} for i in range(2)]
    items[1].update(extra)
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items})


def test_list_create_and_apply(kubectl: Kubectl, namespace: str) -> None:
    created = kubectl.run("create", "-f", "-", "-v=6", input=config_map_list(namespace))
    assert "configmap/cm-0 created" in created.stdout and "configmap/cm-1 created" in created.stdout
    fetched = [line for line in created.stderr.splitlines() if "/openapi/v2" in line and "Response" in line]
    assert fetched and "200 OK" in fetched[0], created.stderr[-2000:]
    applied = kubectl.run("apply", "-f", "-", input=config_map_list(namespace).replace("k: '1'", "k: changed"))
    assert "configmap/cm-1 configured" in applied.stdout
    assert kubectl.run("get", "configmap", "cm-1", "-n", namespace, "-o", "jsonpath={.data.k}").stdout == "changed"


def test_list_with_unknown_field_is_refused(kubectl: Kubectl, namespace: str) -> None:
    bad = config_map_list(namespace, spec={"nope": 1})
    for verb in ("create", "apply"):
        refused = kubectl.run(verb, "-f", "-", input=bad, check=False)
        assert refused.returncode == 1
        assert (f'{CLIENT_SIDE}(ConfigMap): unknown field "spec" in io.k8s.api.core.v1.ConfigMap; '
                "if you choose to ignore these errors, turn validation off with --validate=false") in refused.stderr
    assert "cm-0" not in kubectl.run("get", "configmaps", "-n", namespace, "-o", "name").stdout
    kubectl.run("create", "-f", "-", "--validate=false", input=bad)  # fieldValidation=Ignore: the field is dropped
    assert "cm-1" in kubectl.run("get", "configmaps", "-n", namespace, "-o", "name").stdout


def test_list_of_custom_resources(kubectl: Kubectl, namespace: str) -> None:
    group = "v2pb.example.com"
    spec_schema = {"type": "object", "properties": {
        "size": {"type": "integer"},
        "port": {"x-kubernetes-int-or-string": True},
        "note": {"type": "string", "nullable": True},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                 "properties": {"a": {"type": "string"}}},
        "choice": {"type": "string", "anyOf": [{"pattern": "^a"}, {"pattern": "^b"}]}}}
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {"group": group, "scope": "Namespaced",
                 "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "properties": {"spec": spec_schema}}}}]}}))
    try:
        kubectl.run("wait", "--for=condition=Established", f"crd/gadgets.{group}", "--timeout=20s")

        def gadgets(**spec: object) -> str:
            return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
                {"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "g1", "namespace": namespace},
                 "spec": {"size": 3, "port": "http", "note": None, "free": {"a": "x", "b": {"c": 1}}, "choice": "a",
                          **spec}}]})

        # Both gateways must publish the CRD in /openapi/v2 before kubectl can find the kind there.
        refused = wait_for(lambda: (r := kubectl.run("create", "-f", "-", "--dry-run=server", input=gadgets(bogus=1),
                                                     check=False)).returncode == 1 and CLIENT_SIDE in r.stderr and r)
        assert 'unknown field "bogus" in com.example.v2pb.v1.Gadget.spec' in refused.stderr
        created = kubectl.run("create", "-f", "-", input=gadgets())
        assert f"gadget.{group}/g1 created" in created.stdout
        explained = kubectl.run("explain", f"gadgets.{group}.spec", "--output", "plaintext-openapiv2").stdout
        assert "size\t<integer>" in explained and "free\t<" in explained
    finally:
        kubectl.run("delete", "crd", f"gadgets.{group}", "--wait=false", check=False)


def test_explain_with_openapi_v2(kubectl: Kubectl) -> None:
    explained = kubectl.run("explain", "pods.spec.containers.image", "--output", "plaintext-openapiv2").stdout
    assert "KIND:     Pod" in explained and "FIELD:    image <string>" in explained
    fields = kubectl.run("explain", "deployments.spec", "--output", "plaintext-openapiv2").stdout
    assert "replicas\t<integer>" in fields and "template\t<Object> -required-" in fields
    assert "FIELD: image <string>" in kubectl.run("explain", "pods.spec.containers.image").stdout
