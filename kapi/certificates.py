"""CertificateSigningRequest knowledge shared by the services: PEM and CSR parsing, signer permissions, status.

The kind's strategy and validation are :mod:`kapi.kinds.certificates`
(``pkg/registry/certificates/certificates/strategy.go``,
``pkg/apis/certificates/validation/validation.go``), summarised here:

- Create: ``spec.username``/``uid``/``groups``/``extra`` are the requesting
  user's (whatever the body said); status is cleared (no pre-approved requests).
- Update of the main resource keeps the stored spec and status; ``/status``
  keeps the spec and the Approved/Denied conditions; ``/approval`` keeps the
  spec and everything of the status but the conditions. Condition
  timestamps are filled in (``lastUpdateTime``, ``lastTransitionTime``).
- Validation: ``spec.request`` is a PEM ``CERTIFICATE REQUEST`` whose
  signature verifies; ``spec.usages`` required, known, no duplicates;
  ``spec.signerName`` a qualified ``domain/path`` (not the legacy signer);
  ``expirationSeconds`` at least 600; conditions typed, Approved/Denied only
  ``True`` and never both, no duplicates; ``status.certificate`` only PEM
  ``CERTIFICATE`` blocks; on update no Approved/Denied/Failed condition is
  removed, ``/status`` may not add Approved/Denied, only ``/status`` sets
  the certificate and an issued certificate never changes.

The signer permissions (CertificateApproval, CertificateSigning admission
plugins: verbs ``approve``/``sign`` on ``signers`` named by the signerName,
or ``<domain>/*``) are :func:`signer_check`'s answer, asked by the gateway;
:func:`subject_restriction` is the CertificateSubjectRestriction plugin's and
:func:`condition_summary` kubectl's CONDITION column.
Source: "Certificates and Certificate Signing Requests".
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from cryptography import x509

GROUP = "certificates.k8s.io"
RESOURCE = "certificatesigningrequests"
KIND = "CertificateSigningRequest"
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"

_PEM = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.S)

Obj = dict[str, Any]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def decode_bytes(value: Any) -> bytes:
    """A ``format: byte`` field: base64 text -> bytes (b"" when absent or not base64)."""
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def go_bytes(data: bytes) -> str:
    """A []byte as Go's %#v prints it: ``[]byte{0x2d, 0x2d}``."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def pem_blocks(data: bytes) -> list[tuple[str, bytes, bool]]:
    """(type, DER bytes, has headers) of each PEM block in ``data``; a block whose base64 is bad is skipped
    (pem.Decode ignores it)."""
    out: list[tuple[str, bytes, bool]] = []
    for match in _PEM.finditer(data):
        body = match.group(2)
        headers = b":" in body.split(b"\n\n", 1)[0] if b"\n\n" in body else False
        if headers:
            body = body.split(b"\n\n", 1)[1]
        try:
            der = base64.b64decode(b"".join(body.split()), validate=True)
        except (binascii.Error, ValueError):
            continue
        out.append((match.group(1).decode(), der, headers))
    return out


def parse_csr(pem: bytes) -> x509.CertificateSigningRequest:
    """certificates.ParseCSR + CheckSignature: the request of a PEM ``CERTIFICATE REQUEST`` block.

    Raises ValueError with kube's message when the block is missing, of
    another type, unparsable, or its signature does not verify.
    """
    blocks = pem_blocks(pem)
    if not blocks or blocks[0][0] != "CERTIFICATE REQUEST":
        raise ValueError("PEM block type must be CERTIFICATE REQUEST")
    try:
        csr = x509.load_der_x509_csr(blocks[0][1])
    except ValueError as exc:
        raise ValueError(f"x509: malformed certificate request: {exc}") from None
    if not csr.is_signature_valid:
        raise ValueError("x509: ECDSA verification failure" if "EC" in type(csr.public_key()).__name__
                         else "crypto/rsa: verification error")
    return csr


def conditions(obj: Obj, kind: str | None = None) -> list[Obj]:
    """The ``status.conditions`` of a CSR (only those of type ``kind`` when given)."""
    return [c for c in _list(_dict(obj.get("status")).get("conditions"))
            if isinstance(c, dict) and (kind is None or c.get("type") == kind)]


# ------------------------------------------------------------ signer permissions (admission)

def signer_check(subresource: str, new: Obj, old: Obj) -> tuple[str, str] | None:
    """The (verb, signerName) a write needs on ``signers`` (CertificateApproval / CertificateSigning), or None.

    ``approval`` always needs ``approve``; ``status`` needs ``sign`` when it
    changes ``status.certificate``. The signerName is the stored one.
    """
    signer = str(_dict(old.get("spec")).get("signerName") or "")
    if subresource == "approval":
        return "approve", signer
    if subresource == "status":
        if _dict(new.get("status")).get("certificate") != _dict(old.get("status")).get("certificate"):
            return "sign", signer
    return None


def wildcard_signer(signer: str) -> str:
    """``<domain>/*`` of a signerName (the second name IsAuthorizedForSignerName asks about)."""
    return signer.split("/", 1)[0] + "/*"


def refused_message(verb: str, signer: str) -> str:
    """The admission plugins' reason: ``user not permitted to approve requests with signerName "x"``."""
    return f'user not permitted to {verb} requests with signerName "{signer}"'


def subject_restriction(obj: Obj) -> str:
    """CertificateSubjectRestriction: the refusal for a kube-apiserver-client request of group system:masters,
    else ""."""
    spec = _dict(obj.get("spec"))
    if spec.get("signerName") != KUBE_APISERVER_CLIENT_SIGNER:
        return ""
    try:
        csr = parse_csr(decode_bytes(spec.get("request")))
    except ValueError:
        return ""
    orgs = [a.value for a in csr.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)]
    if "system:masters" in orgs:
        return f"use of {KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed"
    return ""


def condition_summary(obj: Obj) -> str:
    """kube's extractCSRStatus: Pending/Approved/Denied, then ",Failed" and ",Issued"."""
    kinds = {c.get("type") for c in conditions(obj)}
    out = DENIED if DENIED in kinds else APPROVED if APPROVED in kinds else "Pending"
    if FAILED in kinds:
        out += ",Failed"
    if _dict(obj.get("status")).get("certificate"):
        out += ",Issued"
    return out
