"""ResourceQuota: usage charged to quota status before a write is admitted (plugin/pkg/admission/resourcequota).

For each ResourceQuota of the namespace whose scopes match the object and
whose ``spec.hard`` names a resource the object uses (usage and scopes as
:mod:`kapi.quota` evaluates them, shared with the quota controller):

- which requests count (:meth:`ResourceQuota.evaluated`, the evaluators'
  Handles): a Pod CREATE and a ``pods/resize`` UPDATE (in-place resize:
  the increase is charged, a decrease frees nothing), any other resource's
  CREATE/UPDATE of the main resource; a plain Pod UPDATE and other
  subresources are not charged.
- a Pod (created or resized) missing a constrained compute resource -> 403
  ``failed quota: <quota>: must specify limits.cpu for: <containers>``.
- new usage above hard -> 403 ``exceeded quota: <quota>, requested:
  pods=1, used: pods=2, limited: pods=2``.
- the new ``status.used`` (and ``status.hard``) is written with a
  conditional storage update; on a Conflict the quota is re-read and the
  check repeated, so concurrent creates across replicas never overshoot.
  Dry-run requests check without charging. A quota whose status lacks a
  constrained resource has that usage computed from a live list first;
  DELETE of a charged object refunds its usage (kube leaves both to the
  quota controller, :mod:`services.controllers.loops.resourcequota`).
"""

from __future__ import annotations

import asyncio
import logging
from fractions import Fraction
from typing import Any

from kapi import errors
from kapi.quota import (
    Usage,
    add_usage,
    counted_resources,
    format_usage,
    quantity_or_zero,
    quota_matches,
    usage,
)
from services.admission.chain import CREATE, DELETE, UPDATE, AdmissionRequest
from services.admission.informers import Informers

log = logging.getLogger(__name__)

MAX_RETRIES = 20
RESIZE = "resize"
# validationSet of pkg/quota/v1/evaluator/core/pods.go: the names whose quota every container must set
_VALIDATION_SET = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}


def _list(items: Usage) -> str:
    return ",".join(f"{k}={format_usage(k, v)}" for k, v in sorted(items.items()))


