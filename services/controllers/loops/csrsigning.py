"""csrsigning: issues approved CertificateSigningRequests of the kubernetes.io signers (kube
``pkg/controller/certificates/signer``).

A CSR is signed when it is Approved, not Failed, has no certificate yet and
names one of :data:`SIGNERS`; each signer first checks the request as kube's
does (``pkg/apis/certificates/v1/helpers.go``: usages, subject, SANs). A
request the signer refuses gets a ``Failed`` condition (reason
``SignerValidationFailure``, the check's message). The certificate is made
from the request's subject, SANs and public key, valid from five minutes ago
(not before the CA's own start) for ``--cluster-signing-duration`` or the
CSR's ``spec.expirationSeconds`` if shorter (at least 600 s), never past the
CA's expiry; key usages from ``spec.usages``; CA:FALSE. It is written PEM in
``status.certificate`` with a PUT of the ``/status`` subresource (which needs
``sign`` on the signer, "Certificates and Certificate Signing Requests").
Without ``--cluster-signing-cert-file``/``--cluster-signing-key-file`` the loop
signs nothing.
"""

from __future__ import annotations

import base64
import datetime
import logging
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kapi import certificates
from services.controllers.client import ApiError, path_for
from services.controllers.context import Context
from services.controllers.informer import WorkQueue
from services.controllers.objects import meta, now_text, row

log = logging.getLogger(__name__)

CSRS = row(certificates.GROUP, certificates.RESOURCE)
KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
LEGACY_UNKNOWN = certificates.LEGACY_UNKNOWN_SIGNER
SIGNERS = (KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING, LEGACY_UNKNOWN)
BACKDATE = 300.0  # seconds NotBefore lies in the past (clock skew), kube's 5 minutes
MIN_DURATION = 600.0  # seconds: the shortest certificate kube issues for spec.expirationSeconds

_KEY_USAGES = {
    "signing": "digital_signature", "digital signature": "digital_signature",
    "content commitment": "content_commitment", "key encipherment": "key_encipherment",
    "key agreement": "key_agreement", "data encipherment": "data_encipherment", "cert sign": "key_cert_sign",
    "crl sign": "crl_sign", "encipher only": "encipher_only", "decipher only": "decipher_only",
}
_EXT_KEY_USAGES = {
    "any": x509.ObjectIdentifier("2.5.29.37.0"), "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
    "client auth": ExtendedKeyUsageOID.CLIENT_AUTH, "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
    "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION, "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "ipsec end system": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5"),
    "ipsec tunnel": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6"),
    "ipsec user": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7"), "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
    "microsoft sgc": x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3"),
    "netscape sgc": x509.ObjectIdentifier("2.16.840.1.113730.4.1"),
}


class SignerRefused(ValueError):
    """The signer will not issue this request (message: kube's, e.g. ``subject organization is not system:nodes``)."""


