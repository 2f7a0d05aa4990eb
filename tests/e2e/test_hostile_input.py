"""Hostile requests through the whole stack (issue 19): bounded work per request, a JSON Status for every refusal,
and no write committed behind an error.

Each test sends the request an attacker sent: JSON patch ``copy`` amplification (CVE-2019-1002100's class), YAML
alias amplification, ``Upgrade`` on a plain POST, control characters that end up in a ``Warning`` header, and the
malformed requests that answered a 500, a 502, a 504, a 429 or text/plain.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import ssl
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl


@pytest.fixture
def namespace(kubectl: Kubectl, request: pytest.FixtureRequest) -> str:
    """A fresh namespace named after the test, parameters included (brackets and slashes become dashes)."""
    digest = hashlib.sha256(request.node.name.encode()).hexdigest()[:8]
    name = re.sub(r"[^a-z0-9-]+", "-", "h-" + request.node.name.replace("_", "-").lower())[:50].strip("-")
    name = f"{name}-{digest}"
    kubectl.run("create", "namespace", name)
    return name


class Reply:
    """One HTTP answer: status, headers, raw body and the body as JSON (None when it is not JSON)."""

    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes):
        self.status, self.headers, self.body = status, headers, body
        try:
            self.json: Any = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self) -> str:
        return f"Reply({self.status}, {self.body[:300]!r})"

    def is_status(self, code: int, reason: str | None = None) -> bool:
        """True when this is a JSON ``Status`` with ``code`` (and ``reason``) as the HTTP status."""
        ok = self.status == code and isinstance(self.json, dict) and self.json.get("kind") == "Status" \
            and self.json.get("code") == code and self.headers.get("Content-Type", "").startswith("application/json")
        return ok and (reason is None or self.json.get("reason") == reason)


def send(stack: Stack, method: str, path: str, body: bytes | str | None = None,
         headers: dict[str, str] | None = None, port: int | None = None, timeout: float = 30) -> Reply:
    """One request as the admin (client certificate) through Envoy, or to ``port`` (a gateway) directly."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, port or url.port, context=context, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)
        data = body.encode() if isinstance(body, str) else body
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        if data is not None:
            all_headers.setdefault("Content-Length", str(len(data)))
        for key, value in all_headers.items():
            conn.putheader(key, value)
        conn.endheaders(data)
        response = conn.getresponse()
        return Reply(response.status, response.headers, response.read())
    finally:
        conn.close()


def configmap(name: str, **extra: Any) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra})


def exists(stack: Stack, namespace: str, name: str) -> bool:
    return send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/{name}").status == 200


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


# ---------------------------------------------------------------- 1. patch amplification


def amplification(count: int = 30) -> str:
    """~1.6 KB of JSON patch that doubles metadata ``count`` times (2^30 copies unbounded)."""
    return json.dumps([{"op": "copy", "from": "/metadata", "path": f"/metadata/annotations/a{i}"}
                       for i in range(count)])


def test_json_patch_copy_amplification_is_refused_and_memory_stays_flat(stack: Stack, namespace: str):
    path = f"/api/v1/namespaces/{namespace}/configmaps/amp"
    assert send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps",
                configmap("amp", metadata={"name": "amp", "annotations": {"a": "b"}})).status == 201
    headers = {"Content-Type": "application/json-patch+json"}
    gateways = [p.pid for n, p in stack.processes.items() if n.startswith("gateway")]
    for _ in range(4):  # warm up both gateways (Envoy round robin)
        assert send(stack, "PATCH", path, amplification(), headers).is_status(422, "Invalid")
    before = {pid: rss_kib(pid) for pid in gateways}
    started = time.monotonic()
    for _ in range(40):
        reply = send(stack, "PATCH", path, amplification(), headers)
        assert reply.is_status(422, "Invalid"), reply
        assert reply.json["message"] == "the server rejected our request due to an error in our request"
        assert reply.json["details"] == {}
    elapsed = time.monotonic() - started
    growth = {pid: rss_kib(pid) - before[pid] for pid in gateways}
    assert all(g < 64 * 1024 for g in growth.values()), f"gateway RSS grew by {growth} KiB"
    assert elapsed < 40, f"40 refused patches took {elapsed:.1f}s"
    stored = json.loads(send(stack, "GET", path).body)
    assert stored["metadata"]["annotations"] == {"a": "b"}  # nothing was written


