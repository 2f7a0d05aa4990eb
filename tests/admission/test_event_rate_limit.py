"""EventRateLimit: configuration validation, token buckets per limit type, LRU, and what is counted."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from kapi import errors
from kapi.attributes import UserInfo
from kapi.resources import Resource
from services.admission.plugins import PluginContext, build
from services.admission.plugins.event_rate_limit import EventRateLimit, parse_config
from tests.admission.fakes import FakeInformers, FakeNamespaces, request


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def config(*limits: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "eventratelimit.admission.k8s.io/v1alpha1", "kind": "Configuration",
            "limits": list(limits)}


def event(namespace: str = "demo", component: str = "kubelet", obj: str = "web") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{obj}.1", "namespace": namespace},
            "involvedObject": {"kind": "Pod", "namespace": namespace, "name": obj, "uid": "u1", "apiVersion": "v1"},
            "source": {"component": component, "host": "n1"}, "reason": "Started", "message": "x"}


def ev_request(namespace: str = "demo", user: str = "alice", operation: str = "CREATE", **kw: Any) -> Any:
    return request(operation, "events", event(namespace, **kw), namespace=namespace, user=user,
                   old=event(namespace, **kw) if operation == "UPDATE" else None)


async def outcome(plugin: EventRateLimit, req: Any) -> str:
    try:
        await plugin.validate(req)
    except errors.StatusError as err:
        assert (err.code, err.reason, err.details) == (429, "TooManyRequests", {})
        return err.message
    return "ok"


@pytest.mark.parametrize(("limits", "message"), [
    ([], "limits: Invalid value: []eventratelimit.Limit{}: must not be empty"),
    ([{"type": "Namespace", "qps": 0, "burst": 5}], "limits[0].qps: Invalid value: 0: must be positive"),
    ([{"type": "Server", "qps": 1, "burst": -1}], "limits[0].burst: Invalid value: -1: must be positive"),
    ([{"type": "User", "qps": 1, "burst": 1, "cacheSize": -3}],
     "limits[0].cacheSize: Invalid value: -3: must not be negative"),
    ([{"type": "Pod", "qps": 1, "burst": 1}], 'limits[0].type: Unsupported value: "Pod": supported values: '
                                              '"Namespace", "Server", "SourceAndObject", "User"'),
    ([{"type": "Server", "qps": 1.5, "burst": 1}], "limits[0].qps: Invalid value: 1.5: must be an integer"),
    ([{"type": "Server", "qps": 0, "burst": 0}], "[limits[0].burst: Invalid value: 0: must be positive, "
                                                 "limits[0].qps: Invalid value: 0: must be positive]"),
])
def test_invalid_configuration(limits: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_config(config(*limits))
    assert str(exc.value) == message


def test_absent_limits_show_the_nil_slice() -> None:
    """field.Invalid shows config.Limits as Go's %#v: a nil []Limit when the key is absent or null."""
    for body in ({"kind": "Configuration"}, {"kind": "Configuration", "limits": None}):
        with pytest.raises(ValueError) as exc:
            parse_config(body)
        assert str(exc.value) == "limits: Invalid value: []eventratelimit.Limit(nil): must not be empty"


def test_missing_configuration_refuses_to_start() -> None:
    ctx = PluginContext(namespaces=FakeNamespaces(), informers=FakeInformers())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must not be empty"):
        build(["EventRateLimit"], ctx)
    ctx.config["EventRateLimit"] = config({"type": "Server", "qps": 1, "burst": 2})
    assert [p.name for p in build(["EventRateLimit"], ctx)] == ["EventRateLimit"]


