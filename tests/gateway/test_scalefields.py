"""kube's ScaleHandler (k8s.io/apimachinery pkg/util/managedfields/scalehandler.go) in services/gateway/scalefields."""

from __future__ import annotations

from kapi import managedfields as mf
from services.gateway import scalefields

REPLICAS = ("f:spec", "f:replicas")
TEMPLATE = ("f:spec", "f:template")
MAPPINGS = scalefields.REPLICAS_PATHS[("apps", "deployments")]
T = "2026-01-01T00:00:00Z"


def _entry(manager: str, operation: str, version: str, *fields: tuple[str, ...], time: str = T,
           subresource: str = "") -> mf.Entry:
    return mf.Entry(manager, operation, version, frozenset(fields), time, subresource)


def test_to_subresource_keeps_the_replicas_owners_at_autoscaling_v1() -> None:
    parent = [_entry("create", "Update", "apps/v1", REPLICAS, TEMPLATE),
              _entry("other", "Update", "apps/v1", TEMPLATE),
              _entry("old", "Update", "extensions/v1beta1", REPLICAS)]
    assert scalefields.to_subresource(parent, MAPPINGS) == [
        _entry("create", "Update", "autoscaling/v1", REPLICAS)]


def test_to_parent_steals_keeps_and_adds_as_kube() -> None:
    parent = [_entry("create", "Update", "apps/v1", REPLICAS, TEMPLATE),
              _entry("applier", "Apply", "apps/v1", REPLICAS),
              _entry("other", "Update", "apps/v1", TEMPLATE),
              _entry("old", "Update", "extensions/v1beta1", TEMPLATE)]
    scale = [_entry("create", "Update", "autoscaling/v1", REPLICAS),  # another identifier than the parent's
             _entry("applier", "Apply", "autoscaling/v1", REPLICAS),  # the same identifier: kept as it is
             _entry("scaler", "Apply", "autoscaling/v1", REPLICAS, subresource="scale")]
    got = scalefields.to_parent(parent, scale, MAPPINGS, "apps/v1")
    assert got == [_entry("create", "Update", "apps/v1", TEMPLATE),
                   _entry("applier", "Apply", "apps/v1", REPLICAS),
                   _entry("other", "Update", "apps/v1", TEMPLATE),
                   _entry("create", "Update", "apps/v1", REPLICAS, time=""),
                   _entry("scaler", "Apply", "apps/v1", REPLICAS, time="", subresource="scale")]
    assert mf.encode(got)[0] == {"manager": "scaler", "operation": "Apply", "apiVersion": "apps/v1",
                                 "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}},
                                 "subresource": "scale"}


def test_to_parent_drops_an_owner_left_with_nothing() -> None:
    parent = [_entry("create", "Update", "apps/v1", REPLICAS)]
    assert scalefields.to_parent(parent, [], MAPPINGS, "apps/v1") == []


def test_track_update_gives_the_writer_the_replicas_without_time() -> None:
    parent = [_entry("create", "Update", "apps/v1", REPLICAS, TEMPLATE)]
    old = {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {"name": "d"}, "spec": {"replicas": 1},
           "status": {"replicas": 1}}
    new = {**old, "spec": {"replicas": 3}}
    fields = scalefields.track_update(parent, old, new, "kubectl", T, MAPPINGS, "apps/v1")
    assert fields == [
        {"manager": "kubectl", "operation": "Update", "apiVersion": "apps/v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:replicas": {}}}, "subresource": "scale"},
        {"manager": "create", "operation": "Update", "apiVersion": "apps/v1", "time": T, "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:template": {}}}}]
