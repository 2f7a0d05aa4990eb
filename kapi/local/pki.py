"""The cluster's certificates and keys, generated once per state directory.

``kapi certs --state-dir DIR`` (and ``kapi up``) create, under ``DIR/pki/``,
what kubeadm creates for a control plane ("PKI certificates and requirements",
kubernetes.io/docs/setup/best-practices/certificates/):

- ``ca.crt/.key``: the cluster CA (10 years); it signs every other certificate
  but the front proxy's and is the client CA of Envoy, the gateways and authn
  (and the CSR signer's ``--cluster-signing-cert-file``).
- ``front-proxy-ca.crt/.key``: the front-proxy CA (10 years), a CA of its own
  as kubeadm makes it: the gateways' ``--requestheader-client-ca-file``. Only
  a certificate it issued may assert a user in ``x-forwarded-client-cert``,
  so nothing the CSR signer issues (an approved CSR for CN
  ``front-proxy-client`` included) can.
- ``apiserver.crt/.key``: Envoy's serving certificate (the API endpoint).
- ``front-proxy-client.crt/.key``: Envoy's client identity towards the
  gateways and the aggregator's towards extension servers (CN
  ``front-proxy-client``, kube-apiserver's ``--requestheader-allowed-names``
  convention), issued by the front-proxy CA.
- ``gateway.crt/.key``: the gateways' serving certificate.
- ``kapi-<service>.crt/.key``: one internal gRPC identity per service (mutual TLS).
- ``admin.crt/.key``: CN ``kubernetes-admin``, O ``system:masters``.
- ``controller-manager.crt/.key``: CN ``system:kube-controller-manager`` (the
  controllers' API identity, kubeadm's ``controller-manager.conf`` user), and
  ``controller-manager.kubeconfig`` with it embedded.
- ``sa.key/sa.pub``: the RSA service-account token signing key pair.

and ``DIR/admin.kubeconfig`` with every credential embedded.

``kapi certs --state-dir DIR --client NAME [--group G ...]`` issues, as kube
issues component identities (kubeadm's ``kubeadm kubeconfig user --client-name``),
a client certificate for one caller: ``pki/NAME.crt/.key`` with CN ``NAME``
(the user) and one O per group, from the cluster CA, extended key usage
clientAuth, and ``DIR/NAME.kubeconfig`` with it embedded. RBAC then governs
it exactly as any REST client (the x509 authenticator maps CN to the user
and each O to a group). Existing files are
kept, so a restart keeps the same CA; a leaf certificate is re-issued only when
it is missing, expires within 30 days, was not signed by its current CA, or
(``apiserver.crt``) lacks a requested subject alternative name. Keys are mode
0600. Certificates use ECDSA P-256 keys (fast to generate, accepted by
kubectl, client-go, Envoy and gRPC); the service-account key is RSA 2048 for
RS256 tokens.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import ipaddress
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kapi.flags import SERVICES

CA_DAYS = 3650
LEAF_DAYS = 365
RENEW_BEFORE = datetime.timedelta(days=30)

# Names every serving certificate answers to locally.
LOCAL_NAMES = ("localhost", "127.0.0.1")
APISERVER_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                   "kubernetes.default.svc.cluster.local", "127.0.0.1")
# Gateway serving names: localhost for the local launcher, compose service names in containers.
GATEWAY_NAMES = (*LOCAL_NAMES, "gateway", "gateway-1", "gateway-2")
FRONT_PROXY_CN = "front-proxy-client"
FRONT_PROXY_CA = "front-proxy-ca"
ADMIN_CN, ADMIN_ORG = "kubernetes-admin", "system:masters"
CONTROLLER_MANAGER_CN = "system:kube-controller-manager"


def service_names(service: str) -> tuple[str, ...]:
    """Subject alternative names of ``kapi-<service>``: localhost, 127.0.0.1 and its compose service names."""
    return (*LOCAL_NAMES, service, f"{service}-1", f"{service}-2")


@dataclass(frozen=True)
class Pki:
    """Paths of one state directory's PKI (every field an absolute path)."""

    state_dir: Path

    @property
    def dir(self) -> Path:
        """``<state_dir>/pki``."""
        return self.state_dir / "pki"

    def cert(self, name: str) -> Path:
        """``<pki>/<name>.crt``."""
        return self.dir / f"{name}.crt"

    def key(self, name: str) -> Path:
        """``<pki>/<name>.key``."""
        return self.dir / f"{name}.key"

    @property
    def ca_cert(self) -> Path:
        return self.cert("ca")

    @property
    def ca_key(self) -> Path:
        return self.key("ca")

    @property
    def apiserver_cert(self) -> Path:
        return self.cert("apiserver")

    @property
    def apiserver_key(self) -> Path:
        return self.key("apiserver")

    @property
    def front_proxy_ca_cert(self) -> Path:
        """``<pki>/front-proxy-ca.crt``: the gateways' ``--requestheader-client-ca-file``."""
        return self.cert(FRONT_PROXY_CA)

    @property
    def front_proxy_ca_key(self) -> Path:
        return self.key(FRONT_PROXY_CA)

    @property
    def front_proxy_cert(self) -> Path:
        return self.cert(FRONT_PROXY_CN)

    @property
    def front_proxy_key(self) -> Path:
        return self.key(FRONT_PROXY_CN)

    @property
    def gateway_cert(self) -> Path:
        return self.cert("gateway")

    @property
    def gateway_key(self) -> Path:
        return self.key("gateway")

    @property
    def admin_cert(self) -> Path:
        return self.cert("admin")

    @property
    def admin_key(self) -> Path:
        return self.key("admin")

    @property
    def controller_manager_cert(self) -> Path:
        return self.cert("controller-manager")

    @property
    def controller_manager_key(self) -> Path:
        return self.key("controller-manager")

    @property
    def controller_manager_kubeconfig(self) -> Path:
        """``<pki>/controller-manager.kubeconfig`` (the controllers' ``--kubeconfig``; ``--master`` sets the URL)."""
        return self.dir / "controller-manager.kubeconfig"

    @property
    def sa_key(self) -> Path:
        return self.dir / "sa.key"

    @property
    def sa_pub(self) -> Path:
        return self.dir / "sa.pub"

    @property
    def kubeconfig(self) -> Path:
        """``<state_dir>/admin.kubeconfig``."""
        return self.state_dir / "admin.kubeconfig"

    def service_cert(self, service: str) -> tuple[Path, Path]:
        """(certificate, key) of the gRPC identity ``kapi-<service>``."""
        return self.cert(f"kapi-{service}"), self.key(f"kapi-{service}")


