"""Pod subresources that need a kubelet: ``log``, ``exec``, ``attach``, ``portforward``, ``proxy``.

kapi runs no nodes, so nothing can stream from a container. These answer at
once with the Status kube-apiserver gives before it would dial a kubelet
(pkg/registry/core/pod LogLocation / streamLocation): 404 for a missing pod,
400 for a bad or missing container name, 400 ``pod <name> does not have a
host assigned`` for an unscheduled pod (204 No Content for ``log``, after
its 422 option checks), and 503
ServiceUnavailable for a pod bound to a node, because no kubelet is reachable.
Never a hang.

Also the two create-only subresources kube's pod registry serves itself: ``eviction`` (EvictionREST, with
PodDisruptionBudget checks and decrements) and ``binding`` (BindingREST), and the legacy ``bindings`` resource.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from multidict import MultiDict, MultiDictProxy

from kapi import errors, gofmt, grpcutil, jsonutil
from kapi.attributes import LOOPBACK_USER
from kapi.resources import REGISTRY
from kapi.selectors import SelectorError, label_selector_matches
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway.handlers.delete import check_options
from services.gateway.registry import store
from services.gateway.registry.hooks import CREATE
from services.gateway.reviews import review, subresource
from services.gateway.scope import RequestScope, decode_typed_body

STREAMING = ("exec", "attach", "portforward", "proxy")

EVICTION_REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."
# EvictionsRetry (eviction.go): 20 tries, 0.5 s apart with 10 % jitter
EVICTION_RETRIES = 20
EVICTION_RETRY_SECONDS = 0.5
# MaxDisruptedPodSize: a budget with more unconfirmed evictions than this refuses more
MAX_DISRUPTED_POD_SIZE = 2000


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
        raise errors.no_route()
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


def _labels_match(selector: Any, labels: dict[str, str]) -> bool:
    """Whether a PodDisruptionBudget's ``spec.selector`` selects ``labels``, as metav1.LabelSelectorAsSelector
    builds it for policy/v1: an absent (nil) selector selects nothing, ``{}`` every pod, an invalid one none."""
    if not isinstance(selector, dict):
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
    """400 ``name in URL does not match name in <Kind> object`` unless the body's ``metadata.name`` is the URL's
    (BindingREST.Create / EvictionREST.Create compare them as they are: a body without a name is refused too)."""
    meta = body.get("metadata") if isinstance(body, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    if (name or "") != scope.info.name:
        raise errors.bad_request(f"name in URL does not match name in {kind} object")


def _other(scope: RequestScope, group: str, resource: str, name: str, subresource: str, verb: str,
           manager: str = "") -> RequestScope:
    """A scope for an internal write on another object of the request's namespace: ``group``/``resource`` (v1),
    ``name``, ``subresource``, without the original request's query options (dryRun, fieldManager).

    With a ``manager``, a request of kube's loopback client (whose User-Agent names ``kube-apiserver``): the
    write's managedFields name it, and admission (plugins, webhooks, policies, quota) sees the loopback user
    (:data:`kapi.attributes.LOOPBACK_USER`, ``system:apiserver``), not the requester; its warnings go to that
    client, not into the answer. Without: kube's registry writing through its own store with
    ``rest.ValidateAllObjectFunc`` / ``ValidateAllObjectUpdateFunc``: no field manager, and admission runs the
    strategy and validation only, no plugin, webhook or policy (:meth:`AdmissionClient.without_plugins`); the
    warnings list is shared."""
    found = REGISTRY.get(group, "v1", resource)
    assert found is not None
    info = dataclasses.replace(scope.info, api_group=group, api_version="v1", resource=resource,
                               subresource=subresource, name=name, verb=verb)
    attrs = dataclasses.replace(scope.attrs, api_group=group, api_version="v1", resource=resource,
                                subresource=subresource, name=name, verb=verb)
    query = MultiDictProxy(MultiDict({"fieldManager": manager} if manager else {}))
    if manager:
        return dataclasses.replace(scope, resource=found, info=info, attrs=dataclasses.replace(
            attrs, user=LOOPBACK_USER), query=query, applying=False, warnings=[])
    return dataclasses.replace(_own_store(scope), resource=found, info=info, attrs=attrs, query=query,
                               applying=True)


def _own_store(scope: RequestScope) -> RequestScope:
    """``scope`` for a write of the registry through its own store with ``rest.ValidateAllObjectFunc``: admission
    runs no plugin, webhook or policy (:meth:`AdmissionClient.without_plugins`), only the strategy and
    validation (none for a DELETE)."""
    backends = dataclasses.replace(scope.backends, admission=scope.backends.admission.without_plugins())
    return dataclasses.replace(scope, backends=backends)


async def _admit_eviction(scope: RequestScope, eviction: dict[str, Any]) -> dict[str, Any]:
    """kube's createHandler on the Eviction before EvictionREST.Create acts: its ``metadata.namespace`` set to
    the request's when empty (another: 400 ``the namespace of the provided object does not match the namespace
    sent on the request``, EnsureObjectNamespaceMatchesRequestNamespace), then admission CREATE of
    ``pods/eviction`` with the Eviction (kind ``policy/v1`` Eviction), the requester's user and the request's
    CreateOptions: mutating and validating plugins, webhooks and policies. Returns the admitted Eviction."""
    meta = eviction["metadata"]  # a mapping with the URL's name (_same_name)
    given = meta.get("namespace") or ""
    if given and given != scope.info.namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                 "request")
    meta["namespace"] = scope.info.namespace
    row = dataclasses.replace(scope.resource, kind="Eviction")
    admitted = await store.admit(dataclasses.replace(scope, resource=row), CREATE, eviction, b"", scope.dry_run())
    return dict(jsonutil.loads(admitted))


def _now() -> str:
    """metav1.Now() as it encodes (RFC 3339, seconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _update_pod_condition(pod: dict[str, Any], condition: dict[str, Any]) -> None:
    """podutil.UpdatePodCondition: ``condition`` (type, status, reason, message) replaces the pod's condition of
    its type whole, or is appended; ``lastTransitionTime`` is now unless the status did not change (then the old
    one stays); ``lastProbeTime`` is the zero time (``null``)."""
    status = pod.get("status")
    if not isinstance(status, dict):
        status = pod["status"] = {}
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = status["conditions"] = []
    new = {"type": condition["type"], "status": condition["status"], "lastProbeTime": None,
           "lastTransitionTime": _now()}
    new.update((k, condition[k]) for k in ("reason", "message") if condition.get(k))
    for index, old in enumerate(conditions):
        if isinstance(old, dict) and old.get("type") == condition["type"]:
            if old.get("status") == condition["status"]:
                new["lastTransitionTime"] = old.get("lastTransitionTime")
            conditions[index] = new
            return
    conditions.append(new)


def _is_ready(pod: dict[str, Any]) -> bool:
    """podutil.IsPodReady: the ``Ready`` condition is ``True``."""
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _too_many(cause: str, retry_after_seconds: int) -> errors.StatusError:
    """errors.NewTooManyRequests(EVICTION_REFUSED, retry) with one ``DisruptionBudget`` cause (retryAfterSeconds
    0 is omitted, and sends no Retry-After)."""
    details: dict[str, Any] = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after_seconds:
        details["retryAfterSeconds"] = retry_after_seconds
    return errors.StatusError(429, "TooManyRequests", EVICTION_REFUSED, details)


def _still_processing(name: str) -> errors.StatusError:
    """createTooManyRequestsError: 429, retry after 10 s, ``The disruption budget <name> is still being processed
    by the server.``"""
    return _too_many(f"The disruption budget {name} is still being processed by the server.", 10)


def _denied_message(pdb: dict[str, Any]) -> str:
    """checkAndDecrement's cause when ``disruptionsAllowed`` is 0, from the ``DisruptionAllowed`` condition and
    the healthy counts (a failed sync first: the counts are not trustworthy then)."""
    name = (pdb.get("metadata") or {}).get("name", "")
    status = pdb.get("status") or {}
    condition = next((c for c in status.get("conditions") or [] if isinstance(c, dict)
                      and c.get("type") == "DisruptionAllowed"), None)
    refusing = condition is not None and condition.get("status") == "False" and bool(condition.get("message"))
    current, desired = int(status.get("currentHealthy") or 0), int(status.get("desiredHealthy") or 0)
    if refusing and condition is not None and condition.get("reason") == "SyncFailed":
        return (f"The disruption budget {name} does not allow evicting pods currently because it failed sync: "
                f"{condition.get('message')}")
    if current <= desired:
        return f"The disruption budget {name} needs {desired} healthy pods and has {current} currently"
    if refusing and condition is not None:
        return (f"The disruption budget {name} does not allow evicting pods currently ({condition.get('reason', '')})"
                f": {condition.get('message')}")
    return f"The disruption budget {name} does not allow evicting pods currently"


def _disruption_allowed_condition(pdb: dict[str, Any]) -> None:
    """pdbhelper.UpdateDisruptionAllowedCondition through meta.SetStatusCondition, for a budget with no
    disruption left: ``DisruptionAllowed`` False ``InsufficientPods`` (its observedGeneration the status's);
    lastTransitionTime moves only when the status changes."""
    status = pdb.setdefault("status", {})
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        conditions = status["conditions"] = []
    wanted = {"type": "DisruptionAllowed", "status": "False",
              "observedGeneration": int(status.get("observedGeneration") or 0),
              "reason": "InsufficientPods", "message": ""}
    for condition in conditions:
        if isinstance(condition, dict) and condition.get("type") == "DisruptionAllowed":
            if condition.get("status") != "False":
                condition["lastTransitionTime"] = _now()
            condition.update(wanted)
            if not condition["observedGeneration"]:
                condition.pop("observedGeneration")
            return
    if not wanted["observedGeneration"]:
        wanted.pop("observedGeneration")
    conditions.append({**wanted, "lastTransitionTime": _now()})


async def _check_and_decrement(scope: RequestScope, pod_name: str, pdb: dict[str, Any], dry_run: bool) -> None:
    """checkAndDecrement: refuse when the budget allows no disruption, else take one and record the pod in
    ``status.disruptedPods`` (now) with an UpdateStatus of the budget as read (409 when it changed since; not on
    a dry run). 429 still processed (observedGeneration < generation, retry 10 s); 403 ``poddisruptionbudget.policy
    "<name>" is forbidden: pdb disruptions allowed is negative`` or ``DisruptedPods map too big - too many
    evictions not confirmed by PDB controller`` (more than 2000 entries); 429 (retry 0) with
    :func:`_denied_message` when none is allowed."""
    meta = pdb.get("metadata") or {}
    name = meta.get("name", "")
    status = pdb.setdefault("status", {})
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        raise _still_processing(name)
    allowed = int(status.get("disruptionsAllowed") or 0)
    if allowed < 0:
        raise errors.forbidden("poddisruptionbudget", name, "pdb disruptions allowed is negative", "policy")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise errors.forbidden("poddisruptionbudget", name, "DisruptedPods map too big - too many evictions not "
                               "confirmed by PDB controller", "policy")
    if allowed == 0:
        raise _too_many(_denied_message(pdb), 0)
    status["disruptionsAllowed"] = allowed - 1
    if allowed == 1:
        _disruption_allowed_condition(pdb)
    if dry_run:
        return
    disrupted = status.get("disruptedPods")
    status["disruptedPods"] = {**(disrupted if isinstance(disrupted, dict) else {}), pod_name: _now()}

    async def replace(live: dict[str, Any] | None) -> dict[str, Any]:
        return pdb  # carries the resourceVersion read: a budget changed since is a 409, read again

    await store.guaranteed_update(_other(scope, "policy", "poddisruptionbudgets", name, "status", "update",
                                         "kube-apiserver"), replace)


async def _read_budget(scope: RequestScope, name: str) -> dict[str, Any]:
    """The budget ``name`` of the request's namespace as stored now (its resourceVersion set)."""
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Get, storage_pb2.GetRequest(
        key=storage_pb2.ResourceKey(group="policy", resource="poddisruptionbudgets", namespace=scope.info.namespace,
                                    name=name)), timeout=scope.timeout)
    return dict(jsonutil.loads(reply.object))


