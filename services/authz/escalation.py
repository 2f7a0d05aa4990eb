"""RBAC privilege-escalation prevention for writes of Roles, ClusterRoles and their bindings.

"Using RBAC Authorization", "Privilege escalation prevention and
bootstrapping" and kube's ``pkg/registry/rbac/*/policybased``: a user may
create or update

- a Role or ClusterRole only if they already hold every permission it
  grants (in its namespace, or cluster-wide for a ClusterRole), or may
  ``escalate`` roles/clusterroles; a ClusterRole with an
  ``aggregationRule`` needs full authority (cluster-admin) or ``escalate``;
- a RoleBinding or ClusterRoleBinding only if they hold every permission
  of the referenced role (in the binding's namespace), or may ``bind`` it.

Members of ``system:masters`` are exempt (EscalationAllowed). As kube,
every update is checked like a create unless it changes only the fields a
garbage collector changes (ownerReferences, finalizers): relabelling a
ClusterRole is checked too, since a label can aggregate it into
admin/edit/view; an aggregationRule on the old or the new ClusterRole
needs full authority.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kapi import errors
from kapi.attributes import SYSTEM_PRIVILEGED_GROUP, Attributes, UserInfo
from services.authz.authorizer import Authorizer, Decision
from services.authz.rbac import CLUSTER_ROLE, GROUP, ROLE, PolicyRule, PolicySource, rules_for
from services.authz.rules import compact, compact_string, covers

ROLE_RESOURCES = ("roles", "clusterroles")
BINDING_RESOURCES = ("rolebindings", "clusterrolebindings")
FULL_AUTHORITY = (PolicyRule(frozenset("*"), frozenset("*"), ("*",)),
                  PolicyRule(frozenset("*"), non_resource_urls=("*",)))


# metadata a garbage collector changes on its way to deleting an object (kube's IsOnlyMutatingGCFields), plus what
# the server itself rewrites on every write.
_GC_FIELDS = frozenset({"ownerReferences", "finalizers", "managedFields", "selfLink", "resourceVersion"})


def only_gc_fields_changed(obj: Mapping[str, Any], old: Mapping[str, Any]) -> bool:
    """True when ``obj`` differs from ``old`` at most in ownerReferences, finalizers (and managedFields,
    resourceVersion): the one update of an RBAC object that skips the escalation check
    (pkg/registry/rbac IsOnlyMutatingGCFields). Labels and annotations do count: a label can aggregate a
    ClusterRole into admin/edit/view."""
    def strip(value: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(value)
        meta = out.get("metadata")
        out["metadata"] = {k: v for k, v in meta.items() if k not in _GC_FIELDS} if isinstance(meta, Mapping) else meta
        return out

    return strip(obj) == strip(old)


def _rules(obj: Mapping[str, Any]) -> tuple[PolicyRule, ...]:
    return tuple(PolicyRule.from_json(r) for r in obj.get("rules") or () if isinstance(r, Mapping))


class EscalationChecker:
    """Checks one RBAC write against the writer's own permissions (see module docstring)."""

    def __init__(self, authorizer: Authorizer, source: PolicySource):
        self._authorizer = authorizer
        self._source = source

    async def check(self, attrs: Attributes, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
        """Return when the write of ``obj`` (``old``: the stored object of an update) may proceed.

        ``attrs`` are the write's attributes (user, resource, namespace).
        Raises 403 Forbidden with kube's message on escalation, 404 when a
        binding refers to a missing role the user may not ``bind``, 503
        before the policy is synced. Other resources pass unchecked.
        """
        if attrs.api_group != GROUP or SYSTEM_PRIVILEGED_GROUP in attrs.user.groups:
            return
        name = str((obj.get("metadata") or {}).get("name") or attrs.name)
        if attrs.resource in ROLE_RESOURCES:
            await self._check_role(attrs, obj, old, name)
        elif attrs.resource in BINDING_RESOURCES:
            await self._check_binding(attrs, obj, old, name)

    async def _allowed(self, user: UserInfo, verb: str, resource: str, namespace: str, name: str) -> bool:
        result = await self._authorizer.authorize(Attributes(
            user=user, verb=verb, resource_request=True, api_group=GROUP, api_version="*", resource=resource,
            namespace=namespace, name=name))
        return result.decision == Decision.ALLOW

    async def _check_role(self, attrs: Attributes, obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                          name: str) -> None:
        if old is not None and only_gc_fields_changed(obj, old):
            return
        if await self._allowed(attrs.user, "escalate", attrs.resource, attrs.namespace, attrs.name):
            return
        self._confirm(attrs, name, _rules(obj), attrs.namespace)
        if attrs.resource == "clusterroles" and (obj.get("aggregationRule") or (old or {}).get("aggregationRule")):
            if not self._covered(attrs.user, "", FULL_AUTHORITY)[0]:
                raise errors.forbidden(attrs.resource, name, "must have cluster-admin privileges to use the "
                                       "aggregationRule", GROUP)

    async def _check_binding(self, attrs: Attributes, obj: Mapping[str, Any], old: Mapping[str, Any] | None,
                             name: str) -> None:
        if old is not None and only_gc_fields_changed(obj, old):
            return
        ref = obj.get("roleRef") or {}
        if not isinstance(ref, Mapping):
            return  # validation (admission) refuses it
        kind, ref_name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        namespace = attrs.namespace if attrs.resource == "rolebindings" else ""
        target = {ROLE: "roles", CLUSTER_ROLE: "clusterroles"}.get(kind)
        if target is None:
            return  # validation refuses an unknown roleRef.kind
        if await self._allowed(attrs.user, "bind", target, namespace, ref_name):
            return
        self._require_synced()
        role = self._source.role(namespace, ref_name) if kind == ROLE else self._source.cluster_role(ref_name)
        if role is None:
            raise errors.not_found(target, ref_name, GROUP)
        self._confirm(attrs, name, role.rules, namespace)

    def _require_synced(self) -> None:
        if not self._source.synced:
            raise errors.unavailable("authorization policy not yet synced")

    def _covered(self, user: UserInfo, namespace: str, wanted: tuple[PolicyRule, ...]
                 ) -> tuple[bool, list[PolicyRule], tuple[str, ...]]:
        self._require_synced()
        owner = rules_for(self._source, user, namespace)
        ok, missing = covers(owner.rules, wanted)
        return ok, missing, owner.errors

    def _confirm(self, attrs: Attributes, name: str, wanted: tuple[PolicyRule, ...], namespace: str) -> None:
        """ConfirmNoEscalation: 403 listing the permissions the user does not hold."""
        ok, missing, problems = self._covered(attrs.user, namespace, wanted)
        if ok:
            return
        lines = sorted({compact_string(r) for r in compact(missing)})
        groups = "[" + " ".join(json.dumps(g) for g in attrs.user.groups) + "]"
        message = (f"user {json.dumps(attrs.user.username)} (groups={groups}) is attempting to grant RBAC "
                   f"permissions not currently held:\n" + "\n".join(lines))
        if problems:
            message += f"; resolution errors: [{', '.join(problems)}]"
        raise errors.forbidden(attrs.resource, name, message, GROUP)
