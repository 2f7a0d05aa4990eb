"""Seat leases in the APF controller (services/flowcontrol/leases.py): grant, count, revoke, return, shrink.

Injected clock, real Controller and APFDispatcher; a Holder records what
would go out on its Dispatch stream.
"""

from __future__ import annotations

from kapi.attributes import Attributes
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2
from services.flowcontrol import apf, apfdispatch
from services.flowcontrol import config as cfg
from services.flowcontrol.dispatcher import Decision, StartRequest
from services.flowcontrol.leases import Holder
from tests.flowcontrol.test_apf import ADMIN, ALICE, BOB, Clock, _global_default_only, controller, default_config, get

GD = "global-default"


class Stream:
    """What a Dispatch stream would carry for one holder."""

    def __init__(self, dispatcher: apfdispatch.APFDispatcher):
        self.changes: list[flowcontrol_pb2.LeaseChange] = []
        self.generations: list[int] = []
        self.holder = Holder(self.changes.append, self.generations.append)
        dispatcher.leases.attach(self.holder)

    def grants(self, level: str = GD) -> int:
        return sum(c.grant for c in self.changes if c.priority_level == level)

    def revocations(self, level: str = GD) -> list[int]:
        """The ``keep`` of each revocation of ``level``."""
        return [c.keep for c in self.changes if c.priority_level == level and c.revoke]


def _dispatcher(total: int = 4) -> tuple[apf.Controller, apfdispatch.APFDispatcher]:
    ctl = controller(total, Clock(), [_global_default_only()])
    return ctl, apfdispatch.APFDispatcher(ctl)


async def _start(dispatcher: apfdispatch.APFDispatcher, stream: Stream | None, attrs: Attributes | None = None,
                 long_running: bool = False) -> Decision:
    return await dispatcher.dispatch(StartRequest(attrs or get(ALICE), False, long_running, 0,
                                                  stream.holder if stream else None))


async def test_a_leasable_start_earns_a_seat_counted_in_its_level_until_returned() -> None:
    ctl, dispatcher = _dispatcher()
    stream = Stream(dispatcher)
    level = ctl.levels[GD]
    decision = await _start(dispatcher, stream)
    assert decision.execute and decision.leasable and not decision.exempt
    assert decision.config_generation == ctl.generation > 0
    assert stream.changes == [flowcontrol_pb2.LeaseChange(priority_level=GD, grant=1)]
    assert (level.seats_in_use, level.leased, stream.holder.seats) == (2, 1, {GD: 1})
    decision.release()
    assert (level.seats_in_use, level.leased) == (1, 1)  # the leased seat stays taken until returned
    dispatcher.leases.returned(stream.holder, GD, 1)
    assert (level.seats_in_use, level.leased, stream.holder.seats) == (0, 0, {})
    dispatcher.leases.returned(stream.holder, GD, 5)  # more than it holds counts nothing
    assert (level.seats_in_use, level.leased) == (0, 0)


async def test_no_lease_for_wide_long_running_exempt_or_unwilling_requests() -> None:
    ctl, dispatcher = _dispatcher(600)
    schemas, levels = default_config()
    ctl.configure(schemas, levels)
    stream = Stream(dispatcher)
    wide = Attributes(ALICE, "list", True, resource="configmaps", namespace="ns")
    decision = await _start(dispatcher, stream, wide)  # a LIST's width depends on ?limit=
    assert decision.execute and not decision.leasable
    watch = await _start(dispatcher, stream, Attributes(ALICE, "watch", True, resource="configmaps"), True)
    assert not watch.leasable
    exempt = await _start(dispatcher, stream, get(ADMIN))
    assert exempt.exempt and exempt.priority_level == "exempt"
    unwilling = await _start(dispatcher, None)  # a Start without accept_leases
    assert unwilling.leasable
    assert stream.changes == [] and ctl.levels[GD].leased == 0