def test_json_patch_operation_limit_is_413(stack: Stack, namespace: str):
    path = f"/api/v1/namespaces/{namespace}/configmaps/ops"
    assert send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("ops")).status == 201
    ops = json.dumps([{"op": "test", "path": "/kind", "value": "ConfigMap"}] * 10_001)
    reply = send(stack, "PATCH", path, ops, {"Content-Type": "application/json-patch+json"})
    assert reply.is_status(413, "RequestEntityTooLarge"), reply
    assert reply.json["message"] == "The allowed maximum operations in a JSON patch is 10000, got 10001"
    ops = json.dumps([{"op": "test", "path": "/kind", "value": "ConfigMap"}] * 10_000)
    assert send(stack, "PATCH", path, ops, {"Content-Type": "application/json-patch+json"}).status == 200


@pytest.mark.parametrize("content_type", ["application/merge-patch+json", "application/strategic-merge-patch+json",
                                          "application/json-patch+json", "application/apply-patch+yaml"])
def test_a_patch_result_over_the_body_limit_is_413(stack: Stack, namespace: str, content_type: str):
    """Each patch type can grow a 0.9 MB object past the 3 MiB a request may carry: 413 before admission, and
    nothing stored."""
    name = "big-" + content_type.split("/")[1].split("+")[0]
    big = "x" * 2_500_000
    assert send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps",
                configmap(name, data={"a": "x" * 900_000})).status == 201
    if content_type == "application/json-patch+json":
        patch = json.dumps([{"op": "add", "path": "/data/b", "value": big}])
    elif content_type == "application/apply-patch+yaml":
        patch = configmap(name, data={"b": big})
    else:
        patch = json.dumps({"data": {"b": big}})
    reply = send(stack, "PATCH", f"/api/v1/namespaces/{namespace}/configmaps/{name}?fieldManager=t", patch,
                 {"Content-Type": content_type})
    assert reply.is_status(413, "RequestEntityTooLarge"), reply
    stored = json.loads(send(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/{name}").body)
    assert set(stored["data"]) == {"a"}


# ---------------------------------------------------------------- 2. YAML aliases


def alias_bomb(name: str) -> str:
    """300,000 aliases of one scalar: 900 KB of YAML."""
    return (f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, annotations: {{a: &a x}}}}\n"
            "junk: [" + ",".join(["*a"] * 300_000) + "]\n")


@pytest.mark.parametrize("verb", ["create", "update", "apply"])
def test_yaml_alias_amplification_is_refused_quickly(stack: Stack, namespace: str, verb: str):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    name = f"alias-{verb}"
    if verb == "update":
        assert send(stack, "POST", base, configmap(name)).status == 201
    method, path, content_type = {
        "create": ("POST", base, "application/yaml"),
        "update": ("PUT", f"{base}/{name}", "application/yaml"),
        "apply": ("PATCH", f"{base}/{name}?fieldManager=t", "application/apply-patch+yaml"),
    }[verb]
    started = time.monotonic()
    reply = send(stack, method, path, alias_bomb(name), {"Content-Type": content_type})
    elapsed = time.monotonic() - started
    assert reply.is_status(400, "BadRequest"), reply
    bare = "error converting YAML to JSON: yaml: document contains excessive aliasing"
    if verb == "apply":  # the apply patcher's own YAML decode: the bare error
        assert reply.json["message"] == bare
    else:  # create and update decode through transformDecodeError, with the body's first 30 bytes in hex
        head = alias_bomb(name).encode()[:30].hex()
        assert reply.json["message"] == (f"the object provided is unrecognized (must be of type ConfigMap): {bare} "
                                         f"({head} ...)")
    assert elapsed < 1.0, f"refused after {elapsed:.2f}s"
    assert exists(stack, namespace, name) == (verb == "update")


