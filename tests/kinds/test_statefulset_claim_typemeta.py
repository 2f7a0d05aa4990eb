"""StatefulSet ``spec.volumeClaimTemplates[*]`` carry ``kind: PersistentVolumeClaim`` / ``apiVersion: v1`` as
kube-apiserver 1.37 writes them: Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec sets them on every template
(pkg/apis/apps/v1 conversion.go, kubernetes#87583) and the conversion back clears what the client sent, so the
stored object, the create answer and every read have them, first in Go's order (the embedded TypeMeta)."""

from __future__ import annotations

import copy
import json

from kapi.k8sproto import goorder
from kapi.kinds import strategy_for
from kapi.kinds.base import Obj

STS = strategy_for("apps", "StatefulSet")


def _sts(claims: list[Obj]) -> Obj:
    return {"kind": "StatefulSet", "apiVersion": "apps/v1", "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "serviceName": "web",
                     "template": {"metadata": {"labels": {"app": "web"}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}},
                     "volumeClaimTemplates": claims}}


def test_every_claim_template_gets_its_type_meta_first():
    sts = _sts([{"metadata": {"name": "data"}, "spec": {}}, {"metadata": {"name": "logs"}}])
    STS.default(sts)
    claims = sts["spec"]["volumeClaimTemplates"]
    assert [list(c)[:2] for c in claims] == [["kind", "apiVersion"], ["kind", "apiVersion"]]
    assert claims[0] == {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": {"name": "data"},
                         "spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}


def test_what_the_client_sent_is_replaced():
    sts = _sts([{"apiVersion": "v2", "kind": "Foo", "metadata": {"name": "data"}}])
    STS.default(sts)
    claim = sts["spec"]["volumeClaimTemplates"][0]
    assert (claim["kind"], claim["apiVersion"]) == ("PersistentVolumeClaim", "v1")


def test_the_wire_order_writes_a_nested_claim_s_type_meta_first():
    sts = _sts([{"metadata": {"name": "data"}, "spec": {}, "status": {}, "apiVersion": "v1",
                 "kind": "PersistentVolumeClaim"}])
    out = json.dumps(goorder.wire_order(sts)["spec"]["volumeClaimTemplates"], separators=(",", ":"))
    assert out == ('[{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data"},"spec":{},'
                   '"status":{}}]')


def test_an_update_of_an_object_stored_without_them_is_not_a_spec_change():
    old = _sts([{"metadata": {"name": "data"}, "spec": {}}])
    STS.default(old)
    new = copy.deepcopy(old)
    for claim in old["spec"]["volumeClaimTemplates"]:  # as stored before kapi wrote them
        del claim["kind"], claim["apiVersion"]
    assert STS.validate_update(new, old) == []
    new["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] = "other"
    assert [c.field for c in STS.validate_update(new, old)] == ["spec"]


def test_pod_templates_of_other_workloads_get_no_type_meta():
    for kind in ("Deployment", "DaemonSet", "ReplicaSet"):
        obj = {"spec": {"template": {"metadata": {}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
        strategy_for("apps", kind).default(obj)
        assert "kind" not in obj["spec"]["template"] and "apiVersion" not in obj["spec"]["template"]
