"""Dynamic admission webhooks against the example servers over real TLS (kapi.local.pki certificates)."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from examples.webhooks import common, pod_defaults, require_labels
from kapi import errors
from kapi.attributes import UserInfo
from kapi.local import pki
from services.admission import webhooks
from services.admission.matching import request_variable
from services.admission.webhooks import MutatingWebhooks, ValidatingWebhooks, WebhookClient
from tests.admission.fakes import FakeInformers, FakeNamespaces, pod, request

GROUP = "admissionregistration.k8s.io"
CLIENTS: list[WebhookClient] = []


class Servers:
    def __init__(self, ca: str, other_ca: str, port: int, runners: list[web.AppRunner]):
        self.ca, self.other_ca, self.port, self.runners = ca, other_ca, port, runners
        self.seen: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"


@pytest.fixture(scope="module")
async def servers(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Servers]:
    ours = pki.ensure_pki(tmp_path_factory.mktemp("hook-pki"), advertise=["hook.demo.svc"], port=None)
    theirs = pki.ensure_pki(tmp_path_factory.mktemp("other-pki"), port=None)
    box: dict[str, Servers] = {}

    def record(review: common.Review) -> common.Review:
        def wrapped(req: dict[str, Any]) -> dict[str, Any]:
            box["s"].seen.append(req)
            return review(req)
        return wrapped

    async def slow(http: web.Request) -> web.Response:
        await asyncio.sleep(3)
        return web.Response(status=500)

    def echo_uid(mangle: str) -> Any:
        async def handle(http: web.Request) -> web.Response:
            body = await http.json()
            if mangle == "uid":
                return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                          "response": {"uid": "wrong", "allowed": True}})
            if mangle == "status":
                return web.Response(status=500, text="boom")
            if mangle == "json":
                return web.Response(status=200, text="not json")
            return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                      "response": {"uid": body["request"]["uid"], "allowed": True,
                                                   "patch": "W10="}})  # patch without patchType
        return handle

    app = common.make_app({"/mutate": record(pod_defaults.review), "/validate": record(require_labels.review),
                           "/relabel": record(lambda r: {"allowed": True, **common.json_patch(
                               [{"op": "add", "path": "/metadata/labels", "value": {"relabelled": "yes"}}])})})
    async def headers(http: web.Request) -> web.Response:
        body = await http.json()
        box["s"].headers.append(dict(http.headers))
        box["s"].paths.append(http.path_qs)
        return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                  "response": {"uid": body["request"]["uid"], "allowed": True}})

    app.router.add_post("/slow", slow)
    app.router.add_post("/headers", headers)
    for mangle in ("uid", "status", "json", "patchtype"):
        app.router.add_post(f"/bad-{mangle}", echo_uid(mangle))
    runner, port = await common.start(app, ours.apiserver_cert, ours.apiserver_key)
    s = Servers(base64.b64encode(Path(ours.ca_cert).read_bytes()).decode(),
                base64.b64encode(Path(theirs.ca_cert).read_bytes()).decode(), port, [runner])
    box["s"] = s
    yield s
    await runner.cleanup()
    for client in CLIENTS:
        await client.close()


def hook(name: str, url: str, ca: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "clientConfig": {"url": url, "caBundle": ca},
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods", "configmaps"]}],
            "sideEffects": "None", "admissionReviewVersions": ["v1"], **extra}


def plugins(*configs: tuple[str, list[dict[str, Any]]], ns_labels: dict[str, str] | None = None
            ) -> tuple[MutatingWebhooks, ValidatingWebhooks]:
    informers = FakeInformers()
    for i, (kind, hooks) in enumerate(configs):
        resource = "mutatingwebhookconfigurations" if kind == "m" else "validatingwebhookconfigurations"
        informers.put(GROUP, resource, {"metadata": {"name": f"cfg-{i}"}, "webhooks": hooks})
    namespaces: Any = FakeNamespaces({"demo": ns_labels or {}})
    client = WebhookClient(informers)  # type: ignore[arg-type]
    CLIENTS.append(client)
    return (MutatingWebhooks(informers, namespaces, client),  # type: ignore[arg-type]
            ValidatingWebhooks(informers, namespaces, client))  # type: ignore[arg-type]


async def refusal(coro: Any) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as exc:
        await coro
    return exc.value


async def test_pod_defaults_sets_security_context(servers: Servers) -> None:
    m, _ = plugins(("m", [hook("pod-defaults.example.com", servers.url("/mutate"), servers.ca)]))
    req = request("CREATE", "pods", pod(securityContext={}))
    await m.admit(req)
    assert req.object["spec"]["securityContext"] == {"runAsNonRoot": True, "runAsUser": 1234}
    sent = servers.seen[-1]
    assert sent["operation"] == "CREATE" and sent["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert sent["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert sent["userInfo"]["username"] == "alice" and sent["namespace"] == "demo"
    assert sent["options"] == {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}
    assert sent["oldObject"] is None and sent["dryRun"] is False and sent["uid"]


async def test_pod_defaults_keeps_explicit_values_and_rejects_root(servers: Servers) -> None:
    m, _ = plugins(("m", [hook("pod-defaults.example.com", servers.url("/mutate"), servers.ca)]))
    req = request("CREATE", "pods", pod(securityContext={"runAsNonRoot": False, "runAsUser": 0}))
    await m.admit(req)
    assert req.object["spec"]["securityContext"] == {"runAsNonRoot": False, "runAsUser": 0}
    err = await refusal(m.admit(request("CREATE", "pods", pod(securityContext={"runAsNonRoot": True,
                                                                                 "runAsUser": 0}))))
    assert (err.code, err.message) == (403, 'admission webhook "pod-defaults.example.com" denied the request: '
                                             "runAsNonRoot specified, but runAsUser set to 0 (the root user)")


async def test_validating_denies_and_warns(servers: Servers) -> None:
    _, v = plugins(("v", [hook("labels.example.com", servers.url("/validate"), servers.ca)]))
    err = await refusal(v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}})))
    assert (err.code, err.message) == (403, 'admission webhook "labels.example.com" denied the request: '
                                             'missing required label "team"')
    req = request("CREATE", "configmaps", {"metadata": {"name": "c", "labels": {"team": "a"}}})
    await v.validate(req)
    assert req.warnings == ['label "owner" is recommended']


@pytest.mark.parametrize(("path", "ca", "expected"), [
    ("/mutate", "other", 'failed to call webhook: Post "{url}?timeout=10s": tls: failed to verify certificate: '
                         "x509: certificate signed by unknown authority"),
    ("/bad-uid", "ours", 'received invalid webhook response: expected response.uid="'),
    ("/bad-status", "ours", 'failed to call webhook: an error on the server ("boom") has prevented the request '
                            "from succeeding"),
    ("/bad-json", "ours", "received invalid webhook response:"),
    ("/bad-patchtype", "ours", "received invalid webhook response: webhook returned response.patch but not"),
])
async def test_call_failures_obey_failure_policy(servers: Servers, path: str, ca: str, expected: str) -> None:
    bundle = servers.ca if ca == "ours" else servers.other_ca
    url = servers.url(path)
    m, _ = plugins(("m", [hook("strict.example.com", url, bundle)]))
    err = await refusal(m.admit(request("CREATE", "pods", pod())))
    assert err.code == 500 and err.reason == "InternalError"
    prefix = 'Internal error occurred: failed calling webhook "strict.example.com": '
    assert err.message.startswith(prefix + expected.format(url=url)), err.message
    m, _ = plugins(("m", [hook("lenient.example.com", url, bundle, failurePolicy="Ignore")]))
    req = request("CREATE", "pods", pod())
    await m.admit(req)  # Ignore: the request proceeds unchanged
    assert "securityContext" not in req.object["spec"]


async def test_timeout(servers: Servers) -> None:
    _, v = plugins(("v", [hook("slow.example.com", servers.url("/slow"), servers.ca, timeoutSeconds=1)]))
    loop = asyncio.get_running_loop()
    started = loop.time()
    err = await refusal(v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}})))
    assert 0.9 < loop.time() - started < 2.5
    assert err.message == (f'Internal error occurred: failed calling webhook "slow.example.com": failed to call '
                           f'webhook: Post "{servers.url("/slow")}?timeout=1s": context deadline exceeded')
    # the request deadline bounds the call too
    _, v = plugins(("v", [hook("slow.example.com", servers.url("/slow"), servers.ca, failurePolicy="Ignore")]))
    started = loop.time()
    await v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}}, timeout=0.5))
    assert loop.time() - started < 1.5


@pytest.mark.parametrize(("extra", "obj_labels", "called"), [
    ({}, {}, True),
    ({"namespaceSelector": {"matchLabels": {"env": "prod"}}}, {}, True),
    ({"namespaceSelector": {"matchLabels": {"env": "dev"}}}, {}, False),
    ({"namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}}, {},
     False),
    ({"objectSelector": {"matchLabels": {"app": "web"}}}, {"app": "web"}, True),
    ({"objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]}}, {"skip": "1"}, False),
    ({"matchConditions": [{"name": "not-kube-system", "expression": "request.namespace != 'kube-system'"}]}, {},
     True),
    ({"matchConditions": [{"name": "only-updates", "expression": "request.operation == 'UPDATE'"}]}, {}, False),
    ({"rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}]}, {},
     False),
    ({"rules": [{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}]}, {}, True),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods/status"]}]},
     {}, False),
    ({"rules": [{"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                 "scope": "Cluster"}]}, {}, False),
])
async def test_selection(servers: Servers, extra: dict[str, Any], obj_labels: dict[str, str], called: bool) -> None:
    m, _ = plugins(("m", [hook("pod-defaults.example.com", servers.url("/mutate"), servers.ca, **extra)]),
                   ns_labels={"env": "prod"})
    obj = pod()
    obj["metadata"]["labels"] = obj_labels
    req = request("CREATE", "pods", obj)
    await m.admit(req)
    assert ("runAsUser" in req.object["spec"].get("securityContext", {})) is called


async def test_match_condition_error_obeys_failure_policy(servers: Servers) -> None:
    bad = [{"name": "broken", "expression": "object.nope.deeper == 1"}]
    m, _ = plugins(("m", [hook("cel.example.com", servers.url("/mutate"), servers.ca, matchConditions=bad)]))
    err = await refusal(m.admit(request("CREATE", "pods", pod())))
    assert err.code == 500 and 'failed calling webhook "cel.example.com"' in err.message


async def test_dry_run_needs_side_effects_none(servers: Servers) -> None:
    m, _ = plugins(("m", [hook("effects.example.com", servers.url("/mutate"), servers.ca, sideEffects="Unknown")]))
    err = await refusal(m.admit(request("CREATE", "pods", pod(), dry_run=True)))
    assert (err.code, err.message) == (400, 'admission webhook "effects.example.com" does not support dry run')
    m, _ = plugins(("m", [hook("ok.example.com", servers.url("/mutate"), servers.ca, sideEffects="NoneOnDryRun")]))
    req = request("CREATE", "pods", pod(), dry_run=True)
    await m.admit(req)
    assert servers.seen[-1]["dryRun"] is True and req.object["spec"]["securityContext"]["runAsUser"] == 1234


async def test_mutating_order_and_reinvocation(servers: Servers) -> None:
    first = hook("a-defaults.example.com", servers.url("/mutate"), servers.ca, reinvocationPolicy="IfNeeded")
    second = hook("b-relabel.example.com", servers.url("/relabel"), servers.ca)
    m, _ = plugins(("m", [first, second]))
    before = len(servers.seen)
    req = request("CREATE", "pods", pod())
    await m.admit(req)
    calls = servers.seen[before:]
    assert len(calls) == 3  # a, b, then a again because b changed the object after a ran
    assert calls[2]["object"]["metadata"]["labels"] == {"relabelled": "yes"}
    assert req.object["metadata"]["labels"] == {"relabelled": "yes"}


async def test_validating_webhooks_run_in_parallel(servers: Servers) -> None:
    hooks = [hook(f"slow-{i}.example.com", servers.url("/slow"), servers.ca, timeoutSeconds=1,
                  failurePolicy="Ignore") for i in range(3)]
    _, v = plugins(("v", hooks))
    loop = asyncio.get_running_loop()
    started = loop.time()
    await v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}}))
    assert loop.time() - started < 2.0  # three 1 s timeouts at once, not one after another


async def test_service_reference_resolved_through_endpoints(servers: Servers) -> None:
    spec = hook("svc.example.com", "", servers.ca)
    spec["clientConfig"] = {"service": {"namespace": "demo", "name": "hook", "path": "/mutate", "port": 443},
                            "caBundle": servers.ca}
    m, _ = plugins(("m", [spec]))
    informers = m.informers
    informers.put("", "services", {"metadata": {"name": "hook", "namespace": "demo"},  # type: ignore[attr-defined]
                                   "spec": {"ports": [{"name": "https", "port": 443}]}})
    informers.put("", "endpoints", {"metadata": {"name": "hook", "namespace": "demo"},  # type: ignore[attr-defined]
                                    "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                                                 "ports": [{"name": "https", "port": servers.port}]}]})
    req = request("CREATE", "pods", pod())
    await m.admit(req)  # TLS verified against hook.demo.svc
    assert req.object["spec"]["securityContext"]["runAsUser"] == 1234
    informers.cache("", "endpoints").items.clear()  # type: ignore[attr-defined]
    err = await refusal(m.admit(request("CREATE", "pods", pod())))
    assert err.code == 500 and 'service "hook" has no ready endpoints for port 443' in err.message


# ------------------------------------------------------------------ kube's wire: headers, errors, the review body


async def test_posts_with_kube_apiserver_admission_user_agent(servers: Servers) -> None:
    """kube's webhook rest.Config: UserAgent kube-apiserver-admission (setGlobalDefaults), client-go's Accept."""
    _, v = plugins(("v", [hook("headers.example.com", servers.url("/headers"), servers.ca)]))
    await v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}}))
    sent = servers.headers[-1]
    assert sent["User-Agent"] == "kube-apiserver-admission"
    assert (sent["Accept"], sent["Content-Type"]) == ("application/json, */*", "application/json")
    assert servers.paths[-1] == "/headers?timeout=10s"


async def test_service_webhook_is_named_and_addressed_by_its_service_host(servers: Servers) -> None:
    spec = hook("svc-headers.example.com", "", servers.ca)
    spec["clientConfig"] = {"service": {"namespace": "demo", "name": "hook", "path": "/headers/", "port": 8443},
                            "caBundle": servers.ca}
    _, v = plugins(("v", [spec]))
    v.informers.put("", "services", {"metadata": {"name": "hook", "namespace": "demo"},  # type: ignore[attr-defined]
                                     "spec": {"ports": [{"name": "https", "port": 8443}]}})
    v.informers.put("", "endpoints", {"metadata": {"name": "hook", "namespace": "demo"},  # type: ignore[attr-defined]
                                      "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                                                   "ports": [{"name": "https", "port": servers.port}]}]})
    await v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}}))
    assert servers.headers[-1]["Host"] == "hook.demo.svc:8443" and servers.paths[-1] == "/headers?timeout=10s"


async def test_a_webhook_that_cannot_be_reached_fails_with_go_s_text() -> None:
    m, _ = plugins(("m", [hook("down.example.com", "https://127.0.0.1:1/mutate", "")]))
    err = await refusal(m.admit(request("CREATE", "pods", pod())))
    cause = ('failed calling webhook "down.example.com": failed to call webhook: Post '
             '"https://127.0.0.1:1/mutate?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused')
    assert err.status() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": f"Internal error occurred: {cause}", "reason": "InternalError",
                            "details": {"causes": [{"message": cause}]}, "code": 500}
    m, _ = plugins(("m", [hook("down.example.com", "https://127.0.0.1:1/mutate", "", failurePolicy="Ignore")]))
    await m.admit(request("CREATE", "pods", pod()))


async def test_a_plain_http_server_behind_an_https_url(servers: Servers) -> None:
    app = web.Application()
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        _, v = plugins(("v", [hook("plain.example.com", f"https://127.0.0.1:{port}", servers.ca)]))
        err = await refusal(v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}})))
    finally:
        await runner.cleanup()
    assert err.message == (f'Internal error occurred: failed calling webhook "plain.example.com": failed to call '
                           f'webhook: Post "https://127.0.0.1:{port}/?timeout=10s": http: server gave HTTP '
                           f"response to HTTPS client")


def _service_other(plugin: Any, servers: Servers) -> None:
    """Service demo/other on port 443, its endpoint the test server (the webhook's ``clientConfig.service``)."""
    plugin.informers.put("", "services", {"metadata": {"name": "other", "namespace": "demo"},
                                          "spec": {"ports": [{"port": 443}]}})
    plugin.informers.put("", "endpoints", {"metadata": {"name": "other", "namespace": "demo"},
                                           "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                                                        "ports": [{"port": servers.port}]}]})


async def test_a_certificate_for_another_name(servers: Servers) -> None:
    spec = hook("wrong-name.example.com", "", servers.ca)
    spec["clientConfig"] = {"service": {"namespace": "demo", "name": "other", "port": 443}, "caBundle": servers.ca}
    _, v = plugins(("v", [spec]))
    _service_other(v, servers)
    err = await refusal(v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}})))
    prefix = ('Internal error occurred: failed calling webhook "wrong-name.example.com": failed to call webhook: '
              'Post "https://other.demo.svc:443/?timeout=10s": tls: failed to verify certificate: '
              "x509: certificate is valid for ")
    assert err.message.startswith(prefix) and err.message.endswith(", not other.demo.svc"), err.message
    assert "hook.demo.svc" in err.message


