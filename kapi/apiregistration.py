"""APIService knowledge shared by the gateway, admission and the controllers (``apiregistration.k8s.io/v1``).

- :data:`PRIORITIES`: kube-apiserver's ``groupPriorityMinimum``/``versionPriority``
  of each built-in group-version (``DefaultGenericAPIServicePriorities`` merged with
  ``cmd/kube-apiserver/app`` ``apiVersionPriorities``); CRD group-versions get
  :data:`CRD_PRIORITY` (1000, 100) as kube's crdregistration controller gives them.
- :func:`local_apiservice`: the Local APIService kube-apiserver's autoregister
  controller keeps for a served group-version (no ``spec.service``, label
  ``kube-aggregator.kubernetes.io/automanaged`` ``onstart`` or ``true``).
- Discovery order: :func:`legacy_order` (``/apis`` APIGroupList, kube-aggregator's
  ``SortedByGroupAndVersion``: groupPriorityMinimum descending, then the APIService
  *name*; apiregistration.k8s.io always first, as kube-aggregator's apisHandler)
  and :func:`aggregated_order` (APIGroupDiscoveryList, the aggregated discovery
  manager: a group's highest groupPriorityMinimum descending, then the group name).
  Versions in a group: versionPriority descending, then kube's version order
  (``v2 > v1 > v1beta1 > v1alpha1 > foo``).
- The APIService kind's defaults and validation (kube-aggregator's
  ``ValidateAPIService``) are :mod:`kapi.kinds.apiregistration`.

Sources: "Configure the Aggregation Layer", the APIService reference,
kube-aggregator ``pkg/apis/apiregistration/v1/helper``, ``.../validation``,
``pkg/controllers/autoregister``, ``pkg/controlplane/controller/crdregistration``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kapi.crd import version_priority

GROUP = "apiregistration.k8s.io"
RESOURCE = "apiservices"
API_VERSION = f"{GROUP}/v1"
AUTOMANAGED = "kube-aggregator.kubernetes.io/automanaged"
ONSTART = "onstart"  # kept at start for a built-in group-version (AddAPIServiceToSyncOnStart)
SYNC = "true"  # kept while a CRD serves the group-version (AddAPIServiceToSync)
LOCAL_REASON = "Local"
LOCAL_MESSAGE = "Local APIServices are always available"
CRD_PRIORITY = (1000, 100)  # crdregistration: "CRDs should have relatively low priority"
DEFAULT_PRIORITY = (1000, 15)  # the aggregated discovery manager's default for a group-version it has no APIService of

# (group, version) -> (groupPriorityMinimum, versionPriority), kube-apiserver's table.
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("events.k8s.io", "v1beta1"): (17750, 5),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authentication.k8s.io", "v1beta1"): (17700, 9),
    ("authentication.k8s.io", "v1alpha1"): (17700, 1),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v1"): (17500, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v2beta1"): (17500, 9),
    ("autoscaling", "v2beta2"): (17500, 1),
    ("batch", "v1"): (17400, 15),
    ("batch", "v1beta1"): (17400, 9),
    ("batch", "v2alpha1"): (17400, 9),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("certificates.k8s.io", "v1beta1"): (17300, 9),
    ("certificates.k8s.io", "v1alpha1"): (17300, 1),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("networking.k8s.io", "v1beta1"): (17200, 9),
    ("policy", "v1"): (17100, 15),
    ("policy", "v1beta1"): (17100, 9),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("storage.k8s.io", "v1beta1"): (16800, 9),
    ("storage.k8s.io", "v1alpha1"): (16800, 1),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1beta1"): (16700, 12),
    ("admissionregistration.k8s.io", "v1alpha1"): (16700, 9),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("coordination.k8s.io", "v1beta1"): (16500, 13),
    ("coordination.k8s.io", "v1alpha2"): (16500, 12),
    ("node.k8s.io", "v1"): (16300, 15),
    ("node.k8s.io", "v1beta1"): (16300, 9),
    ("node.k8s.io", "v1alpha1"): (16300, 1),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("discovery.k8s.io", "v1beta1"): (16200, 12),
    ("resource.k8s.io", "v1"): (16200, 21),
    ("resource.k8s.io", "v1beta2"): (16200, 15),
    ("resource.k8s.io", "v1beta1"): (16200, 9),
    ("resource.k8s.io", "v1alpha3"): (16200, 1),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"): (16100, 18),
    ("flowcontrol.apiserver.k8s.io", "v1beta2"): (16100, 15),
    ("flowcontrol.apiserver.k8s.io", "v1beta1"): (16100, 12),
    ("flowcontrol.apiserver.k8s.io", "v1alpha1"): (16100, 9),
    ("internal.apiserver.k8s.io", "v1alpha1"): (16000, 9),
    ("storagemigration.k8s.io", "v1beta1"): (15800, 9),
}


def name_of(group: str, version: str) -> str:
    """The APIService name of a group-version: ``<version>.<group>`` (``v1.`` for the core group)."""
    return f"{version}.{group}"


def local_apiservice(group: str, version: str, priority: tuple[int, int], managed: str) -> dict[str, Any]:
    """The Local APIService the autoregister controller keeps for ``group``/``version``.

    ``priority`` is (groupPriorityMinimum, versionPriority); ``managed`` is
    :data:`ONSTART` (built-ins) or :data:`SYNC` (CRDs), the value of the
    ``kube-aggregator.kubernetes.io/automanaged`` label. No ``spec.service``.
    """
    return {"apiVersion": API_VERSION, "kind": "APIService",
            "metadata": {"name": name_of(group, version), "labels": {AUTOMANAGED: managed}},
            "spec": {"group": group, "version": version, "groupPriorityMinimum": priority[0],
                     "versionPriority": priority[1]}}


def is_local(obj: Mapping[str, Any]) -> bool:
    """True for an APIService without ``spec.service`` (served by kapi itself)."""
    spec = obj.get("spec")
    return not (isinstance(spec, dict) and spec.get("service"))


@dataclass(frozen=True)
class Entry:
    """One group-version to order in discovery, with its APIService's name and priorities."""

    group: str
    version: str
    group_priority: int
    version_priority: int

    @property
    def name(self) -> str:
        """The APIService name ``<version>.<group>``."""
        return name_of(self.group, self.version)

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> Entry:
        """The entry of an APIService object (missing numbers count as 0)."""
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        return cls(str(spec.get("group") or ""), str(spec.get("version") or ""),
                   _int(spec.get("groupPriorityMinimum")), _int(spec.get("versionPriority")))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _versions(entries: list[Entry]) -> list[str]:
    ordered = sorted(entries, key=lambda e: (-e.version_priority, version_priority(e.version)))
    out: list[str] = []
    for e in ordered:
        if e.version not in out:
            out.append(e.version)
    return out


