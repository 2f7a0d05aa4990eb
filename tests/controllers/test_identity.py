"""The controllers' API identity: a client certificate CN system:kube-controller-manager and its kubeconfig."""

from __future__ import annotations

from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kapi.local.launcher import Peers, service_args
from kapi.local.pki import ensure_pki
from services.controllers.client import load_kubeconfig, path_for
from services.controllers.objects import CONFIGMAPS, NAMESPACES


def test_certificate_and_kubeconfig(tmp_path: Path) -> None:
    pki = ensure_pki(tmp_path, port=None)
    cert = x509.load_pem_x509_certificate(pki.controller_manager_cert.read_bytes())
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "system:kube-controller-manager"
    assert ExtendedKeyUsageOID.CLIENT_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    config = load_kubeconfig(pki.controller_manager_kubeconfig, master="https://127.0.0.1:9999/")
    assert config.server == "https://127.0.0.1:9999"
    assert config.cert_pem == pki.controller_manager_cert.read_bytes()
    assert config.ca_pem == pki.ca_cert.read_bytes()


def test_launcher_command() -> None:
    args = service_args("controllers", listen="", peers=Peers(apiserver="https://127.0.0.1:6443"), pki_dir="/p")
    signing = ["--cluster-signing-cert-file", "/p/ca.crt", "--cluster-signing-key-file", "/p/ca.key"]
    assert args == ["controllers", "--kubeconfig", "/p/controller-manager.kubeconfig", *signing, "--master",
                    "https://127.0.0.1:6443", "--controllers", "*,tokencleaner"]
    forwarded = service_args("controllers", listen="", peers=Peers(), pki_dir="/p", forwarded=["--controllers=*"])
    assert forwarded == ["controllers", "--kubeconfig", "/p/controller-manager.kubeconfig", *signing,
                         "--controllers=*"]


def test_paths() -> None:
    assert path_for(CONFIGMAPS, "a b", "x") == "/api/v1/namespaces/a%20b/configmaps/x"
    assert path_for(NAMESPACES, name="a", subresource="finalize") == "/api/v1/namespaces/a/finalize"
    assert path_for(CONFIGMAPS) == "/api/v1/configmaps"