def test_go_error_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import ssl

    import aiohttp

    monkeypatch.setattr(webhooks, "_nameserver", lambda: "10.96.0.10:53")
    dns = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    assert webhooks.go_error(dns, "nosuch.invalid", 443) == \
        "dial tcp: lookup nosuch.invalid on 10.96.0.10:53: no such host"
    key = aiohttp.client_reqrep.ConnectionKey("nosuch.invalid", 443, True, True, None, None, None)
    assert webhooks.go_error(aiohttp.ClientConnectorDNSError(key, dns), "nosuch.invalid", 443) == \
        "dial tcp: lookup nosuch.invalid on 10.96.0.10:53: no such host"
    refused = ConnectionRefusedError(111, "Connect call failed ('10.0.0.7', 8443)")
    assert webhooks.go_error(aiohttp.ClientConnectorError(key, refused), "hook.example.com", 8443) == \
        "dial tcp 10.0.0.7:8443: connect: connection refused"
    unreachable = OSError(113, "Connect call failed ('fd00::1', 443, 0, 0)")
    assert webhooks.go_error(aiohttp.ClientConnectorError(key, unreachable), "h", 443) == \
        "dial tcp [fd00::1]:443: connect: no route to host"
    assert webhooks.go_error(TimeoutError(), "h", 443) == "context deadline exceeded"
    assert webhooks.go_error(aiohttp.ServerDisconnectedError(), "h", 443) == "EOF"
    unknown = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    unknown.verify_code, unknown.verify_message = 20, "unable to get local issuer certificate"
    assert webhooks.go_error(aiohttp.ClientConnectorCertificateError(key, unknown), "h", 443) == \
        "tls: failed to verify certificate: x509: certificate signed by unknown authority"
    expired = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    expired.verify_code, expired.verify_message = 10, "certificate has expired"
    assert webhooks.go_error(aiohttp.ClientConnectorCertificateError(key, expired), "h", 443) == \
        "tls: failed to verify certificate: x509: certificate has expired or is not yet valid"
    for text in (webhooks.go_error(exc, "h", 443) for exc in (dns, refused, unknown, ValueError("x"))):
        assert "Error(" not in text and "[Errno" not in text and "Errno" not in text


