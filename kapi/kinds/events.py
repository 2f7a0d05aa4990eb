"""Event validation (core/v1 and events.k8s.io, one storage) as kube-apiserver 1.37 does it, cause for cause.

Source: kubernetes ``pkg/apis/core/validation/events.go`` (kube 1.37):
``ValidateEventCreate``, ``ValidateEventUpdate``, ``legacyValidateEvent``,
``validateV1EventSeries``; the request version comes from
``pkg/registry/core/event/strategy.go`` (``requestGroupVersion``: the
request's API group and version).

The rules depend on the version of the request, not of the stored object:

- ``v1`` (core) and ``events.k8s.io/v1beta1``: only ``legacyValidateEvent``.
  An Event without ``eventTime`` (the old shape) only needs
  ``involvedObject.namespace`` to match its namespace (or be empty in
  ``default``); one with ``eventTime`` also needs reportingController /
  reportingInstance / action / reason (length limits 128, message 1024).
  For a core/v1 request the reportingController causes are reported at
  ``reportingComponent`` (its core/v1 name); otherwise at ``reportingController``.
- ``events.k8s.io/v1`` (and anything else): the legacy rules, then the strict
  ones: ObjectMeta with a DNS-subdomain name (elsewhere), ``series``,
  ``eventTime`` required, ``type`` Normal/Warning, the deprecated fields unset;
  an update may change only ``series`` (and metadata).

Objects are core/v1-shaped dicts (convert an events.k8s.io body with
:func:`kapi.events.to_core` first); field paths are kube's internal names,
which are the core/v1 JSON names (``involvedObject.namespace``, ``message``,
``source``) whatever the request's API, except the reportingController quirk
above. kube never truncates a message: a long one is refused (1024 bytes, only
for new-style events) or accepted.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.events import to_core
from kapi.k8sproto.zero import fill_go_fields
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import IMMUTABLE, go_quote, go_time_string, parse_time
from kapi.objectmeta import bad_value, invalid, required
from kapi.validation import is_dns1123_subdomain, is_qualified_name
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_str as _str

__all__ = [
    "CORE_V1",
    "EVENTS_V1",
    "EVENTS_V1BETA1",
    "validate_event_create",
    "validate_event_update",
    "EventsV1EventStrategy",
]


CORE_V1 = "v1"
EVENTS_V1 = "events.k8s.io/v1"
EVENTS_V1BETA1 = "events.k8s.io/v1beta1"
_LEGACY_ONLY = (CORE_V1, EVENTS_V1BETA1)

REPORTING_INSTANCE_LIMIT = 128  # ReportingInstanceLengthLimit
ACTION_LIMIT = 128  # ActionLengthLimit
REASON_LIMIT = 128  # ReasonLengthLimit
NOTE_LIMIT = 1024  # NoteLengthLimit
NAMESPACE_MISMATCH = "does not match event.namespace"
NEEDS_UNSET = "needs to be unset"


def _at_most(limit: int) -> str:
    return f"can have at most {limit} characters"


def _is_zero(value: Any) -> bool:
    """``t.Time == time.Time{}``: an absent or null time."""
    return value is None or parse_time(value) is None and not (isinstance(value, str) and value)


def _legacy(event: Obj, request_version: str) -> list[Cause]:
    """legacyValidateEvent."""
    out: list[Cause] = []
    namespace = _str(_dict(event.get("metadata")).get("namespace"))
    involved_ns = _str(_dict(event.get("involvedObject")).get("namespace"))
    controller_path = "reportingComponent" if request_version == CORE_V1 else "reportingController"
    if _is_zero(event.get("eventTime")):
        if not involved_ns:
            if namespace not in ("", "default"):
                out.append(invalid("involvedObject.namespace", involved_ns, NAMESPACE_MISMATCH))
        elif namespace != involved_ns:
            out.append(invalid("involvedObject.namespace", involved_ns, NAMESPACE_MISMATCH))
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            out.append(invalid("involvedObject.namespace", involved_ns, NAMESPACE_MISMATCH))
        controller = _str(event.get("reportingComponent"))
        if not controller:
            out.append(required(controller_path))
        out.extend(invalid(controller_path, controller, msg) for msg in is_qualified_name(controller))
        instance = _str(event.get("reportingInstance"))
        if not instance:
            out.append(required("reportingInstance"))
        if len(instance.encode()) > REPORTING_INSTANCE_LIMIT:
            out.append(invalid("reportingInstance", "", _at_most(REPORTING_INSTANCE_LIMIT)))
        action = _str(event.get("action"))
        if not action:
            out.append(required("action"))
        if len(action.encode()) > ACTION_LIMIT:
            out.append(invalid("action", "", _at_most(ACTION_LIMIT)))
        reason = _str(event.get("reason"))
        if not reason:
            out.append(required("reason"))
        if len(reason.encode()) > REASON_LIMIT:
            out.append(invalid("reason", "", _at_most(REASON_LIMIT)))
        if len(_str(event.get("message")).encode()) > NOTE_LIMIT:
            out.append(invalid("message", "", _at_most(NOTE_LIMIT)))
    out.extend(invalid("namespace", namespace, msg) for msg in is_dns1123_subdomain(namespace))
    return out


def _series(event: Obj) -> list[Cause]:
    """validateV1EventSeries: a set ``series`` needs ``count`` >= 2 and a ``lastObservedTime``."""
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    out: list[Cause] = []
    count = _int(series.get("count"))
    if (count or 0) < 2:
        out.append(invalid("series.count", "", "should be at least 2"))
    if _is_zero(series.get("lastObservedTime")):
        out.append(required("series.lastObservedTime"))
    return out


def validate_event_create(event: Obj, request_version: str = CORE_V1) -> list[Cause]:
    """ValidateEventCreate of a core/v1-shaped Event created through ``request_version`` (``"v1"``,
    ``"events.k8s.io/v1"``, ``"events.k8s.io/v1beta1"``; "" — no request info — is strict, as in kube). The strict
    part's ObjectMeta check (a DNS-subdomain name) is not here. [] when valid."""
    out = _legacy(event, request_version)
    if request_version in _LEGACY_ONLY:
        return out
    out.extend(_series(event))
    if _is_zero(event.get("eventTime")):
        out.append(required("eventTime"))
    kind = _str(event.get("type"))
    if kind not in ("Normal", "Warning"):
        out.append(invalid("type", "", f"has invalid value: {kind}"))
    if not _is_zero(event.get("firstTimestamp")):
        out.append(invalid("firstTimestamp", "", NEEDS_UNSET))
    if not _is_zero(event.get("lastTimestamp")):
        out.append(invalid("lastTimestamp", "", NEEDS_UNSET))
    if (_int(event.get("count")) or 0) != 0:
        out.append(invalid("count", "", NEEDS_UNSET))
    source = _dict(event.get("source"))
    if _str(source.get("component")) or _str(source.get("host")):
        out.append(invalid("source", "", NEEDS_UNSET))
    return out


