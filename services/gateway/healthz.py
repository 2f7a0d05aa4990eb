"""The gateway's named health checks, as kube's healthz package serves them on ``/livez``, ``/readyz``, ``/healthz``.

``/livez`` and ``/healthz``: ``ping``, ``log``, ``etcd``, then the
post-start hooks; ``/readyz`` adds ``etcd-readiness`` and ``informer-sync``
after ``etcd`` and ends with ``shutdown``. Each answer
(:func:`render`) is kube's: ``ok`` (200); with ``?verbose`` one
``[+]<name> ok`` line per check and ``<path> check passed``; on any failure
(always verbose) ``[-]<name> failed: reason withheld`` and ``<path> check
failed`` with 500. ``?exclude=<name>`` (repeatable) turns a check into
``[+]<name> excluded: ok``; a name matching no check adds ``warn: some health
checks cannot be excluded: no matches for "<name>"``. ``/<path>/<name>``
answers one check: ``ok``, or 500 ``internal server error: <reason>``.

``etcd`` and ``etcd-readiness`` are storage's view of etcd: storage turns its
standard gRPC health status NOT_SERVING while etcd does not answer a
linearizable read within 2 s (services/storage/server.py), and
:class:`StorageHealth` follows that status over the health ``Watch`` stream,
so Envoy's active health check on ``/readyz`` stops routing to a gateway
whose storage cannot reach etcd. Post-start hooks pass once done (kube's
``poststarthook/<name>``: they never fail again); ``shutdown`` fails from
SIGTERM on (``--shutdown-delay-duration``). Source: k8s.io/apiserver
pkg/server/healthz/healthz.go, pkg/server/config.go and "Kubernetes API
health endpoints".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from kapi import grpcutil

log = logging.getLogger(__name__)

STORAGE_SERVICE = "kapi.storage.v1.Storage"
RETRY_SECONDS = 0.05  # first wait after the health Watch broke; doubles per failed attempt
RETRY_MAX_SECONDS = 2.0

# kube-apiserver's names of the post-start hooks whose work the gateway does at start, in kube's order.
HOOK_INFORMERS = "generic-apiserver-start-informers"
HOOK_APF = "priority-and-fairness-filter"
HOOK_CRD_SYNCED = "crd-informer-synced"
HOOK_NAMESPACES = "start-system-namespaces-controller"
HOOK_BOOTSTRAP = "bootstrap-controller"
HOOK_PRIORITY_CLASSES = "scheduling/bootstrap-system-priority-classes"
# The flowcontrol service keeps the bootstrap configuration; the gateway counts it done at start since its
# local max-in-flight fallback serves until the stream is up (docs/architecture.md, "Failure policy").
HOOK_APF_BOOTSTRAP = "apiserver/bootstrap-system-flowcontrol-configuration"
HOOK_AUTH_INFO = "start-cluster-authentication-info-controller"
HOOK_AGGREGATOR = "start-kube-aggregator-informers"
POST_START_HOOKS = (HOOK_INFORMERS, HOOK_APF, HOOK_CRD_SYNCED, HOOK_NAMESPACES, HOOK_BOOTSTRAP, HOOK_PRIORITY_CLASSES,
                    HOOK_APF_BOOTSTRAP, HOOK_AUTH_INFO, HOOK_AGGREGATOR)

HEADERS = {"Content-Type": "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff"}

Check = Callable[[], str]  # "" when healthy, else the reason (shown only by /<path>/<name> and in the log)


class StorageHealth:
    """Storage's view of etcd: the gRPC health status of the Storage service, followed over ``Watch``.

    ``reason`` is "" while storage reports SERVING, else why not (storage
    says NOT_SERVING: etcd does not answer; or storage itself is
    unreachable). Starts unhealthy ("not yet known") until the first answer.
    A broken stream is retried on a doubling backoff (50 ms up to 2 s) that
    ends early when the channel reconnects; with several storage replicas
    the new stream goes to one still up.
    """

    def __init__(self, channel: grpc.aio.Channel, service: str = STORAGE_SERVICE):
        self._channel = channel
        self._stub = health_pb2_grpc.HealthStub(channel)
        self._service = service
        self.reason = "storage has not reported etcd's health yet"
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin following storage's health in the background."""
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        """Stop following."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def _set(self, reason: str) -> None:
        if reason != self.reason:
            if reason:
                log.warning("etcd check failing: %s", reason)
            else:
                log.info("etcd check passing: storage reports etcd healthy")
        self.reason = reason

    async def _run(self) -> None:
        backoff = RETRY_SECONDS
        while True:
            try:
                async for reply in self._stub.Watch(health_pb2.HealthCheckRequest(service=self._service)):
                    backoff = RETRY_SECONDS
                    serving = reply.status == health_pb2.HealthCheckResponse.SERVING
                    self._set("" if serving else "storage reports etcd unreachable (health NOT_SERVING)")
                raise ConnectionError("storage ended the health stream")
            except asyncio.CancelledError:
                raise
            except (grpc.RpcError, ConnectionError) as exc:
                detail = exc.code().name if isinstance(exc, grpc.aio.AioRpcError) else str(exc)
                self._set(f"storage is unreachable ({detail})")
            await grpcutil.wait_ready(self._channel, backoff)
            backoff = min(backoff * 2, RETRY_MAX_SECONDS)


@dataclass(frozen=True)
class Answer:
    """One health answer: HTTP status and text body (sent with :data:`HEADERS`)."""

    status: int
    text: str


def checks(path: str, storage: StorageHealth | None, hooks_done: Iterable[str], informers_synced: Check,
           shutting_down: bool) -> list[tuple[str, Check]]:
    """The named checks of ``path`` ("livez", "readyz" or "healthz"), in kube's order.

    ``storage`` None (no health stream, unit tests) counts etcd as healthy;
    ``hooks_done`` are the post-start hooks finished so far;
    ``informers_synced`` answers the ``informer-sync`` check.
    """
    done = frozenset(hooks_done)

    def etcd() -> str:
        return storage.reason if storage is not None else ""

    def hook(name: str) -> Check:
        return lambda: "" if name in done else "not finished"

    result: list[tuple[str, Check]] = [("ping", lambda: ""), ("log", lambda: ""), ("etcd", etcd)]
    if path == "readyz":
        result += [("etcd-readiness", etcd), ("informer-sync", informers_synced)]
    result += [(f"poststarthook/{name}", hook(name)) for name in POST_START_HOOKS]
    if path == "readyz":
        result.append(("shutdown", lambda: "process is shutting down" if shutting_down else ""))
    return result


def render(path: str, named: Sequence[tuple[str, Check]], query: Mapping[str, object] | None = None,
           excluded: Iterable[str] = ()) -> Answer:
    """kube's answer of ``/<path>`` for its ``named`` checks (see the module docstring).

    ``query`` holds the request's parameters (only whether ``verbose`` is
    present matters); ``excluded`` are the ``exclude`` values, in order.
    Failures are logged with their reasons (the body withholds them).
    """
    skip = list(dict.fromkeys(excluded))
    lines, failed = [], []
    for name, check in named:
        if name in skip:
            skip.remove(name)
            lines.append(f"[+]{name} excluded: ok")
            continue
        reason = check()
        if reason:
            lines.append(f"[-]{name} failed: reason withheld")
            failed.append(f"[-]{name} failed: {reason}")
        else:
            lines.append(f"[+]{name} ok")
    if skip:
        lines.append("warn: some health checks cannot be excluded: no matches for "
                     + ",".join(f'"{name}"' for name in sorted(skip)))
    if failed:
        log.info("%s check failed:\n%s", path, "\n".join(failed))
        return Answer(500, "\n".join(lines) + f"\n{path} check failed\n")
    if query is None or "verbose" not in query:
        return Answer(200, "ok")
    return Answer(200, "\n".join(lines) + f"\n{path} check passed\n")


def render_one(named: Sequence[tuple[str, Check]], name: str) -> Answer | None:
    """kube's answer of ``/<path>/<name>``: ``ok``, or 500 with the reason; None if no check has that name."""
    for check_name, check in named:
        if check_name == name:
            reason = check()
            return Answer(500, f"internal server error: {reason}\n") if reason else Answer(200, "ok")
    return None
