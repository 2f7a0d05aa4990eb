"""kapi.testing: a real Kubernetes API server (the whole kapi stack) for Python tests, started in seconds.

For pytest, installing kapi is enough: the plugin (:mod:`kapi.testing.plugin`,
entry point ``pytest11``) offers the fixtures ``kapi_cluster`` and
``kapi_namespace``. Outside pytest::

    with kapi.testing.cluster(["--authorization-mode=RBAC"]) as c:
        c.kubectl("get", "ns")
        api = kubernetes.client.CoreV1Api(c.api_client())
        alice = c.as_user("alice", ["dev"])
        c.reset()

    async with kapi.testing.async_cluster() as c:   # kubernetes_asyncio, kr8s, lightkube, kopf
        ...

docs/testing.md describes every option, with examples for the official
client, kubernetes_asyncio, lightkube, kr8s and kopf.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kapi.testing.harness import (
        Cluster,
        Credentials,
        KubectlError,
        User,
        async_cluster,
        cluster,
        stack_options,
        start,
        token_kubeconfig,
        write_token_file,
    )
    from kapi.testing.rest import ApiError

# Loaded on first use: the pytest plugin (kapi.testing.plugin) is imported by every pytest session where kapi is
# installed, and the harness imports grpc and the launcher (about half a second).
_HOMES = {"ApiError": "kapi.testing.rest", **dict.fromkeys(
    ["Cluster", "Credentials", "KubectlError", "User", "async_cluster", "cluster", "stack_options", "start",
     "token_kubeconfig", "write_token_file"], "kapi.testing.harness")}

__all__ = ["ApiError", "Cluster", "Credentials", "KubectlError", "User", "async_cluster", "cluster", "stack_options",
           "start", "token_kubeconfig", "write_token_file"]


def __getattr__(name: str) -> Any:
    """The public names above, imported from their module when first asked for (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'kapi.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
