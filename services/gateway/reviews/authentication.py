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
from kapi.gofmt import go_quote
from kapi_proto.kapi.authn.v1 import authn_pb2
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway.reviews import review, subresource
from services.gateway.scope import RequestScope, decode_typed_body

GROUP = "authentication.k8s.io"
API_VERSION = f"{GROUP}/v1"
BOUND_KINDS = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}
WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
# kube's TokenRequest defaulting (SetDefaults_TokenRequestSpec) and ValidateTokenRequest bounds.
DEFAULT_EXPIRATION_SECONDS = 60 * 60
MIN_EXPIRATION_SECONDS = 10 * 60
MAX_EXPIRATION_SECONDS = 1 << 32


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


def _timestamp(unix: int) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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


async def _get(scope: RequestScope, resource: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    reply: Any = await grpcutil.call("storage", scope.backends.storage.Get, storage_pb2.GetRequest(
        key=storage_pb2.ResourceKey(resource=resource, namespace=scope.info.namespace if namespace is None
                                    else namespace, name=name)), timeout=scope.timeout)
    obj: dict[str, Any] = jsonutil.loads(reply.object)
    return obj


def _group_version(api_version: str) -> tuple[str, str]:
    """apimachinery's ParseGroupVersion as FromAPIVersionAndKind uses it: ``v1`` -> ("", "v1"), ``a/v1`` -> ("a",
    "v1"); more than one slash is an unparsable version, which leaves both empty."""
    if api_version.count("/") == 0:
        return "", api_version
    if api_version.count("/") == 1:
        group, version = api_version.split("/")
        return group, version
    return "", ""


def _check_ref_name(name: str) -> None:
    """The generic store's key function on the bound object's name: 400 ``Name parameter required.`` or
    ``Name parameter invalid: "<name>": <reasons>`` (path.IsValidPathSegmentName)."""
    if not name:
        raise errors.bad_request("Name parameter required.")
    reasons = [f"may not be '{name}'"] if name in (".", "..") else [
        f"may not contain '{c}'" for c in ("/", "%") if c in name]
    if reasons:
        raise errors.bad_request(f"Name parameter invalid: {go_quote(name)}: {';'.join(reasons)}")


def _bound_resource(kind: str, api_version: str) -> tuple[str, bool]:
    """The resource a ``boundObjectRef`` names and whether it is cluster-scoped, or kube's 400: the version of a
    core Pod, Secret or Node is not looked at; webhook configurations need the disabled
    APIServerWebhookAuthenticationToken gate; anything else ``cannot bind token to object of type <gvk>``."""
    group, version = _group_version(api_version)
    gvk = f"{group}/{version}, Kind={kind}"
    if group == "" and kind in BOUND_KINDS:
        return BOUND_KINDS[kind], kind == "Node"
    if (group, version) == ("admissionregistration.k8s.io", "v1") and kind in WEBHOOK_KINDS:
        raise errors.bad_request(f"cannot bind token to object of type {gvk} (feature gate "
                                 "APIServerWebhookAuthenticationToken is disabled)")
    raise errors.bad_request(f"cannot bind token to object of type {gvk}")


def _bound_ref_json(ref: Mapping[str, Any]) -> dict[str, Any]:
    """``boundObjectRef`` as kube echoes it: BoundObjectReference's fields in Go order, empty ones left out."""
    return {key: ref[key] for key in ("kind", "apiVersion", "name", "uid") if ref.get(key)}


def _token_metadata(meta: Mapping[str, Any], name: str, namespace: str, uid: str, created: str) -> dict[str, Any]:
    """The TokenRequest's metadata in the answer: the request's (TokenREST keeps its system fields) with name,
    namespace and uid filled from the ServiceAccount when empty and creationTimestamp set to now."""
    out = {key: value for key, value in meta.items() if value not in (None, "", {}, [])}
    out["name"] = out.get("name") or name
    out["namespace"] = out.get("namespace") or namespace
    out["uid"] = out.get("uid") or uid
    out["creationTimestamp"] = created
    order = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
             "creationTimestamp")
    return {**{key: out[key] for key in order if key in out}, **{k: v for k, v in out.items() if k not in order}}


def _expiration(spec: Mapping[str, Any]) -> int:
    """``spec.expirationSeconds`` after v1 defaulting (absent or null -> 3600; an explicit 0 stays 0)."""
    value = spec.get("expirationSeconds")
    if value is None:
        return DEFAULT_EXPIRATION_SECONDS
    if not isinstance(value, int) or isinstance(value, bool):
        raise errors.bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: '
                                 "spec.expirationSeconds must be an integer")
    if not -(1 << 63) <= value < (1 << 63):  # Go's int64 (was a 500 from the proto field)
        raise errors.bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot '
                                 f"unmarshal number {value} into Go struct field TokenRequestSpec.spec."
                                 "expirationSeconds of type int64")
    return value


