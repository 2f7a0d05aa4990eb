"""The public gRPC API (kapi.api.v1.Resources) end to end: real grpc.aio clients through Envoy's port 6443.

Each call is the REST request it stands for run through the same handler
chain, so these tests hold the two front doors side by side: the same bytes
for the same object, the same Forbidden message for a user without RBAC
(one table over both doors), the same escalation refusal from the write path,
the same 410 Expired ERROR event for a compacted resourceVersion, and
every gRPC call counted in the gateways' metrics. Audit of gRPC calls:
tests/e2e/test_audit.py (the audited stack).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import re
import ssl
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from kapi.local.launcher import Stack
from kapi_proto.kapi.api.v1 import api_pb2, api_pb2_grpc
from tests.e2e.conftest import TOKENS, Kubectl, compact_etcd, wait_for

APPLY_CONFLICT = "Apply failed with 1 conflict"
ESCALATION = "is attempting to grant RBAC permissions not currently held"


# --- clients -------------------------------------------------------------------------------------------------


def channel(stack: Stack, *, admin: bool = False) -> grpc.aio.Channel:
    """A grpc.aio channel to Envoy's API port: TLS against the cluster CA, with the admin's client certificate
    when ``admin`` (Envoy forwards it to the gateway in x-forwarded-client-cert), else none (use a token)."""
    pki = stack.pki
    if admin:
        creds = grpc.ssl_channel_credentials(pki.ca_cert.read_bytes(), pki.admin_key.read_bytes(),
                                             pki.admin_cert.read_bytes())
    else:
        creds = grpc.ssl_channel_credentials(pki.ca_cert.read_bytes())
    return grpc.aio.secure_channel(stack.url.removeprefix("https://"), creds,
                                   options=[("grpc.ssl_target_name_override", "localhost")])


def bearer(user: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {TOKENS[user]}"),)


def status_of(err: grpc.aio.AioRpcError) -> dict[str, Any]:
    """The Kubernetes Status JSON from the call's grpc-status-details-bin (google.rpc.Status -> StatusDetail)."""
    rich = rpc_status.from_call(err)
    assert rich is not None, f"no grpc-status-details-bin on {err.code()}: {err.details()}"
    assert rich.code == err.code().value[0] and rich.message == err.details()
    detail = api_pb2.StatusDetail()
    assert len(rich.details) == 1 and rich.details[0].Unpack(detail), rich.details
    return json.loads(detail.status)


async def refused(call: Any) -> tuple[grpc.StatusCode, dict[str, Any]]:
    """Await ``call`` expecting a failure: (gRPC code, Status JSON)."""
    try:
        await call
    except grpc.aio.AioRpcError as err:
        return err.code(), status_of(err)
    raise AssertionError("the call succeeded")


