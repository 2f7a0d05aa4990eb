"""The ``kapi.flowcontrol.v1.FlowControl`` servicer: one Dispatch stream per gateway.

Each Start is answered by exactly one DispatchResponse with its request_id.
Both directions carry batches (``DispatchRequests``/``DispatchResponses``):
the gateway sends what queued up during its previous write, and replies
decided while a write is in flight leave together.
Starts are decided concurrently (a queueing dispatcher may hold one while
others pass), replies go out in the order decisions are taken. A Finish
releases the request's seat; a Finish for a request still waiting cancels
the wait (the gateway gave up; it is answered with a rejection). When the
stream ends or breaks, every seat it holds is released (docs/architecture.md, "Failure policy").

Seat leases (:mod:`services.flowcontrol.leases`), when the dispatcher
keeps a lease book (APF): a stream whose Starts set ``accept_leases`` gets
a :class:`~services.flowcontrol.leases.Holder`; its LeaseChanges and the
configuration generation travel in the same response batches as the
decisions (``DispatchResponses.lease_changes``, ``config_generation``), its
LeaseReturns and LocalReports are handled in order with the Starts and
Finishes, and its leased seats are freed when the stream ends or breaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import cast

import grpc

from kapi import attributes, errors, grpcutil
from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2, flowcontrol_pb2_grpc
from services.flowcontrol.dispatcher import Decision, Dispatcher, StartRequest
from services.flowcontrol.leases import Holder, Leases

log = logging.getLogger(__name__)

def _response(request_id: int, decision: Decision) -> flowcontrol_pb2.DispatchResponse:
    return flowcontrol_pb2.DispatchResponse(
        request_id=request_id, execute=decision.execute, retry_after_seconds=decision.retry_after_seconds,
        flow_schema=decision.flow_schema, priority_level=decision.priority_level, reason=decision.reason,
        flow_schema_uid=decision.flow_schema_uid, priority_level_uid=decision.priority_level_uid,
        config_generation=decision.config_generation, exempt=decision.exempt, leasable=decision.leasable)


@dataclass(frozen=True, slots=True)
class NewGeneration:
    """An outbox item: the service's configuration moved to ``value``."""

    value: int


@dataclass(frozen=True, slots=True)
class ReportAck:
    """An outbox item: the LocalReport numbered ``sequence`` has been applied."""

    sequence: int


# What the outbox carries: a decision, a lease change, a new configuration generation, a report's answer.
_Outgoing = flowcontrol_pb2.DispatchResponse | flowcontrol_pb2.LeaseChange | NewGeneration | ReportAck


def response_batch(items: list[_Outgoing]) -> flowcontrol_pb2.DispatchResponses:
    """One DispatchResponses of outbox items: decisions, lease changes in order, the newest generation."""
    batch = flowcontrol_pb2.DispatchResponses()
    for item in items:
        if isinstance(item, flowcontrol_pb2.DispatchResponse):
            batch.responses.append(item)
        elif isinstance(item, flowcontrol_pb2.LeaseChange):
            batch.lease_changes.append(item)
        elif isinstance(item, NewGeneration):
            batch.config_generation = max(batch.config_generation, item.value)
        else:
            batch.report_ack = max(batch.report_ack, item.sequence)
    return batch


def _refusal(request_id: int, reason: str) -> flowcontrol_pb2.DispatchResponse:
    return flowcontrol_pb2.DispatchResponse(request_id=request_id, execute=False, retry_after_seconds=1,
                                            reason=reason)


