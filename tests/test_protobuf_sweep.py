"""Findings of the kubectl sweep over kapi's protobuf (typed clients send protobuf bodies too): a zero
IntOrString that Go holds in a pointer survives decoding (``kubectl create pdb --min-available=0``), while the
three by-value IntOrString fields keep their "zero means unset" reading.

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


def test_by_value_table_names_only_int_or_string_fields_of_the_schema() -> None:
    table = decoder.schema()
    for message, field in decoder._BY_VALUE_INT_OR_STRING:
        ftype = next(spec[1] for spec in table.messages[message].fields.values() if spec[0] == field)
        assert isinstance(ftype, decoder.Message) and ftype.name == decoder.INT_OR_STRING
