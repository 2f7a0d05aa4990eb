"""Fuzzing the HTTP surface through Envoy (issue 19): every verb and content type with malformed bodies, paths,
queries and headers, against the shared e2e stack, in bounded time (about 30 s; ``KAPI_FUZZ_EXAMPLES`` runs more).

Each generated request must get, within its timeout: no 5xx (but kube's 504 for a resourceVersion the store
has not reached); for an error, a JSON ``Status`` whose ``code`` is
the HTTP status; and when a write is refused, no change to what is stored (the resource's objects in the fuzz
namespace keep their resourceVersions). At the end no process of the stack has restarted.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import time
import urllib.parse
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kapi import k8sproto
from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl

EXAMPLES = int(os.environ.get("KAPI_FUZZ_EXAMPLES", "300"))
RANDOM = os.environ.get("KAPI_FUZZ_RANDOM", "") not in ("", "0")  # CI replays the same examples; 1: new ones
NAMESPACE = "fuzz"
NAMES = ("fz-a", "fz-b")

# (collection path, apiVersion, kind): namespaced resources are under the fuzz namespace
_POD_SPEC = {"containers": [{"name": "c", "image": "nginx"}]}
VALID = {  # a minimal valid object of each kind, which the fuzzer then mutates
    "ConfigMap": {"data": {"k": "v"}},
    "Secret": {"stringData": {"k": "v"}},
    "Pod": {"spec": _POD_SPEC},
    "Service": {"spec": {"ports": [{"port": 80}]}},
    "Deployment": {"spec": {"selector": {"matchLabels": {"a": "b"}},
                            "template": {"metadata": {"labels": {"a": "b"}}, "spec": _POD_SPEC}}},
    "Job": {"spec": {"template": {"spec": {**_POD_SPEC, "restartPolicy": "Never"}}}},
    "Role": {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
    "Event": {"eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "x/y", "reportingInstance": "i",
              "action": "A", "reason": "R", "type": "Normal",
              "regarding": {"kind": "Pod", "name": "p", "namespace": NAMESPACE}},
}
RESOURCES = [
    (f"/api/v1/namespaces/{NAMESPACE}/configmaps", "v1", "ConfigMap"),
    (f"/api/v1/namespaces/{NAMESPACE}/secrets", "v1", "Secret"),
    (f"/api/v1/namespaces/{NAMESPACE}/pods", "v1", "Pod"),
    (f"/api/v1/namespaces/{NAMESPACE}/services", "v1", "Service"),
    (f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments", "apps/v1", "Deployment"),
    (f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs", "batch/v1", "Job"),
    (f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NAMESPACE}/roles", "rbac.authorization.k8s.io/v1", "Role"),
    (f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events", "events.k8s.io/v1", "Event"),
]
SUBRESOURCES = ["", "", "", "/status", "/scale", "/log", "/exec", "/eviction", "/binding", "/nope", "/%0a",
                "/status/extra"]
CONTENT_TYPES = ["application/json", "application/yaml", "application/merge-patch+json",
                 "application/json-patch+json", "application/strategic-merge-patch+json",
                 "application/apply-patch+yaml", "application/vnd.kubernetes.protobuf", "text/plain",
                 "application/json; charset=utf-8", "", "application/x-www-form-urlencoded", "multipart/form-data",
                 "application/json;as=Table;v=v1;g=meta.k8s.io", "\x7f/\x00"]
PATCH_TYPES = ["application/merge-patch+json", "application/json-patch+json", "application/strategic-merge-patch+json",
               "application/apply-patch+yaml"]
ACCEPTS = ["", "application/json", "application/yaml", "application/json;as=Table;v=v1;g=meta.k8s.io",
           "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io", "application/vnd.kubernetes.protobuf",
           "text/html", "*/*", "application/json;as=Bogus", "image/png;q=0.1, */*;q=0.01"]
QUERY_KEYS = ["limit", "continue", "resourceVersion", "resourceVersionMatch", "labelSelector", "fieldSelector",
              "dryRun", "fieldManager", "fieldValidation", "force", "pretty", "propagationPolicy",
              "gracePeriodSeconds", "orphanDependents", "timeoutSeconds", "allowWatchBookmarks", "sendInitialEvents",
              "includeObject", "container", "tailLines", "sinceSeconds", "limitBytes", "command", "x"]
NUMBERS = ["0", "1", "-1", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1e3", "0x10",
           " 1", "+1", "1_000", "NaN"]


def _text(max_size: int = 40) -> st.SearchStrategy[str]:
    return st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=max_size)


def _object(api_version: str, kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """A mutated object of the kind: a plausible skeleton with random values and fields in random places."""
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=False),
                     _text(), st.just("x" * 70_000))
    junk = st.recursive(leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(_text(12), c, max_size=3),
                        max_leaves=8)
    meta = st.fixed_dictionaries({"name": st.sampled_from([*NAMES, "", "Bad Name", "a" * 300])},
                                 optional={"namespace": st.sampled_from([NAMESPACE, "other", ""]),
                                           "labels": junk, "annotations": junk, "resourceVersion": junk,
                                           "generateName": st.just("fz-"), "finalizers": junk, "uid": junk})
    return st.fixed_dictionaries(
        {"apiVersion": st.sampled_from([api_version, api_version, "v2", ""]),
         "kind": st.sampled_from([kind, kind, "Pod", ""]), "metadata": st.one_of(meta, junk)},
        optional={"spec": junk, "data": junk, "status": junk, "stringData": junk, "rules": junk, "type": junk,
                  "note": junk, "reason": junk})


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """One hostile request: method, path, query, headers, body."""
    collection, api_version, kind = draw(st.sampled_from(RESOURCES))
    method = draw(st.sampled_from(["GET", "GET", "POST", "POST", "POST", "PUT", "PUT", "PATCH", "PATCH", "PATCH",
                                   "DELETE", "DELETE", "HEAD", "OPTIONS", "TRACE", "BREW"]))
    path = collection
    if method in ("PUT", "PATCH") or method != "POST" and draw(st.booleans()):
        path += "/" + urllib.parse.quote(draw(st.sampled_from([*NAMES, *NAMES, "", "..", "%", "a" * 500])) +
                                         draw(st.sampled_from(["", "", "\n", "\x00", "/x", "é"])), safe="/%.")
        path += draw(st.sampled_from(SUBRESOURCES))
    if draw(st.integers(0, 9)) == 0:
        path = draw(st.sampled_from(["/", "/api", "/apis/apps", "/apis/x.io/v1/things", "/api/v1/bogus",
                                     "/openapi/v2", "/openapi/v3/api/v1", "/version", "/metrics", "/readyz",
                                     "/livez?verbose", "/healthz/x", "/api/v1/namespaces/fuzz/configmaps/../../..",
                                     "//", "/api/v1/namespaces//configmaps"]))
    params = draw(st.lists(st.tuples(st.sampled_from(QUERY_KEYS),
                                     st.one_of(st.sampled_from(NUMBERS), _text(20),
                                               st.sampled_from(["All", "true", "Strict", "Orphan", "x=y,", "!",
                                                                "metadata.name=fz-a", "NotOlderThan"]))),
                          max_size=4))
    if draw(st.integers(0, 19)) == 0:
        params.append(("watch", "1"))
    if any(k == "watch" for k, _ in params) or method == "GET" and path.endswith(("/log", "/exec")):
        params = [(k, v) for k, v in params if k != "timeoutSeconds"] + [("timeoutSeconds", "1")]
    query = urllib.parse.urlencode(params)
    content_type = draw(st.sampled_from(CONTENT_TYPES)) if draw(st.booleans()) else \
        "application/json" if method != "PATCH" else draw(st.sampled_from(PATCH_TYPES))
    shape = draw(st.sampled_from(["object", "object", "object", "json", "bytes", "yaml", "patch", "empty"]))
    if shape == "object" and draw(st.booleans()):  # a valid object with one value replaced by junk
        obj = {"apiVersion": api_version, "kind": kind,
               "metadata": {"name": draw(st.sampled_from(NAMES)), "labels": {"a": "b"}},
               **json.loads(json.dumps(VALID[kind]))}
        if draw(st.integers(0, 3)):
            target: Any = obj
            for _ in range(draw(st.integers(1, 4))):
                if not isinstance(target, dict) or not target:
                    break
                key = draw(st.sampled_from(sorted(target)))
                if not isinstance(target[key], dict) or draw(st.booleans()):
                    target[key] = draw(st.one_of(st.none(), st.integers(-2**64, 2**64), _text(),
                                                 st.lists(st.integers(), max_size=2), st.just({}),
                                                 st.just("x" * 70_000)))
                    break
                target = target[key]
    elif shape == "object":
        obj = draw(_object(api_version, kind))
    if shape == "object":
        if draw(st.booleans()):  # an unknown field, control characters and all
            obj["x" + draw(_text(8))] = draw(st.integers() | _text())
        body: bytes = (json.dumps(obj) if "yaml" not in content_type or draw(st.booleans())
                       else _yaml(obj)).encode()
    elif shape == "json":
        body = json.dumps(draw(st.recursive(st.none() | st.integers() | _text(),
                                            lambda c: st.lists(c) | st.dictionaries(_text(8), c),
                                            max_leaves=10))).encode()
    elif shape == "bytes":
        body = draw(st.binary(max_size=200))
    elif shape == "yaml":
        body = draw(st.sampled_from([b"a: &a [*a]", b"- !!binary aGk=\n", b"!!set {a}", b"{1: 2}", b"? [1]\n: 2",
                                     b"a: !!python/object:os.system x", b"a:\n\t- b", b"---\n---\n", b"\xff\xfe",
                                     b"a: 2024-01-01", b"[" * 200]))
    elif shape == "patch":
        body = json.dumps(draw(st.lists(st.fixed_dictionaries(
            {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
             "path": st.sampled_from(["/metadata/labels/a", "/spec", "", "/metadata", "/-", "/data/x", "~"])},
            optional={"from": st.sampled_from(["/metadata", "", "/x"]), "value": st.integers() | _text()}),
            max_size=5))).encode()
    else:
        body = b""
    headers = {"Content-Type": content_type} if content_type else {}
    if draw(st.booleans()):
        headers["Accept"] = draw(st.sampled_from(ACCEPTS))
    extra = [] if draw(st.booleans()) else draw(st.lists(st.sampled_from([
        ("Content-Encoding", "gzip"), ("Content-Encoding", "br"), ("Content-Encoding", "x"),
        ("Expect", "bogus"), ("Expect", "100-continue"), ("Audit-ID", "z" * 5000), ("Audit-ID", "ok-1"),
        ("Connection", "Upgrade"), ("Upgrade", "websocket"), ("Accept-Encoding", "gzip"),
        ("Impersonate-User", "nobody"), ("Impersonate-Group", "system:masters"), ("Warning", "x"),
        ("X-Remote-User", "admin"), ("Transfer-Encoding", "chunked"), ("If-Match", "x"),
        ("Content-Type", "application/json"), ("Accept", "application/json")]), max_size=3, unique=True))
    for key, value in extra:
        headers[key] = value
    return {"method": method, "path": path + ("?" + query if query else ""), "headers": headers, "body": body,
            "collection": collection}


def _yaml(obj: Any) -> str:
    import yaml

    return yaml.safe_dump(obj)


class Client:
    """A keep-alive HTTPS connection to Envoy as the admin; reconnects after the server closes it."""

    def __init__(self, stack: Stack):
        self.context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
        self.context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
        url = urlparse(stack.url)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 443
        self.conn: http.client.HTTPSConnection | None = None

    def send(self, method: str, path: str, headers: dict[str, str], body: bytes,
             timeout: float = 15) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body); raises on a transport failure (a hang is a timeout)."""
        if "Transfer-Encoding" in headers:  # http.client frames the body itself
            headers = {k: v for k, v in headers.items() if k != "Transfer-Encoding"}
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=timeout)
        try:
            conn.putrequest(method, path, skip_accept_encoding=True)
            for key, value in {**headers, "Content-Length": str(len(body))}.items():
                conn.putheader(key, value)
            conn.endheaders(body)
            response = conn.getresponse()
            data = response.read() if method != "HEAD" else b""
            return response.status, {k.lower(): v for k, v in response.getheaders()}, data
        finally:
            conn.close()


