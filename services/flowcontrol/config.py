"""FlowSchema and PriorityLevelConfiguration as frozen dataclasses, and request classification.

"API Priority and Fairness" (KEP-1040; k8s.io/apiserver pkg/util/flowcontrol
rule.go): FlowSchemas are tried by ascending ``matchingPrecedence`` (ties
by name); a schema matches when one of its rules has a matching subject
(User, Group, ServiceAccount, ``*``) and, for a resource request, a
matching resourceRule (verbs, apiGroups, resources with ``res/sub``,
``clusterScope`` for cluster-scoped requests, ``namespaces`` with ``*``)
or, for a non-resource request, a matching nonResourceRule (verbs,
``nonResourceURLs`` with ``*`` and ``/prefix/*``). The flow is the schema
plus its distinguisher: the user name (ByUser), the namespace
(ByNamespace), or "" (no distinguisherMethod). Schemas naming a missing
priority level are dangling and skipped; when nothing matches, the
mandatory ``catch-all`` applies.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kapi.attributes import Attributes
from kapi.kinds import flowcontrol as kinds
from services.flowcontrol import defaults

BY_USER, BY_NAMESPACE = "ByUser", "ByNamespace"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"

# kube's list work estimator: one seat per 100 objects, at most 10 seats (WorkEstimatorConfig defaults).
OBJECTS_PER_SEAT = 100
MAXIMUM_SEATS = 10


@dataclass(frozen=True)
class Subject:
    """One FlowSchema subject: kind User/Group/ServiceAccount; ``namespace`` only for ServiceAccount."""

    kind: str
    name: str
    namespace: str = ""

    def matches(self, attrs: Attributes) -> bool:
        """True if the request's user is this subject (``*`` matches any name)."""
        user = attrs.user
        if self.kind == "User":
            return self.name == "*" or self.name == user.username
        if self.kind == "Group":
            return self.name == "*" or self.name in user.groups
        if self.kind == "ServiceAccount":
            prefix = f"{SERVICE_ACCOUNT_PREFIX}{self.namespace}:"
            if self.name == "*":
                return user.username.startswith(prefix)
            return user.username == prefix + self.name
        return False


@dataclass(frozen=True)
class ResourceRule:
    """A ResourcePolicyRule."""

    verbs: frozenset[str]
    api_groups: frozenset[str]
    resources: frozenset[str]
    cluster_scope: bool
    namespaces: frozenset[str]

    def matches(self, attrs: Attributes) -> bool:
        """kube's matchesResourcePolicyRule."""
        resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
        if not (_has(self.verbs, attrs.verb) and _has(self.api_groups, attrs.api_group)
                and _has(self.resources, resource)):
            return False
        if not attrs.namespace:
            return self.cluster_scope
        return _has(self.namespaces, attrs.namespace)


@dataclass(frozen=True)
class NonResourceRule:
    """A NonResourcePolicyRule; URL patterns are exact, ``*``, or ``/prefix/*``."""

    verbs: frozenset[str]
    urls: frozenset[str]

    def matches(self, attrs: Attributes) -> bool:
        """kube's matchesNonResourcePolicyRule."""
        if not _has(self.verbs, attrs.verb):
            return False
        path = attrs.path
        for url in self.urls:
            if url in ("*", path):
                return True
            if url.endswith("/*") and (path.startswith(url[:-1]) or path == url[:-2]):
                return True
        return False


@dataclass(frozen=True)
class PolicyRule:
    """A PolicyRulesWithSubjects."""

    subjects: tuple[Subject, ...]
    resource_rules: tuple[ResourceRule, ...]
    non_resource_rules: tuple[NonResourceRule, ...]

    def matches(self, attrs: Attributes) -> bool:
        """A subject matches and a rule of the request's kind matches."""
        if not any(s.matches(attrs) for s in self.subjects):
            return False
        if attrs.resource_request:
            return any(r.matches(attrs) for r in self.resource_rules)
        return any(r.matches(attrs) for r in self.non_resource_rules)