async def test_leased_seats_count_against_the_limit_and_a_queued_request_revokes_them() -> None:
    ctl, dispatcher = _dispatcher(4)  # global-default may hold 4 seats (catch-all keeps its 1)
    level = ctl.levels[GD]
    assert ctl.current_limit(level) == 4
    gateway1, gateway2 = Stream(dispatcher), Stream(dispatcher)
    first = await _start(dispatcher, gateway1)
    second = await _start(dispatcher, gateway2)
    assert gateway1.grants() == gateway2.grants() == 1  # cap: max(1, 4 // (2 * 2 streams)) = 1 each
    assert (level.seats_in_use, level.leased) == (4, 2)  # 2 executing + 2 leased: the limit
    late = ctl.submit(get(BOB))  # no free seat: the leased ones are taken (without leases it would run)
    assert late.state == apf.QUEUED
    assert gateway1.revocations() == [0] and gateway2.revocations() == [0]
    assert await _start_refused_lease(dispatcher, gateway1) == 0  # nothing granted while a request waits
    dispatcher.leases.returned(gateway2.holder, GD, 1)  # gateway 2's leased seat was idle
    assert late.state == apf.EXECUTING
    for decision in (first, second):
        decision.release()


async def _start_refused_lease(dispatcher: apfdispatch.APFDispatcher, stream: Stream) -> int:
    before = stream.grants()
    assert not dispatcher.controller.take_leased(dispatcher.controller.levels[GD], 1)
    return stream.grants() - before


