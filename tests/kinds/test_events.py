"""kapi.kinds.events: kube 1.37's ValidateEventCreate / ValidateEventUpdate, cause for cause."""

from __future__ import annotations

from kapi.kinds.events import CORE_V1, EVENTS_V1, EVENTS_V1BETA1, validate_event_create, validate_event_update

IMMUTABLE = "field is immutable"
QUALIFIED_EMPTY = [
    'Invalid value: "": name part must be non-empty',
    "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
]


def pairs(causes):
    return [(c.field, c.message) for c in causes]


def legacy_event(namespace="ns", involved_ns="ns", **fields):
    event = {"metadata": {"name": "e.1", "namespace": namespace},
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": involved_ns},
             "reason": "Started", "message": "m", "source": {"component": "kubelet"}, "count": 1,
             "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:00Z", "type": "Normal"}
    event.update(fields)
    return event


def new_event(**fields):
    event = {"metadata": {"name": "e.1", "namespace": "ns"},
             "involvedObject": {"kind": "Pod", "name": "p", "namespace": "ns"},
             "eventTime": "2024-01-01T00:00:00.000000Z", "reportingComponent": "kubelet",
             "reportingInstance": "node-1", "action": "Pulling", "reason": "Pulling", "message": "m", "type": "Normal"}
    event.update(fields)
    return event


def test_legacy_events_valid():
    assert validate_event_create(legacy_event()) == []
    assert validate_event_create(legacy_event(namespace="default", involved_ns="")) == []
    # core/v1 takes any type and keeps the deprecated fields
    assert validate_event_create(legacy_event(type="Whatever")) == []
    assert validate_event_create(new_event(), CORE_V1) == []
    assert validate_event_create(new_event(), EVENTS_V1) == []


def test_legacy_namespace_must_match():
    expected = [("involvedObject.namespace", 'Invalid value: "other": does not match event.namespace')]
    assert pairs(validate_event_create(legacy_event(involved_ns="other"))) == expected
    assert pairs(validate_event_create(legacy_event(involved_ns=""))) == [
        ("involvedObject.namespace", 'Invalid value: "": does not match event.namespace')]
    # a new-style event without involvedObject.namespace may live in default or kube-system only
    assert validate_event_create(new_event(involvedObject={"kind": "Node", "name": "n"},
                                           metadata={"namespace": "kube-system"})) == []
    assert pairs(validate_event_create(new_event(involvedObject={"kind": "Node", "name": "n"}))) == [
        ("involvedObject.namespace", 'Invalid value: "": does not match event.namespace')]
    # with eventTime, a mismatching non-empty namespace is not checked
    assert validate_event_create(new_event(involvedObject={"namespace": "other"})) == []


def test_new_style_required_fields_path_depends_on_request_version():
    bare = {"metadata": {"namespace": "ns"}, "involvedObject": {"namespace": "ns"},
            "eventTime": "2024-01-01T00:00:00.000000Z"}
    tail = [("reportingInstance", "Required value"), ("action", "Required value"), ("reason", "Required value")]
    assert pairs(validate_event_create(bare, CORE_V1)) == [
        ("reportingComponent", "Required value"), *[("reportingComponent", m) for m in QUALIFIED_EMPTY], *tail]
    assert pairs(validate_event_create(bare, EVENTS_V1BETA1)) == [
        ("reportingController", "Required value"), *[("reportingController", m) for m in QUALIFIED_EMPTY], *tail,
    ]
    assert pairs(validate_event_create(bare, EVENTS_V1)) == [
        ("reportingController", "Required value"), *[("reportingController", m) for m in QUALIFIED_EMPTY], *tail,
        ("type", 'Invalid value: "": has invalid value: '),
    ]


def test_length_limits():
    event = new_event(reportingInstance="i" * 129, action="a" * 129, reason="r" * 129, message="é" * 513)
    assert pairs(validate_event_create(event)) == [
        ("reportingInstance", 'Invalid value: "": can have at most 128 characters'),
        ("action", 'Invalid value: "": can have at most 128 characters'),
        ("reason", 'Invalid value: "": can have at most 128 characters'),
        ("message", 'Invalid value: "": can have at most 1024 characters'),
    ]
    assert validate_event_create(new_event(reportingInstance="i" * 128, message="m" * 1024)) == []
    # old-style events have no length limits
    assert validate_event_create(legacy_event(reason="r" * 500, message="m" * 5000)) == []


