"""Bootstrap tokens (kube-system Secrets of type bootstrap.kubernetes.io/token) with an injected clock."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kapi.attributes import UserInfo
from services.authn.authenticator import NOT_MINE
from services.authn.bootstrap import BootstrapTokenAuthenticator
from services.authn.objects import ObjectIndex, ObjectLookup

NOW = 1_900_000_000.0  # 2030-03-17T17:46:40Z


def secret(token_id: str = "abcdef", token_secret: str = "0123456789abcdef", *, type_: str =
           "bootstrap.kubernetes.io/token", namespace: str = "kube-system", deleting: bool = False,
           **data: str) -> dict[str, Any]:
    values = {"token-id": token_id, "token-secret": token_secret, "usage-bootstrap-authentication": "true", **data}
    meta: dict[str, Any] = {"name": f"bootstrap-token-{token_id}", "namespace": namespace, "uid": "u"}
    if deleting:
        meta["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    return {"kind": "Secret", "type": type_, "metadata": meta,
            "data": {k.replace("_", "-"): base64.b64encode(v.encode()).decode() for k, v in values.items()}}


def auth_with(*secrets: dict[str, Any]) -> BootstrapTokenAuthenticator:
    index = ObjectIndex()
    index.replace("secrets", list(secrets), 1)
    return BootstrapTokenAuthenticator(ObjectLookup(index), clock=lambda: NOW)


async def test_valid_token() -> None:
    auth = auth_with(secret(**{"auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
                               "expiration": "2030-03-17T17:46:45Z"}))
    result = await auth.authenticate_token("abcdef.0123456789abcdef")
    assert result.ok and result.response is not None
    assert result.response.user == UserInfo("system:bootstrap:abcdef", "", (
        "system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token"))
    assert result.response.cache_ttl_seconds == 5  # never past the expiration


@pytest.mark.parametrize(("token", "secrets"), [
    ("abcdef.0123456789abcdef", [secret(expiration="2030-03-17T17:46:39Z")]),
    ("abcdef.0123456789abcdef", [secret(token_secret="ffffffffffffffff")]),
    ("abcdef.0123456789abcdef", [secret(usage_bootstrap_authentication="false")]),
    ("abcdef.0123456789abcdef", [secret(type_="Opaque")]),
    ("abcdef.0123456789abcdef", [secret(deleting=True)]),
    ("abcdef.0123456789abcdef", [secret(namespace="default")]),
    ("abcdef.0123456789abcdef", []),
    ("ABCDEF.0123456789abcdef", [secret()]),
    ("abcdef.0123456789abcde", [secret()]),
    ("not-a-bootstrap-token", [secret()]),
], ids=["expired", "wrong-secret", "no-usage", "wrong-type", "deleting", "other-namespace", "absent", "upper-case",
        "short", "other-shape"])
async def test_not_mine(token: str, secrets: list[dict[str, Any]]) -> None:
    assert await auth_with(*secrets).authenticate_token(token) == NOT_MINE


async def test_invalid_extra_groups_is_an_error() -> None:
    result = await auth_with(secret(**{"auth-extra-groups": "system:masters"})).authenticate_token(
        "abcdef.0123456789abcdef")
    assert not result.ok and "invalid auth-extra-groups" in (result.error or "")
