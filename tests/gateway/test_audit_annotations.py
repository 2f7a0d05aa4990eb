"""Audit annotations as kube-apiserver 1.37 writes them.

- WithAuthorization (k8s.io/apiserver ``pkg/endpoints/filters/authorization.go``): ``authorization.k8s.io/decision``
  ``allow``/``forbid`` and ``authorization.k8s.io/reason`` (the authorizer's reason; ``internal error`` alone when
  the authorizer failed);
- admission's (``AdmitResponse.audit_annotations``, and those of a refused request, which ride with the
  StatusError as its warnings do: the ``kapi-audit-annotations-bin`` trailer, CallError field 5);
- ``audit.AddAuditAnnotation``: the first value of a key wins; Go writes the map in key order.
"""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from kapi import errors, grpcmux
from kapi.attributes import Attributes, UserInfo
from services.admission.chain import AdmissionRequest, Chain
from services.admission.pipeline import Admitter
from services.gateway import audit
from services.gateway.apifilters.authorization import with_authorization
from services.gateway.auditpolicy import parse_policy
from services.gateway.context import CONTEXT, RequestContext
from services.gateway.requestinfo import resolve

ALICE = UserInfo("alice", groups=("system:authenticated",))
ALLOW_REASON = ('RBAC: allowed by ClusterRoleBinding "cluster-admin" of ClusterRole "cluster-admin" '
                'to Group "system:masters"')
POLICY = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy", "rules": [{"level": "Metadata"}]}


class Collect:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def process(self, events: list[dict[str, Any]]) -> None:
        self.events.extend(events)

    async def close(self) -> None:
        pass


class FakeAuthz:
    def __init__(self, answer: tuple[bool, str] | errors.StatusError) -> None:
        self.answer = answer

    async def authorize(self, attrs: Attributes, timeout: float = 0) -> tuple[bool, str]:
        if isinstance(self.answer, errors.StatusError):
            raise self.answer
        return self.answer


class FakeBackends:
    def __init__(self, authz: FakeAuthz) -> None:
        self.authz = authz


async def run(answer: tuple[bool, str] | errors.StatusError,
              annotate: dict[str, str] | None = None) -> tuple[int, list[dict[str, Any]]]:
    """One audited GET through with_authorization; the handler adds ``annotate`` (after authorization's)."""
    sink = Collect()
    auditor = audit.Auditor(parse_policy(POLICY), [sink])

    async def handler(request: web.Request) -> web.StreamResponse:
        for key, value in (annotate or {}).items():
            audit.annotate(request, key, value)
        return web.json_response({"kind": "ConfigMap"})

    authorized = with_authorization(handler, FakeBackends(FakeAuthz(answer)))  # type: ignore[arg-type]

    async def chain(request: web.Request) -> web.StreamResponse:
        request[audit.AUDIT_ID] = "id-1"
        info = resolve(request.method, request.path, request.query)
        attrs = Attributes(user=ALICE, verb=info.verb, resource_request=True, path=info.path,
                           api_version="v1", resource="configmaps", namespace="demo", name="c")
        request[CONTEXT] = RequestContext("id-1", timeout=5.0, attrs=attrs)
        audit.received(request, attrs)
        try:
            return await authorized(request)
        except errors.StatusError as err:
            return web.json_response(err.status(), status=err.code)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", audit.with_audit(chain, auditor))
    app.on_response_prepare.append(audit.on_response_prepare)
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        reply = await client.get("/api/v1/namespaces/demo/configmaps/c")
        status = reply.status
    finally:
        await client.close()
    return status, sink.events


async def test_allowed_request_carries_decision_and_rbac_reason() -> None:
    status, events = await run((True, ALLOW_REASON))
    assert status == 200
    assert [e["stage"] for e in events] == ["RequestReceived", "ResponseComplete"]
    assert "annotations" not in events[0]  # authorization runs after RequestReceived
    assert events[1]["annotations"] == {"authorization.k8s.io/decision": "allow",
                                        "authorization.k8s.io/reason": ALLOW_REASON}


