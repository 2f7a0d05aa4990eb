"""kapi.kinds.quotas: kube 1.37's ResourceQuota and LimitRange rules (pkg/apis/core/validation/validation.go)."""

from __future__ import annotations

from typing import Any

from kapi.kinds import quotas as q

QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


def rq(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "q", "namespace": "ns", **meta}, "spec": spec or {}}
    if status is not None:
        obj["status"] = status
    return obj


def lr(*items: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "l", "namespace": "ns"}, "spec": {"limits": list(items)}}


# ------------------------------------------------------------ ResourceQuota: hard

def test_valid_quota_has_no_causes() -> None:
    hard = {"cpu": "10", "memory": "1Gi", "pods": "10", "requests.storage": "5Gi", "count/deployments.apps": "3",
            "example.com/gpu": "2", "requests.example.com/gpu": "2", "hugepages-2Mi": "1Gi",
            "requests.hugepages-1Gi": "2Gi", "services.nodeports": "0"}
    assert q.validate_resource_quota(rq({"hard": hard})) == []
    assert q.validate_resource_quota(rq({"hard": {"pods": "1", "cpu": "1"}, "scopes": ["NotTerminating"]})) == []


def test_quota_resource_names() -> None:
    causes = q.validate_resource_quota(rq({"hard": {"foo": "1", "storage": "1", "a b": "1", "-x/y": "1"}}))
    assert pairs(causes) == [
        ("spec.hard[foo]", 'Invalid value: "foo": must be a standard resource type or fully qualified'),
        ("spec.hard[foo]", 'Invalid value: "foo": must be a standard resource for quota'),
        ("spec.hard[storage]", 'Invalid value: "storage": must be a standard resource for quota'),
        ("spec.hard[a b]", f'Invalid value: "a b": {QUALIFIED_MSG}'),
        ("spec.hard[a b]", 'Invalid value: "a b": must be a standard resource for quota'),
        ("spec.hard[-x/y]", "Invalid value: \"-x/y\": prefix part a lowercase RFC 1123 subdomain must consist of lower "
                            "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
                            "character (e.g. 'example.com', regex used for validation is "
                            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    ]


def test_quota_quantities_negative_and_integer() -> None:
    causes = q.validate_resource_quota(rq({"hard": {"cpu": "-1", "pods": "1500m", "secrets": "-0.5",
                                                    "example.com/gpu": "0.5", "memory": "0.5", "services": 2.5}}))
    assert pairs(causes) == [
        ("spec.hard[cpu]", 'Invalid value: "-1": must be greater than or equal to 0'),
        ("spec.hard[pods]", "Invalid value: 1500m: must be an integer"),
        ("spec.hard[secrets]", 'Invalid value: "-500m": must be greater than or equal to 0'),
        ("spec.hard[secrets]", "Invalid value: -500m: must be an integer"),
        ("spec.hard[example.com/gpu]", "Invalid value: 500m: must be an integer"),
        ("spec.hard[services]", "Invalid value: 2500m: must be an integer"),
    ]


def test_quota_quantity_rounded_to_milli_and_unparseable_skipped() -> None:
    # SetDefaults_ResourceList rounds 0.0001 up to 1m, which is still not an integer; "abc" is the schema's.
    causes = q.validate_resource_quota(rq({"hard": {"pods": "0.0001", "configmaps": "abc", "cpu": None}}))
    assert pairs(causes) == [("spec.hard[pods]", "Invalid value: 1m: must be an integer")]


def test_quota_status_on_create() -> None:
    causes = q.validate_resource_quota(rq({}, {"hard": {"pods": "-1"}, "used": {"bogus": "1"}}))
    assert pairs(causes) == [
        ("status.hard[pods]", 'Invalid value: "-1": must be greater than or equal to 0'),
        ("status.used[bogus]", 'Invalid value: "bogus": must be a standard resource type or fully qualified'),
        ("status.used[bogus]", 'Invalid value: "bogus": must be a standard resource for quota'),
    ]


# ------------------------------------------------------------ ResourceQuota: scopes

def test_scopes_unsupported_and_not_for_resource() -> None:
    spec = {"hard": {"pods": "1", "cpu": "1", "secrets": "1", "example.com/gpu": "1"},
            "scopes": ["BestEffort", "Foo"]}
    shown = '[]core.ResourceQuotaScope{"BestEffort", "Foo"}'
    assert pairs(q.validate_resource_quota(rq(spec))) == [
        ("spec.scopes", f"Invalid value: {shown}: unsupported scope applied to resource"),  # cpu
        ("spec.scopes", f"Invalid value: {shown}: unsupported scope applied to resource"),  # secrets
        ("spec.scopes", f"Invalid value: {shown}: unsupported scope"),
    ]


def test_scopes_conflicting_and_valid_combinations() -> None:
    spec = {"hard": {"pods": "1"}, "scopes": ["Terminating", "NotTerminating", "BestEffort", "NotBestEffort"]}
    shown = '[]core.ResourceQuotaScope{"Terminating", "NotTerminating", "BestEffort", "NotBestEffort"}'
    assert pairs(q.validate_resource_quota(rq(spec))) == [
        ("spec.scopes", f"Invalid value: {shown}: conflicting scopes"),
        ("spec.scopes", f"Invalid value: {shown}: conflicting scopes"),
    ]
    ok = {"hard": {"pods": "1", "requests.memory": "1Gi", "limits.cpu": "2"},
          "scopes": ["Terminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"]}
    assert q.validate_resource_quota(rq(ok)) == []


def test_volume_attributes_class_scope_is_for_claims() -> None:
    ok = {"hard": {"persistentvolumeclaims": "1", "requests.storage": "1Gi"}, "scopes": ["VolumeAttributesClass"]}
    assert q.validate_resource_quota(rq(ok)) == []
    bad = {"hard": {"pods": "1"}, "scopes": ["VolumeAttributesClass"]}
    assert pairs(q.validate_resource_quota(rq(bad))) == [
        ("spec.scopes", 'Invalid value: []core.ResourceQuotaScope{"VolumeAttributesClass"}: '
                        "unsupported scope applied to resource")]


def test_scope_selector_rules() -> None:
    path = "spec.scopeSelector.matchExpressions"
    spec = {"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "In", "values": ["high"]},
        {"scopeName": "PriorityClass", "operator": "NotIn"},
        {"scopeName": "PriorityClass", "operator": "Exists", "values": ["x"]},
        {"scopeName": "Terminating", "operator": "In", "values": ["x"]},
        {"scopeName": "Bogus", "operator": "Gt", "values": []},
    ]}}
    assert pairs(q.validate_resource_quota(rq(spec))) == [
        (f"{path}.values", "Required value: must be at least one value when `operator` is 'In' or 'NotIn' for "
                           "scope selector"),
        (f"{path}.values", "Invalid value: []string{\"x\"}: must be no value when `operator` is 'Exist' or "
                           "'DoesNotExist' for scope selector"),
        (f"{path}.operator", f'Invalid value: "In": {q.SCOPE_NEEDS_EXISTS}'),
        (f"{path}.scopeName", 'Invalid value: "Bogus": unsupported scope'),
        (f"{path}.operator", 'Invalid value: "Gt": not a valid selector operator'),
    ]


