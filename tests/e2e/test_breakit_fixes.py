"""What a fresh user's break-it pass found (2026-12-02), each as kube-apiserver 1.37 answers it."""

from __future__ import annotations

import json

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl
from tests.e2e.test_kube_parity_defaults import _raw


def test_token_request_body_must_name_the_url_service_account(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """kube's token REST: a body metadata.name other than the URL's is 422, another namespace the create handler's
    400 (was: a token for the URL's)."""
    kubectl.run("-n", namespace, "create", "serviceaccount", "builder")
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/builder/token"
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "metadata": {"name": "other"},
            "spec": {"audiences": []}}
    code, raw = _raw(stack, "POST", path, body)
    status = json.loads(raw)
    assert code == 422 and status["message"] == (
        'TokenRequest.authentication.k8s.io "builder" is invalid: metadata.name: Invalid value: "other": must '
        "match the service account name if specified")
    assert status["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "metadata.name", "message":
                                            'Invalid value: "other": must match the service account name if '
                                            "specified"}]
    # Another namespace never reaches TokenREST: the create handler refuses it first (400).
    code, raw = _raw(stack, "POST", path, {**body, "metadata": {"namespace": "elsewhere"}})
    assert code == 400 and json.loads(raw)["message"] == ("the namespace of the provided object does not match the "
                                                          "namespace sent on the request")
    code, raw = _raw(stack, "POST", path, {**body, "metadata": {"name": "builder", "namespace": namespace}})
    assert code == 201 and json.loads(raw)["status"]["token"]
    answer = json.loads(raw)
    uid = kubectl.run("-n", namespace, "get", "sa", "builder", "-o", "jsonpath={.metadata.uid}").stdout
    assert answer["metadata"]["uid"] == uid and answer["spec"]["expirationSeconds"] == 3600
    code, raw = _raw(stack, "POST", path, {**body, "metadata": {"uid": "stale"}})
    assert code == 409 and json.loads(raw)["message"] == (
        'Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "builder": the UID in the token '
        f"request (stale) does not match the UID of the service account ({uid})")


def test_scale_put_checks_the_body_is_this_objects_scale(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    """PUT .../scale refuses (400) a body of another kind, name or namespace, as a plain PUT does; a bad replicas
    count is 422 naming the object (was: all accepted, and Scale.autoscaling "")."""
    kubectl.run("-n", namespace, "create", "deployment", "web", "--image=nginx")
    url = f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale"
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": {"replicas": 2}}
    for body, message in (
            ({**scale, "metadata": {"name": "other"}},
             "the name of the object (other) does not match the name on the URL (web)"),
            ({**scale, "metadata": {"name": "web", "namespace": "elsewhere"}},
             "the namespace of the provided object does not match the namespace sent on the request"),
            ({**scale, "apiVersion": "apps/v1", "kind": "Deployment"},
             "the API version in the data (apps/v1) does not match the expected API version (autoscaling/v1)")):
        code, raw = _raw(stack, "PUT", url, body)
        assert (code, json.loads(raw)["message"]) == (400, message)
    code, raw = _raw(stack, "PUT", url, {**scale, "spec": {"replicas": -3}})
    assert code == 422 and json.loads(raw)["message"] == (
        'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -3: must be greater than or equal to 0')
    code, raw = _raw(stack, "PUT", url, scale)
    assert code == 200 and json.loads(raw)["spec"]["replicas"] == 2


def _post_yaml(stack: Stack, path: str, body: str) -> tuple[int, dict, list[str]]:
    import http.client
    import ssl
    from urllib.parse import urlparse

    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=30)
    try:
        conn.request("POST", path, body=body.encode(), headers={"Content-Type": "application/yaml"})
        response = conn.getresponse()
        return response.status, json.loads(response.read()), response.headers.get_all("Warning") or []
    finally:
        conn.close()


def test_yaml_duplicate_keys_under_field_validation(stack: Stack, namespace: str) -> None:
    """A YAML body's repeated keys are go-yaml's strict errors: Strict 400, Warn one warning per key (was: the last
    value silently won)."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = "metadata:\n  name: dup\ndata:\n  a: b\n  a: c\n  z: y\n  z: x\n"
    code, status, _ = _post_yaml(stack, path + "?fieldValidation=Strict", body)
    assert code == 400 and status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal '
        'errors:\n  line 5: key "a" already set in map\n  line 7: key "z" already set in map')
    code, status, warnings = _post_yaml(stack, path + "?fieldValidation=Warn", body)
    assert code == 201 and status["data"] == {"a": "c", "z": "x"}
    assert [w.split(" ", 2)[2] for w in warnings] == ['"line 5: key \\"a\\" already set in map"',
                                                      '"line 7: key \\"z\\" already set in map"']
    code, _, warnings = _post_yaml(stack, path + "?fieldValidation=Ignore", body.replace("dup", "dup2"))
    assert code == 201 and warnings == []


def _http2(stack: Stack, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
    """One HTTP/2 request through Envoy as the admin (h2 over TLS with ALPN h2): (status, headers, body)."""
    import socket
    import ssl
    from urllib.parse import urlparse

    import h2.connection
    import h2.events

    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    context.set_alpn_protocols(["h2"])
    url = urlparse(stack.url)
    with socket.create_connection((url.hostname, url.port), timeout=20) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as sock:
        conn = h2.connection.H2Connection()
        conn.initiate_connection()
        conn.send_headers(1, [(":method", method), (":path", path), (":scheme", "https"),
                              (":authority", "localhost")], end_stream=True)
        sock.sendall(conn.data_to_send())
        status, headers, body = 0, {}, b""
        while True:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    headers = {k.decode(): v.decode() for k, v in event.headers}
                    status = int(headers[":status"])
                elif isinstance(event, h2.events.DataReceived):
                    body += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                elif isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset)):
                    return status, headers, body
            sock.sendall(conn.data_to_send())
    return status, headers, body


def test_an_unknown_method_over_http2_is_a_405_status(stack: Stack) -> None:
    """Any token is a method over HTTP/2; one HTTP/1.1 has no use for gets a JSON Status 405 from Envoy (was: the
    gateway's HTTP/1.1 parser's plain-text 400 with Python's b'...')."""
    status, headers, body = _http2(stack, "FOO", "/api/v1/namespaces")
    assert status == 405 and headers["content-type"] == "application/json"
    assert json.loads(body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": "the server does not allow this method on the requested resource",
                                "reason": "MethodNotAllowed", "code": 405}
    status, _, body = _http2(stack, "GET", "/api/v1/namespaces/default")
    assert status == 200 and json.loads(body)["metadata"]["name"] == "default"
