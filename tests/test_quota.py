"""kapi.quota: what objects charge against a ResourceQuota (shared by admission and the quota controller)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kapi.quota import add_usage, counted_resources, format_usage


@pytest.mark.parametrize(("names", "expected"), [
    (["pods", "count/widgets.example.com"], {("", "pods"), ("example.com", "widgets")}),
    (["count/configmaps"], {("", "configmaps")}),
    (["services.nodeports", "services.loadbalancers"], {("", "services")}),
    (["requests.storage", "gold.storageclass.storage.k8s.io/requests.storage"], {("", "persistentvolumeclaims")}),
    (["requests.cpu", "limits.memory", "cpu"], {("", "pods")}),
])
def test_counted_resources(names: list[str], expected: set[tuple[str, str]]) -> None:
    assert counted_resources(names) == expected


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("requests.memory", Fraction(2**30), "1Gi"),
    ("requests.cpu", Fraction(1, 2), "500m"),
    ("pods", Fraction(3), "3"),
])
def test_format_usage(name: str, value: Fraction, expected: str) -> None:
    assert format_usage(name, value) == expected


def pod(name: str, cpu: str, deadline: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if deadline is not None:
        spec["activeDeadlineSeconds"] = deadline
    return {"metadata": {"name": name, "namespace": "ns"}, "spec": spec}


def test_add_usage_sums_matching_objects_for_the_named_resources_only() -> None:
    quota = {"spec": {"hard": {"pods": "10", "requests.cpu": "4"}, "scopes": ["NotTerminating"]}}
    totals = {"pods": Fraction(0), "requests.cpu": Fraction(0)}
    add_usage(totals, quota, [pod("a", "250m"), pod("b", "1"), pod("job", "2", deadline=60)], "", "pods")
    assert totals == {"pods": Fraction(2), "requests.cpu": Fraction(5, 4)}
