"""Every write path runs the same guards: one table of (verb, content type, dry run) against three hooks.

The write path (services/gateway/registry/store.py) is the one way to
storage; its hooks (services/gateway/registry/hooks.py) are RBAC
escalation prevention, Service clusterIP/nodePort allocation and the CSR
signer check. Each row below writes through a different door — POST with
JSON and YAML, PUT, the three PATCH types, server-side apply creating and
updating, the ``approval`` and ``status`` subresources — with and without
``dryRun=All``, and asserts the guard's answer; every row runs through both
front doors, REST and the public gRPC API (kapi.api.v1, docs/grpc.md), whose
writes take the same path. A new door that forgets a hook fails here.
``test_store_is_the_only_writer`` checks the same from the code: no handler
reaches storage's write RPCs or admission directly.
"""

from __future__ import annotations

import ast
import base64
import http.client
import json
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, token_kubeconfig, wait_for

NS = "write-path-guards"
SA = "writer"
JSON, YAML = "application/json", "application/yaml"
MERGE, STRATEGIC, JSONPATCH = ("application/merge-patch+json", "application/strategic-merge-patch+json",
                               "application/json-patch+json")
APPLY = "application/apply-patch+yaml"
ESCALATION = "is attempting to grant RBAC permissions not currently held"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
_CSR_PEM: str | None = None  # a real CSR (PEM), made once: subject CN=write-path, O=guards


@dataclass
class Client:
    """Raw HTTPS through Envoy as one bearer-token identity (or the admin's client certificate)."""

    stack: Stack
    token: str = ""
    front: str = ""  # "" REST, "grpc" the gRPC API (names of the objects a row writes carry it)

    def request(self, method: str, path: str, body: Any = None, content_type: str = JSON) -> tuple[int, dict]:
        context = ssl.create_default_context(cafile=str(self.stack.pki.ca_cert))
        headers = {"Content-Type": content_type, "Accept": JSON}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        else:
            context.load_cert_chain(str(self.stack.pki.admin_cert), str(self.stack.pki.admin_key))
        if body is not None and not isinstance(body, (str, bytes)):
            body = yaml.safe_dump(body) if content_type in (YAML, APPLY) else json.dumps(body)
        url = urlparse(self.stack.url)
        conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=60)
        try:
            conn.request(method, path, body=body.encode() if isinstance(body, str) else body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            return response.status, json.loads(data) if data else {}
        finally:
            conn.close()


_GRPC_PATCH = {MERGE: "MERGE_PATCH", STRATEGIC: "STRATEGIC_MERGE_PATCH", JSONPATCH: "JSON_PATCH", APPLY: "APPLY_PATCH"}


@dataclass
class GrpcClient(Client):
    """The same requests over the public gRPC API through Envoy (a grpc.aio channel per request): the REST
    path and query become the call's ResourceRef and options; the answer is (HTTP code, object or Status)."""

    front: str = "grpc"

    def request(self, method: str, path: str, body: Any = None, content_type: str = JSON) -> tuple[int, dict]:
        import asyncio

        return asyncio.run(self._call(method, path, body, content_type))

    async def _call(self, method: str, path: str, body: Any, content_type: str) -> tuple[int, dict]:
        import grpc
        from grpc_status import rpc_status

        from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc

        url = urlparse(path)
        query = parse_qs(url.query)
        parts = url.path.strip("/").split("/")
        group, version, rest = ("", parts[1], parts[2:]) if parts[0] == "api" else (parts[1], parts[2], parts[3:])
        namespace = ""
        if rest[0] == "namespaces" and len(rest) > 2:
            namespace, rest = rest[1], rest[2:]
        ref = api_pb2.ResourceRef(group=group, version=version, resource=rest[0], namespace=namespace,
                                  name=rest[1] if len(rest) > 1 else "", subresource=rest[2] if len(rest) > 2 else "")
        options = api_pb2.WriteOptions(dry_run=query.get("dryRun", []),
                                       field_manager=query.get("fieldManager", [""])[0])
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        metadata = (("authorization", f"Bearer {self.token}"),)
        creds = grpc.ssl_channel_credentials(self.stack.pki.ca_cert.read_bytes())
        async with grpc.aio.secure_channel(self.stack.url.removeprefix("https://"), creds,
                                           options=[("grpc.ssl_target_name_override", "localhost")]) as channel:
            api = api_pb2_grpc.ResourcesStub(channel)
            try:
                if method == "GET" and ref.name:
                    reply = await api.Get(api_pb2.GetRequest(ref=ref), metadata=metadata)
                elif method == "GET":
                    reply = await api.List(api_pb2.ListRequest(ref=ref), metadata=metadata)
                elif method == "POST":
                    reply = await api.Create(api_pb2.CreateRequest(ref=ref, object=data, options=options),
                                             metadata=metadata)
                elif method == "PUT":
                    reply = await api.Update(api_pb2.UpdateRequest(ref=ref, object=data, options=options),
                                             metadata=metadata)
                elif method == "PATCH":
                    reply = await api.Patch(api_pb2.PatchRequest(
                        ref=ref, type=api_pb2.PatchType.Value(_GRPC_PATCH[content_type]), patch=data,
                        options=options, force=query.get("force") == ["true"]), metadata=metadata)
                else:
                    reply = await api.Delete(api_pb2.DeleteRequest(ref=ref), metadata=metadata)
            except grpc.aio.AioRpcError as err:
                detail = api_pb2.StatusDetail()
                rich = rpc_status.from_call(err)
                assert rich is not None and rich.details[0].Unpack(detail), err
                status = json.loads(detail.status)
                return int(status["code"]), status
        return reply.code, json.loads(reply.object)


def _csr_pem() -> str:
    global _CSR_PEM
    if _CSR_PEM is None:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        csr = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
            x509.NameAttribute(NameOID.COMMON_NAME, "write-path"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "guards")])).sign(key, hashes.SHA256())
        _CSR_PEM = csr.public_bytes(serialization.Encoding.PEM).decode()
    return _CSR_PEM