def test_scope_selector_valid() -> None:
    spec = {"hard": {"pods": "1", "cpu": "1"}, "scopeSelector": {"matchExpressions": [
        {"scopeName": "PriorityClass", "operator": "DoesNotExist"},
        {"scopeName": "NotBestEffort", "operator": "Exists", "values": []}]}}
    assert q.validate_resource_quota(rq(spec)) == []
    assert q.validate_resource_quota(rq({"scopeSelector": None})) == []


def test_scope_selector_not_for_resource_and_conflicts() -> None:
    path = "spec.scopeSelector.matchExpressions"
    selector = {"matchExpressions": [{"scopeName": "BestEffort", "operator": "Exists"},
                                     {"scopeName": "NotBestEffort", "operator": "Exists"}]}
    shown = ('core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{'
             'core.ScopedResourceSelectorRequirement{ScopeName:"BestEffort", Operator:"Exists", Values:[]string(nil)}, '
             'core.ScopedResourceSelectorRequirement{ScopeName:"NotBestEffort", Operator:"Exists", '
             'Values:[]string(nil)}}}')
    causes = q.validate_resource_quota(rq({"hard": {"memory": "1Gi"}, "scopeSelector": selector}))
    assert pairs(causes) == [
        (path, f"Invalid value: {shown}: unsupported scope applied to resource"),  # BestEffort with memory
        (path, "Invalid value: []core.ResourceQuotaScope(nil): conflicting scopes"),
    ]
    both = q.validate_resource_quota(rq({"hard": {"pods": "1"}, "scopes": [], "scopeSelector": selector}))
    assert pairs(both) == [(path, "Invalid value: []core.ResourceQuotaScope{}: conflicting scopes")]


# ------------------------------------------------------------ ResourceQuota: updates

