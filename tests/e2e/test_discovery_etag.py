"""Aggregated discovery's ETag through Envoy and straight from each gateway (issue 17).

kube (apiserver endpoints/discovery/aggregated etag.go ServeHTTPWithETag): ``/api`` and ``/apis`` with the
APIGroupDiscoveryList Accept answer ``ETag: "<SHA-512 hex>"``, ``Vary: Accept``, ``Cache-Control: public``; the
same ``If-None-Match`` is 304 Not Modified with no body; a new CRD is a new document and a new ETag. client-go's
disk-cached discovery (kubectl) sends the ETag back through httpcache. The legacy documents have no ETag.
"""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import urllib.error
import urllib.request
from email.message import Message

import yaml

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for

V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
KUBECTL_ACCEPT = f"{V2},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
GROUP = "etag.example.com"


def fetch(stack: Stack, path: str, base: str = "", **headers: str) -> tuple[int, Message, bytes]:
    """GET ``path`` as the admin (client certificate) through Envoy, or from ``base`` (a gateway's host:port)."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.check_hostname = False
    url = f"https://{base}{path}" if base else stack.url + path
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), context=context, timeout=10) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:  # 304 comes as an HTTPError from urllib
        return err.code, err.headers, err.read()


def kube_etag(body: bytes) -> str:
    doc = json.loads(body)
    marshalled = json.dumps({"metadata": doc["metadata"], "items": doc["items"]}, separators=(",", ":"),
                            ensure_ascii=False).encode()
    return '"' + hashlib.sha512(marshalled).hexdigest().upper() + '"'


def test_aggregated_discovery_etag_and_304(stack: Stack) -> None:
    for path in ("/api", "/apis"):
        status, headers, body = fetch(stack, path, Accept=KUBECTL_ACCEPT)
        assert status == 200 and headers["Content-Type"] == V2
        etag = headers["ETag"]
        assert re.fullmatch(r'"[0-9A-F]{128}"', etag) and etag == kube_etag(body), etag
        assert (headers["Vary"], headers["Cache-Control"]) == ("Accept", "public")
        status, headers, body = fetch(stack, path, **{"Accept": KUBECTL_ACCEPT, "If-None-Match": etag})
        assert (status, body) == (304, b"")
        assert (headers["ETag"], headers["Vary"], headers["Cache-Control"]) == (etag, "Accept", "public")
        assert headers.get("Content-Type") is None
        status, _, _ = fetch(stack, path, **{"Accept": KUBECTL_ACCEPT, "If-None-Match": '"0"'})
        assert status == 200


def test_both_gateways_give_the_same_etag(stack: Stack) -> None:
    etags = {fetch(stack, "/apis", stack.addresses[g], Accept=V2)[1]["ETag"] for g in ("gateway-1", "gateway-2")}
    assert len(etags) == 1


def test_legacy_discovery_has_no_etag(stack: Stack) -> None:
    for path in ("/api", "/apis", "/apis/apps", "/apis/apps/v1"):
        status, headers, body = fetch(stack, path, Accept="application/json")
        assert status == 200 and headers.get("ETag") is None and headers.get("Vary") is None
        assert headers["Cache-Control"] == "no-cache, private"
        assert body.endswith(b"}\n") and not body.endswith(b"\n\n"), (path, body[-50:])  # json.Encoder's newline


def test_a_new_crd_is_a_new_etag(stack: Stack, kubectl: Kubectl) -> None:
    _, headers, _ = fetch(stack, "/apis", Accept=V2)
    before = headers["ETag"]
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"gadgets.{GROUP}"},
           "spec": {"group": GROUP, "scope": "Namespaced",
                    "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    kubectl.run("apply", "-f", "-", input=yaml.safe_dump(crd))
    try:
        for gateway in ("gateway-1", "gateway-2"):
            def listed(base: str = stack.addresses[gateway]) -> tuple[str, bytes] | None:
                status, headers, body = fetch(stack, "/apis", base, **{"Accept": V2, "If-None-Match": before})
                return (headers["ETag"], body) if status == 200 and GROUP.encode() in body else None

            etag, body = wait_for(listed, timeout=30)
            assert etag != before and etag == kube_etag(body)
            assert fetch(stack, "/apis", stack.addresses[gateway], **{"Accept": V2, "If-None-Match": etag})[0] == 304
    finally:
        kubectl.run("delete", "crd", f"gadgets.{GROUP}", "--wait=false", check=False)


def test_kubectl_revalidates_its_cached_discovery_with_the_etag(stack: Stack, kubectl: Kubectl, tmp_path) -> None:
    """kubectl api-resources refetches discovery; client-go's httpcache (discovery/cached/disk) sends the ETag
    back in If-None-Match and, on the 304, answers its cached body (``X-From-Cache: 1``). Without an ETag
    (``no-cache, private`` alone) it could not revalidate and every run fetched the whole documents."""
    cache = str(tmp_path / "cache")
    kubectl.run("api-resources", "--cache-dir", cache)
    log = kubectl.run("api-resources", "--cache-dir", cache, "-v=8").stderr
    for path in ("/api", "/apis"):
        exchange = log.split(f'"Request" verb="GET" url="{stack.url}{path}?timeout=32s"', 1)[1].split('"Request"')[0]
        assert "X-From-Cache: 1" in exchange and "Etag: \"" in exchange, exchange
