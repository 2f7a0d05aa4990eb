"""Large request metadata on the public gRPC API, through Envoy to a gateway's gRPC port, as the HTTP side allows it.

kube-apiserver reads up to 1 MiB of request headers (Go net/http's DefaultMaxHeaderBytes); gRPC's default is 8 KiB
(soft) / 16 KiB (hard) of metadata, past which a call is refused with RESOURCE_EXHAUSTED before any handler runs.
Envoy's listener takes 1 MiB of headers (max_request_headers_kb, SETTINGS_MAX_HEADER_LIST_SIZE) and the gateways'
gRPC servers 16 MiB (kapi.grpcutil MAX_METADATA_BYTES), so a 20 KB bearer token (an OIDC token with many groups)
is judged by authentication and metadata up to the HTTP side's 1 MiB reaches the handler.
"""

from __future__ import annotations

import json

import grpc
import pytest

from kapi.local.launcher import Stack
from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc
from tests.e2e.test_grpc_api import channel, refused


async def test_a_20_kb_bearer_token_is_judged_by_authentication(stack: Stack) -> None:
    async with channel(stack) as ch:
        api = api_pb2_grpc.ResourcesStub(ch)
        token = (("authorization", "Bearer " + "x" * 20_000),)
        code, status = await refused(api.Get(api_pb2.GetRequest(ref=api_pb2.ResourceRef(
            version="v1", resource="namespaces", name="default")), metadata=token))
    assert code == grpc.StatusCode.UNAUTHENTICATED, status
    assert (status["code"], status["reason"], status["message"]) == (401, "Unauthorized", "Unauthorized")


@pytest.mark.parametrize("size", [200_000, 900_000])
async def test_large_metadata_up_to_the_http_sides_1_mib_reaches_the_handler(stack: Stack, size: int) -> None:
    async with channel(stack, admin=True) as ch:
        api = api_pb2_grpc.ResourcesStub(ch)
        reply = await api.Get(api_pb2.GetRequest(ref=api_pb2.ResourceRef(
            version="v1", resource="namespaces", name="default")), metadata=(("x-padding", "p" * size),))
    assert reply.code == 200
    assert json.loads(reply.object)["metadata"]["name"] == "default"
