"""``authorization.k8s.io/v1`` access reviews, answered by the authz service, and the RBAC escalation hook.

"Authorization", "Checking API access": SubjectAccessReview (any user,
cluster-wide), LocalSubjectAccessReview (any user, one namespace),
SelfSubjectAccessReview (the requesting user) go through the authz
``Authorize`` RPC; SelfSubjectRulesReview lists the requesting user's
rules through ``RulesReview``. Each answer is the posted object with
``status`` filled, 201 Created, as kube-apiserver's
``pkg/registry/authorization/*`` REST handlers. Who may create them is
decided by the handler chain's authorization (``create`` on the resource;
system:basic-user grants the Self* kinds to every authenticated user).

RBAC privilege-escalation prevention on writes is a write-path hook
(services/gateway/registry/rbac.py), not a review.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kapi import errors, jsonutil
from kapi.attributes import Attributes, UserInfo
from services.gateway.reviews import review
from services.gateway.scope import RequestScope

GROUP = "authorization.k8s.io"


def _invalid(kind: str, causes: list[errors.Cause]) -> errors.StatusError:
    return errors.invalid(kind, "", causes, GROUP)


def _cause(field: str, value: Any, detail: str) -> errors.Cause:
    shown = '"null"' if value is None else jsonutil.dumps(value).decode()
    return errors.Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", field)


def _mapping(value: Any, field: str, kind: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise errors.bad_request(f"{kind} in version \"v1\" cannot be handled as a {kind}: {field} must be an object")
    return dict(value)


def _strings(value: Any, field: str, kind: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise errors.bad_request(f"{kind} in version \"v1\" cannot be handled as a {kind}: {field} must be a list "
                                 "of strings")
    return tuple(value)


def _check_metadata(obj: Mapping[str, Any], kind: str, keep_namespace: bool) -> list[errors.Cause]:
    """kube's ``metadata: Invalid value: ...: must be empty``.

    Zero values (null, 0, "", empty lists and maps, as a protobuf body
    decodes) count as empty, as Go's DeepEqual with an empty ObjectMeta;
    managedFields and (for LocalSubjectAccessReview) namespace are ignored.
    """
    meta = {k: v for k, v in (obj.get("metadata") or {}).items()
            if v not in (None, 0, "", [], {}) and k != "managedFields" and not (k == "namespace" and keep_namespace)}
    return [_cause("metadata", meta, "must be empty")] if meta else []


def _spec_checks(spec: Mapping[str, Any], kind: str, need_subject: bool) -> list[errors.Cause]:
    """ValidateSubjectAccessReviewSpec / ValidateSelfSubjectAccessReviewSpec."""
    causes: list[errors.Cause] = []
    res, nonres = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if res is not None and nonres is not None:
        causes.append(_cause("spec.nonResourceAttributes", nonres,
                             "cannot be specified in combination with resourceAttributes"))
    if res is None and nonres is None:
        causes.append(_cause("spec.resourceAttributes", None,
                             "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    if need_subject and not spec.get("user") and not spec.get("groups"):
        causes.append(_cause("spec.user", spec.get("user") or "", "at least one of user or group must be specified"))
    return causes


def _subject(spec: Mapping[str, Any], kind: str) -> UserInfo:
    extra = _mapping(spec.get("extra"), "spec.extra", kind)
    return UserInfo(str(spec.get("user") or ""), str(spec.get("uid") or ""),
                    _strings(spec.get("groups"), "spec.groups", kind),
                    tuple(sorted((str(k), _strings(v, f"spec.extra[{k}]", kind)) for k, v in extra.items())))


def _attributes(user: UserInfo, spec: Mapping[str, Any], kind: str) -> Attributes:
    """authorizationutil.ResourceAttributesFrom / NonResourceAttributesFrom."""
    res = spec.get("resourceAttributes")
    if res is not None:
        r = _mapping(res, "spec.resourceAttributes", kind)
        return Attributes(user=user, verb=str(r.get("verb") or ""), resource_request=True,
                          api_group=str(r.get("group") or ""), api_version=str(r.get("version") or ""),
                          resource=str(r.get("resource") or ""), subresource=str(r.get("subresource") or ""),
                          namespace=str(r.get("namespace") or ""), name=str(r.get("name") or ""))
    n = _mapping(spec.get("nonResourceAttributes"), "spec.nonResourceAttributes", kind)
    return Attributes(user=user, verb=str(n.get("verb") or ""), resource_request=False, path=str(n.get("path") or ""))


async def _decide(scope: RequestScope, obj: dict[str, Any], attrs: Attributes) -> tuple[dict[str, Any], int]:
    reply = await scope.backends.authz.authorize_full(attrs, timeout=scope.timeout)
    status: dict[str, Any] = {"allowed": reply.decision == 1}
    if reply.decision == 2:
        status["denied"] = True
    if reply.reason:
        status["reason"] = reply.reason
    if reply.evaluation_error:
        status["evaluationError"] = reply.evaluation_error
    obj["status"] = status
    return obj, 201


def _spec(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    return _mapping(obj.get("spec"), "spec", kind)


@review(GROUP, "subjectaccessreviews")
async def subject_access_review(scope: RequestScope, obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """May ``spec.user``/``spec.groups`` do what ``spec`` describes (resource or non-resource)? 422 if invalid."""
    kind = "SubjectAccessReview"
    spec = _spec(obj, kind)
    causes = _spec_checks(spec, kind, need_subject=True) + _check_metadata(obj, kind, keep_namespace=False)
    if causes:
        raise _invalid(kind, causes)
    return await _decide(scope, obj, _attributes(_subject(spec, kind), spec, kind))


@review(GROUP, "localsubjectaccessreviews")
async def local_subject_access_review(scope: RequestScope, obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A SubjectAccessReview confined to the URL's namespace; resourceAttributes.namespace must match it."""
    kind = "LocalSubjectAccessReview"
    spec = _spec(obj, kind)
    namespace = scope.info.namespace
    causes = _spec_checks(spec, kind, need_subject=True) + _check_metadata(obj, kind, keep_namespace=True)
    res = spec.get("resourceAttributes")
    if isinstance(res, Mapping) and (res.get("namespace") or "") != namespace:
        causes.append(_cause("spec.resourceAttributes.namespace", res.get("namespace") or "",
                             "must match metadata.namespace"))
    if spec.get("nonResourceAttributes") is not None:
        causes.append(_cause("spec.nonResourceAttributes", spec["nonResourceAttributes"],
                             "disallowed on this kind of request"))
    if causes:
        raise _invalid(kind, causes)
    return await _decide(scope, obj, _attributes(_subject(spec, kind), spec, kind))


