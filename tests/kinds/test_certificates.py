"""CertificateSigningRequest strategy and validation (kapi.kinds.certificates, kapi.certificates)."""

from __future__ import annotations

import base64
import datetime
import functools
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kapi import certificates as shared
from kapi.attributes import UserInfo
from kapi.kinds import certificates

NOW = "2026-01-02T03:04:05Z"


@functools.cache
def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def csr_pem(cn: str = "alice", orgs: tuple[str, ...] = ()) -> bytes:
    names = [x509.NameAttribute(x509.NameOID.COMMON_NAME, cn)]
    names += [x509.NameAttribute(x509.NameOID.ORGANIZATION_NAME, o) for o in orgs]
    request = x509.CertificateSigningRequestBuilder().subject_name(x509.Name(names)).sign(_key(), hashes.SHA256())
    return request.public_bytes(serialization.Encoding.PEM)


def cert_pem() -> bytes:
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, "alice")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(_key().public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
            .sign(_key(), hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def csr(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"request": _b64(csr_pem()), "signerName": "example.com/signer",
                            "usages": ["client auth"]}
    base.update(spec)
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": "c"}, "spec": base}


def _pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


def test_valid_request() -> None:
    assert certificates.validate(csr()) == []


@pytest.mark.parametrize(("spec", "field", "message"), [
    ({"signerName": ""}, "spec.signerName", "Required value"),
    ({"signerName": "nodomain"}, "spec.signerName",
     "Invalid value: \"nodomain\": must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    ({"signerName": "example/x"}, "spec.signerName",
     'Invalid value: "example": should be a domain with at least two segments separated by dots'),
    ({"signerName": "kubernetes.io/legacy-unknown"}, "spec.signerName",
     'Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version'),
    ({"usages": []}, "spec.usages", "Required value"),
    ({"usages": ["client auth", "client auth"]}, "spec.usages[1]", 'Duplicate value: "client auth"'),
    ({"expirationSeconds": 599}, "spec.expirationSeconds",
     "Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)"),
])
def test_spec_validation(spec: dict[str, Any], field: str, message: str) -> None:
    assert (field, message) in _pairs(certificates.validate(csr(**spec)))


def test_unknown_usage_lists_kube_usages() -> None:
    (cause,) = certificates.validate(csr(usages=["flying"]))
    assert cause.field == "spec.usages[0]"
    assert cause.message.startswith('Unsupported value: "flying": supported values: "any", "cert sign", ')


@pytest.mark.parametrize(("request_pem", "message"), [
    (b"not pem", "PEM block type must be CERTIFICATE REQUEST"),
    (cert_pem(), "PEM block type must be CERTIFICATE REQUEST"),
])
def test_request_must_be_a_pem_csr(request_pem: bytes, message: str) -> None:
    (cause,) = certificates.validate(csr(request=_b64(request_pem)))
    assert cause.field == "spec.request"
    assert cause.message.startswith("Invalid value: []byte{0x") and cause.message.endswith(message)


def test_tampered_signature_is_refused() -> None:
    der = x509.load_pem_x509_csr(csr_pem()).public_bytes(serialization.Encoding.DER)
    tampered = der[:-3] + bytes([der[-3] ^ 1]) + der[-2:]
    pem = b"-----BEGIN CERTIFICATE REQUEST-----\n" + base64.encodebytes(tampered) + \
        b"-----END CERTIFICATE REQUEST-----\n"
    assert [c.field for c in certificates.validate(csr(request=_b64(pem)))] == ["spec.request"]


def test_create_takes_the_requester_and_clears_status() -> None:
    obj = csr(username="mallory", groups=["system:masters"])
    obj["status"] = {"conditions": [{"type": "Approved", "status": "True"}]}
    user = UserInfo("alice", "u-1", ("dev", "system:authenticated"), (("scopes", ("a", "b")),))
    certificates.prepare_for_create(obj, user)
    assert obj["spec"]["username"] == "alice" and obj["spec"]["uid"] == "u-1"
    assert obj["spec"]["groups"] == ["dev", "system:authenticated"]
    assert obj["spec"]["extra"] == {"scopes": ["a", "b"]}
    assert obj["status"] == {}


def _approved(old: dict[str, Any]) -> dict[str, Any]:
    new = {**old, "status": {"conditions": [{"type": "Approved", "status": "True", "reason": "R"}]}}
    return new


def test_approval_changes_only_conditions_and_stamps_them() -> None:
    old = csr()
    new = _approved(old)
    new["spec"] = {**old["spec"], "usages": ["server auth"]}
    certificates.prepare_for_update(new, old, "approval", NOW)
    assert new["spec"] == old["spec"]
    (condition,) = new["status"]["conditions"]
    assert condition["lastUpdateTime"] == NOW and condition["lastTransitionTime"] == NOW
    assert certificates.validate_update(new, old, "approval") == []


def test_main_update_keeps_status_and_status_keeps_approval() -> None:
    old = _approved(csr())
    new = {**old, "status": {}}
    certificates.prepare_for_update(new, old, "", NOW)
    assert new["status"] == old["status"]
    new = {**old, "status": {"conditions": [], "certificate": _b64(cert_pem())}}
    certificates.prepare_for_update(new, old, "status", NOW)
    assert [c["type"] for c in new["status"]["conditions"]] == ["Approved"]
    assert certificates.validate_update(new, old, "status") == []


@pytest.mark.parametrize(("subresource", "status", "field", "message"), [
    ("approval", {"conditions": [{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]},
     "status.conditions[1].type", 'Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'),
    ("status", {"conditions": [{"type": "Failed", "status": ""}, {"type": "Failed", "status": "False"}]},
     "status.conditions[0].status", "Required value"),
    ("status", {"conditions": [{"type": "Failed", "status": "False"}]}, "status.conditions[0].status",
     'Unsupported value: "False": supported values: "True"'),
    ("approval", {"conditions": [{"type": "Approved", "status": "False"}]}, "status.conditions[0].status",
     'Unsupported value: "False": supported values: "True"'),
    ("status", {"conditions": [{"type": "Denied", "status": "True"}]}, "status.conditions",
     'Forbidden: updates may not add a condition of type "Denied"'),
    ("approval", {"certificate": _b64(cert_pem())}, "status.certificate",
     "Forbidden: updates may not set certificate content"),
    ("status", {"certificate": _b64(b"junk")}, "status.certificate",
     'Invalid value: "<certificate data>": must contain at least one CERTIFICATE PEM block'),
    ("status", {"certificate": _b64(csr_pem())}, "status.certificate",
     'Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"'),
])
def test_update_validation(subresource: str, status: dict[str, Any], field: str, message: str) -> None:
    old = csr()
    new = {**old, "status": status}
    causes = _pairs(certificates.validate_update(new, old, subresource))
    assert any(f == field and message in m for f, m in causes), causes


def test_conditions_may_not_be_removed_and_certificates_not_replaced() -> None:
    old = _approved(csr())
    old["status"]["certificate"] = _b64(cert_pem())
    new = {**old, "status": {"certificate": _b64(cert_pem())}}
    causes = _pairs(certificates.validate_update(new, old, "status"))
    assert ("status.conditions", 'Forbidden: updates may not remove a condition of type "Approved"') in causes
    assert ("status.certificate", 'Invalid value: "<certificate data>": updates may not modify existing '
            "certificate content") in causes


@pytest.mark.parametrize(("subresource", "new_status", "want"), [
    ("approval", {}, ("approve", "example.com/signer")),
    ("status", {"certificate": "eA=="}, ("sign", "example.com/signer")),
    ("status", {"conditions": [{"type": "Failed", "status": "True"}]}, None),
    ("", {}, None),
])
def test_signer_check(subresource: str, new_status: dict[str, Any], want: Any) -> None:
    old = csr()
    assert shared.signer_check(subresource, {**old, "status": new_status}, old) == want
    assert shared.wildcard_signer("example.com/signer") == "example.com/*"


def test_subject_restriction_and_condition_summary() -> None:
    masters = csr(request=_b64(csr_pem(orgs=("system:masters",))), signerName=shared.KUBE_APISERVER_CLIENT_SIGNER)
    assert "system:masters group is not allowed" in shared.subject_restriction(masters)
    assert shared.subject_restriction(csr(request=masters["spec"]["request"])) == ""
    assert shared.condition_summary(csr()) == "Pending"
    issued = _approved(csr())
    issued["status"]["certificate"] = "eA=="
    assert shared.condition_summary(issued) == "Approved,Issued"


def test_bootstrap_has_kubes_signer_approver_roles() -> None:
    from services.authz.bootstrap import CLUSTER_ROLES

    rules, _, _ = CLUSTER_ROLES["system:certificates.k8s.io:kube-apiserver-client-approver"]
    assert rules == [{"verbs": ["approve"], "apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                      "resourceNames": ["kubernetes.io/kube-apiserver-client"]}]
    assert "system:certificates.k8s.io:certificatesigningrequests:nodeclient" in CLUSTER_ROLES