# (limit type, requests as (namespace, user, source component), expected outcomes)
@pytest.mark.parametrize(("limit_type", "calls", "expected"), [
    ("Server", [("a", "u1", "c1"), ("b", "u2", "c2"), ("c", "u3", "c3")],
     ["ok", "ok", "Too many requests: limit reached on type Server for key "]),
    ("Namespace", [("a", "u1", "c1"), ("a", "u2", "c2"), ("a", "u3", "c3"), ("b", "u1", "c1")],
     ["ok", "ok", "Too many requests: limit reached on type Namespace for key a", "ok"]),
    ("User", [("a", "u1", "c1"), ("b", "u1", "c2"), ("c", "u1", "c3"), ("a", "u2", "c1")],
     ["ok", "ok", "Too many requests: limit reached on type User for key u1", "ok"]),
    ("SourceAndObject", [("a", "u1", "c1"), ("a", "u2", "c1"), ("a", "u3", "c1"), ("a", "u1", "c2")],
     ["ok", "ok", "Too many requests: limit reached on type SourceAndObject for key c1n1Podawebu1v1", "ok"]),
])
async def test_buckets_per_limit_type(limit_type: str, calls: list[tuple[str, str, str]],
                                      expected: list[str]) -> None:
    plugin = EventRateLimit(config({"type": limit_type, "qps": 1, "burst": 2}), clock=Clock())
    got = [await outcome(plugin, ev_request(ns, user, component=comp)) for ns, user, comp in calls]
    assert got == expected


async def test_refill_at_qps_up_to_burst() -> None:
    clock = Clock()
    plugin = EventRateLimit(config({"type": "Namespace", "qps": 2, "burst": 3}), clock=clock)
    assert [await outcome(plugin, ev_request()) for _ in range(4)][-2:] == [
        "ok", "Too many requests: limit reached on type Namespace for key demo"]
    clock.now += 0.5  # one token back (2 per second)
    assert [await outcome(plugin, ev_request()) for _ in range(2)] == [
        "ok", "Too many requests: limit reached on type Namespace for key demo"]
    clock.now += 60  # refilled, but never beyond burst
    assert [await outcome(plugin, ev_request()) for _ in range(4)].count("ok") == 3


async def test_lru_eviction_gives_a_full_bucket_back() -> None:
    plugin = EventRateLimit(config({"type": "Namespace", "qps": 1, "burst": 1, "cacheSize": 1}), clock=Clock())
    assert await outcome(plugin, ev_request("a")) == "ok"
    assert await outcome(plugin, ev_request("a")) != "ok"
    assert await outcome(plugin, ev_request("b")) == "ok"  # evicts a's bucket
    assert await outcome(plugin, ev_request("a")) == "ok"


async def test_every_limit_is_charged_and_refusals_aggregate() -> None:
    plugin = EventRateLimit(config({"type": "Server", "qps": 1, "burst": 1},
                                   {"type": "Namespace", "qps": 1, "burst": 1}), clock=Clock())
    assert await outcome(plugin, ev_request("a")) == "ok"
    assert await outcome(plugin, ev_request("b")) == "Too many requests: limit reached on type Server for key "
    # b's namespace bucket was charged by the refused request too
    assert await outcome(plugin, ev_request("b")) == ("Too many requests: [limit reached on type Server for key , "
                                                      "limit reached on type Namespace for key b]")


async def test_only_event_writes_are_counted() -> None:
    plugin = EventRateLimit(config({"type": "Server", "qps": 1, "burst": 1}), clock=Clock())
    assert plugin.handles("CREATE") and plugin.handles("UPDATE") and not plugin.handles("DELETE")
    await plugin.validate(request("CREATE", "configmaps", {"metadata": {"name": "c"}}))
    dry = ev_request()
    dry.dry_run = True
    await plugin.validate(dry)
    other_group = ev_request()
    other_group.resource = replace(other_group.resource, group="events.k8s.io")
    await plugin.validate(other_group)
    assert await outcome(plugin, ev_request(operation="UPDATE")) == "ok"  # the first token is still there
    req = ev_request(user="bob")
    req.attributes = replace(req.attributes, user=UserInfo("bob"))
    assert await outcome(plugin, req) != "ok"


def test_resource_row_is_core_events() -> None:
    req = ev_request()
    assert isinstance(req.resource, Resource) and (req.resource.group, req.kind) == ("", "Event")


def test_admission_server_refuses_to_start_without_limits(tmp_path: Any) -> None:
    from services.admission import server
    from services.admission.plugins import validate_config

    validate_config(["EventRateLimit"], {"EventRateLimit": config({"type": "User", "qps": 5, "burst": 10})})
    assert server.main(["--listen-address", "127.0.0.1:0", "--storage-address", "127.0.0.1:1",
                        "--enable-admission-plugins", "EventRateLimit"]) == 1
