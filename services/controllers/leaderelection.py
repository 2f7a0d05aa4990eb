"""Leader election on a ``coordination.k8s.io/v1`` Lease (client-go ``tools/leaderelection``).

Replicas race to hold the Lease ``kube-system/kube-controller-manager``:
a candidate takes it when it is absent, released (empty holder) or not
renewed for ``lease_duration`` seconds *as observed locally* (the record
has not changed for that long on this replica's monotonic clock, so clock
skew between replicas does not matter). Writes are conditional on the
Lease's resourceVersion, so two candidates never both win. The leader
renews every ``retry_period``; if no renewal succeeds for
``renew_deadline`` seconds it stops leading (its loops are cancelled) and
becomes a candidate again. On a graceful stop the leader releases the
Lease (empty holder, duration 1 s) so a standby takes over at once.
kube-controller-manager's defaults: 15 s / 10 s / 2 s
(``--leader-elect-lease-duration``, ``--leader-elect-renew-deadline``,
``--leader-elect-retry-period``).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from kapi.resources import REGISTRY
from services.controllers.client import ApiError, Client, path_for

log = logging.getLogger(__name__)

LEASES = REGISTRY.get("coordination.k8s.io", "v1", "leases")
assert LEASES is not None


def micro_time(now: datetime.datetime | None = None) -> str:
    """metav1.MicroTime text: RFC 3339 with microseconds, UTC, ``Z``."""
    now = now or datetime.datetime.now(datetime.UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    """Campaign for one Lease; :meth:`run` calls ``lead()`` while leading and cancels it when leadership ends."""

    def __init__(self, client: Client, identity: str, namespace: str = "kube-system",
                 name: str = "kube-controller-manager", lease_duration: float = 15.0, renew_deadline: float = 10.0,
                 retry_period: float = 2.0, clock: Callable[[], float] = time.monotonic):
        if not lease_duration > renew_deadline > retry_period > 0:
            raise ValueError("need lease duration > renew deadline > retry period > 0")
        self.client = client
        self.identity = identity
        self.namespace = namespace
        self.name = name
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.clock = clock
        self.leading = asyncio.Event()
        self._observed: dict[str, Any] = {}
        self._observed_at = 0.0

    @property
    def path(self) -> str:
        """The Lease's URL path."""
        return path_for(LEASES, self.namespace, self.name)  # type: ignore[arg-type]

    def _spec(self, current: dict[str, Any], transitions: int) -> dict[str, Any]:
        now = micro_time()
        spec = dict(current)
        if spec.get("holderIdentity") != self.identity:
            spec["acquireTime"] = now
            spec["leaseTransitions"] = transitions
        spec.update({"holderIdentity": self.identity, "leaseDurationSeconds": max(1, round(self.lease_duration)),
                     "renewTime": now})
        return spec

    async def try_acquire_or_renew(self) -> bool:
        """One attempt: True if this replica holds the Lease afterwards. API failures count as False."""
        try:
            lease = await self.client.get(self.path)
        except ApiError as err:
            if err.code != 404:
                log.info("leader election: cannot read lease: %s", err)
                return False
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace}, "spec": self._spec({}, 0)}
            try:
                created = await self.client.create(path_for(LEASES, self.namespace), body)  # type: ignore[arg-type]
            except ApiError as exc:
                log.info("leader election: cannot create lease: %s", exc)
                return False
            self._observe(created.get("spec") or {})
            return True
        spec = lease.get("spec") or {}
        self._observe(spec)
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.identity and self.clock() < self._observed_at + self._duration(spec):
            return False
        transitions = int(spec.get("leaseTransitions") or 0) + (1 if holder != self.identity else 0)
        lease["spec"] = self._spec(spec, transitions)
        try:
            updated = await self.client.update(self.path, lease)
        except ApiError as err:
            log.info("leader election: cannot update lease: %s", err)
            return False
        self._observe(updated.get("spec") or {})
        return True

    def _duration(self, spec: dict[str, Any]) -> float:
        value = spec.get("leaseDurationSeconds")
        return float(value) if isinstance(value, int) and value > 0 else self.lease_duration

    def _observe(self, spec: dict[str, Any]) -> None:
        if spec != self._observed:
            self._observed = dict(spec)
            self._observed_at = self.clock()

    async def release(self) -> None:
        """Give the Lease up if held (empty holder, duration 1 s); errors are logged."""
        try:
            lease = await self.client.get(self.path)
            spec = lease.get("spec") or {}
            if spec.get("holderIdentity") != self.identity:
                return
            lease["spec"] = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1, "renewTime": micro_time()}
            await self.client.update(self.path, lease)
            log.info("leader election: released %s/%s", self.namespace, self.name)
        except ApiError as err:
            log.info("leader election: cannot release lease: %s", err)

    async def run(self, lead: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Campaign forever: acquire, run ``lead()`` while renewing, cancel it on loss, repeat. Cancel to stop
        (the Lease is then released)."""
        try:
            while True:
                while not await self.try_acquire_or_renew():
                    await asyncio.sleep(self.retry_period)
                log.info("leader election: %s became leader of %s/%s", self.identity, self.namespace, self.name)
                self.leading.set()
                task = asyncio.create_task(lead())
                try:
                    await self._renew_until_lost(task)
                finally:
                    self.leading.clear()
                    task.cancel()
                    await asyncio.gather(task, return_exceptions=True)
                log.warning("leader election: %s lost leadership of %s/%s", self.identity, self.namespace,
                            self.name)
        except asyncio.CancelledError:
            if self._observed.get("holderIdentity") == self.identity:
                await asyncio.shield(self.release())
            raise

    async def _renew_until_lost(self, task: asyncio.Task[None]) -> None:
        last = self.clock()
        while not task.done():
            await asyncio.sleep(self.retry_period)
            if await self.try_acquire_or_renew():
                last = self.clock()
            elif self._observed.get("holderIdentity") not in ("", self.identity) or \
                    self.clock() - last > self.renew_deadline:
                return
