"""The per-kind strategy contract: one :class:`Strategy` per built-in kind, one file per API group.

A built-in kind's rules live in one place, ``kapi/kinds/<group>.py``, as a
subclass of :class:`Strategy` registered with :func:`register`. Its methods
are the per-kind parts of kube-apiserver's generic registry
(k8s.io/apiserver ``pkg/registry/generic/registry/store.go`` calling the
kind's ``strategy.go``) and of the kind's API package:

- :meth:`Strategy.default` — ``SetDefaults_<Kind>`` (``pkg/apis/<group>/v1/defaults.go``);
- :meth:`Strategy.prepare_for_create` / :meth:`Strategy.prepare_for_update` —
  ``PrepareForCreate`` / ``PrepareForUpdate`` (status and spec resets);
- :meth:`Strategy.validate` / :meth:`Strategy.validate_update` —
  ``pkg/apis/<group>/validation`` (``Validate<Kind>``, ``Validate<Kind>Update``),
  returning field causes that become one 422 Invalid.

The generic ObjectMeta rules (``kapi.objectmeta``, ``kapi.strategy``) run
for every kind before these; a kind without a registered strategy gets the
no-op :class:`Strategy`. The admission service runs the chain
(``services/admission/pipeline.py``); see docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any, TypeVar

from kapi.attributes import UserInfo
from kapi.errors import Cause

Obj = dict[str, Any]


#: The fields ``metav1.ResetObjectMetaForStatus(meta, existingMeta)`` (apimachinery ``meta/v1/meta.go``) sets
#: from the existing object; managedFields stays the request's (the field manager tracked the status change).
RESET_OBJECT_META_FOR_STATUS: tuple[str, ...] = ("deletionTimestamp", "generation", "selfLink", "labels",
                                                 "annotations", "finalizers", "ownerReferences")
#: ``new.ObjectMeta = old.ObjectMeta`` with the request's managedFields kept (FlowSchema,
#: PriorityLevelConfiguration; a custom resource's statusStrategy copies the whole old object). name, namespace,
#: uid and resourceVersion are left out: kube has already checked them against the stored object (a request
#: for another name or namespace, a UID precondition, a stale resourceVersion) before the strategy runs, so the
#: copy only ever writes back what the request agreed with.
WHOLE_OBJECT_META: tuple[str, ...] = ("generateName", "selfLink", "generation", "creationTimestamp",
                                      "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
                                      "ownerReferences", "finalizers")


class Strategy:
    """The no-op strategy; subclasses override what their kind needs.

    ``group`` is the API group ("" for core), ``kind`` the Kind name.
    Objects are decoded JSON dicts; methods mutate in place and never raise
    for malformed input (validation reports it as causes instead).
    """

    group: str = ""
    kind: str = ""
    #: Whether updates keep ``metadata.generation`` (bumped when ``spec`` changes; kind strategies that never set
    #: it say False). Only kinds with a ``spec`` track it (:func:`kapi.strategy.tracks_generation`).
    tracks_generation: bool = True
    #: Whether the kind keeps a generation though it has no ``spec`` (an EndpointSlice's strategy sets it to 1 and
    #: bumps it on any change but metadata, see :meth:`bumps_generation`).
    generation_without_spec: bool = False
    #: Whether PrepareForCreate sets ``generation`` 1 (most kinds that track it); False: the first bump sets it to 1
    #: (a CSIDriver's strategy only bumps it on spec changes).
    generation_on_create: bool = True
    #: The kind's field labels beyond ``metadata.name``/``metadata.namespace`` (its ``GetAttrs`` and field label
    #: conversion): label -> the object's value as a string ("" when absent). Read by storage's field selectors.
    selectable_fields: Mapping[str, Callable[[Obj], str]] = MappingProxyType({})
    #: Whether :meth:`validate` reports missing fields itself, with kube's messages: the schema's bare
    #: ``Required value`` causes are then dropped (kube decodes into Go structs, which have no required fields;
    #: only the kind's validation names what is missing, e.g. ``verbs: Required value: verbs must contain ...``).
    validates_required: bool = False
    #: The kind's ``status`` as kube's typed encoding writes the zero value of its status struct: ``Status XStatus
    #: `json:"status,omitempty"``` is a struct, which ``omitempty`` never omits, so every object of the kind has a
    #: ``status``, holding the struct's fields that have no ``omitempty`` (``{"replicas": 0}`` for a ReplicaSet,
    #: ``{}`` for a Deployment). None: the kind has no status struct (ConfigMap, Secret, ...). Filled in by
    #: :func:`kapi.strategy.fill_status` on every write (kube: decode into the struct, encode it back).
    status_zero: Mapping[str, Any] | None = None
    #: Whether the kind's PrepareForCreate keeps the status a client sends (Node); otherwise a create starts from
    #: :attr:`status_zero` (``obj.Status = XStatus{}``) before :meth:`prepare_for_create` runs.
    keeps_status_on_create: bool = False
    #: The ``metadata`` fields a ``/status`` update takes from the stored object (absent there: dropped), as the
    #: kind's statusStrategy.PrepareForUpdate resets them; the request's other metadata is kept (the generic
    #: rest.BeforeUpdate rules still apply: generation, creationTimestamp, ...). Default:
    #: :data:`RESET_OBJECT_META_FOR_STATUS` (``metav1.ResetObjectMetaForStatus(new, old)``); every kind served
    #: with a status subresource sets its own: most reset only ``spec`` (``()``), a Pod its deletionTimestamp
    #: and ownerReferences, a Deployment its labels, FlowSchema/PriorityLevelConfiguration the whole ObjectMeta
    #: but managedFields (:data:`WHOLE_OBJECT_META`).
    status_reset_metadata: tuple[str, ...] = RESET_OBJECT_META_FOR_STATUS
    #: The top-level fields the kind's statusStrategy ``GetResetFields`` names: a ``/status`` writer owns none of
    #: them (the field manager's IgnoreFilter), though the strategy may keep what the request set there. Most
    #: kinds: ``spec``; a CustomResourceDefinition: ``metadata`` and ``spec`` (apiextensions-apiserver
    #: ``pkg/registry/customresourcedefinition/strategy.go``), so its ``/status`` labels belong to no one.
    status_reset_fields: tuple[str, ...] = ("spec",)

    def default(self, obj: Obj) -> None:
        """Apply the kind's defaults (v1 ``SetDefaults_<Kind>``) to ``obj`` in place."""

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """Per-kind ``PrepareForCreate``: e.g. drop ``status`` a client may not set.

        Runs after the generic ``rest.BeforeCreate`` (:func:`kapi.strategy.prepare_for_create`), so
        ``metadata.name``/``uid`` are final. ``user`` is the requester (kube's ``request.UserFrom(ctx)``).
        """

    def warnings_on_prepare(self, obj: Obj) -> list[str]:
        """The warnings kube's ``PrepareForCreate`` adds to the request (``warning.AddWarning``: a Pod's deprecated
        AppArmor annotations), from the object as admission hands it over, before :meth:`prepare_for_create`
        changes it; sent ahead of :meth:`warnings_on_create`'s. [] when none."""
        return []

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """Per-kind ``PrepareForUpdate`` (``subresource`` "" for the main resource, "status", "scale", ...).

        ``now`` (UTC; None: the clock) stamps what the kind timestamps, e.g. CSR condition times.
        """

    #: The subresources whose updates may bump ``metadata.generation`` (:meth:`bumps_generation`): the main resource
    #: and ``scale``; a Pod's ``ephemeralcontainers`` too (updatePodGeneration in its strategy).
    generation_subresources: tuple[str, ...] = ("", "scale")

    def bumps_generation(self, new: Obj, old: Obj) -> bool:
        """Whether a main-resource (or ``scale``) update moves ``metadata.generation`` on, for kinds that track it:
        kube's PrepareForUpdate bumps it when ``spec`` changed."""
        return new.get("spec") != old.get("spec")

    def validate(self, obj: Obj) -> list[Cause]:
        """``Validate<Kind>`` of a defaulted object about to be created or stored; [] when valid."""
        return []

    #: Whether kube's ``Validate<Kind>Update`` validates the new object (:meth:`validate_again`) before its
    #: update rules (:meth:`validate_update`), as ValidatePodUpdate, the workloads' ValidateUpdate (the spec,
    #: then selector immutability) and the PV/PVC and DRA claim strategies do; by default the update rules come
    #: first (ValidateServiceUpdate, ...). Only the order of the causes depends on it.
    revalidates_first: bool = False

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """The ``Validate<Kind>`` rules ``Validate<Kind>Update`` runs again on the ``new`` object of a
        main-resource update; by default all of :meth:`validate`. Kinds whose create rules differ on update
        (a CronJob's name length, a ``TZ`` the stored schedule had) override it."""
        return self.validate(new)

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """``WarningsOnCreate``: warning texts (kube's ``Warning: 299`` headers) for a valid object about to be
        created; [] when none."""
        return []

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """``WarningsOnUpdate`` of a valid main-resource update (``new`` prepared, its generation already moved
        on); [] when none."""
        return []

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """``Validate<Kind>Update``: rules comparing ``new`` to the stored ``old`` (immutability); [] when valid."""
        return []


S = TypeVar("S", bound=type[Strategy])

REGISTRY: dict[tuple[str, str], Strategy] = {}
_DEFAULT = Strategy()


def register(cls: S) -> S:
    """Class decorator: register one instance of ``cls`` for its (``group``, ``kind``); a duplicate is a bug."""
    key = (cls.group, cls.kind)
    if key in REGISTRY:
        raise ValueError(f"a strategy for {key} is already registered")
    REGISTRY[key] = cls()
    return cls


def strategy_for(group: str, kind: str) -> Strategy:
    """The registered strategy of ``group``/``kind``, else the no-op :class:`Strategy`."""
    return REGISTRY.get((group, kind), _DEFAULT)
