"""List, create and watch ConfigMaps over kapi's public gRPC API as an ordinary user (a bearer token).

    python examples/grpc-client/client.py --server 127.0.0.1:6443 --ca-file .kapi/pki/ca.crt \
        --token "$TOKEN" --namespace demo --create hello --watch-seconds 10

Talks to Envoy's API port (the same 6443 kubectl uses): gRPC requests are
routed to the gateways' gRPC API, where each call runs the same chain as
REST (authentication, APF, RBAC, admission, audit). The token goes in the
``authorization`` metadata; nothing else identifies the caller. Prints one
JSON line per result. Errors are gRPC statuses carrying the Kubernetes
Status (docs/grpc.md); this prints that Status and exits 1.
Needs ``grpcio``, ``grpcio-status`` and the generated ``kapi_proto`` package
(``pip install -e .`` in the repository, or stubs generated from protos/).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import grpc
from grpc_status import rpc_status

from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc


def kubernetes_status(err: grpc.aio.AioRpcError) -> dict:
    """The Kubernetes Status JSON in the error's details (grpc-status-details-bin), or a stand-in."""
    rich = rpc_status.from_call(err)
    for detail in rich.details if rich is not None else ():
        status = api_pb2.StatusDetail()
        if detail.Unpack(status):
            return json.loads(status.status)
    return {"kind": "Status", "code": 0, "message": err.details() or err.code().name}


async def run(args: argparse.Namespace) -> None:
    creds = grpc.ssl_channel_credentials(Path(args.ca_file).expanduser().read_bytes())
    metadata = (("authorization", f"Bearer {args.token}"),)
    configmaps = api_pb2.ResourceRef(version="v1", resource="configmaps", namespace=args.namespace)
    async with grpc.aio.secure_channel(args.server, creds, options=[("grpc.ssl_target_name_override",
                                                                    args.server_name)]) as channel:
        api = api_pb2_grpc.ResourcesStub(channel)

        listed = json.loads((await api.List(api_pb2.ListRequest(ref=configmaps), metadata=metadata,
                                            timeout=30)).object)
        print(json.dumps({"list": [item["metadata"]["name"] for item in listed["items"]],
                          "resourceVersion": listed["metadata"]["resourceVersion"]}), flush=True)

        if args.create:
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": args.create},
                    "data": {"greeting": "hello over gRPC"}}
            created = await api.Create(api_pb2.CreateRequest(ref=configmaps, object=json.dumps(body).encode()),
                                       metadata=metadata, timeout=30)
            obj = json.loads(created.object)
            print(json.dumps({"created": obj["metadata"]["name"], "code": created.code,
                              "resourceVersion": obj["metadata"]["resourceVersion"]}), flush=True)

        if args.watch_seconds > 0:
            # From the list's resourceVersion: every change since the list, then live ones, until the timeout.
            watch = api.Watch(api_pb2.WatchRequest(ref=configmaps,
                                                   resource_version=listed["metadata"]["resourceVersion"],
                                                   timeout_seconds=args.watch_seconds), metadata=metadata)
            async for event in watch:
                obj = json.loads(event.object)
                if event.type == "ERROR":  # e.g. 410 Expired: re-list, then watch again
                    print(json.dumps({"error": obj}), flush=True)
                    break
                print(json.dumps({"event": event.type, "name": obj["metadata"].get("name"),
                                  "resourceVersion": obj["metadata"].get("resourceVersion")}), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--server", default="127.0.0.1:6443", help="host:port of the API (Envoy).")
    parser.add_argument("--server-name", default="localhost", help="A name in the API's serving certificate.")
    parser.add_argument("--ca-file", required=True, help="The cluster CA (kapi up: <state-dir>/pki/ca.crt).")
    parser.add_argument("--token", required=True, help="A bearer token (token file, service account token, ...).")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--create", default="", help="Name of a ConfigMap to create.")
    parser.add_argument("--watch-seconds", type=int, default=0, help="Watch ConfigMaps this long (0: no watch).")
    args = parser.parse_args(argv)
    try:
        asyncio.run(run(args))
    except grpc.aio.AioRpcError as err:
        print(json.dumps({"grpc": err.code().name, "status": kubernetes_status(err)}), flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
