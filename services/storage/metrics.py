"""Prometheus metrics of the storage service with kube-apiserver's names (served on ``--metrics-address``).

- ``etcd_request_duration_seconds{operation,type}`` (histogram, kube's
  buckets), ``etcd_requests_total{operation,type}`` and
  ``etcd_request_errors_total{operation,type}``: every etcd KV call
  (k8s.io/apiserver ``pkg/storage/etcd3/metrics``). ``operation`` is ``get``
  (a range of one key), ``list`` (a range of a key prefix), ``create``,
  ``update``, ``delete``, ``txn`` (any other transaction) or ``compact``;
  ``type`` is kube's group-resource string of the key (``pods``,
  ``deployments.apps``; "" for keys outside ``--etcd-prefix``, e.g. the
  compactor's). The duration includes the client's retries over endpoints.
- ``watch_cache_capacity{group,resource}`` (gauge, read at scrape time) and
  ``watch_cache_capacity_increase_total`` / ``watch_cache_capacity_decrease_total``
  (counters) of the same labels: each watch cache's window and its resizes
  (k8s.io/apiserver ``pkg/storage/cacher/metrics``; no ``apiserver_`` prefix,
  as kube names them).
- ``apiserver_storage_objects{resource}`` (gauge): objects per resource, read
  at scrape time from the watch caches (resources with a cache that listed at
  least once; a resource served from etcd only has no series). kube-apiserver
  counts the same per resource (``resource`` as ``type`` above).

Label children are cached, so an etcd call pays about a microsecond.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from prometheus_client import REGISTRY, Counter, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

disable_created_metrics()  # no *_created series: kube-apiserver has none
ETCD_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45,
                60)
_LABELS = ("operation", "type")


def _collector(name: str, make: Callable[[], Any]) -> Any:
    existing = getattr(REGISTRY, "_names_to_collectors", {})
    return existing.get(name) or make()


ETCD_DURATION = _collector("etcd_request_duration_seconds", lambda: Histogram(
    "etcd_request_duration_seconds", "Etcd request latency in seconds for each operation and object type.",
    _LABELS, buckets=ETCD_BUCKETS))
ETCD_REQUESTS = _collector("etcd_requests_total", lambda: Counter(
    "etcd_requests", "Etcd request counts for each operation and object type.", _LABELS))
ETCD_ERRORS = _collector("etcd_request_errors_total", lambda: Counter(
    "etcd_request_errors", "Etcd failed request counts for each operation and object type.", _LABELS))
_children: dict[tuple[str, str], tuple[Any, Any]] = {}


def observe_etcd(operation: str, type_: str, seconds: float, failed: bool) -> None:
    """Record one etcd call of ``operation`` on ``type_`` that took ``seconds`` (``failed``: it raised)."""
    child = _children.get((operation, type_))
    if child is None:
        child = _children[(operation, type_)] = (ETCD_DURATION.labels(operation, type_),
                                                 ETCD_REQUESTS.labels(operation, type_))
    child[0].observe(seconds)
    child[1].inc()
    if failed:
        ETCD_ERRORS.labels(operation, type_).inc()


CAPACITY_INCREASES = _collector("watch_cache_capacity_increase_total", lambda: Counter(
    "watch_cache_capacity_increase", "Total number of watch cache capacity increase events broken by resource type.",
    ("group", "resource")))
CAPACITY_DECREASES = _collector("watch_cache_capacity_decrease_total", lambda: Counter(
    "watch_cache_capacity_decrease", "Total number of watch cache capacity decrease events broken by resource type.",
    ("group", "resource")))


def watch_cache_resized(group: str, resource: str, old: int, new: int) -> None:
    """Count one resize of a resource's watch cache window from ``old`` to ``new`` events."""
    (CAPACITY_INCREASES if new > old else CAPACITY_DECREASES).labels(group, resource).inc()


def group_resource(group: str, resource: str) -> str:
    """kube's ``schema.GroupResource.String()``: ``pods``, ``deployments.apps``."""
    return f"{resource}.{group}" if group else resource


class _Counted(Protocol):
    def object_counts(self) -> Iterable[tuple[str, int]]: ...

    def capacities(self) -> Iterable[tuple[str, str, int]]: ...


class StorageObjects(Collector):
    """``apiserver_storage_objects``: per resource, the object count of every tracked watch-cache set; and
    ``watch_cache_capacity``: per (group, resource), its window's capacity in events.

    Several sets in one process (tests) cache the same etcd, so a resource's value is the largest.
    """

    def __init__(self) -> None:
        self._sources: weakref.WeakSet[Any] = weakref.WeakSet()

    def track(self, source: _Counted) -> None:
        """Report ``source.object_counts()`` ((resource, count) pairs) at every scrape while it lives."""
        self._sources.add(source)

    def collect(self) -> Iterator[Metric]:
        """One gauge family with a sample per resource."""
        counts: dict[str, int] = {}
        for source in list(self._sources):
            for resource, count in source.object_counts():
                counts[resource] = max(count, counts.get(resource, 0))
        family = GaugeMetricFamily("apiserver_storage_objects",
                                   "Number of stored objects at the time of last check split by kind.",
                                   labels=("resource",))
        for resource in sorted(counts):
            family.add_metric((resource,), counts[resource])
        yield family
        capacities: dict[tuple[str, str], int] = {}
        for source in list(self._sources):
            for group, resource, capacity in source.capacities():
                capacities[(group, resource)] = max(capacity, capacities.get((group, resource), 0))
        gauge = GaugeMetricFamily("watch_cache_capacity", "Total capacity of watch cache broken by resource type.",
                                  labels=("group", "resource"))
        for labels in sorted(capacities):
            gauge.add_metric(labels, capacities[labels])
        yield gauge


STORAGE_OBJECTS: StorageObjects = _collector("apiserver_storage_objects", lambda: StorageObjects())
if "apiserver_storage_objects" not in getattr(REGISTRY, "_names_to_collectors", {}):
    REGISTRY.register(STORAGE_OBJECTS)
