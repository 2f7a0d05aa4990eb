"""Issue 4's acceptance: the kubectl surface users must not be able to tell from kube-apiserver's.

Real kubectl (and the official Python client for exact Status bodies) through
Envoy against the shared stack; each test works in its own namespace.
"""

from __future__ import annotations

import json
import os
import stat
import textwrap

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: app}
data: {a: "1", b: "1"}
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.27"}]
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
"""


@pytest.fixture(scope="module")
def api(stack: Stack) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(stack.kubeconfig))


def managers(kubectl: Kubectl, ns: str, what: str) -> set[tuple[str, str]]:
    obj = json.loads(kubectl.run("-n", ns, "get", what, "-o", "json", "--show-managed-fields").stdout)
    return {(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields") or []}


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_apply_client_side_server_side_and_back(kubectl: Kubectl, namespace: str, tmp_path):
    path = write(tmp_path, "cm.yaml", CONFIGMAP)
    assert "configmap/app created" in kubectl.run("-n", namespace, "apply", "-f", path).stdout
    assert managers(kubectl, namespace, "cm/app") == {("kubectl-client-side-apply", "Update")}

    assert "configmap/app serverside-applied" in kubectl.run("-n", namespace, "apply", "--server-side", "-f",
                                                             path).stdout
    assert ("kubectl", "Apply") in managers(kubectl, namespace, "cm/app")

    # Server-side apply dropping a field it owns removes it.
    kubectl.run("-n", namespace, "apply", "--server-side", "-f",
                write(tmp_path, "cm2.yaml", CONFIGMAP.replace(', b: "1"', "")))
    obj = json.loads(kubectl.run("-n", namespace, "get", "cm", "app", "-o", "json").stdout)
    assert obj["data"] == {"a": "1"}

    # Back to client-side apply: the last-applied annotation was kept current, so it still works.
    out = kubectl.run("-n", namespace, "apply", "-f", write(tmp_path, "cm3.yaml", CONFIGMAP.replace(
        'a: "1"', 'a: "3"'))).stdout
    assert "configmap/app configured" in out
    assert json.loads(kubectl.run("-n", namespace, "get", "cm", "app", "-o", "json").stdout)["data"] == {
        "a": "3", "b": "1"}

    # Now the field belongs to client-side apply: another manager's server-side apply changing it conflicts,
    # --force-conflicts wins. kubectl's own (manager "kubectl") takes the field over without a conflict, since
    # the last-applied annotation records it with its live value (kube's lastAppliedManager).
    proc = kubectl.run("-n", namespace, "apply", "--server-side", "--field-manager=other", "-f", path, check=False)
    assert proc.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a' in proc.stderr
    kubectl.run("-n", namespace, "apply", "--server-side", "-f", path)
    assert json.loads(kubectl.run("-n", namespace, "get", "cm", "app", "-o", "json").stdout)["data"]["a"] == "1"
    assert ("kubectl-client-side-apply", "Update") not in managers(kubectl, namespace, "cm/app")


def test_server_side_apply_creates_and_conflict_status(kubectl: Kubectl, api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"k": "v"}}
    created = core.patch_namespaced_config_map("ssa", namespace, body, field_manager="one",
                                               _content_type="application/apply-patch+yaml")
    assert created.data == {"k": "v"}
    [entry] = created.metadata.managed_fields
    assert (entry.manager, entry.operation, entry.fields_v1) == ("one", "Apply", {"f:data": {"f:k": {}}})
    with pytest.raises(ApiException) as info:
        core.patch_namespaced_config_map("ssa", namespace, {**body, "data": {"k": "w"}}, field_manager="two",
                                         _content_type="application/apply-patch+yaml")
    assert info.value.status == 409
    assert json.loads(info.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'Apply failed with 1 conflict: conflict with "one": .data.k', "reason": "Conflict",
        "details": {"causes": [{"reason": "FieldManagerConflict", "message": 'conflict with "one"',
                                "field": ".data.k"}]}, "code": 409}
    with pytest.raises(ApiException) as info:
        core.patch_namespaced_config_map("ssa", namespace, body, _content_type="application/apply-patch+yaml")
    assert info.value.status == 422 and json.loads(info.value.body)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')


def test_diff_and_edit(kubectl: Kubectl, namespace: str, tmp_path):
    path = write(tmp_path, "cm.yaml", CONFIGMAP)
    kubectl.run("-n", namespace, "apply", "-f", path)
    assert kubectl.run("-n", namespace, "diff", "-f", path, check=False).returncode == 0
    changed = write(tmp_path, "cm2.yaml", CONFIGMAP.replace('b: "1"', 'b: "2"'))
    proc = kubectl.run("-n", namespace, "diff", "-f", changed, check=False)
    assert proc.returncode == 1, proc.stderr
    assert '+  b: "2"' in proc.stdout and '-  b: "1"' in proc.stdout

    editor = tmp_path / "editor.sh"
    editor.write_text(textwrap.dedent("""\
        #!/bin/sh
        sed -i 's/^  a: "1"$/  a: "edited"/' "$1"
        """))
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    os.environ["KUBE_EDITOR"] = str(editor)
    try:
        out = kubectl.run("-n", namespace, "edit", "cm", "app").stdout
    finally:
        del os.environ["KUBE_EDITOR"]
    assert "configmap/app edited" in out
    obj = json.loads(kubectl.run("-n", namespace, "get", "cm", "app", "-o", "json", "--show-managed-fields").stdout)
    assert obj["data"]["a"] == "edited"
    assert "kubectl-edit" in {e["manager"] for e in obj["metadata"]["managedFields"]}


def test_patch_types(kubectl: Kubectl, namespace: str, tmp_path):
    kubectl.run("-n", namespace, "apply", "-f", write(tmp_path, "svc.yaml", SERVICE))
    # Strategic merge: ports merge by port, the existing one stays.
    kubectl.run("-n", namespace, "patch", "svc", "web", "-p",
                '{"spec":{"ports":[{"name":"https","port":443,"targetPort":8443}]}}')
    ports = json.loads(kubectl.run("-n", namespace, "get", "svc", "web", "-o", "jsonpath={.spec.ports}").stdout)
    assert [(p["name"], p["port"]) for p in ports] == [("http", 80), ("https", 443)]
    # Merge patch: the list is replaced.
    kubectl.run("-n", namespace, "patch", "svc", "web", "--type=merge", "-p",
                '{"spec":{"ports":[{"name":"only","port":8000}]}}')
    ports = json.loads(kubectl.run("-n", namespace, "get", "svc", "web", "-o", "jsonpath={.spec.ports}").stdout)
    assert [(p["name"], p["port"]) for p in ports] == [("only", 8000)]
    # JSON patch: insertion at index 0.
    kubectl.run("-n", namespace, "patch", "svc", "web", "--type=json", "-p",
                '[{"op":"add","path":"/spec/ports/0","value":{"name":"first","port":7000}}]')
    ports = json.loads(kubectl.run("-n", namespace, "get", "svc", "web", "-o", "jsonpath={.spec.ports}").stdout)
    assert [(p["name"], p["port"]) for p in ports] == [("first", 7000), ("only", 8000)]


def test_label_annotate_scale_and_output_formats(kubectl: Kubectl, namespace: str, tmp_path):
    kubectl.run("-n", namespace, "apply", "-f", write(tmp_path, "d.yaml", DEPLOYMENT))
    kubectl.run("-n", namespace, "apply", "-f", write(tmp_path, "s.yaml", SERVICE))
    assert "labeled" in kubectl.run("-n", namespace, "label", "deploy", "web", "tier=front").stdout
    assert "annotated" in kubectl.run("-n", namespace, "annotate", "deploy", "web", "note=hi").stdout
    assert "scaled" in kubectl.run("-n", namespace, "scale", "deploy", "web", "--replicas=5").stdout
    obj = json.loads(kubectl.run("-n", namespace, "get", "deploy", "web", "-o", "json").stdout)
    assert obj["metadata"]["labels"]["tier"] == "front"
    assert obj["metadata"]["annotations"]["note"] == "hi"
    assert obj["spec"]["replicas"] == 5
    assert yaml.safe_load(kubectl.run("-n", namespace, "get", "deploy", "web", "-o", "yaml").stdout)["kind"] == \
        "Deployment"
    assert kubectl.run("-n", namespace, "get", "deploy", "-o", "name").stdout.split() == ["deployment.apps/web"]
    assert kubectl.run("-n", namespace, "get", "deploy", "web", "-o",
                       "jsonpath={.spec.template.spec.containers[0].image}").stdout == "nginx:1.27"
    cols = kubectl.run("-n", namespace, "get", "deploy", "-o",
                       "custom-columns=NAME:.metadata.name,REPLICAS:.spec.replicas").stdout.split()
    assert cols == ["NAME", "REPLICAS", "web", "5"]
    wide = kubectl.run("-n", namespace, "get", "deploy", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE", "CONTAINERS", "IMAGES",
                               "SELECTOR"]
    assert wide[1].split()[5:] == ["nginx", "nginx:1.27", "app=web"] and wide[1].split()[0] == "web"
    everything = kubectl.run("-n", namespace, "get", "all").stdout
    assert "deployment.apps/web" in everything and "service/web" in everything
    described = kubectl.run("-n", namespace, "describe", "deploy", "web").stdout
    assert "Name:" in described and "web" in described and "Replicas:" in described
    assert "5 desired" in described


def test_explain_pod_containers(kubectl: Kubectl):
    out = kubectl.run("explain", "pod.spec.containers").stdout
    assert "KIND:       Pod" in out and "FIELD: containers <[]Container>" in out
    assert "image\t<string>" in out and "ports\t<[]ContainerPort>" in out


def test_create_dry_run_server_persists_nothing(kubectl: Kubectl, namespace: str):
    out = kubectl.run("-n", namespace, "create", "configmap", "dry", "--from-literal=a=b", "--dry-run=server",
                      "-o", "json").stdout
    assert json.loads(out)["data"] == {"a": "b"}
    proc = kubectl.run("-n", namespace, "get", "cm", "dry", check=False)
    assert proc.returncode == 1 and 'configmaps "dry" not found' in proc.stderr


def test_delete_wait_and_wait_for_delete(kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "create", "configmap", "one")
    kubectl.run("-n", namespace, "create", "configmap", "two")
    assert "deleted" in kubectl.run("-n", namespace, "delete", "cm", "one", "--wait").stdout
    waiter = kubectl.popen("-n", namespace, "wait", "--for=delete", "cm/two", "--timeout=20s")
    kubectl.run("-n", namespace, "delete", "cm", "two", "--wait=false")
    assert waiter.wait(25) == 0, waiter.stderr.read() if waiter.stderr else ""


def test_watch_event_order(kubectl: Kubectl, namespace: str):
    watcher = kubectl.popen("get", "--raw", f"/api/v1/namespaces/{namespace}/configmaps?watch=1&timeoutSeconds=4")
    import time
    time.sleep(1)
    kubectl.run("-n", namespace, "create", "configmap", "w")
    kubectl.run("-n", namespace, "patch", "cm", "w", "-p", '{"data":{"x":"1"}}')
    kubectl.run("-n", namespace, "delete", "cm", "w")
    out, _ = watcher.communicate(timeout=15)
    events = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events
            if e["object"]["metadata"]["name"] != "kube-root-ca.crt"] == [  # the controllers' root CA ConfigMap
        ("ADDED", "w"), ("MODIFIED", "w"), ("DELETED", "w")]


def test_exact_status_bodies(api: client.ApiClient, namespace: str):
    core = client.CoreV1Api(api)
    with pytest.raises(ApiException) as info:
        core.read_namespaced_config_map("missing", namespace)
    assert info.value.status == 404
    assert json.loads(info.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "missing" not found', "reason": "NotFound",
        "details": {"name": "missing", "kind": "configmaps"}, "code": 404}

    core.create_namespaced_config_map(namespace, {"metadata": {"name": "dup"}})
    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "dup"}})
    assert info.value.status == 409
    assert json.loads(info.value.body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "dup" already exists', "reason": "AlreadyExists",
        "details": {"name": "dup", "kind": "configmaps"}, "code": 409}

    with pytest.raises(ApiException) as info:
        core.create_namespaced_config_map(namespace, {"metadata": {"name": "Bad_Name"}})
    assert info.value.status == 422
    body = json.loads(info.value.body)
    message = ('a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', '
               'and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for '
               'validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')')
    assert body == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {message}',
        "reason": "Invalid",
        "details": {"name": "Bad_Name", "kind": "ConfigMap", "causes": [
            {"reason": "FieldValueInvalid", "message": f'Invalid value: "Bad_Name": {message}',
             "field": "metadata.name"}]},
        "code": 422}


def test_unservable_accept_is_406_naming_what_is_served(api: client.ApiClient, namespace: str):
    resp = api.call_api("GET", f"{api.configuration.host}/api/v1/namespaces/{namespace}/configmaps",
                        header_params={"Accept": "text/html"})
    resp.read()
    assert resp.status == 406
    body = json.loads(resp.data)
    # kube's go-restful router refuses it before the handler: the list route's Produces (installer.go)
    assert (body["reason"], body["message"], body["details"]) == (
        "NotAcceptable", "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf, application/json;stream=watch, "
        "application/vnd.kubernetes.protobuf;stream=watch", {})


def test_service_cluster_ips(kubectl: Kubectl, namespace: str, tmp_path):
    default = json.loads(kubectl.run("-n", "default", "get", "svc", "kubernetes", "-o", "json").stdout)
    assert default["spec"]["clusterIP"] == "10.96.0.1"
    assert default["spec"]["ports"][0]["port"] == 443
    kubectl.run("-n", "default", "get", "endpoints", "kubernetes")

    kubectl.run("-n", namespace, "apply", "-f", write(tmp_path, "s.yaml", SERVICE))
    kubectl.run("-n", namespace, "create", "service", "nodeport", "np", "--tcp=80:8080")
    web = json.loads(kubectl.run("-n", namespace, "get", "svc", "web", "-o", "json").stdout)["spec"]
    np = json.loads(kubectl.run("-n", namespace, "get", "svc", "np", "-o", "json").stdout)["spec"]
    import ipaddress
    for spec in (web, np):
        assert ipaddress.ip_address(spec["clusterIP"]) in ipaddress.ip_network("10.96.0.0/12")
        assert spec["clusterIPs"] == [spec["clusterIP"]] and spec["clusterIP"] != "10.96.0.1"
    assert web["clusterIP"] != np["clusterIP"]
    assert 30000 <= np["ports"][0]["nodePort"] <= 32767
    table = kubectl.run("-n", namespace, "get", "svc", "web").stdout.splitlines()
    assert table[1].split()[2] == web["clusterIP"]

    proc = kubectl.run("-n", namespace, "patch", "svc", "web", "-p", '{"spec":{"clusterIP":"10.96.0.200"}}',
                       check=False)
    assert proc.returncode != 0 and "may not change once set" in proc.stderr
    proc = kubectl.run("-n", namespace, "create", "-f", "-", check=False, input=json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "dup"},
        "spec": {"clusterIP": web["clusterIP"], "ports": [{"port": 1}]}}))
    assert proc.returncode != 0 and "provided IP is already allocated" in proc.stderr
    kubectl.run("-n", namespace, "delete", "svc", "web")
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "reuse"},
        "spec": {"clusterIP": web["clusterIP"], "ports": [{"port": 1}]}}))
