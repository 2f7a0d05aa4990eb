"""APF fairness with an injected clock (no sleeping): the Controller over the default objects."""

from __future__ import annotations

import asyncio

import pytest

from kapi import flowcontrolmetrics
from kapi.attributes import Attributes, UserInfo
from services.flowcontrol import apf, apfdispatch, defaults
from services.flowcontrol import config as cfg
from services.flowcontrol.dispatcher import StartRequest


class Clock:
    """A manual monotonic clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def default_config() -> tuple[list[cfg.FlowSchema], list[cfg.PriorityLevel]]:
    objs = defaults.default_objects()
    schemas = [cfg.FlowSchema.from_json(o) for r, o in objs if r == defaults.FLOW_SCHEMAS]
    levels = [cfg.PriorityLevel.from_json(o) for r, o in objs if r == defaults.PRIORITY_LEVELS]
    return schemas, levels


def controller(total: int, clock: Clock, levels: list[cfg.PriorityLevel] | None = None,
               schemas: list[cfg.FlowSchema] | None = None) -> apf.Controller:
    ctl = apf.Controller(total, clock=clock, wall=lambda: 0.0)
    default_schemas, default_levels = default_config()
    ctl.configure(default_schemas if schemas is None else schemas, default_levels if levels is None else levels)
    return ctl


def user(name: str, *groups: str) -> UserInfo:
    return UserInfo(name, groups=(*groups, "system:authenticated"))


def get(who: UserInfo, namespace: str = "ns") -> Attributes:
    return Attributes(who, "get", True, path=f"/api/v1/namespaces/{namespace}/configmaps/x", api_version="v1",
                      resource="configmaps", namespace=namespace, name="x")


ALICE, BOB = user("alice"), user("bob")
ADMIN = UserInfo("admin", groups=("system:masters", "system:authenticated"))


def test_nominal_limits_follow_shares() -> None:
    ctl = controller(600, Clock())
    # sum of shares: 0 + 5 + 30 + 40 + 10 + 40 + 100 + 20 = 245
    expected = {"exempt": 0, "catch-all": 13, "system": 74, "node-high": 98, "leader-election": 25,
                "workload-high": 98, "workload-low": 245, "global-default": 49}
    assert {n: lv.nominal for n, lv in ctl.levels.items()} == expected
    assert ctl.levels["workload-low"].lendable == 221  # Go math.Round(220.5)
    assert ctl.levels["global-default"].lendable == 25  # Go math.Round(24.5)


def _global_default_only(hand_size: int = 6, queue_length_limit: int = 50) -> cfg.PriorityLevel:
    return cfg.PriorityLevel("global-default", "uid-gd", False, 100, 0, None, 64, hand_size, queue_length_limit)


def _run_alternating(ctl: apf.Controller, clock: Clock, tickets: list[apf.Ticket], rounds: int) -> list[str]:
    """Finish the oldest executing request ``rounds`` times, 1 s each; returns the users dispatched in order."""
    order = []
    executing = [t for t in tickets if t.state == apf.EXECUTING]
    for _ in range(rounds):
        clock.now += 1.0
        done = executing.pop(0)
        before = {id(t) for t in tickets if t.state == apf.EXECUTING}
        ctl.finish(done)
        for t in tickets:
            if t.state == apf.EXECUTING and id(t) not in before and t is not done:
                executing.append(t)
                order.append(t.attrs.user.username)
    return order


@pytest.mark.parametrize(("hand_size", "other"), [(1, "bob"), (6, "frank")])
def test_two_flows_share_equally(hand_size: int, other: str) -> None:
    """Two backlogged flows get equal seats (with hand 6, frank's hand does not overlap alice's)."""
    clock = Clock()
    ctl = controller(2, clock, [_global_default_only(hand_size)])
    tickets = [ctl.submit(get(u)) for _ in range(20) for u in (ALICE, user(other))]
    assert sum(t.state == apf.EXECUTING for t in tickets) == 2
    order = _run_alternating(ctl, clock, tickets, 24)
    # each flow spreads over its hand; equal per queue, so equal per flow up to a round of ties
    assert abs(order.count("alice") - order.count(other)) <= (0 if hand_size == 1 else 2)
    if hand_size == 1:  # one queue per flow: strict alternation within pairs
        for i in range(0, 24, 2):
            assert sorted(order[i:i + 2]) == ["alice", other]


@pytest.mark.parametrize(("hand_size", "finishes"), [(1, 1), (6, 6)])
def test_a_big_flow_cannot_starve_another(hand_size: int, finishes: int) -> None:
    """Bob is served within a hand's worth of dispatches, not after alice's whole backlog."""
    clock = Clock()
    ctl = controller(2, clock, [_global_default_only(hand_size)])
    flood = [ctl.submit(get(ALICE)) for _ in range(40)]
    assert sum(t.state == apf.QUEUED for t in flood) == 38
    clock.now += 0.5
    late = ctl.submit(get(BOB))
    assert late.state == apf.QUEUED
    for _ in range(finishes):
        clock.now += 0.1
        ctl.finish([t for t in flood if t.state == apf.EXECUTING][0])
        if late.state == apf.EXECUTING:
            break
    assert late.state == apf.EXECUTING
    assert sum(t.state == apf.QUEUED for t in flood) >= 38 - finishes


def test_queue_full_is_rejected_with_retry_after_from_drain_rate() -> None:
    clock = Clock()
    ctl = controller(1, clock, [_global_default_only(1, queue_length_limit=5)])
    tickets = [ctl.submit(get(ALICE)) for _ in range(7)]
    states = [t.state for t in tickets]
    assert states == [apf.EXECUTING] + [apf.QUEUED] * 5 + [apf.REJECTED]
    assert tickets[-1].reason == apf.QUEUE_FULL and tickets[-1].retry_after == 1  # nothing measured yet
    for i in range(4):  # one request per 2 s -> 0.5 seats/s
        clock.now += 2.0
        ctl.finish(tickets[i])
    tickets += [ctl.submit(get(ALICE)) for _ in range(5)]
    rejected = tickets[-1]
    assert [t.state for t in tickets[-5:]] == [apf.QUEUED] * 4 + [apf.REJECTED]
    # (5 seats waiting + 1) at 0.5 seats/s (4 seats finished in the 8 s measured)
    assert rejected.retry_after == 12


def test_exempt_never_waits() -> None:
    clock = Clock()
    ctl = controller(1, clock)
    held = [ctl.submit(get(ALICE)) for _ in range(400)]
    assert any(t.state == apf.QUEUED for t in held) and any(t.state == apf.REJECTED for t in held)
    admins = [ctl.submit(get(ADMIN)) for _ in range(100)]
    assert all(t.state == apf.EXECUTING and t.level.name == "exempt" for t in admins)
    probe = ctl.submit(Attributes(user("nobody"), "get", False, path="/readyz"))
    assert probe.state == apf.EXECUTING and probe.flow_schema.name == "probes"


def test_reject_level_rejects_at_once() -> None:
    clock = Clock()
    levels = [cfg.PriorityLevel("catch-all", "", False, 1, 0, 0)]  # borrowing limit 0
    schemas = [cfg.FlowSchema.from_json({"metadata": {"name": "catch-all"},
                                         "spec": defaults.flow_schema_specs()["catch-all"]})]
    ctl = controller(1, clock, levels, schemas)
    first, second = ctl.submit(get(ALICE)), ctl.submit(get(BOB))
    assert first.state == apf.EXECUTING
    assert second.state == apf.REJECTED and second.reason == apf.CONCURRENCY_LIMIT
    ctl.finish(first)
    assert ctl.submit(get(BOB)).state == apf.EXECUTING


def test_queue_wait_timeout_rejects() -> None:
    clock = Clock()
    ctl = controller(1, clock, [_global_default_only()])
    first, second = ctl.submit(get(ALICE)), ctl.submit(get(BOB))
    assert second.state == apf.QUEUED
    ctl.expire(second)
    assert second.state == apf.REJECTED and second.reason == apf.TIME_OUT
    ctl.finish(first)
    assert ctl.levels["global-default"].waiting == 0


def test_wait_histogram_by_flow_schema_and_execute_in_prometheus_form() -> None:
    """kube's request_wait_duration_seconds{execute,flow_schema,priority_level}: dispatched and rejected apart."""
    clock = Clock()
    ctl = controller(1, clock, [_global_default_only()])
    first, second, third = ctl.submit(get(ALICE)), ctl.submit(get(BOB)), ctl.submit(get(BOB))
    clock.now += 0.01
    ctl.finish(first)  # bob's first waited 10 ms, then runs
    clock.now += 3.0
    ctl.expire(third)  # bob's second gave up after 3.01 s
    waits = {(w["execute"], w["flow_schema"]): w for w in ctl.metrics()["request_wait_duration_seconds"]}
    assert waits[("true", "global-default")]["count"] == 2
    assert waits[("true", "global-default")]["buckets"]["0.0"] == 1 and \
        waits[("true", "global-default")]["buckets"]["0.02"] == 2
    assert waits[("false", "global-default")]["count"] == 1
    assert waits[("false", "global-default")]["buckets"]["2.0"] == 0
    assert waits[("false", "global-default")]["sum"] == pytest.approx(3.01)
    text = flowcontrolmetrics.text(ctl.metrics()).decode()
    assert ('apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="false",'
            'flow_schema="global-default",le="5.0",priority_level="global-default"} 1.0') in text
    assert ('apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",'
            'flow_schema="global-default",le="+Inf",priority_level="global-default"} 2.0') in text
    assert ('apiserver_flowcontrol_rejected_requests_total{flow_schema="global-default",'
            'priority_level="global-default",reason="time-out"} 1.0') in text
    assert 'apiserver_flowcontrol_current_executing_requests{flow_schema="global-default",' \
        'priority_level="global-default"} 1.0' in text
    assert 'apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"} 1.0' in text
    assert second.state == apf.EXECUTING


