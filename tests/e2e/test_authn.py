"""Authentication end to end through Envoy: service-account tokens, TokenRequest, TokenReview, whoami, impersonation."""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
import yaml
from cryptography.hazmat.primitives.asymmetric import rsa

from kapi.local.launcher import Stack
from tests.authn.oidcutil import Issuer
from tests.authn.webhookutil import ROOT, tls_files
from tests.authn.webhookutil import kubeconfig as webhook_kubeconfig

from .conftest import Kubectl, own_stack, token_kubeconfig

ISSUER = "https://kubernetes.default.svc.cluster.local"


def as_token(stack: Stack, tmp_path: Path, token: str, name: str = "tok") -> Kubectl:
    return Kubectl(token_kubeconfig(stack, name, token, tmp_path / f"{name}.kubeconfig"))


def whoami(k: Kubectl) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(k.run("auth", "whoami", "-o", "json").stdout)
    return out["status"]["userInfo"]


def claims_of(token: str) -> dict[str, Any]:
    out: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return out


def b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def refused(k: Kubectl) -> None:
    proc = k.run("get", "configmaps", check=False)
    assert proc.returncode != 0
    assert "You must be logged in to the server (Unauthorized)" in proc.stderr, proc.stderr


def test_create_token_authenticates_as_the_service_account(stack: Stack, kubectl: Kubectl, namespace: str,
                                                           tmp_path: Path) -> None:
    kubectl.run("create", "serviceaccount", "builder", "-n", namespace)
    token = kubectl.run("create", "token", "builder", "-n", namespace, "--duration", "1h").stdout.strip()
    claims = claims_of(token)
    assert claims["iss"] == ISSUER and claims["aud"] == [ISSUER]
    assert claims["sub"] == f"system:serviceaccount:{namespace}:builder"
    assert 3590 <= claims["exp"] - claims["iat"] <= 3600
    sa_uid = kubectl.run("get", "sa", "builder", "-n", namespace, "-o", "jsonpath={.metadata.uid}").stdout
    user = whoami(as_token(stack, tmp_path, token))
    assert user["username"] == f"system:serviceaccount:{namespace}:builder"
    assert user["uid"] == sa_uid
    assert user["groups"] == ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]
    # RBAC sees the ServiceAccount subject.
    proc = as_token(stack, tmp_path, token).run("get", "pods", "-n", namespace, check=False)
    assert (f'User "system:serviceaccount:{namespace}:builder" cannot list resource "pods" in API group "" in the '
            f'namespace "{namespace}"') in proc.stderr


def test_token_of_deleted_or_recreated_service_account_is_refused(stack: Stack, kubectl: Kubectl, namespace: str,
                                                                  tmp_path: Path) -> None:
    kubectl.run("create", "serviceaccount", "gone", "-n", namespace)
    kubectl.run("create", "serviceaccount", "again", "-n", namespace)
    gone = kubectl.run("create", "token", "gone", "-n", namespace).stdout.strip()
    again = kubectl.run("create", "token", "again", "-n", namespace).stdout.strip()
    kubectl.run("delete", "serviceaccount", "gone", "again", "-n", namespace)
    kubectl.run("create", "serviceaccount", "again", "-n", namespace)
    refused(as_token(stack, tmp_path, gone, "gone"))
    refused(as_token(stack, tmp_path, again, "again"))


