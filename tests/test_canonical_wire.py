"""Canonical wire form of built-in objects (issue 17): Quantity.String() and metav1.Time/MicroTime re-encoding.

Vectors from k8s.io/apimachinery pkg/api/resource (quantity_test.go TestQuantityParseEmit, TestQuantityString's
alternates, TestQuantityParse), core/v1 SetDefaults_ResourceList, and metav1 Time/MicroTime MarshalJSON.
"""

from __future__ import annotations

import random
import timeit
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

import pytest

from kapi import canonical, errors, jsonutil, quantity
from kapi.attributes import Attributes, UserInfo
from services.admission.chain import AdmissionRequest, Chain
from services.admission.pipeline import Admitter

USER = UserInfo("alice", "uid-1", ("system:authenticated",))
NOW = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(("sent", "kube"), [
    ("1", "1"), (1, "1"), (0.5, "500m"), ("0.5", "500m"), ("1000m", "1"), ("1.5Gi", "1536Mi"), ("0.1", "100m"),
    ("100M", "100M"), ("1Ki", "1Ki"), ("1024Mi", "1Gi"), ("1000M", "1G"), (".001Ki", "1024m"),
    (".000001Ki", "1024u"), (".000000001Ki", "1024n"), (".000000000001Ki", "2n"), ("1.08", "1080m"),
    ("1080000000n", "1080m"), ("0.001T", "1G"), ("1000E", "1e21"), ("0.001e0", "1e-3"), ("1000e-12", "1e-9"),
    ("5000m", "5"), ("307200Ki", "300Mi"), ("1025024Mi", "1001Gi"), ("0.5", "500m"), ("3.001n", "4n"),
    ("0.0000000001", "1n"), ("0.00000012345", "124n"), ("9Ei", "9223372036854775807"), ("0.9Gi", "966367641600m"),
    ("-1.5Gi", "-1536Mi"), ("0", "0"), ("0Gi", "0"), ("00", "0"), (" 2 ", "2"), ("1.", "1."), ("1.G", "1.G"),
    # ParseQuantity keeps a text its fast path finds canonical: an exponent of a multiple of 3, a sign, zeros
    ("1e3", "1e3"), ("1E6", "1E6"), ("+1", "+1"), ("05k", "05k"), ("1e-9", "1e-9"),
])
def test_quantity_string_of_what_was_sent(sent: Any, kube: str) -> None:
    assert quantity.canonical(sent) == kube


@pytest.mark.parametrize(("sent", "kube"), [
    ("0.0001", "1m"), ("1n", "1m"), ("0.9Gi", "966367641600m"), ("0.30000000000000004", "301m"), ("1500u", "2m"),
    ("-1500u", "-2m"), ("1", "1"), ("100m", "100m"), ("1e3", "1e3"), ("1.5Gi", "1536Mi"),
])
def test_resource_lists_round_up_to_milli(sent: Any, kube: str) -> None:
    assert quantity.canonical(sent, milli=True) == kube


def test_huge_exponents_are_not_expanded() -> None:
    assert quantity.canonical("1e999999999") == "1e999999999"
    assert quantity.canonical("1e-999999999") == "1e-9"


@pytest.mark.parametrize("bad", ["", "1.1.M", "aoeu", "1i", "Ki", True, None])
def test_quantity_that_does_not_parse_raises(bad: Any) -> None:
    with pytest.raises(ValueError):
        quantity.canonical(bad)