@pytest.fixture(scope="module")
def rest_writer(stack: Stack, kubectl: Kubectl) -> Iterator[Client]:
    """A service account that may write Roles, RoleBindings, ClusterRoleBindings, Services and CSRs (incl.
    ``approval`` and ``status``) but holds no rights on Secrets and may not approve or sign for any signer."""
    kubectl.run("create", "namespace", NS)
    kubectl.run("-n", NS, "create", "serviceaccount", SA)
    kubectl.run("-n", NS, "create", "role", "writer", "--verb=get,list,create,update,patch,delete",
                "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,services")
    kubectl.run("-n", NS, "create", "rolebinding", "writer", "--role=writer", f"--serviceaccount={NS}:{SA}")
    kubectl.run("create", "clusterrole", "write-path-writer", "--verb=get,list,create,update,patch",
                "--resource=clusterrolebindings.rbac.authorization.k8s.io,"
                "certificatesigningrequests.certificates.k8s.io,"
                "certificatesigningrequests.certificates.k8s.io/approval,"
                "certificatesigningrequests.certificates.k8s.io/status")
    kubectl.run("create", "clusterrolebinding", "write-path-writer", "--clusterrole=write-path-writer",
                f"--serviceaccount={NS}:{SA}")
    token = kubectl.run("-n", NS, "create", "token", SA).stdout.strip()
    client = Client(stack, token)
    wait_for(lambda: client.request("GET", f"{RBAC}/namespaces/{NS}/roles")[0] == 200)
    wait_for(lambda: client.request("GET", CSRS)[0] == 200)
    try:
        yield client
    finally:
        kubectl.run("delete", "clusterrolebinding", "write-path-writer", check=False)
        kubectl.run("delete", "clusterrole", "write-path-writer", check=False)
        kubectl.run("delete", "namespace", NS, "--wait=false", check=False)


@pytest.fixture(params=["REST", "gRPC"])
def writer(rest_writer: Client, request: pytest.FixtureRequest) -> Client:
    """The writer through one front door: REST, or the gRPC API (the same identity, the same write path)."""
    return rest_writer if request.param == "REST" else GrpcClient(rest_writer.stack, rest_writer.token)


def _front(writer: Client) -> str:
    return f"-{writer.front}" if writer.front else ""


def _role(name: str, rules: list[dict]) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": NS}, "rules": rules}


BENIGN = [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["get"]}]
SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}
ADMIN_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}


def _binding(kind: str, name: str) -> dict:
    meta = {"name": name, "namespace": NS} if kind == "RoleBinding" else {"name": name}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta, "roleRef": ADMIN_REF,
            "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": NS}]}


# (door, method, content type, whether the URL names the object)
CREATES = [
    ("POST json", "POST", JSON, False),
    ("POST yaml", "POST", YAML, False),
    ("apply create", "PATCH", APPLY, True),
]


