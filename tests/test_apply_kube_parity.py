"""Server-side apply as kube-apiserver 1.37 answers it: the object type check, no-op applies, capped managers."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from kapi import errors
from kapi import managedfields as mf
from services.gateway import patch as patching
from services.gateway.handlers.apply import check_object_type, object_type

T = "2026-01-01T00:00:00Z"
T2 = "2026-01-01T00:00:05Z"
CM = mf.Types(patching.schema_for("", "v1", "ConfigMap"), patching._definitions())


def _scope(group: str, version: str, kind: str) -> Any:
    return SimpleNamespace(resource=SimpleNamespace(group=group, version=version, kind=kind))


# (body, the endpoint's group/version/kind, kube's message or None when accepted)
OBJECT_TYPES = [
    ({"metadata": {"name": "x"}}, ("", "v1", "ConfigMap"), "invalid object type: /, Kind="),
    (None, ("", "v1", "ConfigMap"), "invalid object type: /, Kind="),
    ({"kind": "ConfigMap"}, ("", "v1", "ConfigMap"), "invalid object type: /, Kind=ConfigMap"),
    ({"apiVersion": "v1"}, ("", "v1", "ConfigMap"), "invalid object type: /v1, Kind="),
    ({"apiVersion": "v1", "kind": "Secret"}, ("", "v1", "ConfigMap"), "invalid object type: /v1, Kind=Secret"),
    ({"apiVersion": "apps/v1", "kind": "ConfigMap"}, ("", "v1", "ConfigMap"),
     "invalid object type: apps/v1, Kind=ConfigMap"),
    ({"apiVersion": "v1", "kind": "Deployment"}, ("apps", "v1", "Deployment"),
     "invalid object type: /v1, Kind=Deployment"),
    ({"apiVersion": "apps/v1beta1", "kind": "Deployment"}, ("apps", "v1", "Deployment"),
     "invalid object type: apps/v1beta1, Kind=Deployment"),
    ({"apiVersion": "a/b/c", "kind": "ConfigMap"}, ("", "v1", "ConfigMap"), "invalid object type: /, Kind="),
    ({"apiVersion": 5, "kind": "ConfigMap"}, ("", "v1", "ConfigMap"), "invalid object type: /, Kind=ConfigMap"),
    ({"apiVersion": "v1", "kind": "ConfigMap"}, ("", "v1", "ConfigMap"), None),
    ({"apiVersion": "/v1", "kind": "ConfigMap"}, ("", "v1", "ConfigMap"), None),  # ParseGroupVersion's "", "v1"
    ({"apiVersion": "apps/v1", "kind": "Deployment"}, ("apps", "v1", "Deployment"), None),
]


@pytest.mark.parametrize("body,endpoint,message", OBJECT_TYPES)
def test_apply_body_of_another_type_is_invalid_object_type(body: Any, endpoint: tuple[str, str, str],
                                                           message: str | None) -> None:
    """kube's versionCheckManager: 400 BadRequest naming the body's GroupVersionKind as Go prints it."""
    if message is None:
        check_object_type(object_type(body), _scope(*endpoint))
        return
    with pytest.raises(errors.StatusError) as info:
        check_object_type(object_type(body), _scope(*endpoint))
    assert (info.value.code, info.value.reason, info.value.message) == (400, "BadRequest", message)


def _cm(data: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}, "data": data}


def test_a_no_op_apply_keeps_the_appliers_time() -> None:
    """Applying the same configuration again changes nothing, so the entry keeps its time (no write follows)."""
    live = mf.apply(None, _cm({"a": "1"}), "ssa", "v1", T, CM)
    again = mf.apply(live, _cm({"a": "1"}), "ssa", "v1", T2, CM)
    assert again == live
    changed = mf.apply(live, _cm({"a": "2"}), "ssa", "v1", T2, CM)
    assert changed["metadata"]["managedFields"][0]["time"] == T2


def test_a_new_applier_that_changes_nothing_gets_an_entry_without_time() -> None:
    """kube's managedFieldsUpdater sets no time when the merge returned no object: the new co-owner's entry
    has none."""
    live = mf.apply(None, _cm({"a": "1"}), "one", "v1", T, CM)
    out = mf.apply(live, _cm({"a": "1"}), "two", "v1", T2, CM)
    two = [e for e in out["metadata"]["managedFields"] if e["manager"] == "two"]
    assert two == [{"manager": "two", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:a": {}}}}]


def _updates(count: int, version: str = "v1") -> dict[str, Any]:
    """A ConfigMap with ``count`` Update managers m00.. (m<i> owns data.k<i>, at second i) and one applier."""
    obj = _cm({f"k{i:02}": "v" for i in range(count)})
    obj["metadata"]["managedFields"] = [
        {"manager": f"m{i:02}", "operation": "Update", "apiVersion": version,
         "time": f"2026-01-01T00:00:{i:02}Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {f"f:k{i:02}": {}}}}
        for i in range(count)] + [
        {"manager": "ssa", "operation": "Apply", "apiVersion": "v1", "time": "2025-01-01T00:00:00Z",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:z": {}}}}]
    obj["data"]["z"] = "v"
    return obj


def test_update_managers_beyond_ten_merge_into_ancient_changes() -> None:
    """kube's capManagersManager (DefaultMaxUpdateManagers 10): after an Update, the two oldest of 11 Update
    entries become one ``ancient-changes`` entry with their fields and the newer one's time; Apply entries stay."""
    live = _updates(10)
    new = _updates(10)
    new["data"]["new"] = "v"
    new["metadata"].pop("managedFields")
    out = mf.update(live, new, "newest", "v1", "2026-01-01T00:01:00Z", CM)
    managers = [e["manager"] for e in out]
    assert len([e for e in out if e["operation"] == "Update"]) == 10
    assert "m00" not in managers and "m01" not in managers and "ssa" in managers and "newest" in managers
    ancient = next(e for e in out if e["manager"] == "ancient-changes")
    assert ancient == {"manager": "ancient-changes", "operation": "Update", "apiVersion": "v1",
                       "time": "2026-01-01T00:00:01Z", "fieldsType": "FieldsV1",
                       "fieldsV1": {"f:data": {"f:k00": {}, "f:k01": {}}}}


def test_ten_update_managers_are_not_capped() -> None:
    live = _updates(9)
    new = _updates(9)
    new["data"]["new"] = "v"
    new["metadata"].pop("managedFields")
    out = mf.update(live, new, "newest", "v1", "2026-01-01T00:01:00Z", CM)
    assert "ancient-changes" not in [e["manager"] for e in out] and len(out) == 11


def test_ancient_changes_buckets_are_per_api_version() -> None:
    """The first entry of each apiVersion only opens its bucket once a second one of that version merges."""
    entries = [mf.Entry(f"m{i}", "Update", "v1" if i % 2 else "v2", frozenset({("f:data", f"f:k{i}")}),
                        f"2026-01-01T00:00:{i:02}Z") for i in range(12)]
    out = mf.cap_update_managers(entries)
    assert len(out) == 10
    buckets = {e.api_version: e for e in out if e.manager == "ancient-changes"}
    assert set(buckets) == {"v1", "v2"}
    assert buckets["v2"].fields == {("f:data", "f:k0"), ("f:data", "f:k2")} and buckets["v2"].time.endswith(":02Z")
    assert buckets["v1"].fields == {("f:data", "f:k1"), ("f:data", "f:k3")} and buckets["v1"].time.endswith(":03Z")