@pytest.mark.parametrize(("url", "timeout", "expected"), [
    ("https://h:8443/validate", 10, "https://h:8443/validate?timeout=10s"),
    ("https://h", 10, "https://h/?timeout=10s"),
    ("https://h/a//b/../c/", 30, "https://h/a/c?timeout=30s"),
    ("https://h/v", 4.2, "https://h/v?timeout=5s"),  # the request's time left, rounded up
    ("https://h/v", 90, "https://h/v?timeout=1m30s"),
])
def test_request_url(url: str, timeout: float, expected: str) -> None:
    assert webhooks.request_url(url, timeout) == expected


def _review_of(req: Any, name: str = "h.example.com") -> dict[str, Any]:
    return webhooks._review(req, webhooks.Webhook(name, "cfg", {}, False), "u-1")["request"]


def test_review_omits_empty_user_fields_as_go_omitempty() -> None:
    req = request("CREATE", "configmaps", {"metadata": {"name": "c"}})
    req.attributes = dataclasses.replace(req.attributes, user=UserInfo("system:anonymous"))
    assert _review_of(req)["userInfo"] == {"username": "system:anonymous"}
    assert request_variable(req)["userInfo"] == {"username": "system:anonymous"}  # policies' CEL request too
    req.attributes = dataclasses.replace(req.attributes,
                                         user=UserInfo("bob", "u-bob", ("dev",), (("scopes", ("a", "b")),)))
    assert _review_of(req)["userInfo"] == {"username": "bob", "uid": "u-bob", "groups": ["dev"],
                                           "extra": {"scopes": ["a", "b"]}}


