"""kapi.local.pki: the cluster CA, serving and client certificates, service-account keys, admin kubeconfig."""

from __future__ import annotations

import base64
import ipaddress
import stat
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kapi.flags import SERVICES
from kapi.local import pki as pkimod
from kapi.local.pki import Pki, ensure_pki, issue_client_cert, subject_alt_names


def load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def cn(cert: x509.Certificate) -> str:
    return str(cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)


def orgs(cert: x509.Certificate) -> list[str]:
    return [str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]


def usages(cert: x509.Certificate) -> set[x509.ObjectIdentifier]:
    return set(cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return ensure_pki(tmp_path_factory.mktemp("state"), advertise=["10.0.0.7", "api.example.com"], port=7443)


SERVER, CLIENT = ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH


@pytest.mark.parametrize(("stem", "want_cn", "want_orgs", "want_usages", "want_sans"), [
    ("apiserver", "kube-apiserver", [], {SERVER},
     ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
      "kubernetes.default.svc.cluster.local", "127.0.0.1", "10.0.0.7", "api.example.com"]),
    ("front-proxy-client", "front-proxy-client", [], {CLIENT}, []),
    ("gateway", "kapi-gateway-serving", [], {SERVER}, ["localhost", "127.0.0.1", "gateway", "gateway-1", "gateway-2"]),
    ("admin", "kubernetes-admin", ["system:masters"], {CLIENT}, []),
    *[(f"kapi-{s}", f"kapi-{s}", [], {SERVER, CLIENT}, ["localhost", "127.0.0.1", s, f"{s}-1", f"{s}-2"])
      for s in SERVICES],
])
def test_leaf_certificates(pki: Pki, stem: str, want_cn: str, want_orgs: list[str],
                           want_usages: set[x509.ObjectIdentifier], want_sans: list[str]) -> None:
    cert = load(pki.cert(stem))
    assert cn(cert) == want_cn
    assert orgs(cert) == want_orgs
    assert usages(cert) == want_usages
    assert sorted(subject_alt_names(cert)) == sorted(want_sans)
    cert.verify_directly_issued_by(load(pki.front_proxy_ca_cert if stem == "front-proxy-client" else pki.ca_cert))
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_the_front_proxy_has_a_ca_of_its_own(pki: Pki) -> None:
    """Only the front-proxy CA may vouch for x-forwarded-client-cert: nothing the cluster CA (the CSR signer's)
    issues can, so an approved CSR for CN front-proxy-client asserts no one (issue 19.4)."""
    from cryptography.exceptions import InvalidSignature

    front, cluster = load(pki.front_proxy_ca_cert), load(pki.ca_cert)
    assert cn(front) == "front-proxy-ca" and front.public_key() != cluster.public_key()
    assert front.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    with pytest.raises((InvalidSignature, ValueError)):  # ValueError: another issuer name
        load(pki.front_proxy_cert).verify_directly_issued_by(cluster)
    assert oct(pki.front_proxy_ca_key.stat().st_mode & 0o777) == "0o600"


def test_a_front_proxy_client_from_the_cluster_ca_is_reissued(tmp_path: Path) -> None:
    """State directories from before the front-proxy CA get a front-proxy-client.crt from it on the next start."""
    state = ensure_pki(tmp_path, port=None)
    issue_client_cert(state, "front-proxy-client", path_prefix=state.dir / "front-proxy-client")
    ensure_pki(tmp_path, port=None)
    load(state.front_proxy_cert).verify_directly_issued_by(load(state.front_proxy_ca_cert))


def test_ip_sans_are_ip_addresses(pki: Pki) -> None:
    ext = load(pki.apiserver_cert).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("10.0.0.7") in ext.get_values_for_type(x509.IPAddress)
    assert "10.0.0.7" not in ext.get_values_for_type(x509.DNSName)


def test_ca_is_a_ten_year_ca(pki: Pki) -> None:
    ca = load(pki.ca_cert)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert (ca.not_valid_after_utc - ca.not_valid_before_utc).days >= 3650
    ca.verify_directly_issued_by(ca)


def test_keys_are_private_and_service_account_key_is_rsa(pki: Pki) -> None:
    for key in pki.dir.glob("*.key"):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    assert stat.S_IMODE(pki.kubeconfig.stat().st_mode) == 0o600
    sa = serialization.load_pem_private_key(pki.sa_key.read_bytes(), password=None)
    assert isinstance(sa, rsa.RSAPrivateKey) and sa.key_size == 2048
    pub = serialization.load_pem_public_key(pki.sa_pub.read_bytes())
    assert isinstance(pub, rsa.RSAPublicKey)
    assert pub.public_numbers() == sa.public_key().public_numbers()


def test_kubeconfig_embeds_admin_credentials(pki: Pki) -> None:
    config = yaml.safe_load(pki.kubeconfig.read_text())
    assert config["current-context"] == "kapi"
    assert config["contexts"] == [{"name": "kapi", "context": {"cluster": "kapi", "user": "admin"}}]
    cluster = config["clusters"][0]
    assert cluster["name"] == "kapi"
    assert cluster["cluster"]["server"] == "https://127.0.0.1:7443"
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == pki.ca_cert.read_bytes()
    user = config["users"][0]["user"]
    assert base64.b64decode(user["client-certificate-data"]) == pki.admin_cert.read_bytes()
    assert base64.b64decode(user["client-key-data"]) == pki.admin_key.read_bytes()


