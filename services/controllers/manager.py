"""The controller manager: which loops run (``--controllers``), their shared informers, and running them.

``--controllers`` follows kube-controller-manager: a comma-separated list
where ``*`` enables every loop that is on by default, ``name`` enables a
loop, ``-name`` disables one ("kube-controller-manager" command-line
reference). As in kube, ``tokencleaner`` is off by default (kubeadm runs
``--controllers=*,bootstrapsigner,tokencleaner``; ``kapi up`` runs
``*,tokencleaner``). kube's newer ``<name>-controller`` names are accepted
as aliases. Unknown names refuse to start.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from services.controllers.context import Context

log = logging.getLogger(__name__)

SYNC_TIMEOUT = 30.0  # seconds the manager waits for informers' first lists before starting loops anyway


class Controller(Protocol):
    """One reconcile loop; built with a :class:`Context` (registering its informers), then ``run`` until
    cancelled."""

    name: str

    async def run(self) -> None:
        """Process work until cancelled."""
        ...


Factory = Callable[[Context], Controller]


@dataclass(frozen=True)
class Loop:
    """A registered loop: its name, kube's newer alias, on by default, and its factory."""

    name: str
    alias: str
    default_on: bool
    factory: Factory


def loops() -> dict[str, Loop]:
    """Every loop by name (imported lazily so a loop module's import errors surface at start)."""
    from services.controllers.loops import (
        apiservices,
        csrsigning,
        disruption,
        garbagecollector,
        namespace,
        podgc,
        resourcequota,
        rootcacert,
        serviceaccount,
        servicecidrs,
        storageprotection,
        tenantquota,
        tenantrbac,
        tokencleaner,
    )

    table = [
        Loop("namespace", "namespace-controller", True, namespace.NamespaceController),
        Loop("serviceaccount", "serviceaccount-controller", True, serviceaccount.ServiceAccountController),
        Loop("root-ca-cert-publisher", "root-ca-certificate-publisher-controller", True,
             rootcacert.RootCACertPublisher),
        Loop("tokencleaner", "token-cleaner-controller", False, tokencleaner.TokenCleaner),
        Loop("garbagecollector", "garbage-collector-controller", True, garbagecollector.GarbageCollector),
        Loop("resourcequota", "resourcequota-controller", True, resourcequota.ResourceQuotaController),
        Loop("tenant-rbac", "tenant-rbac-controller", True, tenantrbac.TenantRBACController),
        Loop("tenant-quota", "tenant-quota-controller", True, tenantquota.TenantQuotaController),
        Loop("autoregister", "kube-apiserver-autoregistration", True, apiservices.AutoRegister),
        Loop("csrsigning", "certificatesigningrequest-signing-controller", True, csrsigning.CSRSigningController),
        Loop("pvc-protection", "persistentvolumeclaim-protection-controller", True,
             storageprotection.PVCProtectionController),
        Loop("pv-protection", "persistentvolume-protection-controller", True, storageprotection.PVProtectionController),
        Loop("service-cidr-controller", "service-cidr-controller", True, servicecidrs.ServiceCIDRController),
        Loop("podgc", "pod-garbage-collector-controller", True, podgc.PodGCController),
        Loop("disruption", "disruption-controller", True, disruption.DisruptionController),
    ]
    return {loop.name: loop for loop in table}


def enabled(spec: str, table: dict[str, Loop] | None = None) -> list[str]:
    """Names of the loops ``--controllers`` turns on, in table order.

    Raises ValueError ``"foo" is not in the list of known controllers`` for
    an unknown name.
    """
    table = table if table is not None else loops()
    alias = {loop.alias: loop.name for loop in table.values()}
    items = [i.strip() for i in (spec or "*").split(",") if i.strip()]
    star = "*" in items
    on: set[str] = set()
    off: set[str] = set()
    for item in items:
        if item == "*":
            continue
        negate = item.startswith("-")
        name = item[1:] if negate else item
        name = alias.get(name, name)
        if name not in table:
            raise ValueError(f'"{name}" is not in the list of known controllers')
        (off if negate else on).add(name)
    return [n for n, loop in table.items()
            if n in on or (star and loop.default_on and n not in off)]


async def run_loops(ctx: Context, names: list[str], table: dict[str, Loop] | None = None,
                    sync_timeout: float = SYNC_TIMEOUT) -> None:
    """Build the named loops, start the informers they registered, wait (bounded) for the first lists, then
    run every loop until cancelled; informers and loops stop with it, and ``ctx`` forgets its informers and
    shared helpers so the next call (after leadership is lost and regained) starts from scratch."""
    table = table if table is not None else loops()
    controllers = [table[n].factory(ctx) for n in names]
    tasks = [asyncio.create_task(inf.run(), name=f"informer {path}") for path, inf in ctx.informers.items()]
    try:
        waiters = [asyncio.create_task(inf.synced.wait()) for inf in ctx.informers.values()]
        if waiters:
            _, pending = await asyncio.wait(waiters, timeout=sync_timeout)
            for w in pending:
                w.cancel()
            if pending:
                log.warning("%d informers not synced after %.0fs; starting loops anyway", len(pending),
                            sync_timeout)
        log.info("running controllers: %s", ", ".join(names))
        tasks += [asyncio.create_task(_guard(c), name=f"controller {c.name}") for c in controllers]
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        # The next run (leadership regained) builds fresh loops: they must get fresh informers and shared
        # helpers too (a kept customresources.shared would hold an informer nobody runs any more).
        ctx.informers.clear()
        ctx.shared.clear()


async def _guard(controller: Controller) -> None:
    """Run a loop; if it crashes, log and restart it after a second (one loop never takes the others down)."""
    while True:
        try:
            await controller.run()
            return
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            log.exception("controller %s crashed; restarting", controller.name)
            await asyncio.sleep(1.0)
