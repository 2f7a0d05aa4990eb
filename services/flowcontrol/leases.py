"""Seat leases: seats a gateway uses without a Start while their priority level is uncontended (issue 16).

Every request used to cost a Start and a Finish on the gateway's Dispatch
stream. With leases (capacity leases as Google's Doorman grants them, inside
API Priority and Fairness' one fairness domain, KEP-1040) the service hands
a stream seats of a priority level; the gateway runs requests it has seen
classified there (width 1, not long-running) on them and reports what it
ran (:class:`~kapi_proto.kapi.flowcontrol.v1.flowcontrol_pb2.LocalReport`).

The rules that keep the cluster-wide limits and the fairness of queuing:

- a leased seat counts as occupied in its level (``Level.seats_in_use``)
  from its grant until the gateway returns it, whether or not a request
  runs on it, so the server's concurrency limit and borrowing rules hold
  across every gateway (:meth:`~services.flowcontrol.apf.Controller.take_leased`);
- seats are granted one at a time, when a stream that accepts leases
  (``Start.accept_leases``) gets a leasable request executed at once (the
  gateway had no free leased seat: demand), only while no request waits at
  the level (nor, beyond the level's guaranteed seats, at any level), up to
  ``max(1, current limit // (2 * streams))`` seats per stream;
- whenever a request has to queue, or is refused for lack of seats, the
  level's leases and those of every level borrowing with leased seats are
  revoked on every stream (``LeaseChange.revoke``, keep 0): the gateway
  stops using them at once, returns idle seats at once and busy ones as their
  requests finish, and sends Starts again, so under contention every request
  is queued in the one central domain exactly as without leases;
- a report whose demand (most leasable requests in flight at once) is far
  below the lease (held > 2 x (peak + 1)) shrinks it to peak + 1;
- a configuration change (a new ``Controller.generation``) revokes every
  lease and tells every stream the new generation (remembered
  classifications are void);
- a stream that ends or breaks frees every seat it was leased, as it frees
  the seats of its executing Starts.

Exempt-classified requests need no seats: the gateway runs them without a
Start once classified and reports them. Not thread-safe: one event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kapi_proto.kapi.flowcontrol.v1 import flowcontrol_pb2

if TYPE_CHECKING:
    from services.flowcontrol.apf import Controller, Level


@dataclass(eq=False)
class Holder:
    """One Dispatch stream's leases, as the service counts them.

    ``send`` puts a LeaseChange on the stream, ``send_generation`` the new
    configuration generation. ``seats`` is level name -> seats granted and
    not yet returned; ``limit`` the seats the stream was last told it may use
    per level (its grants, or the ``keep`` of a revocation); ``executing``
    (priority level, flow schema) -> requests it runs without a Start now,
    from its last report.
    """

    send: Callable[[flowcontrol_pb2.LeaseChange], None]
    send_generation: Callable[[int], None]
    seats: dict[str, int] = field(default_factory=dict)
    limit: dict[str, int] = field(default_factory=dict)
    executing: dict[tuple[str, str], int] = field(default_factory=dict)


class Leases:
    """The lease book of one :class:`~services.flowcontrol.apf.Controller` (see module docstring).

    Installs itself as the controller's ``on_contention`` and
    ``on_reconfigure`` callbacks.
    """

    def __init__(self, controller: Controller):
        self.ctl = controller
        self.holders: set[Holder] = set()
        controller.on_contention = self._contended
        controller.on_reconfigure = self._reconfigured

    def attach(self, holder: Holder) -> None:
        """A stream that may take leases opened."""
        self.holders.add(holder)

    def detach(self, holder: Holder) -> None:
        """The stream ended or broke: every seat it was leased is free, its local requests are no longer counted."""
        self.holders.discard(holder)
        seats, holder.seats = holder.seats, {}
        holder.limit.clear()
        for level, count in seats.items():
            self.ctl.give_back_leased(level, count)
        executing, holder.executing = holder.executing, {}
        for key, count in executing.items():
            self._add_executing(key, -count)

    def held(self, level: str) -> int:
        """Seats of the level named ``level`` leased to all streams (0 when none)."""
        return sum(h.seats.get(level, 0) for h in self.holders)

    def started(self, holder: Holder, level: Level) -> int:
        """A leasable request of ``holder``'s executed at once at ``level``: maybe lease the stream one more seat.

        Returns the seats granted (0 or 1), sent to the stream as a LeaseChange.
        """
        if holder not in self.holders or level.config.exempt:
            return 0
        held = holder.seats.get(level.name, 0)
        cap = max(1, self.ctl.current_limit(level) // (2 * len(self.holders)))
        if held >= cap or not self.ctl.take_leased(level, 1):
            return 0
        holder.seats[level.name] = held + 1
        holder.limit[level.name] = held + 1
        holder.send(flowcontrol_pb2.LeaseChange(priority_level=level.name, grant=1))
        return 1

    def returned(self, holder: Holder, level: str, seats: int) -> None:
        """``holder`` gave back ``seats`` seats of ``level`` (at most what it holds counts)."""
        held = holder.seats.get(level, 0)
        seats = min(seats, held)
        if seats <= 0:
            return
        if held == seats:
            del holder.seats[level]
            holder.limit.pop(level, None)
        else:
            holder.seats[level] = held - seats
            holder.limit[level] = min(holder.limit.get(level, 0), held - seats)
        self.ctl.give_back_leased(level, seats)

    def report(self, holder: Holder, report: flowcontrol_pb2.LocalReport) -> None:
        """Count what ``holder`` ran without a Start, replace its executing gauges, and shrink oversized leases."""
        for count in report.counts:
            self.ctl.record_local(count.priority_level, count.flow_schema, count.dispatched, count.finished)
            key = (count.priority_level, count.flow_schema)
            delta = count.executing - holder.executing.get(key, 0)
            if count.executing:
                holder.executing[key] = count.executing
            else:
                holder.executing.pop(key, None)
            self._add_executing(key, delta)
        for demand in report.demand:
            name = demand.priority_level
            keep = demand.peak_in_flight + 1
            if holder.seats.get(name, 0) > 2 * keep and holder.limit.get(name, 0) > keep:
                self._revoke(holder, name, keep)

    def _add_executing(self, key: tuple[str, str], delta: int) -> None:
        total = self.ctl.local_executing.get(key, 0) + delta
        if total > 0:
            self.ctl.local_executing[key] = total
        else:
            self.ctl.local_executing.pop(key, None)

    def _revoke(self, holder: Holder, level: str, keep: int) -> None:
        holder.limit[level] = keep
        holder.send(flowcontrol_pb2.LeaseChange(priority_level=level, revoke=True, keep=keep))

    def _contended(self, level: Level) -> None:
        """A request queued or was refused at ``level``: revoke its leases and those of levels borrowing with them."""
        names = {level.name}
        names.update(lv.name for lv in self.ctl.levels.values() if lv.leased and lv.seats_in_use > lv.guaranteed)
        for holder in self.holders:
            for name in names:
                if holder.seats.get(name) and holder.limit.get(name, 0) > 0:
                    self._revoke(holder, name, 0)

    def _reconfigured(self) -> None:
        """A new configuration generation: tell every stream, and revoke every lease."""
        for holder in self.holders:
            holder.send_generation(self.ctl.generation)
            for name in list(holder.seats):
                if holder.limit.get(name, 0) > 0:
                    self._revoke(holder, name, 0)