def test_review_body_fields_as_kube_encodes_them() -> None:
    sent = _review_of(request("CREATE", "namespaces", {"metadata": {"generateName": "team-"}}))
    assert "name" not in sent and "namespace" not in sent  # empty: omitted, never the generateName
    assert "subResource" not in sent and "requestSubResource" not in sent
    assert sent["oldObject"] is None and sent["dryRun"] is False
    assert sent["requestKind"] == {"group": "", "version": "v1", "kind": "Namespace"}
    assert sent["options"] == {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
    dry = _review_of(request("DELETE", "pods", None, old=pod(), dry_run=True))
    assert dry["name"] == "web" and dry["object"] is None and dry["dryRun"] is True
    assert dry["options"] == {"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1", "dryRun": ["All"]}
    connect = _review_of(request("CONNECT", "pods", None, subresource="exec"))
    assert connect["options"] is None and connect["subResource"] == connect["requestSubResource"] == "exec"


@pytest.mark.parametrize(("status", "content_type", "body", "expected"), [
    (500, "text/plain; charset=utf-8", b"boom\n", 'an error on the server ("boom") has prevented the request from '
                                                  "succeeding"),
    (502, "application/json", b"{}", 'an error on the server ("unknown") has prevented the request from succeeding'),
    (500, "application/json", b'{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": "nope"}',
     "nope"),
    (404, "text/plain", b"404 page not found", "the server could not find the requested resource"),
    (403, "text/plain", b"go away", "go away"),
    (503, "", b"", "the server is currently unable to handle the request"),
    (302, "text/html", b"", "the server responded with the status code 302 but did not return more information"),
])
def test_a_webhook_answer_outside_2xx_is_client_go_s_error(status: int, content_type: str, body: bytes,
                                                          expected: str) -> None:
    assert webhooks.server_response_error(status, content_type, body) == expected


def _certificate(*, dns: tuple[str, ...] = (), ips: tuple[str, ...] = (), cn: str = "hook", days: int = 30) -> Any:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(x509.NameOID.COMMON_NAME, cn)])
    now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
               .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=days)))
    if dns or ips:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]), critical=False)
    return builder.sign(key, hashes.SHA256())


