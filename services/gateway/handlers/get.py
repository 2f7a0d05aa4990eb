"""GET of one object (k8s.io/apiserver pkg/endpoints/handlers/get.go)."""

from __future__ import annotations

from aiohttp import web

from kapi import grpcutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway.scope import RequestScope, parse_resource_version


async def get(scope: RequestScope) -> web.Response:
    """Read the object named by the URL; ``resourceVersion`` as in "API concepts: Resource versions".

    Raises 404 NotFound when absent, 400 for a malformed resourceVersion.
    """
    rv = scope.param("resourceVersion")
    parse_resource_version(rv)
    reply = await grpcutil.call("storage", scope.backends.storage.Get,
                                storage_pb2.GetRequest(key=scope.key(), resource_version=rv), timeout=scope.timeout)
    return scope.respond(reply.object)  # type: ignore[attr-defined]
