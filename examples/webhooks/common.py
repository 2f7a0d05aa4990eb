"""A tiny AdmissionReview v1 server over HTTPS, shared by the example webhooks.

Each example supplies ``review(request) -> response`` where ``request`` is the
AdmissionReview's ``request`` and the returned dict becomes its ``response``
(``uid`` is filled in). Run an example with::

    python examples/webhooks/pod_defaults.py --tls-cert-file tls.crt --tls-private-key-file tls.key --port 9445

Source: "Dynamic Admission Control", webhook request and response.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import ssl
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

Review = Callable[[dict[str, Any]], dict[str, Any]]


def json_patch(ops: list[dict[str, Any]]) -> dict[str, Any]:
    """Response fields carrying a JSONPatch (base64 of the JSON operations)."""
    return {"patchType": "JSONPatch", "patch": base64.b64encode(json.dumps(ops).encode()).decode()}


def deny(message: str, code: int = 403) -> dict[str, Any]:
    """A refusal response with a Status message."""
    return {"allowed": False, "status": {"code": code, "message": message}}


def make_app(routes: dict[str, Review]) -> web.Application:
    """An aiohttp application answering POST <path> with AdmissionReviews; 400 for a body that is not one."""

    def handler(review: Review) -> Callable[[web.Request], Any]:
        async def handle(http: web.Request) -> web.Response:
            try:
                body = await http.json()
                request = body["request"]
                uid = request["uid"]
            except (ValueError, KeyError, TypeError):
                return web.Response(status=400, text="expected an AdmissionReview")
            response = {"uid": uid, **review(request)}
            return web.json_response({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                      "response": response})
        return handle

    app = web.Application()
    for path, review in routes.items():
        app.router.add_post(path, handler(review))
    return app


async def start(app: web.Application, cert: str | Path, key: str | Path, host: str = "127.0.0.1",
                port: int = 0) -> tuple[web.AppRunner, int]:
    """Serve ``app`` over TLS; returns (runner, bound port). Stop with ``await runner.cleanup()``."""
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(cert), str(key))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, host, port, ssl_context=ctx)
    await site.start()
    server = site._server
    sockets = getattr(server, "sockets", None) or []
    return runner, sockets[0].getsockname()[1] if sockets else port


def add_serving_flags(parser: argparse.ArgumentParser, port: int) -> None:
    """The serving flags every example server takes, with kube-apiserver's names (and the old short ones):
    ``--tls-cert-file`` (``--cert``), ``--tls-private-key-file`` (``--key``), ``--bind-address`` (``--host``),
    ``--port`` (default ``port``; 0 = any free port), ``--port-file`` (where to write the bound port)."""
    parser.add_argument("--tls-cert-file", "--cert", dest="cert", required=True, help="serving certificate (PEM)")
    parser.add_argument("--tls-private-key-file", "--key", dest="key", required=True, help="its key (PEM)")
    parser.add_argument("--bind-address", "--host", dest="host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--port-file", default="")


def main(routes: dict[str, Review], argv: Sequence[str] | None = None, port: int = 9445) -> int:
    """``--tls-cert-file --tls-private-key-file [--bind-address] [--port] [--port-file]``: serve until
    interrupted (:func:`add_serving_flags`)."""
    parser = argparse.ArgumentParser()
    add_serving_flags(parser, port)
    args = parser.parse_args(argv)

    async def run() -> None:
        runner, port = await start(make_app(routes), args.cert, args.key, args.host, args.port)
        if args.port_file:
            Path(args.port_file).write_text(str(port))
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    return 0
