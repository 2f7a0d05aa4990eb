"""Version conversion of custom resources: strategy None (apiVersion only) and Webhook (ConversionReview).

A CRD with several versions stores every object at its storage version; a
request through another served version sees objects converted to that
version and writes converted back to the storage version, as
apiextensions-apiserver's conversion does. :class:`ConvertingStorage` wraps
the storage stub for one request so every handler (get, list, watch, create,
update, patch, apply, delete, subresources) converts without knowing: the
objects of Create/Update requests go to the storage version, the objects of
every reply (and of every watch event) to the requested version. With
strategy ``None`` only ``apiVersion`` changes; with ``Webhook`` the CRD's
``spec.conversion.webhook.clientConfig`` (``url``, or ``service`` as
``https://<name>.<namespace>.svc:<port><path>``, with ``caBundle``) gets a
``ConversionReview`` in the first of the CRD's ``conversionReviewVersions``
kapi speaks (``v1`` or ``v1beta1``), and its failures are 500
InternalError "conversion webhook for <group>/<version>, Kind=<kind> failed:
..." as on kube-apiserver. Source: "Versions in CustomResourceDefinitions".
Two built-in resources use the same machinery with fixed conversions:
events.k8s.io/v1 Events (kapi.events) and autoscaling/v1 HorizontalPodAutoscalers
(kapi.kinds.autoscaling).
"""

from __future__ import annotations

import base64
import dataclasses
import ssl
import uuid
from typing import Any

import aiohttp

from kapi import crd, errors, events, jsonutil
from kapi.kinds import autoscaling
from kapi.resources import Resource
from services.gateway import crddefaults, endpoints

WEBHOOK_TIMEOUT = 30.0  # seconds, kube's conversion webhook timeout
REVIEW_VERSIONS = ("v1", "v1beta1")  # ConversionReview versions kapi sends and parses


def needs_conversion(definition: dict[str, Any] | None) -> bool:
    """Whether requests to this CRD need a converting storage: several versions, or a Webhook strategy."""
    if definition is None:
        return False
    return len(crd.versions(definition)) > 1 or strategy(definition) == "Webhook"


def strategy(definition: dict[str, Any]) -> str:
    """``spec.conversion.strategy`` ("None" by default)."""
    conversion = crd.spec(definition).get("conversion")
    return str((conversion or {}).get("strategy") or "None") if isinstance(conversion, dict) else "None"


def storage_group_version(definition: dict[str, Any]) -> str:
    """``<group>/<storage version>`` of a CRD."""
    return f"{crd.group(definition)}/{crd.storage_version(definition)}"


async def convert(definition: dict[str, Any], objects: list[bytes], desired: str, storage: Any = None) -> list[bytes]:
    """Convert JSON objects to the apiVersion ``desired`` (``<group>/<version>``); objects already there stay as is.

    Strategy None rewrites ``apiVersion`` only; Webhook posts the objects
    that differ in one ConversionReview (a ``service`` clientConfig is
    resolved to an endpoint through ``storage``). Raises 500 InternalError when the
    webhook fails or answers badly.
    """
    if definition is EVENTS_V1:
        return [jsonutil.dumps(events.convert(jsonutil.loads(o), desired)) for o in objects]
    if definition is AUTOSCALING:
        return [jsonutil.dumps(autoscaling.convert(jsonutil.loads(o), desired)) for o in objects]
    decoded = [jsonutil.loads(o) for o in objects]
    todo = [i for i, o in enumerate(decoded) if isinstance(o, dict) and o.get("apiVersion") != desired]
    if not todo:
        return objects
    out = list(objects)
    if strategy(definition) == "Webhook":
        converted = await _webhook(definition, [decoded[i] for i in todo], desired, storage)
        for i, obj in zip(todo, converted, strict=True):
            out[i] = jsonutil.dumps(obj)
        return out
    for i in todo:
        decoded[i]["apiVersion"] = desired
        out[i] = jsonutil.dumps(decoded[i])
    return out


def _ssl_context(ca_bundle: str) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if ca_bundle:
        context.load_verify_locations(cadata=base64.b64decode(ca_bundle).decode())
    return context


def review_version_for(accepted: Any) -> str | None:
    """The ConversionReview version to send: the first of the CRD's ``conversionReviewVersions`` kapi speaks.

    kapi speaks ``v1`` and ``v1beta1`` (same shape; v1 responses must echo
    apiVersion, kind and uid). None when the list names neither (kube:
    "no supported conversion review versions").
    """
    for version in accepted if isinstance(accepted, list) else ["v1"]:
        if version in REVIEW_VERSIONS:
            return str(version)
    return None


