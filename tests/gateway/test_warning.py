"""The request's warning recorder (services/gateway/warning.py): refusals carry the warnings gathered before them.

kube-apiserver's WithWarningRecorder writes each warning to the response
headers as it is added, so a 422, 403 or 409 carries what the request
gathered before it failed. Here: the recovery filter renders a refusal with
the context's warnings, the Call stream (kapi.grpcmux) and the unary
trailers (kapi.errors) carry a refusal's warnings between services, and the
public gRPC API puts them in the StatusDetail.
"""

from __future__ import annotations

import grpc
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from google.protobuf import any_pb2
from google.rpc import status_pb2
from multidict import CIMultiDict

from kapi import errors, grpcmux, jsonutil
from kapi_proto.kapi.api.v1 import api_pb2
from services.gateway import grpcapi
from services.gateway.context import context
from services.gateway.filters.recovery import with_panic_recovery


async def test_a_refusal_is_sent_with_the_warnings_the_request_gathered() -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        recorder = context(request).warnings
        recorder.extend(["first", 'a "quoted" one', "first"])
        if request.path == "/ok":
            return web.Response(text="ok")  # a success adds them itself (RequestScope.respond)
        raise errors.already_exists("pods", "p")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", with_panic_recovery(handler))
    async with TestClient(TestServer(app)) as client:
        refused = await client.get("/refused")
        assert refused.status == 409
        assert refused.headers.getall("Warning") == ['299 - "first"', '299 - "a \\"quoted\\" one"']
        assert (await refused.json())["message"] == 'pods "p" already exists'
        assert refused.headers["Audit-Id"]
        ok = await client.get("/ok")
        assert ok.status == 200 and "Warning" not in ok.headers


def _refusal() -> errors.StatusError:
    err = errors.forbidden("pods", "p", "no")
    err.warnings = ["from the webhook", "ünïcode"]
    return err


def test_unary_trailers_carry_a_refusals_warnings() -> None:
    err = _refusal()
    trailers = errors.trailing_metadata(err)
    assert dict(trailers)[errors.WARNINGS_METADATA_KEY] == jsonutil.dumps(["from the webhook", "ünïcode"])
    rpc = grpc.aio.AioRpcError(grpc.StatusCode.PERMISSION_DENIED, grpc.aio.Metadata(),
                               grpc.aio.Metadata(*trailers), details=err.message)
    back = errors.from_rpc_error(rpc, "admission")
    assert back.status() == err.status() and back.warnings == err.warnings
    # no warnings: no second trailer, and a refusal without one has none
    plain = errors.forbidden("pods", "p", "no")
    assert [k for k, _ in errors.trailing_metadata(plain)] == [errors.STATUS_METADATA_KEY]
    assert errors.warnings_of_metadata(b"not json") == [] and errors.warnings_of_metadata(b'["a", 1]') == ["a"]


def test_the_admission_call_stream_carries_a_refusals_warnings() -> None:
    err = _refusal()
    error = grpcmux.ADMISSION.error_of(err)
    assert list(error.warnings) == err.warnings
    back = errors.from_rpc_error(grpcmux.ADMISSION.rpc_error(error), "admission")
    assert back.status() == err.status() and back.warnings == err.warnings
    # storage's CallError has no warnings field (storage gathers none): its errors still convert
    stored = errors.from_rpc_error(grpcmux.STORAGE.rpc_error(grpcmux.STORAGE.error_of(err)), "storage")
    assert stored.status() == err.status() and stored.warnings == []


class _Aborted(Exception):
    pass


class _Context:
    """What grpcapi._abort uses of a grpc.aio.ServicerContext."""

    def __init__(self) -> None:
        self.trailers: tuple[tuple[str, bytes | str], ...] = ()

    async def abort(self, code: grpc.StatusCode, details: str, trailing_metadata: tuple = ()) -> None:
        self.trailers = trailing_metadata
        raise _Aborted()


async def test_the_grpc_apis_status_detail_carries_the_warning_headers() -> None:
    err = errors.forbidden("pods", "p", "no")
    headers = CIMultiDict([("Warning", '299 - "first"'), ("Warning", '299 - "a \\"quoted\\" one"'),
                           ("Audit-Id", "abc")])
    ctx = _Context()
    try:
        await grpcapi._abort(ctx, jsonutil.dumps(err.status()), 403, headers)  # type: ignore[arg-type]
    except _Aborted:
        pass
    details = dict(ctx.trailers)["grpc-status-details-bin"]
    rich = status_pb2.Status.FromString(details)  # type: ignore[arg-type]
    packed: any_pb2.Any = rich.details[0]
    detail = api_pb2.StatusDetail()
    assert packed.Unpack(detail)
    assert list(detail.warnings) == ["first", 'a "quoted" one']
    assert jsonutil.loads(detail.status) == err.status()