@review(GROUP, "selfsubjectaccessreviews")
async def self_subject_access_review(scope: RequestScope, obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """May the requesting user (``scope.attrs.user``) do what the spec describes? (``kubectl auth can-i``)."""
    kind = "SelfSubjectAccessReview"
    spec = _spec(obj, kind)
    causes = _spec_checks(spec, kind, need_subject=False) + _check_metadata(obj, kind, keep_namespace=False)
    if causes:
        raise _invalid(kind, causes)
    return await _decide(scope, obj, _attributes(scope.attrs.user, spec, kind))


@review(GROUP, "selfsubjectrulesreviews")
async def self_subject_rules_review(scope: RequestScope, obj: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The requesting user's rules in ``spec.namespace`` (``kubectl auth can-i --list``); 400 without a namespace."""
    spec = _spec(obj, "SelfSubjectRulesReview")
    namespace = spec.get("namespace") or ""
    if not isinstance(namespace, str) or not namespace:
        raise errors.bad_request("no namespace on request")
    reply = await scope.backends.authz.rules_review(scope.attrs.user, namespace, timeout=scope.timeout)
    resource_rules = []
    for r in reply.resource_rules:
        rule: dict[str, Any] = {"verbs": list(r.verbs)}
        for key, values in (("apiGroups", r.api_groups), ("resources", r.resources),
                            ("resourceNames", r.resource_names)):
            if values:
                rule[key] = list(values)
        resource_rules.append(rule)
    non_resource_rules = []
    for n in reply.non_resource_rules:
        rule = {"verbs": list(n.verbs)}
        if n.non_resource_urls:
            rule["nonResourceURLs"] = list(n.non_resource_urls)
        non_resource_rules.append(rule)
    status: dict[str, Any] = {"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
                              "incomplete": bool(reply.incomplete)}
    if reply.evaluation_error:
        status["evaluationError"] = reply.evaluation_error
    obj["status"] = status
    return obj, 201
