"""csrsigning: the signers' checks, the validity, the issued certificate, and what sync writes."""

from __future__ import annotations

import argparse
import base64
import datetime
import ipaddress
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from services.controllers.context import Context
from services.controllers.loops import csrsigning

NOW = datetime.datetime(2026, 6, 1, tzinfo=datetime.UTC)
KEY = ec.generate_private_key(ec.SECP256R1())


def _ca() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(NOW - datetime.timedelta(days=1))
            .not_valid_after(NOW + datetime.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


CA_CERT, CA_KEY = _ca()


def request(cn: str = "alice", orgs: tuple[str, ...] = (), dns: tuple[str, ...] = (), ips: tuple[str, ...] = (),
            emails: tuple[str, ...] = ()) -> x509.CertificateSigningRequest:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)] + [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o)
                                                             for o in orgs]
    builder = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(attrs))
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns] + [
        x509.IPAddress(ipaddress.ip_address(i)) for i in ips] + [x509.RFC822Name(e) for e in emails]
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(KEY, hashes.SHA256())


CLIENT = csrsigning.KUBE_APISERVER_CLIENT
KUBELET = csrsigning.KUBE_APISERVER_CLIENT_KUBELET
SERVING = csrsigning.KUBELET_SERVING
NODE = {"cn": "system:node:n1", "orgs": ("system:nodes",)}


@pytest.mark.parametrize(("signer", "req", "usages", "refusal"), [
    (CLIENT, {}, ["client auth"], None),
    (CLIENT, {}, ["digital signature", "key encipherment", "client auth"], None),
    (CLIENT, {}, ["server auth", "client auth"], "invalid usage for client certificate: server auth"),
    (CLIENT, {}, ["digital signature"], "missing required usage for client certificate: client auth"),
    (KUBELET, NODE, ["digital signature", "client auth"], None),
    (KUBELET, NODE, ["digital signature", "key encipherment", "client auth"], None),
    (KUBELET, {"cn": "system:node:n1"}, ["digital signature", "client auth"],
     "subject organization is not system:nodes"),
    (KUBELET, {**NODE, "dns": ("n1",)}, ["digital signature", "client auth"], "DNS subjectAltNames are not allowed"),
    (KUBELET, {"cn": "bob", "orgs": ("system:nodes",)}, ["digital signature", "client auth"],
     "subject common name does not begin with system:node:"),
    (KUBELET, NODE, ["client auth"], "usages did not match [client auth digital signature key encipherment]"),
    (SERVING, {**NODE, "dns": ("n1",)}, ["digital signature", "server auth"], None),
    (SERVING, {**NODE, "ips": ("10.0.0.1",)}, ["digital signature", "key encipherment", "server auth"], None),
    (SERVING, NODE, ["digital signature", "server auth"], "DNS or IP subjectAltName is required"),
    (SERVING, {**NODE, "dns": ("n1",), "emails": ("a@b.c",)}, ["digital signature", "server auth"],
     "Email subjectAltNames are not allowed"),
    (SERVING, {**NODE, "dns": ("n1",)}, ["client auth"],
     "usages did not match [digital signature key encipherment server auth]"),
    (csrsigning.LEGACY_UNKNOWN, {}, ["server auth", "code signing"], None),
])
def test_signer_checks(signer: str, req: dict[str, Any], usages: list[str], refusal: str | None) -> None:
    if refusal is None:
        csrsigning.check(signer, request(**req), usages)
    else:
        with pytest.raises(csrsigning.SignerRefused, match=None) as info:
            csrsigning.check(signer, request(**req), usages)
        assert str(info.value) == refusal


@pytest.mark.parametrize(("expiration", "expected"), [
    (None, 3600.0 * 8760), (86400, 86400.0), (60, 600.0), (10 ** 9, 3600.0 * 8760), (True, 3600.0 * 8760)])
def test_duration(expiration: Any, expected: float) -> None:
    assert csrsigning.duration(3600.0 * 8760, expiration) == expected


def test_issued_certificate() -> None:
    authority = csrsigning.Authority(CA_CERT, CA_KEY)
    pem = authority.sign(request("alice", ("dev",), dns=("a.example",)),
                         ["digital signature", "key encipherment", "client auth"], 3600.0, NOW)
    cert = x509.load_pem_x509_certificate(pem)
    assert cert.subject.rfc4514_string() == "O=dev,CN=alice"
    assert cert.issuer == authority.cert.subject
    cert.verify_directly_issued_by(authority.cert)
    assert cert.public_key() == KEY.public_key()
    assert cert.not_valid_before_utc == NOW - datetime.timedelta(minutes=5)
    assert cert.not_valid_after_utc == NOW + datetime.timedelta(hours=1)
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.digital_signature and usage.key_encipherment and not usage.key_cert_sign
    assert list(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value) == [
        ExtendedKeyUsageOID.CLIENT_AUTH]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == ["a.example"]


