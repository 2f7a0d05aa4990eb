"""The gateway's JSON bodies are written as Go's encoding/json writes them (kube's JSON serializer): HTML-escaped,
newline-terminated, MarshalIndent without a newline for pretty output, and WriteRawJSON's indented Status where the
error's Accept has no acceptable media type (responsewriters/writers.go WriteObjectNegotiated)."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request
from multidict import MultiDict

from kapi import errors
from services.gateway import negotiation
from services.gateway.filters.recovery import status_response
from services.gateway.handlers.watch import error_event

ERR = errors.StatusError(400, "BadRequest", "must be <= 10, got <nil> & more")
COMPACT = (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
           b'"message":"must be \\u003c= 10, got \\u003cnil\\u003e \\u0026 more","reason":"BadRequest","code":400}\n')
INDENTED = (b'{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n'
            b'  "message": "must be \\u003c= 10, got \\u003cnil\\u003e \\u0026 more",\n  "reason": "BadRequest",\n'
            b'  "code": 400\n}')


def _response(path: str = "/api/v1/namespaces", **headers: str) -> tuple[bytes, str]:
    response = status_response(ERR, "id", make_mocked_request("GET", path, headers=headers))
    assert response.body is not None and response.status == 400
    return bytes(response.body), response.content_type  # type: ignore[arg-type]


@pytest.mark.parametrize("accept", ["", "application/json", "*/*", "application/json, */*",
                                    "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"])
def test_a_status_is_escaped_compact_and_newline_terminated(accept: str) -> None:
    assert _response(Accept=accept) == (COMPACT, "application/json")


@pytest.mark.parametrize("accept", ["text/html", "Application/JSON", "application/*;q=0, text/plain",
                                    "application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;q=0"])
def test_no_acceptable_media_type_is_write_raw_json(accept: str) -> None:
    # json.MarshalIndent(status, "", "  "): two-space indent, escaped, no newline, application/json
    assert _response(Accept=accept) == (INDENTED, "application/json")


def test_no_request_is_compact_json() -> None:
    response = status_response(ERR)
    assert response.body == COMPACT


@pytest.mark.parametrize(("path", "agent", "pretty"), [
    ("/api/v1/namespaces?pretty=true", "", True),
    ("/api/v1/namespaces?pretty=1", "", True),
    ("/api/v1/namespaces?pretty=T", "", True),
    ("/api/v1/namespaces?pretty=yes", "", False),  # strconv.ParseBool refuses it: false
    ("/api/v1/namespaces?pretty=false", "curl/8.5.0", False),  # the parameter wins over the agent
    ("/api/v1/namespaces?pretty=", "curl/8.5.0", True),  # an empty value: the agent decides
    ("/api/v1/namespaces", "curl/8.5.0", True),
    ("/api/v1/namespaces", "Wget/1.21", True),
    ("/api/v1/namespaces", "Mozilla/5.0 (X11)", True),
    ("/api/v1/namespaces", "kubectl/v1.37.0", False),
    ("/api/v1/namespaces", "", False),
])
def test_pretty_is_kubes_is_pretty_print(path: str, agent: str, pretty: bool) -> None:
    request = make_mocked_request("GET", path, headers={"User-Agent": agent} if agent else {})
    assert negotiation.pretty(request.rel_url.raw_query_string, request.query, agent) is pretty
    body, _ = _response(path, **({"User-Agent": agent} if agent else {}))
    assert body == (INDENTED if pretty else COMPACT)


def test_pretty_reads_the_first_value() -> None:
    assert negotiation.pretty("pretty=0&pretty=1", MultiDict([("pretty", "0"), ("pretty", "1")]), "curl") is False


def test_yaml_and_protobuf_statuses_are_unchanged() -> None:
    body, content_type = _response(Accept="application/yaml")
    assert content_type == "application/yaml" and b"message: must be <= 10, got <nil> & more\n" in body
    body, content_type = _response(Accept="application/vnd.kubernetes.protobuf")
    assert content_type == "application/vnd.kubernetes.protobuf" and b"must be <= 10, got <nil> & more" in body


def test_encode_escapes_json_only() -> None:
    obj = {"kind": "ConfigMap", "data": {"a": '<a href="x">&</a>'}}
    assert negotiation.encode(obj, negotiation.Output()) == (
        b'{"kind":"ConfigMap","data":{"a":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"}}', "application/json")
    body, _ = negotiation.encode(obj, negotiation.Output(mime=negotiation.YAML))
    assert b'<a href="x">&</a>' in body


def test_watch_error_event_is_escaped() -> None:
    assert error_event(ERR) == b'{"type":"ERROR","object":' + COMPACT[:-1] + b"}\n"