def _validate_expiration(seconds: int) -> None:
    """ValidateTokenRequest's expirationSeconds rules: 422 ``TokenRequest.authentication.k8s.io "" is invalid``
    (kube names no object here) below 10 minutes or above 2^32 seconds."""
    causes = []
    if seconds < MIN_EXPIRATION_SECONDS:
        causes.append(errors.Cause("FieldValueInvalid", f"Invalid value: {seconds}: may not specify a duration "
                                   "less than 10 minutes", "spec.expirationSeconds"))
    if seconds > MAX_EXPIRATION_SECONDS:
        causes.append(errors.Cause("FieldValueInvalid", f"Invalid value: {seconds}: may not specify a duration "
                                   "larger than 2^32 seconds", "spec.expirationSeconds"))
    if causes:
        raise errors.invalid("TokenRequest", "", causes, group=GROUP)


def _decode_token_request(scope: RequestScope, body: bytes) -> dict[str, Any]:
    """The body decoded into an authentication/v1 TokenRequest (TokenREST.New), or kube's decode 400s
    (``decode_typed_body``); an empty body is an empty TokenRequest."""
    return decode_typed_body(scope, body, GROUP, ("v1",), "TokenRequest") if body else {}


@subresource("", "serviceaccounts", "token")
async def token_request(scope: RequestScope) -> web.StreamResponse:
    """``POST serviceaccounts/<name>/token``: a TokenRequest with ``status.token`` and ``expirationTimestamp``.

    In kube's order (create handler, then TokenREST.Create): 400 for a body ``metadata.namespace`` other than the
    URL's; 422 for another ``metadata.name``; 404 without the ServiceAccount; 409 for a ``metadata.uid`` other than
    its uid; 422 for an ``expirationSeconds`` out of range; then the bound Pod, Secret or Node (400 for another
    kind, a Pod of another ServiceAccount or an empty name, 404, 409 on a uid mismatch). 405 for verbs other
    than create. The answer echoes the request with audiences defaulted and the expiration possibly shortened.
    """
    if scope.info.verb != "create":
        raise errors.no_route()
    data = _decode_token_request(scope, await scope.request.read())
    spec = _spec(data, "TokenRequest")
    audiences = _strings(spec.get("audiences"), "spec.audiences", "TokenRequest")
    expiration = _expiration(spec)
    name, namespace = scope.info.name, scope.info.namespace
    meta: Mapping[str, Any] = data["metadata"] if isinstance(data.get("metadata"), Mapping) else {}
    # The create handler first (rest.EnsureObjectNamespaceMatchesRequestNamespace), then TokenREST.Create.
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                 "request")
    if meta.get("name") and meta["name"] != name:
        raise errors.invalid("TokenRequest", name, [errors.Cause(
            "FieldValueInvalid", f"Invalid value: {go_quote(meta['name'])}: must match the service account name "
            "if specified", "metadata.name")], group=GROUP)
    sa = await _get(scope, "serviceaccounts", name)
    sa_uid = str((sa.get("metadata") or {}).get("uid") or "")
    if meta.get("uid") and meta["uid"] != sa_uid:  # TokenRequestServiceAccountUIDValidation (beta, on)
        raise errors.conflict("TokenRequest", name, f"the UID in the token request ({meta['uid']}) does not match "
                              f"the UID of the service account ({sa_uid})", group=GROUP)
    _validate_expiration(expiration)
    request = authn_pb2.IssueServiceAccountTokenRequest(
        namespace=namespace, name=name, uid=sa_uid, audiences=audiences, expiration_seconds=expiration)
    ref = spec.get("boundObjectRef")
    if ref is not None:
        if not isinstance(ref, Mapping):
            raise errors.bad_request('TokenRequest in version "v1" cannot be handled as a TokenRequest: '
                                     "spec.boundObjectRef must be an object")
        kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        resource, cluster_scoped = _bound_resource(kind, str(ref.get("apiVersion") or ""))
        _check_ref_name(ref_name)
        bound = await _get(scope, resource, ref_name, "" if cluster_scoped else None)
        if kind == "Pod" and ((bound.get("spec") or {}).get("serviceAccountName") or "") != name:
            raise errors.bad_request(f"cannot bind token for serviceaccount {go_quote(name)} to pod running with "
                                     "different serviceaccount name.")
        uid = str((bound.get("metadata") or {}).get("uid") or "")
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.conflict(kind, ref_name, f"the UID in the bound object reference ({ref['uid']}) does not "
                                  "match the UID in record. The object might have been deleted and then recreated")
        request.bound_object.CopyFrom(authn_pb2.BoundObjectReference(kind=kind, api_version="v1", name=ref_name,
                                                                     uid=uid))
    reply = await scope.backends.authn.issue_service_account_token(request, timeout=scope.timeout)
    granted = int(reply.expiration_seconds)
    if granted < expiration:  # --service-account-max-token-expiration
        scope.warnings.append(f"requested expiration of {expiration} seconds shortened to {granted} seconds")
    expires = int(reply.expiration_timestamp)
    out_spec: dict[str, Any] = {"audiences": list(reply.audiences), "expirationSeconds": granted}
    if ref is not None:
        out_spec["boundObjectRef"] = _bound_ref_json(ref)
    out_spec.update({key: value for key, value in spec.items() if key not in (
        "audiences", "expirationSeconds", "boundObjectRef")})
    answer = {"kind": "TokenRequest", "apiVersion": API_VERSION,
              "metadata": _token_metadata(meta, name, namespace, sa_uid, _timestamp(expires - granted)),
              "spec": out_spec, "status": {"token": reply.token, "expirationTimestamp": _timestamp(expires)}}
    return scope.respond(answer, 201, composed=True)
