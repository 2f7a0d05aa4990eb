"""The public gRPC API's translation to REST (services/gateway/grpcapi.py) and the in-process exchange
(services/gateway/inprocess.py); end to end through Envoy: tests/e2e/test_grpc_api.py."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from aiohttp import web

from kapi import errors, jsonutil
from kapi_proto.kapi.api.v1 import api_pb2
from services.gateway import grpcapi
from services.gateway.inprocess import QUEUE_CHUNKS, Exchange


@pytest.mark.parametrize(("ref", "names", "path"), [
    (dict(version="v1", resource="configmaps", namespace="ns", name="a"), grpcapi.ONE,
     "/api/v1/namespaces/ns/configmaps/a"),
    (dict(version="v1", resource="configmaps", namespace="ns"), grpcapi.COLLECTION, "/api/v1/namespaces/ns/configmaps"),
    (dict(version="v1", resource="configmaps", namespace="ns", name="a"), grpcapi.WATCHED,
     "/api/v1/namespaces/ns/configmaps"),
    (dict(version="v1", resource="namespaces"), grpcapi.CREATED, "/api/v1/namespaces"),
    (dict(version="v1", resource="pods", namespace="ns", name="p", subresource="eviction"), grpcapi.CREATED,
     "/api/v1/namespaces/ns/pods/p/eviction"),
    (dict(group="apps", version="v1", resource="deployments", namespace="ns", name="d", subresource="scale"),
     grpcapi.ONE, "/apis/apps/v1/namespaces/ns/deployments/d/scale"),
])
def test_rest_path(ref: dict[str, str], names: str, path: str) -> None:
    assert grpcapi.rest_path(api_pb2.ResourceRef(**ref), names=names) == path


@pytest.mark.parametrize(("ref", "names", "message"), [
    # A Delete (Get, Update, Patch) without a name would be the collection's: deletecollection is REST only.
    (dict(version="v1", resource="configmaps", namespace="ns"), grpcapi.ONE, "ref.name is required"),
    (dict(version="v1", resource="configmaps", namespace="ns", subresource="status"), grpcapi.ONE,
     "ref.name is required"),
    (dict(version="v1", resource="configmaps", namespace="ns", name="a"), grpcapi.COLLECTION,
     "ref.name and ref.subresource must be empty for List"),
    (dict(version="v1", resource="configmaps", namespace="ns", name="a"), grpcapi.CREATED,
     "ref.name must be empty for Create without ref.subresource"),
    (dict(version="v1", resource="pods", namespace="ns", subresource="eviction"), grpcapi.CREATED,
     "ref.name is required with ref.subresource"),
    (dict(version="v1", resource="pods", namespace="ns", name="p", subresource="status"), grpcapi.WATCHED,
     "ref.subresource must be empty for Watch"),
])
def test_rest_path_refuses_names_the_rpc_does_not_take(ref: dict[str, str], names: str, message: str) -> None:
    with pytest.raises(errors.StatusError) as exc:
        grpcapi.rest_path(api_pb2.ResourceRef(**ref), names=names)
    assert exc.value.code == 400 and exc.value.status()["message"].startswith(message)


@pytest.mark.parametrize("ref", [
    dict(version="v1/namespaces/kube-system", resource="configmaps", name="kube-root-ca.crt"),  # the router
    dict(version="v1", resource="configmaps", namespace="ns", name="../secrets/x"),  # decodes %2F: refused
    dict(version="v1", resource="configmaps", namespace="ns", name="a/b"),
    dict(version="v1", resource="configmaps", namespace="ns%2Fother", name="a"),
    dict(version="v1", resource="configmaps", namespace="..", name="a"),
    dict(version="v1", resource="pods", namespace="ns", name="p", subresource="status/x"),
])
def test_rest_path_refuses_what_is_not_one_path_segment(ref: dict[str, str]) -> None:
    with pytest.raises(errors.StatusError) as exc:
        grpcapi.rest_path(api_pb2.ResourceRef(**ref))
    assert exc.value.code == 400 and "may not contain '/' or '%'" in exc.value.status()["message"]


def test_rest_path_needs_version_and_resource() -> None:
    with pytest.raises(errors.StatusError) as exc:
        grpcapi.rest_path(api_pb2.ResourceRef(resource="configmaps"))
    assert exc.value.code == 400


def test_delete_body() -> None:
    assert grpcapi.delete_body(api_pb2.DeleteOptions()) == b""
    body = jsonutil.loads(grpcapi.delete_body(api_pb2.DeleteOptions(
        grace_period_seconds=0, propagation_policy="Foreground", dry_run=["All"],
        preconditions=api_pb2.Preconditions(resource_version="7"))))
    assert body == {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                    "preconditions": {"resourceVersion": "7"}, "propagationPolicy": "Foreground", "dryRun": ["All"]}


def test_warning_texts() -> None:
    assert grpcapi.warning_texts(['299 - "unknown field \\"x\\""', "199 misc"]) == ['unknown field "x"', "199 misc"]


def test_split_event_keeps_the_object_bytes() -> None:
    line = b'{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a"}}}'
    event = grpcapi._split_event(line)
    assert (event.type, event.object) == ("ADDED", b'{"kind":"ConfigMap","metadata":{"name":"a"}}')
    spaced = grpcapi._split_event(b'{"type": "DELETED", "object": {"a": 1}}')
    assert (spaced.type, jsonutil.loads(spaced.object)) == ("DELETED", {"a": 1})


@pytest.mark.parametrize(("code", "reason", "want"), [
    (404, "NotFound", grpc.StatusCode.NOT_FOUND),
    (409, "AlreadyExists", grpc.StatusCode.ALREADY_EXISTS),
    (409, "Conflict", grpc.StatusCode.ABORTED),
    (410, "Expired", grpc.StatusCode.OUT_OF_RANGE),
    (422, "Invalid", grpc.StatusCode.INVALID_ARGUMENT),
    (429, "TooManyRequests", grpc.StatusCode.RESOURCE_EXHAUSTED),
    (403, "", grpc.StatusCode.PERMISSION_DENIED),  # an admission webhook's denial without a reason
    (418, "Teapot", grpc.StatusCode.INVALID_ARGUMENT),
    (502, "", grpc.StatusCode.INTERNAL),
])
def test_grpc_code_table(code: int, reason: str, want: grpc.StatusCode) -> None:
    assert errors.grpc_code(code, reason) == want


async def _app(handler: web.Handler) -> web.Application:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    app.freeze()
    return app


async def test_exchange_runs_the_handler_with_the_request_and_streams() -> None:
    seen: dict[str, object] = {}
    release = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.update(method=request.method, path=request.path_qs, body=await request.read(),
                    auth=request.headers.getall("Impersonate-Group"), remote=request.remote,
                    cert=request.transport.get_extra_info("ssl_object").getpeercert(binary_form=True))
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        await response.write(b"one\n")
        await release.wait()
        await response.write(b"two\n")
        return response

    app = await _app(handler)
    async with Exchange(handler, app, "POST", "/x?a=1", [("Impersonate-Group", "a"), ("Impersonate-Group", "b")],
                        b"body", peer_certificate=b"DER", peername=("10.0.0.1", 5)) as exchange:
        status, headers = await exchange.head()
        assert status == 200 and headers["Content-Type"] == "application/json"
        chunks = exchange.chunks()
        assert await chunks.__anext__() == b"one\n"  # before the handler has finished: a stream
        release.set()
        assert [c async for c in chunks] == [b"two\n"]
    assert seen == {"method": "POST", "path": "/x?a=1", "body": b"body", "auth": ["a", "b"], "remote": "10.0.0.1",
                    "cert": b"DER"}


async def test_exchange_backpressure_and_cancellation() -> None:
    written = 0
    cancelled = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal written
        response = web.StreamResponse()
        await response.prepare(request)
        try:
            while True:
                await response.write(b"x")
                written += 1
        except asyncio.CancelledError:
            cancelled.set()
            raise

    app = await _app(handler)
    async with Exchange(handler, app, "GET", "/", [], b"", peer_certificate=None, peername=None) as exchange:
        await exchange.head()
        await asyncio.sleep(0.05)
        assert written <= QUEUE_CHUNKS + 1  # nobody reads: the handler waits
    assert cancelled.is_set()  # leaving the exchange (the gRPC call ended) cancelled the handler


async def test_exchange_whole_body_and_no_certificate() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        assert request.transport.get_extra_info("ssl_object") is None
        return web.json_response({"ok": True}, status=201)

    app = await _app(handler)
    async with Exchange(handler, app, "GET", "/", [], b"", peer_certificate=None, peername=None) as exchange:
        assert (await exchange.head())[0] == 201
        assert jsonutil.loads(await exchange.body()) == {"ok": True}