def test_bound_token_dies_with_its_secret(stack: Stack, kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    kubectl.run("create", "serviceaccount", "bound", "-n", namespace)
    kubectl.run("create", "secret", "generic", "anchor", "-n", namespace)
    token = kubectl.run("create", "token", "bound", "-n", namespace, "--bound-object-kind", "Secret",
                        "--bound-object-name", "anchor").stdout.strip()
    assert claims_of(token)["kubernetes.io"]["secret"]["name"] == "anchor"
    kubectl.run("delete", "secret", "anchor", "-n", namespace)
    refused(as_token(stack, tmp_path, token))
    missing = kubectl.run("create", "token", "bound", "-n", namespace, "--bound-object-kind", "Pod",
                          "--bound-object-name", "nope", check=False)
    assert 'pods "nope" not found' in missing.stderr


def test_create_token_errors(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "serviceaccount", "default", "-n", namespace, check=False)
    for args, message in [
        (("nobody",), 'serviceaccounts "nobody" not found'),
        (("default", "--duration", "5m"), "spec.expirationSeconds: Invalid value: 300: may not specify a duration "
                                          "less than 10 minutes"),
    ]:
        proc = kubectl.run("create", "token", *args, "-n", namespace, check=False)
        assert proc.returncode != 0 and message in proc.stderr, proc.stderr


def test_jwt_attacks_are_unauthorized(stack: Stack, kubectl: Kubectl, namespace: str, tmp_path: Path) -> None:
    kubectl.run("create", "serviceaccount", "victim", "-n", namespace)
    good = kubectl.run("create", "token", "victim", "-n", namespace).stdout.strip()
    header, payload, signature = good.split(".")
    claims = claims_of(good)
    now = int(time.time())
    foreign = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = jwt.get_unverified_header(good)["kid"]

    def signed(**changes: Any) -> str:
        # Signed with a key the cluster does not trust but claiming the cluster's key id.
        return jwt.encode({**claims, **changes}, foreign, algorithm="RS256", headers={"kid": kid})

    tampered_claims = {**claims, "sub": f"system:serviceaccount:{namespace}:admin"}
    attacks = {
        "expired": signed(exp=now - 3600, iat=now - 7200, nbf=now - 7200),
        "tampered": f"{header}.{b64(tampered_claims)}.{signature}",
        "alg-none": f"{b64({'alg': 'none', 'typ': 'JWT'})}.{payload}.",
        "foreign-key": signed(),
        "wrong-issuer": jwt.encode({**claims, "iss": "https://evil.example"}, foreign, algorithm="RS256"),
    }
    for name, token in attacks.items():
        refused(as_token(stack, tmp_path, token, name))
    # Genuinely signed but expired / not yet valid / wrong audience: issued by the cluster through TokenRequest
    # is always valid, so these are checked against the unit-level clock in tests/authn/test_serviceaccount.py;
    # here the wrong-audience case goes end to end.
    vault = kubectl.run("create", "token", "victim", "-n", namespace, "--audience", "vault").stdout.strip()
    refused(as_token(stack, tmp_path, vault, "vault"))
    assert whoami(as_token(stack, tmp_path, good, "good"))["username"].endswith(":victim")


def review(kubectl: Kubectl, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                            "spec": {"token": token}}
    if audiences:
        body["spec"]["audiences"] = audiences
    out: dict[str, Any] = json.loads(kubectl.run("create", "-f", "-", "-o", "json", input=json.dumps(body)).stdout)
    return out


def test_token_review(kubectl: Kubectl, namespace: str) -> None:
    kubectl.run("create", "serviceaccount", "reviewed", "-n", namespace)
    token = kubectl.run("create", "token", "reviewed", "-n", namespace, "--audience", "vault").stdout.strip()
    ok = review(kubectl, token, ["vault", "other"])
    assert ok["kind"] == "TokenReview" and ok["status"]["authenticated"] is True
    assert ok["status"]["user"]["username"] == f"system:serviceaccount:{namespace}:reviewed"
    assert ok["status"]["audiences"] == ["vault"]
    wrong = review(kubectl, token)
    assert "authenticated" not in wrong["status"] and "invalid for the target audiences" in wrong["status"]["error"]
    static = review(kubectl, "alice-token-0123456789")
    assert static["status"]["user"]["username"] == "alice"
    assert static["status"]["audiences"] == [ISSUER]
    assert review(kubectl, "nope")["status"] == {"user": {}, "error": "invalid bearer token"}
    # create-only kinds have no PATCH operation in kube's OpenAPI, so kubectl validates them itself unless told
    # not to (as against kube); the server's answer is what is tested here
    empty = kubectl.run("create", "--validate=false", "-f", "-", input=json.dumps(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {}}), check=False)
    assert "token is required for TokenReview in authentication" in empty.stderr


def test_whoami(kubectl: Kubectl, alice: Kubectl) -> None:
    assert whoami(kubectl) == {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}
    assert whoami(alice) == {"username": "alice", "uid": "uid-alice",
                             "groups": ["dev", "alice-group", "system:authenticated"]}


