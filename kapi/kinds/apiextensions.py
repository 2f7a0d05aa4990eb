"""The apiextensions.k8s.io group's CustomResourceDefinition: defaults and the registry strategy.

- Defaults (apiextensions-apiserver ``pkg/apis/apiextensions/v1/defaults.go``):
  ``spec.names.singular`` the lower-cased kind, ``spec.names.listKind``
  ``<kind>List``, ``spec.conversion`` ``{strategy: None}``, a conversion
  webhook service's ``port`` 443, and ``status.storedVersions`` the storage
  version when empty.
- Strategy (``pkg/registry/customresourcedefinition/strategy.go``): a create
  starts from the zero status, typed-encoded as kube writes it
  (``{"conditions": null, "acceptedNames": {"plural": "", "kind": ""},
  "storedVersions": [<storage version>]}``, Go's field order); an update of
  the main resource keeps the stored status and adds a new storage version
  to ``storedVersions``; generation is bumped by spec changes (generic); a
  ``/status`` update keeps the stored spec but, unlike other kinds, the
  request's labels, annotations, finalizers and ownerReferences
  (statusStrategy.PrepareForUpdate resets the new ObjectMeta from itself).

Validation is :mod:`kapi.crd.validation` (run by the admission pipeline).
The ``customresourcecleanup.apiextensions.k8s.io`` finalizer and the
Terminating condition are added by the first DELETE (kube's REST.Delete;
services/gateway/registry/deletion.py), never at create.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kapi.attributes import UserInfo
from kapi.kinds.base import Obj, Strategy, register

#: v1 CustomResourceDefinitionStatus{} as Go encodes it: conditions and storedVersions have no omitempty (nil ->
#: null), acceptedNames is a struct whose plural and kind have none.
STATUS_ZERO: dict[str, Any] = {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
                               "storedVersions": None}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def storage_version(obj: Obj) -> str:
    """The name of the first ``spec.versions`` entry with ``storage: true`` ("" if none)."""
    for v in _dict(obj.get("spec")).get("versions") or []:
        if isinstance(v, dict) and v.get("storage") is True:
            return str(v.get("name") or "")
    return ""


def add_stored_version(obj: Obj) -> None:
    """Append the storage version to ``status.storedVersions`` unless it is there (PrepareForCreate/Update)."""
    storage = storage_version(obj)
    if not storage:
        return
    status = obj.get("status")
    if not isinstance(status, dict):
        status = obj["status"] = {}
    stored = status.get("storedVersions")
    stored = list(stored) if isinstance(stored, list) else []
    if storage not in stored:
        status["storedVersions"] = [*stored, storage]


def default_crd(obj: Obj) -> None:
    """SetDefaults_CustomResourceDefinition (+ Spec, + ServiceReference) in place."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict):
        raw_kind = names.get("kind")
        kind = raw_kind if isinstance(raw_kind, str) else ""
        if not names.get("singular"):
            names["singular"] = kind.lower()
        if not names.get("listKind") and kind:
            names["listKind"] = kind + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = _dict(_dict(_dict(spec.get("conversion")).get("webhook")).get("clientConfig")).get("service")
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443
    status = obj.get("status")
    if isinstance(status, dict) and not status.get("storedVersions"):
        storage = storage_version(obj)
        if storage:
            status["storedVersions"] = [storage]


@register
class CustomResourceDefinitionStrategy(Strategy):
    """CustomResourceDefinition: v1 defaults, the zero status on create, storedVersions kept current."""

    group, kind = "apiextensions.k8s.io", "CustomResourceDefinition"
    status_zero = STATUS_ZERO
    #: statusStrategy.PrepareForUpdate calls ``ResetObjectMetaForStatus(&newObj.ObjectMeta, &newObj.ObjectMeta)``:
    #: a ``/status`` write may change labels, annotations, finalizers and ownerReferences.
    status_reset_metadata = ()
    #: statusStrategy.GetResetFields: ``metadata`` and ``spec``, so the ``/status`` manager owns no metadata.
    status_reset_fields = ("metadata", "spec")

    def default(self, obj: Obj) -> None:
        """:func:`default_crd`."""
        default_crd(obj)

    def prepare_for_create(self, obj: Obj, *, user: UserInfo | None = None) -> None:
        """``crd.Status = {}`` (done generically from :data:`STATUS_ZERO`), then storedVersions = [storage]."""
        add_stored_version(obj)

    def prepare_for_update(self, new: Obj, old: Obj, subresource: str = "", *, now: datetime | None = None) -> None:
        """Main resource: the stored status is kept (generic) and a new storage version is added to it."""
        if not subresource:
            add_stored_version(new)