# ------------------------------------------------------------ update (strict): immutability

_REFERENCE_FIELDS = (("Kind", "kind"), ("Namespace", "namespace"), ("Name", "name"), ("UID", "uid"),
                     ("APIVersion", "apiVersion"), ("ResourceVersion", "resourceVersion"), ("FieldPath", "fieldPath"))


def _go_reference(ref: Any) -> str:
    """A core.ObjectReference as ``%#v`` prints it."""
    ref = _dict(ref)
    return "core.ObjectReference{" + ", ".join(f"{go}:{go_quote(_str(ref.get(js)))}" for go, js in _REFERENCE_FIELDS) \
        + "}"


def _go_source(source: Any) -> str:
    """A core.EventSource as ``%#v`` prints it."""
    source = _dict(source)
    return f"core.EventSource{{Component:{go_quote(_str(source.get('component')))}, " \
           f"Host:{go_quote(_str(source.get('host')))}}}"


def _go_time(value: Any) -> str:
    """A metav1.Time / MicroTime as its String() prints it (:func:`kapi.kinds.fields.go_time_string`); the zero
    time ``0001-01-01 00:00:00 +0000 UTC``."""
    parsed = parse_time(value)
    return "0001-01-01 00:00:00 +0000 UTC" if parsed is None else go_time_string(parsed)


def _same_time(a: Any, b: Any) -> bool:
    """Semantic equality of two times (the same instant; both zero alike)."""
    ta, tb = parse_time(a), parse_time(b)
    if ta is None or tb is None:
        return _is_zero(a) and _is_zero(b) or a == b
    return ta == tb


def _norm_ref(ref: Any) -> dict[str, str]:
    return {js: _str(_dict(ref).get(js)) for _, js in _REFERENCE_FIELDS}


