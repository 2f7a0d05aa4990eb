"""CertificateSigningRequest (certificates.k8s.io/v1): strategy and validation as kube-apiserver's.

From ``pkg/registry/certificates/certificates/strategy.go`` and
``pkg/apis/certificates/validation/validation.go``:

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
or ``<domain>/*``) are :func:`signer_check`'s answer, asked by the gateway.
Source: "Certificates and Certificate Signing Requests".
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from cryptography import x509

from kapi.attributes import UserInfo
from kapi.errors import Cause
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_dns1123_label, is_dns1123_subdomain

GROUP = "certificates.k8s.io"
RESOURCE = "certificatesigningrequests"
KIND = "CertificateSigningRequest"
LEGACY_UNKNOWN_SIGNER = "kubernetes.io/legacy-unknown"
KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"
MIN_EXPIRATION_SECONDS = 600
CERT_DATA = "<certificate data>"

# certificates.KeyUsage values (sets.List order: sorted).
USAGES = tuple(sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement", "data encipherment",
    "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "client auth", "code signing",
    "email protection", "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc")))
_PEM = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n(.*?)-----END \1-----", re.S)

Obj = dict[str, Any]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _bytes(value: Any) -> bytes:
    """A ``format: byte`` field: base64 text -> bytes (b"" when absent or not base64)."""
    if not isinstance(value, str) or not value:
        return b""
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return b""


def _go_bytes(data: bytes) -> str:
    """A []byte as Go's %#v prints it: ``[]byte{0x2d, 0x2d}``."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def _pem_blocks(data: bytes) -> list[tuple[str, bytes, bool]]:
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
    blocks = _pem_blocks(pem)
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


def _certificate_error(data: bytes) -> str:
    """validateCertificate's message for ``status.certificate``; "" when valid or empty."""
    if not data:
        return ""
    blocks = _pem_blocks(data)
    for kind, der, headers in blocks:
        if kind != "CERTIFICATE":
            return f'only CERTIFICATE PEM blocks are allowed, found "{kind}"'
        if headers:
            return "no PEM block headers are permitted"
        try:
            x509.load_der_x509_certificate(der)
        except ValueError as exc:
            return f"x509: malformed certificate: {exc}"
    return "" if blocks else "must contain at least one CERTIFICATE PEM block"


# ------------------------------------------------------------ strategy

