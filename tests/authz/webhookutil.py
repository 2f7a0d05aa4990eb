"""Run the example authz webhook (examples/authz-webhook/server.py) or a misbehaving one in-process over TLS."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]

POLICY = """
rules:
- users: [wendy]
  verbs: [get, list, watch]
  resources: [configmaps]
  decision: allow
  reason: wendy reads configmaps
- users: [dave]
  decision: deny
  reason: dave is suspended
- groups: [ops]
  nonResourcePaths: ["/metrics*"]
  decision: allow
- users: [slow]
  decision: allow
  delaySeconds: 1
"""


def example_module() -> ModuleType:
    """Import examples/authz-webhook/server.py (its folder is not a package)."""
    name = "kapi_example_authz_webhook"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / "authz-webhook" / "server.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def example_app(tmp: Path) -> web.Application:
    """The example webhook with :data:`POLICY`."""
    (tmp / "policy.yaml").write_text(POLICY)
    module = example_module()
    return module.make_app(module.load_policy(str(tmp / "policy.yaml")))


def kubeconfig(path: Path, server: str, ca: Path, cert: Path | None = None, key: Path | None = None) -> Path:
    """A webhook kubeconfig for ``server`` trusting ``ca``, with a client certificate if given."""
    user = f"{{client-certificate: {cert}, client-key: {key}}}" if cert and key else "{}"
    path.write_text(f"""apiVersion: v1
kind: Config
clusters:
- name: authz
  cluster: {{server: "{server}", certificate-authority: {ca}}}
users:
- name: kapi-authz
  user: {user}
contexts:
- name: webhook
  context: {{cluster: authz, user: kapi-authz}}
current-context: webhook
""")
    return path