def _response(answer: Any, review_version: str, uid: str, fail: Any) -> dict[str, Any]:
    """The ``response`` of a ConversionReview answer, checked as kube's getConvertedObjectsFromResponse does.

    v1 answers must be ``apiextensions.k8s.io/v1, Kind=ConversionReview`` with
    the request's uid; v1beta1 answers are not checked for either (as kube).
    """
    answer = answer if isinstance(answer, dict) else {}
    if review_version == "v1":
        got = f"{answer.get('apiVersion') or ''}, Kind={answer.get('kind') or ''}"
        if got != "apiextensions.k8s.io/v1, Kind=ConversionReview":
            raise fail(f"expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise fail("no response provided")
    if review_version == "v1" and response.get("uid") != uid:
        raise fail(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    result: dict[str, Any] = response["result"] if isinstance(response.get("result"), dict) else {}
    if result.get("status") != "Success":
        raise fail(str(result.get("message") or f"response.result.status was '{result.get('status') or ''}', "
                       "not 'Success'"))
    return response


def webhook_url(client_config: dict[str, Any]) -> str:
    """The URL of a webhook clientConfig: ``url``, or ``https://<name>.<namespace>.svc:<port><path>``."""
    if client_config.get("url"):
        return str(client_config["url"])
    service = client_config.get("service") or {}
    path = str(service.get("path") or "")
    return f"https://{service.get('name')}.{service.get('namespace')}.svc:{int(service.get('port') or 443)}{path}"


async def _webhook(definition: dict[str, Any], objects: list[dict[str, Any]], desired: str, storage: Any = None
                   ) -> list[dict[str, Any]]:
    kind = crd.names(definition).get("kind")
    source = str(objects[0].get("apiVersion") or "")
    gvk = f"{source}, Kind={kind}"

    def fail(detail: str) -> errors.StatusError:
        return errors.internal(f"conversion webhook for {gvk} failed: {detail}")

    webhook = (crd.spec(definition).get("conversion") or {}).get("webhook") or {}
    client_config = webhook.get("clientConfig") or {}
    review_version = review_version_for(webhook.get("conversionReviewVersions"))
    if review_version is None:
        raise errors.internal("no supported conversion review versions")
    uid = str(uuid.uuid4())
    review = {"kind": "ConversionReview", "apiVersion": f"apiextensions.k8s.io/{review_version}",
              "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}}
    url = webhook_url(client_config)
    service = client_config.get("service") or {}
    server_hostname: str | None = None
    try:
        if service and not client_config.get("url") and storage is not None:
            namespace, name = str(service.get("namespace") or ""), str(service.get("name") or "")
            try:
                host, port = await endpoints.resolve(storage, namespace, name, int(service.get("port") or 443),
                                                     WEBHOOK_TIMEOUT)
            except errors.StatusError as err:
                raise fail(err.message) from None
            url, server_hostname = f"https://{host}:{port}{service.get('path') or ''}", f"{name}.{namespace}.svc"
        context = _ssl_context(str(client_config.get("caBundle") or ""))
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WEBHOOK_TIMEOUT)) as session, \
                session.post(url, data=jsonutil.go_escape(jsonutil.dumps(review)), ssl=context,
                             server_hostname=server_hostname, headers={"Content-Type": "application/json"}) as reply:
            if reply.status != 200:
                raise fail(f"Post {url!r}: unexpected status {reply.status}")  # noqa: B907
            answer = jsonutil.loads(await reply.read())
    except errors.StatusError:
        raise
    except Exception as exc:  # transport, TLS, JSON: all are the webhook failing
        raise fail(f"Post {url!r}: {exc}") from None  # noqa: B907
    response = _response(answer, review_version, uid, fail)
    converted = response.get("convertedObjects")
    if not isinstance(converted, list) or len(converted) != len(objects):
        raise fail(f"returned {len(converted) if isinstance(converted, list) else 0} objects, "
                   f"expected {len(objects)}")
    for before, after in zip(objects, converted, strict=True):
        if not isinstance(after, dict) or after.get("apiVersion") != desired:
            raise fail(f"invalid converted object: apiVersion is not {desired}")
        meta, old_meta = after.get("metadata") or {}, before.get("metadata") or {}
        if meta.get("uid") != old_meta.get("uid") or meta.get("name") != old_meta.get("name"):
            raise fail("invalid metadata: the webhook changed the name or uid")
    return converted


class _ConvertingWatch:
    """A storage Watch call whose events' objects are converted to the requested version."""

    def __init__(self, call: Any, definition: dict[str, Any], desired: str, storage: Any = None):
        self._call, self._definition, self._desired, self._storage = call, definition, desired, storage

    def __aiter__(self) -> _ConvertingWatch:
        self._stream = self._call.__aiter__()
        return self

    async def __anext__(self) -> Any:
        batch = await self._stream.__anext__()
        events = [e for e in batch.events if e.object and e.type != "BOOKMARK"]
        if events:
            converted = await convert(self._definition, [e.object for e in events], self._desired, self._storage)
            for event, obj in zip(events, converted, strict=True):
                event.object = obj
        return batch

    def cancel(self) -> bool:
        return bool(self._call.cancel())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._call, name)