def _dry(path: str, dry_run: bool) -> str:
    """``path`` with fieldManager=guard (apply needs one) and, for a dry run, dryRun=All."""
    return path + "?fieldManager=guard" + ("&dryRun=All" if dry_run else "")


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dryRun"])
@pytest.mark.parametrize(("door", "method", "content_type", "named"), CREATES, ids=[c[0] for c in CREATES])
@pytest.mark.parametrize("kind", ["Role", "RoleBinding", "ClusterRoleBinding"])
def test_escalating_create_is_refused(writer: Client, kubectl: Kubectl, kind: str, door: str, method: str,
                                      content_type: str, named: bool, dry_run: bool) -> None:
    name = f"esc-{kind.lower()}-{door.replace(' ', '-').lower()}-{'dry' if dry_run else 'real'}{_front(writer)}"
    body = _role(name, [SECRETS]) if kind == "Role" else _binding(kind, name)
    plural = kind.lower() + "s"
    collection = f"{RBAC}/clusterrolebindings" if kind == "ClusterRoleBinding" else \
        f"{RBAC}/namespaces/{NS}/{plural}"
    path = f"{collection}/{name}" if named else collection
    status, reply = writer.request(method, _dry(path, dry_run), body, content_type)
    assert status == 403, (door, reply)
    assert reply["reason"] == "Forbidden" and ESCALATION in reply["message"], reply
    scope = [] if kind == "ClusterRoleBinding" else ["-n", NS]
    assert kubectl.run("get", plural, name, *scope, check=False).returncode != 0  # nothing was stored


def _create(writer: Client, collection: str, name: str, body: dict, content_type: str) -> dict:
    """Create the object an update test starts from: by apply for the apply door (so the apply owns its fields
    and its update is no field-manager conflict), else by POST."""
    if content_type == APPLY:
        status, current = writer.request("PATCH", _dry(f"{collection}/{name}", False), body, APPLY)
    else:
        status, current = writer.request("POST", collection, body)
    assert status == 201, current
    return current


UPDATES = [
    ("PUT json", "PUT", JSON),
    ("PUT yaml", "PUT", YAML),
    ("PATCH merge", "PATCH", MERGE),
    ("PATCH strategic", "PATCH", STRATEGIC),
    ("PATCH json", "PATCH", JSONPATCH),
    ("apply update", "PATCH", APPLY),
]


def _update_body(content_type: str, current: dict, wanted: dict) -> Any:
    if content_type == JSONPATCH:
        return [{"op": "replace", "path": "/rules", "value": wanted["rules"]}]
    if content_type in (MERGE, STRATEGIC):
        return {"rules": wanted["rules"]}
    if content_type == APPLY:
        return wanted
    meta = current["metadata"]
    return {**wanted, "metadata": {"name": meta["name"], "namespace": NS, "resourceVersion": meta["resourceVersion"]}}


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dryRun"])
@pytest.mark.parametrize(("door", "method", "content_type"), UPDATES, ids=[u[0] for u in UPDATES])
def test_escalating_update_is_refused(writer: Client, door: str, method: str, content_type: str,
                                      dry_run: bool) -> None:
    name = f"widen-{door.replace(' ', '-').lower()}-{'dry' if dry_run else 'real'}{_front(writer)}"
    collection = f"{RBAC}/namespaces/{NS}/roles"
    current = _create(writer, collection, name, _role(name, BENIGN), content_type)
    wanted = _role(name, [*BENIGN, SECRETS])
    status, reply = writer.request(method, _dry(f"{collection}/{name}", dry_run),
                                   _update_body(content_type, current, wanted), content_type)
    assert status == 403, (door, reply)
    assert ESCALATION in reply["message"] and 'Resources:["secrets"]' in reply["message"], reply
    status, stored = writer.request("GET", f"{collection}/{name}")
    assert stored["rules"] == BENIGN  # unchanged
    # The same door passes a write that grants nothing new (the guard refuses escalation, not the door).
    relabel = {**wanted, "rules": BENIGN, "metadata": {**wanted["metadata"], "labels": {"door": "ok"}}}
    if content_type == JSONPATCH:
        ok_body: Any = [{"op": "add", "path": "/metadata/labels", "value": {"door": "ok"}}]
    elif content_type in (MERGE, STRATEGIC):
        ok_body = {"metadata": {"labels": {"door": "ok"}}}
    elif content_type == APPLY:
        ok_body = relabel
    else:
        ok_body = {**relabel, "metadata": {**relabel["metadata"],
                                           "resourceVersion": stored["metadata"]["resourceVersion"]}}
    status, reply = writer.request(method, _dry(f"{collection}/{name}", dry_run), ok_body, content_type)
    assert status == 200, (door, reply)


SERVICE_DOORS = [
    ("POST json", "POST", JSON, False),
    ("POST yaml", "POST", YAML, False),
    ("apply create", "PATCH", APPLY, True),
]


def _service(name: str, type_: str = "NodePort") -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
            "spec": {"type": type_, "selector": {"app": name}, "ports": [{"port": 80, "protocol": "TCP"}]}}


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dryRun"])
@pytest.mark.parametrize(("door", "method", "content_type", "named"), SERVICE_DOORS,
                         ids=[d[0] for d in SERVICE_DOORS])
