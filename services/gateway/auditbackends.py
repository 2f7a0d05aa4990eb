"""Where audit events go: a JSON-lines log file with rotation, and a batching webhook.

- :class:`LogBackend` (``--audit-log-path``; ``-`` is stdout): one
  ``audit.k8s.io/v1`` Event per line. The file is rotated when a write would
  pass ``--audit-log-maxsize`` megabytes (0 = 100, as kube-apiserver's
  lumberjack); the old file is renamed ``<name>-<UTC time>.<ext>``
  (``audit-2024-05-01T10-00-00.000.log``); backups past
  ``--audit-log-maxbackup`` (0 = keep all) or older than
  ``--audit-log-maxage`` days (0 = keep) are deleted.
- :class:`WebhookBackend` (``--audit-webhook-config-file``, a kubeconfig):
  events are buffered (``--audit-webhook-batch-buffer-size``) and POSTed as an
  ``EventList`` when ``--audit-webhook-batch-max-size`` events are waiting or
  ``--audit-webhook-batch-max-wait`` seconds passed since the first one.
  A failed POST is retried with ``--audit-webhook-initial-backoff`` doubling,
  3 attempts; then the batch is dropped and logged. A full buffer drops events
  (logged), never blocks requests.

Source: "Auditing: Log backend / Webhook backend / Event batching".
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import ssl
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import aiohttp
import yaml

from kapi import jsonutil

log = logging.getLogger(__name__)
MEGABYTE = 1024 * 1024
DEFAULT_MAX_SIZE_MB = 100
_BACKUP_TIME = "%Y-%m-%dT%H-%M-%S"


class Backend(Protocol):
    """Takes finished audit events (dicts in audit.k8s.io/v1 Event form)."""

    def process(self, events: Sequence[dict[str, Any]]) -> None:
        """Record ``events`` without blocking the request for I/O longer than a local write."""

    async def close(self) -> None:
        """Flush and release files and connections."""


class LogBackend:
    """JSON-lines audit log at ``path`` with size-based rotation (see the module docstring).

    Each line is one ``write(2)`` on an ``O_APPEND`` descriptor, and the file
    is re-opened when another process rotated it, so several gateways on one
    host may share a path.
    """

    def __init__(self, path: str, max_size_mb: int = 0, max_backups: int = 0, max_age_days: int = 0,
                 clock: Any = time.time) -> None:
        self.path = path
        self.max_bytes = (max_size_mb or DEFAULT_MAX_SIZE_MB) * MEGABYTE
        self.max_backups = max_backups
        self.max_age_seconds = max_age_days * 86400
        self._clock = clock
        self._fd: int | None = None

    def _open(self) -> int:
        if self.path == "-":
            return sys.stdout.fileno()
        if self._fd is not None:
            try:
                if os.stat(self.path).st_ino == os.fstat(self._fd).st_ino:
                    return self._fd
            except FileNotFoundError:
                pass
            os.close(self._fd)  # rotated away (by us or another gateway)
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return self._fd

    def process(self, events: Sequence[dict[str, Any]]) -> None:
        """Append one line per event, rotating first if the line would overflow the file."""
        for event in events:
            line = jsonutil.go_escape(jsonutil.dumps(event)) + b"\n"  # Go's encoder: HTML-escaped
            fd = self._open()
            if self.path != "-":
                size = os.fstat(fd).st_size
                if size and size + len(line) > self.max_bytes:
                    self._rotate()
                    fd = self._open()
            os.write(fd, line)

    def backups(self) -> list[Path]:
        """Rotated files of this log, oldest first."""
        base = Path(self.path)
        prefix = base.stem + "-"
        found = [p for p in base.parent.glob(f"{base.stem}-*{base.suffix}") if p.name.startswith(prefix)]
        return sorted(found, key=lambda p: p.name)

    def _rotate(self) -> None:
        base = Path(self.path)
        now = datetime.fromtimestamp(self._clock(), UTC)
        stamp = now.strftime(_BACKUP_TIME) + f".{now.microsecond // 1000:03d}"
        target = base.with_name(f"{base.stem}-{stamp}{base.suffix}")
        n = 1
        while target.exists():
            target = base.with_name(f"{base.stem}-{stamp}-{n}{base.suffix}")
            n += 1
        with contextlib.suppress(FileNotFoundError):  # another gateway rotated it first
            os.replace(base, target)
        self._prune()

    def _prune(self) -> None:
        backups = self.backups()
        doomed: set[Path] = set()
        if self.max_backups > 0 and len(backups) > self.max_backups:
            doomed.update(backups[:len(backups) - self.max_backups])
        if self.max_age_seconds > 0:
            cutoff = self._clock() - self.max_age_seconds
            doomed.update(p for p in backups if p.stat().st_mtime < cutoff)
        for path in doomed:
            with contextlib.suppress(OSError):
                path.unlink()

    async def close(self) -> None:
        """Close the file (stdout stays open)."""
        if self._fd is not None:
            os.close(self._fd)
        self._fd = None


def _kubeconfig_target(path: str) -> tuple[str, dict[str, str], ssl.SSLContext | None]:
    """(server URL, extra headers, TLS context) of the first cluster/user in a webhook kubeconfig."""
    config = yaml.safe_load(Path(path).read_text()) or {}
    base = Path(path).parent
    try:
        cluster = config["clusters"][0]["cluster"]
        server = str(cluster["server"])
    except (KeyError, IndexError, TypeError):
        raise ValueError(f"{path}: no clusters[0].cluster.server") from None
    users = config.get("users") or [{}]
    user = (users[0] or {}).get("user") or {}
    headers: dict[str, str] = {}
    if user.get("token"):
        headers["Authorization"] = f"Bearer {user['token']}"
    if not server.startswith("https://"):
        return server, headers, None
    context = ssl.create_default_context()
    if cluster.get("insecure-skip-tls-verify"):
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    if cluster.get("certificate-authority-data"):
        context.load_verify_locations(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    elif cluster.get("certificate-authority"):
        context.load_verify_locations(cafile=str(base / cluster["certificate-authority"]))
    if user.get("client-certificate"):
        context.load_cert_chain(str(base / user["client-certificate"]), str(base / user["client-key"]))
    return server, headers, context


class WebhookBackend:
    """Batches events and POSTs them as ``audit.k8s.io/v1 EventList`` to the kubeconfig's server."""

    def __init__(self, config_file: str, max_batch: int = 400, max_wait: float = 30.0, buffer_size: int = 10000,
                 initial_backoff: float = 10.0, attempts: int = 3) -> None:
        self.url, self.headers, self.ssl = _kubeconfig_target(config_file)
        self.max_batch = max(1, max_batch)
        self.max_wait = max_wait
        self.initial_backoff = initial_backoff
        self.attempts = attempts
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=buffer_size)
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None
        self._current: list[dict[str, Any]] = []  # the batch being filled or sent
        self.dropped = 0
        self.sent_batches = 0

    def process(self, events: Sequence[dict[str, Any]]) -> None:
        """Queue ``events``; the sender task starts on first use (inside the event loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())
        for event in events:
            try:
                self._queue.put_nowait(event)
            except asyncio.QueueFull:
                self.dropped += 1
                if self.dropped == 1 or self.dropped % 1000 == 0:
                    log.warning("audit webhook buffer full: %d events dropped so far", self.dropped)

    async def _next_batch(self) -> list[dict[str, Any]]:
        batch = self._current
        batch.append(await self._queue.get())
        deadline = asyncio.get_running_loop().time() + self.max_wait
        while len(batch) < self.max_batch:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            try:
                async with asyncio.timeout(left):
                    batch.append(await self._queue.get())
            except TimeoutError:
                break
        return batch

    async def _run(self) -> None:
        while True:
            await self._send(await self._next_batch())
            self._current = []

    async def _send(self, batch: list[dict[str, Any]]) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        body = jsonutil.go_escape(jsonutil.dumps({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {},
                                                   "items": batch}))
        backoff = self.initial_backoff
        for attempt in range(1, self.attempts + 1):
            try:
                async with self._session.post(self.url, data=body, ssl=self.ssl if self.ssl is not None else True,
                                              headers={**self.headers, "Content-Type": "application/json"}) as reply:
                    if reply.status < 300:
                        self.sent_batches += 1
                        return
                    problem = f"HTTP {reply.status}"
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                problem = f"{type(exc).__name__}: {exc}"
            if attempt < self.attempts:
                await asyncio.sleep(backoff)
                backoff *= 2
        log.error("audit webhook %s: dropped a batch of %d events (%s)", self.url, len(batch), problem)

    async def close(self) -> None:
        """Send what is buffered (one last try each), then stop the sender."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        pending, self._current = self._current, []
        while not self._queue.empty():
            pending.append(self._queue.get_nowait())
        self.attempts = 1
        for i in range(0, len(pending), self.max_batch):
            await self._send(pending[i:i + self.max_batch])
        if self._session is not None:
            await self._session.close()
