"""Per-resource hooks of the one write path, registered once per (group, resource).

kube-apiserver wraps a resource's generic store with REST logic of its own:
RBAC's ``policybased`` storage refuses privilege escalation
(``pkg/registry/rbac/*/policybased/storage.go``), the Service REST storage
allocates and releases clusterIPs and nodePorts
(``pkg/registry/core/service/storage/alloc.go``), the CertificateApproval
and CertificateSigning checks ask the authorizer about signers. Here each
such piece is a :class:`Hooks` subclass registered with :func:`register`
for the resources it guards; :mod:`services.gateway.registry.store` calls
:func:`hooks_for` on every create, update and delete, whatever the verb,
content type, subresource or dry run, so a hook cannot be skipped by
choosing another way to write (docs/architecture.md, "The request path").

Hooks see the object after admission (mutating and validating), i.e. the
object about to be stored, and may change it (allocation) or raise a
StatusError (refusal). A hook that reserves something registers an undo
with :meth:`Write.on_failure`; one that frees something once the write
landed uses :meth:`Write.on_success`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from services.gateway.scope import RequestScope

CREATE, UPDATE, DELETE = "CREATE", "UPDATE", "DELETE"

Callback = Callable[[], Awaitable[None]]


@dataclass
class Write:
    """One write on its way to storage.

    ``operation`` is CREATE, UPDATE or DELETE; ``obj`` the object to store
    (for DELETE: the stored object being deleted), ``old`` the stored object
    of an UPDATE (decoded; ``old_raw`` its JSON bytes), ``dry_run`` whether
    nothing will be persisted. ``subresource`` is the request's ("" for the
    main resource).
    """

    scope: RequestScope
    operation: str
    obj: dict[str, Any]
    old: dict[str, Any] | None = None
    old_raw: bytes = b""
    dry_run: bool = False
    undo: list[Callback] = field(default_factory=list)
    done: list[Callback] = field(default_factory=list)

    @property
    def subresource(self) -> str:
        """The request's subresource ("" for the main resource)."""
        return self.scope.info.subresource

    def on_failure(self, callback: Callback) -> None:
        """Run ``callback`` if the storage write fails (release what a hook reserved)."""
        self.undo.append(callback)

    def on_success(self, callback: Callback) -> None:
        """Run ``callback`` after the storage write succeeded (release what the old object held)."""
        self.done.append(callback)


class Hooks:
    """The no-op hooks; subclasses override the operations they guard. Each method may raise a StatusError."""

    async def before_create(self, write: Write) -> None:
        """Before storing a new object (after admission); may change ``write.obj``."""

    async def before_update(self, write: Write) -> None:
        """Before storing an updated object (after admission); may change ``write.obj``."""

    async def before_delete(self, write: Write) -> None:
        """Before anything of a delete happens (dry runs included): may refuse it (``write.obj`` is the stored
        object)."""

    async def after_delete(self, write: Write) -> None:
        """After the object was removed from storage (not called for dry runs or finalizer-pending deletes)."""


H = TypeVar("H", bound=type[Hooks])

_REGISTRY: dict[tuple[str, str], list[Hooks]] = {}


def register(group: str, *resources: str) -> Callable[[H], H]:
    """Class decorator: run one instance of the class on every write of ``group``/``resources``."""

    def decorate(cls: H) -> H:
        instance = cls()
        for resource in resources:
            _REGISTRY.setdefault((group, resource), []).append(instance)
        return cls

    return decorate


def hooks_for(group: str, resource: str) -> tuple[Hooks, ...]:
    """The hooks registered for ``group``/``resource``, in registration order (empty for most resources)."""
    return tuple(_REGISTRY.get((group, resource), ()))


def registered() -> dict[tuple[str, str], tuple[str, ...]]:
    """(group, resource) -> the hook class names guarding it (for tests and docs)."""
    return {key: tuple(type(h).__name__ for h in hooks) for key, hooks in _REGISTRY.items()}
