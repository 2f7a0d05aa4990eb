"""Wiring of the controller manager: flags -> kubeconfig client -> leader election -> loops.

    kapi controllers --kubeconfig DIR/pki/controller-manager.kubeconfig --master https://127.0.0.1:6443 \\
                     --controllers '*,tokencleaner'

An ordinary API client (docs/architecture.md, "Processes"): it talks HTTPS to Envoy with
its own client certificate (CN ``system:kube-controller-manager``). With
``--leader-elect`` (default) the loops run only while this replica holds
the Lease ``kube-system/kube-controller-manager``; SIGTERM releases it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import uuid
from collections.abc import Sequence
from pathlib import Path

from kapi import flags, grpcutil
from services.controllers import manager
from services.controllers.client import Client, load_kubeconfig
from services.controllers.context import Context
from services.controllers.leaderelection import LeaderElector

log = logging.getLogger(__name__)

#: kube-controller-manager's client User-Agent (client-go DefaultKubernetesUserAgent plus the controller's name, as
#: SimpleControllerClientBuilder's AddUserAgent writes it): the apiserver names the field manager of every write
#: after its first segment, so the objects the loops write show ``manager: kube-controller-manager`` as in kube
#: (a new namespace's ``default`` ServiceAccount and ``kube-root-ca.crt``, a ResourceQuota's status).
USER_AGENT = "kube-controller-manager/v1.37.0 (linux/amd64) kubernetes/0000000/controller-manager"


def identity() -> str:
    """This replica's leader-election identity: ``<hostname>_<uuid>`` (kube-controller-manager's form)."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


async def serve(args: argparse.Namespace, stop: asyncio.Event) -> None:
    """Run until ``stop`` is set; raises ValueError/OSError for a bad kubeconfig or ``--controllers``."""
    names = manager.enabled(args.controllers)
    config = load_kubeconfig(args.kubeconfig, args.master)
    root_ca = Path(args.root_ca_file).read_bytes() if args.root_ca_file else config.ca_pem
    client = Client(config, user_agent=USER_AGENT)
    ctx = Context(client=client, args=args, root_ca=root_ca, resync=args.min_resync_period)

    async def lead() -> None:
        await manager.run_loops(ctx, names)

    if args.leader_elect:
        elector = LeaderElector(client, identity(), namespace=args.leader_elect_resource_namespace,
                                name=args.leader_elect_resource_name,
                                lease_duration=args.leader_elect_lease_duration,
                                renew_deadline=args.leader_elect_renew_deadline,
                                retry_period=args.leader_elect_retry_period)
        task = asyncio.create_task(elector.run(lead))
    else:
        task = asyncio.create_task(lead())
    log.info("controllers started: %s", ", ".join(names))
    await stop.wait()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await client.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``kapi controllers [flags]``; returns the exit code (2 for bad flags or kubeconfig)."""
    args = flags.parse(flags.CONTROLLERS, argv)
    grpcutil.configure_logging(args.log_level)
    if not args.kubeconfig:
        log.error("--kubeconfig is required")
        return 2
    try:
        manager.enabled(args.controllers)
        load_kubeconfig(args.kubeconfig, args.master)
    except (ValueError, OSError) as exc:
        log.error("%s", exc)
        return 2
    grpcutil.run(lambda stop: serve(args, stop))
    return 0
