"""Decode-time defaulting and conversion of built-in kinds."""

import pytest

from kapi import defaults


def test_secret_string_data_is_folded_into_data():
    secret = {"kind": "Secret", "data": {"a": "eA=="}, "stringData": {"b": "s3cret", "a": "y"}}
    defaults.apply(secret, "", "Secret")
    assert "stringData" not in secret
    assert secret["data"] == {"a": "eQ==", "b": "czNjcmV0"}
    assert secret["type"] == "Opaque"


def test_service_defaults():
    svc = {"spec": {"ports": [{"port": 80}]}}
    defaults.apply(svc, "", "Service")
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["sessionAffinity"] == "None"
    assert svc["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]


@pytest.mark.parametrize("image,policy", [("nginx", "Always"), ("nginx:latest", "Always"),
                                          ("nginx:1.27", "IfNotPresent"), ("reg:5000/app", "Always"),
                                          ("reg:5000/app:v1", "IfNotPresent"), ("app@sha256:abc", "IfNotPresent")])
def test_pod_image_pull_policy(image, policy):
    pod = {"spec": {"containers": [{"name": "c", "image": image}]}}
    defaults.apply(pod, "", "Pod")
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy
    assert pod["spec"]["restartPolicy"] == "Always"
    assert pod["spec"]["dnsPolicy"] == "ClusterFirst"


def test_explicit_values_are_kept_and_other_kinds_untouched():
    pod = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x", "imagePullPolicy": "Never"}]}}
    defaults.apply(pod, "", "Pod")
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"
    cm = {"data": {"a": "b"}}
    defaults.apply(cm, "", "ConfigMap")
    assert cm == {"data": {"a": "b"}}
