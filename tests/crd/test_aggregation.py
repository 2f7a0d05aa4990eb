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


async def test_a_user_name_no_header_may_carry_is_a_503_not_a_header_injection() -> None:
    """X-Remote-User is built from the user's name: a CR/LF in it (an OIDC claim, a minted CN) must neither be
    injected as a header of its own nor be a 500 (issue 19: headers built from input)."""
    import pytest
    from aiohttp import web
    from aiohttp.test_utils import TestServer, make_mocked_request

    from kapi import errors
    from kapi.attributes import UserInfo
    from services.gateway.aggregation import Aggregator, Target

    seen: list[dict[str, str]] = []

    async def upstream(request: web.Request) -> web.Response:
        seen.append(dict(request.headers))
        return web.Response(text="{}")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", upstream)
    server = TestServer(app)
    await server.start_server()
    aggregator = Aggregator(storage=None)

    async def target(apiservice: object, timeout: float) -> Target:
        return Target("v1.x.example.com", str(server.make_url("")).rstrip("/"), None, "x")  # type: ignore[arg-type]

    aggregator.target = target  # type: ignore[method-assign]
    try:
        request = make_mocked_request("GET", "/apis/x.example.com/v1/things")
        with pytest.raises(errors.StatusError) as info:
            await aggregator.proxy(request, {}, UserInfo("mallory\r\nX-Remote-Group: system:masters"), 5)
        assert info.value.code == 503
        assert seen == []
        await aggregator.proxy(request, {}, UserInfo("alice"), 5)
        assert seen[0]["X-Remote-User"] == "alice"
    finally:
        if aggregator._session is not None:
            await aggregator._session.close()
        await server.close()