@pytest.mark.parametrize(("sent", "time", "micro"), [
    # MicroTime's layout is RFC3339Micro: exactly six fraction digits (Go's stdFracSecond0), else kept as sent
    # (the admission pipeline refuses it first: canonical.time_error)
    ("2026-12-02T05:00:00+00:00", "2026-12-02T05:00:00Z", "2026-12-02T05:00:00+00:00"),
    ("2026-12-02T07:00:00.000000+02:00", "2026-12-02T05:00:00Z", "2026-12-02T05:00:00.000000Z"),
    ("2026-12-02T00:30:00.250000-05:30", "2026-12-02T06:00:00Z", "2026-12-02T06:00:00.250000Z"),
    ("2026-12-31T23:59:59.987654321Z", "2026-12-31T23:59:59Z", "2026-12-31T23:59:59.987654321Z"),
    ("2026-12-02T05:00:00.5+01:00", "2026-12-02T04:00:00Z", "2026-12-02T05:00:00.5+01:00"),
    ("2026-12-02T05:00:00Z", "2026-12-02T05:00:00Z", "2026-12-02T05:00:00Z"),
    ("2026-12-02T5:00:00Z", "2026-12-02T05:00:00Z", "2026-12-02T5:00:00Z"),  # Go reads a one-digit hour
    ("0001-01-01T00:00:00Z", None, "0001-01-01T00:00:00Z"),  # the zero time: MarshalJSON writes null
    ("0001-01-01T00:00:00.000000Z", None, None),
    # not RFC 3339 for Go: kept as sent
    ("2026-12-02 05:00:00Z", "2026-12-02 05:00:00Z", "2026-12-02 05:00:00Z"),
    ("2026-12-02T05:00:00z", "2026-12-02T05:00:00z", "2026-12-02T05:00:00z"),
    ("2026-02-30T05:00:00Z", "2026-02-30T05:00:00Z", "2026-02-30T05:00:00Z"),
    ("2026-12-02", "2026-12-02", "2026-12-02"),
])
def test_times_are_reencoded_in_utc(sent: str, time: str | None, micro: str | None) -> None:
    assert canonical.canonical_time(sent) == time
    assert canonical.canonical_time(sent, micro=True) == micro


def _pod() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "creationTimestamp": "2026-12-02T05:00:00+00:00"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {
                "requests": {"cpu": 1, "memory": "1.5Gi"}, "limits": {"cpu": "0.0001", "memory": "1536Mi"}}}],
                "overhead": {"cpu": 0.25},
                "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "0.0001"}}]},
            "status": {"startTime": "2026-12-02T07:00:00+02:00",
                       "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                                       "lastTransitionTime": "2026-12-02T05:00:00.9Z"}]}}


def test_a_pod_is_canonicalized_along_its_schema_paths() -> None:
    pod = _pod()
    canonical.canonicalize(pod, "", "v1", "Pod")
    resources = pod["spec"]["containers"][0]["resources"]
    assert resources == {"requests": {"cpu": "1", "memory": "1536Mi"}, "limits": {"cpu": "1m", "memory": "1536Mi"}}
    assert pod["spec"]["overhead"] == {"cpu": "250m"}
    assert pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "100u"  # *Quantity, not a ResourceList
    assert pod["metadata"]["creationTimestamp"] == "2026-12-02T05:00:00Z"
    assert pod["status"]["startTime"] == "2026-12-02T05:00:00Z"
    assert pod["status"]["conditions"][0] == {"type": "Ready", "status": "True", "lastProbeTime": None,
                                              "lastTransitionTime": "2026-12-02T05:00:00Z"}


def test_other_kinds_quantities_and_micro_times() -> None:
    quota = {"spec": {"hard": {"cpu": 2, "requests.memory": "1024Mi"}}, "status": {"used": {"cpu": "0.5"}}}
    canonical.canonicalize(quota, "", "v1", "ResourceQuota")
    assert quota == {"spec": {"hard": {"cpu": "2", "requests.memory": "1Gi"}}, "status": {"used": {"cpu": "500m"}}}
    lease = {"spec": {"renewTime": "2026-12-02T07:00:00.123456+02:00", "acquireTime": "2026-12-02T05:00:00Z"}}
    assert canonical.time_error(lease, "coordination.k8s.io", "v1", "Lease") == (
        'parsing time "2026-12-02T05:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"')
    lease["spec"]["acquireTime"] = "2026-12-02T05:00:00.000000Z"
    assert canonical.time_error(lease, "coordination.k8s.io", "v1", "Lease") is None
    canonical.canonicalize(lease, "coordination.k8s.io", "v1", "Lease")
    assert lease["spec"] == {"renewTime": "2026-12-02T05:00:00.123456Z", "acquireTime": "2026-12-02T05:00:00.000000Z"}
    deployment = {"spec": {"template": {"spec": {"containers": [{"resources": {"limits": {"cpu": "1n"}}}]}}}}
    canonical.canonicalize(deployment, "apps", "v1", "Deployment")  # the core defaulters run on templates
    assert deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "1m"}
    runtime_class: dict[str, Any] = {"handler": "h", "overhead": {"podFixed": {"cpu": "1n"}}}
    canonical.canonicalize(runtime_class, "node.k8s.io", "v1", "RuntimeClass")  # node/v1 has no such defaulter
    assert runtime_class["overhead"]["podFixed"] == {"cpu": "1n"}
    config = {"data": {"cpu": "1000m", "t": "2026-12-02T05:00:00+00:00"}}
    canonical.canonicalize(config, "", "v1", "ConfigMap")
    assert config == {"data": {"cpu": "1000m", "t": "2026-12-02T05:00:00+00:00"}}