def test_quota_update_scopes_immutable_and_spec_only() -> None:
    old = rq({"hard": {"pods": "1"}, "scopes": ["BestEffort", "Terminating"]})
    same = rq({"hard": {"pods": "2"}, "scopes": ["Terminating", "BestEffort"]}, {"used": {"pods": "-1"}})
    assert q.validate_resource_quota_update(same, old) == []  # a set: order does not matter; status is not checked
    new = rq({"hard": {"pods": "-1"}, "scopes": ["BestEffort"]})
    assert pairs(q.validate_resource_quota_update(new, old)) == [
        ("spec.hard[pods]", 'Invalid value: "-1": must be greater than or equal to 0'),
        ("spec.scopes", 'Invalid value: []core.ResourceQuotaScope{"BestEffort"}: field is immutable'),
    ]
    assert pairs(q.validate_resource_quota_update(rq({}), old)) == [
        ("spec.scopes", "Invalid value: []core.ResourceQuotaScope(nil): field is immutable")]
    assert q.validate_resource_quota_update(rq({"scopes": []}), rq({})) == []


def test_quota_status_update() -> None:
    old = rq({"hard": {"pods": "1"}}, resourceVersion="5")
    new = rq({"hard": {"cpu": "bad-name-ignored-here"}}, {"hard": {"pods": "1"}, "used": {"pods": "0.5"}},
             resourceVersion="5")
    assert pairs(q.validate_resource_quota_status_update(new, old)) == [
        ("status.used[pods]", "Invalid value: 500m: must be an integer")]
    no_rv = rq({}, {"hard": {"pods": "1"}})
    assert pairs(q.validate_resource_quota_status_update(no_rv, old)) == [("resourceVersion", "Required value")]


def test_quota_wrong_types_do_not_raise() -> None:
    assert q.validate_resource_quota({"spec": "x", "status": []}) == []
    assert q.validate_resource_quota(rq({"hard": [], "scopes": "BestEffort", "scopeSelector": []})) == []
    causes = q.validate_resource_quota(rq({"scopeSelector": {"matchExpressions": [None]}}))
    assert pairs(causes) == [
        ("spec.scopeSelector.matchExpressions.scopeName", 'Invalid value: "": unsupported scope'),
        ("spec.scopeSelector.matchExpressions.operator", 'Invalid value: "": not a valid selector operator'),
    ]
    assert q.validate_resource_quota_update({"spec": 1}, {"spec": None}) == []


# ------------------------------------------------------------ LimitRange

