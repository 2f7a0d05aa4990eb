"""autoscaling (v1 and v2), certificates.k8s.io, discovery.k8s.io, node.k8s.io and the storage.k8s.io CSI kinds,
driven with the pinned kubectl (which sends typed writes as protobuf)."""

from __future__ import annotations

import base64
import datetime
import json
import textwrap
import time
import uuid
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.e2e.conftest import Kubectl


def _get(kubectl: Kubectl, path: str) -> dict:
    return json.loads(kubectl.run("get", "--raw", path).stdout)


def test_hpa_from_kubectl_autoscale_reads_as_v1_and_v2(kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx")
    kubectl.run("-n", namespace, "autoscale", "deployment", "web", "--min=2", "--max=5", "--cpu=60%")
    table = kubectl.run("-n", namespace, "get", "hpa").stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["web", "Deployment/web", "cpu:", "<unknown>/60%", "2", "5", "0"]

    base = f"/apis/autoscaling/%s/namespaces/{namespace}/horizontalpodautoscalers/web"
    v1 = _get(kubectl, base % "v1")
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                          "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60}
    v2 = _get(kubectl, base % "v2")
    assert v2["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]

    # A v2-only metric and a behavior survive an update through v1 (carried in v1's annotations).
    kubectl.run("-n", namespace, "patch", "horizontalpodautoscalers.v2.autoscaling", "web", "--type=merge", "-p",
                json.dumps({"spec": {"metrics": [v2["spec"]["metrics"][0], {"type": "Resource", "resource": {
                    "name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}],
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}}))
    v1 = _get(kubectl, base % "v1")
    assert "autoscaling.alpha.kubernetes.io/metrics" in v1["metadata"]["annotations"]
    kubectl.run("-n", namespace, "patch", "horizontalpodautoscalers.v1.autoscaling", "web", "--type=merge", "-p",
                '{"spec": {"maxReplicas": 7}}')
    v2 = _get(kubectl, base % "v2")
    assert v2["spec"]["maxReplicas"] == 7 and "annotations" not in v2["metadata"]
    assert [m["resource"]["name"] for m in v2["spec"]["metrics"]] == ["memory", "cpu"]
    assert v2["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 60
    assert v2["spec"]["behavior"]["scaleUp"]["policies"][0] == {"type": "Pods", "value": 4, "periodSeconds": 15}

    bad = kubectl.run("-n", namespace, "patch", "hpa", "web", "--type=merge", "-p", '{"spec": {"minReplicas": 9}}',
                      check=False)
    assert bad.returncode != 0
    assert "spec.maxReplicas: Invalid value: 7: must be greater than or equal to `minReplicas`" in bad.stderr


def _csr_yaml(name: str, signer: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    request = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "alice")])).sign(key, hashes.SHA256())
    pem = request.public_bytes(serialization.Encoding.PEM)
    return textwrap.dedent(f"""\
        apiVersion: certificates.k8s.io/v1
        kind: CertificateSigningRequest
        metadata: {{name: {name}}}
        spec:
          request: {base64.b64encode(pem).decode()}
          signerName: {signer}
          usages: [digital signature, client auth]
          username: mallory
        """)


def _self_signed() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "alice")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(hours=1))
            .sign(key, hashes.SHA256()))
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()


