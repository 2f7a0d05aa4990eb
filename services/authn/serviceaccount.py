"""Service-account tokens: signing (TokenRequest), verification, and the issuer's discovery documents.

Follows kube-apiserver's bound service-account tokens (KEP-1205, "Managing
Service Accounts", "Service account issuer discovery"; kube 1.24+ with no
legacy Secret-based tokens). A token is a JWT signed with
``--service-account-signing-key-file`` (RS256 for RSA keys, ES256/384/512
for EC keys; the key id is the unpadded base64url SHA-256 of the public
key's DER SubjectPublicKeyInfo, as kube computes it) carrying::

    iss, sub = system:serviceaccount:<ns>:<name>, aud, exp, iat, nbf, jti,
    kubernetes.io: {namespace, serviceaccount: {name, uid}, pod|secret: {name, uid}}

Verification (``--service-account-key-file``, several keys allowed):
a token whose ``iss`` is not one of ``--service-account-issuer`` is not
ours (NOT_MINE, so another JWT authenticator may take it); otherwise the
signature must verify with an allowed algorithm (``alg: none`` never does),
exp/nbf/iat hold within kube's one-minute leeway (``iat`` beyond it: issued
in the future), the audiences intersect the target audiences, and the ServiceAccount (and bound object) still exist
with the token's uids.
"""

from __future__ import annotations

import base64
import hashlib
import re
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kapi import errors, jsonutil
from kapi.attributes import SERVICE_ACCOUNT_PREFIX, UserInfo
from services.authn.authenticator import DEFAULT_CACHE_TTL_SECONDS, NOT_MINE, Result, failed, succeeded
from services.authn.objects import PODS, SECRETS, SERVICE_ACCOUNTS, ObjectLookup

NAME = "service-account"
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
ALL_SERVICE_ACCOUNTS = "system:serviceaccounts"
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 600
MAX_EXPIRATION_SECONDS = 1 << 32
LEEWAY_SECONDS = 60  # go-jose's DefaultLeeway, used by kube's validator
PRIVATE_CLAIM = "kubernetes.io"
EXTRA_POD_NAME = "authentication.kubernetes.io/pod-name"
EXTRA_POD_UID = "authentication.kubernetes.io/pod-uid"
EXTRA_CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"
INVALIDATED = "service account token has been invalidated"

Clock = Callable[[], float]
PublicKeyType = rsa.RSAPublicKey | ec.EllipticCurvePublicKey
PrivateKeyType = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----.+?-----END \1-----", re.DOTALL)
_EC_ALGS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}


def service_account_username(namespace: str, name: str) -> str:
    """``system:serviceaccount:<namespace>:<name>``."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """``system:serviceaccounts`` and ``system:serviceaccounts:<namespace>``."""
    return (ALL_SERVICE_ACCOUNTS, f"{ALL_SERVICE_ACCOUNTS}:{namespace}")


# ------------------------------------------------------------------ keys


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def key_id(public_key: PublicKeyType) -> str:
    """kube's key id: unpadded base64url of SHA-256 over the DER SubjectPublicKeyInfo."""
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return _b64(hashlib.sha256(der).digest())


def algorithm(key: PublicKeyType | PrivateKeyType) -> str:
    """The JWS algorithm kube uses for a key: RS256, or ES256/ES384/ES512 by curve; ValueError otherwise."""
    if isinstance(key, (rsa.RSAPublicKey, rsa.RSAPrivateKey)):
        return "RS256"
    if isinstance(key, (ec.EllipticCurvePublicKey, ec.EllipticCurvePrivateKey)) and key.curve.name in _EC_ALGS:
        return _EC_ALGS[key.curve.name]
    raise ValueError(f"unsupported service-account key type {type(key).__name__}")


