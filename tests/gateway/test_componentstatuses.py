"""core/v1 componentstatuses (services/gateway/componentstatus.py) as kube-apiserver 1.37's componentstatus REST
answers them: routed through routes.resource_request on an aiohttp test server, probes against local servers."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kapi import errors, k8sproto
from kapi.attributes import Attributes, UserInfo
from kapi.resources import REGISTRY
from services.gateway import componentstatus, routes, table
from services.gateway.requestinfo import resolve

DEPRECATED = '299 - "v1 ComponentStatus is deprecated in v1.19+"'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Health:
    def __init__(self, reason: str = ""):
        self.reason = reason


@pytest.fixture
def ports(monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Nothing listens on the two component ports (as kapi: no scheduler, controllers serve no /healthz)."""
    cm, sched = free_port(), free_port()
    monkeypatch.setattr(componentstatus, "CONTROLLER_MANAGER_PORT", cm)
    monkeypatch.setattr(componentstatus, "SCHEDULER_PORT", sched)
    return cm, sched


async def _client(health: Health | None) -> TestClient:
    backends = SimpleNamespace(custom_resources=None, storage_health=health)

    async def handle(request: web.Request) -> web.StreamResponse:
        info = resolve(request.method, request.path, dict(request.query))
        attrs = Attributes(UserInfo("u"), info.verb, info.is_resource_request, info.path, info.api_group,
                           info.api_version, info.resource, info.subresource, info.namespace, info.name)
        try:
            return await routes.resource_request(request, info, attrs, backends, 5.0)  # type: ignore[arg-type]
        except errors.StatusError as exc:
            return web.json_response(exc.status(), status=exc.code)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    client = TestClient(TestServer(app))
    await client.start_server()
    return client


@pytest.fixture
async def client(ports: tuple[int, int]) -> AsyncIterator[TestClient]:
    c = await _client(Health())
    yield c
    await c.close()


def refused(port: int) -> str:
    return (f'Get "https://127.0.0.1:{port}/healthz": dial tcp 127.0.0.1:{port}: connect: connection refused')


async def test_list_probes_every_component_in_order(client: TestClient, ports: tuple[int, int]) -> None:
    cm, sched = ports
    response = await client.get("/api/v1/componentstatuses")
    assert response.status == 200
    assert response.headers.getall("Warning") == [DEPRECATED]
    body = await response.read()
    assert json.loads(body) == {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": [
        {"metadata": {"name": "controller-manager", "creationTimestamp": None},
         "conditions": [{"type": "Healthy", "status": "False", "message": refused(cm)}]},
        {"metadata": {"name": "scheduler", "creationTimestamp": None},
         "conditions": [{"type": "Healthy", "status": "False", "message": refused(sched)}]},
        {"metadata": {"name": "etcd-0", "creationTimestamp": None},
         "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]},
    ]}
    assert body.startswith(b'{"kind":"ComponentStatusList","apiVersion":"v1","metadata":{},"items":[{"metadata":')


async def test_get_one_and_the_unknown_name_is_kube_s_500(client: TestClient) -> None:
    response = await client.get("/api/v1/componentstatuses/etcd-0")
    assert response.status == 200 and response.headers.getall("Warning") == [DEPRECATED]
    assert await response.read() == (b'{"kind":"ComponentStatus","apiVersion":"v1","metadata":{"name":"etcd-0",'
                                     b'"creationTimestamp":null},"conditions":[{"type":"Healthy","status":"True",'
                                     b'"message":"ok"}]}\n')
    response = await client.get("/api/v1/componentstatuses/nope")
    assert response.status == 500
    assert await response.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                     "message": "Component not found: nope", "code": 500}


async def test_etcd_unhealthy_when_storage_cannot_reach_it(ports: tuple[int, int]) -> None:
    c = await _client(Health("storage reports etcd unreachable (health NOT_SERVING)"))
    try:
        body = await (await c.get("/api/v1/componentstatuses/etcd-0")).json()
    finally:
        await c.close()
    assert body["conditions"] == [{"type": "Healthy", "status": "False",
                                   "error": "error getting data from etcd: context deadline exceeded"}]


async def test_selectors_filter_the_list(client: TestClient) -> None:
    names = await client.get("/api/v1/componentstatuses", params={"fieldSelector": "metadata.name=etcd-0"})
    assert [i["metadata"]["name"] for i in (await names.json())["items"]] == ["etcd-0"]
    names = await client.get("/api/v1/componentstatuses", params={"fieldSelector": "metadata.name!=etcd-0"})
    assert [i["metadata"]["name"] for i in (await names.json())["items"]] == ["controller-manager", "scheduler"]
    labelled = await client.get("/api/v1/componentstatuses", params={"labelSelector": "a=b"})
    assert (await labelled.json())["items"] == []  # no labels: any requirement filters everything out
    bad = await client.get("/api/v1/componentstatuses", params={"fieldSelector": "status=x"})
    assert bad.status == 400 and (await bad.json())["message"] == (
        '"status" is not a known field selector: only "metadata.name", "metadata.namespace"')


