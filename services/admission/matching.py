"""Matching shared by webhooks and policies: metav1.LabelSelector objects, admissionregistration rules, CEL.

Sources: "Dynamic Admission Control" (rules, namespaceSelector,
objectSelector, matchConditions) and "Labels and Selectors" (set-based
requirements: In, NotIn, Exists, DoesNotExist).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from kapi.cel import library, rewrite
from kapi.cel.engine import cel
from kapi.selectors import SelectorError, label_selector_matches
from services.admission.chain import AdmissionRequest


class SelectorInvalid(ValueError):
    """A metav1.LabelSelector that cannot be evaluated (unknown operator, missing values)."""


def selector_matches(selector: Any, labels: Mapping[str, str] | None) -> bool:
    """Whether ``labels`` match a metav1.LabelSelector dict; None or {} selects everything.

    Raises :class:`SelectorInvalid` for an unknown operator.
    """
    if not isinstance(selector, dict):
        return True
    try:
        return label_selector_matches(selector, labels or {})
    except SelectorError as exc:
        raise SelectorInvalid(str(exc)) from None


def labels_of(obj: Any) -> dict[str, str]:
    """metadata.labels of ``obj`` ({} when absent)."""
    if not isinstance(obj, dict):
        return {}
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _any(values: Any, wanted: str) -> bool:
    return isinstance(values, list) and ("*" in values or wanted in values)


def _resource_matches(patterns: Any, resource: str, subresource: str) -> bool:
    for pattern in patterns if isinstance(patterns, list) else ():
        if not isinstance(pattern, str):
            continue
        res, _, sub = pattern.partition("/")
        if res in ("*", resource) and sub in ("*", subresource):
            return True
    return False


def rule_matches(rule: Any, request: AdmissionRequest) -> bool:
    """One RuleWithOperations against the request: operations, apiGroups, apiVersions, resources, scope.

    ``resources`` entries: "pods" (main resource only), "pods/status",
    "*/status", "pods/*" (pods and all its subresources), "*" (every main resource), "*/*" (everything).
    scope: "Cluster", "Namespaced" or "*" (default).
    """
    if not isinstance(rule, dict):
        return False
    res = request.resource
    if not _any(rule.get("operations"), request.operation):
        return False
    if not _any(rule.get("apiGroups"), res.group) or not _any(rule.get("apiVersions"), res.version):
        return False
    if not _resource_matches(rule.get("resources"), res.resource, request.subresource):
        return False
    scope = rule.get("scope") or "*"
    if scope == "Cluster":
        return not request.namespace
    if scope == "Namespaced":
        return bool(request.namespace)
    return True


_FUNCTIONS: dict[str, Callable[..., Any]] = {**library.FUNCTIONS, **rewrite.HIDDEN}


@functools.lru_cache(maxsize=1024)
def compile_cel(expression: str) -> Any:
    """A compiled CEL program (cached by source); raises ValueError for a syntax error.

    Two-variable comprehensions and ``x.?f`` optional selection are rewritten first (:mod:`kapi.cel.rewrite`).
    """
    return cel.compile(rewrite.rewrite(expression))


def evaluate_cel(expression: str, variables: dict[str, Any]) -> Any:
    """Evaluate ``expression`` with ``variables`` and kube's CEL libraries (:mod:`kapi.cel.library`).

    Raises ValueError/KeyError/TypeError/RuntimeError on failure (a library function's refusal is a
    RuntimeError naming the function and carrying kube's message).
    """
    return compile_cel(expression).execute(cel.Context(variables, functions=_FUNCTIONS))


# Subresources whose admitted body is a kind of another group: (subresource, kind) -> its group and version, as
# kube's REST storage names it (GroupVersionKindProvider: EvictionREST's policy/v1 Eviction).
SUBRESOURCE_KINDS: dict[tuple[str, str], tuple[str, str]] = {
    ("eviction", "Eviction"): ("policy", "v1"),
}


def request_variable(request: AdmissionRequest, uid: str = "") -> dict[str, Any]:
    """The ``request`` CEL variable / AdmissionReview request fields shared by webhooks and policies, with Go's
    ``omitempty`` applied to userInfo (as kube converts the AdmissionRequest to CEL's map). ``kind`` is the
    admitted object's, in its own group for a subresource of another kind (:data:`SUBRESOURCE_KINDS`:
    pods/eviction's ``policy/v1`` Eviction)."""
    res = request.resource
    user = request.attributes.user
    group, version = SUBRESOURCE_KINDS.get((request.subresource, request.kind), (res.group, res.version))
    kind = {"group": group, "version": version, "kind": request.kind}
    out: dict[str, Any] = {
        "uid": uid,
        "kind": kind,
        "resource": {"group": res.group, "version": res.version, "resource": res.resource},
        "requestKind": dict(kind),
        "requestResource": {"group": res.group, "version": res.version, "resource": res.resource},
        "name": request.review_name,
        "namespace": request.namespace,
        "operation": request.operation,
        # authentication/v1 UserInfo: uid, groups and extra are omitempty, so CEL sees no such key when empty
        "userInfo": {k: v for k, v in (("username", user.username), ("uid", user.uid), ("groups", list(user.groups)),
                                       ("extra", {k: list(v) for k, v in user.extra})) if v or k == "username"},
        "dryRun": request.dry_run,
        "options": request.operation_options(),
    }
    if request.subresource:
        out["subResource"] = request.subresource
        out["requestSubResource"] = request.subresource
    return out
