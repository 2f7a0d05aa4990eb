"""The real Envoy, rendered as kapi renders it (kapi.local.envoy), in front of a stand-in gateway: an aiohttp app
with the gateways' TLS identity and HTTP parser limits, run in a thread. Shared by the Envoy wire tests; needs no
etcd or services."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import subprocess
import threading
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path

from aiohttp import web

from kapi.local import binaries, envoy, launcher
from kapi.local.pki import Pki
from services.gateway.server import PARSER_LIMITS

Route = tuple[str, Callable[[web.Request], Awaitable[web.StreamResponse]]]
PrepareHook = Callable[[web.Request, web.StreamResponse], Awaitable[None]]


def standin_gateway(pki: Pki, routes: Sequence[Route], prepare_hooks: Sequence[PrepareHook] = ()
                    ) -> tuple[int, threading.Event]:
    """Start an HTTPS aiohttp app (the gateway certificate, the gateways' parser limits) answering GET ``routes``
    (path, handler), with ``prepare_hooks`` on ``on_response_prepare``, in a daemon thread. Returns its port on
    127.0.0.1 and the event that stops it. Raises AssertionError when it has not started within 10 s."""
    started, stop = threading.Event(), threading.Event()
    box: dict[str, int] = {}

    async def serve() -> None:
        app = web.Application()
        app.on_response_prepare.extend(prepare_hooks)
        for path, handler in routes:
            app.router.add_get(path, handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(pki.gateway_cert), str(pki.gateway_key))
        runner = web.AppRunner(app, access_log=None, **PARSER_LIMITS)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        box["port"] = runner.addresses[0][1]
        started.set()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        await runner.cleanup()

    threading.Thread(target=asyncio.run, args=(serve(),), daemon=True).start()
    assert started.wait(10), "the stand-in gateway did not start"
    return box["port"], stop


def listener_port(admin: str) -> int | None:
    """Envoy's listener port, read from its admin API at ``admin`` (host:port) as the launcher reads it."""
    address = launcher._envoy_listener(admin)
    return int(address.rsplit(":", 1)[1]) if address else None


def healthy(admin: str) -> bool:
    """Whether Envoy's admin API at ``admin`` reports a healthy upstream."""
    try:
        with urllib.request.urlopen(f"http://{admin}/clusters", timeout=1) as reply:
            return "health_flags::healthy" in reply.read().decode()
    except OSError:
        return False


@contextlib.contextmanager
def envoy_front(state: Path, pki: Pki, gateway_port: int) -> Iterator[tuple[int, str]]:
    """Run Envoy (config rendered into ``state``) in front of the gateway on ``gateway_port`` until the block
    ends; yields (its listener port, its admin address). Raises AssertionError (with the log's tail) when it is not
    listening with a healthy upstream within 30 s."""
    tls = envoy.TlsFiles(ca=str(pki.ca_cert), serving_cert=str(pki.apiserver_cert), serving_key=str(pki.apiserver_key),
                         client_cert=str(pki.front_proxy_cert), client_key=str(pki.front_proxy_key))
    config = state / "envoy.yaml"
    config.write_text(envoy.dump(envoy.render(gateways=[f"127.0.0.1:{gateway_port}"], tls=tls, port=0)))
    admin_file = state / "admin.address"
    log = (state / "envoy.log").open("w")
    proc = subprocess.Popen([str(binaries.envoy()), *envoy.args(str(config), log_level="warning",
                                                               admin_address_path=str(admin_file))],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        port, admin = None, ""
        while time.monotonic() < deadline and proc.poll() is None:
            admin = admin_file.read_text().strip() if admin_file.exists() else ""
            if admin and (port := listener_port(admin)) and healthy(admin):
                break
            time.sleep(0.1)
        assert port and proc.poll() is None, (state / "envoy.log").read_text()[-2000:]
        yield port, admin
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
