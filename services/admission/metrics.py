"""Prometheus metrics of admission webhook calls with kube-apiserver's names (served on ``--metrics-address``).

Names, labels and buckets as k8s.io/apiserver ``pkg/admission/metrics``:

- ``apiserver_admission_webhook_admission_duration_seconds{name,type,operation,rejected}`` (histogram)
- ``apiserver_admission_webhook_request_total{name,type,operation,code,rejected}``
- ``apiserver_admission_webhook_rejection_count{name,type,operation,error_type,rejection_code}``
  (exposed under this exact name, without ``_total``, as kube does; untyped in the text format since
  prometheus_client adds ``_total`` to every counter)

``name`` is the webhook's name, ``type`` ``admit`` (mutating) or
``validating``, ``operation`` CREATE/UPDATE/DELETE/CONNECT, ``rejected``
"true" when the webhook refused the request or failed under failurePolicy
Fail. ``code`` is 200 for an answer, the denial's code for a refusal, the
webhook's HTTP status for a non-200 answer, else 0. ``error_type`` is
``no_error`` (the webhook denied), ``calling_webhook_error`` (the call
failed under Fail) or ``apiserver_internal_error`` (e.g. a dry run the
webhook does not support). A webhook skipped by its matchConditions is not
counted (it was not called).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import REGISTRY, Counter, Histogram, disable_created_metrics
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

disable_created_metrics()
DURATION_BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25)
NO_ERROR = "no_error"
CALLING_WEBHOOK_ERROR = "calling_webhook_error"
INTERNAL_ERROR = "apiserver_internal_error"
_REJECTION_LABELS = ("name", "type", "operation", "error_type", "rejection_code")


def _collector(name: str, make: Callable[[], Any]) -> Any:
    existing = getattr(REGISTRY, "_names_to_collectors", {})
    return existing.get(name) or make()


DURATION = _collector("apiserver_admission_webhook_admission_duration_seconds", lambda: Histogram(
    "apiserver_admission_webhook_admission_duration_seconds", "Admission webhook latency histogram in seconds, "
    "identified by name and broken out for each operation and API resource and type (validate or admit).",
    ("name", "type", "operation", "rejected"), buckets=DURATION_BUCKETS))
REQUESTS = _collector("apiserver_admission_webhook_request_total", lambda: Counter(
    "apiserver_admission_webhook_request", "Admission webhook request total, identified by name and broken out for "
    "each admission type (validating or admit) and operation. Additional labels specify whether the request was "
    "rejected or not and an HTTP status code.", ("name", "type", "operation", "code", "rejected")))


class RejectionCount(Collector):
    """``apiserver_admission_webhook_rejection_count`` under its exact kube name (see the module docstring)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, ...], float] = {}

    def inc(self, *labels: str) -> None:
        """Count one rejection with ``labels`` in :data:`_REJECTION_LABELS` order."""
        self.counts[labels] = self.counts.get(labels, 0.0) + 1

    def collect(self) -> Iterator[Metric]:
        """One untyped family, a sample per label set."""
        family = Metric("apiserver_admission_webhook_rejection_count", "Admission webhook rejection count, "
                        "identified by name and broken out for each admission type (validating or admit) and "
                        "operation. Additional labels specify an error type and a rejection code.", "unknown")
        for labels, value in list(self.counts.items()):
            family.add_sample(family.name, dict(zip(_REJECTION_LABELS, labels, strict=True)), value)
        yield family


REJECTIONS: RejectionCount = _collector("apiserver_admission_webhook_rejection_count", RejectionCount)
if "apiserver_admission_webhook_rejection_count" not in getattr(REGISTRY, "_names_to_collectors", {}):
    REGISTRY.register(REJECTIONS)


def observe_webhook(name: str, type_: str, operation: str, seconds: float, *, rejected: bool, code: int,
                    error_type: str = "") -> None:
    """Record one webhook call that took ``seconds``; ``error_type`` "" = no rejection to count."""
    flag = "true" if rejected else "false"
    DURATION.labels(name, type_, operation, flag).observe(seconds)
    REQUESTS.labels(name, type_, operation, str(code), flag).inc()
    if error_type:
        REJECTIONS.inc(name, type_, operation, error_type, str(code))