def test_created_service_gets_cluster_ip_and_node_port(writer: Client, door: str, method: str, content_type: str,
                                                        named: bool, dry_run: bool) -> None:
    name = f"svc-{door.replace(' ', '-').lower()}-{'dry' if dry_run else 'real'}{_front(writer)}"
    path = f"/api/v1/namespaces/{NS}/services" + (f"/{name}" if named else "")
    status, reply = writer.request(method, _dry(path, dry_run), _service(name), content_type)
    assert status == 201, (door, reply)
    spec = reply["spec"]
    assert spec["clusterIP"].startswith("10.") and spec["clusterIPs"] == [spec["clusterIP"]], spec
    assert 30000 <= spec["ports"][0]["nodePort"] <= 32767, spec
    stored = writer.request("GET", f"/api/v1/namespaces/{NS}/services/{name}")
    assert stored[0] == (404 if dry_run else 200)
    if not dry_run:
        assert stored[1]["spec"]["clusterIP"] == spec["clusterIP"]


SERVICE_UPDATES = [
    ("PUT json", "PUT", JSON),
    ("PATCH merge", "PATCH", MERGE),
    ("PATCH strategic", "PATCH", STRATEGIC),
    ("PATCH json", "PATCH", JSONPATCH),
    ("apply update", "PATCH", APPLY),
]


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dryRun"])
@pytest.mark.parametrize(("door", "method", "content_type"), SERVICE_UPDATES, ids=[u[0] for u in SERVICE_UPDATES])
def test_service_type_change_allocates_node_port(writer: Client, door: str, method: str, content_type: str,
                                                 dry_run: bool) -> None:
    name = f"svcu-{door.replace(' ', '-').lower()}-{'dry' if dry_run else 'real'}{_front(writer)}"
    path = f"/api/v1/namespaces/{NS}/services/{name}"
    current = _create(writer, f"/api/v1/namespaces/{NS}/services", name, _service(name, "ClusterIP"), content_type)
    ip = current["spec"]["clusterIP"]
    if content_type == JSONPATCH:
        body: Any = [{"op": "replace", "path": "/spec/type", "value": "NodePort"}]
    elif content_type in (MERGE, STRATEGIC):
        body = {"spec": {"type": "NodePort"}}
    elif content_type == APPLY:
        body = _service(name)
    else:
        body = {**current, "spec": {**current["spec"], "type": "NodePort"}}
    status, reply = writer.request(method, _dry(path, dry_run), body, content_type)
    assert status == 200, (door, reply)
    assert reply["spec"]["clusterIP"] == ip
    assert 30000 <= reply["spec"]["ports"][0]["nodePort"] <= 32767, reply["spec"]
    stored = writer.request("GET", path)[1]
    assert ("nodePort" in stored["spec"]["ports"][0]) is (not dry_run)


APPROVAL_DOORS = [
    ("PUT approval", "PUT", JSON, "approval"),
    ("PATCH merge approval", "PATCH", MERGE, "approval"),
    ("PATCH strategic approval", "PATCH", STRATEGIC, "approval"),
    ("PATCH json approval", "PATCH", JSONPATCH, "approval"),
    ("PUT status certificate", "PUT", JSON, "status"),
    ("PATCH merge status certificate", "PATCH", MERGE, "status"),
    ("apply status certificate", "PATCH", APPLY, "status"),
]


@pytest.fixture(scope="module")
def csr(rest_writer: Client) -> str:
    name = "write-path-guard"
    status, reply = rest_writer.request("POST", CSRS, {
        "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
        "spec": {"request": base64.b64encode(_csr_pem().encode()).decode(),
                 "signerName": "example.com/guard", "usages": ["client auth"]}})
    assert status == 201, reply
    return name


