"""Audit policy (``audit.k8s.io/v1`` Policy): which requests are recorded, at which level, in which stages.

Rules are checked in order; the first rule matching the request decides its
level (None, Metadata, Request, RequestResponse). A request no rule matches
is not audited (level None). ``omitStages`` of the policy and of the matching
rule are both omitted; a rule's ``omitManagedFields``, when set, overrides
the policy's. Matching follows k8s.io/apiserver ``pkg/audit/policy/checker.go``:
``users``, ``userGroups`` and ``verbs`` narrow any rule; ``resources`` and
``namespaces`` match only resource requests, ``nonResourceURLs`` only
non-resource ones (``/healthz*`` is a prefix pattern, ``*`` matches all).
Source: "Auditing" (kubernetes.io/docs/tasks/debug/debug-cluster/audit/) and
the audit.k8s.io/v1 API reference.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kapi.attributes import Attributes

STAGES = ("RequestReceived", "ResponseStarted", "ResponseComplete", "Panic")


class Level(enum.IntEnum):
    """Audit levels, ordered: a higher level records everything a lower one does."""

    NONE = 0
    METADATA = 1
    REQUEST = 2
    REQUEST_RESPONSE = 3

    @property
    def text(self) -> str:
        """The level as the Event's ``level`` field spells it."""
        return _LEVEL_NAMES[self]

    @classmethod
    def parse(cls, text: str) -> Level:
        """"None" / "Metadata" / "Request" / "RequestResponse" -> Level; ValueError otherwise."""
        for level, name in _LEVEL_NAMES.items():
            if name == text:
                return level
        raise ValueError(f"unknown audit level {text!r} (want one of {', '.join(_LEVEL_NAMES.values())})")


_LEVEL_NAMES = {Level.NONE: "None", Level.METADATA: "Metadata", Level.REQUEST: "Request",
                Level.REQUEST_RESPONSE: "RequestResponse"}


@dataclass(frozen=True)
class GroupResources:
    """One ``resources`` entry: an API group ("" = core), resources ("pods", "pods/log", "*/scale") and names."""

    group: str = ""
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    """One PolicyRule; empty tuples match everything."""

    level: Level
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool | None = None

    def matches(self, attrs: Attributes) -> bool:
        """True if this rule applies to ``attrs`` (checker.go ``ruleMatches``)."""
        user = attrs.user
        if self.users and user.username not in self.users:
            return False
        if self.user_groups and not any(g in self.user_groups for g in user.groups):
            return False
        if self.verbs and attrs.verb not in self.verbs:
            return False
        if self.namespaces or self.resources:
            return self._matches_resource(attrs)
        if self.non_resource_urls:
            return not attrs.resource_request and any(_path_matches(attrs.path, s) for s in self.non_resource_urls)
        return True

    def _matches_resource(self, attrs: Attributes) -> bool:
        if not attrs.resource_request:
            return False
        if self.namespaces and attrs.namespace not in self.namespaces:
            return False
        if not self.resources:
            return True
        combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        for gr in self.resources:
            if gr.group != attrs.api_group:
                continue
            if not gr.resources:
                return True
            if gr.resource_names and attrs.name not in gr.resource_names:
                continue
            for res in gr.resources:
                if res in (combined, "*"):
                    return True
                if attrs.subresource and res.startswith("*/") and res[2:] == attrs.subresource:
                    return True
                if res.endswith("/*") and res[:-2] == attrs.resource:
                    return True
        return False


def _path_matches(path: str, spec: str) -> bool:
    if spec in ("*", path):
        return True
    return spec.endswith("*") and path.startswith(spec[:-1])


@dataclass(frozen=True)
class Decision:
    """What the policy says about one request: level, stages to omit, whether managedFields are dropped."""

    level: Level
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False


@dataclass(frozen=True)
class Policy:
    """A parsed audit Policy: ordered rules plus policy-wide omitStages and omitManagedFields."""

    rules: tuple[Rule, ...]
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False

    def evaluate(self, attrs: Attributes) -> Decision:
        """The first matching rule's decision, or level None when no rule matches."""
        for rule in self.rules:
            if rule.matches(attrs):
                omit = self.omit_managed_fields if rule.omit_managed_fields is None else rule.omit_managed_fields
                return Decision(rule.level, self.omit_stages | rule.omit_stages, omit)
        return Decision(Level.NONE, self.omit_stages, self.omit_managed_fields)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    return tuple(value)


def _stages(value: Any, where: str) -> frozenset[str]:
    stages = _strings(value, where)
    for stage in stages:
        if stage not in STAGES:
            raise ValueError(f"{where}: unknown stage {stage!r} (want one of {', '.join(STAGES)})")
    return frozenset(stages)


def _rule(index: int, data: Any) -> Rule:
    where = f"rules[{index}]"
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be an object")
    if "level" not in data:
        raise ValueError(f"{where}.level is required")
    resources = []
    for j, gr in enumerate(data.get("resources") or []):
        if not isinstance(gr, Mapping):
            raise ValueError(f"{where}.resources[{j}] must be an object")
        resources.append(GroupResources(str(gr.get("group") or ""), _strings(gr.get("resources"), f"{where}.resources"),
                                        _strings(gr.get("resourceNames"), f"{where}.resources.resourceNames")))
    rule = Rule(level=Level.parse(str(data["level"])), users=_strings(data.get("users"), f"{where}.users"),
                user_groups=_strings(data.get("userGroups"), f"{where}.userGroups"),
                verbs=_strings(data.get("verbs"), f"{where}.verbs"), resources=tuple(resources),
                namespaces=_strings(data.get("namespaces"), f"{where}.namespaces"),
                non_resource_urls=_strings(data.get("nonResourceURLs"), f"{where}.nonResourceURLs"),
                omit_stages=_stages(data.get("omitStages"), f"{where}.omitStages"),
                omit_managed_fields=data.get("omitManagedFields"))
    if rule.non_resource_urls and (rule.resources or rule.namespaces):
        raise ValueError(f"{where}: rules cannot apply to both regular resources and non-resource URLs")
    return rule


def parse_policy(data: Any) -> Policy:
    """A Policy from its decoded YAML/JSON document; ValueError naming the bad field.

    ``apiVersion`` must be ``audit.k8s.io/v1`` and ``kind`` ``Policy`` (as
    kube-apiserver, which also refuses a policy without rules).
    """
    if not isinstance(data, Mapping):
        raise ValueError("the audit policy must be an object")
    if data.get("apiVersion") != "audit.k8s.io/v1" or data.get("kind") != "Policy":
        raise ValueError(f"unsupported audit policy apiVersion/kind {data.get('apiVersion')}/{data.get('kind')} "
                         "(want audit.k8s.io/v1 Policy)")
    rules: Iterable[Any] = data.get("rules") or []
    parsed = tuple(_rule(i, r) for i, r in enumerate(rules))
    if not parsed:
        raise ValueError("the audit policy has no rules")
    return Policy(parsed, _stages(data.get("omitStages"), "omitStages"), bool(data.get("omitManagedFields", False)))


def load_policy(path: str | Path) -> Policy:
    """Read ``--audit-policy-file``; OSError if unreadable, ValueError if invalid."""
    return parse_policy(yaml.safe_load(Path(path).read_text()))
