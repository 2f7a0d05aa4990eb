"""ABAC: attribute-based policies from ``--authorization-policy-file`` ("Using ABAC Authorization").

Mirrors kube's ``pkg/auth/authorizer/abac``. The file holds one JSON
object per line (blank lines and lines starting with ``#`` are skipped):
``{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy",
"spec": {...}}`` with spec fields ``user``, ``group``, ``readonly``,
``apiGroup``, ``resource``, ``namespace``, ``nonResourcePath``; lines
without apiVersion/kind are the unversioned (v0) format and are converted
as kube converts them. A request is allowed when any policy matches:

- subject: ``user`` (if set) equals the user name, ``group`` (if set) is
  one of the user's groups; at least one of them must be set. ``*`` in
  ``user`` or ``group`` means every authenticated user (kube converts it to
  ``group: system:authenticated``);
- verb: read-only requests (get, list, watch) match every policy, others
  only policies without ``readonly: true``;
- resource requests: ``namespace``, ``resource`` and ``apiGroup`` each ``*``
  or equal (an unset field matches only an empty attribute: a cluster-scoped
  request has namespace "", the core group is "");
- non-resource requests: ``nonResourcePath`` ``*``, equal, or a prefix
  ending in ``*``.

No match is NoOpinion "No policy matched.". The file is read once at start;
an unreadable line stops the service (kube's ``policyLoadError``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kapi.attributes import ALL_AUTHENTICATED, Attributes, UserInfo
from services.authz.authorizer import Decision, Result, RulesResult

log = logging.getLogger(__name__)

GROUP = "abac.authorization.kubernetes.io"
V1BETA1, V0 = f"{GROUP}/v1beta1", f"{GROUP}/v0"
KIND = "Policy"
READ_ONLY_VERBS = frozenset({"get", "list", "watch"})
NO_MATCH = Result(Decision.NO_OPINION, "No policy matched.", name_independent=True)  # ABAC policies name nothing


class PolicyLoadError(ValueError):
    """A line of the policy file cannot be used; the message names the file and line (kube's wording)."""

    def __init__(self, path: str, line: int, data: str, reason: str):
        super().__init__(f"error reading policy file {path}, line {line}: {data}: {reason}")


@dataclass(frozen=True)
class Policy:
    """One ``abac.authorization.kubernetes.io/v1beta1`` PolicySpec (the internal form after conversion)."""

    user: str = ""
    group: str = ""
    readonly: bool = False
    api_group: str = ""
    resource: str = ""
    namespace: str = ""
    non_resource_path: str = ""

    def subject_matches(self, user: UserInfo) -> bool:
        """kube's ``subjectMatches``: the user and group fields that are set must all match; one must be set."""
        matched = False
        if self.user:
            if self.user == "*":
                matched = True
            elif self.user == user.username:
                matched = True
            else:
                return False
        if self.group:
            if self.group == "*" or self.group in user.groups:
                matched = True
            else:
                return False
        return matched

    def verb_matches(self, attributes: Attributes) -> bool:
        """Read-only requests match every policy; others need ``readonly`` false."""
        return attributes.verb in READ_ONLY_VERBS or not self.readonly

    def resource_matches(self, attributes: Attributes) -> bool:
        """Namespace, resource and API group each ``*`` or equal; never a non-resource request."""
        return (attributes.resource_request
                and self.namespace in ("*", attributes.namespace)
                and self.resource in ("*", attributes.resource)
                and self.api_group in ("*", attributes.api_group))

    def non_resource_matches(self, attributes: Attributes) -> bool:
        """``*``, the exact path, or a ``prefix*`` of it; never a resource request."""
        if attributes.resource_request or not self.non_resource_path:
            return False
        path = self.non_resource_path
        if path in ("*", attributes.path):
            return True
        return path.endswith("*") and attributes.path.startswith(path.rstrip("*"))

    def matches(self, attributes: Attributes) -> bool:
        """Subject, verb, then resource or non-resource (kube's ``matches``)."""
        return (self.subject_matches(attributes.user) and self.verb_matches(attributes)
                and (self.resource_matches(attributes) or self.non_resource_matches(attributes)))


def _str(spec: Mapping[str, Any], key: str) -> str:
    value = spec.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _bool(spec: Mapping[str, Any], key: str) -> bool:
    value = spec.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be a boolean")
    return value


def from_v1beta1(spec: Mapping[str, Any]) -> Policy:
    """Convert a v1beta1 spec; ``*`` user or group becomes ``group: system:authenticated``."""
    policy = Policy(_str(spec, "user"), _str(spec, "group"), _bool(spec, "readonly"), _str(spec, "apiGroup"),
                    _str(spec, "resource"), _str(spec, "namespace"), _str(spec, "nonResourcePath"))
    if policy.user == "*" or policy.group == "*":
        policy = Policy("", ALL_AUTHENTICATED, policy.readonly, policy.api_group, policy.resource,
                        policy.namespace, policy.non_resource_path)
    return policy


def from_v0(obj: Mapping[str, Any]) -> Policy:
    """Convert an unversioned policy as kube's ``Convert_v0_Policy_To_abac_Policy`` does.

    No user and no group, or ``*`` for either, means every authenticated
    user; an empty namespace matches every namespace and every non-resource
    path; an empty resource every resource; any API group matches.
    """
    user, group = _str(obj, "user"), _str(obj, "group")
    namespace, resource = _str(obj, "namespace"), _str(obj, "resource")
    if not user and not group:
        group = ALL_AUTHENTICATED
    if user == "*" or group == "*":
        user, group = "", ALL_AUTHENTICATED
    return Policy(user, group, _bool(obj, "readonly"), "*", resource or "*", namespace or "*",
                  "*" if not namespace else "")


def parse_line(text: str) -> Policy:
    """One policy line -> :class:`Policy`; raises ValueError if it is not a Policy."""
    obj = json.loads(text)
    if not isinstance(obj, dict):
        raise ValueError("a policy must be a JSON object")
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not api_version and not kind:
        return from_v0(obj)
    if kind != KIND:
        raise ValueError(f"unrecognized kind {kind!r} (expected {KIND})")
    if api_version == V1BETA1:
        spec = obj.get("spec") or {}
        if not isinstance(spec, dict):
            raise ValueError("spec must be an object")
        return from_v1beta1(spec)
    if api_version == V0:
        return from_v0(obj)
    raise ValueError(f"no kind {kind!r} is registered for version {api_version!r}")


def parse(lines: Iterable[str], path: str = "<policy>") -> list[Policy]:
    """Every policy of a file's lines, in order; raises :class:`PolicyLoadError` at the first bad line."""
    policies: list[Policy] = []
    unversioned = 0
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            policies.append(parse_line(text))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise PolicyLoadError(path, number, text, str(exc)) from None
        if '"apiVersion"' not in text:
            unversioned += 1
    if unversioned:
        log.warning("Policy file %s contained unversioned rules. See docs/admin/authorization.md#abac-mode for "
                    "ABAC file format details.", path)
    return policies


def load(path: str) -> list[Policy]:
    """Read ``--authorization-policy-file``; raises OSError or :class:`PolicyLoadError`."""
    return parse(Path(path).read_text(encoding="utf-8").splitlines(), path)


def _verbs(readonly: bool) -> list[str]:
    return sorted(READ_ONLY_VERBS) if readonly else ["*"]


class ABACAuthorizer:
    """``--authorization-mode=ABAC`` over a fixed list of policies (kube's ``PolicyList``)."""

    def __init__(self, policies: Iterable[Policy]):
        self._policies = tuple(policies)

    @property
    def policies(self) -> tuple[Policy, ...]:
        """The policies in file order."""
        return self._policies

    async def authorize(self, attributes: Attributes) -> Result:
        """Allow when a policy matches, else NoOpinion "No policy matched."."""
        for policy in self._policies:
            if policy.matches(attributes):
                return Result(Decision.ALLOW, name_independent=True)
        return NO_MATCH

    def rules_for(self, user: UserInfo, namespace: str) -> RulesResult:
        """The rules of every policy naming ``user`` in ``namespace`` or ``*`` (PolicyList.RulesFor); complete."""
        resource: list[dict[str, Any]] = []
        non_resource: list[dict[str, Any]] = []
        for policy in self._policies:
            if not policy.subject_matches(user) or policy.namespace not in ("*", namespace):
                continue
            if policy.resource:
                resource.append({"verbs": _verbs(policy.readonly), "apiGroups": [policy.api_group],
                                 "resources": [policy.resource]})
            if policy.non_resource_path:
                non_resource.append({"verbs": _verbs(policy.readonly),
                                     "nonResourceURLs": [policy.non_resource_path]})
        return RulesResult(tuple(resource), tuple(non_resource))
