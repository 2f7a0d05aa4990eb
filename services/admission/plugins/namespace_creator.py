"""NamespaceCreator: the seeds' namespace admission plugin — who created a Namespace is written on it.

On CREATE of a Namespace the requesting user's name, uid and groups
(``system:authenticated`` left out) are written to the annotations in
:mod:`kapi.tenancy` (``tenancy.kapi.io/creator``, ``-uid``, ``-groups``);
whatever the client put there is overwritten. ``tenancy.kapi.io/tenant-group``
may be set by the client to one of its own groups (group-based tenancy);
naming a group the user is not in is refused (403). On UPDATE the
annotations are put back to their stored values (an attempt to change or
remove them has no effect, through the object or its ``status`` and
``finalize`` subresources alike), so they cannot be altered after creation.
The tenant RBAC controller binds the ``namespace-creator`` ClusterRole to
the recorded creator.
"""

from __future__ import annotations

from typing import Any

from kapi import errors, tenancy
from services.admission.chain import CREATE, UPDATE, AdmissionRequest

_IMPLICIT_GROUPS = frozenset({"system:authenticated"})


def _annotations(obj: dict[str, Any] | None) -> dict[str, Any]:
    meta = (obj or {}).get("metadata")
    if not isinstance(meta, dict):
        return {}
    ann = meta.get("annotations")
    return dict(ann) if isinstance(ann, dict) else {}


class NamespaceCreator:
    """Mutating plugin recording (and freezing) a Namespace's creator."""

    name = "NamespaceCreator"

    def handles(self, operation: str) -> bool:
        """CREATE and UPDATE."""
        return operation in (CREATE, UPDATE)

    async def admit(self, request: AdmissionRequest) -> None:
        """Write or restore the creator annotations of a Namespace; raises StatusError 403 for a tenant group
        the user is not a member of."""
        resource = request.resource
        # Every update path counts, subresources included: /finalize and /status may carry metadata too, and the
        # tenant RBAC controller trusts these annotations.
        if resource.group != "" or resource.resource != "namespaces":
            return
        obj = request.object
        if not isinstance(obj, dict):
            return
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            return
        annotations = _annotations(obj)
        if request.operation == CREATE:
            user = request.attributes.user
            groups = [g for g in user.groups if g not in _IMPLICIT_GROUPS]
            wanted = annotations.get(tenancy.TENANT_GROUP)
            if wanted is not None and wanted not in groups:
                raise errors.forbidden("namespaces", request.name,
                                       f"user {user.username!r} is not a member of group {wanted!r} named by "
                                       f"{tenancy.TENANT_GROUP}")
            annotations.update({tenancy.CREATOR: user.username, tenancy.CREATOR_UID: user.uid,
                                tenancy.CREATOR_GROUPS: ",".join(groups)})
        else:
            old = _annotations(request.old_object)
            for key in tenancy.MANAGED:
                if key in old:
                    annotations[key] = old[key]
                else:
                    annotations.pop(key, None)
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)
