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