@dataclass(frozen=True)
class FlowSchema:
    """A FlowSchema's name, uid and spec."""

    name: str
    uid: str
    priority_level: str
    matching_precedence: int
    distinguisher: str  # "ByUser", "ByNamespace" or ""
    rules: tuple[PolicyRule, ...]

    def matches(self, attrs: Attributes) -> bool:
        """True if any rule matches the request."""
        return any(r.matches(attrs) for r in self.rules)

    def flow_distinguisher(self, attrs: Attributes) -> str:
        """The flow distinguisher of a request this schema matched."""
        if self.distinguisher == BY_USER:
            return attrs.user.username
        if self.distinguisher == BY_NAMESPACE:
            return attrs.namespace
        return ""

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> FlowSchema:
        """Parse a FlowSchema object; raises ValueError/TypeError/KeyError when malformed."""
        meta = obj.get("metadata") or {}
        spec = kinds.defaulted_spec("FlowSchema", obj.get("spec") or {})
        rules = tuple(_policy_rule(r) for r in spec.get("rules") or ())
        method = (spec.get("distinguisherMethod") or {}).get("type") or ""
        return cls(str(meta["name"]), str(meta.get("uid") or ""),
                   str((spec.get("priorityLevelConfiguration") or {})["name"]),
                   int(spec["matchingPrecedence"]), str(method), rules)


@dataclass(frozen=True)
class PriorityLevel:
    """A PriorityLevelConfiguration's name, uid and spec (v1 field names).

    ``queues`` 0 means ``limitResponse.type: Reject``; ``borrowing_limit_percent``
    None means unlimited borrowing.
    """

    name: str
    uid: str
    exempt: bool
    nominal_concurrency_shares: int
    lendable_percent: int
    borrowing_limit_percent: int | None = None
    queues: int = 0
    hand_size: int = 0
    queue_length_limit: int = 0

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> PriorityLevel:
        """Parse a PriorityLevelConfiguration; raises ValueError/TypeError/KeyError.

        v1 defaults apply (:func:`kapi.kinds.flowcontrol.default_priority_level_spec`,
        the same as admission's), so an object stored without them reads as
        kube-apiserver would default it; a beta ``assuredConcurrencyShares``
        stands for ``nominalConcurrencyShares``, and a ``Queue`` response
        without ``queuing`` gets the queuing defaults.
        """
        meta, raw = obj.get("metadata") or {}, obj.get("spec") or {}
        name, uid = str(meta["name"]), str(meta.get("uid") or "")
        spec = copy.deepcopy(raw)
        limited = spec.get("limited")
        if isinstance(limited, dict) and "nominalConcurrencyShares" not in limited \
                and "assuredConcurrencyShares" in limited:
            limited["nominalConcurrencyShares"] = limited.pop("assuredConcurrencyShares")
        spec = kinds.defaulted_spec("PriorityLevelConfiguration", spec)
        if spec.get("type") == "Exempt":
            exempt = spec.get("exempt") or {}
            kinds.default_priority_level_spec({"exempt": exempt})
            return cls(name, uid, True, int(exempt["nominalConcurrencyShares"]), int(exempt["lendablePercent"]))
        if spec.get("type") != "Limited":
            raise ValueError(f"unknown priority level type {spec.get('type')!r}")
        limited = spec.get("limited") or {}
        kinds.default_priority_level_spec({"limited": limited})
        borrowing = limited.get("borrowingLimitPercent")
        response = limited.get("limitResponse") or {}
        queues = hand = length = 0
        if response.get("type", "Queue") == "Queue":
            queuing = response.get("queuing") or {}
            kinds.default_queuing(queuing)
            queues, hand, length = int(queuing["queues"]), int(queuing["handSize"]), int(queuing["queueLengthLimit"])
        return cls(name, uid, False, int(limited["nominalConcurrencyShares"]), int(limited["lendablePercent"]),
                   None if borrowing is None else int(borrowing), queues, min(hand, queues), length)


