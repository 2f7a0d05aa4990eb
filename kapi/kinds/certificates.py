"""The certificates.k8s.io group's CertificateSigningRequest: strategy and validation as kube-apiserver's.

From ``pkg/registry/certificates/certificates/strategy.go`` and
``pkg/apis/certificates/validation/validation.go`` (see :mod:`kapi.certificates`
for the rules in brief and the helpers the other services share):

- Create: ``spec.username``/``uid``/``groups``/``extra`` are the requesting
  user's; status is cleared.
- Update: the main resource keeps the stored spec and status; ``status``
  keeps the spec and the Approved/Denied conditions; ``approval`` keeps the
  spec and everything of the status but the conditions; condition
  timestamps are filled in.
- Validation of the request, usages, signerName, expiration, conditions and
  certificate; update rules on conditions and the certificate.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cryptography import x509

from kapi.attributes import UserInfo
from kapi.certificates import (
    APPROVED,
    DENIED,
    FAILED,
    GROUP,
    KIND,
    LEGACY_UNKNOWN_SIGNER,
    conditions,
    decode_bytes,
    go_bytes,
    parse_csr,
    pem_blocks,
)
from kapi.errors import Cause
from kapi.kinds.base import Strategy, register
from kapi.kinds.fields import duplicate, field_value, not_supported
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_dns1123_label, is_dns1123_subdomain
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

MIN_EXPIRATION_SECONDS = 600
CERT_DATA = "<certificate data>"

# certificates.KeyUsage values (sets.List order: sorted).
USAGES = tuple(sorted((
    "signing", "digital signature", "content commitment", "key encipherment", "key agreement", "data encipherment",
    "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth", "client auth", "code signing",
    "email protection", "s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
    "microsoft sgc", "netscape sgc")))

Obj = dict[str, Any]


def _certificate_error(data: bytes) -> str:
    """validateCertificate's message for ``status.certificate``; "" when valid or empty."""
    if not data:
        return ""
    blocks = pem_blocks(data)
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
        approval = conditions(new)
        status = dict(old_status)
        if approval:
            status["conditions"] = approval
        else:
            status.pop("conditions", None)
        new["status"] = status
    elif subresource == "status":
        # preserveConditionInstances: the stored Approved/Denied conditions, whatever the body said
        kept = [c for c in conditions(new) if c.get("type") not in (APPROVED, DENIED)]
        preserved = [c for c in conditions(old) if c.get("type") in (APPROVED, DENIED)]
        status = dict(_dict(new.get("status")))
        if preserved or kept:
            status["conditions"] = preserved + kept
        new["status"] = status
    _timestamps(new, old, now)


def _timestamps(new: Obj, old: Obj, now: str) -> None:
    """populateConditionTimestamps: lastUpdateTime now when unset; lastTransitionTime the stored one of the same
    type and status, else now."""
    old_by_type = {c.get("type"): c for c in conditions(old)}
    for condition in conditions(new):
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


def _validateconditions(obj: Obj) -> list[Cause]:
    """validateConditions: each type required, the status required and True/False/Unknown (True alone for
    Approved, Denied and Failed), Approved and Denied mutually exclusive (reported on the later one's type),
    no type twice."""
    out: list[Cause] = []
    seen: set[Any] = set()
    approved = denied = False
    for i, condition in enumerate(_list(_dict(obj.get("status")).get("conditions"))):
        condition = _dict(condition)
        path = f"status.conditions[{i}]"
        kind, status = condition.get("type") or "", condition.get("status") or ""
        if not kind:
            out.append(required(f"{path}.type"))
        allowed = ("True",) if kind in (APPROVED, DENIED, FAILED) else ("False", "True", "Unknown")
        if not status:
            out.append(required(f"{path}.status"))
        elif status not in allowed:
            out.append(not_supported(f"{path}.status", status, allowed))
        if kind == APPROVED:
            approved = True
            if denied:
                out.append(invalid(f"{path}.type", kind, "Approved and Denied conditions are mutually exclusive"))
        elif kind == DENIED:
            denied = True
            if approved:
                out.append(invalid(f"{path}.type", kind, "Approved and Denied conditions are mutually exclusive"))
        if kind in seen:
            out.append(duplicate(f"{path}.type", kind))
        seen.add(kind)
    return out


def validate(obj: Obj) -> list[Cause]:
    """validateCertificateRequest (create and every update): request, usages, signerName, expiration, conditions,
    certificate."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    request = decode_bytes(spec.get("request"))
    try:
        parse_csr(request)
    except ValueError as exc:
        shown = "[]byte(nil)" if spec.get("request") is None else go_bytes(request)  # absent: a nil slice
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: {exc}", "spec.request"))
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
    out.extend(_validateconditions(obj))
    message = _certificate_error(decode_bytes(_dict(obj.get("status")).get("certificate")))
    if message:
        out.append(invalid("status.certificate", CERT_DATA, message))
    return out


def validate_update(new: Obj, old: Obj, subresource: str, include_object: bool = True) -> list[Cause]:
    """validateCertificateSigningRequestUpdate for the main resource, ``status`` or ``approval``.

    ``include_object`` False leaves out :func:`validate` of ``new`` (the caller runs it).
    """
    out = validate(new) if include_object else []
    for kind in (APPROVED, DENIED, FAILED):
        if len(conditions(new, kind)) < len(conditions(old, kind)):
            out.append(forbidden("status.conditions", f'updates may not remove a condition of type "{kind}"'))
    if subresource != "approval":
        for kind in (APPROVED, DENIED):
            if len(conditions(new, kind)) > len(conditions(old, kind)):
                out.append(forbidden("status.conditions", f'updates may not add a condition of type "{kind}"'))
    new_cert = decode_bytes(_dict(new.get("status")).get("certificate"))
    old_cert = decode_bytes(_dict(old.get("status")).get("certificate"))
    if subresource != "status" and new_cert != old_cert:
        out.append(forbidden("status.certificate", "updates may not set certificate content"))
    elif old_cert and new_cert != old_cert:
        out.append(invalid("status.certificate", CERT_DATA, "updates may not modify existing certificate content"))
    return out


@register
class CertificateSigningRequestStrategy(Strategy):
    """CertificateSigningRequest: the requester's identity, per-subresource resets, validation and update rules."""

    group, kind = GROUP, KIND
    #: csrStatusStrategy.PrepareForUpdate resets spec (and keeps Approved/Denied conditions), no metadata
    status_reset_metadata = ()
    status_zero: dict[str, Any] = {}  # CertificateSigningRequestStatus: every field omitempty
    validates_required = True  # kube names no missing field but usages, signerName and condition types/statuses
    selectable_fields = {"spec.signerName": field_value("spec", "signerName")}

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """:func:`prepare_for_create` with the requester."""
        prepare_for_create(obj, user)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """:func:`prepare_for_update`; condition timestamps are ``now`` (RFC 3339 seconds, UTC)."""
        when = now or datetime.now(UTC)
        when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)  # naive: UTC
        stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        prepare_for_update(new, old, subresource, stamp)

    def validate(self, obj: Obj) -> list[Cause]:
        """validateCertificateRequest (:func:`validate`)."""
        return validate(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """:func:`validate_update`; a subresource update also validates the whole object (the pipeline runs
        :meth:`validate` only for the main resource)."""
        return validate_update(new, old, subresource, include_object=bool(subresource))
