"""ClusterRole aggregation ("Using RBAC Authorization", "Aggregated ClusterRoles").

kube-controller-manager's ``clusterrole-aggregation`` controller, run here
by the authz service: a ClusterRole with ``aggregationRule.clusterRoleSelectors``
gets as ``rules`` the rules of every other ClusterRole whose labels match
any selector, selectors in order, matching roles sorted by name, each rule
once. When the computed rules differ from the stored ones the role is
written back through storage (conditioned on the revision read, so a
concurrent change wins and triggers a new pass), and the watch brings the
result into the policy index like any other change. As kube's controller
server-side applies ``rules`` with Force as
``clusterrole-aggregation-controller``, the write gives that manager an
Apply entry owning ``f:rules`` and takes the field from the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import grpc

from kapi import errors, jsonutil
from kapi import managedfields as mf
from kapi.selectors import SelectorError, label_selector_matches
from kapi_proto.kapi.storage.v1 import storage_pb2, storage_pb2_grpc
from services.authz.policy import PolicyIndex
from services.authz.rbac import GROUP

log = logging.getLogger(__name__)
FIELD_MANAGER = "clusterrole-aggregation-controller"  # kube's controller applies with Force as this manager
RULES_FIELDS = mf.from_fields_v1({"f:rules": {}})  # rules is an atomic list


def selector_matches(selector: Any, labels: Mapping[str, str]) -> bool:
    """Whether a metav1.LabelSelector dict selects ``labels`` (LabelSelectorAsSelector; ``{}`` selects all).

    ``matchLabels`` pairs and ``matchExpressions`` (In, NotIn, Exists,
    DoesNotExist) must all hold; an unknown operator or a non-object
    selector selects nothing.
    """
    if not isinstance(selector, Mapping):
        return False
    try:
        return label_selector_matches(selector, labels)
    except SelectorError:
        return False


def aggregate(name: str, rule_: Mapping[str, Any], roles: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rules ClusterRole ``name`` with aggregationRule ``rule_`` should have, given every ClusterRole object."""
    out: list[dict[str, Any]] = []
    for selector in rule_.get("clusterRoleSelectors") or ():
        for other in sorted(roles):
            if other == name:
                continue
            labels = (roles[other].get("metadata") or {}).get("labels") or {}
            if not selector_matches(selector, labels):
                continue
            for rule in roles[other].get("rules") or ():
                if isinstance(rule, Mapping) and dict(rule) not in out:
                    out.append(dict(rule))
    return out


class Aggregator:
    """Keeps aggregated ClusterRoles' rules current: one pass at start and after every policy change."""

    def __init__(self, stub: storage_pb2_grpc.StorageStub, index: PolicyIndex, *, timeout: float = 10.0,
                 settle: float = 0.05, sleep: Callable[[float], Any] = asyncio.sleep):
        self._stub = stub
        self._index = index
        self._timeout = timeout
        self._settle = settle
        self._sleep = sleep
        self.writes = 0

    async def run(self, synced: asyncio.Event) -> None:
        """Reconcile after ``synced`` is set, then after each revision change, until cancelled."""
        await synced.wait()
        seen = -1
        while True:
            if seen == self._index.revision:
                await self._index.wait_revision_change(seen)
            await self._sleep(self._settle)  # let a burst of watch events land first
            seen = self._index.revision
            try:
                await self.reconcile()
            except Exception:  # a bug or outage must not stop aggregation for good
                log.exception("ClusterRole aggregation pass failed")
                await self._sleep(1.0)
                seen = -1

    async def reconcile(self) -> int:
        """One pass over every aggregated ClusterRole; returns how many were written."""
        roles = self._index.cluster_role_objects()
        written = 0
        failure: errors.StatusError | None = None
        for name, obj in sorted(roles.items()):
            rule_ = obj.get("aggregationRule")
            if not isinstance(rule_, Mapping):
                continue
            wanted = aggregate(name, rule_, roles)
            if wanted == list(obj.get("rules") or []):
                continue
            now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            meta = {**(obj.get("metadata") or {}), "managedFields": mf.force_apply_fields(
                obj, RULES_FIELDS, FIELD_MANAGER, f"{GROUP}/v1", now)}
            try:
                if await self._write(name, {**obj, "metadata": meta, "rules": wanted}):
                    written += 1
            except errors.StatusError as err:  # one failed write must not hold back the other roles
                log.warning("aggregating ClusterRole %s failed: %s", name, err.message)
                failure = err
        self.writes += written
        if failure is not None:
            raise failure
        return written

    async def _write(self, name: str, obj: dict[str, Any]) -> bool:
        rv = int((obj.get("metadata") or {}).get("resourceVersion") or 0)
        request = storage_pb2.UpdateRequest(key=storage_pb2.ResourceKey(group=GROUP, resource="clusterroles",
                                                                         name=name),
                                            object=jsonutil.dumps(obj), expected_resource_version=rv)
        try:
            await self._stub.Update(request, timeout=self._timeout)
        except grpc.RpcError as exc:
            err = errors.from_rpc_error(exc, "storage")
            if err.reason in ("Conflict", "NotFound"):
                return False  # the role changed or went away: its watch event triggers another pass
            raise err from None
        log.info("aggregated ClusterRole %s now has %d rules", name, len(obj["rules"]))
        return True
