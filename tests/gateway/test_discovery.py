"""Legacy discovery documents (/api) as kube-apiserver serves them."""

from __future__ import annotations

import pytest

from services.gateway import discovery


@pytest.mark.parametrize(("host", "want"), [
    ("127.0.0.1:6443", "127.0.0.1:6443"),
    ("kapi.example.com", "kapi.example.com:443"),
    ("[::1]:6443", "[::1]:6443"),
    ("[::1]", "[::1]:443"),
    ("", ""),
    ("a b:1", ""),
    ("host:port", ""),
    ("user@host:1", ""),
    ("[::1", ""),
    ("[::1]x", ""),
])
def test_server_address_from_host(host: str, want: str) -> None:
    assert discovery.server_address(host) == want


def test_api_versions_names_the_server_for_every_client() -> None:
    assert discovery.api_versions("10.0.0.1:6443") == {
        "kind": "APIVersions", "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "10.0.0.1:6443"}]}