async def _budgets(scope: RequestScope, pod: dict[str, Any]) -> list[dict[str, Any]]:
    """getPodDisruptionBudgets: the namespace's PodDisruptionBudgets whose selector selects the pod."""
    listed: Any = await grpcutil.call("storage", scope.backends.storage.List, storage_pb2.ListRequest(
        key=storage_pb2.ResourceKey(group="policy", resource="poddisruptionbudgets", namespace=scope.info.namespace)),
        timeout=scope.timeout)
    labels = (pod.get("metadata") or {}).get("labels") or {}
    out = []
    for raw in listed.items:
        pdb = jsonutil.loads(raw)
        if _labels_match((pdb.get("spec") or {}).get("selector"), labels):
            out.append(pdb)
    return out


def _propagate_dry_run(scope: RequestScope, options: dict[str, Any]) -> dict[str, Any]:
    """propagateDryRun: the request's ``dryRun`` goes into the Eviction's deleteOptions when those have none;
    both set and different -> 500 ``Non-matching dry-run options in request and content: [All] and [...]``."""
    requested = list(scope.query.getall("dryRun", []))
    if requested:
        scope.dry_run()  # kube's 400 for a value other than All
    own = options.get("dryRun")
    if not own:
        if requested:
            options["dryRun"] = requested
        return options
    if requested and list(own) != requested:
        raise errors.StatusError(500, "", "Non-matching dry-run options in request and content: "
                                 f"[{' '.join(requested)}] and [{' '.join(str(v) for v in own)}]")
    return options


