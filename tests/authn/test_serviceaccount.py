"""Service-account tokens: issuing, verification and the JWT attacks, with an injected clock."""

from __future__ import annotations

import base64
import json
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kapi import errors, jsonutil
from kapi.attributes import split_service_account
from services.authn.authenticator import NOT_MINE
from services.authn.objects import ObjectIndex, ObjectLookup
from services.authn.serviceaccount import (
    BoundObject,
    ServiceAccountTokenAuthenticator,
    TokenIssuer,
    VerificationKey,
    discovery_documents,
    key_id,
    parse_public_keys,
)

ISSUER = "https://kubernetes.default.svc.cluster.local"
API = (ISSUER,)
NOW = 1_700_000_000.0
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
VKEY = VerificationKey.of(KEY.public_key())


def clock() -> float:
    return NOW


def index_with(*objects: tuple[str, str, str, str]) -> ObjectIndex:
    index = ObjectIndex()
    by: dict[str, list[dict[str, Any]]] = {"serviceaccounts": [], "pods": [], "secrets": []}
    for resource, ns, name, uid in objects:
        by[resource].append({"metadata": {"namespace": ns, "name": name, "uid": uid}})
    for resource, items in by.items():
        index.replace(resource, items, 1)
    return index


INDEX = index_with(("serviceaccounts", "ns", "builder", "sa-uid"), ("pods", "ns", "web", "pod-uid"),
                   ("secrets", "ns", "s", "secret-uid"))
ISSUE = TokenIssuer(KEY, ISSUER, API, clock=clock)
AUTH = ServiceAccountTokenAuthenticator([VKEY], [ISSUER], ObjectLookup(INDEX), clock=clock)


def forge(claims: dict[str, Any], key: Any = KEY, alg: str = "RS256", kid: str | None = VKEY.kid) -> str:
    headers = {"kid": kid} if kid else {}
    return jwt.encode(claims, key, algorithm=alg, headers=headers)


def claims(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "iss": ISSUER, "sub": "system:serviceaccount:ns:builder", "aud": [ISSUER], "iat": int(NOW),
        "nbf": int(NOW), "exp": int(NOW) + 3600, "jti": "j1",
        "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "builder", "uid": "sa-uid"}},
    }
    base.update(overrides)
    return base


def b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def alg_none() -> str:
    return f"{b64({'alg': 'none', 'typ': 'JWT'})}.{b64(claims())}."


def tampered() -> str:
    header, payload, signature = ISSUE.issue("ns", "builder", "sa-uid").token.split(".")
    body = json.loads(base64.urlsafe_b64decode(payload + "=="))
    body["kubernetes.io"]["serviceaccount"]["name"] = "admin"
    body["sub"] = "system:serviceaccount:ns:admin"
    return f"{header}.{b64(body)}.{signature}"


async def test_issued_token_authenticates() -> None:
    issued = ISSUE.issue("ns", "builder", "sa-uid")
    assert issued.expiration_timestamp == int(NOW) + 3600 and issued.audiences == API
    header = jwt.get_unverified_header(issued.token)
    assert header["alg"] == "RS256" and header["kid"] == key_id(KEY.public_key())
    result = await AUTH.authenticate_token(issued.token, API)
    assert result.ok and result.response is not None
    user = result.response.user
    assert user.username == "system:serviceaccount:ns:builder" and user.uid == "sa-uid"
    assert user.groups == ("system:serviceaccounts", "system:serviceaccounts:ns")
    assert dict(user.extra)["authentication.kubernetes.io/credential-id"][0].startswith("JTI=")
    assert result.response.audiences == API
    assert result.response.cache_ttl_seconds == 10


async def test_cache_ttl_never_outlives_the_token() -> None:
    token = forge(claims(exp=int(NOW) + 4))
    result = await AUTH.authenticate_token(token, API)
    assert result.ok and result.response is not None and result.response.cache_ttl_seconds == 4


async def test_bound_pod_token_carries_pod_extra() -> None:
    token = ISSUE.issue("ns", "builder", "sa-uid", ("vault",), 600, BoundObject("Pod", "web", "pod-uid")).token
    result = await AUTH.authenticate_token(token, ("vault",))
    assert result.ok and result.response is not None
    extra = dict(result.response.user.extra)
    assert extra["authentication.kubernetes.io/pod-name"] == ("web",)
    assert extra["authentication.kubernetes.io/pod-uid"] == ("pod-uid",)


