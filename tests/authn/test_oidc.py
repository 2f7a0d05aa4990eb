"""OIDC / JWT authentication against a local HTTPS issuer: flags, structured config, CEL rules, key rotation."""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kapi import flags
from kapi.attributes import UserInfo
from services.authn import oidc
from services.authn.authenticator import NOT_MINE

from .oidcutil import Issuer


@pytest.fixture(scope="module")
def issuer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Issuer]:
    iss = Issuer(tmp_path_factory.mktemp("issuer"))
    iss.add_key("k1")
    iss.start()
    try:
        yield iss
    finally:
        iss.stop()


def config(issuer: Issuer, body: str) -> list[oidc.Issuer]:
    ca = "\n".join("        " + line for line in issuer.ca_pem.splitlines())
    return oidc.parse_authentication_config(f"""apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {issuer.url}
    audiences: [kapi, other]
    certificateAuthority: |
{ca}
{body}""")


STRUCTURED = """  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  - expression: 'claims.exp - claims.iat <= 3600'
    message: tokens may live one hour at most
  claimMappings:
    username:
      expression: '"oidc:" + claims.email'
    groups:
      claim: roles
      prefix: "oidc:"
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: 'has(claims.tenant) ? claims.tenant : ""'
  userValidationRules:
  - expression: "!user.username.startsWith('oidc:system')"
    message: no system users
"""


async def test_structured_config(issuer: Issuer) -> None:
    [cfg] = config(issuer, STRUCTURED)
    auth = oidc.OIDCAuthenticator(cfg)
    token = issuer.token(hd="example.com", email="ann@example.com", roles=["dev", "ops"], tenant="t1")
    result = await auth.authenticate_token(token)
    assert result.ok and result.response is not None, result
    assert result.response.user == UserInfo("oidc:ann@example.com", "user-1", ("oidc:dev", "oidc:ops"),
                                            (("example.com/tenant", ("t1",)),))
    now = int(time.time())
    for claims, error in [
        ({"hd": "evil.com", "email": "a@b"}, "required claim hd"),
        ({"hd": "example.com", "email": "a@b", "exp": now + 7200}, "tokens may live one hour at most"),
        ({"hd": "example.com", "email": "system@x"}, "no system users"),
        ({"hd": "example.com"}, "CEL evaluation failed"),
        ({"hd": "example.com", "email": "a@b", "aud": "someone-else"}, "expected audience"),
        ({"hd": "example.com", "email": "a@b", "exp": now - 10}, "token is expired"),
        ({"hd": "example.com", "email": "a@b", "nbf": now + 3600}, "before the nbf"),
    ]:
        result = await auth.authenticate_token(issuer.token(**claims))
        assert not result.ok and error in (result.error or ""), (claims, result)


async def test_flags_and_legacy_prefix(issuer: Issuer, tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text(issuer.ca_pem)
    args = flags.parse(flags.AUTHN, [f"--oidc-issuer-url={issuer.url}", "--oidc-client-id=kapi",
                                     "--oidc-groups-claim=groups", "--oidc-required-claim=team=blue",
                                     f"--oidc-ca-file={tmp_path / 'ca.crt'}"])
    [auth] = oidc.build(args)
    result = await auth.authenticate_token(issuer.token(groups=["g"], team="blue"))
    assert result.ok and result.response is not None
    assert result.response.user == UserInfo(f"{issuer.url}#user-1", "", ("g",))
    assert not (await auth.authenticate_token(issuer.token(team="red"))).ok
    email = oidc.build(argparse.Namespace(**{**vars(args), "oidc_username_claim": "email"}))[0]
    ok = await email.authenticate_token(issuer.token(email="e@x", email_verified=True, team="blue"))
    assert ok.ok and ok.response is not None and ok.response.user.username == "e@x"
    unverified = await email.authenticate_token(issuer.token(email="e@x", email_verified=False, team="blue"))
    assert not unverified.ok and "email not verified" in (unverified.error or "")


async def test_unknown_kid_refreshes_keys(issuer: Issuer) -> None:
    [cfg] = config(issuer, "  claimMappings:\n    username: {claim: sub, prefix: ''}\n")
    auth = oidc.OIDCAuthenticator(cfg, oidc.JWKS(cfg, refresh_interval=0))
    assert (await auth.authenticate_token(issuer.token())).ok
    fetches = issuer.jwks_fetches
    assert (await auth.authenticate_token(issuer.token())).ok
    assert issuer.jwks_fetches == fetches  # known kid: no fetch
    issuer.add_key("k2")
    result = await auth.authenticate_token(issuer.token("k2"))
    assert result.ok and issuer.jwks_fetches == fetches + 1
    forged = await auth.authenticate_token(issuer.token("k2").rsplit(".", 1)[0] + "." + issuer.token().split(".")[2])
    assert not forged.ok


async def test_other_issuers_and_attacks(issuer: Issuer) -> None:
    [cfg] = config(issuer, "  claimMappings:\n    username: {claim: sub, prefix: ''}\n")
    auth = oidc.OIDCAuthenticator(cfg)
    assert await auth.authenticate_token("opaque") == NOT_MINE
    assert await auth.authenticate_token(issuer.token(iss="https://other.example")) == NOT_MINE
    header, payload, _ = issuer.token().split(".")
    none = await auth.authenticate_token("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + payload + ".")
    assert not none.ok and "not allowed" in (none.error or "")


@pytest.mark.parametrize(("body", "error"), [
    ("  claimMappings:\n    username: {claim: sub}\n", "prefix is required"),
    ("  claimMappings:\n    username: {expression: 'claims.('}\n", "invalid CEL expression"),
    ("  claimMappings: {}\n", "username: Required"),
])
def test_invalid_config(issuer: Issuer, body: str, error: str) -> None:
    with pytest.raises(oidc.ConfigError) as info:
        config(issuer, body)
    assert error in str(info.value)


def test_http_issuer_refused() -> None:
    with pytest.raises(oidc.ConfigError):
        oidc.parse_authentication_config("apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n"
                                         "jwt:\n- issuer: {url: 'http://x', audiences: [a]}\n"
                                         "  claimMappings: {username: {claim: sub, prefix: ''}}\n")