# ---------------------------------------------------------------- 3. Upgrade on plain requests


def test_upgrade_headers_on_a_plain_write_are_answered_at_once(stack: Stack, namespace: str):
    headers = {"Connection": "Upgrade", "Upgrade": "websocket"}
    started = time.monotonic()
    reply = send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", configmap("up"), headers, timeout=10)
    assert time.monotonic() - started < 5
    assert reply.is_status(400, "BadRequest"), reply
    assert not exists(stack, namespace, "up")
    reply = send(stack, "PUT", f"/api/v1/namespaces/{namespace}/configmaps/up", configmap("up"), headers, timeout=10)
    assert reply.is_status(400, "BadRequest"), reply
    # the connect subresources still upgrade (here: the pod does not exist, a 404 Status from the gateway)
    reply = send(stack, "GET", f"/api/v1/namespaces/{namespace}/pods/nope/exec?command=ls", None, headers)
    assert reply.is_status(404, "NotFound"), reply


# ---------------------------------------------------------------- 5. control characters in warnings


@pytest.mark.parametrize("char", ["\x00", "\n", "\r\n", "\x7f", "\x1b", "\u2028"])
def test_control_characters_in_unknown_fields_are_escaped_in_warnings(stack: Stack, namespace: str, char: str):
    name = f"ctl-{ord(char[0])}-{len(char)}"
    reply = send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps",
                 json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                             f"x{char}y": 1}))
    assert reply.status == 201, reply
    warnings = reply.headers.get_all("Warning") or []
    assert len(warnings) == 1 and warnings[0].startswith('299 - "unknown field \\"x'), warnings
    assert not any(ord(c) < 0x20 or ord(c) == 0x7F for c in warnings[0])


def test_many_unknown_fields_make_bounded_warnings(stack: Stack, namespace: str):
    fields = {f"unknown{i:05d}" + "z" * 200: 1 for i in range(2000)}
    reply = send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps",
                 json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "many"}, **fields}))
    assert reply.status == 201, reply
    warnings = reply.headers.get_all("Warning") or []
    assert 0 < len(warnings) and sum(len(w) for w in warnings) < 8 * 1024


# ---------------------------------------------------------------- 6. malformed requests, each a clean Status

