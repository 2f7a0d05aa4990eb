"""NamespaceLifecycle against an in-memory namespace lookup (the storage-backed cache is tested in test_service)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from kapi.attributes import Attributes, UserInfo
from kapi.resources import REGISTRY
from services.admission.chain import AdmissionRequest
from services.admission.plugins.namespace_lifecycle import NamespaceLifecycle

USER = UserInfo("alice")


class Namespaces:
    """name -> namespace object; records live-lookup requests."""

    def __init__(self, phases: dict[str, str]):
        self.items = {n: {"metadata": {"name": n}, "status": {"phase": p}} for n, p in phases.items()}
        self.forced: list[str] = []
        self.gets = 0

    async def get(self, name: str, timeout: float) -> dict[str, Any] | None:
        self.gets += 1
        return self.items.get(name)

    def force_live_lookup(self, name: str) -> None:
        self.forced.append(name)


def _request(operation: str, resource: str, namespace: str = "", name: str = "",
             obj: dict[str, Any] | None = None, group: str = "") -> AdmissionRequest:
    row = REGISTRY.get(group, "v1", resource)
    assert row is not None
    attrs = Attributes(USER, operation.lower(), True, api_group=group, api_version="v1", resource=resource,
                       namespace=namespace, name=name)
    return AdmissionRequest(operation, attrs, row, row.kind, obj, None)


@pytest.fixture
def plugin() -> NamespaceLifecycle:
    return NamespaceLifecycle(Namespaces({"demo": "Active", "going": "Terminating"}))  # type: ignore[arg-type]


async def _refusal(plugin: NamespaceLifecycle, request: AdmissionRequest) -> errors.StatusError | None:
    try:
        await plugin.validate(request)
    except errors.StatusError as err:
        return err
    return None


CASES = [
    # (operation, resource, namespace, name, object name, expected (code, message) or None)
    ("CREATE", "configmaps", "demo", "", "a", None),
    ("CREATE", "configmaps", "missing", "", "a", (404, 'namespaces "missing" not found')),
    ("UPDATE", "configmaps", "missing", "a", "a", (404, 'namespaces "missing" not found')),
    ("DELETE", "configmaps", "missing", "a", None, None),
    ("CREATE", "configmaps", "going", "", "a",
     (403, 'configmaps "a" is forbidden: unable to create new content in namespace going because it is being '
           "terminated")),
    ("UPDATE", "configmaps", "going", "a", "a", None),
    ("DELETE", "namespaces", "", "kube-system", None, (403, 'namespaces "kube-system" is forbidden: this namespace '
                                                            "may not be deleted")),
    ("DELETE", "namespaces", "", "default", None, (403, 'namespaces "default" is forbidden: this namespace may not '
                                                        "be deleted")),
    ("DELETE", "namespaces", "", "kube-public", None, (403, 'namespaces "kube-public" is forbidden: this namespace '
                                                            "may not be deleted")),
    ("DELETE", "namespaces", "", "demo", None, None),
    ("CREATE", "namespaces", "", "", "new", None),
    ("CREATE", "clusterroles", "", "", "r", None),
]


@pytest.mark.parametrize(("operation", "resource", "namespace", "name", "obj_name", "expected"), CASES)
async def test_namespace_lifecycle(plugin: NamespaceLifecycle, operation: str, resource: str, namespace: str,
                                   name: str, obj_name: str | None, expected: tuple[int, str] | None) -> None:
    group = "rbac.authorization.k8s.io" if resource == "clusterroles" else ""
    obj = {"metadata": {"name": obj_name}} if obj_name else None
    err = await _refusal(plugin, _request(operation, resource, namespace, name, obj, group))
    if expected is None:
        assert err is None
    else:
        assert err is not None and (err.code, err.message) == expected


async def test_terminating_cause_and_generate_name(plugin: NamespaceLifecycle) -> None:
    err = await _refusal(plugin, _request("CREATE", "pods", "going", obj={"metadata": {"generateName": "web-"}}))
    assert err is not None and err.reason == "Forbidden"
    assert err.message.startswith('pods "web-" is forbidden')
    assert err.details["causes"] == [{"reason": "NamespaceTerminating", "message": "namespace going is being "
                                      "terminated", "field": "metadata.namespace"}]


async def test_namespace_delete_forces_live_lookup(plugin: NamespaceLifecycle) -> None:
    await plugin.validate(_request("DELETE", "namespaces", name="demo"))
    assert plugin.namespaces.forced == ["demo"]  # type: ignore[attr-defined]
    assert plugin.handles("CREATE") and plugin.handles("DELETE") and not plugin.handles("CONNECT")