def _with_resource_version(options: dict[str, Any], resource_version: str) -> dict[str, Any]:
    """setPreconditionsResourceVersion on a copy of ``options``."""
    pre = options.get("preconditions")
    return {**options, "preconditions": {**(pre if isinstance(pre, dict) else {}),
                                         "resourceVersion": resource_version}}


def _rv_unset(options: dict[str, Any]) -> bool:
    """resourceVersionIsUnset: no ``preconditions.resourceVersion``."""
    pre = options.get("preconditions")
    return not isinstance(pre, dict) or pre.get("resourceVersion") is None


async def _condition_and_delete(scope: RequestScope, options: dict[str, Any]) -> None:
    """addConditionAndDeletePod: unless a dry run, the pod gets the ``DisruptionTarget`` True
    ``EvictionByEvictionAPI`` condition (``Eviction API: evicting``) through its status, after the options'
    preconditions are checked on the latest pod (409 ``Operation cannot be fulfilled on Pod "<name>": the UID in
    the precondition ...``); a resourceVersion precondition then moves to the updated pod's. Then the pod is
    deleted with ``options``."""
    name = scope.info.name
    if not options.get("dryRun"):
        given = options.get("preconditions")
        pre: dict[str, Any] = given if isinstance(given, dict) else {}

        async def appender(live: dict[str, Any] | None) -> dict[str, Any]:
            assert live is not None
            meta = live.get("metadata") or {}
            uid, rv = pre.get("uid"), pre.get("resourceVersion")
            if uid and uid != meta.get("uid"):
                raise errors.conflict("Pod", name, f"the UID in the precondition ({uid}) does not match the UID in "
                                      f"record ({meta.get('uid', '')}). The object might have been deleted and then "
                                      "recreated")
            if rv and rv != meta.get("resourceVersion"):
                raise errors.conflict("Pod", name, f"the ResourceVersion in the precondition ({rv}) does not match "
                                      f"the ResourceVersion in record ({meta.get('resourceVersion', '')}). The object "
                                      "might have been modified")
            _update_pod_condition(live, {"type": "DisruptionTarget", "status": "True",
                                         "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"})
            return live

        updated, _ = await store.guaranteed_update(_other(scope, "", "pods", name, "status", "update"), appender)
        if not _rv_unset(options):
            rv = (jsonutil.loads(updated).get("metadata") or {}).get("resourceVersion", "")
            options = _with_resource_version(options, rv)
    await store.delete(_own_store(scope), name, options)  # r.store.Delete with rest.ValidateAllObjectFunc