def test_validity_is_capped_by_the_ca() -> None:
    authority = csrsigning.Authority(CA_CERT, CA_KEY)
    cert = x509.load_pem_x509_certificate(authority.sign(request(), ["client auth"], 3600.0 * 8760, NOW))
    assert cert.not_valid_after_utc == authority.cert.not_valid_after_utc
    assert cert.not_valid_before_utc == NOW - datetime.timedelta(minutes=5)
    with pytest.raises(ValueError, match="unrecognized usage: flying"):
        authority.sign(request(), ["flying"], 3600.0, NOW)


def _csr(signer: str = CLIENT, usages: tuple[str, ...] = ("client auth",), conditions: tuple[str, ...] = ("Approved",),
         certificate: str = "", **req: Any) -> dict[str, Any]:
    pem = request(**req).public_bytes(serialization.Encoding.PEM)
    status: dict[str, Any] = {"conditions": [{"type": c, "status": "True"} for c in conditions]}
    if certificate:
        status["certificate"] = certificate
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "c1", "resourceVersion": "7"},
            "spec": {"request": base64.b64encode(pem).decode(), "signerName": signer, "usages": list(usages),
                     "expirationSeconds": 1200},
            "status": status}


@pytest.mark.parametrize(("csr", "wanted"), [
    (_csr(), True),
    (_csr(conditions=()), False),
    (_csr(conditions=("Denied",)), False),
    (_csr(conditions=("Approved", "Failed")), False),
    (_csr(certificate="eA=="), False),
    (_csr(signer="example.com/mine"), False),
    (_csr(signer=SERVING), True),
])
def test_wants_signing(csr: dict[str, Any], wanted: bool) -> None:
    assert csrsigning.wants_signing(csr) is wanted


class FakeClient:
    def __init__(self) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []

    async def update(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.updates.append((path, obj))
        return obj


class Store:
    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj

    def get(self, key: str) -> dict[str, Any] | None:
        return self.obj if key == self.obj["metadata"]["name"] else None


def _controller(tmp_path: Any, csr: dict[str, Any], signing: bool = True
                ) -> tuple[csrsigning.CSRSigningController, FakeClient]:
    (tmp_path / "ca.crt").write_bytes(CA_CERT)
    (tmp_path / "ca.key").write_bytes(CA_KEY)
    args = argparse.Namespace(cluster_signing_cert_file=str(tmp_path / "ca.crt") if signing else "",
                              cluster_signing_key_file=str(tmp_path / "ca.key"),
                              cluster_signing_duration=3600.0 * 8760)
    client = FakeClient()
    ctx = Context(client=client, args=args)  # type: ignore[arg-type]
    controller = csrsigning.CSRSigningController(ctx, clock=lambda: NOW)
    controller.csrs = Store(csr)  # type: ignore[assignment]
    return controller, client


async def test_sync_issues_through_the_status_subresource(tmp_path: Any) -> None:
    controller, client = _controller(tmp_path, _csr())
    await controller.sync("c1")
    ((path, body),) = client.updates
    assert path == "/apis/certificates.k8s.io/v1/certificatesigningrequests/c1/status"
    assert body["metadata"]["resourceVersion"] == "7"  # optimistic concurrency on the copy read
    cert = x509.load_pem_x509_certificate(base64.b64decode(body["status"]["certificate"]))
    assert cert.subject.rfc4514_string() == "CN=alice"
    assert cert.not_valid_after_utc - NOW == datetime.timedelta(seconds=1200)  # spec.expirationSeconds
    assert body["status"]["conditions"] == [{"type": "Approved", "status": "True"}]


async def test_sync_marks_a_refused_request_failed(tmp_path: Any) -> None:
    controller, client = _controller(tmp_path, _csr(usages=("server auth",)))
    await controller.sync("c1")
    ((_, body),) = client.updates
    assert "certificate" not in body["status"]
    failed = body["status"]["conditions"][-1]
    assert failed == {"type": "Failed", "status": "True", "reason": "SignerValidationFailure",
                      "message": "invalid usage for client certificate: server auth",
                      "lastUpdateTime": "2026-06-01T00:00:00Z"}


@pytest.mark.parametrize("csr", [_csr(conditions=()), _csr(signer="example.com/mine"), _csr(certificate="eA==")])
async def test_sync_leaves_other_requests_alone(tmp_path: Any, csr: dict[str, Any]) -> None:
    controller, client = _controller(tmp_path, csr)
    await controller.sync("c1")
    assert client.updates == []


async def test_without_a_signing_ca_nothing_is_signed(tmp_path: Any) -> None:
    controller, client = _controller(tmp_path, _csr(), signing=False)
    await controller.sync("c1")
    assert controller.authority is None and client.updates == []
