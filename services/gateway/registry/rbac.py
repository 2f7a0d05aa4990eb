"""RBAC privilege-escalation prevention on every write of Roles, ClusterRoles and their bindings.

As kube-apiserver's ``pkg/registry/rbac/{role,clusterrole,rolebinding,clusterrolebinding}/policybased``:
a Role or ClusterRole may be written only by a user who holds every
permission it grants (or may ``escalate`` it), a binding only by one who
holds the referenced role's permissions (or may ``bind`` it). The authz
service decides (``CheckEscalation``, services/authz/escalation.py) from
the object about to be stored and, for an update, the stored one; a
refusal is its 403 ``... is attempting to grant RBAC permissions not
currently held``. Runs for POST, PUT, every PATCH type, server-side apply
(create and update) and dry runs alike; authz unreachable is 503 (fail
closed).
"""

from __future__ import annotations

from kapi import jsonutil
from services.gateway.registry.hooks import Hooks, Write, register

GROUP = "rbac.authorization.k8s.io"
RESOURCES = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")


@register(GROUP, *RESOURCES)
class EscalationPrevention(Hooks):
    """Refuse a Role, ClusterRole, RoleBinding or ClusterRoleBinding write that grants more than the writer holds."""

    async def before_create(self, write: Write) -> None:
        """403 (authz's Status) when the new object escalates; 503 if authz is unreachable."""
        await _check(write)

    async def before_update(self, write: Write) -> None:
        """403 (authz's Status) when the updated object escalates; 503 if authz is unreachable."""
        await _check(write)


async def _check(write: Write) -> None:
    scope = write.scope
    await scope.backends.authz.check_escalation(scope.attrs, jsonutil.dumps(write.obj), write.old_raw,
                                                timeout=scope.timeout)
