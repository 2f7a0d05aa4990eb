"""services.gateway.dynamic's CRD controller: kube's naming, establishing, apiapproval and finalizer steps.

Each step is one status write, as apiextensions-apiserver's controllers write them; the storage is a fake
that records the writes and answers lists of the custom resources.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from kapi import crd
from kapi.resources import Registry
from services.gateway import dynamic


def definition(group: str = "example.com", annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": f"widgets.{group}", "resourceVersion": "1"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": meta,
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                     "versions": [{"name": "v1", "served": True, "storage": True}]},
            "status": {"conditions": None, "acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}}


INVALID = ('protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a '
           'reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111')


IN_PROGRESS = "CustomResource deletion is in progress"


def conditions(obj: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(c["type"], c["status"], c["reason"], c["message"]) for c in obj["status"]["conditions"] or []]


class FakeStorage:
    """Update records the written objects; List answers ``items``; Delete marks nothing (objects stay)."""

    def __init__(self) -> None:
        self.written: list[dict[str, Any]] = []
        self.items: list[dict[str, Any]] = []
        self.deleted: list[str] = []

    async def Update(self, request: Any, timeout: float, metadata: Any = None) -> Any:  # noqa: N802 - gRPC name
        self.written.append(json.loads(request.object))
        return None

    async def List(self, request: Any, timeout: float, metadata: Any = None) -> Any:  # noqa: N802
        return type("Listed", (), {"items": [json.dumps(i).encode() for i in self.items]})()

    async def Delete(self, request: Any, timeout: float, metadata: Any = None) -> Any:  # noqa: N802
        self.deleted.append(request.key.name)
        return None


def steps(controller: dynamic.CustomResourceRegistry, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Run the controller's steps until it wants no more writes; each step's written object."""
    out = []
    current = obj
    for _ in range(10):
        wanted = copy.deepcopy(current)
        if not controller._desired_status(wanted):
            return out
        out.append(wanted)
        current = wanted
        controller.crds[current["metadata"]["name"]] = current
    raise AssertionError("the controller did not settle")