def test_idempotent_keeps_files_and_rewrites_server(tmp_path: Path) -> None:
    first = ensure_pki(tmp_path, port=6443)
    files = {p.name: p.read_bytes() for p in first.dir.iterdir()}
    second = ensure_pki(tmp_path, port=7000)
    assert {p.name: p.read_bytes() for p in second.dir.iterdir()} == files
    assert yaml.safe_load(second.kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:7000"


def test_missing_leaf_or_new_san_is_reissued_from_the_same_ca(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    ca = pki.ca_cert.read_bytes()
    gateway = pki.gateway_cert.read_bytes()
    pki.admin_cert.unlink()
    ensure_pki(tmp_path, advertise=["192.168.9.9"])
    assert pki.ca_cert.read_bytes() == ca
    assert pki.gateway_cert.read_bytes() == gateway
    load(pki.admin_cert).verify_directly_issued_by(load(pki.ca_cert))
    assert "192.168.9.9" in subject_alt_names(load(pki.apiserver_cert))


def test_leaf_from_another_ca_is_reissued(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path)
    pki.ca_cert.unlink()
    ensure_pki(tmp_path)
    load(pki.gateway_cert).verify_directly_issued_by(load(pki.ca_cert))


def test_issue_client_cert(pki: Pki, tmp_path: Path) -> None:
    cert_path, key_path = issue_client_cert(pki, "jane", ["dev", "ops"], tmp_path / "jane")
    assert (cert_path, key_path) == (tmp_path / "jane.crt", tmp_path / "jane.key")
    cert = load(cert_path)
    assert cn(cert) == "jane" and orgs(cert) == ["dev", "ops"]
    assert usages(cert) == {CLIENT}
    cert.verify_directly_issued_by(load(pki.ca_cert))
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600


def test_certs_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--state-dir", str(tmp_path), "--advertise-address", "10.1.1.1,kapi.local", "--port", "8443"]
    assert pkimod.main(argv) == 0
    pki = Pki(tmp_path.absolute())
    assert {"10.1.1.1", "kapi.local"} <= set(subject_alt_names(load(pki.apiserver_cert)))
    assert "8443" in pki.kubeconfig.read_text()
    assert str(pki.dir) in capsys.readouterr().out


def test_certs_client_issues_a_caller_identity_and_kubeconfig(tmp_path: Path) -> None:
    assert pkimod.main(["--state-dir", str(tmp_path), "--port", "7443"]) == 0
    pki = Pki(tmp_path.absolute())
    admin_config = pki.kubeconfig.read_bytes()
    assert pkimod.main(["--state-dir", str(tmp_path), "--client", "system:carol", "--group", "dev,ops",
                        "--group", "qa"]) == 0
    cert = load(pki.cert("system_carol"))
    assert cn(cert) == "system:carol" and orgs(cert) == ["dev", "ops", "qa"]
    assert usages(cert) == {CLIENT}
    cert.verify_directly_issued_by(load(pki.ca_cert))
    assert stat.S_IMODE(pki.key("system_carol").stat().st_mode) == 0o600
    config = yaml.safe_load((tmp_path / "system_carol.kubeconfig").read_text())
    # the running stack's URL (admin.kubeconfig's), which --client leaves as it was
    assert config["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:7443"
    assert config["users"][0]["name"] == "system:carol"
    assert base64.b64decode(config["users"][0]["user"]["client-certificate-data"]) == pki.cert(
        "system_carol").read_bytes()
    assert pki.kubeconfig.read_bytes() == admin_config


def test_certs_client_on_an_empty_state_dir_creates_the_ca_first(tmp_path: Path) -> None:
    assert pkimod.main(["--state-dir", str(tmp_path), "--client", "bot", "--port", "9443"]) == 0
    pki = Pki(tmp_path.absolute())
    load(pki.cert("bot")).verify_directly_issued_by(load(pki.ca_cert))
    assert "https://127.0.0.1:9443" in (tmp_path / "bot.kubeconfig").read_text()
    assert not pki.kubeconfig.exists()


@pytest.mark.parametrize("name", ["kapi-storage", "kapi-gateway", "ca", "admin", "front-proxy-client", "sa", "",
                                  "..."])
def test_certs_client_refuses_names_of_the_cluster_pki(tmp_path: Path, name: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    pki = ensure_pki(tmp_path, port=None)
    before = {p.name: p.read_bytes() for p in pki.dir.iterdir()}
    assert pkimod.main(["--state-dir", str(tmp_path), "--client", name]) == 2
    assert "kapi certs:" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in pki.dir.iterdir()} == before


def test_certs_group_needs_client(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        pkimod.main(["--state-dir", str(tmp_path), "--group", "dev"])