class _Stream:
    """The state of one Dispatch stream: requests waiting for a decision and seats held."""

    def __init__(self, dispatcher: Dispatcher):
        self.dispatcher = dispatcher
        self.outbox: asyncio.Queue[_Outgoing | None] = asyncio.Queue()
        self.waiting: dict[int, asyncio.Task[None]] = {}
        self.held: dict[int, Decision] = {}
        self.closed = False
        leases = getattr(dispatcher, "leases", None)
        self.leases: Leases | None = leases if isinstance(leases, Leases) else None
        self.holder: Holder | None = None  # made at the first Start that accepts leases

    async def read(self, requests: AsyncIterator[flowcontrol_pb2.DispatchRequests]) -> None:
        """Consume the request stream (batches, in order); when it ends, answer what is waiting and close the outbox."""
        try:
            async for batch in requests:
                for message in batch.requests:
                    kind = message.WhichOneof("message")
                    if kind == "start":
                        self.start(message.start)
                    elif kind == "finish":
                        self.finish(message.finish.request_id)
                    elif kind == "lease_return":
                        if self.leases is not None and self.holder is not None:
                            ret = message.lease_return
                            self.leases.returned(self.holder, ret.priority_level, ret.seats)
                    elif kind == "report":
                        holder = self._holder()
                        if self.leases is not None and holder is not None:
                            self.leases.report(holder, message.report)
                        if message.report.sequence:
                            self.outbox.put_nowait(ReportAck(message.report.sequence))
        finally:  # ended, broke or cancelled: the Dispatch handler releases what is held

            if self.waiting:
                await asyncio.gather(*self.waiting.values(), return_exceptions=True)
            self.outbox.put_nowait(None)

    def start(self, start: flowcontrol_pb2.Start) -> None:
        """Begin deciding one request (answered later through the outbox)."""
        request_id = start.request_id
        if request_id in self.waiting or request_id in self.held:
            log.warning("duplicate request_id %d on a Dispatch stream", request_id)
            self.outbox.put_nowait(_refusal(request_id, f"duplicate request_id {request_id}"))
            return
        holder = self._holder() if start.accept_leases else None
        request = StartRequest(attributes.decode(start.attributes), start.mutating, start.long_running,
                               start.list_limit, holder, start.queue_wait_limit_seconds)
        self.waiting[request_id] = asyncio.create_task(self._decide(request_id, request))

    def _holder(self) -> Holder | None:
        """This stream's lease holder, made (and attached) the first time; None without a lease book or once closed."""
        if self.holder is None and self.leases is not None and not self.closed:
            outbox = self.outbox
            self.holder = Holder(outbox.put_nowait, lambda generation: outbox.put_nowait(NewGeneration(generation)))
            self.leases.attach(self.holder)
        return self.holder

    async def _decide(self, request_id: int, request: StartRequest) -> None:
        try:
            decision = await self.dispatcher.dispatch(request)
        except asyncio.CancelledError:
            if self.waiting.pop(request_id, None) is not None and not self.closed:
                self.outbox.put_nowait(_refusal(request_id, "request cancelled"))
            return
        except Exception:  # a dispatcher bug must not take the stream down
            log.exception("dispatch failed")
            decision = Decision(False, "", "", 1, "Internal error in flow control")
        self.waiting.pop(request_id, None)
        if self.closed:
            decision.release()
            return
        if decision.execute:
            self.held[request_id] = decision
        self.outbox.put_nowait(_response(request_id, decision))

    def finish(self, request_id: int) -> None:
        """Release a finished request's seat, or withdraw a request still waiting for its decision."""
        decision = self.held.pop(request_id, None)
        if decision is not None:
            decision.release()
            return
        task = self.waiting.get(request_id)
        if task is not None:
            task.cancel()

    def close(self) -> None:
        """Release every seat (leased ones too) and cancel every wait (the stream ended or broke)."""
        self.closed = True
        if self.leases is not None and self.holder is not None:
            self.leases.detach(self.holder)
        for task in self.waiting.values():
            task.cancel()
        self.waiting.clear()
        held, self.held = self.held, {}
        for decision in held.values():
            decision.release()


class FlowControlServicer(flowcontrol_pb2_grpc.FlowControlServicer):
    """Serves Dispatch streams against one shared :class:`Dispatcher`, and its debug dumps."""

    def __init__(self, dispatcher: Dispatcher):
        self._dispatcher = dispatcher

    async def Dump(self, request: flowcontrol_pb2.DumpRequest,  # noqa: N802
                   context: grpc.aio.ServicerContext) -> flowcontrol_pb2.DumpResponse:
        """One debug view (DumpRequest.kind); 404 NotFound for an unknown kind or a dispatcher without dumps."""
        dump = getattr(self._dispatcher, "dump", None)
        try:
            if dump is None:
                raise KeyError(request.kind)
            text = dump(request.kind, request.include_request_details)
        except KeyError:
            await errors.abort(context, errors.StatusError(
                404, "NotFound", "the server could not find the requested resource"))
            raise AssertionError("unreachable") from None
        return flowcontrol_pb2.DumpResponse(text=text)

    async def Dispatch(self, request_iterator: AsyncIterator[flowcontrol_pb2.DispatchRequests],  # noqa: N802
                       context: grpc.aio.ServicerContext) -> AsyncIterator[flowcontrol_pb2.DispatchResponses]:
        """Answer each Start with one DispatchResponse (same request_id); release seats on Finish and on stream end."""
        await context.send_initial_metadata(())  # tells the gateway the stream is up
        stream = _Stream(self._dispatcher)
        reader = asyncio.create_task(stream.read(request_iterator))
        try:
            outbox = cast("asyncio.Queue[object | None]", stream.outbox)  # mypy cannot solve batches' TypeVar
            async for items in grpcutil.batches(outbox):                   # from a three-member union
                yield response_batch(cast("list[_Outgoing]", items))
        finally:
            stream.close()
            if not reader.done():
                reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, grpc.RpcError, Exception):
                await reader
