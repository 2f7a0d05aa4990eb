"""core/v1 <-> events.k8s.io/v1 Event conversion (one stored resource, two APIs)."""

from kapi import events

CORE = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "d"},
        "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Started", "message": "hi", "type": "Normal",
        "source": {"component": "kubelet"}, "firstTimestamp": "2026-01-01T00:00:00Z", "count": 3,
        "reportingComponent": "kubelet", "reportingInstance": "n1"}


def test_core_to_events_and_back():
    new = events.to_events_v1(CORE)
    assert new["apiVersion"] == "events.k8s.io/v1"
    assert new["regarding"] == {"kind": "Pod", "name": "p"} and new["note"] == "hi"
    assert new["deprecatedSource"] == {"component": "kubelet"} and new["deprecatedCount"] == 3
    assert new["deprecatedFirstTimestamp"] == "2026-01-01T00:00:00Z" and new["reportingController"] == "kubelet"
    assert new["reason"] == "Started" and new["reportingInstance"] == "n1"
    assert events.to_core(new) == {**CORE, "lastTimestamp": None, "eventTime": None}  # core/v1's zero times


def test_convert_is_identity_at_the_desired_version():
    assert events.convert(CORE, "v1") is CORE
    assert events.convert(events.to_events_v1(CORE), "v1") == {**CORE, "lastTimestamp": None, "eventTime": None}
