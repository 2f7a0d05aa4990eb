"""OpenID Connect / JWT authentication ("Authenticating", "OpenID Connect Tokens"; KEP-3331 structured
authentication configuration).

Two ways to configure, mutually exclusive as in kube-apiserver:

- the ``--oidc-*`` flags: one issuer (``--oidc-issuer-url``, ``--oidc-client-id``,
  ``--oidc-username-claim`` (default ``sub``; a claim other than ``email``
  gets the prefix ``<issuer>#`` unless ``--oidc-username-prefix`` says
  otherwise, ``-`` meaning none), ``--oidc-groups-claim``,
  ``--oidc-groups-prefix``, ``--oidc-required-claim key=value,...``,
  ``--oidc-ca-file``, ``--oidc-signing-algs``);
- ``--authentication-config`` (``apiserver.config.k8s.io/v1[beta1]``
  AuthenticationConfiguration): several ``jwt`` issuers, each with
  ``issuer`` (url, discoveryURL, audiences, certificateAuthority),
  ``claimValidationRules`` (claim+requiredValue or a CEL ``expression``
  with ``message``), ``claimMappings`` (username, groups, uid: claim+prefix
  or CEL expression; extra: key+valueExpression) and ``userValidationRules``.

CEL runs on the ``common-expression-language`` library with the variables
``claims`` (and ``user`` for user rules). Keys come from the issuer's
discovery document (``<url>/.well-known/openid-configuration`` or
``discoveryURL``) and its ``jwks_uri``, fetched on first use and again when
a token names an unknown key id (at most every ``refresh_interval``
seconds). A token whose ``iss`` is not this issuer is not recognised, so
several issuers form a union; any failed check of our own issuer's token is
an error (401). Answers are cached at most until the token expires.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jwt
import yaml

from kapi.attributes import UserInfo
from kapi.cel.engine import cel
from services.authn.authenticator import DEFAULT_CACHE_TTL_SECONDS, NOT_MINE, Result, failed, succeeded
from services.authn.serviceaccount import unverified_claims

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

NAME = "oidc"
SUPPORTED_ALGS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
FETCH_TIMEOUT = 10.0
NBF_LEEWAY = 300.0  # go-oidc's allowed clock skew for nbf/iat


class ConfigError(ValueError):
    """An invalid OIDC / authentication configuration (the service refuses to start)."""


@dataclass(frozen=True)
class Mapping_:
    """A claim mapping: ``claim`` with ``prefix``, or a CEL ``expression`` (compiled)."""

    claim: str = ""
    prefix: str = ""
    expression: Any = None  # cel.Program


@dataclass(frozen=True)
class Rule:
    """A validation rule: ``claim`` must equal ``required_value``, or ``expression`` must be true."""

    claim: str = ""
    required_value: str = ""
    expression: Any = None
    message: str = ""


@dataclass(frozen=True)
class Issuer:
    """One JWT issuer's configuration (AuthenticationConfiguration ``jwt[]`` item)."""

    url: str
    audiences: tuple[str, ...]
    username: Mapping_
    discovery_url: str = ""
    ca_pem: str = ""
    signing_algs: tuple[str, ...] = SUPPORTED_ALGS
    groups: Mapping_ | None = None
    uid: Mapping_ | None = None
    extra: tuple[tuple[str, Any], ...] = ()
    claim_rules: tuple[Rule, ...] = ()
    user_rules: tuple[Rule, ...] = ()
    email_verified_required: bool = False


def _compile(expression: str, where: str) -> Any:
    try:
        return cel.compile(expression)
    except ValueError as exc:
        raise ConfigError(f"{where}: invalid CEL expression {expression!r}: {exc}") from None


def _mapping(doc: Any, where: str, prefix_required: bool) -> Mapping_ | None:
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ConfigError(f"{where}: must be an object")
    claim, expression = str(doc.get("claim") or ""), str(doc.get("expression") or "")
    if bool(claim) == bool(expression):
        raise ConfigError(f"{where}: exactly one of claim or expression is required")
    if expression:
        if doc.get("prefix") is not None:
            raise ConfigError(f"{where}.prefix: may not be set when expression is set")
        return Mapping_(expression=_compile(expression, f"{where}.expression"))
    if prefix_required and doc.get("prefix") is None:
        raise ConfigError(f"{where}.prefix: Required value: prefix is required when claim is set")
    return Mapping_(claim=claim, prefix=str(doc.get("prefix") or ""))


