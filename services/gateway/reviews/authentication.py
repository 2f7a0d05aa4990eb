"""``authentication.k8s.io/v1``: TokenReview, SelfSubjectReview, and the ServiceAccount ``token`` subresource.

- TokenReview ("Authenticating", "Webhook token authentication"; kube's
  ``pkg/registry/authentication/tokenreview``): the authn service runs its
  bearer-token authenticators over ``spec.token`` for ``spec.audiences``
  (default: the API audiences); a bad token is ``authenticated: false``
  with ``status.error``, never an HTTP error. 400 for an empty token.
- SelfSubjectReview (``kubectl auth whoami``, KEP-3325): the requesting
  user (after impersonation) in ``status.userInfo``.
- TokenRequest (``POST .../serviceaccounts/<name>/token``, ``kubectl
  create token``, KEP-1205): the gateway checks the ServiceAccount and the
  optional bound Pod or Secret exist (404, 409 on a uid mismatch), then the
  authn service signs the token.
Each answer is 201 Created, as kube-apiserver.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from kapi import errors, grpcutil, jsonutil
from kapi.attributes import UserInfo
from kapi_proto.kapi.authn.v1 import authn_pb2
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation
from services.gateway.reviews import review, subresource
from services.gateway.scope import RequestScope

GROUP = "authentication.k8s.io"
API_VERSION = f"{GROUP}/v1"
BOUND_KINDS = {"Pod": "pods", "Secret": "secrets"}


def user_info(user: UserInfo) -> dict[str, Any]:
    """kube's ``authentication/v1 UserInfo`` JSON (empty fields omitted)."""
    out: dict[str, Any] = {"username": user.username}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {key: list(values) for key, values in user.extra}
    return out


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _strings(value: Any, field: str, kind: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: {field} must be a list '
                                 "of strings")
    return list(value)


def _spec(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    spec = obj.get("spec")
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise errors.bad_request(f'{kind} in version "v1" cannot be handled as a {kind}: spec must be an object')
    return dict(spec)


@review(GROUP, "tokenreviews")
async def token_review(scope: RequestScope, obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Answer a TokenReview: ``status.authenticated``, ``user``, ``audiences`` or ``error``."""
    spec = _spec(obj, "TokenReview")
    token = spec.get("token") or ""
    if not isinstance(token, str):
        raise errors.bad_request('TokenReview in version "v1" cannot be handled as a TokenReview: '
                                 "spec.token must be a string")
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
    audiences = _strings(spec.get("audiences"), "spec.audiences", "TokenReview")
    reply = await scope.backends.authn.review_token(token, tuple(audiences), timeout=scope.timeout)
    status: dict[str, Any] = {"user": {}}
    if reply.authenticated:
        status = {"authenticated": True, "user": user_info(UserInfo.from_proto(reply.user)),
                  "audiences": list(reply.audiences)}
    elif reply.error:
        status["error"] = reply.error
    meta = dict(obj.get("metadata") or {})
    meta.setdefault("creationTimestamp", None)
    return {"kind": "TokenReview", "apiVersion": API_VERSION, "metadata": meta, "spec": spec, "status": status}, 201


@review(GROUP, "selfsubjectreviews")
async def self_subject_review(scope: RequestScope, obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Answer a SelfSubjectReview with the requesting user's attributes."""
    meta = dict(obj.get("metadata") or {})
    meta["creationTimestamp"] = _now()
    return {"kind": "SelfSubjectReview", "apiVersion": API_VERSION, "metadata": meta,
            "status": {"userInfo": user_info(scope.attrs.user)}}, 201


async def _get(scope: RequestScope, resource: str, name: str) -> dict[str, Any]:
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Get, storage_pb2.GetRequest(
        key=storage_pb2.ResourceKey(resource=resource, namespace=scope.info.namespace, name=name)),
        timeout=scope.timeout)
    obj: dict[str, Any] = jsonutil.loads(reply.object)
    return obj


def _decode_token_request(scope: RequestScope, body: bytes) -> dict[str, Any]:
    data = negotiation.decode_body(body, scope.content_type) if body else {}
    if not isinstance(data, dict):
        raise errors.bad_request("the body of the request must be a JSON or YAML object")
    api_version, kind = data.get("apiVersion"), data.get("kind")
    if api_version and api_version != API_VERSION:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 f"version ({API_VERSION})")
    if kind and kind != "TokenRequest":
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind (TokenRequest)")
    return data