def _fingerprint(obj: dict[str, Any]) -> str:
    """What a client's write changes: the object without status, resourceVersion and managedFields, and without
    what controllers write on their own (the deployment controller's revision annotation)."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "managedFields")}
    meta["annotations"] = {k: v for k, v in (meta.get("annotations") or {}).items()
                           if not k.startswith("deployment.kubernetes.io/")}
    return json.dumps({**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}, sort_keys=True)


def _snapshot(client: Client, collection: str) -> dict[str, str]:
    """name -> fingerprint of the objects of one resource in the fuzz namespace that a client wrote: those
    controllers make (owned, like a Job's Pods, or named with a dot, like kube-root-ca.crt and Events) are left
    out, as they come and go on their own."""
    status, _, body = client.send("GET", collection, {"Accept": "application/json"}, b"")
    assert status == 200, body[:300]
    return {i["metadata"]["name"]: _fingerprint(i) for i in json.loads(body)["items"]
            if not i["metadata"].get("ownerReferences") and "." not in i["metadata"]["name"]}


@pytest.fixture(scope="module")
def fuzz_namespace(stack: Stack, kubectl: Kubectl) -> Iterator[str]:
    """The fuzz namespace, with an object ``fz-a`` of each kind for updates and patches to reach."""
    kubectl.run("create", "namespace", NAMESPACE)
    client = Client(stack)
    for collection, api_version, kind in RESOURCES:
        body = {"apiVersion": api_version, "kind": kind, "metadata": {"name": NAMES[0]}, **VALID[kind]}
        status, _, reply = client.send("POST", collection, {"Content-Type": "application/json"},
                                       json.dumps(body).encode())
        assert status == 201, reply[:300]
    time.sleep(2)  # the controllers' first passes over them (status, the deployment's revision)
    yield NAMESPACE
    kubectl.run("delete", "namespace", NAMESPACE, "--wait=false", check=False)


def _too_large_resource_version(status: int, body: bytes) -> bool:
    """kube's own 5xx: a read at a resourceVersion the store has not reached is a 504 Timeout with the
    ResourceVersionTooLarge cause (client-go waits and retries on it); beyond int64 it is a 400."""
    if status != 504:
        return False
    causes = (json.loads(body).get("details") or {}).get("causes") or []
    return any(c.get("reason") == "ResourceVersionTooLarge" for c in causes)


def _pids(stack: Stack) -> dict[str, int]:
    return {name: p.pid for name, p in stack.processes.items() if p.poll() is None}


def test_fuzz_every_verb_and_content_type(stack: Stack, fuzz_namespace: str) -> None:
    client = Client(stack)
    before = _pids(stack)
    started = time.monotonic()
    seen: dict[int, int] = {}
    failures: list[str] = []

    @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not RANDOM,
              suppress_health_check=list(HealthCheck))
    @given(requests())
    def run(request: dict[str, Any]) -> None:
        write = request["method"] in ("POST", "PUT", "PATCH", "DELETE")
        snapshot = _snapshot(client, request["collection"]) if write else None
        status, headers, body = client.send(request["method"], request["path"], request["headers"], request["body"])
        seen[status] = seen.get(status, 0) + 1
        where = f"{request['method']} {request['path'][:200]} {request['headers']} {request['body'][:200]!r}"
        assert status < 500 or _too_large_resource_version(status, body), f"{status} for {where}: {body[:300]!r}"
        if status >= 400 and request["method"] != "HEAD":
            if headers.get("content-type") == k8sproto.MEDIA_TYPE:  # protobuf negotiated: a protobuf Status
                reply = k8sproto.decode(body)
            elif headers.get("content-type") == "application/yaml":  # YAML negotiated: a YAML Status
                reply = yaml.safe_load(body)
            else:
                assert headers.get("content-type", "").startswith("application/json"), f"{status} not JSON: {where}"
                reply = json.loads(body)
            assert reply.get("kind") == "Status" and reply.get("code") == status, f"{where}: {body[:300]!r}"
            if write:  # a refused write leaves what is stored as it was
                after = _snapshot(client, request["collection"])
                changed = {n: (snapshot.get(n), after.get(n)) for n in {*snapshot, *after}
                           if snapshot.get(n) != after.get(n)}
                assert not changed, f"write behind {status} for {where}: {changed}"

    try:
        run()
    except AssertionError as err:
        failures.append(str(err))
    elapsed = time.monotonic() - started
    print(f"fuzz: {sum(seen.values())} requests in {elapsed:.1f}s, by status {dict(sorted(seen.items()))}")
    assert not failures, failures[0][:3000]
    assert _pids(stack) == before, "a process of the stack restarted"
    assert elapsed < 60 or EXAMPLES > 300, f"fuzzing took {elapsed:.0f}s"
