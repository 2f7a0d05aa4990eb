"""Events write the fields their Go structs have without ``omitempty`` (and the zero structs and times), each
API its own, as kube-apiserver 1.37's encoding/json does (k8s.io/api core/v1 and events/v1 types.go Event):
core/v1 ``source: {}``, ``firstTimestamp``/``lastTimestamp``/``eventTime: null``, ``reportingComponent``/
``reportingInstance: ""``; events.k8s.io/v1 ``eventTime: null``, ``regarding: {}``, ``deprecatedSource: {}``,
``deprecatedFirstTimestamp``/``deprecatedLastTimestamp: null``, no empty ``reportingController``."""

from __future__ import annotations

import json

from kapi import events
from kapi.k8sproto import zero
from kapi.kinds import strategy_for


def _compact(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


CORE = {"metadata": {"name": "e", "namespace": "d"}, "involvedObject": {"kind": "Pod", "name": "p"},
        "reason": "Started", "message": "hi", "type": "Normal", "count": 1}


def test_a_core_event_gets_core_s_zero_fields():
    event = json.loads(json.dumps(CORE))
    strategy_for("", "Event").default(event)
    assert event == {**CORE, "source": {}, "firstTimestamp": None, "lastTimestamp": None, "eventTime": None,
                     "reportingComponent": "", "reportingInstance": ""}


def test_the_events_api_view_shows_its_own_zero_fields():
    stored = {"kind": "Event", "apiVersion": "v1", **CORE, "source": {}, "firstTimestamp": None,
              "lastTimestamp": None, "eventTime": None, "reportingComponent": "", "reportingInstance": ""}
    assert _compact(events.to_events_v1(stored)) == (
        '{"kind":"Event","apiVersion":"events.k8s.io/v1","metadata":{"name":"e","namespace":"d"},"eventTime":null,'
        '"reason":"Started","regarding":{"kind":"Pod","name":"p"},"note":"hi","type":"Normal",'
        '"deprecatedSource":{},"deprecatedFirstTimestamp":null,"deprecatedLastTimestamp":null,"deprecatedCount":1}')


def test_an_events_api_write_is_stored_with_core_s_zero_fields():
    body = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e", "namespace": "d"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "kapi.io/c", "reportingInstance": "i",
            "action": "Act", "reason": "R", "regarding": {"kind": "Pod", "name": "p"}, "type": "Normal"}
    strategy_for("events.k8s.io", "Event").default(body)
    assert body["deprecatedSource"] == {} and body["deprecatedFirstTimestamp"] is None
    assert _compact(events.to_core(body)) == (
        '{"kind":"Event","apiVersion":"v1","metadata":{"name":"e","namespace":"d"},'
        '"involvedObject":{"kind":"Pod","name":"p"},"reason":"R","source":{},"firstTimestamp":null,'
        '"lastTimestamp":null,"type":"Normal","eventTime":"2026-01-01T00:00:00.000000Z","action":"Act",'
        '"reportingComponent":"kapi.io/c","reportingInstance":"i"}')


def test_as_go_writes_leaves_out_omitempty_zeros_and_keeps_plain_ones():
    obj = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "generation": 0}, "count": 0,
           "message": "", "series": {"count": 2}, "related": None, "reportingComponent": ""}
    assert zero.as_go_writes(obj) == {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "series": {"count": 2,
                                                                                   "lastObservedTime": None},
        "reportingComponent": "", "involvedObject": {}, "source": {}, "firstTimestamp": None,
        "lastTimestamp": None, "eventTime": None, "reportingInstance": ""}