def test_wide_list_takes_several_seats() -> None:
    clock = Clock()
    ctl = controller(12, clock, [_global_default_only()])
    listing = ctl.submit(Attributes(ALICE, "list", True, path="/api/v1/configmaps", api_version="v1",
                                    resource="configmaps"))
    assert listing.state == apf.EXECUTING and listing.request.width == 10
    paged = ctl.submit(Attributes(BOB, "list", True, resource="configmaps", namespace="x"), list_limit=250)
    assert paged.request.width == 3 and paged.state == apf.QUEUED  # 10 + 3 > 12


def test_borrowing_uses_idle_levels_lendable_seats() -> None:
    clock = Clock()
    ctl = controller(600, clock)  # global-default: nominal 49, others lend what they may
    tickets = [ctl.submit(get(user(f"u{i}"))) for i in range(200)]
    running = sum(t.state == apf.EXECUTING for t in tickets)
    assert running > 49
    gd = ctl.levels["global-default"]
    assert gd.seats_in_use == running == ctl.current_limit(gd) or ctl.current_limit(gd) >= running
    # a node request still gets its own unlent seats at once
    node = ctl.submit(get(UserInfo("system:node:n1", groups=("system:nodes", "system:authenticated"))))
    assert node.state == apf.EXECUTING and node.level.name == "system"