def prepare_for_create(obj: Obj, user: UserInfo | None) -> None:
    """PrepareForCreate, in place: the requester's identity into the spec, an empty status."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    if user is not None:
        if user.username:
            spec["username"] = user.username
        if user.uid:
            spec["uid"] = user.uid
        if user.groups:
            spec["groups"] = list(user.groups)
        extra = {k: list(v) for k, v in dict(user.extra or {}).items()}
        if extra:
            spec["extra"] = extra
    obj["status"] = {}


def _conditions(obj: Obj, kind: str | None = None) -> list[Obj]:
    return [c for c in _list(_dict(obj.get("status")).get("conditions"))
            if isinstance(c, dict) and (kind is None or c.get("type") == kind)]


def prepare_for_update(new: Obj, old: Obj, subresource: str, now: str) -> None:
    """PrepareForUpdate of the main resource, ``status`` or ``approval``, in place; ``now`` is RFC 3339."""
    new["spec"] = old.get("spec", {})
    old_status = _dict(old.get("status"))
    if subresource == "":
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
        return
    if subresource == "approval":
        conditions = _conditions(new)
        status = dict(old_status)
        if conditions:
            status["conditions"] = conditions
        else:
            status.pop("conditions", None)
        new["status"] = status
    elif subresource == "status":
        # preserveConditionInstances: the stored Approved/Denied conditions, whatever the body said
        kept = [c for c in _conditions(new) if c.get("type") not in (APPROVED, DENIED)]
        preserved = [c for c in _conditions(old) if c.get("type") in (APPROVED, DENIED)]
        status = dict(_dict(new.get("status")))
        if preserved or kept:
            status["conditions"] = preserved + kept
        new["status"] = status
    _timestamps(new, old, now)


def _timestamps(new: Obj, old: Obj, now: str) -> None:
    """populateConditionTimestamps: lastUpdateTime now when unset; lastTransitionTime the stored one of the same
    type and status, else now."""
    old_by_type = {c.get("type"): c for c in _conditions(old)}
    for condition in _conditions(new):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            before = old_by_type.get(condition.get("type"))
            if before is not None and before.get("status") == condition.get("status") and \
                    before.get("lastTransitionTime"):
                condition["lastTransitionTime"] = before["lastTransitionTime"]
            else:
                condition["lastTransitionTime"] = now


# ------------------------------------------------------------ validation

def validate_signer_name(path: str, name: Any) -> list[Cause]:
    """apivalidation.ValidateSignerName: ``<domain with a dot>/<DNS-1123 subdomain path>``."""
    if not isinstance(name, str) or not name:
        return [required(path)]
    segments = name.split("/")
    if len(segments) != 2:
        return [invalid(path, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")]
    domain, rest = segments
    out: list[Cause] = []
    if len(domain) > 253:
        out.append(Cause("FieldValueTooLong", "Too long: may not be more than 253 bytes", path))
    labels = domain.split(".")
    for label in labels:
        errs = is_dns1123_label(label)
        if errs:
            out.extend(invalid(path, domain, f'validating label "{label}": {e}') for e in errs)
            break
    if len(labels) < 2:
        out.append(invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    if len(rest) > 253 + 63 + 1:
        out.append(Cause("FieldValueTooLong", f"Too long: may not be more than {253 + 63 + 1} bytes", path))
    out.extend(invalid(path, rest, e) for e in is_dns1123_subdomain(rest))
    return out


def _validate_conditions(obj: Obj) -> list[Cause]:
    from kapi.kindvalidation import duplicate, not_supported

    out: list[Cause] = []
    seen: set[Any] = set()
    approved = denied = False
    for i, condition in enumerate(_list(_dict(obj.get("status")).get("conditions"))):
        condition = _dict(condition)
        path = f"status.conditions[{i}]"
        kind, status = condition.get("type"), condition.get("status")
        if not kind:
            out.append(required(f"{path}.type"))
        if status not in ("True", "False", "Unknown"):
            out.append(not_supported(f"{path}.status", status or "", ("False", "True", "Unknown")))
        if kind in (APPROVED, DENIED):
            approved, denied = approved or kind == APPROVED, denied or kind == DENIED
            if status != "True":
                out.append(not_supported(f"{path}.status", status or "", ("True",)))
        if kind in seen:
            out.append(duplicate(f"{path}.type", kind))
        seen.add(kind)
    if approved and denied:
        out.append(Cause("FieldValueInvalid", f"Invalid value: \"{_list(_dict(obj.get('status')).get('conditions'))}"
                         f"\": only one of {APPROVED} or {DENIED} is allowed", "status.conditions"))
    return out


def validate(obj: Obj) -> list[Cause]:
    """validateCertificateRequest (create and every update): request, usages, signerName, expiration, conditions,
    certificate."""
    from kapi.kindvalidation import duplicate, not_supported

    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    request = _bytes(spec.get("request"))
    try:
        parse_csr(request)
    except ValueError as exc:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {_go_bytes(request)}: {exc}", "spec.request"))
    usages = _list(spec.get("usages"))
    if not usages:
        out.append(required("spec.usages"))
    seen: set[Any] = set()
    for i, usage in enumerate(usages):
        if usage not in USAGES:
            out.append(not_supported(f"spec.usages[{i}]", usage, USAGES))
    for i, usage in enumerate(usages):
        if usage in seen:
            out.append(duplicate(f"spec.usages[{i}]", usage))
        seen.add(usage)
    signer = spec.get("signerName")
    if signer == LEGACY_UNKNOWN_SIGNER:
        out.append(invalid("spec.signerName", signer, "the legacy signerName is not allowed via this API version"))
    else:
        out.extend(validate_signer_name("spec.signerName", signer))
    expiration = spec.get("expirationSeconds")
    if isinstance(expiration, int) and not isinstance(expiration, bool) and expiration < MIN_EXPIRATION_SECONDS:
        out.append(invalid("spec.expirationSeconds", expiration,
                           "may not specify a duration less than 600 seconds (10 minutes)"))
    out.extend(_validate_conditions(obj))
    message = _certificate_error(_bytes(_dict(obj.get("status")).get("certificate")))
    if message:
        out.append(invalid("status.certificate", CERT_DATA, message))
    return out


def validate_update(new: Obj, old: Obj, subresource: str, include_object: bool = True) -> list[Cause]:
    """validateCertificateSigningRequestUpdate for the main resource, ``status`` or ``approval``.

    ``include_object`` False leaves out :func:`validate` of ``new`` (the caller runs it).
    """
    out = validate(new) if include_object else []
    for kind in (APPROVED, DENIED, FAILED):
        if len(_conditions(new, kind)) < len(_conditions(old, kind)):
            out.append(forbidden("status.conditions", f'updates may not remove a condition of type "{kind}"'))
    if subresource != "approval":
        for kind in (APPROVED, DENIED):
            if len(_conditions(new, kind)) > len(_conditions(old, kind)):
                out.append(forbidden("status.conditions", f'updates may not add a condition of type "{kind}"'))
    new_cert = _bytes(_dict(new.get("status")).get("certificate"))
    old_cert = _bytes(_dict(old.get("status")).get("certificate"))
    if subresource != "status" and new_cert != old_cert:
        out.append(forbidden("status.certificate", "updates may not set certificate content"))
    elif old_cert and new_cert != old_cert:
        out.append(invalid("status.certificate", CERT_DATA, "updates may not modify existing certificate content"))
    return out


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
        csr = parse_csr(_bytes(spec.get("request")))
    except ValueError:
        return ""
    orgs = [a.value for a in csr.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)]
    if "system:masters" in orgs:
        return f"use of {KUBE_APISERVER_CLIENT_SIGNER} signer with system:masters group is not allowed"
    return ""


def condition_summary(obj: Obj) -> str:
    """kube's extractCSRStatus: Pending/Approved/Denied, then ",Failed" and ",Issued"."""
    kinds = {c.get("type") for c in _conditions(obj)}
    out = DENIED if DENIED in kinds else APPROVED if APPROVED in kinds else "Pending"
    if FAILED in kinds:
        out += ",Failed"
    if _dict(obj.get("status")).get("certificate"):
        out += ",Issued"
    return out