async def test_limit_holds_with_leases() -> None:
    """Executing requests plus leased seats never exceed what the level may hold."""
    ctl, dispatcher = _dispatcher(8)
    level = ctl.levels[GD]
    limit = ctl.current_limit(level)
    stream = Stream(dispatcher)
    running = []
    while level.seats_in_use < limit:
        decision = await _start(dispatcher, stream)
        assert decision.execute
        running.append(decision)
        assert level.seats_in_use <= limit
    assert stream.grants() == max(1, limit // 2) and level.leased == stream.grants()
    assert len(running) == limit - level.leased  # leased seats took the rest
    assert ctl.submit(get(BOB)).state == apf.QUEUED
    assert stream.revocations() == [0]


async def test_stream_break_frees_leased_seats_and_dispatches_what_waits() -> None:
    ctl, dispatcher = _dispatcher(2)
    level = ctl.levels[GD]
    assert ctl.current_limit(level) == 2
    stream = Stream(dispatcher)
    (await _start(dispatcher, stream)).release()
    assert stream.grants() == 1 and level.seats_in_use == 1  # the leased seat, idle
    running = ctl.submit(get(BOB))
    waiting = ctl.submit(get(BOB))
    assert running.state == apf.EXECUTING and waiting.state == apf.QUEUED and stream.revocations() == [0]
    dispatcher.leases.detach(stream.holder)  # the stream broke before returning its seat
    assert waiting.state == apf.EXECUTING and level.leased == 0 and level.seats_in_use == 2


async def test_a_new_configuration_generation_revokes_every_lease() -> None:
    ctl, dispatcher = _dispatcher(8)
    stream = Stream(dispatcher)
    decision = await _start(dispatcher, stream)
    generation = ctl.generation
    ctl.configure(list(ctl.schemas.values()), [_global_default_only()])  # the same configuration
    assert ctl.generation == generation and stream.generations == [] and stream.revocations() == []
    schema = cfg.FlowSchema("mine", "uid-mine", GD, 100, cfg.BY_USER, ())
    ctl.configure([schema], [_global_default_only()])
    assert ctl.generation == generation + 1
    assert stream.generations == [generation + 1] and stream.revocations() == [0]
    assert ctl.levels[GD].leased == 1  # still held until the gateway returns it
    again = await _start(dispatcher, stream)
    assert again.config_generation == generation + 1
    assert decision.config_generation == generation
    level_changed = cfg.PriorityLevel(GD, "uid-gd", False, 50, 0, None, 64, 6, 50)
    ctl.configure([schema], [level_changed])
    assert ctl.generation == generation + 2 and stream.generations[-1] == generation + 2


async def test_reports_count_local_requests_in_the_metrics() -> None:
    ctl, dispatcher = _dispatcher(8)
    stream = Stream(dispatcher)
    report = flowcontrol_pb2.LocalReport(counts=[flowcontrol_pb2.LocalCount(
        flow_schema="global-default", priority_level=GD, dispatched=3, finished=2, executing=1)])
    dispatcher.leases.report(stream.holder, report)
    metrics = ctl.metrics()
    dispatched = {(r["priority_level"], r["flow_schema"]): r["value"] for r in metrics["dispatched_requests_total"]}
    assert dispatched[(GD, "global-default")] == 3
    executing = {(r["priority_level"], r["flow_schema"]): r["value"] for r in metrics["current_executing_requests"]}
    assert executing[(GD, "global-default")] == 1
    wait = next(r for r in metrics["request_wait_duration_seconds"]
                if r["priority_level"] == GD and r["execute"] == "true")
    assert wait["buckets"]["0.0"] == 3 and wait["count"] == 3 and wait["sum"] == 0.0
    assert ctl.levels[GD].drain.rate() > 0
    dispatcher.leases.report(stream.holder, flowcontrol_pb2.LocalReport(counts=[flowcontrol_pb2.LocalCount(
        flow_schema="global-default", priority_level=GD, dispatched=1, executing=2)]))
    assert ctl.local_executing == {(GD, "global-default"): 2}
    dispatcher.leases.detach(stream.holder)
    assert ctl.local_executing == {}
    assert ctl.counters["dispatched"][(GD, "global-default")] == 4


async def test_low_demand_shrinks_a_lease() -> None:
    ctl, dispatcher = _dispatcher(40)
    stream = Stream(dispatcher)
    decisions = [await _start(dispatcher, stream) for _ in range(8)]
    assert stream.grants() == 8
    demand = flowcontrol_pb2.LocalReport(demand=[flowcontrol_pb2.LevelDemand(priority_level=GD, peak_in_flight=2)])
    dispatcher.leases.report(stream.holder, demand)
    assert stream.revocations() == [3]  # 8 > 2 x (2 + 1): keep peak + 1
    dispatcher.leases.report(stream.holder, demand)
    assert stream.revocations() == [3]  # said once
    dispatcher.leases.returned(stream.holder, GD, 5)
    assert ctl.levels[GD].leased == 3 and stream.holder.limit == {GD: 3}
    for decision in decisions:
        decision.release()


async def test_a_quiescing_level_waits_for_its_leased_seats() -> None:
    ctl, dispatcher = _dispatcher(8)
    stream = Stream(dispatcher)
    (await _start(dispatcher, stream)).release()
    other = cfg.PriorityLevel("other", "uid-o", False, 100, 0, None, 64, 6, 50)
    ctl.configure([], [other])  # global-default is gone from the configuration
    assert ctl.levels[GD].quiescing and GD in ctl.levels  # a leased seat is still out
    dispatcher.leases.returned(stream.holder, GD, 1)
    assert GD not in ctl.levels


async def test_contention_elsewhere_revokes_leases_that_borrow() -> None:
    """A level holding leased seats beyond its guaranteed ones loses them when another level has to queue."""
    lender = cfg.PriorityLevel("lender", "uid-l", False, 100, 100, None, 64, 6, 50)  # all of its seats lendable
    borrower = cfg.PriorityLevel(GD, "uid-gd", False, 100, 0, None, 64, 6, 50)
    mine = cfg.FlowSchema("lender", "uid-fs", "lender", 10, cfg.BY_USER, (cfg.PolicyRule(
        (cfg.Subject("User", "bob"),),
        (cfg.ResourceRule(frozenset({"*"}), frozenset({"*"}), frozenset({"*"}), True, frozenset({"*"})),), ()),))
    everyone = cfg.FlowSchema(GD, "uid-fs-gd", GD, 100, cfg.BY_USER, (cfg.PolicyRule(
        (cfg.Subject("Group", "system:authenticated"),),
        (cfg.ResourceRule(frozenset({"*"}), frozenset({"*"}), frozenset({"*"}), True, frozenset({"*"})),), ()),))
    ctl = controller(4, Clock(), [lender, borrower], [mine, everyone])
    dispatcher = apfdispatch.APFDispatcher(ctl)
    stream = Stream(dispatcher)
    gd = ctl.levels[GD]
    decisions = [await _start(dispatcher, stream) for _ in range(2)]
    assert ctl.levels["lender"].seats_in_use == 0
    assert gd.seats_in_use > gd.guaranteed and gd.leased >= 1  # borrowing the lender's seats, leases included
    bob = [ctl.submit(get(BOB)) for _ in range(ctl.levels["lender"].nominal)]
    assert any(t.state == apf.QUEUED for t in bob)
    assert stream.revocations() == [0]
    for decision in decisions:
        decision.release()