MALFORMED = [
    # (id, method, path, body, headers, expected code, expected reason)
    ("pod-spec-null", "POST", "/api/v1/namespaces/{ns}/pods",
     json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": None}), {}, 422, "Invalid"),
    ("limit-overflow", "GET", "/api/v1/namespaces/{ns}/configmaps?limit=9223372036854775808", None, {}, 400,
     "BadRequest"),
    ("gzip-garbage", "POST", "/api/v1/namespaces/{ns}/configmaps", "garbage", {"Content-Encoding": "gzip"}, 400,
     "BadRequest"),
    ("brotli", "POST", "/api/v1/namespaces/{ns}/configmaps", "garbage", {"Content-Encoding": "br"}, 400,
     "BadRequest"),
    ("rv-2^63-list", "GET", "/api/v1/namespaces/{ns}/configmaps?resourceVersion=9223372036854775808", None, {},
     400, "BadRequest"),
    ("rv-2^63-watch", "GET", "/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion=9223372036854775808",
     None, {}, 400, "BadRequest"),
    ("rv-2^64-get", "GET", "/api/v1/namespaces/{ns}/configmaps/x?resourceVersion=18446744073709551616", None, {},
     400, "BadRequest"),
    ("expect-bogus", "POST", "/api/v1/namespaces/{ns}/configmaps", "{}", {"Expect": "bogus"}, 417, None),
    ("huge-name-in-error", "POST", "/api/v1/namespaces/{ns}/configmaps", configmap("A" * 100_000), {}, 422,
     "Invalid"),
    ("huge-name-in-404", "GET", "/api/v1/namespaces/{ns}/configmaps/" + "a" * 200_000, None, {}, 404, "NotFound"),
    ("grace-period-overflow", "DELETE", "/api/v1/namespaces/{ns}/configmaps/x?gracePeriodSeconds=9223372036854775808",
     None, {}, 400, "BadRequest"),
    ("watch-timeout-overflow", "GET",
     "/api/v1/namespaces/{ns}/configmaps?watch=1&timeoutSeconds=99999999999999999999", None, {}, 400, "BadRequest"),
    ("token-expiration-overflow", "POST", "/api/v1/namespaces/{ns}/serviceaccounts/default/token",
     json.dumps({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                 "spec": {"expirationSeconds": 2**63}}), {}, 400, "BadRequest"),
]


@pytest.mark.parametrize(("method", "path", "body", "headers", "code", "reason"),
                         [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_malformed_requests_get_a_json_status(stack: Stack, namespace: str, method: str, path: str,
                                              body: str | None, headers: dict[str, str], code: int,
                                              reason: str | None):
    reply = send(stack, method, path.format(ns=namespace), body, headers, timeout=10)
    assert reply.is_status(code, reason), reply


def test_yaml_tags_create_what_go_yaml_decodes(stack: Stack, namespace: str):
    body = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: tags}\n"
            "data: {bin: !!binary aGVsbG8=, when: 2024-01-01, at: 2001-12-14 21:59:43.10 -5}\n")
    reply = send(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", body,
                 {"Content-Type": "application/yaml"})
    assert reply.status == 201, reply
    assert reply.json["data"] == {"bin": "hello", "when": "2024-01-01", "at": "2001-12-14 21:59:43.10 -5"}
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: set}\ndata: !!set {a, b}\n"
    reply = send(stack, "PATCH", f"/api/v1/namespaces/{namespace}/configmaps/set?fieldManager=t", body,
                 {"Content-Type": "application/apply-patch+yaml"})
    assert reply.status in (201, 422) and reply.json["kind"] in ("ConfigMap", "Status"), reply


def test_a_long_audit_id_is_replaced_not_echoed(stack: Stack):
    reply = send(stack, "GET", "/api/v1/namespaces/default/configmaps", headers={"Audit-ID": "a" * 100_000})
    assert reply.status == 200, reply
    assert len(reply.headers["Audit-Id"]) == 36
    reply = send(stack, "GET", "/api/v1/namespaces/default/configmaps", headers={"Audit-ID": "mine-123"})
    assert reply.headers["Audit-Id"] == "mine-123"


def test_a_newline_in_the_path_is_routed(stack: Stack):
    reply = send(stack, "GET", "/api/v1/namespaces/de%0afault/configmaps/x")
    assert reply.is_status(404, "NotFound"), reply
    reply = send(stack, "GET", "/no%0Asuch")
    assert reply.is_status(404, "NotFound"), reply


def test_kubectl_gets_413_for_a_20_mb_object(stack: Stack, kubectl: Kubectl, tmp_path: Path):
    """Envoy refuses a declared body over 3 MiB before reading it; kubectl (HTTP/2) sees kube's Status."""
    manifest = tmp_path / "huge.json"
    manifest.write_text(configmap("huge", data={"a": "x" * 20_000_000}))
    started = time.monotonic()
    proc = kubectl.run("create", "-f", str(manifest), check=False)
    assert proc.returncode != 0 and time.monotonic() - started < 20
    assert "Request entity too large: limit is 3145728" in proc.stderr, proc.stderr[:500]