# ---------------------------------------------------------------------------
# Low-level helpers


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write atomically (temp file + rename) with ``mode``."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def _key_pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path}: expected an EC private key")
    return key


def _sans(names: Iterable[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for name in dict.fromkeys(names):
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            out.append(x509.DNSName(name))
    return out


def _name(cn: str, orgs: Sequence[str] = ()) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    return x509.Name(attrs)


def _create_ca(pki: Pki, stem: str = "ca", cn: str = "kapi-ca") -> None:
    """Create the self-signed CA ``<pki>/<stem>.crt/.key`` with common name ``cn``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(cn)
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write(pki.key(stem), _key_pem(key), 0o600)
    _write(pki.cert(stem), cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _load_ca(pki: Pki, stem: str = "ca") -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    return x509.load_pem_x509_certificate(pki.cert(stem).read_bytes()), _load_key(pki.key(stem))


@dataclass(frozen=True)
class _Leaf:
    """One leaf certificate: file stem under pki/, subject, SANs, extended key usages."""

    stem: str
    cn: str
    orgs: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    server: bool = False
    client: bool = False
    ca: str = "ca"  # stem of the issuing CA: the cluster CA, or the front-proxy CA


def _issue(pki: Pki, leaf: _Leaf, cert_path: Path, key_path: Path) -> None:
    """Issue one leaf certificate signed by its CA (``leaf.ca``) and write it with a fresh key."""
    ca_cert, ca_key = _load_ca(pki, leaf.ca)
    key = ec.generate_private_key(ec.SECP256R1())
    usages = ([ExtendedKeyUsageOID.SERVER_AUTH] if leaf.server else []) + (
        [ExtendedKeyUsageOID.CLIENT_AUTH] if leaf.client else [])
    now = _now()
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(leaf.cn, leaf.orgs)).issuer_name(ca_cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(min(now + datetime.timedelta(days=LEAF_DAYS), ca_cert.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
    )
    if leaf.names:
        builder = builder.add_extension(x509.SubjectAlternativeName(_sans(leaf.names)), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    _write(key_path, _key_pem(key), 0o600)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _needs_issue(pki: Pki, cert_path: Path, key_path: Path, names: Sequence[str], ca: str = "ca") -> bool:
    """True if the leaf is missing, expiring, not from its current CA (stem ``ca``), or lacks one of ``names``."""
    if not cert_path.exists() or not key_path.exists():
        return True
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        ca_cert = x509.load_pem_x509_certificate(pki.cert(ca).read_bytes())
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return True
    if cert.not_valid_after_utc - _now() < RENEW_BEFORE:
        return True
    if names:
        have = set(subject_alt_names(cert))
        if not set(_normalise(names)) <= have:
            return True
    return False


def _normalise(names: Iterable[str]) -> list[str]:
    out = []
    for name in names:
        try:
            out.append(str(ipaddress.ip_address(name)))
        except ValueError:
            out.append(name)
    return out


def subject_alt_names(cert: x509.Certificate) -> list[str]:
    """DNS names and IP addresses (as text) of ``cert``'s subjectAltName extension, [] if none."""
    try:
        ext = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return [*ext.get_values_for_type(x509.DNSName), *(str(ip) for ip in ext.get_values_for_type(x509.IPAddress))]


def _leaves(advertise: Sequence[str]) -> list[_Leaf]:
    leaves = [
        _Leaf("apiserver", "kube-apiserver", names=(*APISERVER_NAMES, *advertise), server=True),
        _Leaf(FRONT_PROXY_CN, FRONT_PROXY_CN, client=True, ca=FRONT_PROXY_CA),
        _Leaf("gateway", "kapi-gateway-serving", names=GATEWAY_NAMES, server=True),
        _Leaf("admin", ADMIN_CN, orgs=(ADMIN_ORG,), client=True),
        _Leaf("controller-manager", CONTROLLER_MANAGER_CN, client=True),
    ]
    leaves += [_Leaf(f"kapi-{s}", f"kapi-{s}", names=service_names(s), server=True, client=True) for s in SERVICES]
    return leaves


# ---------------------------------------------------------------------------
# Public API


def ensure_pki(state_dir: str | os.PathLike[str], advertise: Sequence[str] = (), port: int | None = 6443,
               server: str | None = None) -> Pki:
    """Create whatever is missing of the PKI under ``state_dir/pki`` and return its paths.

    ``advertise`` adds subject alternative names to ``apiserver.crt`` (IP
    addresses become IP SANs, anything else DNS SANs). Unless ``port`` is None,
    ``state_dir/admin.kubeconfig`` is (re)written for ``server`` (default
    ``https://127.0.0.1:<port>``). Idempotent: existing valid files are kept.
    Raises OSError if the directory cannot be written.
    """
    pki = Pki(Path(state_dir).absolute())
    pki.dir.mkdir(parents=True, exist_ok=True)
    os.chmod(pki.dir, 0o700)
    if not pki.ca_cert.exists() or not pki.ca_key.exists():
        _create_ca(pki)
    if not pki.front_proxy_ca_cert.exists() or not pki.front_proxy_ca_key.exists():
        _create_ca(pki, FRONT_PROXY_CA, FRONT_PROXY_CA)
    for leaf in _leaves(advertise):
        cert, key = pki.cert(leaf.stem), pki.key(leaf.stem)
        if _needs_issue(pki, cert, key, leaf.names, leaf.ca):
            _issue(pki, leaf, cert, key)
    if not pki.sa_key.exists() or not pki.sa_pub.exists():
        sa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        _write(pki.sa_key, _key_pem(sa), 0o600)
        _write(pki.sa_pub, sa.public_key().public_bytes(serialization.Encoding.PEM,
                                                        serialization.PublicFormat.SubjectPublicKeyInfo), 0o644)
    # The server is a placeholder: the launcher and compose give the controllers --master.
    write_kubeconfig(pki.controller_manager_kubeconfig, "https://127.0.0.1:6443", pki.ca_cert,
                     pki.controller_manager_cert, pki.controller_manager_key, user=CONTROLLER_MANAGER_CN)
    if port is not None or server is not None:
        write_kubeconfig(pki.kubeconfig, server or f"https://127.0.0.1:{port}", pki.ca_cert, pki.admin_cert,
                         pki.admin_key)
    return pki


def issue_client_cert(pki: Pki, cn: str, orgs: Sequence[str] = (),
                      path_prefix: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
    """Issue a client certificate (CN ``cn``, O ``orgs``) signed by the cluster CA.

    Written to ``<path_prefix>.crt`` and ``<path_prefix>.key`` (default
    ``<pki>/client-<cn>``); always a new key. Returns (certificate, key) paths.
    kube-apiserver maps CN to the user name and each O to a group
    (kubernetes.io/docs/reference/access-authn-authz/authentication/#x509-client-certificates).
    """
    prefix = Path(path_prefix) if path_prefix is not None else pki.dir / f"client-{cn.replace(':', '_')}"
    cert, key = prefix.with_name(prefix.name + ".crt"), prefix.with_name(prefix.name + ".key")
    cert.parent.mkdir(parents=True, exist_ok=True)
    _issue(pki, _Leaf(prefix.name, cn, orgs=tuple(orgs), client=True), cert, key)
    return cert, key


def kubeconfig(server: str, ca: Path, cert: Path, key: Path, user: str = "admin") -> dict[str, object]:
    """A kubeconfig (v1 Config) with cluster "kapi" at ``server`` and ``user`` credentials embedded (base64 PEM)."""

    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kapi", "cluster": {"server": server, "certificate-authority-data": b64(ca)}}],
        "users": [{"name": user, "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}],
        "contexts": [{"name": "kapi", "context": {"cluster": "kapi", "user": user}}],
        "current-context": "kapi",
        "preferences": {},
    }


def write_kubeconfig(path: str | os.PathLike[str], server: str, ca: Path, cert: Path, key: Path,
                     user: str = "admin") -> Path:
    """Write :func:`kubeconfig` to ``path`` (mode 0600, only if the content changed); returns the path."""
    target = Path(path)
    data = yaml.safe_dump(kubeconfig(server, ca, cert, key, user), sort_keys=False).encode()
    if not target.exists() or target.read_bytes() != data:
        target.parent.mkdir(parents=True, exist_ok=True)
        _write(target, data, 0o600)
    return target


def _reserved_stems() -> frozenset[str]:
    """File stems under pki/ that :func:`ensure_pki` owns: a client certificate may not overwrite them."""
    return frozenset({"ca", FRONT_PROXY_CA, "sa", *(leaf.stem for leaf in _leaves(()))})


def client_stem(name: str) -> str:
    """The file stem of caller ``name``'s certificate: ``name`` with every character but ``[A-Za-z0-9._-]``
    written as ``_`` (``system:foo`` -> ``system_foo``). Raises ValueError for an empty name, a kapi service
    identity (``kapi-<service>``: storage would trust it) or a stem the cluster PKI itself uses (``ca``,
    ``admin``, ...)."""
    if not name.strip():
        raise ValueError("the client name must not be empty")
    if name in {f"kapi-{s}" for s in SERVICES}:
        raise ValueError(f"{name!r} is a kapi service identity; service certificates are issued by `kapi certs` "
                         "itself")
    stem = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")
    if not stem or stem in _reserved_stems():
        raise ValueError(f"{name!r} would overwrite the cluster's own pki/{stem or name}.crt; choose another name")
    return stem


def issue_caller(state_dir: str | os.PathLike[str], name: str, groups: Sequence[str] = (),
                 server: str | None = None) -> tuple[Path, Path, Path]:
    """Issue caller ``name``'s identity: ``pki/<stem>.crt/.key`` (CN ``name``, O ``groups``, cluster CA,
    clientAuth) and ``<state_dir>/<stem>.kubeconfig`` (user ``name``), where stem is :func:`client_stem`.

    Creates the PKI first if it is missing (without touching ``admin.kubeconfig``). The kubeconfig points at
    ``server``; by default the server of ``admin.kubeconfig`` (the running stack's URL, which ``kapi up``
    writes), else ``https://127.0.0.1:6443``. Always a new key. Returns (certificate, key, kubeconfig) paths.
    Raises ValueError for a name :func:`client_stem` refuses. kube maps CN to the user and each O to a group
    (kubernetes.io/docs/reference/access-authn-authz/authentication/#x509-client-certificates).
    """
    stem = client_stem(name)
    pki = ensure_pki(state_dir, port=None)
    cert, key = issue_client_cert(pki, name, groups, pki.dir / stem)
    if server is None:
        server = _admin_server(pki) or "https://127.0.0.1:6443"
    config = write_kubeconfig(pki.state_dir / f"{stem}.kubeconfig", server, pki.ca_cert, cert, key, user=name)
    return cert, key, config


def _admin_server(pki: Pki) -> str:
    """The cluster server URL of ``admin.kubeconfig``, or "" if it is missing or unreadable."""
    try:
        config = yaml.safe_load(pki.kubeconfig.read_text())
        return str(config["clusters"][0]["cluster"]["server"])
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError):
        return ""


def main(argv: Sequence[str] | None = None) -> int:
    """``kapi certs``: generate the PKI and admin kubeconfig under ``--state-dir``, or with ``--client NAME``
    issue one caller's certificate and kubeconfig (:func:`issue_caller`); returns 0, or 2 for a refused name."""
    parser = argparse.ArgumentParser(prog="kapi certs", description="Generate the cluster PKI and admin kubeconfig, "
                                     "or (--client) a client certificate and kubeconfig for one caller.")
    parser.add_argument("--state-dir", default=".kapi", help="Directory for pki/ and admin.kubeconfig.")
    parser.add_argument("--advertise-address", action="append", default=[], metavar="ADDRESS",
                        help="Extra IP address or DNS name of the API endpoint (repeatable, or comma-separated).")
    parser.add_argument("--port", type=int, default=None,
                        help="Port of the API endpoint in the kubeconfig (default 6443; with --client the server of "
                             "admin.kubeconfig).")
    parser.add_argument("--client", default=None, metavar="NAME",
                        help="Issue a client certificate for user NAME (its CN) from the cluster CA: pki/NAME.crt, "
                             "pki/NAME.key and NAME.kubeconfig in --state-dir.")
    parser.add_argument("--group", action="append", default=[], metavar="GROUP",
                        help="A group of the --client user (its certificate's O; repeatable, or comma-separated).")
    args = parser.parse_args(argv)
    groups = [g.strip() for item in args.group for g in item.split(",") if g.strip()]
    if groups and args.client is None:
        parser.error("--group needs --client")
    if args.client is not None:
        server = f"https://127.0.0.1:{args.port}" if args.port is not None else None
        try:
            cert, key, config = issue_caller(args.state_dir, args.client, groups, server)
        except ValueError as exc:
            print(f"kapi certs: {exc}", file=sys.stderr)
            return 2
        print(f"client certificate {cert} (key {key}) for user {args.client!r}"
              + (f" in groups {', '.join(groups)}" if groups else "") + f"; kubeconfig {config}")
        return 0
    advertise = [a.strip() for item in args.advertise_address for a in item.split(",") if a.strip()]
    pki = ensure_pki(args.state_dir, advertise=advertise, port=6443 if args.port is None else args.port)
    print(f"PKI in {pki.dir}; kubeconfig {pki.kubeconfig}")
    return 0