class ConvertingStorage:
    """The storage stub as one request through ``resource`` sees it (see the module doc).

    Unary methods take and return the storage protos like the stub's
    (``await Get(request, timeout=..., metadata=...)``); ``Watch`` returns
    a call object that iterates converted batches and can be cancelled.
    """

    def __init__(self, storage: Any, definition: dict[str, Any], resource: Resource):
        self._storage = storage
        self._definition = definition
        self._desired = resource.group_version
        self._stored = "v1" if definition is EVENTS_V1 else autoscaling.V2 if definition is AUTOSCALING \
            else storage_group_version(definition)

    async def _out(self, reply: Any) -> Any:
        if reply.object:
            reply.object = (await convert(self._definition, [reply.object], self._desired, self._storage))[0]
        return reply

    async def _in(self, request: Any) -> Any:
        if request.object:
            request.object = (await convert(self._definition, [request.object], self._stored, self._storage))[0]
        return request

    async def Create(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802 - the stub's name
        """Create with the object at the storage version; the reply at the requested version."""
        return await self._out(await self._storage.Create(await self._in(request), **kwargs))

    async def Update(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """Update with the object at the storage version; the reply at the requested version."""
        return await self._out(await self._storage.Update(await self._in(request), **kwargs))

    async def Get(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """Get, the object at the requested version."""
        return await self._out(await self._storage.Get(request, **kwargs))

    async def Delete(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """Delete, the last state at the requested version."""
        return await self._out(await self._storage.Delete(request, **kwargs))

    async def List(self, request: Any, **kwargs: Any) -> Any:  # noqa: N802
        """List, every item at the requested version."""
        reply = await self._storage.List(request, **kwargs)
        if reply.items:
            converted = await convert(self._definition, list(reply.items), self._desired, self._storage)
            del reply.items[:]
            reply.items.extend(converted)
        return reply

    def Watch(self, request: Any, **kwargs: Any) -> _ConvertingWatch:  # noqa: N802
        """Watch, every event's object at the requested version."""
        return _ConvertingWatch(self._storage.Watch(request, **kwargs), self._definition, self._desired, self._storage)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)


# events.k8s.io/v1 Events are stored as core/v1 Events (kapi.events renames the fields both ways).
EVENTS_V1: dict[str, Any] = {"metadata": {"name": "events.events.k8s.io"}, "spec": {
    "group": "events.k8s.io", "versions": [{"name": "v1", "served": True, "storage": False}]}}


# HorizontalPodAutoscalers are stored at autoscaling/v2; autoscaling/v1 requests convert (kapi.kinds.autoscaling).
AUTOSCALING: dict[str, Any] = {"metadata": {"name": "horizontalpodautoscalers.autoscaling"}, "spec": {
    "group": "autoscaling", "versions": [{"name": "v2", "served": True, "storage": True},
                                         {"name": "v1", "served": True, "storage": False}]}}


def backends_for(backends: Any, resource: Resource) -> Any:
    """``backends`` for one request through ``resource``: with a :class:`ConvertingStorage` when its CRD needs one.

    A custom resource whose served version's schema has ``default``s also reads back defaulted
    (:mod:`services.gateway.crddefaults`, wrapped around the conversion).

    events.k8s.io/v1 events always convert to and from the stored core/v1 form;
    autoscaling/v1 HorizontalPodAutoscalers to and from the stored autoscaling/v2 form.
    """
    if (resource.group, resource.resource) == ("events.k8s.io", "events"):
        return dataclasses.replace(backends, storage=ConvertingStorage(backends.storage, EVENTS_V1, resource))
    if (resource.group, resource.version, resource.resource) == ("autoscaling", "v1", "horizontalpodautoscalers"):
        return dataclasses.replace(backends, storage=ConvertingStorage(backends.storage, AUTOSCALING, resource))
    custom = backends.custom_resources
    definition = custom.crd_of(resource) if custom is not None else None
    if definition is not None and needs_conversion(definition):
        stored = dataclasses.replace(resource, version=crd.storage_version(definition))
        raw = crddefaults.with_defaults(backends, definition, stored).storage  # storage version defaults first
        backends = dataclasses.replace(backends, storage=ConvertingStorage(raw, definition, resource))
    return crddefaults.with_defaults(backends, definition, resource)  # schema defaults on reads, after conversion
