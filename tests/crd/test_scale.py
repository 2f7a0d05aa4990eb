"""services/gateway/handlers/scale.py: the Scale of custom resources follows the CRD's scale paths."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from services.gateway.handlers.scale import set_replicas, to_scale

PATHS = (".spec.size.count", ".status.ready", ".status.labelSelector")


@pytest.mark.parametrize(("obj", "spec", "status"), [
    ({"spec": {"size": {"count": 3}}, "status": {"ready": 2, "labelSelector": "app=x"}},
     {"replicas": 3}, {"replicas": 2, "selector": "app=x"}),
    ({"spec": {}}, {}, {"replicas": 0}),  # ScaleSpec.replicas and ScaleStatus.selector are omitempty
])
def test_custom_resource_scale(obj: dict[str, Any], spec: dict[str, Any], status: dict[str, Any]) -> None:
    scale = to_scale({"metadata": {"name": "a", "uid": "u", "labels": {"x": "y"}}, **obj}, PATHS)
    assert (scale["apiVersion"], scale["kind"], scale["metadata"]) == ("autoscaling/v1", "Scale",
                                                                       {"name": "a", "uid": "u"})
    assert (scale["spec"], scale["status"]) == (spec, status)


def test_wrong_type_is_500_as_kube_accessors() -> None:
    with pytest.raises(errors.StatusError) as caught:
        to_scale({"spec": {"size": {"count": "two"}}}, PATHS)
    assert caught.value.code == 500
    assert caught.value.message.endswith(".spec.size.count accessor error: two is of the type string, expected int64")


def test_set_replicas_writes_the_spec_path() -> None:
    obj: dict[str, Any] = {"spec": {"size": None}}
    set_replicas(obj, 4, PATHS)
    assert obj == {"spec": {"size": {"count": 4}}}
    workload: dict[str, Any] = {}
    set_replicas(workload, 2)
    assert workload == {"spec": {"replicas": 2}}
