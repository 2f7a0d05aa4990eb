"""API Priority and Fairness metrics in Prometheus form, from the flowcontrol service's counters snapshot.

The flowcontrol service keeps the cluster's APF state, so it alone counts;
its ``Controller.metrics()`` snapshot (a plain dict, also returned by the
``Dump`` RPC with ``kind="counters"``) becomes kube-apiserver's metric
families here, named and labelled as k8s.io/apiserver
``pkg/util/flowcontrol/metrics`` does ("API Priority and Fairness",
"Observability: Metrics"):

- ``apiserver_flowcontrol_rejected_requests_total{flow_schema,priority_level,reason}``
  (reason ``queue-full``, ``concurrency-limit``, ``time-out``, ``cancelled``)
- ``apiserver_flowcontrol_dispatched_requests_total{flow_schema,priority_level}``
- ``apiserver_flowcontrol_current_inqueue_requests{flow_schema,priority_level}``
- ``apiserver_flowcontrol_current_executing_requests{flow_schema,priority_level}``
- ``apiserver_flowcontrol_current_executing_seats{flow_schema,priority_level}``
- ``apiserver_flowcontrol_request_wait_duration_seconds{execute,flow_schema,priority_level}``
  (histogram, seconds, kube's buckets 0 ... 30)
- ``apiserver_flowcontrol_nominal_limit_seats{priority_level}``,
  ``apiserver_flowcontrol_current_limit_seats{priority_level}``

Used by the flowcontrol service's ``--metrics-address`` endpoint and by every
gateway's ``/metrics`` (which asks the service at scrape time).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

PREFIX = "apiserver_flowcontrol_"
_PAIR = ("flow_schema", "priority_level")

# snapshot key -> (family kind, labels, help)
_FAMILIES: dict[str, tuple[str, tuple[str, ...], str]] = {
    "rejected_requests_total": ("counter", (*_PAIR, "reason"), "Requests rejected by API Priority and Fairness."),
    "dispatched_requests_total": ("counter", _PAIR, "Requests released by API Priority and Fairness for service."),
    "current_inqueue_requests": ("gauge", _PAIR, "Requests waiting in API Priority and Fairness queues now."),
    "current_executing_requests": ("gauge", _PAIR, "Requests executing (initial stage of a WATCH) now."),
    "current_executing_seats": ("gauge", _PAIR, "Seats held by executing requests now."),
    "nominal_limit_seats": ("gauge", ("priority_level",), "Nominal seats of each priority level."),
    "current_limit_seats": ("gauge", ("priority_level",), "Seats a priority level may use now (with borrowing)."),
}
_WAIT = "request_wait_duration_seconds"


def _bound(text: str) -> str:
    value = float(text)
    return "+Inf" if math.isinf(value) else repr(value)


def families(snapshot: Mapping[str, Any]) -> Iterator[Metric]:
    """Metric families from a ``Controller.metrics()`` snapshot; keys it lacks give no family.

    Histogram ``buckets`` are cumulative counts keyed by their upper bound in
    seconds as a string (``"inf"`` for the last one); ``sum`` is in seconds.
    """
    for key, (kind, labels, text) in _FAMILIES.items():
        if key not in snapshot:
            continue
        name = PREFIX + (key.removesuffix("_total") if kind == "counter" else key)
        family: Metric = (CounterMetricFamily(name, text, labels=labels) if kind == "counter"
                          else GaugeMetricFamily(name, text, labels=labels))
        for sample in snapshot[key]:
            family.add_metric([str(sample[label]) for label in labels], sample["value"])  # type: ignore[attr-defined]
        yield family
    if _WAIT in snapshot:
        histogram = HistogramMetricFamily(PREFIX + _WAIT, "Time requests spent waiting in their queue (seconds).",
                                          labels=("execute", *_PAIR))
        for sample in snapshot[_WAIT]:
            buckets = [(_bound(bound), count) for bound, count in sample["buckets"].items()]
            if not buckets or buckets[-1][0] != "+Inf":
                buckets.append(("+Inf", sample["count"]))
            histogram.add_metric([sample["execute"], sample["flow_schema"], sample["priority_level"]], buckets,
                                 sample["sum"])
        yield histogram


class SnapshotCollector:
    """A prometheus_client collector reporting ``families(source())`` at every scrape.

    ``source`` returns a fresh ``Controller.metrics()`` snapshot, or None when
    there is none to report (no family is then emitted).
    """

    def __init__(self, source: Any) -> None:
        self._source = source

    def collect(self) -> Iterator[Metric]:
        """The APF families of the current snapshot."""
        snapshot = self._source()
        if snapshot:
            yield from families(snapshot)


_registered: list[SnapshotCollector] = []


def register(source: Any) -> None:
    """Report ``source()`` snapshots on the process's default registry (the last call's source wins).

    One collector per process, so services started twice in one process (tests) do not collide.
    """
    from prometheus_client import REGISTRY

    if _registered:
        _registered[0]._source = source
        return
    collector = SnapshotCollector(source)
    REGISTRY.register(collector)  # type: ignore[arg-type]
    _registered.append(collector)


def text(snapshot: Mapping[str, Any]) -> bytes:
    """The Prometheus text (format 0.0.4) of ``snapshot``'s families alone."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(lambda: snapshot))  # type: ignore[arg-type]
    return generate_latest(registry)
