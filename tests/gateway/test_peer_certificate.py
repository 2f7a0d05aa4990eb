"""The front-proxy decision on a connection's certificate, remembered per certificate and configuration."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from cryptography import x509

from kapi.local.pki import Pki, ensure_pki
from services.gateway.apifilters import authentication


def _der(path: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(path.read_text())


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return ensure_pki(tmp_path_factory.mktemp("pki"))


def _cn(der: bytes) -> str:
    cert = x509.load_der_x509_certificate(der)
    return str(cert.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value)


def test_front_proxy_needs_its_ca_and_an_allowed_name_and_each_answer_is_per_configuration(pki: Pki) -> None:
    proxy, admin = _der(pki.front_proxy_cert), _der(pki.admin_cert)
    proxy_ca = (_der(pki.front_proxy_ca_cert),)
    cluster_ca = (_der(pki.ca_cert),)
    name = frozenset({_cn(proxy)})
    for _ in range(2):  # the second round answers from the cache: the same answers
        assert authentication.peer_certificate(proxy, name, proxy_ca) == (True, "")
        assert authentication.peer_certificate(proxy, frozenset(), proxy_ca) == (True, "")  # empty: any name
        # another allowed name, or the wrong CA: the proxy's certificate is a client's own
        front, pem = authentication.peer_certificate(proxy, frozenset({"someone-else"}), proxy_ca)
        assert not front and ssl.PEM_cert_to_DER_cert(pem) == proxy
        assert not authentication.peer_certificate(proxy, name, cluster_ca)[0]
        assert not authentication.peer_certificate(proxy, name, ())[0]
        # a cluster-CA certificate is never the proxy, whatever its name
        front, pem = authentication.peer_certificate(admin, frozenset({_cn(admin)}), proxy_ca)
        assert not front and ssl.PEM_cert_to_DER_cert(pem) == admin
