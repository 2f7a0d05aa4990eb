"""The Dispatch stream's dispatcher over API Priority and Fairness: :class:`APFDispatcher`.

It joins the :class:`~services.flowcontrol.apf.Controller` (classification, levels, queues, 429s) and the
seat-lease book (:mod:`services.flowcontrol.leases`), which itself reads the controller: this module is the
one that knows both, so neither imports the other's user. Source: KEP-1040, k8s.io/apiserver
pkg/util/flowcontrol (apf_controller.go, apf_filter.go).
"""

from __future__ import annotations

import asyncio

from kapi import jsonutil
from services.flowcontrol import config as cfg
from services.flowcontrol.apf import EXECUTING, QUEUED, Controller, Ticket, wait_limit
from services.flowcontrol.dispatcher import TOO_MANY_REQUESTS, Decision, StartRequest
from services.flowcontrol.leases import Leases


class APFDispatcher:
    """The Dispatch stream's :class:`~services.flowcontrol.dispatcher.Dispatcher` over a :class:`Controller`.

    A queued request waits on a future until dispatched or rejected, at most
    ``controller.queue_wait_limit`` seconds (then 429); a cancelled wait
    (the gateway gave up) withdraws it from its queue. ``leases`` is the
    seat-lease book (:mod:`services.flowcontrol.leases`): a leasable request
    of a stream that takes leases, executed without waiting, may earn that
    stream a leased seat of its level.
    """

    def __init__(self, controller: Controller):
        self.controller = controller
        self.leases = Leases(controller)

    async def dispatch(self, request: StartRequest) -> Decision:
        """Admit, queue or reject ``request`` (see :class:`Controller`)."""
        ctl = self.controller
        ticket = ctl.submit(request.attributes, request.list_limit)
        leasable = not request.long_running and cfg.width(request.attributes, 0) == 1
        if ticket.state == EXECUTING and leasable and request.holder is not None:
            self.leases.started(request.holder, ticket.level)
        if ticket.state == QUEUED:
            loop = asyncio.get_running_loop()
            waiter: asyncio.Future[None] = loop.create_future()

            def wake() -> None:
                if not waiter.done():
                    waiter.set_result(None)

            ticket.notify = wake
            timer = loop.call_later(wait_limit(request.queue_wait_limit, ctl.queue_wait_limit), ctl.expire, ticket)
            try:
                await waiter
            except asyncio.CancelledError:
                ctl.cancel(ticket)
                raise
            finally:
                timer.cancel()
        return self.decision(ticket, leasable)

    def decision(self, ticket: Ticket, leasable: bool = False) -> Decision:
        """The Decision for a ticket that is executing or rejected (``leasable``: see :class:`Decision`)."""
        ctl = self.controller
        fs_uid = ticket.flow_schema.uid
        pl_uid = ticket.level.config.uid
        exempt = ticket.level.config.exempt
        if ticket.state == EXECUTING:
            return Decision(True, ticket.flow_schema.name, ticket.level.name, release=lambda: ctl.finish(ticket),
                            flow_schema_uid=fs_uid, priority_level_uid=pl_uid, config_generation=ticket.generation,
                            exempt=exempt, leasable=leasable)
        return Decision(False, ticket.flow_schema.name, ticket.level.name, ticket.retry_after or 1,
                        TOO_MANY_REQUESTS, flow_schema_uid=fs_uid, priority_level_uid=pl_uid,
                        config_generation=ticket.generation, exempt=exempt, leasable=leasable)

    def dump(self, kind: str, include_request_details: bool = False) -> str:
        """One debug view: priority_levels, queues, requests, seats (CSV) or counters (JSON); KeyError if unknown."""
        ctl = self.controller
        if kind == "priority_levels":
            return ctl.dump_priority_levels()
        if kind == "queues":
            return ctl.dump_queues()
        if kind == "requests":
            return ctl.dump_requests(include_request_details)
        if kind == "seats":
            return ctl.dump_seats()
        if kind == "counters":
            return jsonutil.dumps(ctl.metrics()).decode()
        raise KeyError(kind)