def _certificate_pem() -> bytes:
    """A self-signed certificate (the signer check looks at the change, not at who issued it)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "write-path")])
    now = datetime.datetime.now(datetime.UTC)
    cert = x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key()).serial_number(
        x509.random_serial_number()).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1)).sign(
        key, hashes.SHA256())
    return cert.public_bytes(serialization.Encoding.PEM)


def _approval_body(content_type: str, current: dict, subresource: str) -> Any:
    if subresource == "status":
        status = {"certificate": base64.b64encode(_certificate_pem()).decode()}
        if content_type == APPLY:
            return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
                    "metadata": {"name": current["metadata"]["name"]}, "status": status}
        return {**current, "status": status} if content_type == JSON else {"status": status}
    condition = {"type": "Approved", "status": "True", "reason": "Guard", "message": "approved by the test"}
    if content_type == JSONPATCH:
        return [{"op": "add", "path": "/status", "value": {"conditions": [condition]}}]
    if content_type in (MERGE, STRATEGIC):
        return {"status": {"conditions": [condition]}}
    return {**current, "status": {"conditions": [condition]}}


@pytest.mark.parametrize("dry_run", [False, True], ids=["write", "dryRun"])
@pytest.mark.parametrize(("door", "method", "content_type", "subresource"), APPROVAL_DOORS,
                         ids=[d[0] for d in APPROVAL_DOORS])
def test_csr_approval_and_signing_need_the_signer_permission(writer: Client, csr: str, door: str, method: str,
                                                             content_type: str, subresource: str,
                                                             dry_run: bool) -> None:
    status, current = writer.request("GET", f"{CSRS}/{csr}")
    assert status == 200
    status, reply = writer.request(method, _dry(f"{CSRS}/{csr}/{subresource}", dry_run),
                                   _approval_body(content_type, current, subresource), content_type)
    assert status == 403, (door, reply)
    verb = "approve" if subresource == "approval" else "sign"
    assert reply["message"] == (f'certificatesigningrequests.certificates.k8s.io "{csr}" is forbidden: user not '
                                f'permitted to {verb} requests with signerName "example.com/guard"'), reply
    assert not (writer.request("GET", f"{CSRS}/{csr}")[1].get("status") or {}).get("conditions")


# --- the code: no door but the store -------------------------------------------------------------------------

GATEWAY = Path(__file__).resolve().parents[2] / "services" / "gateway"
# Writers outside the request path: range allocations, graceful-deletion marks, bootstrap objects, the CRD and
# APIService status controllers, and the extension-apiserver-authentication publisher.
SYSTEM_WRITERS = {"registry/store.py", "registry/ipallocator.py", "registry/deletion.py", "server.py",
                  "dynamic.py", "aggregation.py", "authtrust.py"}
STORAGE_WRITES = {"Create", "Update", "Delete"}


def _writes(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in STORAGE_WRITES and isinstance(node.value, ast.Attribute) \
                and node.value.attr in ("storage", "_storage"):
            found.append(f"storage.{node.attr}")
        if isinstance(node, ast.Attribute) and node.attr == "admit" and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "admission":
            found.append("admission.admit")
    return found


def test_store_is_the_only_writer() -> None:
    offenders = {}
    for path in sorted(GATEWAY.rglob("*.py")):
        rel = path.relative_to(GATEWAY).as_posix()
        if rel in SYSTEM_WRITERS or rel in ("conversion.py", "crddefaults.py"):  # storage wrappers, not writers
            continue
        writes = _writes(ast.parse(path.read_text()))
        if writes:
            offenders[rel] = writes
    assert offenders == {}, f"write storage only through services/gateway/registry/store.py: {offenders}"
    # and the request-path writers among the system ones admit nothing themselves
    for rel in SYSTEM_WRITERS - {"registry/store.py"}:
        assert "admission.admit" not in _writes(ast.parse((GATEWAY / rel).read_text())), rel


def test_the_guard_scan_sees_a_direct_write() -> None:
    """The scan above can fail: a handler that calls storage itself is found."""
    tree = ast.parse("async def h(scope):\n    await scope.backends.storage.Create(req)\n"
                     "    await scope.backends.admission.admit('CREATE')\n")
    assert _writes(tree) == ["storage.Create", "admission.admit"]


# --- the reported reproduction, with real kubectl ----------------------------------------------------------

def test_server_side_apply_cannot_escalate(stack: Stack, kubectl: Kubectl, tmp_path: Path) -> None:
    """Issue 15's reproduction: a service account that may write Roles, RoleBindings and ClusterRoleBindings but
    holds no rights on Secrets is refused the escalating Role and the cluster-admin bindings by every kubectl
    door (create, client-side apply, server-side apply, server dry runs), and reads no Secret afterwards."""
    ns = "esc-test"
    kubectl.run("create", "namespace", ns)
    try:
        kubectl.run("-n", ns, "create", "serviceaccount", "escalator")
        kubectl.run("-n", ns, "create", "role", "rbac-writer", "--verb=get,list,create,patch,update",
                    "--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io")
        kubectl.run("-n", ns, "create", "rolebinding", "rbac-writer", "--role=rbac-writer",
                    f"--serviceaccount={ns}:escalator")
        kubectl.run("create", "clusterrole", "esc-test-crb-writer", "--verb=get,create,patch",
                    "--resource=clusterrolebindings.rbac.authorization.k8s.io")
        kubectl.run("create", "clusterrolebinding", "esc-test-crb-writer", "--clusterrole=esc-test-crb-writer",
                    f"--serviceaccount={ns}:escalator")
        kubectl.run("-n", ns, "create", "secret", "generic", "crown-jewels", "--from-literal=k=v")
        token = kubectl.run("-n", ns, "create", "token", "escalator").stdout.strip()
        sa = Kubectl(token_kubeconfig(stack, "escalator", token, tmp_path / "escalator.kubeconfig"))
        wait_for(lambda: sa.run("-n", ns, "get", "roles", check=False).returncode == 0)
        role = tmp_path / "role.yaml"
        role.write_text(yaml.safe_dump(_role("secret-admin", [SECRETS]) | {"metadata": {"name": "secret-admin",
                                                                                         "namespace": ns}}))
        binding = tmp_path / "rolebinding.yaml"
        binding.write_text(yaml.safe_dump({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "secret-admin", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "escalator", "namespace": ns}]}))
        crb = tmp_path / "crb.yaml"
        crb.write_text(yaml.safe_dump({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "esc-test-root"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "escalator", "namespace": ns}]}))
        for manifest in (role, binding, crb):
            for door in (["create", "-f", str(manifest)], ["apply", "-f", str(manifest)],
                         ["apply", "--server-side", "-f", str(manifest)],
                         ["apply", "--server-side", "--dry-run=server", "-f", str(manifest)],
                         ["create", "--dry-run=server", "-f", str(manifest)]):
                refused = sa.run(*door, check=False)
                assert refused.returncode != 0, (door, refused.stdout)
                assert ESCALATION in refused.stderr, (door, refused.stderr)
        assert kubectl.run("-n", ns, "get", "role,rolebinding", "secret-admin", check=False).returncode != 0
        assert kubectl.run("get", "clusterrolebinding", "esc-test-root", check=False).returncode != 0
        denied = sa.run("-n", ns, "get", "secrets", check=False)
        assert denied.returncode != 0 and "Forbidden" in denied.stderr
        # What the account holds it may still grant, through the same doors.
        ok = tmp_path / "ok.yaml"
        ok.write_text(yaml.safe_dump({**_role("role-reader", BENIGN), "metadata": {"name": "role-reader",
                                                                                   "namespace": ns}}))
        assert "serverside-applied" in sa.run("apply", "--server-side", "-f", str(ok)).stdout
        # A Service applied server-side gets its clusterIP and nodePort like one created with POST.
        svc = tmp_path / "svc.yaml"
        svc.write_text(yaml.safe_dump({**_service("applied"), "metadata": {"name": "applied", "namespace": ns}}))
        kubectl.run("apply", "--server-side", "-f", str(svc))
        spec = json.loads(kubectl.run("-n", ns, "get", "service", "applied", "-o", "json").stdout)["spec"]
        assert spec["clusterIP"].startswith("10.") and spec["ports"][0]["nodePort"] >= 30000
    finally:
        kubectl.run("delete", "clusterrolebinding", "esc-test-crb-writer", "esc-test-root", "--ignore-not-found")
        kubectl.run("delete", "clusterrole", "esc-test-crb-writer", "--ignore-not-found")
        kubectl.run("delete", "namespace", ns, "--wait=false")


def test_server_side_apply_of_pod_status(kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    """kubectl apply --server-side --subresource=status: the status is applied to the existing Pod (its spec
    untouched), recorded under a managedFields entry for the status subresource; absent objects are 404."""
    kubectl.run("-n", namespace, "run", "web", "--image=nginx")
    status = tmp_path / "pod-status.yaml"
    status.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
                                      "spec": {"containers": [{"name": "web", "image": "ignored"}]},
                                      "status": {"phase": "Running", "podIP": "10.0.0.7"}}))
    out = kubectl.run("-n", namespace, "apply", "--server-side", "--subresource=status", "-f", str(status))
    assert "serverside-applied" in out.stdout
    pod = json.loads(kubectl.run("-n", namespace, "get", "pod", "web", "-o", "json", "--show-managed-fields").stdout)
    assert pod["status"]["phase"] == "Running" and pod["status"]["podIP"] == "10.0.0.7"
    assert pod["spec"]["containers"][0]["image"] == "nginx"  # a status write never changes the spec
    entries = [e for e in pod["metadata"]["managedFields"] if e.get("subresource") == "status"]
    assert entries and entries[0]["operation"] == "Apply" and entries[0]["manager"] == "kubectl"
    missing = kubectl.run("-n", namespace, "apply", "--server-side", "--subresource=status", "-f", "-",
                          input=yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "nobody"},
                                                "status": {"phase": "Running"}}), check=False)
    assert missing.returncode != 0 and "not found" in missing.stderr.lower(), missing.stderr



def test_relabelling_a_clusterrole_into_an_aggregate_is_checked(stack: Stack, kubectl: Kubectl,
                                                               tmp_path: Path) -> None:
    """A break-it finding: a label is enough to aggregate a ClusterRole into view/edit/admin, so a user who may
    patch ClusterRoles but holds no rights on Secrets is refused relabelling one that grants Secrets (kube checks
    every update but the garbage collector's fields), and view gains nothing."""
    ns = "relabel-test"
    kubectl.run("create", "namespace", ns)
    try:
        kubectl.run("create", "clusterrole", "relabel-secrets", "--verb=get,list", "--resource=secrets")
        kubectl.run("-n", ns, "create", "serviceaccount", "labeller")
        kubectl.run("create", "clusterrole", "relabel-writer", "--verb=get,list,patch,update",
                    "--resource=clusterroles.rbac.authorization.k8s.io")
        kubectl.run("create", "clusterrolebinding", "relabel-writer", "--clusterrole=relabel-writer",
                    f"--serviceaccount={ns}:labeller")
        kubectl.run("-n", ns, "create", "rolebinding", "labeller-view", "--clusterrole=view",
                    f"--serviceaccount={ns}:labeller")
        kubectl.run("-n", ns, "create", "secret", "generic", "s", "--from-literal=k=v")
        token = kubectl.run("-n", ns, "create", "token", "labeller").stdout.strip()
        sa = Kubectl(token_kubeconfig(stack, "labeller", token, tmp_path / "labeller.kubeconfig"))
        wait_for(lambda: sa.run("get", "clusterrole", "relabel-secrets", check=False).returncode == 0)
        for door in (["label", "clusterrole", "relabel-secrets", "rbac.authorization.k8s.io/aggregate-to-view=true"],
                     ["annotate", "clusterrole", "relabel-secrets", "x=y"],
                     ["label", "--dry-run=server", "clusterrole", "cluster-admin",
                      "rbac.authorization.k8s.io/aggregate-to-view=true"]):
            refused = sa.run(*door, check=False)
            assert refused.returncode != 0 and ESCALATION in refused.stderr, (door, refused.stderr)
        labels = json.loads(kubectl.run("get", "clusterrole", "relabel-secrets", "-o", "json").stdout)["metadata"]
        assert "rbac.authorization.k8s.io/aggregate-to-view" not in (labels.get("labels") or {})
        assert sa.run("-n", ns, "get", "secret", "s", check=False).returncode != 0
    finally:
        kubectl.run("delete", "clusterrolebinding", "relabel-writer", "--ignore-not-found")
        kubectl.run("delete", "clusterrole", "relabel-writer", "relabel-secrets", "--ignore-not-found")
        kubectl.run("delete", "namespace", ns, "--wait=false")


def test_server_side_apply_that_creates_needs_create(stack: Stack, kubectl: Kubectl, tmp_path: Path) -> None:
    """kube's patch handler authorizes the create an apply falls back to as verb ``create``
    (handlers/patch.go applyPatch, withAuthorization): a user who may patch but not create ConfigMaps
    is refused the create (also as a dry run) and may still apply to an existing one."""
    ns = "apply-create-test"
    kubectl.run("create", "namespace", ns)
    try:
        kubectl.run("-n", ns, "create", "serviceaccount", "patcher")
        kubectl.run("-n", ns, "create", "role", "patcher", "--verb=get,list,patch", "--resource=configmaps")
        kubectl.run("-n", ns, "create", "rolebinding", "patcher", "--role=patcher", f"--serviceaccount={ns}:patcher")
        token = kubectl.run("-n", ns, "create", "token", "patcher").stdout.strip()
        sa = Kubectl(token_kubeconfig(stack, "patcher", token, tmp_path / "patcher.kubeconfig"))
        wait_for(lambda: sa.run("-n", ns, "get", "configmaps", check=False).returncode == 0)
        manifest = tmp_path / "cm.yaml"
        manifest.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                                            "metadata": {"name": "new", "namespace": ns}, "data": {"k": "v"}}))
        user = f"system:serviceaccount:{ns}:patcher"
        for extra in ([], ["--dry-run=server"]):
            refused = sa.run("apply", "--server-side", *extra, "-f", str(manifest), check=False)
            assert refused.returncode != 0
            assert (f'configmaps "new" is forbidden: User "{user}" cannot create resource "configmaps" in API '
                    f'group "" in the namespace "{ns}"') in refused.stderr, refused.stderr
        assert kubectl.run("-n", ns, "get", "configmap", "new", check=False).returncode != 0
        kubectl.run("-n", ns, "create", "configmap", "new", "--from-literal=k=old")
        assert "serverside-applied" in sa.run("apply", "--server-side", "--force-conflicts", "-f",
                                              str(manifest)).stdout
        assert kubectl.run("-n", ns, "get", "configmap", "new", "-o", "jsonpath={.data.k}").stdout == "v"
    finally:
        kubectl.run("delete", "namespace", ns, "--wait=false")


