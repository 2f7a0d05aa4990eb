"""The DeleteOptions admission sees on a DELETE, as kube's registries fill them in before the delete validation:
rest.BeforeDelete (apiserver/pkg/registry/rest/delete.go: a negative grace is 1; podStrategy.CheckGracefulDelete
sets a Pod's grace; a pending graceful deletion skips admission) and the namespace / CRD REST.Delete (the UID
precondition)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from services.gateway.registry import deletion


def _scope(group: str, resource: str) -> Any:
    return SimpleNamespace(resource=SimpleNamespace(group=group, resource=resource))


def _pod(node: str = "n1", phase: str = "Running", grace: int | None = 17, **meta: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x"}]}
    if node:
        spec["nodeName"] = node
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"metadata": {"name": "p", "uid": "u1", **meta}, "spec": spec, "status": {"phase": phase}}


PODS = _scope("", "pods")


@pytest.mark.parametrize(("obj", "options", "expected"), [
    (_pod(), {"propagationPolicy": "Background"}, {"propagationPolicy": "Background", "gracePeriodSeconds": 17}),
    (_pod(), {"gracePeriodSeconds": 5}, {"gracePeriodSeconds": 5}),
    (_pod(), {"gracePeriodSeconds": -5}, {"gracePeriodSeconds": 1}),
    (_pod(node=""), {}, {"gracePeriodSeconds": 0}),                    # not scheduled: at once
    (_pod(node="", grace=None), {"gracePeriodSeconds": 9}, {"gracePeriodSeconds": 0}),
    (_pod(phase="Succeeded"), {}, {"gracePeriodSeconds": 0}),
    (_pod(grace=None), {}, {"gracePeriodSeconds": 0}),
    # being deleted with grace 0 (or none): deleted at once, options as sent
    (_pod(deletionTimestamp="2026-01-01T00:00:00Z", deletionGracePeriodSeconds=0), {}, {}),
    # a pending graceful deletion shortened: admitted, options as sent
    (_pod(deletionTimestamp="2026-01-01T00:00:00Z", deletionGracePeriodSeconds=30), {"gracePeriodSeconds": 0},
     {"gracePeriodSeconds": 0}),
])
def test_pod_options(obj: dict[str, Any], options: dict[str, Any], expected: dict[str, Any]) -> None:
    sent = dict(options)
    assert deletion.admission_options(PODS, obj, options) == (expected, True)
    assert options == sent  # the caller's (a DeleteCollection's shared) options stay as they were


@pytest.mark.parametrize("options", [{}, {"gracePeriodSeconds": 30}, {"gracePeriodSeconds": 45}])
def test_pending_graceful_pod_deletion_skips_admission(options: dict[str, Any]) -> None:
    obj = _pod(deletionTimestamp="2026-01-01T00:00:00Z", deletionGracePeriodSeconds=30)
    assert deletion.admission_options(PODS, obj, options)[1] is False


def test_other_kinds_negative_grace_only() -> None:
    cm = {"metadata": {"name": "c", "uid": "u2"}}
    assert deletion.admission_options(_scope("", "configmaps"), cm, {}) == ({}, True)
    assert deletion.admission_options(_scope("", "configmaps"), cm, {"gracePeriodSeconds": -3}) == (
        {"gracePeriodSeconds": 1}, True)
    assert deletion.admission_options(_scope("apps", "deployments"), cm, {"gracePeriodSeconds": 0}) == (
        {"gracePeriodSeconds": 0}, True)


@pytest.mark.parametrize(("group", "resource"), [("", "namespaces"),
                                                 ("apiextensions.k8s.io", "customresourcedefinitions")])
def test_uid_precondition_filled(group: str, resource: str) -> None:
    scope = _scope(group, resource)
    obj = {"metadata": {"name": "n", "uid": "u3"}}
    assert deletion.admission_options(scope, obj, {"gracePeriodSeconds": -2}) == (
        {"gracePeriodSeconds": -2, "preconditions": {"uid": "u3"}}, True)  # first DELETE: no BeforeDelete
    out, admit = deletion.admission_options(scope, obj, {"preconditions": {"resourceVersion": "7"}})
    assert admit and out == {"preconditions": {"uid": "u3", "resourceVersion": "7"}}
    assert list(out["preconditions"]) == ["uid", "resourceVersion"]  # metav1.Preconditions' field order
    assert deletion.admission_options(scope, obj, {"preconditions": {"uid": "mine"}})[0] == {
        "preconditions": {"uid": "mine"}}
    terminating = {"metadata": {"name": "n", "uid": "u3", "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    assert deletion.admission_options(scope, terminating, {"gracePeriodSeconds": -2}) == (
        {"gracePeriodSeconds": 1, "preconditions": {"uid": "u3"}}, True)  # then Store.Delete's BeforeDelete