def test_namespace_must_be_a_subdomain():
    assert pairs(validate_event_create(legacy_event(namespace="Bad_NS", involved_ns="Bad_NS"))) == [
        ("namespace", "Invalid value: \"Bad_NS\": a lowercase RFC 1123 subdomain must consist of lower case "
                      "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
                      "(e.g. 'example.com', regex used for validation is "
                      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]


def test_strict_create():
    event = legacy_event(eventTime=None, type="Info", series={"count": 1})
    event.update(reportingComponent="c", reportingInstance="i", action="a")
    event["source"] = {"host": "h"}
    assert pairs(validate_event_create(event, EVENTS_V1)) == [
        ("series.count", 'Invalid value: "": should be at least 2'),
        ("series.lastObservedTime", "Required value"),
        ("eventTime", "Required value"),
        ("type", 'Invalid value: "": has invalid value: Info'),
        ("firstTimestamp", 'Invalid value: "": needs to be unset'),
        ("lastTimestamp", 'Invalid value: "": needs to be unset'),
        ("count", 'Invalid value: "": needs to be unset'),
        ("source", 'Invalid value: "": needs to be unset'),
    ]
    # the same through core/v1 passes (old-style event)
    assert validate_event_create(event, CORE_V1) == []
    assert validate_event_create(new_event(series={"count": 2, "lastObservedTime": "2024-01-01T00:00:00.000000Z"},
                                           type="Warning", source={}), EVENTS_V1) == []


def test_update_core_v1_is_legacy_only():
    old = legacy_event()
    new = legacy_event(reason="Other", message="changed", count=5)
    assert validate_event_update(new, old, CORE_V1) == []
    assert pairs(validate_event_update(legacy_event(involved_ns="x"), old, CORE_V1)) == [
        ("involvedObject.namespace", 'Invalid value: "x": does not match event.namespace')]


def test_update_strict_immutability():
    old = new_event(related={"kind": "Node", "name": "n"})
    new = new_event(involvedObject={"kind": "Pod", "name": "q", "namespace": "ns", "uid": "u1"},
                    reason="Pulled", message="done", source={"component": "c"}, lastTimestamp="2024-01-02T03:04:05Z",
                    count=3, type="Warning", eventTime="2024-01-01T00:00:00.500000Z", action="Pulled",
                    reportingComponent="other", reportingInstance="node-2")
    assert pairs(validate_event_update(new, old, EVENTS_V1)) == [
        ("involvedObject", 'Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"q", UID:"u1", '
                           f'APIVersion:"", ResourceVersion:"", FieldPath:""}}: {IMMUTABLE}'),
        ("reason", f'Invalid value: "Pulled": {IMMUTABLE}'),
        ("message", f'Invalid value: "done": {IMMUTABLE}'),
        ("source", f'Invalid value: core.EventSource{{Component:"c", Host:""}}: {IMMUTABLE}'),
        ("lastTimestamp", f"Invalid value: 2024-01-02 03:04:05 +0000 UTC: {IMMUTABLE}"),
        ("count", f"Invalid value: 3: {IMMUTABLE}"),
        ("reason", f'Invalid value: "Pulled": {IMMUTABLE}'),
        ("type", f'Invalid value: "Warning": {IMMUTABLE}'),
        ("eventTime", f"Invalid value: 2024-01-01 00:00:00.5 +0000 UTC: {IMMUTABLE}"),
        ("action", f'Invalid value: "Pulled": {IMMUTABLE}'),
        ("related", f'Invalid value: "null": {IMMUTABLE}'),
        ("reportingController", f'Invalid value: "other": {IMMUTABLE}'),
        ("reportingInstance", f'Invalid value: "node-2": {IMMUTABLE}'),
        # the strict create rules on the deprecated fields are not re-run on update
    ]
    # the same instant written differently is no change; series may change but is then validated
    same = new_event(related={"kind": "Node", "name": "n"}, eventTime="2024-01-01T01:00:00.000000+01:00",
                     series={"count": 1, "lastObservedTime": "2024-01-01T00:00:00.000000Z"})
    assert pairs(validate_event_update(same, old, EVENTS_V1)) == [
        ("series.count", 'Invalid value: "": should be at least 2')]
    assert validate_event_update(old, old, EVENTS_V1) == []


def test_wrong_types_do_not_raise():
    bad = {"metadata": "x", "involvedObject": [], "eventTime": 5, "series": {"count": "2"}, "source": "s",
           "count": "1", "related": "r", "reason": 3}
    validate_event_create(bad, EVENTS_V1)
    validate_event_update(bad, {"series": 1}, EVENTS_V1)
