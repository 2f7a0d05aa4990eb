"""NamespaceLifecycle: no content in missing or terminating namespaces; the system namespaces are immortal.

k8s.io/apiserver plugin/pkg/admission/namespace/lifecycle/admission.go:

- DELETE of ``default``, ``kube-system`` or ``kube-public`` -> 403
  ``namespaces "kube-system" is forbidden: this namespace may not be deleted``;
  any other namespace DELETE is allowed (and its name is looked up live for
  a while afterwards).
- Operations on namespaces themselves, on cluster-scoped resources,
  deletions of namespaced content and access reviews are always allowed.
- CREATE or UPDATE in a namespace that does not exist -> 404
  ``namespaces "demo" not found``.
- CREATE in a namespace whose ``status.phase`` is Terminating -> 403
  ``configmaps "x" is forbidden: unable to create new content in namespace
  demo because it is being terminated`` with a NamespaceTerminating cause.
"""

from __future__ import annotations

from typing import Any, Protocol

from kapi import errors
from services.admission.chain import CREATE, DELETE, UPDATE, AdmissionRequest

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
_ACCESS_REVIEWS = frozenset({("authorization.k8s.io", "localsubjectaccessreviews")})


class NamespaceLookup(Protocol):
    """Where namespaces come from (:class:`services.admission.namespaces.NamespaceCache`)."""

    async def get(self, name: str, timeout: float) -> dict[str, Any] | None:
        """The namespace object or None if absent; raises StatusError if storage cannot answer."""
        ...

    def force_live_lookup(self, name: str) -> None:
        """Bypass any cache for ``name`` for a while (it is being deleted)."""
        ...


class NamespaceLifecycle:
    """The validating NamespaceLifecycle plugin over a :class:`NamespaceLookup`."""

    name = "NamespaceLifecycle"

    def __init__(self, namespaces: NamespaceLookup, immortal: frozenset[str] = IMMORTAL_NAMESPACES):
        self.namespaces = namespaces
        self.immortal = immortal

    def handles(self, operation: str) -> bool:
        """CREATE, UPDATE and DELETE."""
        return operation in (CREATE, UPDATE, DELETE)

    async def validate(self, request: AdmissionRequest) -> None:
        """Refuse as described in the module docstring; raises StatusError 403/404 (or 503 if storage is down)."""
        resource = request.resource
        if resource.group == "" and resource.resource == "namespaces":
            if request.operation == DELETE:
                if request.name in self.immortal:
                    raise errors.forbidden("namespaces", request.name, "this namespace may not be deleted")
                self.namespaces.force_live_lookup(request.name)
            return
        if not request.namespace or request.operation == DELETE:
            return
        if (resource.group, resource.resource) in _ACCESS_REVIEWS:
            return
        namespace = await self.namespaces.get(request.namespace, request.timeout)
        if namespace is None:
            raise errors.not_found("namespaces", request.namespace)
        if request.operation != CREATE:
            return
        status = namespace.get("status")
        if not isinstance(status, dict) or status.get("phase") != "Terminating":
            return
        err = errors.forbidden(resource.resource, request.name or "Unknown",
                               f"unable to create new content in namespace {request.namespace} because it is "
                               "being terminated", resource.group)
        err.details["causes"] = [{"reason": "NamespaceTerminating",
                                  "message": f"namespace {request.namespace} is being terminated",
                                  "field": "metadata.namespace"}]
        raise err
