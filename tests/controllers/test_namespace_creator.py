"""The NamespaceCreator admission plugin: creator annotations written on create, frozen on update."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors, tenancy
from kapi.attributes import Attributes, UserInfo
from kapi.resources import REGISTRY
from services.admission.chain import CREATE, UPDATE, AdmissionRequest
from services.admission.plugins.namespace_creator import NamespaceCreator

NAMESPACES = REGISTRY.get("", "v1", "namespaces")
CONFIGMAPS = REGISTRY.get("", "v1", "configmaps")
ALICE = UserInfo("alice", "uid-a", ("dev", "team-a", "system:authenticated"))


def request(operation: str, obj: dict[str, Any], old: dict[str, Any] | None = None, resource: Any = NAMESPACES,
            user: UserInfo = ALICE, subresource: str = "") -> AdmissionRequest:
    attrs = Attributes(user, operation.lower(), True, resource=resource.resource, name="a", subresource=subresource)
    return AdmissionRequest(operation, attrs, resource, resource.kind, obj, old)


def ns(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "a"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


async def test_create_records_the_creator_and_overwrites_client_values() -> None:
    obj = ns({tenancy.CREATOR: "mallory", "keep": "me"})
    await NamespaceCreator().admit(request(CREATE, obj))
    assert obj["metadata"]["annotations"] == {"keep": "me", tenancy.CREATOR: "alice", tenancy.CREATOR_UID: "uid-a",
                                              tenancy.CREATOR_GROUPS: "dev,team-a"}


async def test_tenant_group_must_be_the_users_own() -> None:
    obj = ns({tenancy.TENANT_GROUP: "team-a"})
    await NamespaceCreator().admit(request(CREATE, obj))
    assert obj["metadata"]["annotations"][tenancy.TENANT_GROUP] == "team-a"
    with pytest.raises(errors.StatusError) as caught:
        await NamespaceCreator().admit(request(CREATE, ns({tenancy.TENANT_GROUP: "team-b"})))
    assert caught.value.code == 403 and "not a member of group 'team-b'" in caught.value.message


@pytest.mark.parametrize("new_annotations", [
    {tenancy.CREATOR: "bob"},  # changed
    {},  # removed
    {tenancy.CREATOR: "bob", tenancy.TENANT_GROUP: "x", "other": "1"},
])
@pytest.mark.parametrize("subresource", ["", "finalize", "status"])
async def test_update_cannot_change_them(new_annotations: dict[str, str], subresource: str) -> None:
    """On the object and on its finalize/status subresources alike (a PUT of /finalize carries metadata too)."""
    stored = {tenancy.CREATOR: "alice", tenancy.CREATOR_UID: "uid-a", tenancy.CREATOR_GROUPS: "dev"}
    obj = ns(dict(new_annotations))
    await NamespaceCreator().admit(request(UPDATE, obj, ns(stored), subresource=subresource))
    other = {k: v for k, v in new_annotations.items() if k not in tenancy.MANAGED}
    assert obj["metadata"]["annotations"] == {**other, **stored}


async def test_other_resources_untouched() -> None:
    obj = {"metadata": {"name": "x", "annotations": {tenancy.CREATOR: "bob"}}}
    await NamespaceCreator().admit(request(CREATE, obj, resource=CONFIGMAPS))
    assert obj["metadata"]["annotations"] == {tenancy.CREATOR: "bob"}
