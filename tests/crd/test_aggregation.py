"""API aggregation: the front-proxy headers, merged discovery and remote routing (services/gateway/aggregation.py)."""

from __future__ import annotations

from kapi.attributes import UserInfo
from services.gateway.aggregation import Aggregator, remote_headers


def test_remote_headers_name_user_groups_and_extra() -> None:
    user = UserInfo("alice", "uid-1", ("dev", "system:authenticated"), (("scopes.example.com/a b", ("x", "y")),))
    assert remote_headers(user) == [
        ("X-Remote-User", "alice"), ("X-Remote-Group", "dev"), ("X-Remote-Group", "system:authenticated"),
        ("X-Remote-Extra-scopes.example.com%2Fa%20b", "x"), ("X-Remote-Extra-scopes.example.com%2Fa%20b", "y")]


def _apiservice(group: str, version: str, priority: int) -> dict[str, object]:
    return {"metadata": {"name": f"{version}.{group}"},
            "spec": {"group": group, "version": version, "versionPriority": priority,
                     "service": {"namespace": "ns", "name": "api", "port": 443}}}


def test_routing_and_groups_follow_the_remote_apiservices() -> None:
    agg = Aggregator(storage=None)
    agg._changed({
        "v1.": {"metadata": {"name": "v1."}, "spec": {"version": "v1"}},  # local: not routed
        "v1alpha1.wardle.example.com": _apiservice("wardle.example.com", "v1alpha1", 15),
        "v1beta1.wardle.example.com": _apiservice("wardle.example.com", "v1beta1", 20),
    })
    assert set(agg.services) == {"v1alpha1.wardle.example.com", "v1beta1.wardle.example.com"}
    assert agg.remote_for("/apis/wardle.example.com/v1alpha1/namespaces/x/flunders")["metadata"]["name"] == \
        "v1alpha1.wardle.example.com"
    assert agg.remote_for("/apis/wardle.example.com") is None
    assert agg.remote_for("/apis/apps/v1/deployments") is None
    assert agg.groups() == {"wardle.example.com": ["v1beta1", "v1alpha1"]}  # higher versionPriority first
    agg.discovery["v1beta1.wardle.example.com"] = {"resources": [
        {"name": "flunders", "singularName": "flunder", "namespaced": True, "kind": "Flunder", "verbs": ["get"]},
        {"name": "flunders/status", "namespaced": True, "kind": "Flunder", "verbs": ["get"]}]}
    items = agg.aggregated_items()
    assert [v["version"] for v in items[0]["versions"]] == ["v1beta1", "v1alpha1"]
    assert items[0]["versions"][0]["resources"] == [{
        "resource": "flunders", "singularResource": "flunder", "scope": "Namespaced", "verbs": ["get"],
        "responseKind": {"group": "wardle.example.com", "version": "v1beta1", "kind": "Flunder"}}]
    assert items[0]["versions"][1]["freshness"] == "Stale"