def test_server_side_apply_checks_the_object_type_and_a_uid_as_kube(stack: Stack, namespace: str) -> None:
    """kube's versionCheckManager refuses an apply body of another GroupVersionKind (400 ``invalid object type:
    <group>/<version>, Kind=<kind>``, nothing defaulted from the URL), and patcher.applyPatch refuses to create an
    object the configuration gives a uid (409 ``uid mismatch: ...``)."""
    admin = Client(stack)
    path = f"/api/v1/namespaces/{namespace}/configmaps/typed?fieldManager=t"
    for body, message in [
            ({"metadata": {"name": "typed"}}, "invalid object type: /, Kind="),
            ({"kind": "ConfigMap", "metadata": {"name": "typed"}}, "invalid object type: /, Kind=ConfigMap"),
            ({"apiVersion": "v1", "kind": "Secret"}, "invalid object type: /v1, Kind=Secret"),
            ({"apiVersion": "apps/v1", "kind": "ConfigMap"}, "invalid object type: apps/v1, Kind=ConfigMap")]:
        code, status = admin.request("PATCH", path, body, APPLY)
        assert (code, status["reason"], status["message"]) == (400, "BadRequest", message), status
    code, status = admin.request("PATCH", path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "typed", "uid": "6f1b3c1e-0000-4000-8000-000000000001"}, "data": {"k": "v"}}, APPLY)
    assert (code, status["reason"]) == (409, "Conflict"), status
    assert status["message"] == ('Operation cannot be fulfilled on configmaps "typed": uid mismatch: the provided '
                                 'object specified uid 6f1b3c1e-0000-4000-8000-000000000001, and no existing object '
                                 'was found')
    assert status["details"] == {"name": "typed", "kind": "configmaps"}
    assert admin.request("GET", path.split("?")[0])[0] == 404