class ResourceQuota:
    """The validating ResourceQuota plugin (the last one to run)."""

    name = "ResourceQuota"

    def __init__(self, informers: Informers):
        self.informers = informers
        self.cache = informers.cache("", "resourcequotas")

    def handles(self, operation: str) -> bool:
        """CREATE, UPDATE and DELETE."""
        return operation in (CREATE, UPDATE, DELETE)

    @staticmethod
    def evaluated(request: AdmissionRequest) -> bool:
        """Whether the request's object counts against quota here.

        The pod evaluator's Handles (``pkg/quota/v1/evaluator/core/pods.go``): a Pod CREATE, and an UPDATE of
        ``pods/resize`` (InPlacePodVerticalScaling) only; other subresources and a plain Pod UPDATE are not
        charged. Any other resource: its main resource only. DELETE refunds (kapi's own; kube leaves that to the
        quota controller)."""
        res = request.resource
        if not request.namespace or request.kind != res.kind:
            return False
        if not res.group and res.resource == "pods":
            if request.subresource == RESIZE:
                return request.operation == UPDATE
            return request.subresource == "" and request.operation in (CREATE, DELETE)
        return request.subresource == ""

    async def validate(self, request: AdmissionRequest) -> None:
        """Charge the request's usage to every matching quota; raises 403 when a quota would be exceeded.

        kube's CheckRequest (``staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go``):
        every matching quota first checks Constraints (``failed quota: <q>: must specify ...``); an UPDATE is
        charged ``new - old`` clamped at zero per resource (SubtractWithNonNegativeResult: a resize down frees
        nothing until the quota controller recounts) for a quota the old object matched too, the whole new usage
        for one it did not."""
        res = request.resource
        if not self.evaluated(request):
            return
        await self.cache.wait_synced(min(request.timeout, 5.0))
        if not self.cache.list(request.namespace):
            return
        new = usage(request.object, res.group, res.resource) if request.operation != DELETE else {}
        old = usage(request.old_object, res.group, res.resource) if request.operation != CREATE else {}
        if request.operation == DELETE:
            delta = {k: -v for k, v in old.items()}
        else:
            delta = dict(new)
        update_delta = {k: max(v - old.get(k, Fraction(0)), Fraction(0)) for k, v in new.items()}
        subject = request.object if request.object is not None else (request.old_object or {})
        charged: list[tuple[str, Usage]] = []
        try:
            for quota in self.cache.list(request.namespace):
                name = quota["metadata"]["name"]
                if not quota_matches(quota, subject, res.resource):
                    continue
                hard = (quota.get("spec") or {}).get("hard") or {}
                self._must_specify(name, hard, request)
                amount = delta
                if request.operation == UPDATE and quota_matches(quota, request.old_object or {}, res.resource):
                    amount = update_delta
                relevant = {k: v for k, v in amount.items() if k in hard and v != 0}
                if not relevant:
                    continue
                await self._charge(name, relevant, request)
                charged.append((name, relevant))
        except errors.StatusError:
            for name, amount in charged:  # refund what earlier quotas took
                try:
                    await self._charge(name, {k: -v for k, v in amount.items()}, request, check=False)
                except errors.StatusError as exc:
                    log.warning("could not refund quota %s/%s: %s", request.namespace, name, exc.message)
            raise

    @staticmethod
    def _must_specify(name: str, hard: dict[str, Any], request: AdmissionRequest) -> None:
        """The pod evaluator's Constraints, for a Pod CREATE or resize: a quota on cpu or memory (``cpu``,
        ``requests.cpu``, ``limits.cpu`` and the memory ones) needs every container and init container to set it;
        403 ``failed quota: <quota>: must specify limits.cpu for: a,b; requests.memory for: a`` (resources and
        container names sorted)."""
        res = request.resource
        if res.group or res.resource != "pods" or request.operation == DELETE or request.object is None:
            return
        spec = request.object.get("spec") or {}
        every = [c for key in ("containers", "initContainers") for c in spec.get(key) or [] if isinstance(c, dict)]
        missing: list[str] = []
        for constrained in sorted(set(hard) & _VALIDATION_SET):
            which, _, compute = constrained.rpartition(".")
            which = which or "requests"
            lacking = sorted({c.get("name", "") for c in every
                              if compute not in (((c.get("resources") or {}).get(which)) or {})})
            if lacking:
                missing.append(f"{constrained} for: {','.join(lacking)}")
        if missing:
            raise errors.forbidden("pods", request.name, f"failed quota: {name}: must specify {'; '.join(missing)}")

    async def _charge(self, name: str, amount: Usage, request: AdmissionRequest, check: bool = True) -> None:
        """Add ``amount`` to quota ``name``'s status.used with a conditional update, retrying on Conflict."""
        ns = request.namespace
        for attempt in range(MAX_RETRIES):
            quota, revision = await self.informers.get("", "resourcequotas", ns, name, request.timeout)
            if quota is None:
                return
            spec_hard = (quota.get("spec") or {}).get("hard") or {}
            status = quota.setdefault("status", {})
            used = dict(status.get("used") or {})
            missing = [k for k in spec_hard if k not in used]
            if missing:
                used.update(await self._recount(missing, quota, request))
            hard = {k: quantity_or_zero(v) for k, v in spec_hard.items()}
            current = {k: quantity_or_zero(used.get(k, 0)) for k in amount}
            after = {k: max(current[k] + v, Fraction(0)) for k, v in amount.items()}
            if check:
                exceeded = [k for k, v in amount.items() if v > 0 and k in hard and after[k] > hard[k]]
                if exceeded:
                    raise errors.forbidden(
                        request.resource.resource, request.name,
                        f"exceeded quota: {name}, requested: {_list({k: amount[k] for k in exceeded})}, "
                        f"used: {_list({k: current[k] for k in exceeded})}, "
                        f"limited: {_list({k: hard[k] for k in exceeded})}", request.resource.group)
            if request.dry_run:
                return
            for k, v in after.items():
                used[k] = format_usage(k, v)
            status["used"] = used
            status["hard"] = dict(spec_hard)
            try:
                await self.informers.update("", "resourcequotas", quota, revision, request.timeout)
                return
            except errors.StatusError as err:
                if err.code != 409:
                    raise
                await asyncio.sleep(0.001 * attempt)
        raise errors.StatusError(409, "Conflict", f"Operation cannot be fulfilled on resourcequotas \"{name}\": "
                                 "too many concurrent quota updates, please retry")

    async def _recount(self, resources: list[str], quota: dict[str, Any], request: AdmissionRequest
                       ) -> dict[str, str]:
        """Usage of ``resources`` by the namespace's existing objects (what the quota controller would compute)."""
        totals = {k: Fraction(0) for k in resources}
        for group, res in sorted(counted_resources(resources)):
            try:
                objects = await self.informers.list_live(group, res, request.namespace, request.timeout)
            except errors.StatusError as err:
                if err.code == 404:
                    continue
                raise
            add_usage(totals, quota, objects, group, res)
        return {k: format_usage(k, v) for k, v in totals.items()}

