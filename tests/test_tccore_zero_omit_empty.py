"""kapi.k8sproto.zero.omit_empty: what the Go struct of a built-in kind keeps of a decoded JSON body."""

from __future__ import annotations

import copy

from kapi.k8sproto import zero


def test_empty_omitempty_collections_and_zero_scalars_go_at_any_depth() -> None:
    pod = {"metadata": {"name": "p", "labels": {}, "finalizers": [], "generateName": ""},
           "spec": {"hostNetwork": False, "nodeSelector": {}, "tolerations": [],
                    "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 0}],
                                    "env": [], "resources": {"limits": {}}}]}}
    zero.omit_empty(pod, "", "v1", "Pod")
    assert pod == {"metadata": {"name": "p"},
                   "spec": {"containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80}],
                                            "resources": {}}]}}


def test_pointers_fields_without_omitempty_and_managed_fields_reset_stay() -> None:
    role = {"metadata": {"name": "r", "managedFields": []}, "rules": []}
    zero.omit_empty(role, "rbac.authorization.k8s.io", "v1", "Role")
    assert role == {"metadata": {"name": "r", "managedFields": []}, "rules": []}  # rules has no omitempty
    deployment = {"metadata": {"name": "d"}, "spec": {"replicas": 0, "paused": False, "minReadySeconds": 0,
                                                      "template": {"spec": {"terminationGracePeriodSeconds": 0,
                                                                            "containers": []}}}}
    zero.omit_empty(deployment, "apps", "v1", "Deployment")
    assert deployment == {"metadata": {"name": "d"}, "spec": {"replicas": 0, "template": {
        "spec": {"terminationGracePeriodSeconds": 0, "containers": []}}}}


def test_empty_structs_stay_whatever_their_tag() -> None:
    # encoding/json never omits a struct (securityContext is a pointer, resources a plain struct, emptyDir a
    # pointer to an empty struct that selects the volume source)
    spec = {"securityContext": {}, "volumes": [{"name": "v", "emptyDir": {}}],
            "containers": [{"name": "c", "resources": {}}]}
    pod = {"metadata": {"name": "p"}, "spec": copy.deepcopy(spec)}
    zero.omit_empty(pod, "", "v1", "Pod")
    assert pod == {"metadata": {"name": "p"}, "spec": spec}


def test_a_kind_without_go_facts_is_left_alone() -> None:
    obj = {"metadata": {"labels": {}}, "spec": {"x": []}}
    zero.omit_empty(obj, "example.com", "v1", "Widget")
    assert obj == {"metadata": {"labels": {}}, "spec": {"x": []}}
