"""The walking skeleton's acceptance, with real kubectl through Envoy."""

from __future__ import annotations

import textwrap
import threading
import time

import yaml

from tests.e2e.conftest import Kubectl


def test_get_namespaces_lists_system_namespaces(kubectl: Kubectl):
    out = kubectl.run("get", "ns").stdout
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "AGE"]
    names = {line.split()[0] for line in lines[1:]}
    assert {"default", "kube-system", "kube-public"} <= names


def test_create_configmap_and_read_it_back(kubectl: Kubectl):
    kubectl.run("create", "namespace", "demo")
    kubectl.run("-n", "demo", "create", "configmap", "app", "--from-literal=k=v")
    obj = yaml.safe_load(kubectl.run("-n", "demo", "get", "cm", "app", "-o", "yaml").stdout)
    assert obj["data"] == {"k": "v"}
    meta = obj["metadata"]
    assert meta["name"] == "app" and meta["namespace"] == "demo"
    assert len(meta["uid"]) == 36
    assert int(meta["resourceVersion"]) > 0
    assert meta["creationTimestamp"].endswith("Z")
    table = kubectl.run("-n", "demo", "get", "cm").stdout.splitlines()
    assert table[0].split() == ["NAME", "DATA", "AGE"]
    assert table[1].split()[:2] == ["app", "1"]


MANIFEST = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {index: hello}
---
apiVersion: v1
kind: Secret
metadata: {name: web-secret}
type: Opaque
data: {password: czNjcmV0}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - name: nginx
    image: nginx:1.27
    ports: [{containerPort: 8080}]
"""


def test_apply_creates_then_reports_unchanged(kubectl: Kubectl, namespace: str, tmp_path):
    path = tmp_path / "app.yaml"
    path.write_text(MANIFEST)
    first = kubectl.run("-n", namespace, "apply", "-f", str(path)).stdout
    for line in ("configmap/web-config created", "secret/web-secret created", "service/web created",
                 "pod/web created"):
        assert line in first
    second = kubectl.run("-n", namespace, "apply", "-f", str(path)).stdout
    for line in ("configmap/web-config unchanged", "secret/web-secret unchanged", "service/web unchanged",
                 "pod/web unchanged"):
        assert line in second
    pod = yaml.safe_load(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "yaml").stdout)
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"
    # A changed manifest is patched in place (strategic merge patch).
    path.write_text(MANIFEST.replace("data: {index: hello}", "data: {index: bye}"))
    third = kubectl.run("-n", namespace, "apply", "-f", str(path)).stdout
    assert "configmap/web-config configured" in third
    cm = yaml.safe_load(kubectl.run("-n", namespace, "get", "cm", "web-config", "-o", "yaml").stdout)
    assert cm["data"] == {"index": "bye"}


def test_watch_sees_change_from_another_kubectl(kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "create", "configmap", "before", "--from-literal=a=b")
    watcher = kubectl.popen("-n", namespace, "get", "cm", "--watch")
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(watcher.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 20
        while not any(line.startswith("before") for line in lines) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert any(line.startswith("before") for line in lines), lines
        kubectl.run("-n", namespace, "create", "configmap", "during", "--from-literal=x=y")
        while not any(line.startswith("during") for line in lines) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert any(line.startswith("during") for line in lines), lines
    finally:
        watcher.terminate()
        watcher.wait(10)


def test_delete_then_not_found_and_duplicate_create(kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "create", "configmap", "app", "--from-literal=k=v")
    dup = kubectl.run("-n", namespace, "create", "configmap", "app", "--from-literal=k=v", check=False)
    assert dup.returncode != 0
    # kubectl 1.37 prefixes create errors with "failed to create configmap" (kube-apiserver's Status message follows).
    assert 'configmaps "app" already exists' in dup.stderr
    assert 'configmap "app" deleted' in kubectl.run("-n", namespace, "delete", "cm", "app").stdout
    gone = kubectl.run("-n", namespace, "get", "cm", "app", check=False)
    assert gone.returncode != 0
    assert 'Error from server (NotFound): configmaps "app" not found' in gone.stderr


def test_rbac_forbidden_then_allowed(kubectl: Kubectl, alice: Kubectl, namespace: str, tmp_path):
    denied = alice.run("-n", namespace, "create", "configmap", "x", "--from-literal=a=b", check=False)
    assert denied.returncode != 0
    assert ('configmaps is forbidden: User "alice" cannot create resource '
            f'"configmaps" in API group "" in the namespace "{namespace}"') in denied.stderr
    listed = alice.run("-n", namespace, "get", "configmaps", check=False)
    assert ('Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource '
            f'"configmaps" in API group "" in the namespace "{namespace}"') in listed.stderr
    rbac = tmp_path / "rbac.yaml"
    rbac.write_text(textwrap.dedent(f"""\
        apiVersion: rbac.authorization.k8s.io/v1
        kind: Role
        metadata: {{name: cm-writer, namespace: {namespace}}}
        rules:
        - apiGroups: [""]
          resources: [configmaps]
          verbs: [create, get, list]
        ---
        apiVersion: rbac.authorization.k8s.io/v1
        kind: RoleBinding
        metadata: {{name: alice-cm-writer, namespace: {namespace}}}
        roleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-writer}}
        subjects:
        - {{apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}}
        """))
    kubectl.run("apply", "-f", str(rbac))
    deadline = time.monotonic() + 10
    while True:
        allowed = alice.run("-n", namespace, "create", "configmap", "x", "--from-literal=a=b", check=False)
        if allowed.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert allowed.returncode == 0, allowed.stderr
    assert "configmap/x created" in allowed.stdout
    # The grant is namespaced: other namespaces stay forbidden.
    other = alice.run("-n", "default", "get", "cm", check=False)
    assert "Forbidden" in other.stderr


def test_bad_token_is_unauthorized(bad_token: Kubectl, stack):
    out = bad_token.run("get", "ns", check=False)
    assert out.returncode != 0
    # kubectl's own wording for any 401 during discovery (as against kube-apiserver).
    assert "You must be logged in to the server" in out.stderr
    # The body is kube-apiserver's Unauthorized Status.
    raw = bad_token.run("get", "--raw", "/api/v1/namespaces", check=False)
    assert "Unauthorized" in raw.stderr


def test_api_resources_lists_short_names(kubectl: Kubectl):
    out = kubectl.run("api-resources").stdout
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:]}
    assert rows["configmaps"][1] == "cm"
    assert rows["namespaces"][1] == "ns"
    assert rows["pods"][1] == "po"
    assert "roles" in rows and "clusterrolebindings" in rows
    assert rows["roles"][1] == "rbac.authorization.k8s.io/v1"


def test_status_body_for_unknown_resource(kubectl: Kubectl):
    out = kubectl.run("get", "--raw", "/api/v1/namespaces/default/nothings", check=False)
    assert out.returncode != 0
    assert "NotFound" in out.stderr or "could not find" in out.stderr


def test_kubectl_version_talks_to_server(kubectl: Kubectl):
    version = kubectl.run("version", "-o", "yaml").stdout
    assert yaml.safe_load(version)["serverVersion"]["minor"] == "37"
