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
    s.default(old)
    s.default(new)
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
        ("spec.driver", "Required value"), ("spec.driver", "Invalid value"), ("spec.pool.name", "Required value"),
        ("spec.pool.resourceSliceCount", "Invalid value"), ("spec", "Required value")]


REF = ("must be the name of a request in the claim or the name of a request and a subrequest separated by '/'")


def pairs(causes):
    return [(c.field, c.message) for c in causes]


def exact(name, **fields):
    return {"name": name, "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1, **fields}}


def test_claim_spec_in_kube_order():
    obj = claim(exact("a", selectors=[{"cel": {"expression": "device.driver =="}}],
                      tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
                {"name": "b", "firstAvailable": [{"name": "x", "deviceClassName": "c", "allocationMode": "All"},
                                                 {"name": "x", "deviceClassName": "c", "allocationMode": "All"}]},
                exact("a"))
    obj["spec"]["devices"]["constraints"] = [{"requests": ["b/y"], "matchAttribute": "d.example.com/model"}]
    obj["spec"]["devices"]["config"] = [{"requests": ["nope"], "opaque": {"driver": "d.example.com",
                                                                          "parameters": {}}}]
    causes = strat("ResourceClaim").validate(obj)
    assert [(c.field, c.message.split(": compilation failed")[0]) for c in causes] == [
        ("spec.devices.requests[0].exactly.selectors[0].cel.expression", 'Invalid value: "device.driver =="'),
        ("spec.devices.requests[0].exactly.tolerations[0].value",
         'Invalid value: "v": must be empty for operator `Exists`'),
        ("spec.devices.requests[1].firstAvailable[1]", 'Duplicate value: "x"'),
        ("spec.devices.requests[2]", 'Duplicate value: "a"'),
        ("spec.devices.constraints[0].requests[0]", f'Invalid value: "b/y": {REF}'),
        ("spec.devices.config[0].requests[0]", f'Invalid value: "nope": {REF}')]


def test_claim_request_limits():
    s = strat("ResourceClaim")
    assert pairs(s.validate(claim(*[exact(f"r{i}") for i in range(33)]))) == [
        ("spec.devices.requests", "Too many: 33: must have at most 32 items")]
    subs = [{"name": f"s{i}", "deviceClassName": "c", "allocationMode": "All"} for i in range(9)]
    assert pairs(s.validate(claim({"name": "a", "firstAvailable": subs}))) == [
        ("spec.devices.requests[0].firstAvailable", "Too many: 9: must have at most 8 items")]
    assert s.validate(claim(exact("a", selectors=[{"cel": {"expression": 'device.driver == "x"'}}]))) == []


def test_claim_update_validates_new_spec_then_immutability_and_status_subresource():
    s = strat("ResourceClaim")
    old = claim(exact("a"))
    new = claim(exact("A"))
    assert s.revalidates_first  # the pipeline puts validate_again's causes first, as kube's ValidateUpdate
    causes = s.validate_again(new, old) + s.validate_update(new, old)
    assert [c.field for c in causes] == ["spec.devices.requests[0].name", "spec"]
    stored = claim(exact("a"))
    stored["status"] = {}
    written = claim(exact("a"))
    written["status"] = {"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}
    assert pairs(s.validate_update(written, stored, "status")) == [
        ("status.reservedFor", "Forbidden: may not be specified when `allocated` is not set")]
    assert s.validate_update(written, stored, "scale") == []


def test_template_metadata_and_spec():
    s = strat("ResourceClaimTemplate")
    obj = {"metadata": {"name": "t"}, "spec": {"metadata": {"labels": {"a": "b c"}, "name": "x"},
                                               "spec": {"devices": {"requests": [exact("Q")]}}}}
    causes = s.validate(obj)
    assert [c.field for c in causes] == ["spec.metadata.labels", "spec.metadata.name",
                                         "spec.spec.devices.requests[0].name"]
    assert causes[1].message == "Forbidden: cannot be set"
    changed = {"metadata": {"name": "t"}, "spec": {"spec": {"devices": {"requests": [exact("q")]}}}}
    assert [c.field for c in s.validate_update(changed, obj)] == ["spec"]
    assert [c.field for c in s.validate_again(changed, obj)] == []
    assert [c.field for c in s.validate_again(obj, obj)] == ["spec.metadata.labels", "spec.metadata.name",
                                                            "spec.spec.devices.requests[0].name"]


def test_device_class_spec():
    s = strat("DeviceClass")
    spec = {"selectors": [{"cel": {"expression": "("}}],
            "config": [{"opaque": {"driver": "d.example.com"}}], "extendedResourceName": "cpu"}
    causes = s.validate({"spec": spec})
    assert [(c.field, c.message.split(": compilation failed")[0]) for c in causes] == [
        ("spec.selectors[0].cel.expression", 'Invalid value: "("'),
        ("spec.config[0].opaque.parameters", "Required value"),
        ("spec.extendedResourceName", 'Invalid value: "cpu": must be a valid extended resource name')]
    # unchanged selectors are stored: not compiled again; a changed one is
    assert [c.field for c in s.validate_again({"spec": spec}, {"spec": spec})] == [
        "spec.config[0].opaque.parameters", "spec.extendedResourceName"]
    assert s.validate_update({"spec": spec}, {"spec": spec}) == []
    for name, ok in (("example.com/gpu", True), ("kubernetes.io/gpu", False), ("requests.x/y", False),
                     ("example.com/a b", False)):
        assert (s.validate({"spec": {"extendedResourceName": name}}) == []) is ok, name
    assert pairs(s.validate({"spec": {"selectors": [{}] * 33, "config": [{}] * 33}})) == [
        ("spec.selectors", "Too many: 33: must have at most 32 items"),
        ("spec.config", "Too many: 33: must have at most 32 items")]


def test_slice_strategy_update_and_required_fields():
    s = strat("ResourceSlice")
    assert s.validates_required and strat("DeviceClass").validates_required
    old = {"spec": {"driver": "d.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": True}}
    new = {"spec": {"driver": "e.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "allNodes": True}}
    assert s.validate(old) == []
    assert pairs(s.validate_again(new, old)) == [("spec.driver", 'Invalid value: "e.example.com": field is immutable')]
    assert s.validate_update(new, old) == []
