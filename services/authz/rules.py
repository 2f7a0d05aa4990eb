"""Comparing what users hold: RBAC rule coverage and kube's compact rule text.

Mirrors kube's ``pkg/registry/rbac/validation`` (what a user holds,
``RulesFor``, is :func:`services.authz.rbac.rules_for`, over the RBAC
authorizer's own walk of the bindings): :func:`covers` is
``Covers(ownerRules, servantRules)`` used by privilege escalation
prevention, breaking servant rules down into one verb x group x resource x
name (or verb x URL) each; :func:`compact_string` prints a rule
as kube's ``CompactString`` (``{APIGroups:[""], Resources:["pods"], Verbs:["get"]}``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from services.authz.rbac import ALL, PolicyRule


def _url_covers(owner: str, servant: str) -> bool:
    if owner == ALL or owner == servant:
        return True
    return owner.endswith(ALL) and servant.startswith(owner.rstrip(ALL))


def _resource_covers(owner: Sequence[str], servant: str) -> bool:
    if ALL in owner or servant in owner:
        return True
    _, sep, sub = servant.partition("/")
    return bool(sep) and f"*/{sub}" in owner


def rule_covers(owner: PolicyRule, servant: PolicyRule) -> bool:
    """Whether ``owner`` grants everything ``servant`` does (ruleCovers)."""
    if not (ALL in owner.verbs or owner.verbs.issuperset(servant.verbs)):
        return False
    if not (ALL in owner.api_groups or owner.api_groups.issuperset(servant.api_groups)):
        return False
    if not all(_resource_covers(owner.resources, r) for r in servant.resources):
        return False
    if not all(any(_url_covers(o, s) for o in owner.non_resource_urls) for s in servant.non_resource_urls):
        return False
    if not servant.resource_names:
        return not owner.resource_names
    return not owner.resource_names or owner.resource_names.issuperset(servant.resource_names)


def breakdown(rule: PolicyRule) -> list[PolicyRule]:
    """Split a rule into atomic rules: one verb, group, resource and name each, or one verb and URL (BreakdownRule)."""
    out: list[PolicyRule] = []
    for group in sorted(rule.api_groups):
        for resource in rule.resources:
            for verb in sorted(rule.verbs):
                if rule.resource_names:
                    out.extend(PolicyRule(frozenset({verb}), frozenset({group}), (resource,), frozenset({name}))
                               for name in sorted(rule.resource_names))
                else:
                    out.append(PolicyRule(frozenset({verb}), frozenset({group}), (resource,)))
    for url in rule.non_resource_urls:
        for verb in sorted(rule.verbs):
            out.append(PolicyRule(frozenset({verb}), non_resource_urls=(url,)))
    return out


def covers(owner: Sequence[PolicyRule], servant: Sequence[PolicyRule]) -> tuple[bool, list[PolicyRule]]:
    """(covered, missing atomic rules): whether ``owner`` rules grant every permission of ``servant`` (Covers)."""
    missing: list[PolicyRule] = []
    for rule in servant:
        for atom in breakdown(rule):
            if not any(rule_covers(o, atom) for o in owner):
                missing.append(atom)
    return not missing, missing


def compact(rules: Sequence[PolicyRule]) -> list[PolicyRule]:
    """Merge atomic resource rules that differ only in verb (CompactRules), keeping first-seen order."""
    merged: dict[tuple[frozenset[str], tuple[str, ...], frozenset[str], tuple[str, ...]], set[str]] = {}
    for rule in rules:
        key = (rule.api_groups, rule.resources, rule.resource_names, rule.non_resource_urls)
        merged.setdefault(key, set()).update(rule.verbs)
    return [PolicyRule(frozenset(verbs), groups, resources, names, urls)
            for (groups, resources, names, urls), verbs in merged.items()]


def _strs(values: Iterable[str]) -> str:
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def compact_string(rule: PolicyRule) -> str:
    """kube's ``CompactString``: ``{APIGroups:[""], Resources:["pods"], ResourceNames:["x"], Verbs:["get"]}``."""
    parts = []
    if rule.api_groups:
        parts.append(f"APIGroups:{_strs(sorted(rule.api_groups))}")
    if rule.resources:
        parts.append(f"Resources:{_strs(rule.resources)}")
    if rule.non_resource_urls:
        parts.append(f"NonResourceURLs:{_strs(rule.non_resource_urls)}")
    if rule.resource_names:
        parts.append(f"ResourceNames:{_strs(sorted(rule.resource_names))}")
    if rule.verbs:
        parts.append(f"Verbs:{_strs(sorted(rule.verbs))}")
    return "{" + ", ".join(parts) + "}"
