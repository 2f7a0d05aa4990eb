"""kapi.strategy: BeforeCreate/BeforeUpdate system fields, status and generation handling."""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from kapi import errors, strategy
from kapi.resources import REGISTRY

NOW = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
NAMESPACES = REGISTRY.get("", "v1", "namespaces")
CONFIGMAPS = REGISTRY.get("", "v1", "configmaps")
PODS = REGISTRY.get("", "v1", "pods")
SERVICES = REGISTRY.get("", "v1", "services")
SECRETS = REGISTRY.get("", "v1", "secrets")

def test_create_sets_system_fields() -> None:
    obj = {"metadata": {"name": "app", "resourceVersion": "12", "selfLink": "/x", "deletionTimestamp": "t",
                        "managedFields": [{"manager": "kubectl"}], "uid": "client-uid"}, "data": {"a": "b"}}
    out = strategy.prepare_for_create(obj, CONFIGMAPS, "demo", NOW)
    meta = out["metadata"]
    assert meta["namespace"] == "demo"
    assert meta["creationTimestamp"] == "2024-05-06T07:08:09Z"
    assert uuid.UUID(meta["uid"]).version == 4 and meta["uid"] != "client-uid"
    assert "resourceVersion" not in meta and "selfLink" not in meta and "deletionTimestamp" not in meta
    assert meta["managedFields"] == [{"manager": "kubectl"}]
    assert "generation" not in meta  # ConfigMaps have no spec
    assert out["apiVersion"] == "v1" and out["kind"] == "ConfigMap"
    assert obj["metadata"]["resourceVersion"] == "12"  # the input is not modified


def test_create_timestamp_is_utc() -> None:
    local = NOW.astimezone(timezone(timedelta(hours=5)))
    out = strategy.prepare_for_create({"metadata": {"name": "a"}}, CONFIGMAPS, "d", local)
    assert out["metadata"]["creationTimestamp"] == "2024-05-06T07:08:09Z"


def test_generate_name() -> None:
    out = strategy.prepare_for_create({"metadata": {"generateName": "web-"}}, CONFIGMAPS, "d", NOW,
                                      rng=random.Random(7))
    assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", out["metadata"]["name"])
    again = strategy.prepare_for_create({"metadata": {"generateName": "web-"}}, CONFIGMAPS, "d", NOW,
                                        rng=random.Random(7))
    assert again["metadata"]["name"] == out["metadata"]["name"]  # the random source is injectable
    named = strategy.prepare_for_create({"metadata": {"generateName": "web-", "name": "fixed"}}, CONFIGMAPS, "d", NOW)
    assert named["metadata"]["name"] == "fixed"
    long = strategy.prepare_for_create({"metadata": {"generateName": "x" * 80}}, CONFIGMAPS, "d", NOW)
    assert len(long["metadata"]["name"]) == 63


def test_create_namespace_rules() -> None:
    out = strategy.prepare_for_create({"metadata": {"name": "n", "namespace": "ignored"}}, NAMESPACES, "", NOW)
    assert "namespace" not in out["metadata"]
    assert out["spec"] == {"finalizers": ["kubernetes"]}
    assert out["status"] == {"phase": "Active"}
    assert out["metadata"]["labels"] == {"kubernetes.io/metadata.name": "n"}
    assert "generation" not in out["metadata"]
    keep = strategy.prepare_for_create({"metadata": {"name": "n"}, "spec": {"finalizers": ["a.io/x"]},
                                        "status": {"phase": "Terminating"}}, NAMESPACES, "", NOW)
    assert keep["spec"]["finalizers"] == ["a.io/x", "kubernetes"]
    assert keep["status"] == {"phase": "Active"}
    with pytest.raises(errors.StatusError) as exc:
        strategy.prepare_for_create({"metadata": {"name": "a", "namespace": "other"}}, CONFIGMAPS, "demo", NOW)
    assert exc.value.code == 400
    assert exc.value.message == ("the namespace of the provided object does not match the namespace sent on the "
                                 "request")


def test_create_generation_and_status_per_kind() -> None:
    pod = strategy.prepare_for_create({"metadata": {"name": "p"}, "spec": {}, "status": {"phase": "Running"}},
                                      PODS, "d", NOW)
    assert pod["metadata"]["generation"] == 1 and pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    svc = strategy.prepare_for_create({"metadata": {"name": "s"}, "spec": {}}, SERVICES, "d", NOW)
    assert "generation" not in svc["metadata"] and svc["status"] == {"loadBalancer": {}}
    secret = strategy.prepare_for_create({"metadata": {"name": "s"}}, SECRETS, "d", NOW)
    assert secret["type"] == "Opaque"


@pytest.mark.parametrize("body", [[], "x", {"metadata": "x"}])
def test_create_rejects_non_objects(body: object) -> None:
    with pytest.raises(errors.StatusError) as exc:
        strategy.prepare_for_create(body, CONFIGMAPS, "d", NOW)  # type: ignore[arg-type]
    assert exc.value.code == 400


def _stored_pod() -> dict:
    return strategy.prepare_for_create({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}},
                                       PODS, "d", NOW) | {}


def test_update_keeps_system_fields_and_bumps_generation() -> None:
    old = _stored_pod()
    old["metadata"]["resourceVersion"] = "5"
    old["metadata"]["deletionTimestamp"] = "2024-05-06T08:00:00Z"
    new = {"metadata": {"name": "p", "creationTimestamp": "1999-01-01T00:00:00Z", "generation": 40},
           "spec": {"containers": [{"name": "b"}]}, "status": {"phase": "Running"}}
    out = strategy.prepare_for_update(new, old, PODS)
    meta = out["metadata"]
    assert meta["uid"] == old["metadata"]["uid"]
    assert meta["creationTimestamp"] == "2024-05-06T07:08:09Z"
    assert meta["deletionTimestamp"] == "2024-05-06T08:00:00Z"
    assert meta["namespace"] == "d" and meta["resourceVersion"] == "5"
    assert meta["generation"] == 2
    assert out["status"] == {"phase": "Pending", "qosClass": "BestEffort"}  # main-resource updates keep it
    same = strategy.prepare_for_update({"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": old["spec"]},
                                       old, PODS)
    assert same["metadata"]["generation"] == 1  # spec unchanged: no bump
    status = strategy.prepare_for_update({"metadata": {"name": "p", "labels": {"x": "y"}}, "spec": {},
                                          "status": {"phase": "Running"}}, old, PODS, subresource="status")
    # the stored qosClass is kept when the status update has none (podStatusStrategy.PrepareForUpdate)
    assert status["status"] == {"phase": "Running", "qosClass": "BestEffort"} and status["spec"] == old["spec"]
    # podStatusStrategy resets spec, deletionTimestamp and ownerReferences only: the request's labels are kept
    assert status["metadata"]["labels"] == {"x": "y"} and status["metadata"]["generation"] == 1


def test_update_namespace_keeps_finalizers_and_status() -> None:
    old = strategy.prepare_for_create({"metadata": {"name": "n"}}, NAMESPACES, "", NOW)
    out = strategy.prepare_for_update({"metadata": {"name": "n"}, "spec": {"finalizers": []},
                                       "status": {"phase": "Terminating"}}, old, NAMESPACES)
    assert out["spec"]["finalizers"] == ["kubernetes"] and out["status"] == {"phase": "Active"}
    final = strategy.prepare_for_update({"metadata": {"name": "n"}, "spec": {"finalizers": []}}, old, NAMESPACES,
                                        subresource="finalize")
    assert final["spec"]["finalizers"] == [] and final["status"] == {"phase": "Active"}