def test_the_zero_creation_timestamp_is_dropped_and_bad_values_are_kept() -> None:
    pod: dict[str, Any] = {"metadata": {"creationTimestamp": "0001-01-01T00:00:00Z"},
                           "spec": {"containers": [{"resources": {"limits": {"cpu": "lots"}}}]}}
    canonical.canonicalize(pod, "", "v1", "Pod")
    assert "creationTimestamp" not in pod["metadata"]
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"cpu": "lots"}


class _SeeCpu:
    """A mutating plugin recording the cpu request it is shown, then writing a non-canonical one."""

    name = "SeeCpu"

    def __init__(self) -> None:
        self.seen: list[Any] = []

    def handles(self, operation: str) -> bool:
        return operation == "CREATE"

    async def admit(self, request: AdmissionRequest) -> None:
        assert request.object is not None
        resources = request.object["spec"]["containers"][0]["resources"]
        self.seen.append(resources["requests"]["cpu"])
        resources["limits"] = {"memory": "2048Mi"}


def _attrs(resource: str, group: str = "", version: str = "v1") -> Attributes:
    return Attributes(USER, "create", True, api_group=group, api_version=version, resource=resource,
                      namespace="demo")


async def test_admission_stores_the_canonical_form_and_plugins_see_it() -> None:
    plugin = _SeeCpu()
    admitter = Admitter(Chain([plugin]), now=lambda: NOW, rng=random.Random(1))
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": 1}}}]}}
    result = await admitter.admit("CREATE", _attrs("pods"), "Pod", jsonutil.dumps(body))
    resources = jsonutil.loads(result.object)["spec"]["containers"][0]["resources"]
    assert plugin.seen == ["1"]
    assert resources == {"requests": {"cpu": "1"}, "limits": {"memory": "2Gi"}}


async def test_admission_still_refuses_a_quantity_that_does_not_parse() -> None:
    admitter = Admitter(Chain([]), now=lambda: NOW, rng=random.Random(1))
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1ki"}}}]}}
    with pytest.raises(errors.StatusError) as exc:
        await admitter.admit("CREATE", _attrs("pods"), "Pod", jsonutil.dumps(body))
    assert exc.value.code == 400 and "unable to parse quantity's suffix" in exc.value.message


def test_cost_per_pod_is_small() -> None:
    canonical.paths("", "v1", "Pod")  # built once per kind
    pod = _pod()
    seconds = min(timeit.repeat(lambda: canonical.canonicalize(pod, "", "v1", "Pod"), number=200, repeat=3)) / 200
    assert seconds < 0.001, f"{seconds * 1e6:.1f} us per Pod"


@pytest.mark.timeout(10)
@pytest.mark.parametrize("text, expected", [
    ("1e9999999", Fraction(2**63 - 1)),  # ParseQuantity's clamp to 2^63-1
    ("-2e999999999", -Fraction(2**63 - 1)),
    ("1e-9999999", Fraction(1, 10**9)),  # a nonzero amount below 1n rounds up to 1n
    ("0e9999999", Fraction(0)),
])
def test_huge_exponents_are_bounded_without_building_the_power(text: str, expected: Fraction) -> None:
    """A body may carry an exponent of nine digits (the decode check allows it); 10**9999999 took minutes."""
    assert quantity.parse(text) == expected
