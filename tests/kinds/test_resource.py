"""resource.k8s.io/v1 strategies (kapi.kinds.resource) against kube's defaults.go, strategy.go and validation."""

from __future__ import annotations

from datetime import UTC, datetime

from kapi import kinds, strategy
from kapi.resources import REGISTRY

NOW = datetime(2026, 1, 1, tzinfo=UTC)
CLAIMS = REGISTRY.get("resource.k8s.io", "v1", "resourceclaims")
CLASSES = REGISTRY.get("resource.k8s.io", "v1", "deviceclasses")


def claim(*requests: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": list(requests)}}}


def strat(kind: str) -> kinds.Strategy:
    return kinds.strategy_for("resource.k8s.io", kind)


def test_request_defaults_exact_count_one_and_toleration_operator():
    obj = claim({"name": "a", "exactly": {"deviceClassName": "c", "tolerations": [{"key": "k"}]}},
                {"name": "b", "exactly": {"deviceClassName": "c", "allocationMode": "All"}},
                {"name": "d", "firstAvailable": [{"name": "x", "deviceClassName": "c"}]})
    strat("ResourceClaim").default(obj)
    a, b, d = obj["spec"]["devices"]["requests"]
    assert a["exactly"] == {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1,
                            "tolerations": [{"key": "k", "operator": "Equal"}]}
    assert b["exactly"] == {"deviceClassName": "c", "allocationMode": "All"}
    assert d["firstAvailable"][0]["count"] == 1


def test_claim_status_reset_on_create_and_no_generation():
    obj = claim({"name": "a", "exactly": {"deviceClassName": "c"}})
    obj["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    out = strategy.prepare_for_create(obj, CLAIMS, "ns", NOW)
    assert out["status"] == {} and "generation" not in out["metadata"]


def test_claim_spec_immutable_and_main_rules():
    s = strat("ResourceClaim")
    old = claim({"name": "a", "exactly": {"deviceClassName": "c"}})
    new = claim({"name": "a", "exactly": {"deviceClassName": "d"}})
    [cause] = s.validate_update(new, old)
    assert cause.field == "spec" and cause.message.endswith(": field is immutable")
    assert s.validate_update(new, old, "status") == []
    causes = s.validate(claim({"name": "a", "exactly": {"deviceClassName": "c"}, "firstAvailable": [{}]},
                              {"name": "b", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount",
                                                        "count": 0, "selectors": [{}]}}))
    assert [(c.field, c.message) for c in causes] == [
        ("spec.devices.requests[0]", "Invalid value: \"null\": exactly one of `exactly` or `firstAvailable` is "
                                     "required, but multiple fields are set"),
        ("spec.devices.requests[1].exactly.selectors[0].cel", "Required value"),
        ("spec.devices.requests[1].exactly.count", "Invalid value: 0: must be greater than zero")]


def test_device_class_generation_and_slice_rules():
    created = strategy.prepare_for_create({"metadata": {"name": "g"}, "spec": {}}, CLASSES, "", NOW)
    assert created["metadata"]["generation"] == 1
    causes = strat("ResourceSlice").validate({"spec": {"pool": {}}})
    # ValidateCSIDriverName reports an empty name as Required and as an invalid subdomain, as kube does
    assert [(c.field, c.message.split(":")[0]) for c in causes] == [
        ("spec.driver", "Required value"), ("spec.driver", "Invalid value"), ("spec.pool.name", "Required value")]