def test_an_oversized_body_is_413_for_a_client_that_reads_while_sending(stack: Stack):
    """20 MB: kube reads up to its 3 MiB limit and answers 413; a client that reads the answer while it still
    sends (Go's and curl's HTTP/1.1) sees the Status. One thread drives the TLS socket, non-blocking (an SSL
    object used by a sending and a receiving thread at once corrupts its state: the test flaked on that)."""
    import select
    import socket

    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    size = 20_000_000
    sock = context.wrap_socket(socket.create_connection((url.hostname, url.port), timeout=20),
                               server_hostname="localhost")
    pending = (f"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n"
               f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n").encode()
    left = size
    head = b""
    sock.setblocking(False)
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline and b'"code":413}\n' not in head:
            writers = [sock] if (pending or left) else []
            readable, writable, _ = select.select([sock], writers, [], 1)
            if readable or sock.pending():
                try:
                    data = sock.recv(65536)
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    data = None
                except OSError:
                    break
                if data == b"":
                    break
                head += data or b""
            if writable and (pending or left):
                if not pending:
                    pending, left = b" " * min(65536, left), left - min(65536, left)
                try:
                    pending = pending[sock.send(pending):]
                except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                    pass
                except OSError:
                    pending, left = b"", 0  # the server answered and closed its side
    finally:
        sock.close()
    text = head.decode(errors="replace")
    assert text.startswith("HTTP/1.1 413"), text[:200]
    # kube's Status bytes (Go's field order, json.Encoder's newline), though Envoy answers it
    expected = ('\r\n\r\n{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
                '"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}\n')
    assert text.endswith(expected), text[-400:]


# ---------------------------------------------------------------- 4. one identity per CA


def approved_client_certificate(stack: Stack, kubectl: Kubectl, cn: str, name: str, tmp: Path) -> tuple[Path, Path]:
    """A certificate for ``cn`` from the kube-apiserver-client signer (an approved CSR): (cert, key) paths."""
    import base64

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    from tests.e2e.conftest import wait_for

    key = ec.generate_private_key(ec.SECP256R1())
    csr = x509.CertificateSigningRequestBuilder().subject_name(
        x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])).sign(key, hashes.SHA256())
    body = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": base64.b64encode(csr.public_bytes(serialization.Encoding.PEM)).decode(),
                     "signerName": "kubernetes.io/kube-apiserver-client", "usages": ["client auth"],
                     "expirationSeconds": 600}}
    reply = send(stack, "POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", json.dumps(body))
    assert reply.status == 201, reply
    kubectl.run("certificate", "approve", name)
    path = f"/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}"
    issued = wait_for(lambda: json.loads(send(stack, "GET", path).body).get("status", {}).get("certificate"), 30)
    cert_path, key_path = tmp / f"{name}.crt", tmp / f"{name}.key"
    cert_path.write_bytes(base64.b64decode(issued))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def whoami_at_gateway(stack: Stack, cert: Path, key: Path, headers: dict[str, str]) -> tuple[int, Any]:
    """POST a SelfSubjectReview straight to gateway-1's port with ``cert``: (status, body)."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(cert), str(key))
    host, _, port = stack.addresses["gateway-1"].rpartition(":")
    conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=10)
    try:
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        conn.request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", body=json.dumps(review),
                     headers={"Content-Type": "application/json", **headers})
        response = conn.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        conn.close()


def test_an_approved_csr_for_front_proxy_client_asserts_no_one(stack: Stack, kubectl: Kubectl, tmp_path: Path):
    """The CSR signer's certificates come from the cluster CA; only the front-proxy CA's may assert a user in
    x-forwarded-client-cert, so a minted CN front-proxy-client is just that user, at a gateway's port too."""
    import urllib.parse

    cert, key = approved_client_certificate(stack, kubectl, "front-proxy-client", "mint-front-proxy", tmp_path)
    admin_pem = urllib.parse.quote(stack.pki.admin_cert.read_text(), safe="")
    forged = {"x-forwarded-client-cert":
              f'Hash=00;Cert="{admin_pem}";Subject="O=system:masters,CN=kubernetes-admin"'}
    status, body = whoami_at_gateway(stack, cert, key, forged)
    assert status in (201, 401), body
    if status == 201:
        assert body["status"]["userInfo"]["username"] == "front-proxy-client", body
        assert "system:masters" not in body["status"]["userInfo"].get("groups", [])
    # Envoy's own certificate (front-proxy CA) still carries the forwarded identity
    status, body = whoami_at_gateway(stack, stack.pki.front_proxy_cert, stack.pki.front_proxy_key, forged)
    assert status == 201 and body["status"]["userInfo"]["username"] == "kubernetes-admin", body