def _sans(csr: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        return csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def _names(csr: x509.CertificateSigningRequest, kind: type) -> list[Any]:
    sans = _sans(csr)
    return sans.get_values_for_type(kind) if sans is not None else []


def _attrs(csr: x509.CertificateSigningRequest, oid: x509.ObjectIdentifier) -> list[str]:
    return [str(a.value) for a in csr.subject.get_attributes_for_oid(oid)]


def _kubelet_common(csr: x509.CertificateSigningRequest) -> None:
    if _attrs(csr, NameOID.ORGANIZATION_NAME) != ["system:nodes"]:
        raise SignerRefused("subject organization is not system:nodes")


def _cn_is_node(csr: x509.CertificateSigningRequest) -> None:
    cn = _attrs(csr, NameOID.COMMON_NAME)
    if not (cn and cn[0].startswith("system:node:")):
        raise SignerRefused("subject common name does not begin with system:node:")


def check(signer: str, csr: x509.CertificateSigningRequest, usages: list[str]) -> None:
    """The signer's own checks of a request (kube's isRecognized / Validate*CSR); raises SignerRefused.

    kube-apiserver-client: usages ``client auth`` plus optionally ``digital
    signature``/``key encipherment``. kube-apiserver-client-kubelet:
    organization exactly ``system:nodes``, no DNS/email/IP/URI SANs, CN
    ``system:node:*``, usages {digital signature, [key encipherment,] client
    auth}. kubelet-serving: organization ``system:nodes``, a DNS or IP SAN,
    no email/URI SANs, usages {digital signature, [key encipherment,] server
    auth}, CN ``system:node:*``. legacy-unknown: no checks.
    """
    used = set(usages)
    if signer == KUBE_APISERVER_CLIENT:
        for usage in usages:
            if usage not in ("digital signature", "key encipherment", "client auth"):
                raise SignerRefused(f"invalid usage for client certificate: {usage}")
        if "client auth" not in used:
            raise SignerRefused("missing required usage for client certificate: client auth")
    elif signer == KUBE_APISERVER_CLIENT_KUBELET:
        _kubelet_common(csr)
        for kind, what in ((x509.DNSName, "DNS"), (x509.RFC822Name, "Email"), (x509.IPAddress, "IP"),
                           (x509.UniformResourceIdentifier, "URI")):
            if _names(csr, kind):
                raise SignerRefused(f"{what} subjectAltNames are not allowed")
        _cn_is_node(csr)
        if used not in ({"digital signature", "key encipherment", "client auth"}, {"digital signature", "client auth"}):
            raise SignerRefused("usages did not match [client auth digital signature key encipherment]")
    elif signer == KUBELET_SERVING:
        _kubelet_common(csr)
        if not _names(csr, x509.DNSName) and not _names(csr, x509.IPAddress):
            raise SignerRefused("DNS or IP subjectAltName is required")
        if _names(csr, x509.RFC822Name):
            raise SignerRefused("Email subjectAltNames are not allowed")
        if _names(csr, x509.UniformResourceIdentifier):
            raise SignerRefused("URI subjectAltNames are not allowed")
        if used not in ({"digital signature", "key encipherment", "server auth"}, {"digital signature", "server auth"}):
            raise SignerRefused("usages did not match [digital signature key encipherment server auth]")
        _cn_is_node(csr)


def duration(max_seconds: float, expiration_seconds: Any) -> float:
    """Validity in seconds: ``spec.expirationSeconds`` clamped to [600, ``max_seconds``], else ``max_seconds``."""
    if not isinstance(expiration_seconds, int) or isinstance(expiration_seconds, bool):
        return max_seconds
    return min(max_seconds, max(MIN_DURATION, float(expiration_seconds)))


class Authority:
    """The signing CA: its certificate and private key (PEM files ``--cluster-signing-cert-file``/``-key-file``)."""

    def __init__(self, cert_pem: bytes, key_pem: bytes):
        self.cert = x509.load_pem_x509_certificate(cert_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
        if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey,
                                ed448.Ed448PrivateKey)):
            raise ValueError("unsupported signing key type")
        self.key = key

    @classmethod
    def load(cls, cert_file: str, key_file: str) -> Authority:
        """Read both files; raises OSError or ValueError."""
        return cls(Path(cert_file).read_bytes(), Path(key_file).read_bytes())

    def sign(self, csr: x509.CertificateSigningRequest, usages: list[str], seconds: float,
             now: datetime.datetime) -> bytes:
        """A PEM certificate for ``csr`` valid ``seconds`` from ``now`` (backdated 5 minutes, capped to the CA's
        validity). Raises ValueError for an unknown usage or an expired CA."""
        ca_start, ca_end = self.cert.not_valid_before_utc, self.cert.not_valid_after_utc
        not_before = max(now - datetime.timedelta(seconds=BACKDATE), ca_start)
        not_after = min(now + datetime.timedelta(seconds=seconds), ca_end)
        if not_before >= ca_end:
            raise ValueError("the signer has expired")
        flags = dict.fromkeys(("digital_signature", "content_commitment", "key_encipherment", "data_encipherment",
                               "key_agreement", "key_cert_sign", "crl_sign", "encipher_only", "decipher_only"), False)
        ext: list[x509.ObjectIdentifier] = []
        for usage in usages:
            if usage in _KEY_USAGES:
                flags[_KEY_USAGES[usage]] = True
            elif usage in _EXT_KEY_USAGES:
                if _EXT_KEY_USAGES[usage] not in ext:
                    ext.append(_EXT_KEY_USAGES[usage])
            else:
                raise ValueError(f"unrecognized usage: {usage}")
        if not flags["key_agreement"]:  # X.509 defines these two only together with keyAgreement
            flags["encipher_only"] = flags["decipher_only"] = False
        builder = (x509.CertificateBuilder().subject_name(csr.subject).issuer_name(self.cert.subject)
                   .public_key(csr.public_key()).serial_number(int.from_bytes(secrets.token_bytes(16)) >> 1)
                   .not_valid_before(not_before).not_valid_after(not_after)
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                                  critical=False))
        if any(flags.values()):
            builder = builder.add_extension(x509.KeyUsage(**flags), critical=True)
        if ext:
            builder = builder.add_extension(x509.ExtendedKeyUsage(ext), critical=False)
        sans = _sans(csr)
        if sans is not None and len(sans):
            builder = builder.add_extension(sans, critical=not len(csr.subject))
        algorithm = None if isinstance(self.key, (ed25519.Ed25519PrivateKey, ed448.Ed448PrivateKey)) \
            else hashes.SHA256()
        cert = builder.sign(self.key, algorithm)  # type: ignore[arg-type]
        return cert.public_bytes(serialization.Encoding.PEM)


