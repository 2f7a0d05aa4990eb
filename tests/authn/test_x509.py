"""X.509 client certificate authentication: chain verification, CN/O mapping, XFCC parsing."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from kapi.attributes import UserInfo
from services.authn.authenticator import NOT_MINE, Request
from services.authn.x509 import X509Authenticator, parse_xfcc, xfcc_chain

from .certs import CLIENT_AUTH, DAY, NOW, SERVER_AUTH, make_ca, make_client

CA = make_ca("kapi-ca")
FOREIGN_CA = make_ca("other-ca")
INTERMEDIATE = make_ca("kapi-intermediate", issuer=CA)
NO_PATH_CA = make_ca("kapi-ca-pathlen0", path_length=0)
NO_PATH_INTERMEDIATE = make_ca("below-pathlen0", issuer=NO_PATH_CA)
EXPIRED_CA = make_ca("expired-ca", not_before=NOW - 20 * DAY, not_after=NOW - DAY)

ALICE = make_client(CA, "alice", ("dev", "ops"))
EXPIRED = make_client(CA, "alice", ("dev",), not_before=NOW - 10 * DAY, not_after=NOW - DAY)
NOT_YET = make_client(CA, "alice", (), not_before=NOW + DAY, not_after=NOW + 10 * DAY)
FOREIGN = make_client(FOREIGN_CA, "alice", ("dev",))
# Same subject as the trusted CA but a different key: the name matches, the signature does not.
IMPOSTOR_CA = make_ca("kapi-ca")
IMPOSTOR = make_client(IMPOSTOR_CA, "mallory", ("system:masters",))
NO_CN = make_client(CA, "", ("dev",))
VIA_INTERMEDIATE = make_client(INTERMEDIATE, "bob", ("qa",))
SERVER_ONLY = make_client(CA, "alice", (), eku=(SERVER_AUTH,))
CLIENT_EKU = make_client(CA, "carol", (), eku=(CLIENT_AUTH,))
NON_CA_ISSUER = make_client(CA, "issuer-not-ca", (), ca=False)
SIGNED_BY_NON_CA = make_client(NON_CA_ISSUER, "dave")
TOO_DEEP = make_client(NO_PATH_INTERMEDIATE, "erin")
UNDER_EXPIRED_CA = make_client(EXPIRED_CA, "frank")


def authenticator() -> X509Authenticator:
    return X509Authenticator([CA.cert, NO_PATH_CA.cert, EXPIRED_CA.cert], now=lambda: NOW)


def xfcc(*chain_pems: str, extra: str = "") -> str:
    """An Envoy XFCC value for a client chain (leaf first), URL-encoded as Envoy does."""
    value = f'By=spiffe://cluster.local/ns/default/sa/gateway;Hash=abc123;Cert="{quote(chain_pems[0], safe="")}"'
    if len(chain_pems) > 1:
        value += f';Chain="{quote("".join(chain_pems), safe="")}"'
    return value + ';Subject="O=dev,O=ops,CN=alice";URI=' + extra


@pytest.mark.parametrize(
    ("name", "chain", "user", "error_part"),
    [
        ("good client cert: CN -> user, O -> groups", [ALICE], UserInfo("alice", "", ("dev", "ops")), None),
        ("expired", [EXPIRED], None, "expired"),
        ("not yet valid", [NOT_YET], None, "not yet valid"),
        ("foreign CA", [FOREIGN], None, "unknown authority"),
        ("same issuer name, wrong key", [IMPOSTOR], None, "unknown authority"),
        ("empty CN is not recognised", [NO_CN], NOT_MINE, None),
        ("intermediate supplied in chain", [VIA_INTERMEDIATE, INTERMEDIATE], UserInfo("bob", "", ("qa",)), None),
        ("intermediate missing", [VIA_INTERMEDIATE], None, "unknown authority"),
        ("EKU serverAuth only", [SERVER_ONLY], None, "incompatible key usage"),
        ("EKU clientAuth", [CLIENT_EKU], UserInfo("carol", "", ()), None),
        ("issuer is not a CA", [SIGNED_BY_NON_CA, NON_CA_ISSUER], None, "not a CA"),
        ("path length constraint", [TOO_DEEP, NO_PATH_INTERMEDIATE], None, "path length"),
        ("CA expired", [UNDER_EXPIRED_CA], None, "expired"),
    ],
)
@pytest.mark.parametrize("source", ["tls", "xfcc"])
async def test_verify(name: str, chain: list, user: object, error_part: str | None, source: str) -> None:
    pems = [c.pem for c in chain]
    if source == "tls":
        request = Request(client_certificate_chain="".join(pems))
    else:
        request = Request(forwarded_client_cert=xfcc(*pems))
    result = await authenticator().authenticate(request)
    if user is NOT_MINE:
        assert result == NOT_MINE, name
    elif error_part is None:
        assert result.ok, (name, result.error)
        assert result.response is not None
        assert result.response.user == user
        assert result.response.authenticator == "x509"
        assert result.response.cache_ttl_seconds == 10
    else:
        assert not result.ok and result.error and error_part in result.error, (name, result)


@pytest.mark.parametrize(
    ("request_", "ok", "error"),
    [
        (Request(), False, False),
        (Request(authorization="Bearer abc"), False, False),
        (Request(client_certificate_chain="-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n"),
         False, True),
        (Request(client_certificate_chain="not pem at all"), False, True),
        (Request(forwarded_client_cert='By=x;Hash=y;Subject="CN=alice"'), False, False),  # no Cert: not mine
        (Request(forwarded_client_cert='Cert="%2D%2D%2Dgarbage"'), False, True),
        (Request(forwarded_client_cert='Cert="unterminated'), False, True),
    ],
)
async def test_unrecognised_and_malformed(request_: Request, ok: bool, error: bool) -> None:
    result = await authenticator().authenticate(request_)
    assert result.ok is ok
    assert (result.error is not None) is error


async def test_tls_chain_wins_over_xfcc() -> None:
    result = await authenticator().authenticate(
        Request(client_certificate_chain=ALICE.pem, forwarded_client_cert=xfcc(VIA_INTERMEDIATE.pem)))
    assert result.ok and result.response is not None and result.response.user.username == "alice"


async def test_real_clock_rejects_certificate_valid_only_in_2030() -> None:
    result = await X509Authenticator([CA.cert]).authenticate(Request(client_certificate_chain=ALICE.pem))
    assert not result.ok and "not yet valid" in (result.error or "")


def test_parse_xfcc_quoting_and_elements() -> None:
    value = ('By=spiffe://a;Hash=1;Subject="CN=first,O=x";URI=,'
             'By=spiffe://b;Hash=2;Subject="CN=\\"quoted\\";O=a,b";Cert="%2D%2D";DNS=example.com')
    elements = parse_xfcc(value)
    assert elements == [
        {"by": "spiffe://a", "hash": "1", "subject": "CN=first,O=x", "uri": ""},
        {"by": "spiffe://b", "hash": "2", "subject": 'CN="quoted";O=a,b', "cert": "%2D%2D", "dns": "example.com"},
    ]


@pytest.mark.parametrize("value", ['Cert="abc', "Cert", "=x", 'By=a;"Cert"'])
def test_parse_xfcc_rejects(value: str) -> None:
    with pytest.raises(ValueError):
        parse_xfcc(value)


def test_xfcc_uses_last_element_cert() -> None:
    value = f'Cert="{quote(FOREIGN.pem, safe="")}",{xfcc(ALICE.pem)}'
    chain = xfcc_chain(value)
    assert chain == [ALICE.cert]


def test_xfcc_chain_supplies_intermediates() -> None:
    chain = xfcc_chain(xfcc(VIA_INTERMEDIATE.pem, INTERMEDIATE.pem))
    assert chain == [VIA_INTERMEDIATE.cert, INTERMEDIATE.cert]
