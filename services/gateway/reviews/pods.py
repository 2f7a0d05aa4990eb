"""Pod subresources that need a kubelet: ``log``, ``exec``, ``attach``, ``portforward``, ``proxy``.

kapi runs no nodes, so nothing can stream from a container. These answer at
once with the Status kube-apiserver gives before it would dial a kubelet
(pkg/registry/core/pod LogLocation / streamLocation): 404 for a missing pod,
400 for a bad or missing container name, 400 ``pod <name> does not have a
host assigned`` for an unscheduled pod (204 No Content for ``log``, after
its 422 option checks), and 503
ServiceUnavailable for a pod bound to a node, because no kubelet is reachable.
Never a hang.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from aiohttp import web

from kapi import errors, gofmt, grpcutil, jsonutil
from kapi.resources import REGISTRY
from kapi.selectors import SelectorError, label_selector_matches
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation
from services.gateway.handlers.delete import check_option_types
from services.gateway.registry import store
from services.gateway.reviews import review, subresource
from services.gateway.scope import RequestScope

STREAMING = ("exec", "attach", "portforward", "proxy")


async def _pod(scope: RequestScope) -> dict[str, Any]:
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Get,
                                     storage_pb2.GetRequest(key=scope.key()), timeout=scope.timeout)
    return dict(jsonutil.loads(reply.object))


def _container(pod: dict[str, Any], wanted: str) -> str:
    """The container a request addresses, with kube's 400 messages (validateContainer) when it is ambiguous or
    unknown: the choices list every container, init containers first, then ephemeral ones (VisitContainers)."""
    name = (pod.get("metadata") or {}).get("name", "")
    spec = pod.get("spec") or {}
    containers = [c.get("name", "") for c in spec.get("containers") or []]
    every = [c.get("name", "") for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
             + (spec.get("ephemeralContainers") or [])]
    if not wanted:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise errors.bad_request(f"a container name must be specified for pod {name}")
        raise errors.bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                 f"[{' '.join(every)}]")
    if wanted not in every:
        raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
    return wanted


def _int_option(scope: RequestScope, key: str) -> int | None:
    """An int64 PodLogOptions query parameter: absent -> None; not an int64 -> 400 with strconv.ParseInt's
    message (the parameter codec; an empty value too)."""
    text = scope.query.get(key)
    if text is None:
        return None
    try:
        return gofmt.parse_int64(text)
    except ValueError as exc:
        raise errors.bad_request(str(exc)) from None


def _log_options(scope: RequestScope) -> None:
    """LogREST.Get's ValidatePodLogOptions, before the pod is read: 422 ``PodLogOptions "<pod>" is invalid``."""
    tail, limit, since = (_int_option(scope, key) for key in ("tailLines", "limitBytes", "sinceSeconds"))
    since_time = scope.query.get("sinceTime")
    causes: list[errors.Cause] = []
    if tail is not None and tail < 0:
        causes.append(errors.Cause("FieldValueInvalid", f"Invalid value: {tail}: must be greater than or equal "
                                   "to 0", "tailLines"))
    if limit is not None and limit < 1:
        causes.append(errors.Cause("FieldValueInvalid", f"Invalid value: {limit}: must be greater than 0",
                                   "limitBytes"))
    if since is not None and since_time not in (None, "", "null"):
        causes.append(errors.Cause("FieldValueForbidden", "Forbidden: at most one of `sinceTime` or "
                                   "`sinceSeconds` may be specified"))
    elif since is not None and since < 1:
        causes.append(errors.Cause("FieldValueInvalid", f"Invalid value: {since}: must be greater than 0",
                                   "sinceSeconds"))
    if causes:
        err = errors.invalid("PodLogOptions", scope.info.name, causes)
        # A cause on the root path prints as ": Forbidden: ..." and has no field (StatusCause omitempty).
        parts = [f"{c.field}: {c.message}" for c in causes]
        err.message = (f'PodLogOptions "{scope.info.name}" is invalid: '
                       f"{parts[0] if len(parts) == 1 else '[' + ', '.join(parts) + ']'}")
        for cause in err.details.get("causes", []):
            if not cause.get("field"):
                cause.pop("field", None)
        raise err


def _no_kubelet(pod: dict[str, Any]) -> errors.StatusError:
    node = (pod.get("spec") or {}).get("nodeName", "")
    return errors.unavailable(f"no kubelet is reachable for node {node!r}: kapi serves the API only and runs no "
                              f"nodes", retry_after_seconds=0)


@subresource("", "pods", "log")
async def log(scope: RequestScope) -> web.StreamResponse:
    """GET pods/<name>/log: option checks (422), container checks (400), then 204 No Content for an unscheduled
    pod (LogLocation gives no location, so the LocationStreamer has no stream), else 503."""
    if scope.info.verb != "get":
        raise errors.method_not_allowed("pods/log", scope.info.verb)
    _log_options(scope)
    pod = await _pod(scope)
    _container(pod, scope.param("container"))
    if not (pod.get("spec") or {}).get("nodeName"):
        return web.Response(status=204)
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


