"""Request decoding refuses what kube-apiserver refuses: YAML alias bombs, self-referential aliases, documents
nested too deep, wrong JSON types (400 BadRequest, never a 500), and unknown fields in review APIs."""

from __future__ import annotations

import http.client
import json
import ssl
from urllib.parse import urlparse

import pytest

from kapi.local.launcher import Stack
from tests.e2e.conftest import TOKENS


def _request(stack: Stack, method: str, path: str, body: bytes | str | None = None,
             content_type: str = "application/json", token: str | None = None) -> tuple[int, dict]:
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    headers = {"Content-Type": content_type}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    else:
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    url = urlparse(stack.url)
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context, timeout=60)
    try:
        conn.request(method, path, body=body.encode() if isinstance(body, str) else body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        assert len(data) < 1_000_000, f"{len(data)} byte response"
        return response.status, json.loads(data) if data else {}
    finally:
        conn.close()


def _bomb(levels: int) -> str:
    lines = ["apiVersion: authorization.k8s.io/v1", "kind: SelfSubjectAccessReview",
             "spec: {resourceAttributes: {verb: get, resource: pods}}",
             'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


@pytest.mark.parametrize(("body", "message"), [
    (_bomb(10), "error converting YAML to JSON: yaml: document contains excessive aliasing"),
    ("a: &a [*a]\n", "error converting YAML to JSON: yaml: anchor 'a' value contains itself"),
    ("[" * 100_000, "error converting YAML to JSON: yaml: line 1: exceeded maximum nesting depth"),
])
def test_yaml_bombs_are_refused_for_token_users(stack: Stack, body: str, message: str):
    status, reply = _request(stack, "POST", SSAR, body, "application/yaml", token=TOKENS["alice"])
    assert status == 400, reply
    # kube's create handler: transformDecodeError with summarizeData (not an object: the first 30 bytes in hex)
    summary = body.encode()[:30].hex() + (" ..." if len(body.encode()) > 30 else "")
    assert reply["reason"] == "BadRequest" and reply["message"] == (
        f"the object provided is unrecognized (must be of type SelfSubjectAccessReview): {message} ({summary})")


def _nested(depth: int) -> dict:
    value: dict = {"leaf": "x"}
    for _ in range(depth):
        value = {"n": value}
    return value


def test_deep_json_is_refused_before_server_side_apply(stack: Stack, namespace: str):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deep", "annotations": {}},
          "data": {"a": "b"}, "extra": _nested(400)}
    path = f"/api/v1/namespaces/{namespace}/configmaps/deep?fieldManager=t"
    status, reply = _request(stack, "PATCH", path, json.dumps(cm), "application/apply-patch+yaml")
    assert status == 400, reply
    assert "exceeded max depth" in reply["message"]


def test_objects_just_under_the_depth_limit_are_served(stack: Stack, namespace: str):
    """Every walker (pruning, patching, managed fields) handles the deepest object decoding lets through."""
    crd_like = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deepish",
                                                                      "labels": {"t": "x"}}, "data": {"a": "b"}}
    status, reply = _request(stack, "POST", f"/api/v1/namespaces/{namespace}/configmaps", json.dumps(crd_like))
    assert status == 201, reply
    patch = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "deepish"}, "junk": _nested(140)}
    for content_type in ("application/apply-patch+yaml", "application/merge-patch+json",
                         "application/strategic-merge-patch+json"):
        status, reply = _request(stack, "PATCH", f"/api/v1/namespaces/{namespace}/configmaps/deepish?fieldManager=t",
                                 json.dumps(patch), content_type)
        if content_type == "application/apply-patch+yaml":  # the typed conversion stops at the undeclared field
            assert (status, reply["message"]) == (400, "failed to create typed patch object (/deepish; /v1, "
                                                       "Kind=ConfigMap): .junk: field not declared in schema")
        else:  # the patchers prune it (Warn)
            assert status in (200, 201), (content_type, reply)


def _pod(spec: object) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


WRONG_TYPES = [
    # (path template, method, body, expected message start)
    ("/api/v1/namespaces/{ns}/pods", "POST", _pod({"containers": 7}),
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field '
     "Pod.spec.containers of type"),
    ("/api/v1/namespaces/{ns}/services", "POST",
     {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": True}},
     'Service in version "v1" cannot be handled as a Service: json: cannot unmarshal bool'),
    ("/api/v1/namespaces", "POST",
     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wrong-type-ns"}, "spec": {"finalizers": 5}},
     'Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal number'),
    ("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies", "POST",
     {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
      "metadata": {"name": "wrong-type-vap"},
      "spec": {"matchConstraints": {"resourceRules": 7}, "validations": [{"expression": "true"}]}},
     'ValidatingAdmissionPolicy in version "v1" cannot be handled as a ValidatingAdmissionPolicy: json: '
     "cannot unmarshal number"),
]


def test_wrong_json_types_are_bad_requests(stack: Stack, namespace: str):
    for path, method, body, message in WRONG_TYPES:
        status, reply = _request(stack, method, path.format(ns=namespace), json.dumps(body))
        assert status == 400, (body, reply)
        assert reply["reason"] == "BadRequest" and reply["message"].startswith(message), reply["message"]


def test_wrong_types_in_scale_and_delete_options(stack: Stack, namespace: str):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    status, reply = _request(stack, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments",
                             json.dumps(deployment))
    assert status == 201, reply
    scale_path = f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale"
    for spec in (5, "x", [1], True):
        scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "web"}, "spec": spec}
        status, reply = _request(stack, "PUT", scale_path, json.dumps(scale))
        assert status == 400, (spec, reply)
        assert reply["message"].startswith('Scale in version "v1" cannot be handled as a Scale: json: cannot '
                                           "unmarshal"), reply["message"]
    cm_path = f"/api/v1/namespaces/{namespace}/configmaps"
    status, reply = _request(stack, "POST", cm_path, json.dumps({"metadata": {"name": "c"}}))
    for options in ({"preconditions": "abc"}, {"gracePeriodSeconds": "x"}, {"propagationPolicy": 5}):
        status, reply = _request(stack, "DELETE", f"{cm_path}/c", json.dumps(options))
        assert status == 400, (options, reply)
        assert reply["message"].startswith('DeleteOptions in version "v1" cannot be handled as a DeleteOptions: '
                                           "json: cannot unmarshal"), reply["message"]
    status, reply = _request(stack, "GET", f"{cm_path}/c")
    assert status == 200


