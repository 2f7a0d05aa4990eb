"""``POST serviceaccounts/<name>/token`` (services/gateway/reviews/authentication.py) as kube-apiserver 1.37's
create handler and TokenREST.Create answer it, with fake storage and authn backends."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from kapi import errors
from kapi_proto.kapi.authn.v1 import authn_pb2
from services.gateway.reviews import authentication

NOW = 1_800_000_000
OBJECTS = {
    ("serviceaccounts", "ns", "builder"): {"metadata": {"name": "builder", "namespace": "ns", "uid": "sa-uid"}},
    ("pods", "ns", "web"): {"metadata": {"name": "web", "uid": "pod-uid"}, "spec": {"serviceAccountName": "builder"}},
    ("pods", "ns", "other"): {"metadata": {"name": "other", "uid": "o-uid"}, "spec": {"serviceAccountName": "x"}},
    ("secrets", "ns", "anchor"): {"metadata": {"name": "anchor", "uid": "secret-uid"}},
    ("nodes", "", "node-1"): {"metadata": {"name": "node-1", "uid": "node-uid"}},
}


class Backends:
    """Storage Get over :data:`OBJECTS` and an authn that grants at most ``max_seconds``."""

    def __init__(self, max_seconds: int = 0):
        self.max_seconds = max_seconds
        self.issued: list[authn_pb2.IssueServiceAccountTokenRequest] = []
        self.storage = SimpleNamespace(Get=self.get)
        self.authn = SimpleNamespace(issue_service_account_token=self.issue)

    async def get(self, request: Any, timeout: float, metadata: Any = None) -> Any:
        key = request.key
        obj = OBJECTS.get((key.resource, key.namespace, key.name))
        if obj is None:
            raise errors.not_found(key.resource, key.name)
        return SimpleNamespace(object=json.dumps(obj).encode())

    async def issue(self, request: authn_pb2.IssueServiceAccountTokenRequest, timeout: float) -> Any:
        self.issued.append(request)
        seconds = min(request.expiration_seconds, self.max_seconds or request.expiration_seconds)
        return SimpleNamespace(token="tok", expiration_timestamp=NOW + seconds, audiences=list(
            request.audiences) or ["https://kubernetes.default.svc"], expiration_seconds=seconds)


def scope(body: dict[str, Any], backends: Backends) -> Any:
    async def read() -> bytes:
        return json.dumps(body).encode()

    return SimpleNamespace(info=SimpleNamespace(verb="create", name="builder", namespace="ns"),
                           request=SimpleNamespace(read=read, headers={"Content-Type": "application/json"}),
                           content_type="application/json", backends=backends,
                           timeout=5.0, warnings=[], respond=lambda answer, code, composed=False: (answer, code))


async def create(body: dict[str, Any], backends: Backends | None = None) -> tuple[dict[str, Any], int, list[str]]:
    s = scope({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", **body}, backends or Backends())
    answer, code = await authentication.token_request(s)
    return answer, code, s.warnings


async def refused(body: dict[str, Any]) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as info:
        await create(body)
    return info.value


async def test_a_namespace_other_than_the_urls_is_the_create_handlers_400() -> None:
    err = await refused({"metadata": {"namespace": "elsewhere"}})
    assert (err.code, err.reason, err.message) == (400, "BadRequest", "the namespace of the provided object does "
                                                   "not match the namespace sent on the request")


async def test_a_name_other_than_the_urls_is_422() -> None:
    err = await refused({"metadata": {"name": "other"}})
    assert err.code == 422 and err.message == ('TokenRequest.authentication.k8s.io "builder" is invalid: '
                                               'metadata.name: Invalid value: "other": must match the service '
                                               "account name if specified")


async def test_a_uid_other_than_the_service_accounts_is_409() -> None:
    err = await refused({"metadata": {"uid": "stale"}})
    assert (err.code, err.reason) == (409, "Conflict")
    assert err.message == ('Operation cannot be fulfilled on TokenRequest.authentication.k8s.io "builder": the UID '
                           "in the token request (stale) does not match the UID of the service account (sa-uid)")
    assert err.details == {"name": "builder", "group": "authentication.k8s.io", "kind": "TokenRequest"}


@pytest.mark.parametrize(("seconds", "text"), [
    (300, "Invalid value: 300: may not specify a duration less than 10 minutes"),
    (0, "Invalid value: 0: may not specify a duration less than 10 minutes"),
    ((1 << 32) + 1, "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"),
])
async def test_expiration_out_of_range_is_422_naming_no_object(seconds: int, text: str) -> None:
    err = await refused({"spec": {"expirationSeconds": seconds}})
    assert err.code == 422 and err.message == (f'TokenRequest.authentication.k8s.io "" is invalid: '
                                               f"spec.expirationSeconds: {text}")


async def test_the_service_account_is_looked_up_before_the_expiration_is_validated() -> None:
    async def missing() -> None:
        s = scope({"spec": {"expirationSeconds": 1}}, Backends())
        s.info.name = "nobody"
        await authentication.token_request(s)

    with pytest.raises(errors.StatusError) as info:
        await missing()
    assert info.value.code == 404 and info.value.message == 'serviceaccounts "nobody" not found'


@pytest.mark.parametrize(("ref", "message"), [
    ({"kind": "ConfigMap", "apiVersion": "v1", "name": "x"}, "cannot bind token to object of type /v1, Kind=ConfigMap"),
    ({"kind": "Pod", "apiVersion": "apps/v1", "name": "web"}, "cannot bind token to object of type apps/v1, Kind=Pod"),
    ({"kind": "Deployment", "name": "x"}, "cannot bind token to object of type /, Kind=Deployment"),
    ({"kind": "ValidatingWebhookConfiguration", "apiVersion": "admissionregistration.k8s.io/v1", "name": "w"},
     "cannot bind token to object of type admissionregistration.k8s.io/v1, Kind=ValidatingWebhookConfiguration "
     "(feature gate APIServerWebhookAuthenticationToken is disabled)"),
    ({"kind": "Pod", "apiVersion": "v1", "name": "other"},
     'cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.'),
    ({"kind": "Secret", "apiVersion": "v1"}, "Name parameter required."),
    ({"kind": "Secret", "apiVersion": "v1", "name": "a/b"}, "Name parameter invalid: \"a/b\": may not contain '/'"),
])
async def test_bound_object_refusals_are_kubes_400(ref: dict[str, Any], message: str) -> None:
    err = await refused({"spec": {"boundObjectRef": ref}})
    assert (err.code, err.reason, err.message) == (400, "BadRequest", message)


async def test_a_bound_uid_mismatch_is_409() -> None:
    err = await refused({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "web",
                                                     "uid": "old"}}})
    assert err.code == 409 and err.message == (
        'Operation cannot be fulfilled on Pod "web": the UID in the bound object reference (old) does not match '
        "the UID in record. The object might have been deleted and then recreated")


async def test_the_version_of_a_core_kind_is_not_looked_at_and_nodes_bind() -> None:
    backends = Backends()
    answer, code, _ = await create({"spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v2", "name": "web"}}},
                                   backends)
    assert code == 201 and backends.issued[-1].bound_object.uid == "pod-uid"
    answer, code, _ = await create({"spec": {"boundObjectRef": {"kind": "Node", "apiVersion": "v1",
                                                                "name": "node-1"}}}, backends)
    assert code == 201 and backends.issued[-1].bound_object.kind == "Node"


async def test_the_answer_echoes_the_request_with_kubes_defaults() -> None:
    answer, code, warnings = await create({"metadata": {"labels": {"a": "b"}}, "spec": {
        "boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "anchor"}}})
    assert code == 201 and warnings == []
    assert answer["metadata"] == {"name": "builder", "namespace": "ns", "uid": "sa-uid",
                                  "creationTimestamp": "2027-01-15T08:00:00Z", "labels": {"a": "b"}}
    # The reference as sent (no uid filled in), audiences defaulted, one hour by default.
    assert answer["spec"] == {"audiences": ["https://kubernetes.default.svc"], "expirationSeconds": 3600,
                              "boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "anchor"}}
    assert answer["status"] == {"token": "tok", "expirationTimestamp": "2027-01-15T09:00:00Z"}


async def test_a_shortened_expiration_warns() -> None:
    answer, _, warnings = await create({"spec": {"expirationSeconds": 7200}}, Backends(max_seconds=3600))
    assert answer["spec"]["expirationSeconds"] == 3600
    assert warnings == ["requested expiration of 7200 seconds shortened to 3600 seconds"]