def rest(stack: Stack, method: str, path: str, body: Any = None, *, user: str = "",
         content_type: str = "application/json") -> tuple[int, bytes]:
    """One HTTPS request through Envoy as ``user`` (a token) or the admin (client certificate)."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    headers = {"Accept": "application/json", "Content-Type": content_type}
    if user:
        headers["Authorization"] = f"Bearer {TOKENS[user]}"
    else:
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    host, port = stack.url.removeprefix("https://").rsplit(":", 1)
    conn = http.client.HTTPSConnection(host, int(port), context=context, timeout=30)
    try:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers=headers)
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def cm_ref(namespace: str, name: str = "") -> api_pb2.ResourceRef:
    return api_pb2.ResourceRef(version="v1", resource="configmaps", namespace=namespace, name=name)


def configmap(namespace: str, name: str, data: dict[str, str], **labels: str) -> bytes:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "data": data,
                       "metadata": {"name": name, "namespace": namespace, "labels": labels}}).encode()


def names(response: api_pb2.Response) -> list[str]:
    return [item["metadata"]["name"] for item in json.loads(response.object)["items"]]


def bind(kubectl: Kubectl, namespace: str, user: str, clusterrole: str = "edit") -> None:
    kubectl.run("-n", namespace, "create", "rolebinding", f"{user}-{clusterrole}", f"--clusterrole={clusterrole}",
                f"--user={user}")


async def until_allowed(call: Any) -> Any:
    """Retry ``call()`` while it is PERMISSION_DENIED (a new RoleBinding reaches authz within a moment)."""
    for _ in range(75):
        try:
            return await call()
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.PERMISSION_DENIED:
                raise
        await asyncio.sleep(0.2)
    return await call()


# --- every verb ----------------------------------------------------------------------------------------------


async def test_every_verb_as_an_ordinary_user(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    bind(kubectl, namespace, "alice")
    md = bearer("alice")
    async with channel(stack) as ch:
        api = api_pb2_grpc.ResourcesStub(ch)
        created = await until_allowed(lambda: api.Create(api_pb2.CreateRequest(
            ref=cm_ref(namespace), object=configmap(namespace, "app", {"a": "1"}, tier="web")), metadata=md))
        assert created.code == 201
        app = json.loads(created.object)
        assert app["metadata"]["name"] == "app" and app["data"] == {"a": "1"}
        await api.Create(api_pb2.CreateRequest(ref=cm_ref(namespace), object=configmap(namespace, "db", {},
                                                                                        tier="db")), metadata=md)

        # GET: the exact bytes REST answers for the same object
        got = await api.Get(api_pb2.GetRequest(ref=cm_ref(namespace, "app")), metadata=md)
        status, body = rest(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps/app", user="alice")
        assert (got.code, status) == (200, 200) and got.object == body

        # LIST: selectors, pagination, resourceVersion semantics (and REST's refusal of a bad combination)
        listed = await api.List(api_pb2.ListRequest(ref=cm_ref(namespace), label_selector="tier=web"), metadata=md)
        assert names(listed) == ["app"]
        by_field = await api.List(api_pb2.ListRequest(ref=cm_ref(namespace), field_selector="metadata.name=db"),
                                  metadata=md)
        assert names(by_field) == ["db"]
        first = await api.List(api_pb2.ListRequest(ref=cm_ref(namespace), label_selector="tier", limit=1),
                               metadata=md)
        token = json.loads(first.object)["metadata"]["continue"]
        second = await api.List(api_pb2.ListRequest(ref=cm_ref(namespace), label_selector="tier", limit=1,
                                                    **{"continue": token}), metadata=md)
        assert sorted(names(first) + names(second)) == ["app", "db"]
        list_rv = json.loads(listed.object)["metadata"]["resourceVersion"]
        pinned = await api.List(api_pb2.ListRequest(ref=cm_ref(namespace), resource_version=list_rv,
                                                    label_selector="tier", resource_version_match="NotOlderThan"),
                                metadata=md)
        assert sorted(names(pinned)) == ["app", "db"]
        code, st = await refused(api.List(api_pb2.ListRequest(ref=cm_ref(namespace), resource_version_match="Exact"),
                                          metadata=md))
        status, body = rest(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?resourceVersionMatch=Exact",
                            user="alice")
        assert code == grpc.StatusCode.INVALID_ARGUMENT and st == json.loads(body) and st["code"] == status

        # UPDATE, and a stale resourceVersion: 409 Conflict (ABORTED)
        app["data"] = {"a": "2"}
        updated = await api.Update(api_pb2.UpdateRequest(ref=cm_ref(namespace, "app"),
                                                         object=json.dumps(app).encode()), metadata=md)
        assert updated.code == 200 and json.loads(updated.object)["data"] == {"a": "2"}
        code, st = await refused(api.Update(api_pb2.UpdateRequest(ref=cm_ref(namespace, "app"),
                                                                  object=json.dumps(app).encode()), metadata=md))
        assert (code, st["reason"], st["code"]) == (grpc.StatusCode.ABORTED, "Conflict", 409)

        # PATCH: the four types, server-side apply with a conflict and force
        for patch_type, patch in ((api_pb2.MERGE_PATCH, {"data": {"m": "1"}}),
                                  (api_pb2.STRATEGIC_MERGE_PATCH, {"data": {"s": "1"}}),
                                  (api_pb2.JSON_PATCH, [{"op": "add", "path": "/data/j", "value": "1"}])):
            patched = await api.Patch(api_pb2.PatchRequest(ref=cm_ref(namespace, "app"), type=patch_type,
                                                           patch=json.dumps(patch).encode()), metadata=md)
            assert patched.code == 200
        assert json.loads(patched.object)["data"] == {"a": "2", "m": "1", "s": "1", "j": "1"}
        apply = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"},
                            "data": {"a": "applied"}}).encode()
        apply_ref = cm_ref(namespace, "app")
        code, st = await refused(api.Patch(api_pb2.PatchRequest(ref=apply_ref, patch=b"{}"), metadata=md))
        assert (code, st["code"]) == (grpc.StatusCode.INVALID_ARGUMENT, 400), st
        assert st["message"] == ("unknown patch type 0: the type must be one of JSON_PATCH, MERGE_PATCH, "
                                 "STRATEGIC_MERGE_PATCH, APPLY_PATCH")
        code, st = await refused(api.Patch(api_pb2.PatchRequest(
            ref=apply_ref, type=api_pb2.APPLY_PATCH, patch=apply,
            options=api_pb2.WriteOptions(field_manager="grpc-apply")), metadata=md))
        assert (code, st["reason"]) == (grpc.StatusCode.ABORTED, "Conflict") and APPLY_CONFLICT in st["message"]
        forced = await api.Patch(api_pb2.PatchRequest(ref=apply_ref, type=api_pb2.APPLY_PATCH, patch=apply,
                                                      force=True,
                                                      options=api_pb2.WriteOptions(field_manager="grpc-apply")),
                                 metadata=md)
        assert json.loads(forced.object)["data"]["a"] == "applied"
        managers = {m["manager"] for m in json.loads(forced.object)["metadata"]["managedFields"]}
        assert "grpc-apply" in managers

        # CREATE refusals: AlreadyExists, Invalid; a warning for an unknown field (fieldValidation=Warn)
        code, st = await refused(api.Create(api_pb2.CreateRequest(
            ref=cm_ref(namespace), object=configmap(namespace, "app", {})), metadata=md))
        assert (code, st["reason"], st["message"]) == (grpc.StatusCode.ALREADY_EXISTS, "AlreadyExists",
                                                        'configmaps "app" already exists')
        code, st = await refused(api.Create(api_pb2.CreateRequest(
            ref=cm_ref(namespace), object=configmap(namespace, "Bad_Name", {})), metadata=md))
        assert (code, st["reason"], st["code"]) == (grpc.StatusCode.INVALID_ARGUMENT, "Invalid", 422)
        warned = await api.Create(api_pb2.CreateRequest(
            ref=cm_ref(namespace), options=api_pb2.WriteOptions(field_validation="Warn", dry_run=["All"]),
            object=json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"},
                               "bogus": 1}).encode()), metadata=md)
        assert warned.code == 201 and warned.warnings == ['unknown field "bogus"']

        # DELETE: dry run keeps it, a wrong UID precondition is a Conflict, then it is gone
        ref = cm_ref(namespace, "app")
        await api.Delete(api_pb2.DeleteRequest(ref=ref, options=api_pb2.DeleteOptions(dry_run=["All"])), metadata=md)
        await api.Get(api_pb2.GetRequest(ref=ref), metadata=md)
        code, st = await refused(api.Delete(api_pb2.DeleteRequest(ref=ref, options=api_pb2.DeleteOptions(
            preconditions=api_pb2.Preconditions(uid="not-the-uid"))), metadata=md))
        assert (code, st["reason"]) == (grpc.StatusCode.ABORTED, "Conflict")
        assert "does not match the UID in record" in st["message"]  # rest.BeforeDelete's check
        deleted = await api.Delete(api_pb2.DeleteRequest(ref=ref, options=api_pb2.DeleteOptions(
            grace_period_seconds=0, propagation_policy="Background",
            preconditions=api_pb2.Preconditions(uid=app["metadata"]["uid"]))), metadata=md)
        assert deleted.code == 200
        code, st = await refused(api.Get(api_pb2.GetRequest(ref=ref), metadata=md))
        assert (code, st["message"]) == (grpc.StatusCode.NOT_FOUND, 'configmaps "app" not found')


async def test_unauthenticated_and_impersonation(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    review = api_pb2.CreateRequest(ref=api_pb2.ResourceRef(group="authentication.k8s.io", version="v1",
                                                           resource="selfsubjectreviews"),
                                   object=b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}')

    def user_of(response: api_pb2.Response) -> dict[str, Any]:
        return json.loads(response.object)["status"]["userInfo"]

    async with channel(stack) as anonymous, channel(stack, admin=True) as admin:
        code, st = await refused(api_pb2_grpc.ResourcesStub(anonymous).List(
            api_pb2.ListRequest(ref=cm_ref(namespace)), metadata=(("authorization", "Bearer not-a-token"),)))
        assert (code, st["reason"], st["code"]) == (grpc.StatusCode.UNAUTHENTICATED, "Unauthorized", 401)
        alice = user_of(await api_pb2_grpc.ResourcesStub(anonymous).Create(review, metadata=bearer("alice")))
        assert alice["username"] == "alice" and "alice-group" in alice["groups"]
        # the admin's client certificate, verified by Envoy and forwarded (x-forwarded-client-cert)
        me = user_of(await api_pb2_grpc.ResourcesStub(admin).Create(review))
        assert me["username"] == "kubernetes-admin" and "system:masters" in me["groups"]
        acting = user_of(await api_pb2_grpc.ResourcesStub(admin).Create(review, metadata=(
            ("impersonate-user", "someone"), ("impersonate-group", "g1"), ("impersonate-group", "g2"))))
        assert acting["username"] == "someone" and {"g1", "g2"} <= set(acting["groups"])


async def test_client_x_forwarded_client_cert_is_ignored_without_the_front_proxy_identity(stack: Stack) -> None:
    """A client that reaches a gateway's gRPC port itself (admin certificate, not the front proxy's) and sends its
    own x-forwarded-client-cert is itself, as over HTTPS: the header counts only from Envoy."""
    pki = stack.pki
    creds = grpc.ssl_channel_credentials(pki.ca_cert.read_bytes(), pki.admin_key.read_bytes(),
                                         pki.admin_cert.read_bytes())
    forged = 'Hash=00;Cert="' + quote(pki.front_proxy_cert.read_text(), safe="") + '";Subject="CN=forged"'
    review = api_pb2.CreateRequest(ref=api_pb2.ResourceRef(group="authentication.k8s.io", version="v1",
                                                           resource="selfsubjectreviews"),
                                   object=b'{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}')
    address = next(iter(stack.grpc_addresses.values()))
    async with grpc.aio.secure_channel(address, creds, options=[("grpc.ssl_target_name_override", "gateway")]) as ch:
        reply = await api_pb2_grpc.ResourcesStub(ch).Create(review, metadata=(("x-forwarded-client-cert", forged),))
    assert json.loads(reply.object)["status"]["userInfo"]["username"] == "kubernetes-admin"


# --- watch ---------------------------------------------------------------------------------------------------


async def _events(call: Any, count: int, timeout: float = 20) -> list[api_pb2.WatchEvent]:
    out: list[api_pb2.WatchEvent] = []

    async def read() -> None:
        async for event in call:
            out.append(event)
            if len(out) == count:
                return

    await asyncio.wait_for(read(), timeout)
    return out


def _summary(events: list[api_pb2.WatchEvent]) -> list[tuple[str, str]]:
    return [(e.type, json.loads(e.object)["metadata"].get("name", "")) for e in events]


async def test_watch_streams_resumes_and_bookmarks(stack: Stack, namespace: str) -> None:
    async with channel(stack, admin=True) as ch:
        api = api_pb2_grpc.ResourcesStub(ch)
        first = json.loads((await api.Create(api_pb2.CreateRequest(
            ref=cm_ref(namespace), object=configmap(namespace, "w1", {"v": "1"}, watch="t")))).object)
        start = first["metadata"]["resourceVersion"]
        # (a label selector: the controllers publish kube-root-ca.crt in a new namespace at their own time)
        call = api.Watch(api_pb2.WatchRequest(ref=cm_ref(namespace), resource_version=start, label_selector="watch",
                                              timeout_seconds=30))
        await api.Patch(api_pb2.PatchRequest(ref=cm_ref(namespace, "w1"), type=api_pb2.MERGE_PATCH,
                                             patch=b'{"data":{"v":"2"}}'))
        await api.Create(api_pb2.CreateRequest(ref=cm_ref(namespace), object=configmap(namespace, "w2", {},
                                                                                        watch="t")))
        await api.Delete(api_pb2.DeleteRequest(ref=cm_ref(namespace, "w2")))
        events = await _events(call, 3)
        call.cancel()
        assert _summary(events) == [("MODIFIED", "w1"), ("ADDED", "w2"), ("DELETED", "w2")]
        assert json.loads(events[0].object)["data"] == {"v": "2"}

        # resume from the first event's resourceVersion: exactly the changes after it
        after = json.loads(events[0].object)["metadata"]["resourceVersion"]
        resumed = api.Watch(api_pb2.WatchRequest(ref=cm_ref(namespace), resource_version=after, label_selector="watch",
                                                 timeout_seconds=30))
        assert _summary(await _events(resumed, 2)) == [("ADDED", "w2"), ("DELETED", "w2")]
        resumed.cancel()

        # one object by name, the current state first, then the bookmark that ends the initial events
        initial = api.Watch(api_pb2.WatchRequest(ref=cm_ref(namespace, "w1"), send_initial_events=True,
                                                 allow_watch_bookmarks=True, resource_version_match="NotOlderThan",
                                                 timeout_seconds=30))
        added, bookmark = await _events(initial, 2)
        initial.cancel()
        assert _summary([added]) == [("ADDED", "w1")] and bookmark.type == "BOOKMARK"
        annotations = json.loads(bookmark.object)["metadata"]["annotations"]
        assert annotations == {"k8s.io/initial-events-end": "true"}

        # timeout_seconds ends the watch cleanly (status OK), as REST's timeoutSeconds
        short = api.Watch(api_pb2.WatchRequest(ref=cm_ref(namespace, "w1"), timeout_seconds=1))
        assert _summary([e async for e in short]) == [("ADDED", "w1")]
        assert await short.code() == grpc.StatusCode.OK


async def test_watch_from_compacted_resource_version_is_410_expired_on_both_doors(stack: Stack,
                                                                                  namespace: str) -> None:
    """etcd compacted (as test_fault_recovery compacts it, through etcd's HTTP API): a watch from a revision
    before the compaction gets kube's ERROR event carrying 410 Expired, the same Status as REST, and ends OK."""
    compact_etcd(stack, b"/kapi-test/grpc-compaction")

    status, body = rest(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps?watch=1&resourceVersion=1"
                                      "&timeoutSeconds=5")
    assert status == 200
    line = json.loads(body.splitlines()[0])
    assert line["type"] == "ERROR"
    async with channel(stack, admin=True) as ch:
        call = api_pb2_grpc.ResourcesStub(ch).Watch(api_pb2.WatchRequest(ref=cm_ref(namespace), resource_version="1",
                                                                         timeout_seconds=5))
        events = [e async for e in call]
        assert await call.code() == grpc.StatusCode.OK
    assert [e.type for e in events] == ["ERROR"]
    expired = json.loads(events[0].object)
    # the compacted revision in brackets is etcd's at each watch's start: the storage compactor may move it between
    rest_object = line["object"]
    for status_object in (expired, rest_object):
        assert re.fullmatch(r"too old resource version: 1 \(\d+\)", status_object.pop("message")), status_object
    assert expired == rest_object
    assert (expired["code"], expired["reason"]) == (410, "Expired")


# --- one table over both front doors: the Forbidden message ---------------------------------------------------

# (verb, group, resource, name, namespaced): bob holds no RBAC at all
FORBIDDEN = [
    ("list", "", "configmaps", "", True),
    ("get", "", "configmaps", "app", True),
    ("create", "", "configmaps", "", True),
    ("delete", "", "secrets", "s1", True),
    ("patch", "apps", "deployments", "web", True),
    ("update", "", "configmaps", "app", True),
    ("watch", "", "configmaps", "", True),
    ("list", "", "namespaces", "", False),
]


def kube_forbidden(user: str, verb: str, group: str, resource: str, name: str, namespace: str) -> str:
    """kube's Forbidden message (NewForbidden + the RBAC authorizer's reason-less denial)."""
    subject = f'{resource}.{group}' if group else resource
    subject = f'{subject} "{name}"' if name else subject
    scope = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return f'{subject} is forbidden: User "{user}" cannot {verb} resource "{resource}" in API group "{group}" {scope}'


def _rest_request(verb: str, path: str, name: str) -> tuple[str, str, Any, str]:
    """(method, path, body, content type) of ``verb`` as REST."""
    item = f"{path}/{name}" if name else path
    if verb in ("list", "get"):
        return "GET", item, None, "application/json"
    if verb == "watch":
        return "GET", f"{path}?watch=1", None, "application/json"
    if verb == "create":
        return "POST", path, {"metadata": {"name": "x"}}, "application/json"
    if verb == "update":
        return "PUT", item, {"metadata": {"name": name}}, "application/json"
    if verb == "patch":
        return "PATCH", item, {"metadata": {"labels": {"a": "b"}}}, "application/merge-patch+json"
    return "DELETE", item, None, "application/json"


async def _grpc_call(api: api_pb2_grpc.ResourcesStub, verb: str, ref: api_pb2.ResourceRef) -> Any:
    md = bearer("bob")
    if verb == "list":
        return api.List(api_pb2.ListRequest(ref=ref), metadata=md)
    if verb == "get":
        return api.Get(api_pb2.GetRequest(ref=ref), metadata=md)
    if verb == "create":
        return api.Create(api_pb2.CreateRequest(ref=ref, object=b'{"metadata":{"name":"x"}}'), metadata=md)
    if verb == "update":
        return api.Update(api_pb2.UpdateRequest(ref=ref, object=json.dumps({"metadata": {"name": ref.name}})
                                                .encode()), metadata=md)
    if verb == "patch":
        return api.Patch(api_pb2.PatchRequest(ref=ref, type=api_pb2.MERGE_PATCH,
                                              patch=b'{"metadata":{"labels":{"a":"b"}}}'), metadata=md)
    if verb == "watch":
        async def first() -> Any:
            async for event in api.Watch(api_pb2.WatchRequest(ref=ref), metadata=md):
                return event
        return first()
    return api.Delete(api_pb2.DeleteRequest(ref=ref), metadata=md)


@pytest.mark.parametrize("door", ["REST", "gRPC"])
@pytest.mark.parametrize(("verb", "group", "resource", "name", "namespaced"), FORBIDDEN,
                         ids=[f"{r[0]}-{r[2]}" for r in FORBIDDEN])
async def test_forbidden_message_is_kubes_on_both_doors(stack: Stack, door: str, verb: str, group: str,
                                                        resource: str, name: str, namespaced: bool) -> None:
    namespace = "grpc-forbidden" if namespaced else ""
    want = kube_forbidden("bob", verb, group, resource, name, namespace)
    if door == "REST":
        base = f"/apis/{group}/v1" if group else "/api/v1"
        path = f"{base}/namespaces/{namespace}/{resource}" if namespaced else f"{base}/{resource}"
        method, path, body, content_type = _rest_request(verb, path, name)
        status, raw = rest(stack, method, path, body, user="bob", content_type=content_type)
        st = json.loads(raw)
        assert status == 403
    else:
        async with channel(stack) as ch:
            ref = api_pb2.ResourceRef(group=group, version="v1", resource=resource, namespace=namespace, name=name)
            code, st = await refused(await _grpc_call(api_pb2_grpc.ResourcesStub(ch), verb, ref))
        assert code == grpc.StatusCode.PERMISSION_DENIED
    assert (st["kind"], st["code"], st["reason"], st["message"]) == ("Status", 403, "Forbidden", want), st
    assert st["details"] == {**({"name": name} if name else {}), **({"group": group} if group else {}),
                             "kind": resource}, st


# --- the write path's guards on gRPC writes ------------------------------------------------------------------

SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}
BENIGN = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}