@subresource("", "pods", "eviction")
async def eviction(scope: RequestScope) -> web.StreamResponse:
    """POST pods/<name>/eviction (policy/v1 Eviction, as ``kubectl drain`` sends): kube's EvictionREST.Create.

    A pod that is Pending, Succeeded, Failed or already terminating is deleted whatever its budgets say
    (canIgnorePDB; a resourceVersion precondition guards a live one). Otherwise the one PodDisruptionBudget
    selecting it is checked and decremented (:func:`_check_and_decrement`, retried on 409 up to 20 times, 0.5 s
    apart, reading the budget again); an unready pod goes without taking a disruption when the budget's
    ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``, or (``IfHealthyBudget``, the default) it has
    ``currentHealthy >= desiredHealthy > 0`` (then deleted with its resourceVersion as precondition; a 409 on it
    is the 429 still-processing refusal). More than one budget: a 500 Failure Status without reason ``This pod has
    more than one PodDisruptionBudget, which the eviction subresource does not support.`` (the answer, not an
    error). A dry run (query or ``deleteOptions.dryRun``) writes neither budget nor pod. Answers 201 Success.
    """
    if scope.info.verb != "create":
        raise errors.no_route()
    body = await scope.request.read()
    # EvictionREST.New is a policy Eviction: the body decodes into it (policy/v1 or v1beta1) or is kube's 400
    eviction = decode_typed_body(scope, body, "policy", ("v1", "v1beta1"), "Eviction") if body.strip() else {}
    _same_name(eviction, scope, "Eviction")
    options = eviction.get("deleteOptions") if isinstance(eviction, dict) else None
    options = dict(options) if isinstance(options, dict) else {}
    check_options(options)
    options = _propagate_dry_run(scope, options)
    # propagateDryRun writes into the Eviction's own deleteOptions only (createValidation sees them so)
    admitted = await _admit_eviction(scope, {**eviction, "deleteOptions": options}
                                     if isinstance(eviction.get("deleteOptions"), dict) else dict(eviction))
    _same_name(admitted, scope, "Eviction")  # what mutating admission made of it
    mutated = admitted.get("deleteOptions")
    if isinstance(mutated, dict) and mutated != options:
        check_options(mutated)
        options = _propagate_dry_run(scope, dict(mutated))
    retry = _rv_unset(options)  # a client's resourceVersion precondition is not retried
    pod: dict[str, Any] = {}
    for attempt in range(EVICTION_RETRIES):
        pod = await _pod(scope)
        meta = pod.get("metadata") or {}
        phase = (pod.get("status") or {}).get("phase", "")
        if phase not in ("Pending", "Succeeded", "Failed") and not meta.get("deletionTimestamp"):
            break  # canIgnorePDB is false: the budgets decide
        delete_options = options
        if phase == "Pending" and not meta.get("deletionTimestamp") and retry:  # shouldEnforceResourceVersion
            delete_options = _with_resource_version(options, str(meta.get("resourceVersion") or ""))
        try:
            await _condition_and_delete(scope, delete_options)
        except errors.StatusError as err:
            if not retry or err.reason != "Conflict" or attempt == EVICTION_RETRIES - 1:
                raise
            await asyncio.sleep(EVICTION_RETRY_SECONDS * (1 + random.random() * 0.1))
            continue
        return _created(scope)
    budgets = await _budgets(scope, pod)
    if len(budgets) > 1:
        return scope.respond({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                              "subresource does not support.", "code": 500}, 500)
    pdb_name, unhealthy = "", False
    if budgets:
        pdb = budgets[0]
        pdb_name = (pdb.get("metadata") or {}).get("name", "")
        status = pdb.get("status") or {}
        if not _is_ready(pod):
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy")
            desired = int(status.get("desiredHealthy") or 0)
            unhealthy = policy == "AlwaysAllow" or (int(status.get("currentHealthy") or 0) >= desired > 0)
        if not unhealthy:
            await _decrement(scope, pod, pdb, bool(options.get("dryRun")))
    delete_options = options
    if unhealthy:
        delete_options = _with_resource_version(options, str((pod.get("metadata") or {}).get("resourceVersion")))
    try:
        await _condition_and_delete(scope, delete_options)
    except errors.StatusError as err:
        if err.reason == "Conflict" and unhealthy and retry:
            raise _still_processing(pdb_name) from None
        raise
    return _created(scope)