def _has(values: frozenset[str], value: str) -> bool:
    return "*" in values or value in values


def _subject(obj: Mapping[str, Any]) -> Subject:
    kind = str(obj["kind"])
    if kind == "User":
        return Subject(kind, str(obj["user"]["name"]))
    if kind == "Group":
        return Subject(kind, str(obj["group"]["name"]))
    if kind == "ServiceAccount":
        sa = obj["serviceAccount"]
        return Subject(kind, str(sa["name"]), str(sa["namespace"]))
    raise ValueError(f"unknown subject kind {kind!r}")


def _strings(values: Iterable[Any] | None) -> frozenset[str]:
    return frozenset(str(v) for v in values or ())


def _policy_rule(obj: Mapping[str, Any]) -> PolicyRule:
    return PolicyRule(
        tuple(_subject(s) for s in obj.get("subjects") or ()),
        tuple(ResourceRule(_strings(r.get("verbs")), _strings(r.get("apiGroups")), _strings(r.get("resources")),
                           bool(r.get("clusterScope")), _strings(r.get("namespaces")))
              for r in obj.get("resourceRules") or ()),
        tuple(NonResourceRule(_strings(r.get("verbs")), _strings(r.get("nonResourceURLs")))
              for r in obj.get("nonResourceRules") or ()))


_FALLBACK_CATCH_ALL_SCHEMA = FlowSchema.from_json(
    {"metadata": {"name": defaults.CATCH_ALL}, "spec": defaults.flow_schema_specs()[defaults.CATCH_ALL]})
FALLBACK_CATCH_ALL_LEVEL = PriorityLevel.from_json(
    {"metadata": {"name": defaults.CATCH_ALL}, "spec": defaults.priority_level_specs()[defaults.CATCH_ALL]})


@dataclass(frozen=True)
class Classification:
    """Where a request goes: its FlowSchema, the flow distinguisher, and the level's name."""

    flow_schema: FlowSchema
    distinguisher: str

    @property
    def priority_level(self) -> str:
        """The PriorityLevelConfiguration name."""
        return self.flow_schema.priority_level


class Classifier:
    """FlowSchemas ordered for matching, skipping dangling ones (those whose level is not in ``levels``)."""

    def __init__(self, schemas: Iterable[FlowSchema], levels: Iterable[str]):
        names = set(levels)
        self.schemas: tuple[FlowSchema, ...] = tuple(sorted(
            (s for s in schemas if s.priority_level in names), key=lambda s: (s.matching_precedence, s.name)))

    def classify(self, attrs: Attributes) -> Classification:
        """The first matching schema and its flow distinguisher; the built-in catch-all when none matches."""
        for schema in self.schemas:
            if schema.matches(attrs):
                return Classification(schema, schema.flow_distinguisher(attrs))
        schema = _FALLBACK_CATCH_ALL_SCHEMA
        return Classification(schema, schema.flow_distinguisher(attrs))


def width(attrs: Attributes, list_limit: int) -> int:
    """Seats a request occupies (kube's work estimator, simplified): 1, or for a LIST ceil(objects/100) in [1, 10].

    kapi does not know collection sizes here: a LIST with ``limit`` counts
    that many objects; without one it counts as the maximum (kube's
    estimate when the object count is unknown).
    """
    if attrs.verb != "list" or not attrs.resource_request:
        return 1
    if list_limit <= 0:
        return MAXIMUM_SEATS
    return max(1, min(MAXIMUM_SEATS, math.ceil(list_limit / OBJECTS_PER_SEAT)))


def parse_all(objects: Sequence[Mapping[str, Any]], parse: Any) -> list[Any]:
    """Parse each object with ``parse``, skipping malformed ones (a bad object must not stop the rest)."""
    out = []
    for obj in objects:
        try:
            out.append(parse(obj))
        except (ValueError, TypeError, KeyError, AttributeError):
            continue
    return out