def _role(namespace: str, name: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace}, "rules": rules}


@pytest.fixture(scope="module")
def role_writer(stack: Stack, kubectl: Kubectl) -> str:
    """A namespace where bob may write Roles (and read ConfigMaps), but holds no rights on Secrets."""
    namespace = "grpc-escalation"
    kubectl.run("create", "namespace", namespace)
    kubectl.run("-n", namespace, "create", "role", "role-writer", "--verb=get,create,update,patch",
                "--resource=roles.rbac.authorization.k8s.io")
    kubectl.run("-n", namespace, "create", "role", "cm-reader", "--verb=get", "--resource=configmaps")
    kubectl.run("-n", namespace, "create", "rolebinding", "role-writer", "--role=role-writer", "--user=bob")
    kubectl.run("-n", namespace, "create", "rolebinding", "cm-reader", "--role=cm-reader", "--user=bob")
    wait_for(lambda: rest(stack, "GET", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/role-writer",
                          user="bob")[0] == 200)
    return namespace


# door -> how the escalating Role is written
ESCALATION_DOORS = ["REST POST", "gRPC Create", "gRPC Create dryRun", "gRPC Update", "gRPC Patch merge",
                    "gRPC Patch apply"]


@pytest.mark.parametrize("door", ESCALATION_DOORS)
async def test_rbac_escalation_is_refused_on_grpc_writes_as_on_rest(stack: Stack, role_writer: str,
                                                                    door: str) -> None:
    namespace = role_writer
    name = "esc-" + door.lower().replace(" ", "-")
    roles = api_pb2.ResourceRef(group="rbac.authorization.k8s.io", version="v1", resource="roles",
                                namespace=namespace)
    named = api_pb2.ResourceRef(group="rbac.authorization.k8s.io", version="v1", resource="roles",
                                namespace=namespace, name=name)
    md = bearer("bob")
    wanted = _role(namespace, name, [BENIGN, SECRETS])
    # The same refusal over REST, the reference
    status, raw = rest(stack, "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
                       _role(namespace, "esc-reference", [BENIGN, SECRETS]), user="bob")
    reference = json.loads(raw)
    assert status == 403 and ESCALATION in reference["message"], reference
    async with channel(stack) as ch:
        api = api_pb2_grpc.ResourcesStub(ch)
        if door == "REST POST":
            return
        if door.startswith("gRPC Create"):
            dry = ["All"] if door.endswith("dryRun") else []
            call = api.Create(api_pb2.CreateRequest(ref=roles, object=json.dumps(wanted).encode(),
                                                    options=api_pb2.WriteOptions(dry_run=dry)), metadata=md)
        else:
            await api.Create(api_pb2.CreateRequest(ref=roles, object=json.dumps(_role(namespace, name, [BENIGN]))
                                                   .encode()), metadata=md)
            if door == "gRPC Update":
                current = json.loads((await api.Get(api_pb2.GetRequest(ref=named), metadata=md)).object)
                current["rules"] = wanted["rules"]
                call = api.Update(api_pb2.UpdateRequest(ref=named, object=json.dumps(current).encode()), metadata=md)
            elif door == "gRPC Patch merge":
                call = api.Patch(api_pb2.PatchRequest(ref=named, type=api_pb2.MERGE_PATCH,
                                                      patch=json.dumps({"rules": wanted["rules"]}).encode()),
                                 metadata=md)
            else:
                call = api.Patch(api_pb2.PatchRequest(ref=named, type=api_pb2.APPLY_PATCH, force=True,
                                                      patch=json.dumps(wanted).encode(),
                                                      options=api_pb2.WriteOptions(field_manager="esc")), metadata=md)
        code, st = await refused(call)
        assert code == grpc.StatusCode.PERMISSION_DENIED
        assert st["message"] == reference["message"].replace('"esc-reference"', f'"{name}"'), (st, reference)
        # nothing escalated was stored
        try:
            stored = json.loads((await api.Get(api_pb2.GetRequest(ref=named), metadata=md)).object)
            assert stored["rules"] == [BENIGN]
        except grpc.aio.AioRpcError as err:
            assert err.code() == grpc.StatusCode.NOT_FOUND and door.startswith("gRPC Create")


