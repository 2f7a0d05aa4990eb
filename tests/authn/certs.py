"""Test PKI built with ``cryptography``: CAs, client certificates, PEM helpers."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

NOW = datetime.datetime(2030, 6, 1, 12, 0, 0, tzinfo=datetime.UTC)
DAY = datetime.timedelta(days=1)


@dataclass
class Issued:
    """A certificate and its private key."""

    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def pem(self) -> str:
        return self.cert.public_bytes(serialization.Encoding.PEM).decode()


def _name(cn: str, orgs: tuple[str, ...] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    if cn:
        attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def make_ca(cn: str = "test-ca", *, issuer: Issued | None = None, path_length: int | None = None,
            not_before: datetime.datetime = NOW - 10 * DAY, not_after: datetime.datetime = NOW + 3650 * DAY) -> Issued:
    """A CA certificate, self-signed unless ``issuer`` is given (then an intermediate)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(cn)
    signer_key = issuer.key if issuer else key
    cert = (x509.CertificateBuilder().subject_name(name)
            .issuer_name(issuer.cert.subject if issuer else name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=path_length), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .sign(signer_key, hashes.SHA256()))
    return Issued(cert, key)


def make_client(issuer: Issued, cn: str, orgs: tuple[str, ...] = (), *,
                not_before: datetime.datetime = NOW - DAY, not_after: datetime.datetime = NOW + 365 * DAY,
                eku: tuple[x509.ObjectIdentifier, ...] | None = None, ca: bool | None = None) -> Issued:
    """A client certificate with subject O=orgs..., CN=cn, signed by ``issuer``; no SAN, no key identifiers."""
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (x509.CertificateBuilder().subject_name(_name(cn, orgs)).issuer_name(issuer.cert.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after))
    if eku is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(eku)), critical=False)
    if ca is not None:
        builder = builder.add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    return Issued(builder.sign(issuer.key, hashes.SHA256()), key)


CLIENT_AUTH = ExtendedKeyUsageOID.CLIENT_AUTH
SERVER_AUTH = ExtendedKeyUsageOID.SERVER_AUTH


def make_server(issuer: Issued, host: str = "127.0.0.1", *, not_before: datetime.datetime,
                not_after: datetime.datetime) -> Issued:
    """A serving certificate for the IP address ``host`` (SAN, serverAuth), signed by ``issuer``."""
    import ipaddress

    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(host)).issuer_name(issuer.cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([SERVER_AUTH]), critical=False)
            .sign(issuer.key, hashes.SHA256()))
    return Issued(cert, key)


def key_pem(issued: Issued) -> str:
    """The PEM (PKCS#8) private key of ``issued``."""
    return issued.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