def validate_event_update(new: Obj, old: Obj, request_version: str = CORE_V1) -> list[Cause]:
    """ValidateEventUpdate of core/v1-shaped Events through ``request_version`` (see :func:`validate_event_create`):
    the legacy rules on ``new``; for a strict request also a changed ``series`` validated, and every other field
    immutable (``Invalid value: <new value as Go prints it>: field is immutable``), in kube's order: involvedObject,
    reason, message, source, firstTimestamp, lastTimestamp, count, reason (again, as kube does), type, eventTime
    (compared to the microsecond), action, related, reportingController, reportingInstance. ObjectMeta update rules
    are not here. [] when valid."""
    out = _legacy(new, request_version)
    if request_version in _LEGACY_ONLY:
        return out
    if _dict(new.get("series")) != _dict(old.get("series")) or (new.get("series") is None) != (
            old.get("series") is None):
        out.extend(_series(new))

    def changed(path: str, shown: str) -> None:
        out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}: {IMMUTABLE}", path))

    if _norm_ref(new.get("involvedObject")) != _norm_ref(old.get("involvedObject")):
        changed("involvedObject", _go_reference(new.get("involvedObject")))
    for path in ("reason", "message"):
        if _str(new.get(path)) != _str(old.get(path)):
            changed(path, bad_value(_str(new.get(path))))
    new_source, old_source = _dict(new.get("source")), _dict(old.get("source"))
    if (_str(new_source.get("component")), _str(new_source.get("host"))) != (
            _str(old_source.get("component")), _str(old_source.get("host"))):
        changed("source", _go_source(new_source))
    for path in ("firstTimestamp", "lastTimestamp"):
        if not _same_time(new.get(path), old.get(path)):
            changed(path, _go_time(new.get(path)))
    if (_int(new.get("count")) or 0) != (_int(old.get("count")) or 0):
        changed("count", str(_int(new.get("count")) or 0))
    for path in ("reason", "type"):
        if _str(new.get(path)) != _str(old.get(path)):
            changed(path, bad_value(_str(new.get(path))))
    # kube tolerates sub-microsecond changes; MicroTime JSON holds whole microseconds, so any change counts
    if not _same_time(new.get("eventTime"), old.get("eventTime")):
        changed("eventTime", _go_time(new.get("eventTime")))
    if _str(new.get("action")) != _str(old.get("action")):
        changed("action", bad_value(_str(new.get("action"))))
    new_related, old_related = new.get("related"), old.get("related")
    if (new_related is None) != (old_related is None) or (
            new_related is not None and _norm_ref(new_related) != _norm_ref(old_related)):
        changed("related", '"null"' if new_related is None else _go_reference(new_related))
    if _str(new.get("reportingComponent")) != _str(old.get("reportingComponent")):
        changed("reportingController", bad_value(_str(new.get("reportingComponent"))))
    if _str(new.get("reportingInstance")) != _str(old.get("reportingInstance")):
        changed("reportingInstance", bad_value(_str(new.get("reportingInstance"))))
    return out


def default_event(event: Obj, api_version: str = CORE_V1) -> None:
    """Give an Event of ``api_version`` (``"v1"`` or ``"events.k8s.io/v1"``) the fields its Go struct always
    writes, in place, as kube's decode-and-encode does: core/v1 ``involvedObject: {}``, ``source: {}``,
    ``firstTimestamp``/``lastTimestamp``/``eventTime: null``, ``reportingComponent``/``reportingInstance: ""``;
    events.k8s.io/v1 ``eventTime: null``, ``regarding: {}``, ``deprecatedSource: {}``,
    ``deprecatedFirstTimestamp``/``deprecatedLastTimestamp: null``; ``omitempty`` zeros left out
    (k8s.io/api ``core/v1/types.go`` and ``events/v1/types.go`` Event json tags)."""
    fill_go_fields(event, api_version, "Event")


@register
class EventsV1EventStrategy(Strategy):
    """events.k8s.io Event (the core/v1 Event's storage): the request's validation on its core/v1 form, with the
    strict events.k8s.io/v1 rules (:func:`validate_event_create`, :func:`validate_event_update`)."""

    group, kind = "events.k8s.io", "Event"

    def default(self, obj: Obj) -> None:
        """The fields events.k8s.io/v1 Event always writes (:func:`default_event`)."""
        default_event(obj, EVENTS_V1)

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateEventCreate for an events.k8s.io/v1 request."""
        return validate_event_create(to_core(obj), _version(obj))

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """Nothing: ValidateEventUpdate (:meth:`validate_update`) runs the create rules itself."""
        return []

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateEventUpdate for an events.k8s.io/v1 request."""
        return validate_event_update(to_core(new), to_core(old), _version(new))


def _version(obj: Obj) -> str:
    """The request's group/version from the body's apiVersion (events.k8s.io/v1 unless it says v1beta1)."""
    return EVENTS_V1BETA1 if obj.get("apiVersion") == EVENTS_V1BETA1 else EVENTS_V1
