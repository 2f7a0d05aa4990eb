"""services/gateway/conversion.py: strategy None, Webhook (ConversionReview v1/v1beta1), the converting storage stub."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from kapi import errors, jsonutil
from kapi.resources import ALL_VERBS, Resource
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import conversion
from tests.conftest import free_port

G = "example.com"


def definition(strategy: str = "None", url: str = "", review_versions: tuple[str, ...] = ("v1",)) -> dict[str, Any]:
    conv: dict[str, Any] = {"strategy": strategy}
    if url:
        conv["webhook"] = {"clientConfig": {"url": url}, "conversionReviewVersions": list(review_versions)}
    return {"metadata": {"name": f"widgets.{G}"},
            "spec": {"group": G, "names": {"plural": "widgets", "kind": "Widget"}, "conversion": conv,
                     "versions": [{"name": "v1", "served": True, "storage": True},
                                  {"name": "v2", "served": True, "storage": False}]}}


def obj(version: str, name: str = "a", **spec: Any) -> bytes:
    return jsonutil.dumps({"apiVersion": f"{G}/{version}", "kind": "Widget",
                           "metadata": {"name": name, "uid": f"uid-{name}"}, "spec": spec})


@pytest.mark.parametrize(("definition_", "needed"), [
    (None, False),
    (definition(), True),
    ({"spec": {"versions": [{"name": "v1", "storage": True}]}}, False),
    ({"spec": {"versions": [{"name": "v1", "storage": True}], "conversion": {"strategy": "Webhook"}}}, True),
])
def test_needs_conversion(definition_: dict[str, Any] | None, needed: bool) -> None:
    assert conversion.needs_conversion(definition_) is needed


async def test_strategy_none_rewrites_only_api_version() -> None:
    out = await conversion.convert(definition(), [obj("v1", size=1), obj("v2", "b")], f"{G}/v2")
    assert [jsonutil.loads(o) for o in out] == [jsonutil.loads(obj("v2", size=1)), jsonutil.loads(obj("v2", "b"))]


@pytest.fixture
async def webhook() -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """A conversion webhook on 127.0.0.1 that renames spec.size <-> spec.count between v1 and v2."""
    seen: list[dict[str, Any]] = []

    async def convert(request: web.Request) -> web.Response:
        review = await request.json()
        seen.append(review)
        req = review["request"]
        if req["desiredAPIVersion"].endswith("/v3"):
            return web.json_response({"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": {
                "uid": req["uid"], "result": {"status": "Failure", "message": "v3 is unknown"}}})
        out = []
        for o in req["objects"]:
            spec = o["spec"]
            if req["desiredAPIVersion"].endswith("/v2"):
                spec = {"count": spec.get("size")}
            else:
                spec = {"size": spec.get("count")}
            out.append({**o, "apiVersion": req["desiredAPIVersion"], "spec": spec})
        if request.path == "/sloppy":  # no apiVersion, kind or uid: what old v1beta1 webhooks answer
            return web.json_response({"response": {"convertedObjects": out, "result": {"status": "Success"}}})
        return web.json_response({"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": {
            "uid": req["uid"], "convertedObjects": out, "result": {"status": "Success"}}})

    app = web.Application()
    app.router.add_post("/convert", convert)
    app.router.add_post("/sloppy", convert)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield f"http://127.0.0.1:{port}/convert", seen
    await runner.cleanup()


async def test_webhook_converts_only_objects_at_another_version(webhook: tuple[str, list[dict[str, Any]]]) -> None:
    url, seen = webhook
    out = await conversion.convert(definition("Webhook", url), [obj("v1", size=2), obj("v2", "b", count=5)],
                                   f"{G}/v2")
    assert jsonutil.loads(out[0])["spec"] == {"count": 2} and jsonutil.loads(out[0])["apiVersion"] == f"{G}/v2"
    assert out[1] == obj("v2", "b", count=5)
    assert len(seen) == 1 and seen[0]["kind"] == "ConversionReview" and seen[0]["apiVersion"] == \
        "apiextensions.k8s.io/v1" and len(seen[0]["request"]["objects"]) == 1


@pytest.mark.parametrize(("desired", "url_suffix", "message"), [
    ("v3", "/convert", f"conversion webhook for {G}/v1, Kind=Widget failed: v3 is unknown"),
    ("v2", "/missing", f"conversion webhook for {G}/v1, Kind=Widget failed: Post "),
])
async def test_webhook_failure_is_500_naming_the_webhook(webhook: tuple[str, list[dict[str, Any]]], desired: str,
                                                          url_suffix: str, message: str) -> None:
    url = webhook[0].replace("/convert", url_suffix)
    with pytest.raises(errors.StatusError) as caught:
        await conversion.convert(definition("Webhook", url), [obj("v1", size=2)], f"{G}/{desired}")
    assert caught.value.code == 500 and caught.value.reason == "InternalError"
    assert message in caught.value.message


@pytest.mark.parametrize(("accepted", "sent"), [
    (("v1",), "v1"), (("v1beta1", "v1"), "v1beta1"), (("v2", "v1beta1", "v1"), "v1beta1"),
])
async def test_review_version_is_the_first_the_crd_accepts_that_kapi_speaks(
        webhook: tuple[str, list[dict[str, Any]]], accepted: tuple[str, ...], sent: str) -> None:
    url, seen = webhook
    out = await conversion.convert(definition("Webhook", url, accepted), [obj("v1", size=2)], f"{G}/v2")
    assert jsonutil.loads(out[0])["spec"] == {"count": 2}
    assert seen[-1]["apiVersion"] == f"apiextensions.k8s.io/{sent}"


async def test_v1beta1_answers_need_no_kind_or_uid_but_v1_answers_do(webhook: tuple[str, list[dict[str, Any]]]
                                                                      ) -> None:
    url = webhook[0].replace("/convert", "/sloppy")
    out = await conversion.convert(definition("Webhook", url, ("v1beta1",)), [obj("v1", size=2)], f"{G}/v2")
    assert jsonutil.loads(out[0])["spec"] == {"count": 2}
    with pytest.raises(errors.StatusError) as caught:
        await conversion.convert(definition("Webhook", url, ("v1",)), [obj("v1", size=2)], f"{G}/v2")
    assert caught.value.message.endswith(f"conversion webhook for {G}/v1, Kind=Widget failed: expected webhook "
                                         "response of apiextensions.k8s.io/v1, Kind=ConversionReview, got , Kind=")
    with pytest.raises(errors.StatusError) as caught:
        await conversion.convert(definition("Webhook", url, ("v2",)), [obj("v1", size=2)], f"{G}/v2")
    assert caught.value.code == 500 and caught.value.message.endswith("no supported conversion review versions")


class FakeStorage:
    """Records the objects written; answers with what was written (a storage stand-in, not etcd)."""

    def __init__(self) -> None:
        self.written: list[bytes] = []

    async def Create(self, request: Any, **_: Any) -> Any:  # noqa: N802
        self.written.append(request.object)
        return storage_pb2.ObjectResponse(object=request.object, resource_version=1)

    async def List(self, request: Any, **_: Any) -> Any:  # noqa: N802
        return storage_pb2.ListResponse(items=self.written)

    def Watch(self, request: Any, **_: Any) -> Any:  # noqa: N802
        written = self.written

        class Call:
            async def __aiter__(self) -> AsyncIterator[Any]:
                yield storage_pb2.WatchResponse(events=[storage_pb2.WatchEvent(type="ADDED", object=o)
                                                        for o in written] + [storage_pb2.WatchEvent(type="BOOKMARK")])

            def cancel(self) -> bool:
                return True
        return Call()


async def test_converting_storage_writes_storage_version_and_reads_requested() -> None:
    fake = FakeStorage()
    v2 = Resource(G, "v2", "widgets", "Widget", True, (), (), ALL_VERBS, ())
    storage = conversion.ConvertingStorage(fake, definition(), v2)
    reply = await storage.Create(storage_pb2.CreateRequest(object=obj("v2", size=1)))
    assert jsonutil.loads(fake.written[0])["apiVersion"] == f"{G}/v1"
    assert jsonutil.loads(reply.object)["apiVersion"] == f"{G}/v2"
    listed = await storage.List(storage_pb2.ListRequest())
    assert [jsonutil.loads(i)["apiVersion"] for i in listed.items] == [f"{G}/v2"]
    call = storage.Watch(storage_pb2.WatchRequest())
    batch = await call.__aiter__().__anext__()
    assert [jsonutil.loads(e.object)["apiVersion"] for e in batch.events if e.object] == [f"{G}/v2"]
    assert call.cancel()


class ServiceStorage:
    """Answers Get for one Service and its Endpoints (a storage stand-in, not etcd)."""

    def __init__(self, port: int):
        self.objects = {
            "services": {"metadata": {"name": "conv", "namespace": "default"},
                         "spec": {"ports": [{"name": "https", "port": 443, "targetPort": port}]}},
            "endpoints": {"metadata": {"name": "conv", "namespace": "default"},
                          "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                                       "ports": [{"name": "https", "port": port}]}]},
        }

    async def Get(self, request: Any, **_: Any) -> Any:  # noqa: N802
        found = self.objects.get(request.key.resource)
        if found is None or request.key.name != "conv":
            raise errors.not_found(request.key.resource, request.key.name)
        return storage_pb2.ObjectResponse(object=jsonutil.dumps(found), resource_version=1)


async def test_webhook_service_reference_is_resolved_through_endpoints(tmp_path: Any) -> None:
    import base64
    import ssl

    from kapi.local import pki

    keys = pki.ensure_pki(tmp_path, advertise=["conv.default.svc"], port=None)

    async def handle(request: web.Request) -> web.Response:
        review = await request.json()
        req = review["request"]
        out = [{**o, "apiVersion": req["desiredAPIVersion"]} for o in req["objects"]]
        return web.json_response({"apiVersion": review["apiVersion"], "kind": "ConversionReview", "response": {
            "uid": req["uid"], "convertedObjects": out, "result": {"status": "Success"}}})

    app = web.Application()
    app.router.add_post("/convert", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(keys.apiserver_cert), str(keys.apiserver_key))
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port, ssl_context=context).start()
    try:
        crd_ = definition("Webhook")
        crd_["spec"]["conversion"]["webhook"] = {"clientConfig": {
            "service": {"namespace": "default", "name": "conv", "path": "/convert", "port": 443},
            "caBundle": base64.b64encode(keys.ca_cert.read_bytes()).decode()}}
        out = await conversion.convert(crd_, [obj("v1", size=2)], f"{G}/v2", ServiceStorage(port))
        assert jsonutil.loads(out[0])["apiVersion"] == f"{G}/v2"
        missing = ServiceStorage(port)
        missing.objects.pop("endpoints")
        with pytest.raises(errors.StatusError) as caught:
            await conversion.convert(crd_, [obj("v1", size=2)], f"{G}/v2", missing)
        assert caught.value.code == 500
        assert caught.value.message.endswith('failed: endpoints for service "default/conv" not found')
    finally:
        await runner.cleanup()