async def test_forbidden_request_carries_forbid_and_empty_reason() -> None:
    status, events = await run((False, ""))
    assert status == 403
    assert events[-1]["annotations"] == {"authorization.k8s.io/decision": "forbid",
                                         "authorization.k8s.io/reason": ""}


async def test_authorizer_failure_carries_internal_error_reason_only() -> None:
    status, events = await run(errors.unavailable("The authorization service is unavailable: down"))
    assert status == 503
    assert events[-1]["annotations"] == {"authorization.k8s.io/reason": "internal error"}


async def test_annotations_in_key_order_first_value_wins() -> None:
    _, events = await run((True, ALLOW_REASON), {"pod-security.kubernetes.io/enforce-policy": "baseline:latest",
                                                 "authorization.k8s.io/decision": "forbid",
                                                 "a.example.com/first": "1"})
    annotations = events[-1]["annotations"]
    assert list(annotations) == ["a.example.com/first", "authorization.k8s.io/decision",
                                 "authorization.k8s.io/reason", "pod-security.kubernetes.io/enforce-policy"]
    assert annotations["authorization.k8s.io/decision"] == "allow"


async def test_annotate_without_auditing_is_a_no_op() -> None:
    from aiohttp.test_utils import make_mocked_request
    request = make_mocked_request("GET", "/api")
    audit.annotate(request, "k", "v")  # no audit context: nothing to do, no error


# --- a refused request's annotations travel with its StatusError


def refusal() -> errors.StatusError:
    err = errors.forbidden("pods", "web", 'violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)')
    err.warnings = ["w1"]
    err.audit_annotations = {"pod-security.kubernetes.io/enforce-policy": "baseline:latest",
                             "pod-security.kubernetes.io/audit-violations":
                                 'would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'}
    return err


def test_trailers_carry_audit_annotations() -> None:
    err = refusal()
    metadata = dict(errors.trailing_metadata(err))
    assert metadata[errors.AUDIT_ANNOTATIONS_METADATA_KEY] == (
        b'{"pod-security.kubernetes.io/enforce-policy":"baseline:latest",'
        b'"pod-security.kubernetes.io/audit-violations":"would violate PodSecurity \\"baseline:latest\\": '
        b'host namespaces (hostNetwork=true)"}')
    plain = errors.forbidden("pods", "web", "no")
    assert [k for k, _ in errors.trailing_metadata(plain)] == [errors.STATUS_METADATA_KEY]


def test_call_stream_error_round_trips_audit_annotations() -> None:
    err = refusal()
    call_error = grpcmux.ADMISSION.error_of(err)
    assert dict(call_error.audit_annotations) == err.audit_annotations
    back = errors.from_rpc_error(grpcmux.ADMISSION.rpc_error(call_error), "admission")
    assert back.code == 403 and back.warnings == ["w1"] and back.audit_annotations == err.audit_annotations


@pytest.mark.parametrize("value,expected", [(b"[1]", {}), (b"not json", {}), (b'{"k": 1, "j": "v"}', {"j": "v"})])
def test_bad_annotation_trailers_are_ignored(value: bytes, expected: dict[str, str]) -> None:
    assert errors.annotations_of_metadata(value) == expected


class AnnotateThenRefuse:
    name = "AnnotateThenRefuse"

    def handles(self, operation: str) -> bool:
        return True

    async def validate(self, request: AdmissionRequest) -> None:
        request.audit_annotations["pod-security.kubernetes.io/enforce-policy"] = "baseline:latest"
        raise errors.forbidden("configmaps", "c", "no")


async def test_pipeline_refusal_keeps_the_annotations_added_before_it() -> None:
    attrs = Attributes(ALICE, "create", True, api_version="v1", resource="configmaps", namespace="demo", name="c")
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"demo"}}'
    with pytest.raises(errors.StatusError) as info:
        await Admitter(Chain([AnnotateThenRefuse()])).admit("CREATE", attrs, "ConfigMap", body)
    assert info.value.audit_annotations == {"pod-security.kubernetes.io/enforce-policy": "baseline:latest"}