# --- metrics and reflection ------------------------------------------------------------------------------------


def _gateway_metric(stack: Stack, wanted: list[str]) -> float:
    """The sum over every gateway (read directly, not through Envoy) of the apiserver_request_total lines with
    every item of ``wanted``."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    context.check_hostname = False
    context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    total = 0.0
    for name, address in stack.addresses.items():
        if not name.startswith("gateway-"):
            continue
        with urllib.request.urlopen(f"https://{address}/metrics", context=context, timeout=10) as reply:
            for line in reply.read().decode().splitlines():
                if line.startswith("apiserver_request_total{") and all(w in line for w in wanted):
                    total += float(line.rsplit(" ", 1)[1])
    return total


async def test_grpc_calls_are_counted_in_the_gateway_metrics(stack: Stack, namespace: str) -> None:
    wanted = ['verb="POST"', 'resource="podtemplates"', 'code="201"']
    before = _gateway_metric(stack, wanted)
    template = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
                "template": {"spec": {"containers": [{"name": "c", "image": "busybox"}]}}}
    async with channel(stack, admin=True) as ch:
        for i in range(3):
            template["metadata"]["name"] = f"t{i}"
            reply = await api_pb2_grpc.ResourcesStub(ch).Create(api_pb2.CreateRequest(
                ref=api_pb2.ResourceRef(version="v1", resource="podtemplates", namespace=namespace),
                object=json.dumps(template).encode()))
            assert reply.code == 201
    assert _gateway_metric(stack, wanted) - before == 3


async def test_reflection_lists_the_api_through_envoy(stack: Stack) -> None:
    async with channel(stack) as ch:
        stub = reflection_pb2_grpc.ServerReflectionStub(ch)

        async def ask() -> AsyncIterator[reflection_pb2.ServerReflectionRequest]:
            yield reflection_pb2.ServerReflectionRequest(list_services="")

        async for reply in stub.ServerReflectionInfo(ask()):
            listed = {s.name for s in reply.list_services_response.service}
            break
    assert "kapi.api.v1.Resources" in listed and "grpc.health.v1.Health" in listed


# --- the documented example client (examples/grpc-client/client.py) -------------------------------------------

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "grpc-client" / "client.py"


def _example(stack: Stack, user: str, *args: str) -> tuple[int, list[dict[str, Any]]]:
    proc = subprocess.run([sys.executable, str(EXAMPLE), "--server", stack.url.removeprefix("https://"),
                           "--ca-file", str(stack.pki.ca_cert), "--token", TOKENS[user], *args],
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()]


def test_example_client_lists_creates_and_watches(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    bind(kubectl, namespace, "alice")
    wait_for(lambda: rest(stack, "GET", f"/api/v1/namespaces/{namespace}/configmaps", user="alice")[0] == 200)
    code, lines = _example(stack, "alice", "--namespace", namespace, "--create", "hello", "--watch-seconds", "2")
    assert code == 0, lines
    # (the controllers may have published kube-root-ca.crt in the new namespace already)
    assert set(lines[0]["list"]) <= {"kube-root-ca.crt"} and lines[1]["created"] == "hello"
    assert lines[1]["code"] == 201
    assert {"event": "ADDED", "name": "hello", "resourceVersion": lines[1]["resourceVersion"]} in lines[2:]
    # bob holds no RBAC: the example prints the gRPC code and kube's Forbidden Status
    code, lines = _example(stack, "bob", "--namespace", namespace)
    assert code == 1 and lines[0]["grpc"] == "PERMISSION_DENIED"
    assert lines[0]["status"]["message"] == kube_forbidden("bob", "list", "", "configmaps", "", namespace)


async def test_an_unnamed_delete_is_refused_and_deletes_nothing(stack: Stack, namespace: str) -> None:
    """Delete (and Get/Update/Patch) take one object: without ref.name it is INVALID_ARGUMENT with a 400 Status,
    never the collection's deletecollection (REST only); List and Create refuse a name they would ignore."""
    async with channel(stack, admin=True) as chan:
        api = api_pb2_grpc.ResourcesStub(chan)
        for name in ("a", "b"):
            await api.Create(api_pb2.CreateRequest(ref=cm_ref(namespace), object=configmap(namespace, name, {})))
        code, st = await refused(api.Delete(api_pb2.DeleteRequest(ref=cm_ref(namespace))))
        assert (code, st["code"], st["reason"], st["message"]) == (
            grpc.StatusCode.INVALID_ARGUMENT, 400, "BadRequest", "ref.name is required")
        code, st = await refused(api.Get(api_pb2.GetRequest(ref=cm_ref(namespace))))
        assert (code, st["message"]) == (grpc.StatusCode.INVALID_ARGUMENT, "ref.name is required")
        code, _ = await refused(api.List(api_pb2.ListRequest(ref=cm_ref(namespace, "a"))))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        code, _ = await refused(api.Create(api_pb2.CreateRequest(ref=cm_ref(namespace, "a"),
                                                                 object=configmap(namespace, "c", {}))))
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        listed = await api.List(api_pb2.ListRequest(ref=cm_ref(namespace), label_selector=""))
        assert {"a", "b"} <= set(names(listed)) and "c" not in names(listed)  # nothing deleted, nothing created