def test_csr_needs_the_signer_permission_to_approve(kubectl: Kubectl, alice: Kubectl):
    suffix = uuid.uuid4().hex[:6]
    name, signer = f"alice-{suffix}", f"s{suffix}.example.com/signer"
    role, approver = f"csr-requester-{suffix}", f"csr-approver-{suffix}"
    kubectl.run("create", "clusterrole", role, "--verb=create,get,list",
                "--resource=certificatesigningrequests")
    kubectl.run("create", "clusterrole", f"{role}-approval", "--verb=update",
                "--resource=certificatesigningrequests/approval")
    for r in (role, f"{role}-approval"):
        kubectl.run("create", "clusterrolebinding", r, f"--clusterrole={r}", "--user=alice")
    try:
        deadline = time.monotonic() + 10
        while alice.run("auth", "can-i", "update", "certificatesigningrequests/approval",
                        check=False).returncode != 0 and time.monotonic() < deadline:
            time.sleep(0.2)
        alice.run("create", "-f", "-", input=_csr_yaml(name, signer))
        csr = json.loads(kubectl.run("get", "csr", name, "-o", "json").stdout)
        assert csr["spec"]["username"] == "alice" and csr["spec"]["uid"] == "uid-alice"
        assert "dev" in csr["spec"]["groups"] and csr["status"] == {}

        refused = alice.run("certificate", "approve", name, check=False)
        assert refused.returncode != 0
        assert f'user not permitted to approve requests with signerName "{signer}"' in refused.stderr

        kubectl.run("apply", "-f", "-", input=json.dumps({  # signers is no served resource: YAML, as kube's docs
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": approver},
            "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"], "verbs": ["approve"],
                       "resourceNames": [signer.split("/")[0] + "/*"]}]}))
        kubectl.run("create", "clusterrolebinding", approver, f"--clusterrole={approver}", "--user=alice")
        deadline = time.monotonic() + 10
        while (done := alice.run("certificate", "approve", name, check=False)).returncode != 0:
            assert time.monotonic() < deadline, done.stderr
            time.sleep(0.2)
        row = kubectl.run("get", "csr", name, "--no-headers").stdout.split()
        assert row[2:] == [signer, "alice", "<none>", "Approved"]

        # The signer (here the admin) issues through /status; the spec stays as created.
        kubectl.run("patch", "csr", name, "--subresource=status", "--type=merge", "-p",
                    json.dumps({"status": {"certificate": _self_signed()}}))
        assert kubectl.run("get", "csr", name, "--no-headers").stdout.split()[-1] == "Approved,Issued"
        kubectl.run("patch", "csr", name, "--type=merge", "-p", '{"spec": {"signerName": "x.io/y"}}')  # kept
        assert json.loads(kubectl.run("get", "csr", name, "-o", "json").stdout)["spec"]["signerName"] == signer
    finally:
        kubectl.run("delete", "csr", name, "--ignore-not-found")
        for r in (role, f"{role}-approval", approver):
            kubectl.run("delete", "clusterrolebinding", r, "--ignore-not-found")
            kubectl.run("delete", "clusterrole", r, "--ignore-not-found")


def _wait_csr(kubectl: Kubectl, name: str, want: str, timeout: float = 20.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        csr = json.loads(kubectl.run("get", "csr", name, "-o", "json").stdout)
        status = kubectl.run("get", "csr", name, "--no-headers").stdout.split()[-1]
        if status == want:
            return csr
        assert time.monotonic() < deadline, f"{name} is {status}, not {want}"
        time.sleep(0.2)


def test_approved_csr_is_issued_and_authenticates(kubectl: Kubectl, stack_dir: Path):
    # kube's "create a normal user" walkthrough: key + CSR, approve, the csrsigning loop issues, the user logs in.
    suffix = uuid.uuid4().hex[:6]
    name, user = f"jane-{suffix}", f"jane-{suffix}"
    key = ec.generate_private_key(ec.SECP256R1())
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name([
        x509.NameAttribute(x509.NameOID.COMMON_NAME, user), x509.NameAttribute(x509.NameOID.ORGANIZATION_NAME, "devs"),
    ])).sign(key, hashes.SHA256())
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": base64.b64encode(request.public_bytes(serialization.Encoding.PEM)).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client", "expirationSeconds": 86400,
                     "usages": ["client auth"]}}
    refused = {**body, "metadata": {"name": f"{name}-bad"},
               "spec": {**body["spec"], "usages": ["client auth", "server auth"]}}
    try:
        kubectl.run("apply", "-f", "-",
                    input=json.dumps({"apiVersion": "v1", "kind": "List", "items": [body, refused]}))
        assert kubectl.run("get", "csr", name, "--no-headers").stdout.split()[-1] == "Pending"
        kubectl.run("certificate", "approve", name, f"{name}-bad")
        csr = _wait_csr(kubectl, name, "Approved,Issued")
        cert = x509.load_pem_x509_certificate(base64.b64decode(csr["status"]["certificate"]))
        assert cert.subject.rfc4514_string() == f"O=devs,CN={user}"
        lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
        assert lifetime == datetime.timedelta(hours=24, minutes=5)  # expirationSeconds, backdated 5 minutes
        failed = _wait_csr(kubectl, f"{name}-bad", "Approved,Failed")
        (condition,) = [c for c in failed["status"]["conditions"] if c["type"] == "Failed"]
        assert condition["reason"] == "SignerValidationFailure"
        assert condition["message"] == "invalid usage for client certificate: server auth"

        # The issued certificate is a credential for the CSR's CN and organizations.
        config = yaml.safe_load(Path(kubectl.kubeconfig).read_text())
        config["users"] = [{"name": user, "user": {
            "client-certificate-data": csr["status"]["certificate"],
            "client-key-data": base64.b64encode(key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption())).decode()}}]
        for context in config["contexts"]:
            context["context"]["user"] = user
        path = stack_dir / f"{user}.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        whoami = json.loads(Kubectl(path).run("auth", "whoami", "-o", "json").stdout)
        assert whoami["status"]["userInfo"]["username"] == user
        assert set(whoami["status"]["userInfo"]["groups"]) == {"devs", "system:authenticated"}
    finally:
        kubectl.run("delete", "csr", name, f"{name}-bad", "--ignore-not-found")


