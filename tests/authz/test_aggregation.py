"""ClusterRole aggregation and the reconciliation of the default policy (unit tables + real storage over etcd)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi import grpcutil, jsonutil
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.authz import bootstrap
from services.authz.aggregation import aggregate, selector_matches

from .objects import role, rule, subject
from .test_integration import eventually, start_authz, storage  # noqa: F401 - the storage fixture

G = "rbac.authorization.k8s.io"
LABELS = {"a": "1", "tier": "web"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ({}, True),
        ({"matchLabels": {"a": "1"}}, True),
        ({"matchLabels": {"a": "2"}}, False),
        ({"matchLabels": {"a": "1", "b": "1"}}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["web", "db"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["web"]}]}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["x"]}]}, True),
        ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]}, False),
        ({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, False),
        (None, False),
    ],
)
def test_selector_matches(selector: Any, matches: bool) -> None:
    assert selector_matches(selector, LABELS) is matches


def labelled(name: str, labels: dict[str, str], rules: list[dict[str, Any]]) -> dict[str, Any]:
    obj = role(name, rules)
    obj["metadata"]["labels"] = labels
    return obj


def test_aggregate_orders_by_selector_then_name_and_dedupes() -> None:
    get_pods, list_pods, get_cm = rule(["get"], [""], ["pods"]), rule(["list"], [""], ["pods"]), rule(
        ["get"], [""], ["configmaps"])
    roles = {
        "b": labelled("b", {"x": "1"}, [get_pods, list_pods]),
        "a": labelled("a", {"x": "1"}, [get_pods]),
        "c": labelled("c", {"y": "1"}, [get_cm, get_pods]),
        "agg": {**labelled("agg", {"x": "1"}, [rule(["*"], ["*"], ["*"])])},
    }
    selectors = {"clusterRoleSelectors": [{"matchLabels": {"y": "1"}}, {"matchLabels": {"x": "1"}}]}
    assert aggregate("agg", selectors, roles) == [get_cm, get_pods, list_pods]
    assert aggregate("agg", {"clusterRoleSelectors": []}, roles) == []


def expected(name: str, resource: str = "clusterroles") -> dict[str, Any]:
    return next(copy.deepcopy(o) for r, o in bootstrap.default_objects() if r == resource and
                o["metadata"]["name"] == name)


def test_reconcile_adds_never_removes_and_honours_autoupdate() -> None:
    want = expected("system:basic-user")
    assert bootstrap.reconciled("clusterroles", copy.deepcopy(want), want) is None
    edited = copy.deepcopy(want)
    edited["rules"] = [rule(["get"], [""], ["pods"])]  # lost the defaults, gained an extra rule
    edited["metadata"]["labels"] = {"mine": "x"}
    out = bootstrap.reconciled("clusterroles", edited, want)
    assert out is not None and out["rules"] == [rule(["get"], [""], ["pods"]), *want["rules"]]
    assert out["metadata"]["labels"] == {**want["metadata"]["labels"], "mine": "x"}
    edited["metadata"]["annotations"] = {bootstrap.AUTOUPDATE: "false"}
    assert bootstrap.reconciled("clusterroles", edited, want) is None
    # Aggregated roles: selectors are reconciled, rules are the aggregator's.
    admin = expected("admin")
    changed = {**copy.deepcopy(admin), "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]},
               "rules": [rule(["get"], [""], ["pods"])]}
    out = bootstrap.reconciled("clusterroles", changed, admin)
    assert out is not None and out["rules"] == [rule(["get"], [""], ["pods"])]
    assert out["aggregationRule"]["clusterRoleSelectors"] == [{"matchLabels": {"x": "y"}},
                                                              *admin["aggregationRule"]["clusterRoleSelectors"]]
    # Bindings: subjects added; a different roleRef means delete and recreate ({}).
    crb = expected("system:basic-user", "clusterrolebindings")
    fewer = {**copy.deepcopy(crb), "subjects": [subject("User", "extra")]}
    out = bootstrap.reconciled("clusterrolebindings", fewer, crb)
    assert out is not None and out["subjects"] == [subject("User", "extra"), *crb["subjects"]]
    moved = {**copy.deepcopy(crb), "roleRef": {"apiGroup": G, "kind": "ClusterRole", "name": "view"}}
    assert bootstrap.reconciled("clusterrolebindings", moved, crb) == {}


async def test_aggregation_and_reconciliation_over_storage(storage: str) -> None:  # noqa: F811
    service = await start_authz(storage)
    channel = grpcutil.channel(storage, None)
    store = storage_pb2_grpc.StorageStub(channel)

    def rules_of(name: str) -> list[dict[str, Any]]:
        r = service.index.cluster_role_objects().get(name)
        return list(r.get("rules") or []) if r else []

    async def get(name: str, resource: str = "clusterroles") -> Any:
        return await store.Get(storage_pb2.GetRequest(key=storage_pb2.ResourceKey(
            group=G, resource=resource, name=name)), timeout=5)

    async def put(obj: dict[str, Any]) -> None:
        key = storage_pb2.ResourceKey(group=G, resource="clusterroles", name=obj["metadata"]["name"])
        await store.Update(storage_pb2.UpdateRequest(key=key, object=jsonutil.dumps(obj)), timeout=5)

    try:
        # admin ⊇ edit ⊇ view, each filled from the system:aggregate-to-* roles.
        await eventually(lambda: rules_of("view") and rules_of("edit") and rules_of("admin"), 20)
        await eventually(lambda: all(r in rules_of("admin") for r in rules_of("edit"))
                         and all(r in rules_of("edit") for r in rules_of("view"))
                         and all(r in rules_of("admin") for r in rules_of("system:aggregate-to-admin")), 20)
        assert rules_of("view") == rules_of("system:aggregate-to-view")
        # A new labelled role extends view, edit and admin; unlabelled, it is dropped again.
        widgets = rule(["get", "list"], ["example.com"], ["widgets"])
        extra = labelled("widget-viewer", {"rbac.authorization.k8s.io/aggregate-to-view": "true"}, [widgets])
        await store.Create(storage_pb2.CreateRequest(key=storage_pb2.ResourceKey(
            group=G, resource="clusterroles", name="widget-viewer"), object=jsonutil.dumps(extra)), timeout=5)
        await eventually(lambda: all(widgets in rules_of(n) for n in ("view", "edit", "admin")), 20)
        extra["metadata"]["labels"] = {}
        await put(extra)
        await eventually(lambda: not any(widgets in rules_of(n) for n in ("view", "edit", "admin")), 20)
        # Reconciliation at start: a stripped default role gets its rules back unless autoupdate is "false".
        for name, autoupdate in (("system:basic-user", "true"), ("system:public-info-viewer", "false")):
            obj = jsonutil.loads((await get(name)).object)
            obj["rules"] = []
            obj["metadata"]["annotations"] = {bootstrap.AUTOUPDATE: autoupdate}
            await put(obj)
        assert await bootstrap.ensure(store) >= 1
        restored = jsonutil.loads((await get("system:basic-user")).object)
        assert restored["rules"] == expected("system:basic-user")["rules"]
        assert jsonutil.loads((await get("system:public-info-viewer")).object)["rules"] == []
        assert await bootstrap.ensure(store) == 0  # idempotent
    finally:
        await channel.close()
        await service.stop(0)
