"""Conversion between core/v1 Event and events.k8s.io/v1 Event, which are one stored resource.

kube-apiserver stores Events once (``/registry/events/<ns>/<name>``, the
core/v1 form) and serves them through both APIs, renaming fields on the way
(pkg/apis/events/v1 conversion): involvedObject <-> regarding, message <->
note, source <-> deprecatedSource, firstTimestamp/lastTimestamp/count <->
deprecatedFirstTimestamp/deprecatedLastTimestamp/deprecatedCount,
reportingComponent <-> reportingController. Every other field keeps its name.

Each form is written as its own Go struct encodes (:func:`kapi.k8sproto.zero.as_go_writes`): core/v1
writes ``source: {}``, ``firstTimestamp``/``lastTimestamp``/``eventTime: null``,
``reportingComponent``/``reportingInstance: ""`` (no ``omitempty``); events.k8s.io/v1 writes
``eventTime: null``, ``regarding: {}``, ``deprecatedSource: {}``, ``deprecatedFirstTimestamp``/
``deprecatedLastTimestamp: null`` and leaves out an empty ``reportingController``/``reportingInstance``
(k8s.io/api ``core/v1/types.go`` and ``events/v1/types.go`` Event json tags).
"""

from __future__ import annotations

from typing import Any

from kapi.k8sproto.goorder import wire_order
from kapi.k8sproto.zero import as_go_writes
from kapi.selectors import FieldLabels

#: events.k8s.io/v1's field label conversion (pkg/apis/events/v1/conversion.go AddFieldLabelConversionsForEvent):
#: its own field names, renamed to the core Event's field set (the core ``involvedObject.*`` are refused)
FIELD_LABELS = FieldLabels(
    frozenset({"reason", "source", "type", "metadata.namespace", "metadata.name"}),
    aliases={**{f"regarding.{f}": f"involvedObject.{f}"
                for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
             "reportingController": "reportingComponent"})

CORE = "v1"
EVENTS = "events.k8s.io/v1"

# core/v1 field -> events.k8s.io/v1 field
_RENAMES = {
    "involvedObject": "regarding",
    "message": "note",
    "source": "deprecatedSource",
    "firstTimestamp": "deprecatedFirstTimestamp",
    "lastTimestamp": "deprecatedLastTimestamp",
    "count": "deprecatedCount",
    "reportingComponent": "reportingController",
}
_BACK = {v: k for k, v in _RENAMES.items()}


def _rename(obj: dict[str, Any], names: dict[str, str], api_version: str) -> dict[str, Any]:
    out = {names.get(k, k): v for k, v in obj.items()}
    out["apiVersion"], out["kind"] = api_version, "Event"
    return wire_order(as_go_writes(out))


def to_events_v1(core: dict[str, Any]) -> dict[str, Any]:
    """A core/v1 Event as events.k8s.io/v1 (a new dict, with the fields events.k8s.io/v1 always writes)."""
    return _rename(core, _RENAMES, EVENTS)


def to_core(event: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event as core/v1 (a new dict, with the fields core/v1 always writes)."""
    return _rename(event, _BACK, CORE)


def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """``obj`` (either form) as ``desired`` ("v1" or "events.k8s.io/v1"); already there -> unchanged."""
    if obj.get("apiVersion") == desired:
        return obj
    return to_events_v1(obj) if desired == EVENTS else to_core(obj)
