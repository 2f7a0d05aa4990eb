"""Findings of the kubectl sweep over kapi's protobuf (typed clients send protobuf bodies too): a zero
IntOrString that Go holds in a pointer survives decoding (``kubectl create pdb --min-available=0``), while the
three by-value IntOrString fields keep their "zero means unset" reading; zero scalars follow the Go field
facts of kapi/k8sproto/gofields.json (pointer / omitempty).

Bodies are built with kapi.k8sproto.encode, which writes what gogo's Marshal writes: a pointer field only when
set, a by-value one always (tests/test_k8sproto_encoder.py checks those bytes).
"""

from __future__ import annotations

from typing import Any

import pytest

from kapi import k8sproto
from kapi.k8sproto import decoder


def roundtrip(obj: dict[str, Any]) -> dict[str, Any]:
    return k8sproto.decode(k8sproto.encode(obj))


@pytest.mark.parametrize("field", ["minAvailable", "maxUnavailable"])
def test_pdb_zero_is_kept(field: str) -> None:
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "p", "namespace": "n"},
           "spec": {field: 0, "selector": {"matchLabels": {"app": "web"}}}}
    assert roundtrip(pdb)["spec"] == {field: 0, "selector": {"matchLabels": {"app": "web"}}}


def test_rolling_update_zero_max_surge_is_kept() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"strategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}}}
    assert roundtrip(deployment)["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": 1}
    daemonset = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"},
                 "spec": {"updateStrategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "10%"}}}}
    assert roundtrip(daemonset)["spec"]["updateStrategy"]["rollingUpdate"] == {"maxSurge": 0, "maxUnavailable": "10%"}
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
           "spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 0}}}}
    assert roundtrip(sts)["spec"]["updateStrategy"]["rollingUpdate"] == {"maxUnavailable": 0}


def test_network_policy_port_zero_is_kept() -> None:
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "np"},
              "spec": {"podSelector": {}, "ingress": [{"ports": [{"protocol": "TCP", "port": 0}]}]}}
    assert roundtrip(policy)["spec"]["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 0}]


def test_by_value_int_or_string_zero_is_still_unset() -> None:
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
           "spec": {"ports": [{"port": 80, "targetPort": 0}, {"port": 81, "targetPort": 8081}]}}
    assert roundtrip(svc)["spec"]["ports"] == [{"port": 80}, {"port": 81, "targetPort": 8081}]
    probe = {"httpGet": {"path": "/", "port": 0}, "tcpSocket": {"port": 0}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i", "livenessProbe": probe}]}}
    decoded = roundtrip(pod)["spec"]["containers"][0]["livenessProbe"]
    assert decoded == {"httpGet": {"path": "/"}, "tcpSocket": {}}


def test_by_value_int_or_string_fields_are_the_three_non_pointer_ones() -> None:
    table = decoder.schema()
    by_value = {(m.name, name) for m in table.messages.values() for name, ftype, mode, _ in m.fields.values()
                if mode == "" and isinstance(ftype, decoder.Message) and ftype.name == decoder.INT_OR_STRING
                and name in m.zero_drop}
    assert by_value == {("k8s.io.api.core.v1.ServicePort", "targetPort"),
                        ("k8s.io.api.core.v1.HTTPGetAction", "port"),
                        ("k8s.io.api.core.v1.TCPSocketAction", "port")}


def test_zero_scalars_follow_go_pointer_and_omitempty() -> None:
    """kube decodes the wire into Go structs and serves them through encoding/json: a non-pointer omitempty zero
    disappears, a pointer's zero is kept as sent, a plain field's zero is written."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 0, "minReadySeconds": 0, "paused": False,
                           "template": {"spec": {"hostNetwork": False, "automountServiceAccountToken": False,
                                                 "containers": [{"name": "c", "stdin": False, "tty": False}]}}}}
    spec = roundtrip(deployment)["spec"]
    assert spec["replicas"] == 0 and "minReadySeconds" not in spec and "paused" not in spec
    pod_spec = spec["template"]["spec"]
    assert "hostNetwork" not in pod_spec and pod_spec["automountServiceAccountToken"] is False
    assert pod_spec["containers"] == [{"name": "c"}]
    assert "generation" not in roundtrip(deployment)["metadata"]
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"},
           "spec": {"storageClassName": "", "accessModes": ["ReadWriteOnce"]}}
    assert roundtrip(pvc)["spec"]["storageClassName"] == ""  # *string: "" means "no class", kept
    token = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "metadata": {},
             "spec": {"token": "t"}, "status": {"authenticated": False, "user": {"username": ""}}}
    assert roundtrip(token)["status"] == {"user": {}}  # authenticated and username are omitempty
