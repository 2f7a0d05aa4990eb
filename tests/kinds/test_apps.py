"""kapi.kinds.apps: defaults-backed validation and the apps/v1 update rules, message for message."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.errors import Cause
from kapi.kinds import apps, strategy_for

POD_SPEC: dict[str, Any] = {"containers": [{"name": "web", "image": "nginx"}]}


def _workload(kind: str, **spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "web", "namespace": "d"},
                           "spec": {"selector": {"matchLabels": {"app": "web"}},
                                    "template": {"metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC},
                                    **spec}}
    if kind == "StatefulSet":
        obj["spec"]["serviceName"] = "web"
    strategy_for("apps", kind).default(obj)
    return obj


@pytest.mark.parametrize("kind", ["Deployment", "ReplicaSet", "DaemonSet"])
def test_selector_is_immutable(kind: str) -> None:
    old = _workload(kind)
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
    new["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    assert strategy_for("apps", kind).validate_update(new, old) == [Cause(
        "FieldValueInvalid", "Invalid value: &LabelSelector{MatchLabels:map[string]string{app: web,tier: x,},"
        "MatchExpressions:[]LabelSelectorRequirement{},}: field is immutable", "spec.selector")]
    assert strategy_for("apps", kind).validate_update(copy.deepcopy(old), old) == []
    # the status subresource keeps the stored spec; there is nothing of the selector to check
    assert strategy_for("apps", kind).validate_update(new, old, "status") == []


def test_selector_expressions_render_as_kube_prints_them() -> None:
    old = _workload("Deployment")
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}
    (cause,) = strategy_for("apps", "Deployment").validate_update(new, old)
    assert cause.message == ("Invalid value: &LabelSelector{MatchLabels:map[string]string{},MatchExpressions:"
                             "[]LabelSelectorRequirement{LabelSelectorRequirement{Key:app,Operator:In,"
                             "Values:[web api],},},}: field is immutable")


def test_deployment_mutable_fields_stay_mutable() -> None:
    old = _workload("Deployment")
    new = copy.deepcopy(old)
    new["spec"]["replicas"] = 5
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    new["spec"]["strategy"] = {"type": "Recreate"}
    assert strategy_for("apps", "Deployment").validate_update(new, old) == []


STS_FORBIDDEN = Cause("FieldValueForbidden", "Forbidden: updates to statefulset spec for fields other than "
                      "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
                      "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden", "spec")


@pytest.mark.parametrize(("path", "value", "expected"), [
    ("replicas", 3, []),
    ("ordinals", {"start": 2}, []),
    ("updateStrategy", {"type": "OnDelete"}, []),
    ("revisionHistoryLimit", 2, []),
    ("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Delete", "whenScaled": "Retain"}, []),
    ("minReadySeconds", 10, []),
    ("serviceName", "other", [STS_FORBIDDEN]),
    ("podManagementPolicy", "Parallel", [STS_FORBIDDEN]),
    ("selector", {"matchLabels": {"app": "x"}}, [STS_FORBIDDEN]),
    ("volumeClaimTemplates", [{"metadata": {"name": "data"}}], [STS_FORBIDDEN]),
])
def test_statefulset_update_outside_the_mutable_fields(path: str, value: Any, expected: list[Cause]) -> None:
    old = _workload("StatefulSet")
    new = copy.deepcopy(old)
    new["spec"][path] = value
    assert strategy_for("apps", "StatefulSet").validate_update(new, old) == expected


def test_statefulset_template_may_change() -> None:
    old = _workload("StatefulSet")
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2"
    assert strategy_for("apps", "StatefulSet").validate_update(new, old) == []
    assert apps.STATEFULSET_UPDATE_FORBIDDEN in STS_FORBIDDEN.message


# ------------------------------------------------------------ ValidateDeploymentSpec and the workload selectors

PERCENT = ("a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', "
           "regex used for validation is '[0-9]+%')")
BAD_SELECTOR = {"matchExpressions": [{"key": "app", "operator": "Near", "values": ["web"]}]}
BAD_SELECTOR_SHOWN = ("&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{"
                      "LabelSelectorRequirement{Key:app,Operator:Near,Values:[web],},},}")


def _invalid(path: str, shown: str, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


@pytest.mark.parametrize(("spec", "expected"), [
    ({"revisionHistoryLimit": -1},
     [_invalid("spec.revisionHistoryLimit", "-1", "must be greater than or equal to 0")]),
    ({"minReadySeconds": -1}, [_invalid("spec.minReadySeconds", "-1", "must be greater than or equal to 0")]),
    ({"progressDeadlineSeconds": -1},
     [_invalid("spec.progressDeadlineSeconds", "-1", "must be greater than or equal to 0"),
      _invalid("spec.progressDeadlineSeconds", "-1", "must be greater than minReadySeconds")]),
    ({"minReadySeconds": 600, "progressDeadlineSeconds": 600},
     [_invalid("spec.progressDeadlineSeconds", "600", "must be greater than minReadySeconds")]),
    ({"minReadySeconds": 10, "progressDeadlineSeconds": 11}, []),
    ({"strategy": {"rollingUpdate": {"maxSurge": "str"}}},
     [_invalid("spec.strategy.rollingUpdate.maxSurge", 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"str"}', PERCENT)]),
    ({"strategy": {"rollingUpdate": {"maxSurge": -1}}},
     [_invalid("spec.strategy.rollingUpdate.maxSurge", "-1", "must be greater than or equal to 0")]),
    ({"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}},
     [_invalid("spec.strategy.rollingUpdate.maxUnavailable", 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}',
               "may not be 0 when `maxSurge` is 0")]),
    ({"strategy": {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": 0}}},
     [_invalid("spec.strategy.rollingUpdate.maxUnavailable", 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}',
               "may not be 0 when `maxSurge` is 0")]),
    ({"strategy": {"rollingUpdate": {"maxUnavailable": "101%"}}},
     [_invalid("spec.strategy.rollingUpdate.maxUnavailable", 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"101%"}',
               "must not be greater than 100%")]),
    ({"strategy": {"type": "Recreate", "rollingUpdate": {}}},
     [Cause("FieldValueForbidden", "Forbidden: may not be specified when strategy `type` is 'Recreate'",
            "spec.strategy.rollingUpdate")]),
    ({"strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}, []),
    ({"strategy": {"type": "Recreate"}}, []),
    ({"selector": BAD_SELECTOR},
     [_invalid("spec.selector.matchExpressions[0].operator", '"Near"', "not a valid selector operator"),
      _invalid("spec.selector", BAD_SELECTOR_SHOWN, "invalid label selector")]),
    ({"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
     [Cause("FieldValueRequired", "Required value: must be specified when `operator` is 'In' or 'NotIn'",
            "spec.selector.matchExpressions[0].values"),
      _invalid("spec.selector", "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]"
               "LabelSelectorRequirement{LabelSelectorRequirement{Key:app,Operator:In,Values:[],},},}",
               "invalid label selector")]),
    ({"selector": {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["web"]}]}},
     [Cause("FieldValueForbidden", "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            "spec.selector.matchExpressions[0].values"),
      _invalid("spec.selector", "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]"
               "LabelSelectorRequirement{LabelSelectorRequirement{Key:app,Operator:Exists,Values:[web],},},}",
               "invalid label selector")]),
    ({"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]}}, []),
    ({"template": {"metadata": {"labels": {"app": "web"}}, "spec": None}},
     [Cause("FieldValueRequired", "Required value", "spec.template.spec.containers")]),
])
def test_deployment_spec_validation(spec: dict[str, Any], expected: list[Cause]) -> None:
    assert strategy_for("apps", "Deployment").validate(_workload("Deployment", **spec)) == expected


def test_defaults_keep_a_plain_deployment_valid() -> None:
    obj = _workload("Deployment")
    assert obj["spec"]["strategy"] == {"type": "RollingUpdate",
                                       "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert strategy_for("apps", "Deployment").validate(obj) == []


@pytest.mark.parametrize(("kind", "expected"), [
    ("ReplicaSet", [_invalid("spec.selector.matchExpressions[0].operator", '"Near"', "not a valid selector operator"),
                    _invalid("spec.selector", BAD_SELECTOR_SHOWN, "invalid label selector")]),
    ("StatefulSet", [_invalid("spec.selector.matchExpressions[0].operator", '"Near"', "not a valid selector operator"),
                     Cause("FieldValueInvalid", f"Invalid value: {BAD_SELECTOR_SHOWN}", "spec.selector")]),
    ("DaemonSet", [_invalid("spec.selector.matchExpressions[0].operator", '"Near"', "not a valid selector operator")]),
])
def test_selector_operators_of_the_other_workloads(kind: str, expected: list[Cause]) -> None:
    assert strategy_for("apps", kind).validate(_workload(kind, selector=BAD_SELECTOR)) == expected


@pytest.mark.parametrize("kind", ["ReplicaSet", "StatefulSet", "DaemonSet"])
def test_workload_negative_min_ready_seconds_and_null_pod_spec(kind: str) -> None:
    assert strategy_for("apps", kind).validate(_workload(kind, minReadySeconds=-1)) == [
        _invalid("spec.minReadySeconds", "-1", "must be greater than or equal to 0")]
    null_spec = _workload(kind, template={"metadata": {"labels": {"app": "web"}}, "spec": None})
    # a StatefulSet's template PodSpec is not validated (ValidatePodTemplateSpecForStatefulSet's TODO)
    assert strategy_for("apps", kind).validate(null_spec) == ([] if kind == "StatefulSet" else [
        Cause("FieldValueRequired", "Required value", "spec.template.spec.containers")])


@pytest.mark.parametrize(("strategy", "expected"), [
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "str"}},
     [_invalid("spec.updateStrategy.rollingUpdate.maxSurge", 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"str"}',
               PERCENT)]),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
     [_invalid("spec.updateStrategy.rollingUpdate.maxSurge", 'intstr.IntOrString{Type:0, IntVal:1, StrVal:""}',
               "may not be set when maxUnavailable is non-zero")]),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}},
     [Cause("FieldValueRequired", "Required value: cannot be 0 when maxSurge is 0",
            "spec.updateStrategy.rollingUpdate.maxUnavailable")]),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "200%"}},
     [_invalid("spec.updateStrategy.rollingUpdate.maxSurge", 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"200%"}',
               "must not be greater than 100%")]),
    ({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "10%"}}, []),
    ({"type": "OnDelete"}, []),
])
def test_daemonset_update_strategy(strategy: dict[str, Any], expected: list[Cause]) -> None:
    assert strategy_for("apps", "DaemonSet").validate(_workload("DaemonSet", updateStrategy=strategy)) == expected


@pytest.mark.parametrize(("spec", "expected"), [
    ({"podManagementPolicy": "Random"},
     [_invalid("spec.podManagementPolicy", '"Random"', "must be 'OrderedReady' or 'Parallel'")]),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}},
     [_invalid("spec.updateStrategy.rollingUpdate.partition", "-1", "must be greater than or equal to 0")]),
    ({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}},
     [_invalid("spec.updateStrategy.rollingUpdate.maxUnavailable", 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}',
               "cannot be 0")]),
    ({"replicas": -1, "minReadySeconds": -1},
     [_invalid("spec.replicas", "-1", "must be greater than or equal to 0"),
      _invalid("spec.minReadySeconds", "-1", "must be greater than or equal to 0")]),
])
def test_statefulset_spec_validation(spec: dict[str, Any], expected: list[Cause]) -> None:
    assert strategy_for("apps", "StatefulSet").validate(_workload("StatefulSet", **spec)) == expected


@pytest.mark.parametrize(("kind", "field", "strategy", "expected"), [
    ("Deployment", "strategy", {"type": "Blue"},
     [Cause("FieldValueNotSupported", 'Unsupported value: apps.DeploymentStrategy{Type:"Blue", RollingUpdate:'
            '(*apps.RollingUpdateDeployment)(nil)}: supported values: "Recreate", "RollingUpdate"', "spec.strategy")]),
    ("DaemonSet", "updateStrategy", {"type": "Blue"},
     [Cause("FieldValueNotSupported", 'Unsupported value: apps.DaemonSetUpdateStrategy{Type:"Blue", RollingUpdate:'
            '(*apps.RollingUpdateDaemonSet)(nil)}: supported values: "RollingUpdate", "OnDelete"',
            "spec.updateStrategy")]),
    ("StatefulSet", "updateStrategy", {"type": "Blue"},
     [_invalid("spec.updateStrategy", 'apps.StatefulSetUpdateStrategy{Type:"Blue", RollingUpdate:'
               "(*apps.RollingUpdateStatefulSetStrategy)(nil)}", "must be 'RollingUpdate' or 'OnDelete'")]),
    ("StatefulSet", "updateStrategy", {"type": "OnDelete", "rollingUpdate": {"partition": 1}},
     [_invalid("spec.updateStrategy.rollingUpdate", "apps.RollingUpdateStatefulSetStrategy{Partition:1, "
               "MaxUnavailable:(*intstr.IntOrString)(nil)}", "only allowed for updateStrategy 'RollingUpdate'")]),
    ("Deployment", "strategy", None, []),
    ("DaemonSet", "updateStrategy", None, []),
    ("StatefulSet", "updateStrategy", None, []),
])
def test_strategy_types(kind: str, field: str, strategy: Any, expected: list[Cause]) -> None:
    assert strategy_for("apps", kind).validate(_workload(kind, **{field: strategy})) == expected