def test_review_apis_drop_unknown_fields(stack: Stack):
    ssar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "junk": {"x": 1},
            "spec": {"resourceAttributes": {"verb": "get", "resource": "pods", "bogus": 1}}}
    status, reply = _request(stack, "POST", SSAR, json.dumps(ssar), token=TOKENS["alice"])
    assert status == 201, reply
    assert "junk" not in reply and "bogus" not in reply["spec"]["resourceAttributes"]
    assert "allowed" in reply["status"]
    status, reply = _request(stack, "POST", SSAR + "?fieldValidation=Strict", json.dumps(ssar), token=TOKENS["alice"])
    assert status == 400, reply
    assert reply["message"].startswith('SelfSubjectAccessReview in version "v1" cannot be handled as a '
                                       "SelfSubjectAccessReview: strict decoding error: "), reply["message"]
    assert 'unknown field "junk"' in reply["message"]
    assert 'unknown field "spec.resourceAttributes.bogus"' in reply["message"]
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "junk": 1,
              "spec": {"token": "nope"}}
    status, reply = _request(stack, "POST", "/apis/authentication.k8s.io/v1/tokenreviews", json.dumps(review))
    assert status == 201, reply
    assert "junk" not in reply and reply["status"].get("authenticated") is not True
    ssar["spec"] = 5
    status, reply = _request(stack, "POST", SSAR, json.dumps(ssar), token=TOKENS["alice"])
    assert status == 400 and "cannot unmarshal number" in reply["message"], reply


def test_messages_use_go_formatting_not_python_reprs(stack: Stack, namespace: str):
    base = f"/api/v1/namespaces/{namespace}"
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "fmt"},
                  "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
                      "metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    status, reply = _request(stack, "POST", f"/apis/apps/v1/namespaces/{namespace}/deployments", json.dumps(deployment))
    assert status == 201, reply
    cases = [
        ("PATCH", f"/apis/apps/v1/namespaces/{namespace}/deployments/fmt",
         {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}, "application/strategic-merge-patch+json",
         "map: map[image:x] does not contain declared merge key: name"),
        ("POST", f"{base}/configmaps", {"kind": {"a": 1}, "metadata": {"name": "k"}}, "application/json",
         "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse "
         'error: json: cannot unmarshal object into Go struct field .kind of type string ({"kind": {"a": 1}, '
         '"metadata": ...)'),
        ("PUT", f"{base}/configmaps/k", {"metadata": {"name": "k", "resourceVersion": {"q": 1}}}, "application/json",
         'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go struct '
         "field ObjectMeta.metadata.resourceVersion of type string"),
        ("GET", f"{base}/configmaps?limit=abc", None, "application/json",
         'strconv.ParseInt: parsing "abc": invalid syntax'),
        ("GET", f"{base}/configmaps?watch=1&timeoutSeconds=abc", None, "application/json",
         'strconv.ParseInt: parsing "abc": invalid syntax'),
        ("GET", f"{base}/configmaps?limit=1&continue=garbage", None, "application/json",
         "invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning "
         "of value"),
    ]
    for method, path, body, content_type, message in cases:
        status, reply = _request(stack, method, path, json.dumps(body) if body is not None else None, content_type)
        assert status == 400, (path, reply)
        assert reply["message"] == message, (path, reply["message"])
    # a write's options are ValidateCreateOptions' (UpdateOptions') 422 before the body is decoded (create.go)
    for method, path, kind in (("POST", f"{base}/configmaps", "CreateOptions"),
                               ("PUT", f"{base}/configmaps/k", "UpdateOptions")):
        for query, field, value in (("fieldValidation=Bogus", "fieldValidation",
                                     '"Bogus": supported values: "", "Ignore", "Strict", "Warn"'),
                                    ("dryRun=Some", "dryRun", '[]string{"Some"}: supported values: "All"')):
            status, reply = _request(stack, method, f"{path}?{query}", json.dumps({"metadata": {"name": "k"}}),
                                     "application/json")
            assert (status, reply["reason"]) == (422, "Invalid"), (path, reply)
            assert reply["message"] == f'{kind}.meta.k8s.io "" is invalid: {field}: Unsupported value: {value}', reply
            assert reply["details"] == {"group": "meta.k8s.io", "kind": kind, "causes": [{
                "reason": "FieldValueNotSupported", "message": f"Unsupported value: {value}", "field": field}]}