def _rules(items: Any, where: str, claim_allowed: bool) -> tuple[Rule, ...]:
    rules = []
    for i, item in enumerate(items or []):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{at}: must be an object")
        if item.get("expression"):
            rules.append(Rule(expression=_compile(str(item["expression"]), f"{at}.expression"),
                              message=str(item.get("message") or "")))
        elif claim_allowed and item.get("claim"):
            rules.append(Rule(claim=str(item["claim"]), required_value=str(item.get("requiredValue") or "")))
        else:
            raise ConfigError(f"{at}: an expression{' or a claim' if claim_allowed else ''} is required")
    return tuple(rules)


def parse_authentication_config(text: str, source: str = "<authentication config>") -> list[Issuer]:
    """The JWT issuers of an AuthenticationConfiguration document; raises :class:`ConfigError`."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "AuthenticationConfiguration":
        raise ConfigError(f"{source}: expected kind AuthenticationConfiguration")
    if str(doc.get("apiVersion")) not in ("apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1",
                                          "apiserver.config.k8s.io/v1alpha1"):
        raise ConfigError(f"{source}: unsupported apiVersion {doc.get('apiVersion')!r}")
    issuers: list[Issuer] = []
    for i, item in enumerate(doc.get("jwt") or []):
        at = f"jwt[{i}]"
        issuer = item.get("issuer") or {}
        url = str(issuer.get("url") or "")
        if not url.startswith("https://"):
            raise ConfigError(f"{at}.issuer.url: must use https scheme, got {url!r}")
        if any(existing.url == url for existing in issuers):
            raise ConfigError(f"{at}.issuer.url: Duplicate value: {url!r}")
        audiences = tuple(str(a) for a in issuer.get("audiences") or ())
        if not audiences:
            raise ConfigError(f"{at}.issuer.audiences: Required value: at least one issuer.audiences is required")
        mappings = item.get("claimMappings") or {}
        username = _mapping(mappings.get("username"), f"{at}.claimMappings.username", True)
        if username is None:
            raise ConfigError(f"{at}.claimMappings.username: Required value")
        extra = []
        for j, entry in enumerate(mappings.get("extra") or []):
            key = str(entry.get("key") or "")
            if not key or key != key.lower() or "/" not in key:
                raise ConfigError(f"{at}.claimMappings.extra[{j}].key: must be a lower-case domain-prefixed path")
            extra.append((key, _compile(str(entry.get("valueExpression") or ""),
                                        f"{at}.claimMappings.extra[{j}].valueExpression")))
        issuers.append(Issuer(
            url=url, audiences=audiences, username=username, discovery_url=str(issuer.get("discoveryURL") or ""),
            ca_pem=str(issuer.get("certificateAuthority") or ""),
            groups=_mapping(mappings.get("groups"), f"{at}.claimMappings.groups", True),
            uid=_mapping(mappings.get("uid"), f"{at}.claimMappings.uid", False), extra=tuple(extra),
            claim_rules=_rules(item.get("claimValidationRules"), f"{at}.claimValidationRules", True),
            user_rules=_rules(item.get("userValidationRules"), f"{at}.userValidationRules", False),
            email_verified_required=username.claim == "email"))
    if not issuers:
        raise ConfigError(f"{source}: no jwt issuers")
    return issuers


def issuer_from_flags(args: Any) -> Issuer | None:
    """The one issuer the ``--oidc-*`` flags describe, or None without ``--oidc-issuer-url``."""
    url = getattr(args, "oidc_issuer_url", "")
    if not url:
        return None
    if not url.startswith("https://"):
        raise ConfigError(f"--oidc-issuer-url must use https, got {url!r}")
    if not args.oidc_client_id:
        raise ConfigError("--oidc-client-id is required with --oidc-issuer-url")
    claim = args.oidc_username_claim or "sub"
    prefix = args.oidc_username_prefix
    if prefix == "-":
        prefix = ""
    elif not prefix and claim != "email":
        prefix = f"{url}#"
    groups = Mapping_(claim=args.oidc_groups_claim, prefix=args.oidc_groups_prefix) \
        if args.oidc_groups_claim else None
    rules = []
    for pair in (p for p in args.oidc_required_claim.split(",") if p.strip()):
        key, sep, value = pair.partition("=")
        if not sep:
            raise ConfigError(f"--oidc-required-claim: expected key=value, got {pair!r}")
        rules.append(Rule(claim=key.strip(), required_value=value.strip()))
    algs = tuple(a.strip() for a in args.oidc_signing_algs.split(",") if a.strip())
    unknown = [a for a in algs if a not in SUPPORTED_ALGS]
    if unknown:
        raise ConfigError(f"--oidc-signing-algs: unsupported {unknown}")
    ca = Path(args.oidc_ca_file).read_text() if args.oidc_ca_file else ""
    return Issuer(url=url, audiences=(args.oidc_client_id,), username=Mapping_(claim=claim, prefix=prefix),
                  ca_pem=ca, signing_algs=algs, groups=groups, claim_rules=tuple(rules),
                  email_verified_required=claim == "email")


def _cel_value(value: Any) -> Any:
    """Convert a CEL result to plain Python (lists, dicts, strings ...)."""
    if isinstance(value, (list, tuple)):
        return [_cel_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _cel_value(v) for k, v in value.items()}
    return value


def _evaluate(program: Any, variables: Mapping[str, Any]) -> Any:
    return _cel_value(program.execute(cel.Context(dict(variables))))


class _EvaluationError(Exception):
    pass


def _strings(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return [v for v in value if v]
    raise _EvaluationError(f"{what} must be a string or a list of strings")


class JWKS:
    """The issuer's signing keys, fetched from its discovery document; refreshed on an unknown key id."""

    def __init__(self, issuer: Issuer, refresh_interval: float = 1.0, clock: Callable[[], float] = time.monotonic):
        self._issuer = issuer
        self._keys: dict[str, Any] = {}
        self._unnamed: list[Any] = []
        self._fetched_at: float | None = None
        self._refresh_interval = refresh_interval
        self._clock = clock
        self._lock = asyncio.Lock()
        self._ssl: ssl.SSLContext | None = None
        if issuer.ca_pem:
            self._ssl = ssl.create_default_context(cadata=issuer.ca_pem)

    async def _get(self, session: aiohttp.ClientSession, url: str) -> Any:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=FETCH_TIMEOUT), ssl=self._ssl or True) as r:
            if r.status != 200:
                raise ValueError(f"GET {url}: HTTP {r.status}")
            return await r.json(content_type=None)

    async def _fetch(self) -> None:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        url = self._issuer.discovery_url or self._issuer.url.rstrip("/") + "/.well-known/openid-configuration"
        async with aiohttp.ClientSession() as session:
            discovery = await self._get(session, url)
            if not isinstance(discovery, dict) or not discovery.get("jwks_uri"):
                raise ValueError(f"{url}: no jwks_uri")
            if not self._issuer.discovery_url and discovery.get("issuer") != self._issuer.url:
                raise ValueError(f"{url}: issuer {discovery.get('issuer')!r} does not match {self._issuer.url!r}")
            document = await self._get(session, str(discovery["jwks_uri"]))
        keys: dict[str, Any] = {}
        unnamed: list[Any] = []
        for entry in (document or {}).get("keys") or []:
            try:
                jwk = jwt.PyJWK(entry)
            except jwt.PyJWTError as exc:
                log.info("skipping unusable JWK from %s: %s", self._issuer.url, exc)
                continue
            if jwk.key_id:
                keys[jwk.key_id] = jwk
            else:
                unnamed.append(jwk)
        self._keys, self._unnamed = keys, unnamed

    async def keys_for(self, kid: str | None) -> list[Any]:
        """Candidate keys for ``kid`` (all unnamed keys too); fetches or refreshes as needed. Raises on fetch errors."""
        async with self._lock:
            now = self._clock()
            stale = self._fetched_at is None or (
                kid is not None and kid not in self._keys and now - self._fetched_at >= self._refresh_interval)
            if stale:
                try:
                    await self._fetch()
                finally:
                    self._fetched_at = now
        if kid is not None and kid in self._keys:
            return [self._keys[kid]]
        return list(self._unnamed) if kid is not None else [*self._keys.values(), *self._unnamed]