def test_naming_writes_established_installing_before_the_establishing_controller() -> None:
    controller = dynamic.CustomResourceRegistry(FakeStorage(), Registry())
    written = steps(controller, definition())
    assert [conditions(w) for w in written] == [
        [("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
         ("Established", "False", "Installing", "the initial names have been accepted")],
        [("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
         ("Established", "True", "InitialNamesAccepted", "the initial names have been accepted")]]
    assert written[0]["status"]["acceptedNames"] == {"plural": "widgets", "singular": "widget", "kind": "Widget",
                                                     "listKind": "WidgetList"}
    assert crd.rows(written[0]) == [] and crd.rows(written[1])  # served only once Established


@pytest.mark.parametrize(("annotation", "expected"), [
    (None, ("False", "MissingAnnotation", 'protected groups must have approval annotation '
            '"api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111')),
    ("unapproved, experimental", ("False", "UnapprovedAnnotation", 'not approved: "unapproved, experimental"')),
    ("https://github.com/kubernetes/kubernetes/pull/78458",
     ("True", "ApprovedAnnotation", "approved in https://github.com/kubernetes/kubernetes/pull/78458")),
    ("yes", ("False", "InvalidAnnotation", INVALID)),
    ("github.com/kubernetes/kubernetes/pull/1", ("False", "InvalidAnnotation", INVALID)),  # no scheme
    ("mailto:someone@example.com", ("False", "InvalidAnnotation", INVALID)),  # no host
])
def test_api_approval_condition_for_protected_groups(annotation: str | None, expected: tuple) -> None:
    controller = dynamic.CustomResourceRegistry(FakeStorage(), Registry())
    obj = definition("widgets.k8s.io", None if annotation is None else {crd.APPROVAL_ANNOTATION: annotation})
    written = steps(controller, obj)
    first = conditions(written[0])
    assert first[0][:3] == ("KubernetesAPIApprovalPolicyConformant", *expected[:2])  # its own write, first
    assert len(first) == 1
    assert first[0][3] == expected[2]
    assert [c[0] for c in conditions(written[-1])] == ["KubernetesAPIApprovalPolicyConformant", "NamesAccepted",
                                                        "Established"]


@pytest.mark.parametrize("group", ["example.com", "k8s.io.example.com", "notk8s.io"])
def test_no_approval_condition_outside_protected_groups(group: str) -> None:
    controller = dynamic.CustomResourceRegistry(FakeStorage(), Registry())
    written = steps(controller, definition(group))
    assert [c[0] for c in conditions(written[-1])] == ["NamesAccepted", "Established"]


@pytest.mark.parametrize("group", ["k8s.io", "kubernetes.io", "x.k8s.io", "a.b.kubernetes.io"])
def test_protected_groups(group: str) -> None:
    assert crd.protected_group(group)


def _terminating(obj: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    obj["metadata"]["finalizers"] = [crd.CLEANUP_FINALIZER]
    crd.set_condition(obj, "Terminating", "True", "InstanceDeletionPending", "pending")
    return obj


async def test_a_crd_never_established_is_finalized_without_deleting_instances() -> None:
    storage = FakeStorage()
    controller = dynamic.CustomResourceRegistry(storage, Registry())
    obj = _terminating(definition())
    assert not await controller._finalize(copy.deepcopy(obj), obj)  # first: InstanceDeletionInProgress
    in_progress = storage.written[-1]
    assert conditions(in_progress)[-1] == ("Terminating", "True", "InstanceDeletionInProgress",
                                           "CustomResource deletion is in progress")
    storage.items = [{"metadata": {"name": "w", "namespace": "ns"}}]
    assert await controller._finalize(copy.deepcopy(in_progress), in_progress)
    final = storage.written[-1]
    assert conditions(final)[-1] == ("Terminating", "False", "NeverEstablished", "resource was never established")
    assert final["metadata"]["finalizers"] == [] and storage.deleted == []


async def test_instances_left_after_the_timeout_set_instance_deletion_check(monkeypatch: pytest.MonkeyPatch) -> None:
    storage = FakeStorage()
    controller = dynamic.CustomResourceRegistry(storage, Registry())
    established = steps(controller, definition())[-1]
    obj = _terminating(established)
    crd.set_condition(obj, "Terminating", "True", "InstanceDeletionInProgress", IN_PROGRESS)
    storage.items = [{"metadata": {"name": "held", "namespace": "ns", "finalizers": ["example.com/hold"]}}]
    assert not await controller._finalize(copy.deepcopy(obj), obj)
    assert storage.deleted == ["held"] and storage.written == []  # still within the minute: no write
    monkeypatch.setattr(dynamic, "INSTANCE_DELETION_TIMEOUT", 0.0)
    assert not await controller._finalize(copy.deepcopy(obj), obj)
    assert conditions(storage.written[-1])[-1] == (
        "Terminating", "True", "InstanceDeletionCheck",
        "could not confirm zero CustomResources remaining: context deadline exceeded")
    assert storage.written[-1]["metadata"]["finalizers"] == [crd.CLEANUP_FINALIZER]
    storage.items = []
    assert await controller._finalize(copy.deepcopy(obj), obj)
    assert conditions(storage.written[-1])[-1] == ("Terminating", "False", "InstanceDeletionCompleted",
                                                   "removed all instances")
    assert storage.written[-1]["metadata"]["finalizers"] == []


async def test_a_crd_overlapping_a_built_in_resource_keeps_its_objects() -> None:
    storage = FakeStorage()
    controller = dynamic.CustomResourceRegistry(storage, Registry())
    obj = definition("apiregistration.k8s.io", {crd.APPROVAL_ANNOTATION: "unapproved"})
    obj["metadata"]["name"] = "apiservices.apiregistration.k8s.io"
    obj["spec"]["names"]["plural"] = "apiservices"
    obj = _terminating(steps(controller, obj)[-1])
    crd.set_condition(obj, "Terminating", "True", "InstanceDeletionInProgress", IN_PROGRESS)
    storage.items = [{"metadata": {"name": "v1.apps"}}]
    assert await controller._finalize(copy.deepcopy(obj), obj)
    assert conditions(storage.written[-1])[-1] == ("Terminating", "False", "OverlappingBuiltInResource",
                                                   "instances overlap with built-in resources in storage")
    assert storage.deleted == []


def test_names_in_use_keep_the_old_accepted_names_and_name_the_conflict() -> None:
    controller = dynamic.CustomResourceRegistry(FakeStorage(), Registry())
    widgets = steps(controller, definition())[-1]
    gadgets = definition()
    gadgets["metadata"]["name"] = "gadgets.example.com"
    gadgets["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Widget", "listKind": "WidgetList"}
    written = steps(controller, gadgets)
    assert len(written) == 1  # never established
    # kind and listKind are both taken: the last conflict found names the condition
    assert conditions(written[0]) == [("NamesAccepted", "False", "ListKindConflict", '"WidgetList" is already in use'),
                                      ("Established", "False", "NotAccepted", "not all names are accepted")]
    assert written[0]["status"]["acceptedNames"] == {"plural": "gadgets", "singular": "gadget", "kind": ""}
    shorts = definition()
    shorts["metadata"]["name"] = "things.example.com"
    shorts["spec"]["names"] = {"plural": "things", "singular": "thing", "shortNames": ["widget", "widgets", "th"],
                               "kind": "Thing", "listKind": "ThingList"}
    written = steps(controller, shorts)
    assert conditions(written[0])[0] == ("NamesAccepted", "False", "ShortNamesConflict",
                                         '["widget" is already in use, "widgets" is already in use]')
    assert "shortNames" not in written[0]["status"]["acceptedNames"]
    # the other CRD's deletion frees the names: the next reconcile accepts them
    del controller.crds[widgets["metadata"]["name"]]
    accepted = steps(controller, written[-1])
    assert conditions(accepted[-1])[1] == ("Established", "True", "InitialNamesAccepted",
                                           "the initial names have been accepted")