NO_ROUTE = "the server does not allow this method on the requested resource"


@pytest.mark.parametrize("method,path,query,message", [
    ("POST", "/api/v1/componentstatuses", {}, NO_ROUTE),
    ("DELETE", "/api/v1/componentstatuses/etcd-0", {}, NO_ROUTE),
    ("PUT", "/api/v1/componentstatuses/etcd-0", {}, NO_ROUTE),
    # the list route serves ?watch=true and ListResource refuses a REST that is no Watcher
    ("GET", "/api/v1/componentstatuses", {"watch": "true"},
     'watch is not supported on resources of kind "componentstatuses"'),
])
async def test_other_verbs_are_405(client: TestClient, method: str, path: str, query: dict[str, str],
                                   message: str) -> None:
    response = await client.request(method, path, params=query, data=b"{}")
    assert response.status == 405  # get and list only: kube installs no other route for the REST
    body = await response.json()
    assert body["reason"] == "MethodNotAllowed" and body["message"] == message


async def test_table_is_kube_s_printer(client: TestClient, ports: tuple[int, int]) -> None:
    response = await client.get("/api/v1/componentstatuses",
                                headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    body = await response.json()
    assert body["metadata"] == {}
    assert [(c["name"], c["description"]) for c in body["columnDefinitions"]] == [
        ("Name", table.name_column()["description"]), ("Status", "Status of the component conditions"),
        ("Message", "Message of the component conditions"), ("Error", "Error of the component conditions")]
    assert [r["cells"] for r in body["rows"]] == [
        ["controller-manager", "Unhealthy", refused(ports[0]), ""],
        ["scheduler", "Unhealthy", refused(ports[1]), ""], ["etcd-0", "Healthy", "ok", ""]]


def test_discovery_row() -> None:
    row = REGISTRY.get("", "v1", "componentstatuses")
    assert row is not None
    assert (row.kind, row.namespaced, row.short_names, row.verbs, row.singular) == (
        "ComponentStatus", False, ("cs",), ("get", "list"), "componentstatus")


async def _serve(status: int, body: str, headers: dict[str, str] | None = None) -> TestServer:
    async def handle(request: web.Request) -> web.Response:
        return web.Response(status=status, text=body, headers=headers)

    app = web.Application()
    app.router.add_get("/healthz", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


@pytest.mark.parametrize("status,body,want", [
    (200, "ok", componentstatus.Probe("True", "ok")),
    (500, "[-]etcd failed", componentstatus.Probe("False", "HTTP probe failed with statuscode: 500")),
    (403, "forbidden", componentstatus.Probe("False", "HTTP probe failed with statuscode: 403")),
])
async def test_http_probe_judges_the_answer_as_do_http_probe(status: int, body: str,
                                                             want: componentstatus.Probe) -> None:
    server = await _serve(status, body)
    try:
        got = await componentstatus.HTTPServer("127.0.0.1", server.port or 0, https=False).check(5.0)
    finally:
        await server.close()
    assert got == want


async def test_http_probe_keeps_at_most_10_kib_of_the_body() -> None:
    server = await _serve(200, "x" * 20_000)
    try:
        got = await componentstatus.HTTPServer("127.0.0.1", server.port or 0, https=False).check(5.0)
    finally:
        await server.close()
    assert got == componentstatus.Probe("True", "x" * 10_240)


def test_printer_without_a_healthy_condition_is_unknown() -> None:
    from services.gateway import printers

    printer = printers.printer_for("", "componentstatuses")
    assert printer is not None and not printer.with_age
    assert printer.cells({"conditions": []}) == ["Unknown", "", ""]
    assert printer.cells({"conditions": [{"type": "Healthy", "status": "Unknown", "error": "e"}]}) == [
        "Unhealthy", "", "e"]



async def test_get_as_table_and_as_protobuf(client: TestClient) -> None:
    response = await client.get("/api/v1/componentstatuses/etcd-0",
                                headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    body = await response.json()
    assert (body["kind"], body["metadata"]) == ("Table", {})
    assert [r["cells"] for r in body["rows"]] == [["etcd-0", "Healthy", "ok", ""]]
    assert body["rows"][0]["object"] == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                         "metadata": {"name": "etcd-0", "creationTimestamp": None}}
    response = await client.get("/api/v1/componentstatuses", headers={"Accept": "application/vnd.kubernetes.protobuf"})
    assert response.status == 200 and response.content_type == "application/vnd.kubernetes.protobuf"
    data = await response.read()
    decoded = k8sproto.decode(data)
    assert decoded["kind"] == "ComponentStatusList"
    assert decoded["items"][2] == {"metadata": {"name": "etcd-0"},
                                   "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}
