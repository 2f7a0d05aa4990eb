"""services.flowcontrol.maxinflight: seat limits per class, exemptions, release."""

from __future__ import annotations

import pytest

from kapi.attributes import Attributes, UserInfo
from services.flowcontrol.dispatcher import TOO_MANY_REQUESTS, StartRequest
from services.flowcontrol.maxinflight import MaxInFlight

ALICE = UserInfo("alice", groups=("system:authenticated",))
ADMIN = UserInfo("admin", groups=("system:masters", "system:authenticated"))


def _request(user: UserInfo = ALICE, mutating: bool = False, long_running: bool = False) -> StartRequest:
    verb = "create" if mutating else ("watch" if long_running else "get")
    return StartRequest(Attributes(user, verb, True, resource="pods", namespace="d"), mutating, long_running)


def test_limits_per_class() -> None:
    limiter = MaxInFlight(max_requests=2, max_mutating=1)
    reads = [limiter.decide(_request()) for _ in range(3)]
    assert [d.execute for d in reads] == [True, True, False]
    rejected = reads[2]
    assert rejected.reason == TOO_MANY_REQUESTS == "Too many requests, please try again later."
    assert rejected.retry_after_seconds == 1
    assert (rejected.flow_schema, rejected.priority_level) == ("global-default", "global-default")
    writes = [limiter.decide(_request(mutating=True)) for _ in range(2)]
    assert [d.execute for d in writes] == [True, False]  # the mutating pool is separate
    assert limiter.in_flight(False) == 2 and limiter.in_flight(True) == 1


def test_release_frees_a_seat_once() -> None:
    limiter = MaxInFlight(max_requests=1, max_mutating=1)
    first = limiter.decide(_request())
    assert not limiter.decide(_request()).execute
    first.release()
    first.release()  # idempotent: must not free a seat someone else holds
    assert limiter.in_flight(False) == 0
    second = limiter.decide(_request())
    assert second.execute and not limiter.decide(_request()).execute
    second.release()
    assert limiter.in_flight(False) == 0


@pytest.mark.parametrize(("limits", "mutating"), [((0, 1), False), ((1, 0), True)])
def test_zero_means_unlimited(limits: tuple[int, int], mutating: bool) -> None:
    limiter = MaxInFlight(*limits)
    assert all(limiter.decide(_request(mutating=mutating)).execute for _ in range(1000))


def test_long_running_and_masters_take_no_seat() -> None:
    limiter = MaxInFlight(max_requests=1, max_mutating=1)
    assert limiter.decide(_request()).execute
    watch = limiter.decide(_request(long_running=True))
    assert watch.execute and watch.priority_level == "global-default"
    admin = [limiter.decide(_request(ADMIN, mutating=m)) for m in (False, True, False)]
    assert all(d.execute for d in admin)
    assert {(d.flow_schema, d.priority_level) for d in admin} == {("exempt", "exempt")}
    assert limiter.in_flight(False) == 1 and limiter.in_flight(True) == 0
    assert not limiter.decide(_request()).execute


def test_negative_limit_refused() -> None:
    with pytest.raises(ValueError):
        MaxInFlight(-1, 0)


async def test_dispatch_coroutine() -> None:
    limiter = MaxInFlight(1, 1)
    assert (await limiter.dispatch(_request())).execute
    assert not (await limiter.dispatch(_request())).execute
