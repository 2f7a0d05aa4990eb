"""Pod subresources that need a kubelet: ``log``, ``exec``, ``attach``, ``portforward``, ``proxy``.

kapi runs no nodes, so nothing can stream from a container. These answer at
once with the Status kube-apiserver gives before it would dial a kubelet
(pkg/registry/core/pod LogLocation / streamLocation): 404 for a missing pod,
400 for a bad or missing container name, 400 ``pod <name> does not have a
host assigned`` for an unscheduled pod (an empty log for ``log``), and 503
ServiceUnavailable for a pod bound to a node, because no kubelet is reachable.
Never a hang.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kapi import errors, grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway.reviews import subresource
from services.gateway.scope import RequestScope

STREAMING = ("exec", "attach", "portforward", "proxy")


async def _pod(scope: RequestScope) -> dict[str, Any]:
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                     storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
    return dict(jsonutil.loads(reply.object))


def _container(pod: dict[str, Any], wanted: str) -> str:
    """The container a request addresses, with kube's 400 messages when it is ambiguous or unknown."""
    name = (pod.get("metadata") or {}).get("name", "")
    spec = pod.get("spec") or {}
    containers = [c.get("name", "") for c in spec.get("containers") or []]
    others = [c.get("name", "") for c in (spec.get("initContainers") or []) + (spec.get("ephemeralContainers") or [])]
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise errors.bad_request(f"a container name must be specified for pod {name}")
        raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                 f"[{' '.join(containers)}]")
    if wanted not in containers and wanted not in others:
        raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def _no_kubelet(pod: dict[str, Any]) -> errors.StatusError:
    node = (pod.get("spec") or {}).get("nodeName", "")
    return errors.unavailable(f"no kubelet is reachable for node {node!r}: kapi serves the API only and runs no "
                              f"nodes", retry_after_seconds=0)


@subresource("", "pods", "log")
async def log(scope: RequestScope) -> web.StreamResponse:
    """GET pods/<name>/log: container checks, then an empty log for an unscheduled pod, else 503."""
    if scope.info.verb != "get":
        raise errors.method_not_allowed("pods/log", scope.info.verb)
    pod = await _pod(scope)
    _container(pod, scope.param("container"))
    if not (pod.get("spec") or {}).get("nodeName"):
        return web.Response(body=b"", content_type="text/plain")
    raise _no_kubelet(pod)


async def _streaming(scope: RequestScope, name: str) -> web.StreamResponse:
    pod = await _pod(scope)
    pod_name = (pod.get("metadata") or {}).get("name", "")
    if name in ("exec", "attach"):
        _container(pod, scope.param("container"))
        phase = (pod.get("status") or {}).get("phase", "")
        if phase in ("Succeeded", "Failed"):
            raise errors.bad_request(f"cannot {name} into a container in a completed pod; current phase is {phase}")
    if not (pod.get("spec") or {}).get("nodeName"):
        raise errors.bad_request(f"pod {pod_name} does not have a host assigned")
    raise _no_kubelet(pod)


def _register(name: str) -> None:
    async def handler(scope: RequestScope) -> web.StreamResponse:
        return await _streaming(scope, name)

    handler.__doc__ = f"pods/<name>/{name}: kube's checks, then 400 (unscheduled) or 503 (no kubelet)."
    subresource("", "pods", name)(handler)


for _name in STREAMING:
    _register(_name)