def test_endpointslice_runtimeclass_and_csi_round_trips(kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: discovery.k8s.io/v1
        kind: EndpointSlice
        metadata: {name: web-abc, labels: {kubernetes.io/service-name: web}}
        addressType: IPv4
        endpoints:
        - addresses: [10.0.0.1]
          conditions: {ready: true}
        - addresses: [10.0.0.2]
        ports:
        - {name: http, port: 80}
        """))
    row = kubectl.run("-n", namespace, "get", "endpointslices", "web-abc", "--no-headers").stdout.split()
    assert row[:4] == ["web-abc", "IPv4", "80", "10.0.0.1,10.0.0.2"]
    stored = json.loads(kubectl.run("-n", namespace, "get", "endpointslice", "web-abc", "-o", "json").stdout)
    assert stored["ports"] == [{"name": "http", "port": 80, "protocol": "TCP"}]
    changed = kubectl.run("-n", namespace, "patch", "endpointslice", "web-abc", "--type=merge", "-p",
                          '{"addressType": "IPv6"}', check=False)
    assert 'addressType: Invalid value: "IPv6": field is immutable' in changed.stderr

    suffix = uuid.uuid4().hex[:6]
    kubectl.run("apply", "-f", "-", input=textwrap.dedent(f"""\
        apiVersion: node.k8s.io/v1
        kind: RuntimeClass
        metadata: {{name: gvisor-{suffix}}}
        handler: runsc
        ---
        apiVersion: storage.k8s.io/v1
        kind: CSIDriver
        metadata: {{name: csi-{suffix}.example.com}}
        spec: {{}}
        """))
    try:
        assert kubectl.run("get", "runtimeclass", f"gvisor-{suffix}", "--no-headers").stdout.split()[1] == "runsc"
        driver = kubectl.run("get", "csidriver", f"csi-{suffix}.example.com", "--no-headers").stdout.split()
        assert driver[1:4] == ["true", "false", "false"] and driver[-2] == "Persistent"
        bad = kubectl.run("apply", "-f", "-", check=False, input=textwrap.dedent(f"""\
            apiVersion: node.k8s.io/v1
            kind: RuntimeClass
            metadata: {{name: bad-{suffix}}}
            handler: Not_Valid
            """))
        assert "handler: Invalid value: \"Not_Valid\"" in bad.stderr
    finally:
        kubectl.run("delete", "runtimeclass", f"gvisor-{suffix}", "--ignore-not-found")
        kubectl.run("delete", "csidriver", f"csi-{suffix}.example.com", "--ignore-not-found")


def test_api_resources_lists_the_new_groups(kubectl: Kubectl):
    lines = kubectl.run("api-resources", "--no-headers").stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in lines}
    assert rows["horizontalpodautoscalers"][1:3] == ["hpa", "autoscaling/v2"]
    assert rows["certificatesigningrequests"][1:3] == ["csr", "certificates.k8s.io/v1"]
    for name, group_version in (("endpointslices", "discovery.k8s.io/v1"), ("runtimeclasses", "node.k8s.io/v1"),
                                ("csidrivers", "storage.k8s.io/v1"), ("csinodes", "storage.k8s.io/v1"),
                                ("volumeattachments", "storage.k8s.io/v1"),
                                ("csistoragecapacities", "storage.k8s.io/v1")):
        assert rows[name][1] == group_version
    versions = kubectl.run("api-versions").stdout.split()
    assert {"autoscaling/v1", "autoscaling/v2", "certificates.k8s.io/v1", "discovery.k8s.io/v1",
            "node.k8s.io/v1"} <= set(versions)