@pytest.mark.parametrize(
    ("token", "audiences", "error"),
    [
        (forge(claims(exp=int(NOW) - 120)), API, "service account token has expired"),
        (forge(claims(nbf=int(NOW) + 600)), API, "service account token is not valid yet"),
        (forge(claims(iat=int(NOW) + 61)), API, "service account token is issued in the future"),
        (forge(claims(aud=["other"])), API, 'token audiences ["other"] is invalid for the target audiences'),
        (forge(claims(), key=OTHER_KEY), API, "invalid signature"),
        (forge(claims(), kid=None, key=OTHER_KEY), API, "invalid signature"),
        (tampered(), API, "invalid signature"),
        (alg_none(), API, "no verification key for alg 'none'"),
        (forge(claims(), alg="HS256", key=KEY.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()[:40]),
         API, "no verification key for alg 'HS256'"),
        (forge(claims(**{"kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "builder",
                                                                                 "uid": "old-uid"}}})),
         API, "service account token has been invalidated"),
        (forge(claims(sub="system:serviceaccount:ns:gone", **{"kubernetes.io": {
            "namespace": "ns", "serviceaccount": {"name": "gone", "uid": "x"}}})),
         API, "service account token has been invalidated"),
        (ISSUE.issue("ns", "builder", "sa-uid", bound=BoundObject("Pod", "web", "old-pod")).token, API,
         "service account token has been invalidated"),
        (ISSUE.issue("ns", "builder", "sa-uid", bound=BoundObject("Secret", "gone", "u")).token, API,
         "service account token has been invalidated"),
        (forge(claims(sub="system:serviceaccount:ns:admin")), API, "subject does not match"),
        (forge(claims(exp=None)), API, "no valid expiration"),
        (forge({k: v for k, v in claims().items() if k != "kubernetes.io"}), API, "missing the kubernetes.io"),
    ],
    ids=["expired", "not-yet-valid", "issued-in-the-future",
         "wrong-audience", "foreign-key", "foreign-key-no-kid", "tampered", "alg-none",
         "alg-hs256", "sa-recreated", "sa-deleted", "pod-recreated", "secret-deleted", "sub-mismatch", "no-exp",
         "no-private-claims"],
)
async def test_attacks_fail(token: str, audiences: tuple[str, ...], error: str) -> None:
    result = await AUTH.authenticate_token(token, audiences)
    assert not result.ok
    assert result.error is not None and error in result.error


@pytest.mark.parametrize("token", ["opaque-token", "a.b.c", forge(claims(iss="https://evil.example"))],
                         ids=["opaque", "not-json", "wrong-issuer"])
async def test_not_mine(token: str) -> None:
    assert await AUTH.authenticate_token(token, API) == NOT_MINE


async def test_leeway_accepts_just_expired() -> None:
    result = await AUTH.authenticate_token(forge(claims(exp=int(NOW) - 30)), API)
    assert result.ok and result.response is not None and result.response.cache_ttl_seconds == 0


async def test_leeway_accepts_iat_within_a_minute_ahead() -> None:
    # go-jose's DefaultLeeway: a clock one minute behind the issuer's still accepts the token
    assert (await AUTH.authenticate_token(forge(claims(iat=int(NOW) + 60)), API)).ok


def test_expiration_validation() -> None:
    with pytest.raises(errors.StatusError) as info:
        ISSUE.issue("ns", "builder", "sa-uid", expiration_seconds=599)
    assert info.value.code == 422
    assert info.value.message == ('TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: '
                                  "Invalid value: 599: may not specify a duration less than 10 minutes")
    capped = TokenIssuer(KEY, ISSUER, API, max_expiration_seconds=1800, clock=clock)
    assert capped.issue("ns", "b", "u", expiration_seconds=7200).expiration_seconds == 1800


async def test_ec_keys_and_discovery() -> None:
    ec_key = ec.generate_private_key(ec.SECP256R1())
    issuer = TokenIssuer(ec_key, ISSUER, API, clock=clock)
    token = issuer.issue("ns", "builder", "sa-uid").token
    assert jwt.get_unverified_header(token)["alg"] == "ES256"
    pem = ec_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                               serialization.NoEncryption())
    keys = parse_public_keys(pem + KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                                                  serialization.PublicFormat.SubjectPublicKeyInfo))
    auth = ServiceAccountTokenAuthenticator(keys, [ISSUER], ObjectLookup(INDEX), clock=clock)
    assert (await auth.authenticate_token(token, API)).ok
    config, jwks = discovery_documents(ISSUER, keys)
    doc = jsonutil.loads(config)
    assert doc["issuer"] == ISSUER and doc["jwks_uri"] == ISSUER + "/openid/v1/jwks"
    assert doc["id_token_signing_alg_values_supported"] == ["ES256", "RS256"]
    jwk_set = jwt.PyJWKSet.from_dict(jsonutil.loads(jwks))
    by_kid = {k.key_id: k for k in jwk_set.keys}
    assert jwt.decode(token, by_kid[keys[0].kid].key, algorithms=["ES256"], audience=ISSUER,
                      options={"verify_exp": False})["iss"] == ISSUER


@pytest.mark.parametrize(("username", "expected"), [
    ("system:serviceaccount:ns:sa", ("ns", "sa")),
    ("system:serviceaccount:ns", None),
    ("system:serviceaccount::sa", None),
    ("alice", None),
    ("system:serviceaccount:ns:a:b", None),
])
def test_split_username(username: str, expected: tuple[str, str] | None) -> None:
    assert split_service_account(username) == expected
