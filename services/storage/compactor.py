"""Periodic etcd compaction shared by every storage replica (k8s.io/apiserver pkg/storage/etcd3/compact.go).

Every ``--etcd-compaction-interval`` each replica runs one transaction on the
key ``compact_rev_key`` (kube-apiserver's key, outside ``--etcd-prefix``):
"if its version is still the one I saw last time, put the revision I saw
last time". Exactly one replica per interval wins; the winner then compacts
etcd to that revision (the revision etcd had one interval ago, so at least
one interval of history always remains for watches and continue tokens).
Losers learn the winner's compacted revision from the key's value. Either
way the process's watch caches are told, so watches and continue tokens
older than the compacted revision get 410 Expired.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from kapi import errors
from kapi_proto.etcd import rpc_pb2
from services.storage.etcd import CompactedError, EtcdClient

log = logging.getLogger(__name__)

COMPACT_REV_KEY = b"compact_rev_key"
DEFAULT_INTERVAL = 300.0  # seconds (kube-apiserver --etcd-compaction-interval 5m)


class Compactor:
    """Compacts etcd every ``interval`` seconds (0 = never) and reports each compacted revision to
    ``on_compacted`` (the store, which tells its watch caches)."""

    def __init__(self, etcd: EtcdClient, interval: float, on_compacted: Callable[[int], None]):
        self._etcd = etcd
        self.interval = interval
        self._on_compacted = on_compacted
        self._version = 0  # compact_rev_key's version last seen (0 = absent)
        self._revision = 0  # etcd's revision at the last attempt: the next compaction target
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Run the loop in the background (no-op if the interval is 0)."""
        if self.interval > 0 and self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="etcd-compactor")

    async def stop(self) -> None:
        """Stop the loop."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: S110 - stopping
                pass
            self._task = None

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.run_once()
            except errors.StatusError as err:
                log.warning("etcd compaction failed: %s", err.message)

    async def run_once(self) -> int:
        """One round of kube's compact(): returns the revision compacted (by this or another replica), 0 if none.

        Raises StatusError if etcd fails.
        """
        request = rpc_pb2.TxnRequest(
            compare=[rpc_pb2.Compare(key=COMPACT_REV_KEY, target=rpc_pb2.Compare.VERSION,
                                     result=rpc_pb2.Compare.EQUAL, version=self._version)],
            success=[rpc_pb2.RequestOp(request_put=rpc_pb2.PutRequest(key=COMPACT_REV_KEY,
                                                                      value=str(self._revision).encode()))],
            failure=[rpc_pb2.RequestOp(request_range=rpc_pb2.RangeRequest(key=COMPACT_REV_KEY))],
        )
        response = await self._etcd.txn(request)
        target, self._revision = self._revision, response.header.revision
        if not response.succeeded:  # another replica compacted this interval
            kvs = response.responses[0].response_range.kvs
            self._version = kvs[0].version if kvs else 0
            compacted = int(kvs[0].value or b"0") if kvs else 0
            if compacted:
                self._on_compacted(compacted)
            return compacted
        self._version += 1
        if not target:
            return 0  # first round: nothing seen an interval ago yet (kube does not compact on bootstrap)
        await compact(self._etcd, target)  # the client's compaction listeners tell this process's caches
        self._on_compacted(target)
        log.info("compacted etcd to revision %d", target)
        return target


async def compact(etcd: EtcdClient, revision: int) -> None:
    """Compact etcd to ``revision``; an already compacted revision is fine. Raises StatusError if etcd fails."""
    try:
        await etcd.compact(revision)
    except CompactedError:
        pass