def test_valid_limit_range() -> None:
    obj = lr({"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"cpu": "100m"},
              "default": {"cpu": "1", "memory": "512Mi"}, "defaultRequest": {"cpu": "500m", "memory": "256Mi"},
              "maxLimitRequestRatio": {"cpu": "10"}},
             {"type": "Pod", "max": {"cpu": "4"}},
             {"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "10Gi"}},
             {"type": "example.com/Custom", "max": {"storage": "1"}})
    assert q.validate_limit_range(obj) == []


def test_limit_type_rules() -> None:
    causes = q.validate_limit_range(lr({"type": "Node"}, {}, {"type": "Pod"}, {"type": "Pod"}))
    assert pairs(causes) == [
        ("spec.limits[0].type", 'Invalid value: "Node": must be a standard limit type or fully qualified'),
        ("spec.limits[1].type", 'Invalid value: "": name part must be non-empty'),
        ("spec.limits[1].type", f'Invalid value: "": {QUALIFIED_MSG}'),
        ("spec.limits[3].type", 'Duplicate value: "Pod"'),
    ]


def test_limit_resource_names() -> None:
    causes = q.validate_limit_range(lr(
        {"type": "Container", "max": {"storage": "1", "foo": "1", "example.com/gpu": "1", "kubernetes.io/x": "1"},
         "min": {"requests.example.com/gpu": "1"}},
        {"type": "PersistentVolumeClaim", "max": {"storage": "1", "foo": "1", "pods": "1"}}))
    assert pairs(causes) == [
        ("spec.limits[0].max[storage]", 'Invalid value: "storage": must be a standard resource for containers'),
        ("spec.limits[0].max[foo]", 'Invalid value: "foo": must be a standard resource type or fully qualified'),
        ("spec.limits[0].max[foo]", 'Invalid value: "foo": must be a standard resource for containers'),
        ("spec.limits[0].min[requests.example.com/gpu]",
         "Invalid value: \"requests.example.com/gpu\": doesn't follow extended resource name standard"),
        ("spec.limits[1].max[foo]", 'Invalid value: "foo": must be a standard resource type or fully qualified'),
    ]


def test_pod_forbids_defaults_and_pvc_needs_storage() -> None:
    causes = q.validate_limit_range(lr(
        {"type": "Pod", "default": {"foo": "1"}, "defaultRequest": {"cpu": "1"}, "max": {"cpu": "500m"}},
        {"type": "PersistentVolumeClaim", "max": {"requests.storage": "1"}},
        {"type": "Pod", "default": {}}))
    assert pairs(causes) == [
        ("spec.limits[0].default", "Forbidden: may not be specified when `type` is 'Pod'"),
        ("spec.limits[0].defaultRequest", "Forbidden: may not be specified when `type` is 'Pod'"),
        ("spec.limits[1].limits", "Required value: either minimum or maximum storage value is required, but neither "
                                  "was provided"),
        ("spec.limits[2].type", 'Duplicate value: "Pod"'),
    ]


def test_min_default_max_ordering() -> None:
    causes = q.validate_limit_range(lr({"type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "2"},
                                        "default": {"cpu": "1500m"}, "defaultRequest": {"cpu": "3"}}))
    assert pairs(causes) == [
        ("spec.limits[0].min[cpu]", "Invalid value: 2: min value 2 is greater than max value 1"),
        ("spec.limits[0].defaultRequest[cpu]", "Invalid value: 3: default request value 3 is greater than max value 1"),
        ("spec.limits[0].defaultRequest[cpu]",
         "Invalid value: 3: default request value 3 is greater than default limit value 1500m"),
        ("spec.limits[0].default[cpu]", "Invalid value: 2: min value 2 is greater than default value 1500m"),
        ("spec.limits[0].default[cpu]", "Invalid value: 1: default value 1500m is greater than max value 1"),
    ]


def test_min_greater_than_default_request() -> None:
    causes = q.validate_limit_range(lr({"type": "Container", "min": {"memory": "1Gi"},
                                        "defaultRequest": {"memory": "512Mi"}, "default": {"memory": "2Gi"}}))
    assert pairs(causes) == [
        ("spec.limits[0].defaultRequest[memory]",
         "Invalid value: 512Mi: min value 1Gi is greater than default request value 512Mi")]


def test_max_limit_request_ratio() -> None:
    causes = q.validate_limit_range(lr(
        {"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}},
        {"type": "Pod", "min": {"cpu": "1"}, "max": {"cpu": "3"}, "maxLimitRequestRatio": {"cpu": "4"}},
        {"type": "PersistentVolumeClaim", "min": {"storage": "0"}, "max": {"storage": "1Gi"},
         "maxLimitRequestRatio": {"storage": "100"}},
        {"type": "example.com/T", "min": {"memory": "1Mi"}, "max": {"memory": "2Mi"},
         "maxLimitRequestRatio": {"memory": "2"}}))
    assert pairs(causes) == [
        ("spec.limits[0].maxLimitRequestRatio[cpu]", "Invalid value: 500m: ratio 500m is less than 1"),
        ("spec.limits[1].maxLimitRequestRatio[cpu]",
         "Invalid value: 4: ratio 4 is greater than max/min = 3.000000"),
    ]  # min 0: max/min is +Inf in Go, never exceeded; 2 == 2Mi/1Mi is allowed


def test_ratio_of_large_values_uses_whole_units() -> None:
    causes = q.validate_limit_range(lr({"type": "PersistentVolumeClaim", "min": {"storage": "3E"},
                                        "max": {"storage": "8E"}, "maxLimitRequestRatio": {"storage": "3"}}))
    assert pairs(causes) == [("spec.limits[0].maxLimitRequestRatio[storage]",
                              "Invalid value: 3: ratio 3 is greater than max/min = 2.666667")]


def test_non_overcommittable_default_must_equal_request() -> None:
    causes = q.validate_limit_range(lr({"type": "Container", "default": {"example.com/gpu": "2", "cpu": "2"},
                                        "defaultRequest": {"example.com/gpu": "1", "cpu": "1"}},
                                       {"type": "Pod", "max": {"hugepages-2Mi": "4Mi"}}))
    assert pairs(causes) == [
        ("spec.limits[0].defaultRequest[example.com/gpu]",
         "Invalid value: 1: default value 2 must equal to defaultRequest value 1 in example.com/gpu")]
    ok = lr({"type": "Container", "default": {"hugepages-2Mi": "4Mi"}, "defaultRequest": {"hugepages-2Mi": "4Mi"}})
    assert q.validate_limit_range(ok) == []


def test_limit_range_quantities_printed_with_string() -> None:
    # 1.5Gi prints as 1536Mi; 0.0001 is rounded up to 1m; a JSON number 1.5 prints as 1500m.
    causes = q.validate_limit_range(lr({"type": "Container", "min": {"memory": "1.5Gi", "cpu": 1.5},
                                        "max": {"memory": "1Gi", "cpu": "0.0001"}}))
    assert pairs(causes) == [
        ("spec.limits[0].min[cpu]", "Invalid value: 1500m: min value 1500m is greater than max value 1m"),
        ("spec.limits[0].min[memory]", "Invalid value: 1536Mi: min value 1536Mi is greater than max value 1Gi"),
    ]


def test_limit_range_wrong_types_do_not_raise() -> None:
    assert q.validate_limit_range({"spec": {"limits": "x"}}) == []
    assert q.validate_limit_range({"spec": None}) == []
    causes = q.validate_limit_range(lr("x", {"type": "Container", "max": {"cpu": []}, "min": "y", "default": None}))
    assert causes == []
