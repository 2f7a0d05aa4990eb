"""Run the example authn webhook (examples/authn-webhook/webhook.py) in-process over TLS for tests."""

from __future__ import annotations

import datetime
import importlib.util
import ssl
import sys
from pathlib import Path
from types import ModuleType

from aiohttp import web

from .certs import DAY, Issued, key_pem, make_ca, make_server

ROOT = Path(__file__).resolve().parents[2]


def example_module() -> ModuleType:
    """Import examples/authn-webhook/webhook.py (its folder is not a package)."""
    name = "kapi_example_authn_webhook"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / "authn-webhook" / "webhook.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def tls_files(tmp: Path) -> tuple[Issued, Path, Path, Path]:
    """(CA, ca.crt, server.crt, server.key) for 127.0.0.1, valid now."""
    now = datetime.datetime.now(datetime.UTC)
    ca = make_ca("webhook-ca", not_before=now - DAY, not_after=now + DAY)
    server = make_server(ca, not_before=now - DAY, not_after=now + DAY)
    (tmp / "ca.crt").write_text(ca.pem)
    (tmp / "server.crt").write_text(server.pem)
    (tmp / "server.key").write_text(key_pem(server))
    return ca, tmp / "ca.crt", tmp / "server.crt", tmp / "server.key"


async def serve_tls(app: web.Application, cert: Path, key: Path) -> tuple[web.AppRunner, int]:
    """Serve ``app`` on 127.0.0.1 over TLS; returns (runner, port)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    return runner, runner.addresses[0][1]


def kubeconfig(path: Path, server: str, ca: Path) -> Path:
    """A webhook kubeconfig pointing at ``server`` trusting ``ca``."""
    path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: authn
  cluster: {{server: "{server}", certificate-authority: {ca}}}
users:
- name: kapi
  user: {{}}
contexts:
- name: webhook
  context: {{cluster: authn, user: kapi}}
current-context: webhook
""")
    return path
