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

from kapi.testing.cluster import (
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

__all__ = ["ApiError", "Cluster", "Credentials", "KubectlError", "User", "async_cluster", "cluster",
           "stack_options", "start", "token_kubeconfig", "write_token_file"]
