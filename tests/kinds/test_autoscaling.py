"""HorizontalPodAutoscaler conversion, defaults, validation and the TARGETS column (kapi.kinds.autoscaling)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kapi.kinds import autoscaling


def _v2(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                            "minReplicas": 1, "maxReplicas": 5}
    base.update(spec)
    return {"apiVersion": autoscaling.V2, "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "demo"}, "spec": base}


CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
MEMORY = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                                                                        "averageValue": "100Mi"}}}
PODS = {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}
OBJECT = {"type": "Object", "object": {"describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"},
                                       "metric": {"name": "hits"}, "target": {"type": "Value", "value": "10"}}}
EXTERNAL = {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}},
                                             "target": {"type": "AverageValue", "averageValue": "30"}}}
CONTAINER = {"type": "ContainerResource", "containerResource": {
    "name": "cpu", "container": "app", "target": {"type": "Utilization", "averageUtilization": 60}}}


def test_cpu_target_becomes_v1_field_and_back() -> None:
    v1 = autoscaling.to_v1(_v2(metrics=[CPU]))
    assert v1["apiVersion"] == autoscaling.V1
    assert v1["spec"] == {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                          "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}
    assert "annotations" not in v1["metadata"]
    assert autoscaling.convert(v1, autoscaling.V2)["spec"]["metrics"] == [CPU]


@pytest.mark.parametrize("metrics", [
    [MEMORY], [PODS], [OBJECT], [EXTERNAL], [CONTAINER], [PODS, OBJECT, EXTERNAL, MEMORY, CONTAINER],
])
def test_other_metrics_round_trip_through_the_annotation(metrics: list[dict[str, Any]]) -> None:
    obj = _v2(metrics=metrics)
    v1 = autoscaling.to_v1(obj)
    assert "targetCPUUtilizationPercentage" not in v1["spec"]
    annotation = json.loads(v1["metadata"]["annotations"][autoscaling.METRIC_SPECS_ANNOTATION])
    assert len(annotation) == len(metrics)
    assert autoscaling.to_v2(v1)["spec"]["metrics"] == metrics
    assert "annotations" not in autoscaling.to_v2(v1)["metadata"]


def test_cpu_metric_moves_last_as_kube() -> None:
    v1 = autoscaling.to_v1(_v2(metrics=[CPU, MEMORY]))
    assert autoscaling.to_v2(v1)["spec"]["metrics"] == [MEMORY, CPU]


def test_status_and_conditions_round_trip() -> None:
    obj = _v2(metrics=[CPU])
    obj["status"] = {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 40,
                                                                     "averageValue": "100m"}}}],
        "conditions": [{"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}]}
    v1 = autoscaling.to_v1(obj)
    assert v1["status"] == {"currentReplicas": 2, "desiredReplicas": 3, "currentCPUUtilizationPercentage": 40}
    assert set(v1["metadata"]["annotations"]) == {autoscaling.METRIC_STATUSES_ANNOTATION,
                                                  autoscaling.CONDITIONS_ANNOTATION}
    assert autoscaling.to_v2(v1)["status"] == obj["status"]


def test_behavior_annotation_uses_go_field_names_and_round_trips() -> None:
    obj = _v2(metrics=[CPU], behavior={"scaleDown": {"stabilizationWindowSeconds": 60}})
    autoscaling.default_v2(obj)
    v1 = autoscaling.to_v1(obj)
    text = v1["metadata"]["annotations"][autoscaling.BEHAVIOR_ANNOTATION]
    assert json.loads(text)["ScaleDown"]["StabilizationWindowSeconds"] == 60
    assert autoscaling.to_v2(v1)["spec"]["behavior"] == obj["spec"]["behavior"]


def test_user_round_trip_annotations_on_v2_are_replaced_in_v1() -> None:
    obj = _v2(metrics=[CPU])
    obj["metadata"]["annotations"] = {autoscaling.METRIC_SPECS_ANNOTATION: "junk", "keep": "me"}
    assert autoscaling.to_v1(obj)["metadata"]["annotations"] == {"keep": "me"}


def test_v1_without_target_reads_back_with_the_default_cpu_metric() -> None:
    v1 = {"apiVersion": autoscaling.V1, "kind": "HorizontalPodAutoscaler", "metadata": {"name": "x"},
          "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}}
    autoscaling.apply_defaults(v1)
    assert v1["spec"]["minReplicas"] == 1 and "targetCPUUtilizationPercentage" not in v1["spec"]
    v2 = autoscaling.convert(v1, autoscaling.V2)
    assert v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    assert autoscaling.to_v1(v2)["spec"]["targetCPUUtilizationPercentage"] == 80


def test_v2_defaults_fill_behavior_only_when_given() -> None:
    plain = _v2()
    del plain["spec"]["minReplicas"]
    autoscaling.default_v2(plain)
    assert plain["spec"]["minReplicas"] == 1 and "behavior" not in plain["spec"]
    with_behavior = _v2(behavior={"scaleUp": {"selectPolicy": "Min"}})
    autoscaling.default_v2(with_behavior)
    assert with_behavior["spec"]["behavior"]["scaleUp"]["selectPolicy"] == "Min"
    assert with_behavior["spec"]["behavior"]["scaleUp"]["policies"][0] == {"type": "Pods", "value": 4,
                                                                           "periodSeconds": 15}
    assert with_behavior["spec"]["behavior"]["scaleDown"] == {
        "selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


BAD = [
    ({"minReplicas": 0}, "spec.minReplicas", "Invalid value: 0: must be greater than or equal to 1"),
    ({"maxReplicas": 0}, "spec.maxReplicas", "Invalid value: 0: must be greater than 0"),
    ({"minReplicas": 4, "maxReplicas": 2}, "spec.maxReplicas",
     "Invalid value: 2: must be greater than or equal to `minReplicas`"),
    ({"scaleTargetRef": {"kind": "Deployment"}}, "spec.scaleTargetRef.name", "Required value"),
    ({"scaleTargetRef": {"kind": "Deployment", "name": "a/b"}}, "spec.scaleTargetRef.name",
     "Invalid value: \"a/b\": may not contain '/'"),
    ({"metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                               "averageUtilization": 0}}}]},
     "spec.metrics[0].resource.target.averageUtilization", "Invalid value: 0: must be greater than 0"),
    ({"metrics": [{"type": "Pods", "resource": CPU["resource"]}]}, "spec.metrics[0].pods",
     "Required value: must populate information for the given metric source"),
    ({"metrics": [{"type": "Bogus"}]}, "spec.metrics[0].type", 'Unsupported value: "Bogus": supported values: '
     '"ContainerResource", "External", "Object", "Pods", "Resource"'),
    ({"metrics": [{"type": "Pods", "pods": {"metric": {"name": "q"}, "target": {"type": "AverageValue"}}}]},
     "spec.metrics[0].pods.target.averageValue", "Required value: must specify a positive target averageValue"),
    ({"behavior": {"scaleUp": {"policies": []}}}, "spec.behavior.scaleUp.policies",
     "Required value: must specify at least one Policy"),
    ({"behavior": {"scaleUp": {"stabilizationWindowSeconds": 3601, "policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 1}]}}}, "spec.behavior.scaleUp.stabilizationWindowSeconds",
     "Invalid value: 3601: must be less than or equal to 3600"),
    ({"behavior": {"scaleDown": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1801}]}}},
     "spec.behavior.scaleDown.policies[0].periodSeconds", "Invalid value: 1801: must be less than or equal to 1800"),
]


@pytest.mark.parametrize(("spec", "field", "message"), BAD)
def test_validation(spec: dict[str, Any], field: str, message: str) -> None:
    causes = autoscaling.validate(_v2(**spec))
    assert (field, message) in [(c.field, c.message) for c in causes]


def test_valid_objects_pass_in_both_versions() -> None:
    obj = _v2(metrics=[CPU, MEMORY, PODS, OBJECT, EXTERNAL, CONTAINER])
    autoscaling.default_v2(obj)
    assert autoscaling.validate(obj) == []
    assert autoscaling.validate(autoscaling.to_v1(obj)) == []


def test_v1_validation_reports_v2_paths() -> None:
    v1 = autoscaling.to_v1(_v2(metrics=[CPU]))
    v1["spec"]["targetCPUUtilizationPercentage"] = 0
    assert [c.field for c in autoscaling.validate(v1)] == ["spec.metrics[0].resource.target.averageUtilization"]


@pytest.mark.parametrize(("metrics", "current", "want"), [
    ([], [], "<none>"),
    ([CPU], [], "cpu: <unknown>/50%"),
    ([CPU], [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 12}}}],
     "cpu: 12%/50%"),
    ([MEMORY, PODS, OBJECT], [], "memory: <unknown>/100Mi, <unknown>/1k + 1 more..."),
    ([EXTERNAL], [], "<unknown>/30 (avg)"),
])
def test_targets_column(metrics: list[Any], current: list[Any], want: str) -> None:
    obj = _v2(metrics=metrics)
    obj["status"] = {"currentMetrics": current}
    assert autoscaling.format_targets(obj) == want
    if len(metrics) == 1:  # the v1 form prints the same (a v1 object is converted first)
        assert autoscaling.format_targets(autoscaling.to_v1(copy.deepcopy(obj))) == want