def test_dangling_schema_is_skipped() -> None:
    clock = Clock()
    schemas, levels = default_config()
    schemas.append(cfg.FlowSchema("alice-first", "u", "missing-level", 5, "ByUser", (
        cfg.PolicyRule((cfg.Subject("User", "alice"),), (), ()),)))
    ctl = controller(10, clock, levels, schemas)
    assert ctl.submit(get(ALICE)).flow_schema.name == "global-default"


def _cells(dump: str) -> list[list[str]]:
    return [[c.strip() for c in line.split(",")] for line in dump.splitlines()]


def test_tabwrite_is_gos_tabwriter() -> None:
    # tabwriter.NewWriter(w, 8, 0, 1, ' ', 0) over ",\t"-joined cells: widest cell + 1, at least 8; last cell raw
    assert apf.tabwrite([["PriorityLevelName", "Index", "IsIdle"], ["exempt", "0", "true"]]) == (
        "PriorityLevelName, Index,  IsIdle\n"
        "exempt,            0,      true\n")


def test_dumps_show_queued_and_holders() -> None:
    clock = Clock()
    clock_wall = 1_700_000_000.25
    ctl = controller(1, clock, [_global_default_only()])
    ctl.wall = lambda: clock_wall
    ctl.submit(get(ALICE))
    ctl.submit(get(BOB))
    levels = ctl.dump_priority_levels()
    assert levels.splitlines()[0] == (
        "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, "
        "DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests")
    assert ["global-default", "1", "false", "false", "1", "1", "1", "0", "0", "0"] in _cells(levels)
    queues = _cells(ctl.dump_queues())
    assert queues[0] == ["PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse",
                         "NextDispatchR", "InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum"]
    mine = [q for q in queues if q[0] == "global-default"]
    assert len(mine) == 64
    assert any(q[2:] == ["1", "0", "0", "0.00000000ss", "1", "1", "1.00000000ss"] for q in mine)  # bob waits
    assert any(q[2:5] == ["0", "1", "1"] and q[5] == "1.00000000ss" for q in mine)  # alice executes
    requests = _cells(ctl.dump_requests(include_request_details=True))
    assert requests[0] == ["PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue",
                           "FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency",
                           "StartTime", "UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource",
                           "SubResource"]
    rows = {r[10]: r for r in requests[1:]}
    assert rows["bob"][3] == "0" and rows["bob"][5:10] == ["2023-11-14T22:13:20.25Z", "1", "0", "0s",
                                                           "0001-01-01T00:00:00Z"]
    assert rows["alice"][3] == "-1" and rows["alice"][9] == "2023-11-14T22:13:20.25Z"  # executing: start time
    assert rows["bob"][11:] == ["get", "/api/v1/namespaces/ns/configmaps/x", "ns", "x", "v1", "configmaps", ""]
    clock.now += 2.5
    seats = _cells(ctl.dump_seats())
    assert seats[1] == ["global-default", "global-default", "alice", "1", "alice", "get",
                        "/api/v1/namespaces/ns/configmaps/x", "2.500"]
    metrics = ctl.metrics()
    assert {"priority_level": "global-default", "flow_schema": "global-default", "value": 1
            } in metrics["current_inqueue_requests"]
    assert {"priority_level": "global-default", "flow_schema": "global-default", "value": 1
            } in metrics["current_executing_seats"]


async def test_dispatcher_waits_and_cancellation_frees_the_queue() -> None:
    clock = Clock()
    ctl = controller(1, clock, [_global_default_only()])
    dispatcher = apfdispatch.APFDispatcher(ctl)
    first = await dispatcher.dispatch(StartRequest(get(ALICE), False, False))
    assert first.execute and first.priority_level_uid == "uid-gd"
    waiting = asyncio.ensure_future(dispatcher.dispatch(StartRequest(get(BOB), False, False)))
    await asyncio.sleep(0)
    assert ctl.levels["global-default"].waiting == 1
    first.release()
    second = await asyncio.wait_for(waiting, 1)
    assert second.execute
    third = asyncio.ensure_future(dispatcher.dispatch(StartRequest(get(ALICE), False, False)))
    await asyncio.sleep(0)
    third.cancel()
    with pytest.raises(asyncio.CancelledError):
        await third
    assert ctl.levels["global-default"].waiting == 0
