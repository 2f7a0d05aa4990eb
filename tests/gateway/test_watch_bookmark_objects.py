"""A watch BOOKMARK's object as kube-apiserver 1.37 writes it: the kind's zero typed object (the watch cache's
``c.newFunc()``) with the resourceVersion and storage's annotations, in Go field order
(k8s.io/apiserver pkg/storage/cacher; kapi.k8sproto.zero); a custom resource's an Unstructured, keys sorted."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from kapi import k8sproto
from kapi.resources import REGISTRY
from kapi_proto.kapi.storage.v1 import storage_pb2
from services.gateway import negotiation
from services.gateway.handlers.watch import _Encoder
from services.storage import events

END = {"k8s.io/initial-events-end": "true"}


def encode(resource: Any, event: events.WatchEvent, accept: str = "application/json") -> bytes:
    scope: Any = SimpleNamespace(output=negotiation.negotiate(accept, protobuf=True), resource=resource,
                                 param=lambda name: "")
    wire = storage_pb2.WatchEvent(type=event.type, object=json.dumps(event.object).encode(),
                                  resource_version=event.resource_version)
    return _Encoder(scope).encode(wire)


def test_a_pod_bookmark_is_the_zero_pod():
    line = encode(REGISTRY.get("", "v1", "pods"), events.bookmark(314))
    assert line == (b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"314"},'
                    b'"spec":{"containers":null},"status":{}}}\n')


def test_an_initial_events_end_bookmark_keeps_its_annotation_after_the_resource_version():
    line = encode(REGISTRY.get("apps", "v1", "deployments"), events.bookmark(9, initial_events_end=True))
    assert line == (b'{"type":"BOOKMARK","object":{"kind":"Deployment","apiVersion":"apps/v1","metadata":'
                    b'{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}},"spec":'
                    b'{"replicas":0,"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"strategy":{}},'
                    b'"status":{}}}\n')


def test_zero_objects_of_kinds_with_plain_fields():
    assert encode(REGISTRY.get("", "v1", "events"), events.bookmark(5)) == (
        b'{"type":"BOOKMARK","object":{"kind":"Event","apiVersion":"v1","metadata":{"resourceVersion":"5"},'
        b'"involvedObject":{},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":null,'
        b'"reportingComponent":"","reportingInstance":""}}\n')
    assert encode(REGISTRY.get("apps", "v1", "statefulsets"), events.bookmark(5)) == (
        b'{"type":"BOOKMARK","object":{"kind":"StatefulSet","apiVersion":"apps/v1","metadata":'
        b'{"resourceVersion":"5"},"spec":{"replicas":0,"selector":null,"template":{"metadata":{},"spec":{"containers":null}},'
        b'"serviceName":"","updateStrategy":{}},"status":{"replicas":0,"availableReplicas":0}}}\n')
    assert encode(REGISTRY.get("", "v1", "replicationcontrollers"), events.bookmark(5)) == (  # replicas: see zero.py
        b'{"type":"BOOKMARK","object":{"kind":"ReplicationController","apiVersion":"v1","metadata":'
        b'{"resourceVersion":"5"},"spec":{"replicas":0},"status":{"replicas":0}}}\n')
    assert encode(REGISTRY.get("", "v1", "configmaps"), events.bookmark(5)) == (
        b'{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"5"}}}\n')


def test_a_custom_resource_bookmark_is_unstructured_with_sorted_keys():
    widgets = SimpleNamespace(kind="Widget", group_version="example.com/v1")
    assert encode(widgets, events.bookmark(7, initial_events_end=True)) == (
        b'{"type":"BOOKMARK","object":{"apiVersion":"example.com/v1","kind":"Widget","metadata":'
        b'{"annotations":{"k8s.io/initial-events-end":"true"},"resourceVersion":"7"}}}\n')


def test_a_protobuf_bookmark_carries_the_zero_pod():
    frame = encode(REGISTRY.get("", "v1", "pods"), events.bookmark(314),
                   "application/vnd.kubernetes.protobuf;stream=watch")
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "314"}, "spec": {"containers": None},
           "status": {}}
    assert frame == k8sproto.watch_event("BOOKMARK", k8sproto.encode(pod))
    assert k8sproto.decode(k8sproto.encode(pod)) == {"kind": "Pod", "apiVersion": "v1",
                                                    "metadata": {"resourceVersion": "314"}, "spec": {}, "status": {}}
