"""X.509 client certificate authentication (k8s.io/apiserver pkg/authentication/request/x509).

The client's leaf certificate must chain to a CA in ``--client-ca-file``;
its subject common name is the user name and its organizations are the
groups ("Authenticating" reference, "X509 client certificates"). An empty
common name is not recognised (kube's ``CommonNameUserConversion``).

Two sources of certificates (``AuthenticateRequest``): the PEM chain of a
TLS connection the gateway terminated itself, or Envoy's
``x-forwarded-client-cert`` header (the last element's URL-encoded ``Cert``,
with its ``Chain`` as intermediates) which the gateway passes only for
requests from the configured front proxy.

Verification follows Go's ``x509.Certificate.Verify`` with
``ExtKeyUsageClientAuth`` as kube uses it: each link's issuer name and
signature, every certificate's validity window, CA basic constraints on
issuers, path length constraints, and extended key usage (absent, clientAuth
or anyExtendedKeyUsage) on every certificate of the chain. This is done
directly rather than with ``cryptography.x509.verification`` because that
verifier applies the stricter CA/Browser-forum profile (it rejects, e.g.,
client certificates without an authority key identifier, which kube accepts).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import unquote

from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kapi.attributes import UserInfo
from services.authn.authenticator import NOT_MINE, Request, Result, failed, succeeded

NAME = "x509"
MAX_CHAIN_DEPTH = 10

Clock = Callable[[], datetime.datetime]


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class VerifyError(Exception):
    """The certificate chain does not verify; the message says why."""


# ------------------------------------------------------------------ XFCC


def _split_outside_quotes(text: str, sep: str) -> list[str]:
    """Split ``text`` on ``sep`` where it is not inside double quotes (backslash escapes inside quotes)."""
    parts: list[str] = []
    start, in_quotes, i = 0, False, 0
    while i < len(text):
        ch = text[i]
        if in_quotes and ch == "\\":
            i += 2
            continue
        if ch == '"':
            in_quotes = not in_quotes
        elif ch == sep and not in_quotes:
            parts.append(text[start:i])
            start = i + 1
        i += 1
    if in_quotes:
        raise ValueError("x-forwarded-client-cert: unterminated quoted value")
    parts.append(text[start:])
    return parts


def _unquote_value(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == '"' and value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value


def parse_xfcc(value: str) -> list[dict[str, str]]:
    """Parse an ``x-forwarded-client-cert`` value into elements of {lower-cased key: value}.

    Elements are separated by commas and pairs by semicolons, both only
    outside double quotes; a quoted value may contain ``\\"`` escapes
    (Envoy's "x-forwarded-client-cert" header documentation). Values are
    returned unquoted but not URL-decoded. Raises ValueError on an
    unterminated quote or a pair without ``=``.
    """
    elements: list[dict[str, str]] = []
    for element in _split_outside_quotes(value, ","):
        pairs: dict[str, str] = {}
        for pair in _split_outside_quotes(element, ";"):
            if not pair.strip():
                continue
            key, eq, val = pair.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"x-forwarded-client-cert: malformed pair {pair.strip()!r}")
            pairs[key.strip().lower()] = _unquote_value(val)
        if pairs:
            elements.append(pairs)
    return elements


def xfcc_chain(value: str) -> list[x509.Certificate]:
    """The client certificate chain (leaf first) of the last XFCC element, or [] if it has no ``Cert``.

    ``Chain``, when present, supplies the intermediates (its first
    certificate is the leaf again). Raises ValueError on malformed input.
    """
    elements = parse_xfcc(value)
    if not elements:
        return []
    last = elements[-1]
    cert_pem = last.get("cert", "")
    if not cert_pem:
        return []
    leaf = x509.load_pem_x509_certificate(unquote(cert_pem).encode())
    chain = [leaf]
    if last.get("chain"):
        chain.extend(c for c in x509.load_pem_x509_certificates(unquote(last["chain"]).encode()) if c != leaf)
    return chain


# ---------------------------------------------------------- verification


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False


def _path_length(cert: x509.Certificate) -> int | None:
    try:
        return cert.extensions.get_extension_for_class(x509.BasicConstraints).value.path_length
    except x509.ExtensionNotFound:
        return None


def _allows_client_auth(cert: x509.Certificate) -> bool:
    try:
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return True
    return ExtendedKeyUsageOID.CLIENT_AUTH in usages or ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE in usages


def _check_time(cert: x509.Certificate, now: datetime.datetime) -> None:
    if now < cert.not_valid_before_utc:
        raise VerifyError(f"x509: certificate has expired or is not yet valid: current time "
                          f"{now:%Y-%m-%dT%H:%M:%SZ} is before {cert.not_valid_before_utc:%Y-%m-%dT%H:%M:%SZ}")
    if now > cert.not_valid_after_utc:
        raise VerifyError(f"x509: certificate has expired or is not yet valid: current time "
                          f"{now:%Y-%m-%dT%H:%M:%SZ} is after {cert.not_valid_after_utc:%Y-%m-%dT%H:%M:%SZ}")


def _signed_by(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
    except Exception:  # InvalidSignature, issuer name mismatch (ValueError), unsupported key type (TypeError)
        return False
    return True


def verify_chain(chain: Sequence[x509.Certificate], roots: Sequence[x509.Certificate],
                 now: datetime.datetime) -> list[x509.Certificate]:
    """Verify ``chain`` (leaf first, then untrusted intermediates) against ``roots``.

    Returns the verified path leaf -> root. Raises :class:`VerifyError`
    when no path verifies; the message names the most specific failure
    (expired, unknown authority, usage).
    """
    if not chain:
        raise VerifyError("no client certificate")
    leaf, intermediates = chain[0], list(chain[1:])
    _check_time(leaf, now)
    if not _allows_client_auth(leaf):
        raise VerifyError("x509: certificate specifies an incompatible key usage")
    if leaf in roots:
        return [leaf]
    problems: list[str] = []

    def extend(path: list[x509.Certificate]) -> list[x509.Certificate] | None:
        cert = path[-1]
        if len(path) > MAX_CHAIN_DEPTH:
            return None
        for candidate, is_root in [*((r, True) for r in roots), *((c, False) for c in intermediates)]:
            if candidate in path or candidate.subject != cert.issuer or not _signed_by(cert, candidate):
                continue
            try:
                if not _is_ca(candidate):
                    raise VerifyError("x509: certificate signed by a certificate that is not a CA")
                limit = _path_length(candidate)
                # Intermediates below this CA in the path: everything after the leaf up to (not incl.) it.
                if limit is not None and len(path) - 1 > limit:
                    raise VerifyError("x509: too many intermediates for path length constraint")
                _check_time(candidate, now)
                if not _allows_client_auth(candidate):
                    raise VerifyError("x509: certificate specifies an incompatible key usage")
            except VerifyError as exc:
                problems.append(str(exc))
                continue
            if is_root:
                return [*path, candidate]
            found = extend([*path, candidate])
            if found is not None:
                return found
        return None

    found = extend([leaf])
    if found is None:
        raise VerifyError(problems[0] if problems else "x509: certificate signed by unknown authority")
    return found


def user_from_certificate(cert: x509.Certificate) -> UserInfo | None:
    """CN -> user name, O values (in order) -> groups; None when the CN is empty."""
    names = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    common_name = str(names[0].value) if names else ""
    if not common_name:
        return None
    groups = tuple(str(a.value) for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    return UserInfo(common_name, "", groups)


def load_ca_bundle(path: str) -> list[x509.Certificate]:
    """Every certificate in the PEM file ``path``; raises OSError or ValueError (no certificate)."""
    certs = x509.load_pem_x509_certificates(Path(path).read_bytes())
    if not certs:
        raise ValueError(f"{path}: no certificate found")
    return certs


class X509Authenticator:
    """Authenticates requests by client certificate against a CA bundle.

    ``now`` is the clock (UTC-aware datetimes), injectable for tests.
    """

    def __init__(self, roots: Sequence[x509.Certificate], now: Clock = _utcnow):
        if not roots:
            raise ValueError("X509Authenticator needs at least one CA certificate")
        self._roots = list(roots)
        self._now = now

    @classmethod
    def from_file(cls, path: str) -> X509Authenticator:
        """Load ``--client-ca-file``; raises OSError or ValueError."""
        return cls(load_ca_bundle(path))

    async def authenticate(self, request: Request) -> Result:
        """NOT_MINE without a certificate (or with an empty CN); an error if it does not verify."""
        try:
            if request.client_certificate_chain.strip():
                chain = x509.load_pem_x509_certificates(request.client_certificate_chain.encode())
            elif request.forwarded_client_cert.strip():
                chain = xfcc_chain(request.forwarded_client_cert)
            else:
                return NOT_MINE
        except ValueError as exc:
            return failed(f"malformed client certificate: {exc}")
        if not chain:
            return NOT_MINE
        try:
            verify_chain(chain, self._roots, self._now())
        except VerifyError as exc:
            return failed(f"verifying certificate {chain[0].subject.rfc4514_string()} failed: {exc}")
        user = user_from_certificate(chain[0])
        if user is None:
            return NOT_MINE
        return succeeded(user, NAME)
