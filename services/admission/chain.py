"""Admission plugins and the chain that runs them (k8s.io/apiserver pkg/admission).

A plugin declares the operations it handles (``handles``) and has either or
both capabilities: :class:`MutationInterface` (``admit``: may change the
object) and :class:`ValidationInterface` (``validate``: may only refuse).
The chain runs every handling mutator in order, then, after the strategy
and validation, every handling validator in order (``chain.go``). A plugin
refuses by raising :class:`kapi.errors.StatusError`; the first refusal wins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kapi.attributes import Attributes
from kapi.resources import Resource

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"
OPERATIONS = frozenset({CREATE, UPDATE, DELETE, CONNECT})


@dataclass
class AdmissionRequest:
    """One write as admission plugins see it (admission.Attributes).

    ``object`` is the decoded object (None for DELETE and CONNECT); a
    mutator may change it in place or replace it. ``old_object`` is the
    stored object for UPDATE and DELETE (None if not given). ``name`` is
    the URL's name or, for a create, the object's (after the strategy ran,
    the generated one). ``timeout`` is the seconds left for any call a
    plugin makes (the RPC deadline). ``warnings`` and ``audit_annotations``
    collect what plugins add. ``options`` are the operation's options as the gateway sent them (see
    :meth:`operation_options`).
    """

    operation: str
    attributes: Attributes
    resource: Resource
    kind: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    dry_run: bool = False
    timeout: float = 10.0
    warnings: list[str] = field(default_factory=list)
    audit_annotations: dict[str, str] = field(default_factory=dict)
    options: dict[str, Any] | None = None

    def operation_options(self) -> dict[str, Any] | None:
        """The AdmissionReview's ``request.options``: meta.k8s.io/v1 CreateOptions, UpdateOptions or DeleteOptions
        (the gateway's, else ``dryRun: [All]`` alone on a dry run); None for CONNECT (kube passes the connect
        options as the object)."""
        if self.operation == CONNECT:
            return None
        if self.options is not None:
            return self.options
        kind = {CREATE: "CreateOptions", DELETE: "DeleteOptions"}.get(self.operation, "UpdateOptions")
        options: dict[str, Any] = {"kind": kind, "apiVersion": "meta.k8s.io/v1"}
        if self.dry_run:
            options["dryRun"] = ["All"]
        return options

    @property
    def namespace(self) -> str:
        """The request's namespace ("" for cluster-scoped resources)."""
        return self.attributes.namespace

    @property
    def subresource(self) -> str:
        """The request's subresource ("" for the main resource)."""
        return self.attributes.subresource

    @property
    def name(self) -> str:
        """The URL's name, else the object's name or generateName, else the old object's name."""
        if self.attributes.name:
            return self.attributes.name
        for obj in (self.object, self.old_object):
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            if isinstance(meta, dict):
                name = meta.get("name") or meta.get("generateName")
                if isinstance(name, str) and name:
                    return name
        return ""

    @property
    def review_name(self) -> str:
        """The name admission attributes carry (webhooks' and policies' ``request.name``, ``resourceNames``
        matching): the URL's name, else a create's ``metadata.name`` as it is now: empty for a generateName create
        while mutating, the generated name once validating (kube's create handler takes ``ObjectName(obj)``, and
        ``rest.AdmissionToValidateObjectFunc`` fills the generated one "in case the generated name is populated").
        Never the generateName, which only :attr:`name` (errors' ``extractResourceName``) falls back to."""
        if self.attributes.name or self.operation != CREATE:
            return self.attributes.name
        meta = self.object.get("metadata") if isinstance(self.object, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        return name if isinstance(name, str) else ""


class Plugin(Protocol):
    """An admission plugin: its registered name and the operations it handles (admission.Interface)."""

    name: str

    def handles(self, operation: str) -> bool:
        """True if the plugin wants requests of ``operation`` (CREATE, UPDATE, DELETE, CONNECT)."""
        ...


@runtime_checkable
class MutationInterface(Protocol):
    """A plugin that may change the object (admission.MutationInterface)."""

    async def admit(self, request: AdmissionRequest) -> None:
        """Mutate ``request.object``; raise StatusError to refuse."""
        ...


@runtime_checkable
class ValidationInterface(Protocol):
    """A plugin that may refuse but not change (admission.ValidationInterface)."""

    async def validate(self, request: AdmissionRequest) -> None:
        """Raise StatusError to refuse ``request``."""
        ...


class Chain:
    """The ordered plugins; mutators and validators are run in separate passes."""

    def __init__(self, plugins: Sequence[Plugin]):
        self.plugins: tuple[Plugin, ...] = tuple(plugins)
        self.mutators = [p for p in self.plugins if isinstance(p, MutationInterface)]
        self.validators = [p for p in self.plugins if isinstance(p, ValidationInterface)]

    @property
    def names(self) -> list[str]:
        """The plugin names in run order."""
        return [p.name for p in self.plugins]

    async def admit(self, request: AdmissionRequest) -> None:
        """Run every mutator that handles the operation; the first StatusError propagates."""
        for plugin in self.mutators:
            if plugin.handles(request.operation):  # type: ignore[attr-defined]
                await plugin.admit(request)

    async def validate(self, request: AdmissionRequest) -> None:
        """Run every validator that handles the operation; the first StatusError propagates."""
        for plugin in self.validators:
            if plugin.handles(request.operation):  # type: ignore[attr-defined]
                await plugin.validate(request)