async def _decrement(scope: RequestScope, pod: dict[str, Any], pdb: dict[str, Any], dry_run: bool) -> None:
    """The RetryOnConflict around :func:`_check_and_decrement`: a 409 reads the budget again, at most 20 tries."""
    name = (pdb.get("metadata") or {}).get("name", "")
    pod_name = (pod.get("metadata") or {}).get("name", "")
    for attempt in range(EVICTION_RETRIES):
        if attempt:
            pdb = await _read_budget(scope, name)
        try:
            await _check_and_decrement(scope, pod_name, pdb, dry_run)
            return
        except errors.StatusError as err:
            if err.reason != "Conflict" or attempt == EVICTION_RETRIES - 1:
                raise
            await asyncio.sleep(EVICTION_RETRY_SECONDS * (1 + random.random() * 0.1))


@subresource("", "pods", "binding")
async def binding(scope: RequestScope) -> web.StreamResponse:
    """POST pods/<name>/binding (core/v1 Binding, as a scheduler sends): :func:`_bind`; 201 Status Success."""
    if scope.info.verb != "create":
        raise errors.no_route()
    body = decode_typed_body(scope, await scope.request.read(), "", ("v1",), "Binding")  # BindingREST.New
    _same_name(body, scope, "Binding")
    await _bind(scope, body)
    return _created(scope)