def test_impersonation(kubectl: Kubectl, alice: Kubectl, namespace: str) -> None:
    proc = kubectl.run("auth", "whoami", "-o", "json", "--as", "bob", "--as-group", "g1", "--as-group", "g2",
                       "--as-uid", "u-1")
    info = json.loads(proc.stdout)["status"]["userInfo"]
    assert info == {"username": "bob", "uid": "u-1", "groups": ["g1", "g2", "system:authenticated"]}
    sa = json.loads(kubectl.run("auth", "whoami", "-o", "json", "--as",
                                f"system:serviceaccount:{namespace}:x").stdout)["status"]["userInfo"]
    assert sa["groups"] == ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]
    # The impersonated user is what authorization sees.
    denied = kubectl.run("get", "configmaps", "-n", namespace, "--as", "bob", check=False)
    assert 'User "bob" cannot list resource "configmaps"' in denied.stderr
    # alice may not impersonate anybody.
    for args, message in [
        (("--as", "bob"), 'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group '
                          '"" at the cluster scope'),
        (("--as", f"system:serviceaccount:{namespace}:x"),
         f'serviceaccounts "x" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group '
         f'"" in the namespace "{namespace}"'),
    ]:
        proc = alice.run("get", "configmaps", "-n", namespace, *args, check=False)
        assert message in proc.stderr, proc.stderr
    # Granting impersonation of bob (users) and group g1 only.
    kubectl.run("create", "clusterrole", f"imp-{namespace}", "--verb=impersonate", "--resource=users,groups",
                "--resource-name=bob", "--resource-name=g1")
    kubectl.run("create", "clusterrolebinding", f"imp-{namespace}", f"--clusterrole=imp-{namespace}", "--user=alice")
    try:
        deadline = time.monotonic() + 10
        while True:
            proc = alice.run("auth", "whoami", "-o", "json", "--as", "bob", "--as-group", "g1", check=False)
            if proc.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert json.loads(proc.stdout)["status"]["userInfo"]["username"] == "bob", proc.stderr
        proc = alice.run("auth", "whoami", "--as", "bob", "--as-group", "g2", check=False)
        assert proc.returncode != 0
        proc = alice.run("get", "--raw", "/version", "--as", "bob", "--as-group", "g2", check=False)
        assert ('groups "g2" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the '
                'cluster scope') in proc.stderr, proc.stderr
    finally:
        kubectl.run("delete", "clusterrolebinding", f"imp-{namespace}")
        kubectl.run("delete", "clusterrole", f"imp-{namespace}")


def test_issuer_discovery(kubectl: Kubectl, namespace: str) -> None:
    config = json.loads(kubectl.run("get", "--raw", "/.well-known/openid-configuration").stdout)
    assert config["issuer"] == ISSUER and config["jwks_uri"] == ISSUER + "/openid/v1/jwks"
    jwks = json.loads(kubectl.run("get", "--raw", "/openid/v1/jwks").stdout)
    keys = {k["kid"]: k for k in jwks["keys"]}
    kubectl.run("create", "serviceaccount", "d", "-n", namespace)
    token = kubectl.run("create", "token", "d", "-n", namespace).stdout.strip()
    key = jwt.PyJWK(keys[jwt.get_unverified_header(token)["kid"]])
    assert jwt.decode(token, key.key, algorithms=["RS256"], audience=ISSUER)["iss"] == ISSUER


# ------------------------------------------------------------------ a stack with every optional authenticator

WEBHOOK_USERS = "tokens:\n  carol-token: {username: carol, uid: '1001', groups: [devs]}\n"
BOOTSTRAP = "abcdef.0123456789abcdef"


def user_kubeconfig(stack: Stack, path: Path, user: dict[str, Any]) -> Kubectl:
    admin = yaml.safe_load(Path(stack.kubeconfig).read_text())
    cluster = admin["clusters"][0]
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "clusters": [cluster], "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "u", "context": {"cluster": cluster["name"], "user": "u"}}], "current-context": "u"}))
    return Kubectl(path)