@subresource("", "serviceaccounts", "token")
async def token_request(scope: RequestScope) -> web.StreamResponse:
    """``POST serviceaccounts/<name>/token``: a TokenRequest with ``status.token`` and ``expirationTimestamp``.

    404 if the ServiceAccount or bound object is absent; 409 if the bound
    object's uid differs from ``boundObjectRef.uid``; 400 for an unsupported
    bound kind; 422 for a bad ``expirationSeconds`` (from authn) or a body
    whose ``metadata.name``/``namespace`` is not the URL's; 405 for verbs
    other than create.
    """
    if scope.info.verb != "create":
        raise errors.method_not_allowed("serviceaccounts/token", scope.info.verb)
    data = _decode_token_request(scope, await scope.request.read())
    spec = _spec(data, "TokenRequest")
    audiences = _strings(spec.get("audiences"), "spec.audiences", "TokenRequest")
    expiration = spec.get("expirationSeconds") or 0
    if not isinstance(expiration, int) or isinstance(expiration, bool):
        raise errors.bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: '
                                 "spec.expirationSeconds must be an integer")
    if not -(1 << 63) <= expiration < (1 << 63):  # Go's int64 (was a 500 from the proto field)
        raise errors.bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot '
                                 f"unmarshal number {expiration} into Go struct field TokenRequestSpec.spec."
                                 "expirationSeconds of type int64")
    name, namespace = scope.info.name, scope.info.namespace
    # kube's token REST: a name or namespace in the body must be the URL's (token.go "require name/namespace in
    # the body to match URL if specified").
    meta: Mapping[str, Any] = data["metadata"] if isinstance(data.get("metadata"), Mapping) else {}
    for part, wanted, what in (("name", name, "name"), ("namespace", namespace, "namespace")):
        given = meta.get(part)
        if given and given != wanted:
            raise errors.invalid("TokenRequest", name, [errors.Cause(
                "FieldValueInvalid", f"Invalid value: {jsonutil.dumps(given).decode()}: must match the service "
                f"account {what} if specified", f"metadata.{part}")], group="authentication.k8s.io")
    sa = await _get(scope, "serviceaccounts", name)
    request = authn_pb2.IssueServiceAccountTokenRequest(
        namespace=namespace, name=name, uid=str((sa.get("metadata") or {}).get("uid") or ""),
        audiences=audiences, expiration_seconds=expiration)
    ref = spec.get("boundObjectRef")
    if ref is not None:
        if not isinstance(ref, Mapping):
            raise errors.bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: '
                                     "spec.boundObjectRef must be an object")
        kind, ref_version = str(ref.get("kind") or ""), str(ref.get("apiVersion") or "v1")
        if kind not in BOUND_KINDS or ref_version != "v1":
            raise errors.bad_request(f"cannot bind token for serviceaccount {name!r} to object of kind "  # noqa: B907
                                     f"{ref_version}, Kind={kind}")
        if not ref.get("name") or not isinstance(ref["name"], str):
            raise errors.bad_request("spec.boundObjectRef.name is required")
        bound = await _get(scope, BOUND_KINDS[kind], ref["name"])
        uid = str((bound.get("metadata") or {}).get("uid") or "")
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.conflict(kind, str(ref.get("name")), f"the UID in the bound object reference "
                                  f"({ref['uid']}) does not match the UID in record. The object might have been "
                                  "deleted and then recreated")
        request.bound_object.CopyFrom(authn_pb2.BoundObjectReference(kind=kind, api_version="v1",
                                                                     name=str(ref["name"]), uid=uid))
        spec["boundObjectRef"] = {**ref, "uid": uid, "apiVersion": "v1"}
    reply = await scope.backends.authn.issue_service_account_token(request, timeout=scope.timeout)
    spec["audiences"] = list(reply.audiences)
    spec["expirationSeconds"] = int(reply.expiration_seconds)
    expires = datetime.fromtimestamp(int(reply.expiration_timestamp), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    answer = {"kind": "TokenRequest", "apiVersion": API_VERSION,
              "metadata": {"name": name, "namespace": namespace, "creationTimestamp": _now()},
              "spec": spec, "status": {"token": reply.token, "expirationTimestamp": expires}}
    return scope.respond(answer, 201)