def legacy_order(entries: Iterable[Entry]) -> list[tuple[str, list[str]]]:
    """Named groups and their versions in ``/apis`` (APIGroupList) order, preferred version first.

    kube-aggregator's ``SortedByGroupAndVersion``: APIServices by
    groupPriorityMinimum descending then name; a group sits where its first
    APIService does. The core group is left out; apiregistration.k8s.io is
    always first ("it's good to be king").
    """
    ordered = sorted((e for e in entries if e.group and e.group != GROUP), key=lambda e: (-e.group_priority, e.name))
    groups: dict[str, list[Entry]] = {}
    for e in ordered:
        groups.setdefault(e.group, []).append(e)
    return [(GROUP, ["v1"]), *((g, _versions(es)) for g, es in groups.items())]


def aggregated_order(entries: Iterable[Entry]) -> list[tuple[str, list[str]]]:
    """Groups and versions in aggregated-discovery (APIGroupDiscoveryList) order.

    The resource discovery manager's order: each group's highest
    groupPriorityMinimum descending, ties by group name; versions by
    versionPriority descending then kube's version order.
    """
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.group, []).append(e)
    ranked = sorted(groups.items(), key=lambda kv: (-max(e.group_priority for e in kv[1]), kv[0]))
    return [(g, _versions(es)) for g, es in ranked]


def entries_for(served: Mapping[str, Iterable[str]], apiservices: Iterable[Mapping[str, Any]] = (),
                crd_groups: Iterable[str] = ()) -> list[Entry]:
    """Entries of every served group-version (``served``: group -> versions), priorities from ``apiservices``.

    A served group-version without an APIService (yet) gets kube's table
    value, :data:`CRD_PRIORITY` for a group in ``crd_groups``, else
    :data:`DEFAULT_PRIORITY`. Remote APIServices (with ``spec.service``) add
    their group-versions; a remote APIService wins over a local one of the same
    name only in routing, not here.
    """
    by_name = {str((o.get("metadata") or {}).get("name") or ""): o for o in apiservices}
    crds = set(crd_groups)
    out: list[Entry] = []
    seen: set[str] = set()
    for group, versions in served.items():
        for version in versions:
            name = name_of(group, version)
            if name in seen:
                continue
            seen.add(name)
            obj = by_name.get(name)
            if obj is not None:
                found = Entry.of(obj)
                out.append(Entry(group, version, found.group_priority, found.version_priority))
                continue
            default = CRD_PRIORITY if group in crds else PRIORITIES.get((group, version), DEFAULT_PRIORITY)
            out.append(Entry(group, version, *default))
    for name, obj in by_name.items():
        if name not in seen and not is_local(obj):
            e = Entry.of(obj)
            if e.version:
                seen.add(name)
                out.append(e)
    return out