@pytest.fixture(scope="module")
def authn_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, Path, Issuer]]:
    """A second stack: bootstrap tokens, a basic-auth file, the example webhook over TLS, a local OIDC issuer
    through --authentication-config; anonymous off."""
    tmp = tmp_path_factory.mktemp("authn-stack")
    issuer = Issuer(tmp_path_factory.mktemp("oidc"))
    issuer.add_key("k1")
    issuer.start()
    ca = "\n".join("        " + line for line in issuer.ca_pem.splitlines())
    (tmp / "authn-config.yaml").write_text(f"""apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {issuer.url}
    audiences: [kapi]
    certificateAuthority: |
{ca}
  claimValidationRules:
  - expression: 'claims.hd == "example.com"'
    message: only example.com accounts
  claimMappings:
    username: {{claim: email, prefix: "oidc:"}}
    groups: {{claim: groups, prefix: "oidc:"}}
""")
    _, ca, cert, key = tls_files(tmp)
    (tmp / "users.yaml").write_text(WEBHOOK_USERS)
    port_file = tmp / "webhook.port"
    webhook = subprocess.Popen([sys.executable, str(ROOT / "examples" / "authn-webhook" / "webhook.py"),
                                "--tokens-file", str(tmp / "users.yaml"), "--tls-cert-file", str(cert),
                                "--tls-private-key-file", str(key), "--port", "0", "--port-file", str(port_file)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists() or not port_file.read_text():
            assert time.monotonic() < deadline and webhook.poll() is None, "the example webhook did not start"
            time.sleep(0.05)
        config = webhook_kubeconfig(tmp / "webhook.kubeconfig", f"https://127.0.0.1:{port_file.read_text()}/", ca)
        (tmp / "passwords.csv").write_text('pw-dan,dan,uid-dan,"ops"\n')
        with own_stack([
            "--enable-bootstrap-token-auth=true", f"--basic-auth-file={tmp / 'passwords.csv'}",
            f"--authentication-token-webhook-config-file={config}", "--anonymous-auth=false",
            f"--authentication-config={tmp / 'authn-config.yaml'}"]) as stack:
            yield stack, tmp, issuer
    finally:
        webhook.terminate()
        webhook.wait(10)
        issuer.stop()


def bootstrap_secret(token_id: str, expiration: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "Secret", "type": "bootstrap.kubernetes.io/token",
                       "metadata": {"name": f"bootstrap-token-{token_id}", "namespace": "kube-system"},
                       "stringData": {"token-id": token_id, "token-secret": "0123456789abcdef",
                                      "usage-bootstrap-authentication": "true", "expiration": expiration,
                                      "auth-extra-groups": "system:bootstrappers:worker"}})


def test_optional_authenticators_end_to_end(authn_stack: tuple[Stack, Path, Issuer]) -> None:
    stack, tmp, _ = authn_stack
    admin = Kubectl(Path(stack.kubeconfig))
    future = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    past = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 60))
    admin.run("create", "-f", "-", input=bootstrap_secret("abcdef", future))
    admin.run("create", "-f", "-", input=bootstrap_secret("expire", past))
    boot = whoami(as_token(stack, tmp, BOOTSTRAP, "boot"))
    assert boot == {"username": "system:bootstrap:abcdef",
                    "groups": ["system:bootstrappers", "system:bootstrappers:worker", "system:authenticated"]}
    refused(as_token(stack, tmp, "expire.0123456789abcdef", "expired-boot"))
    assert whoami(as_token(stack, tmp, "carol-token", "carol")) == {
        "username": "carol", "uid": "1001", "groups": ["devs", "system:authenticated"]}
    refused(as_token(stack, tmp, "unknown-to-the-webhook", "unknown"))
    dan = user_kubeconfig(stack, tmp / "dan.kubeconfig", {"username": "dan", "password": "pw-dan"})
    assert whoami(dan) == {"username": "dan", "uid": "uid-dan", "groups": ["ops", "system:authenticated"]}
    refused(user_kubeconfig(stack, tmp / "bad-pw.kubeconfig", {"username": "dan", "password": "nope"}))
    # Anonymous is off on this stack: no credential at all is 401 too.
    cluster = yaml.safe_load(Path(stack.kubeconfig).read_text())["clusters"][0]["cluster"]
    context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(cluster["server"] + "/api", context=context, timeout=10)
    assert info.value.code == 401 and json.loads(info.value.read())["reason"] == "Unauthorized"
    # TokenReview runs the same token authenticators.
    assert review(admin, "carol-token")["status"]["user"]["username"] == "carol"
    assert review(admin, BOOTSTRAP)["status"]["user"]["username"] == "system:bootstrap:abcdef"


def test_oidc_end_to_end(authn_stack: tuple[Stack, Path, Issuer]) -> None:
    stack, tmp, issuer = authn_stack
    token = issuer.token(email="ann@example.com", hd="example.com", groups=["dev"])
    assert whoami(as_token(stack, tmp, token, "ann")) == {
        "username": "oidc:ann@example.com", "groups": ["oidc:dev", "system:authenticated"]}
    refused(as_token(stack, tmp, issuer.token(email="eve@evil.com", hd="evil.com"), "eve"))
    refused(as_token(stack, tmp, issuer.token(email="ann@example.com", hd="example.com", aud="other"), "aud"))
    issuer.add_key("k2")  # rotation: a new key id makes authn refetch the JWKS
    rotated = as_token(stack, tmp, issuer.token("k2", email="bo@example.com", hd="example.com"), "bo")
    deadline = time.monotonic() + 8  # refreshes are at most once a second; each gateway caches a 401 for 2 s
    while True:
        proc = rotated.run("auth", "whoami", "-o", "json", check=False)
        if proc.returncode == 0 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert json.loads(proc.stdout)["status"]["userInfo"]["username"] == "oidc:bo@example.com"