@dataclass(frozen=True)
class VerificationKey:
    """One public key that verifies tokens, with its key id and algorithm."""

    key: PublicKeyType
    kid: str
    alg: str

    @classmethod
    def of(cls, key: PublicKeyType) -> VerificationKey:
        """Wrap ``key``; raises ValueError for unsupported key types."""
        return cls(key, key_id(key), algorithm(key))

    def jwk(self) -> dict[str, Any]:
        """The key as a JWK (RFC 7517) with ``use: sig``, ``kid`` and ``alg``."""
        out: dict[str, Any] = {"use": "sig", "kid": self.kid, "alg": self.alg}
        if isinstance(self.key, rsa.RSAPublicKey):
            numbers = self.key.public_numbers()
            out.update(kty="RSA", n=_b64(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
                       e=_b64(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")))
        else:
            ec_numbers = self.key.public_numbers()
            size = (self.key.curve.key_size + 7) // 8
            out.update(kty="EC", crv={"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}[self.alg],
                       x=_b64(ec_numbers.x.to_bytes(size, "big")), y=_b64(ec_numbers.y.to_bytes(size, "big")))
        return out


def parse_public_keys(data: bytes, source: str = "<keys>") -> list[VerificationKey]:
    """Every RSA/EC public key in PEM ``data``: public keys, private keys (their public half) or certificates.

    Raises ValueError when ``data`` holds no usable key (kube's
    ``keyutil.ParsePublicKeysPEM``).
    """
    keys: list[VerificationKey] = []
    for match in _PEM_BLOCK.finditer(data):
        block, kind = match.group(0), match.group(1).decode()
        key: Any
        if kind == "CERTIFICATE":
            key = x509.load_pem_x509_certificate(block).public_key()
        elif "PRIVATE KEY" in kind:
            key = serialization.load_pem_private_key(block, password=None).public_key()
        elif "PUBLIC KEY" in kind:
            key = serialization.load_pem_public_key(block)
        else:
            continue
        keys.append(VerificationKey.of(key))
    if not keys:
        raise ValueError(f"{source}: no RSA or EC public key found")
    return keys


def load_public_keys(paths: Sequence[str]) -> list[VerificationKey]:
    """Keys of every file in ``paths``; raises OSError or ValueError."""
    keys: list[VerificationKey] = []
    for path in paths:
        keys.extend(parse_public_keys(Path(path).read_bytes(), path))
    return keys


def load_signing_key(path: str) -> PrivateKeyType:
    """The PEM private key in ``path`` (RSA or EC); raises OSError or ValueError."""
    key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        raise ValueError(f"{path}: the service-account signing key must be RSA or EC")
    algorithm(key)
    return key


# ---------------------------------------------------------------- issuing


@dataclass(frozen=True)
class BoundObject:
    """TokenRequest ``spec.boundObjectRef`` with the object's current uid."""

    kind: str  # "Pod" or "Secret"
    name: str
    uid: str
    api_version: str = "v1"


@dataclass(frozen=True)
class IssuedToken:
    """A signed token, its expiry (Unix seconds), audiences and granted lifetime (seconds)."""

    token: str
    expiration_timestamp: int
    audiences: tuple[str, ...]
    expiration_seconds: int


class TokenIssuer:
    """Signs bound service-account tokens (kube's ``serviceaccount.JWTTokenGenerator`` + TokenRequest REST).

    ``issuer`` is the first ``--service-account-issuer``; ``api_audiences``
    the default audiences; ``max_expiration_seconds`` (0 = none) caps the
    requested lifetime; ``clock`` returns Unix seconds.
    """

    def __init__(self, signing_key: PrivateKeyType, issuer: str, api_audiences: Sequence[str],
                 max_expiration_seconds: int = 0, clock: Clock = time.time):
        self._key = signing_key
        self._public = VerificationKey.of(signing_key.public_key())
        self.issuer = issuer
        self._api_audiences = tuple(api_audiences)
        self._max = max_expiration_seconds
        self._clock = clock

    def issue(self, namespace: str, name: str, uid: str, audiences: Sequence[str] = (),
              expiration_seconds: int = 0, bound: BoundObject | None = None) -> IssuedToken:
        """Sign a token for ServiceAccount ``namespace/name`` (uid ``uid``).

        ``audiences`` empty -> the API audiences; ``expiration_seconds`` 0 ->
        one hour; below 10 minutes or above 2^32 seconds -> 422 Invalid
        (kube's ValidateTokenRequest messages); above
        ``--service-account-max-token-expiration`` it is shortened.
        """
        expiration = expiration_seconds or DEFAULT_EXPIRATION_SECONDS
        if expiration < MIN_EXPIRATION_SECONDS:
            raise errors.invalid("TokenRequest", name, [errors.Cause(
                "FieldValueInvalid", f"Invalid value: {expiration}: may not specify a duration less than 10 minutes",
                "spec.expirationSeconds")], "authentication.k8s.io")
        if expiration > MAX_EXPIRATION_SECONDS:
            raise errors.invalid("TokenRequest", name, [errors.Cause(
                "FieldValueInvalid", f"Invalid value: {expiration}: may not specify a duration larger than 2^32 "
                "seconds", "spec.expirationSeconds")], "authentication.k8s.io")
        if self._max and expiration > self._max:
            expiration = self._max
        auds = tuple(audiences) or self._api_audiences
        now = int(self._clock())
        private: dict[str, Any] = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}
        if bound is not None:
            private[bound.kind.lower()] = {"name": bound.name, "uid": bound.uid}
        claims = {"aud": list(auds), "exp": now + expiration, "iat": now, "nbf": now, "iss": self.issuer,
                  "jti": str(uuid.uuid4()), PRIVATE_CLAIM: private, "sub": service_account_username(namespace, name)}
        token = jwt.encode(claims, self._key, algorithm=self._public.alg, headers={"kid": self._public.kid})
        return IssuedToken(token, now + expiration, auds, expiration)


def discovery_documents(issuer: str, keys: Sequence[VerificationKey], jwks_uri: str = "") -> tuple[bytes, bytes]:
    """(``/.well-known/openid-configuration``, ``/openid/v1/jwks``) JSON documents (kube's oidc discovery).

    ``jwks_uri`` defaults to ``<issuer>/openid/v1/jwks``.
    """
    config = {
        "issuer": issuer,
        "jwks_uri": jwks_uri or issuer.rstrip("/") + "/openid/v1/jwks",
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": sorted({k.alg for k in keys}),
    }
    unique = {k.kid: k for k in keys}
    return jsonutil.dumps(config), jsonutil.dumps({"keys": [k.jwk() for k in unique.values()]})


# ----------------------------------------------------------- verification


def unverified_claims(token: str) -> dict[str, Any] | None:
    """The payload of a compact JWS without checking it, or None if ``token`` is not one."""
    if token.count(".") != 2:
        return None
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return None
    return claims if isinstance(claims, dict) else None


def _audiences(claims: Mapping[str, Any]) -> tuple[str, ...]:
    aud = claims.get("aud")
    if isinstance(aud, str):
        return (aud,)
    if isinstance(aud, list):
        return tuple(a for a in aud if isinstance(a, str))
    return ()


def _fmt(values: Sequence[str]) -> str:
    return "[" + " ".join(f'"{v}"' for v in values) + "]"


def check_times(claims: Mapping[str, Any], now: float, leeway: float = LEEWAY_SECONDS) -> str | None:
    """Why ``exp``/``nbf``/``iat`` make the token unusable at ``now`` (Unix seconds), or None. ``exp`` is required.

    kube's ``pkg/serviceaccount/claims.go`` ``validator.Validate``: go-jose's ``Claims.Validate``
    (``jwt.DefaultLeeway``, one minute) answers ErrNotValidYet for ``nbf`` after now + leeway, ErrExpired for
    ``exp`` before now - leeway and ErrIssuedInTheFuture for ``iat`` after now + leeway, each mapped to its
    ``service account token ...`` error (401).
    """
    exp, nbf, iat = claims.get("exp"), claims.get("nbf"), claims.get("iat")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        return "service account token has no valid expiration"
    if nbf is not None and (not isinstance(nbf, (int, float)) or isinstance(nbf, bool) or now + leeway < nbf):
        return "service account token is not valid yet"
    if now > exp + leeway:
        return "service account token has expired"
    if iat is not None and (not isinstance(iat, (int, float)) or isinstance(iat, bool) or now + leeway < iat):
        return "service account token is issued in the future"
    return None


class ServiceAccountTokenAuthenticator:
    """Verifies service-account JWTs (kube's ``jwtTokenAuthenticator`` with the bound-token validator).

    ``lookup`` None disables the existence check (``--service-account-lookup=false``).
    """

    def __init__(self, keys: Sequence[VerificationKey], issuers: Sequence[str], lookup: ObjectLookup | None,
                 clock: Clock = time.time):
        if not keys:
            raise ValueError("service-account token authentication needs at least one public key")
        self._keys = tuple(keys)
        self._issuers = frozenset(issuers)
        self._lookup = lookup
        self._clock = clock

    def _verify(self, token: str) -> dict[str, Any] | str:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            return f"malformed token header: {exc}"
        kid, alg = header.get("kid"), header.get("alg")
        candidates = [k for k in self._keys if k.alg == alg and (not kid or k.kid == kid)]
        if not candidates:
            return f"invalid signature: no verification key for alg {alg!r} and kid {kid!r}"
        options = {"verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False,
                   "verify_iss": False}
        for key in candidates:
            try:
                claims = jwt.decode(token, key.key, algorithms=[key.alg], options=options)  # type: ignore[arg-type]
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError as exc:
                return f"invalid token: {exc}"
            return claims if isinstance(claims, dict) else "invalid token: payload is not an object"
        return "invalid signature"

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> Result:
        """NOT_MINE for non-JWTs and other issuers; an error for any failed check; else the ServiceAccount user."""
        claims = unverified_claims(token)
        if claims is None or claims.get("iss") not in self._issuers:
            return NOT_MINE
        verified = self._verify(token)
        if isinstance(verified, str):
            return failed(verified)
        claims = verified
        now = self._clock()
        problem = check_times(claims, now)
        if problem:
            return failed(problem)
        token_auds = _audiences(claims)
        common = tuple(a for a in token_auds if a in audiences) if audiences else token_auds
        if not common:
            return failed(f"token audiences {_fmt(token_auds)} is invalid for the target audiences "
                          f"{_fmt(audiences)}")
        private = claims.get(PRIVATE_CLAIM)
        if not isinstance(private, dict):
            return failed("service account token claims are missing the kubernetes.io namespace or serviceaccount")
        try:
            namespace = str(private["namespace"])
            sa_name, sa_uid = str(private["serviceaccount"]["name"]), str(private["serviceaccount"]["uid"])
        except (TypeError, KeyError):
            return failed("service account token claims are missing the kubernetes.io namespace or serviceaccount")
        if claims.get("sub") != service_account_username(namespace, sa_name):
            return failed("service account token subject does not match its kubernetes.io claims")
        bound: list[tuple[str, str, str]] = []
        for kind, resource in (("pod", PODS), ("secret", SECRETS)):
            ref = private.get(kind)
            if ref is not None:
                if not isinstance(ref, dict) or not ref.get("name") or not ref.get("uid"):
                    return failed(f"service account token has a malformed {kind} reference")
                bound.append((resource, str(ref["name"]), str(ref["uid"])))
        if self._lookup is not None:
            try:
                if not await self._lookup.current(SERVICE_ACCOUNTS, namespace, sa_name, sa_uid):
                    return failed(INVALIDATED)
                for resource, name, uid in bound:
                    if not await self._lookup.current(resource, namespace, name, uid):
                        return failed(INVALIDATED)
            except errors.StatusError as err:
                return failed(f"service account token could not be checked: {err.message}")
        extra: list[tuple[str, tuple[str, ...]]] = []
        if isinstance(claims.get("jti"), str):
            extra.append((EXTRA_CREDENTIAL_ID, (f"JTI={claims['jti']}",)))
        pod = private.get("pod")
        if isinstance(pod, dict):
            extra += [(EXTRA_POD_NAME, (str(pod["name"]),)), (EXTRA_POD_UID, (str(pod["uid"]),))]
        user = UserInfo(service_account_username(namespace, sa_name), sa_uid, service_account_groups(namespace),
                        tuple(sorted(extra)))
        ttl = max(0, min(DEFAULT_CACHE_TTL_SECONDS, int(claims["exp"] - now)))
        return succeeded(user, NAME, ttl, common)