def test_a_no_op_write_changes_nothing(stack: Stack, namespace: str) -> None:
    """The same manager applying the same configuration again (and a PUT or merge patch that changes nothing)
    writes nothing: same resourceVersion, same managedFields times, no watch event (kube's GuaranteedUpdate skips
    an unchanged object; its field manager keeps the times when nothing changed)."""
    admin = Client(stack)
    path = f"/api/v1/namespaces/{namespace}/configmaps/same"
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "same"}, "data": {"k": "v"}}
    code, first = admin.request("PATCH", path + "?fieldManager=t", config, APPLY)
    assert code == 201, first
    rv = first["metadata"]["resourceVersion"]
    time.sleep(1.1)  # a rewritten time would differ by at least a second
    code, again = admin.request("PATCH", path + "?fieldManager=t", config, APPLY)
    assert code == 200, again
    assert again["metadata"]["resourceVersion"] == rv
    assert again["metadata"]["managedFields"] == first["metadata"]["managedFields"]
    code, put = admin.request("PUT", path, again)
    assert (code, put["metadata"]["resourceVersion"]) == (200, rv), put
    code, merged = admin.request("PATCH", path, {"data": {"k": "v"}}, MERGE)
    assert (code, merged["metadata"]["resourceVersion"]) == (200, rv), merged
    assert merged["metadata"]["managedFields"] == first["metadata"]["managedFields"]
    code, events = admin.request("GET", f"/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion={rv}"
                                 "&fieldSelector=metadata.name%3Dsame&timeoutSeconds=2")
    assert (code, events) == (200, {}), events


def test_a_status_apply_checks_the_object_type_once_the_object_is_found(stack: Stack, namespace: str) -> None:
    """On ``/status`` kube's store answers 404 for a missing object before the patcher's type check runs; an
    existing object gets the check's 400."""
    admin = Client(stack)
    deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    wrong = {"apiVersion": "v1", "kind": "Deployment"}
    code, status = admin.request("PATCH", f"{deployments}/nope/status?fieldManager=t", wrong, APPLY)
    assert (code, status["message"]) == (404, 'deployments.apps "nope" not found'), status
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}},
                       "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    assert admin.request("PATCH", f"{deployments}/d?fieldManager=t", config, APPLY)[0] == 201
    code, status = admin.request("PATCH", f"{deployments}/d/status?fieldManager=t", wrong, APPLY)
    assert (code, status["message"]) == (400, "invalid object type: /v1, Kind=Deployment"), status