def _labels_match(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A LabelSelector (matchLabels + matchExpressions) against ``labels``; an empty selector matches nothing here."""
    if not selector:
        return False
    try:
        return label_selector_matches(selector, labels)
    except SelectorError:
        return False


def _created(scope: RequestScope) -> web.Response:
    """The ``Status`` Success (code 201) that binding and eviction answer, encoded as every other response."""
    return scope.respond({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
                         201)


def _same_name(body: Any, scope: RequestScope, kind: str) -> None:
    """400 ``name in URL does not match name in <Kind> object`` when the body names another pod (kube's
    BindingREST / EvictionREST); a body without a name is taken for the URL's."""
    meta = body.get("metadata") if isinstance(body, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    if name and name != scope.info.name:
        raise errors.bad_request(f"name in URL does not match name in {kind} object")


@subresource("", "pods", "eviction")
async def eviction(scope: RequestScope) -> web.StreamResponse:
    """POST pods/<name>/eviction (policy/v1 Eviction, as ``kubectl drain`` sends): delete the pod unless a
    PodDisruptionBudget selecting it allows no disruption (429 with kube's message). Source: "API-initiated
    Eviction"."""
    if scope.info.verb != "create":
        raise errors.method_not_allowed("pods/eviction", scope.info.verb)
    body = await scope.request.read()
    eviction = negotiation.decode_body(body, scope.content_type) if body.strip() else {}
    _same_name(eviction, scope, "Eviction")
    pod = await _pod(scope)
    labels = (pod.get("metadata") or {}).get("labels") or {}
    # A pod that is not running (Pending, Succeeded, Failed) may go whatever its budgets say (kube's canIgnorePDB).
    phase = (pod.get("status") or {}).get("phase", "")
    budgets: list[bytes] = []
    if phase not in ("Pending", "Succeeded", "Failed"):
        listed: Any = await grpcutil.call("storage", scope.backends.storage.List, storage_pb2.ListRequest(
            key=storage_pb2.ResourceKey(group="policy", resource="poddisruptionbudgets",
                                        namespace=scope.info.namespace)), timeout=scope.timeout)
        budgets = list(listed.items)
    for raw in budgets:
        pdb = jsonutil.loads(raw)
        if _labels_match((pdb.get("spec") or {}).get("selector") or {}, labels):
            if int((pdb.get("status") or {}).get("disruptionsAllowed") or 0) < 1:
                name = (pdb.get("metadata") or {}).get("name", "")
                raise errors.StatusError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's "
                                         "disruption budget.", {"causes": [{
                                             "reason": "DisruptionBudget", "message": f"The disruption budget {name} "
                                             "needs 1 healthy pods and has 0 currently"}]})
    options = eviction.get("deleteOptions") if isinstance(eviction, dict) else None
    options = dict(options) if isinstance(options, dict) else {}
    check_option_types(options)
    await store.delete(scope, scope.info.name, options)
    return _created(scope)


@subresource("", "pods", "binding")
async def binding(scope: RequestScope) -> web.StreamResponse:
    """POST pods/<name>/binding (core/v1 Binding, as a scheduler sends): set ``spec.nodeName`` once.

    409 Conflict ``pod <name> is already assigned to node "<node>"`` when bound; 400 without a target name.
    """
    if scope.info.verb != "create":
        raise errors.method_not_allowed("pods/binding", scope.info.verb)
    body = negotiation.decode_body(await scope.request.read(), scope.content_type)
    _same_name(body, scope, "Binding")
    await _bind(scope, body)
    return _created(scope)


async def _bind(scope: RequestScope, body: Any) -> None:
    """BindingREST.Create: set the Pod's ``spec.nodeName`` to the Binding's ``target.name`` once (``scope``
    addresses the Pod's binding subresource). 400 without a target name; 409 ``pod <name> is already assigned
    to node "<node>"``."""
    target = (body.get("target") or {}) if isinstance(body, dict) else {}
    node = str(target.get("name") or "")
    if not node:
        raise errors.bad_request("target.name is required")

    async def bind(pod: dict[str, Any] | None) -> dict[str, Any]:
        assert pod is not None
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            raise errors.conflict("pods", scope.info.name,
                                  f'pod {scope.info.name} is already assigned to node "{bound}"')
        pod.setdefault("spec", {})["nodeName"] = node
        return pod

    await store.guaranteed_update(scope, bind)


@review("", "bindings")
async def legacy_binding(scope: RequestScope, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """POST namespaces/<ns>/bindings (core/v1 Binding; kube's LegacyBindingREST, storage_core.go): binds the Pod
    the Binding's ``metadata.name`` names, as ``pods/<name>/binding`` does; 201 Status Success."""
    name = str((body.get("metadata") or {}).get("name") or "")
    pods = REGISTRY.get("", "v1", "pods")
    assert pods is not None
    info = dataclasses.replace(scope.info, resource="pods", subresource="binding", name=name)
    attrs = dataclasses.replace(scope.attrs, resource="pods", subresource="binding", name=name)
    pod_scope = dataclasses.replace(scope, resource=pods, info=info, attrs=attrs)
    await _bind(pod_scope, body)  # the copy shares the request's warning list
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201