def test_x509_texts_in_go_s_order() -> None:
    import re
    import ssl

    error = ssl.SSLCertVerificationError(1, "certificate verify failed")
    error.verify_code = 20  # OpenSSL: unknown issuer first; Go: the leaf's dates, then its names, then the issuer
    expired = webhooks._x509_text(error, "hook.demo.svc", _certificate(dns=("hook.demo.svc",), days=1))
    assert re.fullmatch(r"x509: certificate has expired or is not yet valid: current time "
                        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ is after 2026-01-02T00:00:00Z", expired), expired
    fresh = {"days": 36500}
    assert webhooks._x509_text(error, "other.demo.svc", _certificate(dns=("hook.demo.svc", "hook"), **fresh)) == \
        "x509: certificate is valid for hook.demo.svc, hook, not other.demo.svc"
    assert webhooks._x509_text(error, "a.demo.svc", _certificate(dns=("*.demo.svc",), **fresh)) == \
        "x509: certificate signed by unknown authority"
    assert webhooks._x509_text(error, "10.0.0.1", _certificate(dns=("hook",), **fresh)) == \
        "x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs"
    assert webhooks._x509_text(error, "10.0.0.1", _certificate(ips=("10.0.0.2", "::1"), **fresh)) == \
        "x509: certificate is valid for 10.0.0.2, ::1, not 10.0.0.1"
    assert webhooks._x509_text(error, "hook", _certificate(cn="hook", **fresh)) == \
        "x509: certificate relies on legacy Common Name field, use SANs instead"
    assert webhooks._x509_text(error, "hook", None) == "x509: certificate signed by unknown authority"


async def test_another_authority_and_another_name_reports_the_name_as_go(servers: Servers) -> None:
    spec = hook("both-wrong.example.com", "", servers.other_ca)
    spec["clientConfig"] = {"service": {"namespace": "demo", "name": "other", "port": 443},
                            "caBundle": servers.other_ca}
    _, v = plugins(("v", [spec]))
    _service_other(v, servers)
    err = await refusal(v.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}})))
    assert "tls: failed to verify certificate: x509: certificate is valid for " in err.message, err.message
    assert err.message.endswith(", not other.demo.svc"), err.message
