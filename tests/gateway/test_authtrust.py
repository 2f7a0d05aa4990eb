"""kube-system/extension-apiserver-authentication (services/gateway/authtrust.py): data, combining, reconciling."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from kapi import errors, jsonutil
from services.gateway.authtrust import AuthenticationInfo, TrustPublisher, combine_bundles, combined

NOW = datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)


def _ca(cn: str, days: int = 365) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, cn)])
    start = NOW - datetime.timedelta(days=400)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(start)
            .not_valid_after(NOW + datetime.timedelta(days=days)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def test_data_as_kube_apiserver_writes_it(tmp_path: Path) -> None:
    client, front = _ca("client-ca"), _ca("front-proxy-ca")
    (tmp_path / "ca.crt").write_text(client)
    (tmp_path / "front.crt").write_text(front)
    info = AuthenticationInfo.from_flags(str(tmp_path / "ca.crt"), str(tmp_path / "front.crt"), "front-proxy-client",
                                         "X-Remote-User", "X-Remote-Group", "X-Remote-Extra-")
    assert info.data() == {
        "client-ca-file": client, "requestheader-client-ca-file": front,
        "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]', "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]'}
    # no requestheader CA: no requestheader keys (kube's getConfigMapDataFor)
    assert AuthenticationInfo.from_flags(str(tmp_path / "ca.crt"), "", "a", "b", "c", "d").data() == {
        "client-ca-file": client}


def test_combined_unions_bundles_and_lists_dropping_expired_and_repeated() -> None:
    old, new, expired = _ca("old"), _ca("new"), _ca("expired", days=-1)
    existing = {"client-ca-file": old + expired, "requestheader-client-ca-file": old,
                "requestheader-allowed-names": '["proxy-a"]', "requestheader-username-headers": '["X-Remote-User"]',
                "requestheader-group-headers": "[]", "requestheader-extra-headers-prefix": "not json"}
    required = {"client-ca-file": new + old, "requestheader-client-ca-file": new,
                "requestheader-allowed-names": '["front-proxy-client", "proxy-a"]',
                "requestheader-username-headers": '["X-Remote-User"]', "requestheader-group-headers": '["X-G"]',
                "requestheader-extra-headers-prefix": '["X-E-"]'}
    out = combined(existing, required, NOW)
    assert out["client-ca-file"] == old + new
    assert out["requestheader-client-ca-file"] == old + new
    assert json.loads(out["requestheader-allowed-names"]) == ["proxy-a", "front-proxy-client"]
    assert json.loads(out["requestheader-username-headers"]) == ["X-Remote-User"]
    assert json.loads(out["requestheader-group-headers"]) == ["X-G"]
    assert json.loads(out["requestheader-extra-headers-prefix"]) == ["X-E-"]
    assert combine_bundles(["garbage", expired], NOW) == ""
    assert combined({}, {}, NOW) == {}


class FakeStorage:
    """Get/Create/Update of one object with resourceVersions, as the storage service answers them."""

    def __init__(self) -> None:
        self.obj: dict[str, Any] | None = None
        self.rv = 0
        self.writes = 0

    async def Get(self, request: Any, timeout: float, **_: Any) -> Any:  # noqa: N802 - gRPC stub names
        if self.obj is None:
            raise errors.not_found("configmaps", request.key.name)
        return type("R", (), {"object": jsonutil.dumps(self.obj), "resource_version": self.rv})()

    async def Create(self, request: Any, timeout: float, **_: Any) -> Any:  # noqa: N802
        self.obj, self.rv, self.writes = jsonutil.loads(request.object), self.rv + 1, self.writes + 1
        return None

    async def Update(self, request: Any, timeout: float, **_: Any) -> Any:  # noqa: N802
        assert request.expected_resource_version == self.rv
        self.obj, self.rv, self.writes = jsonutil.loads(request.object), self.rv + 1, self.writes + 1
        return None


async def test_reconcile_creates_then_only_writes_on_change(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_text(_ca("one"))
    store = FakeStorage()
    publisher = TrustPublisher(store, AuthenticationInfo.from_flags(str(ca), str(ca), "front-proxy-client",
                                                                    "X-Remote-User", "X-Remote-Group",
                                                                    "X-Remote-Extra-"))
    assert await publisher.reconcile(NOW) is True
    assert store.obj is not None and store.obj["metadata"]["namespace"] == "kube-system"
    assert store.obj["metadata"]["name"] == "extension-apiserver-authentication"
    assert await publisher.reconcile(NOW) is False and store.writes == 1
    rotated = _ca("two")
    ca.write_text(rotated)  # a rotated file reaches the ConfigMap, the old CA stays until it expires
    assert await publisher.reconcile(NOW) is True
    assert store.obj["data"]["client-ca-file"].endswith(rotated)
    assert store.obj["data"]["client-ca-file"].count("BEGIN CERTIFICATE") == 2