class OIDCAuthenticator:
    """Token authenticator for one issuer (see the module docstring); ``clock`` returns Unix seconds."""

    def __init__(self, issuer: Issuer, jwks: JWKS | None = None, clock: Callable[[], float] = time.time):
        self.issuer = issuer
        self._jwks = jwks or JWKS(issuer)
        self._clock = clock

    async def _verify(self, token: str) -> dict[str, Any] | str:
        import aiohttp  # lazy: 0.3 CPU s of the start, and only a webhook needs it
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            return f"oidc: malformed jwt: {exc}"
        alg = header.get("alg")
        if alg not in self.issuer.signing_algs:
            return f"oidc: malformed jwt: alg {alg!r} is not allowed"
        try:
            keys = await self._jwks.keys_for(header.get("kid"))
        except (aiohttp.ClientError, OSError, ValueError, TimeoutError) as exc:
            return f"oidc: fetching keys of {self.issuer.url} failed: {exc}"
        options = {"verify_exp": False, "verify_nbf": False, "verify_iat": False, "verify_aud": False,
                   "verify_iss": False}
        for key in keys:
            try:
                claims = jwt.decode(token, key.key, algorithms=[alg], options=options)  # type: ignore[arg-type]
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError as exc:
                return f"oidc: verify token: {exc}"
            return claims if isinstance(claims, dict) else "oidc: payload is not an object"
        return "oidc: verify token: failed to verify signature: no key matched"

    def _map(self, mapping: Mapping_, claims: Mapping[str, Any], what: str) -> Any:
        if mapping.expression is not None:
            return _evaluate(mapping.expression, {"claims": claims})
        return claims.get(mapping.claim)

    def _user(self, claims: dict[str, Any]) -> UserInfo:
        issuer = self.issuer
        username = self._map(issuer.username, claims, "username")
        if not isinstance(username, str) or not username:
            raise _EvaluationError(f"oidc: username claim {issuer.username.claim or 'expression'!r} not present "
                                   "or not a non-empty string")
        if issuer.email_verified_required and "email_verified" in claims and claims["email_verified"] is not True:
            raise _EvaluationError("oidc: email not verified")
        username = issuer.username.prefix + username
        groups: list[str] = []
        if issuer.groups is not None:
            groups = [issuer.groups.prefix + g for g in _strings(self._map(issuer.groups, claims, "groups"),
                                                                 "groups")]
        uid = ""
        if issuer.uid is not None:
            value = self._map(issuer.uid, claims, "uid")
            if value is not None and not isinstance(value, str):
                raise _EvaluationError("oidc: uid must be a string")
            uid = value or ""
        extra = []
        for key, program in issuer.extra:
            values = _strings(_evaluate(program, {"claims": claims}), f"extra {key}")
            if values:
                extra.append((key, tuple(values)))
        return UserInfo(username, uid, tuple(groups), tuple(sorted(extra)))

    async def authenticate_token(self, token: str, audiences: tuple[str, ...] = ()) -> Result:
        """NOT_MINE for other issuers and non-JWTs; an error for any failed check; else the mapped user."""
        unverified = unverified_claims(token)
        if unverified is None or unverified.get("iss") != self.issuer.url:
            return NOT_MINE
        verified = await self._verify(token)
        if isinstance(verified, str):
            return failed(verified)
        claims = verified
        now = self._clock()
        exp, nbf = claims.get("exp"), claims.get("nbf")
        if not isinstance(exp, (int, float)) or isinstance(exp, bool):
            return failed("oidc: token has no valid exp claim")
        if now >= exp:
            return failed(f"oidc: verify token: oidc: token is expired (Token Expiry: {int(exp)})")
        if isinstance(nbf, (int, float)) and now + NBF_LEEWAY < nbf:
            return failed("oidc: verify token: oidc: current time is before the nbf (not before) time")
        aud = claims.get("aud")
        token_auds = [aud] if isinstance(aud, str) else [a for a in aud if isinstance(a, str)] \
            if isinstance(aud, list) else []
        if not any(a in self.issuer.audiences for a in token_auds):
            return failed(f"oidc: verify token: oidc: expected audience in {list(self.issuer.audiences)} got "
                          f"{token_auds}")
        try:
            for rule in self.issuer.claim_rules:
                if rule.expression is not None:
                    if _evaluate(rule.expression, {"claims": claims}) is not True:
                        return failed(f"oidc: error evaluating claim validation expression: "
                                      f"{rule.message or 'expression returned false'}")
                elif claims.get(rule.claim) != rule.required_value:
                    return failed(f"oidc: required claim {rule.claim} not present or has value "
                                  f"{claims.get(rule.claim)!r}, expected {rule.required_value!r}")
            user = self._user(claims)
            for rule in self.issuer.user_rules:
                info = {"username": user.username, "uid": user.uid, "groups": list(user.groups),
                        "extra": {k: list(v) for k, v in user.extra}}
                if _evaluate(rule.expression, {"user": info}) is not True:
                    return failed(f"oidc: error evaluating user info validation rule: "
                                  f"{rule.message or 'expression returned false'}")
        except _EvaluationError as exc:
            return failed(str(exc))
        except (KeyError, ValueError, TypeError, RuntimeError) as exc:  # a CEL evaluation error (missing key ...)
            return failed(f"oidc: CEL evaluation failed: {type(exc).__name__}: {exc}")
        return succeeded(user, NAME, max(0, min(DEFAULT_CACHE_TTL_SECONDS, int(exp - now))))


def build(args: Any) -> list[OIDCAuthenticator]:
    """Authenticators from ``--authentication-config`` or the ``--oidc-*`` flags; raises ConfigError or OSError."""
    config_file = getattr(args, "authentication_config", "")
    flag_issuer = issuer_from_flags(args)
    if config_file and flag_issuer is not None:
        raise ConfigError("--authentication-config and --oidc-* flags are mutually exclusive")
    issuers: Sequence[Issuer] = []
    if config_file:
        issuers = parse_authentication_config(Path(config_file).read_text(encoding="utf-8"), config_file)
    elif flag_issuer is not None:
        issuers = [flag_issuer]
    return [OIDCAuthenticator(issuer) for issuer in issuers]