def _validate_binding(target: dict[str, Any]) -> None:
    """ValidatePodBinding, returned by BindingREST.Create as a plain aggregate error, so a 500 Status without
    reason whose message is the list: ``target.kind: Unsupported value: "Pod": supported values: "Node",
    "<empty>"`` (a kind other than Node or empty), ``target.name: Required value``; two as ``[a, b]``."""
    found = []
    kind = str(target.get("kind") or "")
    if kind and kind != "Node":
        found.append(f'target.kind: Unsupported value: {gofmt.go_quote(kind)}: supported values: "Node", "<empty>"')
    if not target.get("name"):
        found.append("target.name: Required value")
    if found:
        raise errors.StatusError(500, "", found[0] if len(found) == 1 else "[" + ", ".join(found) + "]")


async def _bind(scope: RequestScope, body: Any) -> None:
    """BindingREST.Create and setPodNodeAndMetadata (``scope`` addresses the Pod's binding subresource).

    The Binding's ``metadata.uid`` and ``resourceVersion`` (kept on this subresource create) are preconditions on
    the Pod: 409 ``Operation cannot be fulfilled on pods "<name>": Precondition failed: UID in precondition: <uid>,
    UID in object meta: <uid>`` (or ResourceVersion). Then 409 on ``pods/binding`` (``Operation cannot be
    fulfilled on pods/binding "<name>": <reason>``) when the pod ``is being deleted, cannot be assigned to a
    host``, ``is already assigned to node "<node>"`` or ``has non-empty .spec.schedulingGates``. Sets
    ``spec.nodeName``, merges the Binding's annotations and labels (PodTopologyLabelsAdmission, on since 1.35)
    into the Pod's, clears ``status.nominatedNodeName`` (ClearingNominatedNodeNameAfterBinding, on since 1.35)
    and sets the ``PodScheduled`` True condition (podutil.UpdatePodCondition, no reason)."""
    target = body.get("target") if isinstance(body, dict) else None
    target = target if isinstance(target, dict) else {}
    _validate_binding(target)
    node = str(target.get("name"))
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    name = scope.info.name

    async def bind(pod: dict[str, Any] | None) -> dict[str, Any]:
        assert pod is not None
        pod_meta = pod.setdefault("metadata", {})
        for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            wanted = meta.get(field)
            if wanted and wanted != pod_meta.get(field, ""):
                raise errors.conflict("pods", name, f"Precondition failed: {label} in precondition: {wanted}, "
                                      f"{label} in object meta: {pod_meta.get(field, '')}")
        spec = pod.setdefault("spec", {})
        refusal = ""
        if pod_meta.get("deletionTimestamp"):
            refusal = f"pod {name} is being deleted, cannot be assigned to a host"
        elif spec.get("nodeName"):
            refusal = f"pod {name} is already assigned to node {gofmt.go_quote(spec['nodeName'])}"
        elif spec.get("schedulingGates"):
            refusal = f"pod {name} has non-empty .spec.schedulingGates"
        if refusal:
            raise errors.conflict("pods/binding", name, refusal)
        spec["nodeName"] = node
        for field in ("annotations", "labels"):
            extra = meta.get(field)
            if isinstance(extra, dict) and extra:
                pod_meta[field] = {**(pod_meta.get(field) or {}), **extra}
        status = pod.get("status")
        if isinstance(status, dict):
            status.pop("nominatedNodeName", None)
        _update_pod_condition(pod, {"type": "PodScheduled", "status": "True"})
        return pod

    # a Storage.GuaranteedUpdate under the registry: no field manager records the change
    await store.guaranteed_update(dataclasses.replace(scope, applying=True), bind)


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