def _conditions(csr: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    conditions = (csr.get("status") or {}).get("conditions") or []
    return [c for c in conditions if isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True"]


def wants_signing(csr: dict[str, Any] | None) -> bool:
    """Approved, not Failed, not yet issued, and of one of :data:`SIGNERS`."""
    if not csr or (csr.get("status") or {}).get("certificate"):
        return False
    if not _conditions(csr, certificates.APPROVED) or _conditions(csr, certificates.FAILED):
        return False
    return (csr.get("spec") or {}).get("signerName") in SIGNERS


class CSRSigningController:
    """Issues certificates for approved CSRs of the kubernetes.io signers."""

    name = "csrsigning"

    def __init__(self, ctx: Context, clock: Callable[[], datetime.datetime] | None = None):
        self.client = ctx.client
        self.clock = clock or (lambda: datetime.datetime.now(datetime.UTC))
        self.max_seconds = float(getattr(ctx.args, "cluster_signing_duration", 8760 * 3600.0))
        self.authority: Authority | None = None
        cert_file = getattr(ctx.args, "cluster_signing_cert_file", "")
        key_file = getattr(ctx.args, "cluster_signing_key_file", "")
        if cert_file and key_file:
            try:
                self.authority = Authority.load(cert_file, key_file)
            except (OSError, ValueError) as exc:
                log.error("csrsigning: cannot load the signing CA (%s); no CSR is signed", exc)
        else:
            log.warning("csrsigning: no --cluster-signing-cert-file/--cluster-signing-key-file; no CSR is signed")
        self.queue = WorkQueue(self.name)
        self.csrs = ctx.informer(CSRS)
        self.csrs.on(add=self._enqueue, update=lambda _o, n: self._enqueue(n))

    def _enqueue(self, csr: dict[str, Any]) -> None:
        if self.authority is not None and wants_signing(csr):
            self.queue.add(str(meta(csr).get("name", "")))

    async def run(self) -> None:
        """Process CSRs until cancelled."""
        await self.queue.run(self.sync)

    async def sync(self, name: str) -> None:
        """Sign the CSR ``name`` (or mark it Failed); a conflict retries from the informer's next copy."""
        csr = self.csrs.get(name)
        if self.authority is None or not wants_signing(csr):
            return
        assert csr is not None
        spec = csr.get("spec") or {}
        usages = [u for u in spec.get("usages") or [] if isinstance(u, str)]
        try:
            request = certificates.parse_csr(base64.b64decode(spec.get("request") or ""))
        except ValueError as exc:
            log.info("csrsigning: unable to parse csr %q: %s", name, exc)
            return
        status = dict(csr.get("status") or {})
        try:
            check(spec["signerName"], request, usages)
        except SignerRefused as exc:
            status["conditions"] = [*(status.get("conditions") or []), {
                "type": certificates.FAILED, "status": "True", "reason": "SignerValidationFailure",
                "message": str(exc), "lastUpdateTime": now_text(self.clock())}]
        else:
            pem = self.authority.sign(request, usages, duration(self.max_seconds, spec.get("expirationSeconds")),
                                      self.clock())
            status["certificate"] = base64.b64encode(pem).decode()
        try:
            await self.client.update(path_for(CSRS, "", name, "status"), {**csr, "status": status})
        except ApiError as err:
            if err.code == 409:
                self.queue.add_after(name, 0.2)
            elif err.code != 404:
                raise
