"""kapi.k8sproto.goshape: a built-in object as its Go struct holds it (what kube's field manager compares)."""

from __future__ import annotations

from kapi.k8sproto import goshape


def test_zero_deployment_has_the_structs_and_non_omitempty_fields_of_the_go_type() -> None:
    message = goshape.message_for({"apiVersion": "apps/v1", "kind": "Deployment"})
    assert message is not None
    zero = goshape.shaped({}, message)
    # non-pointer structs are {} (recursively), containers (no omitempty) null, pointers (replicas, selector,
    # rollingUpdate) and omitempty fields absent; the zero Time marshals as null
    assert zero == {"metadata": {"creationTimestamp": None},
                    "spec": {"template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": None}},
                             "strategy": {}},
                    "status": {}}


def test_present_fields_are_kept_and_filled_inside_list_items_and_inline_members() -> None:
    message = goshape.message_for({"apiVersion": "v1", "kind": "Pod"})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}]}],
                    "volumes": [{"name": "v", "emptyDir": {}}]}}
    out = goshape.shaped(pod, message)
    assert pod["spec"]["containers"] == [{"name": "c", "ports": [{"containerPort": 80}]}]  # a copy is filled
    assert out["spec"]["containers"] == [{"name": "c", "resources": {}, "ports": [{"containerPort": 80}]}]
    assert out["spec"]["volumes"] == [{"name": "v", "emptyDir": {}}]  # inline VolumeSource: all pointers
    assert out["status"] == {}


def test_kinds_without_a_message_are_not_shaped() -> None:
    assert goshape.message_for({"apiVersion": "example.com/v1", "kind": "Widget"}) is None
    assert goshape.message_for({"kind": "Pod"}) is None
