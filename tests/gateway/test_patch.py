"""Merge, JSON and strategic merge patches."""

import pytest

from kapi import errors
from services.gateway.patch import json_patch, merge_patch, schema_for, strategic_merge_patch

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}},
       "spec": {"containers": [{"name": "c1", "image": "nginx:1"}, {"name": "c2", "image": "redis"}]}}


def test_merge_patch_rfc7386():
    out = merge_patch({"a": "b", "c": {"d": "e", "f": "g"}}, {"a": "z", "c": {"f": None}})
    assert out == {"a": "z", "c": {"d": "e"}}
    assert merge_patch({"l": [1, 2]}, {"l": [3]}) == {"l": [3]}


def test_json_patch_and_failed_test_is_422():
    assert json_patch({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}]) == {"a": 2}
    with pytest.raises(errors.StatusError) as info:
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 5}])
    assert info.value.code == 422
    assert info.value.status() == {  # NewGenericServerResponse: an empty Details struct is still sent
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server rejected our request due to an error in our request", "reason": "Invalid",
        "details": {}, "code": 422}
    assert errors.StatusError.from_status(info.value.status()).status() == info.value.status()  # over gRPC too
    with pytest.raises(errors.StatusError) as info:
        json_patch({"a": 1}, [{"op": "remove", "path": "/nope/x"}])
    assert (info.value.code, info.value.reason) == (422, "Invalid")
    assert "nope" not in info.value.message  # kube drops the patch library's text (no Python repr either)


def test_strategic_merge_containers_by_name():
    schema = schema_for("", "v1", "Pod")
    out = strategic_merge_patch(POD, {"spec": {"containers": [{"name": "c1", "image": "nginx:2"},
                                                              {"name": "c3", "image": "busybox"}]}}, schema)
    assert [(c["name"], c["image"]) for c in out["spec"]["containers"]] == [
        ("c1", "nginx:2"), ("c2", "redis"), ("c3", "busybox")]
    assert POD["spec"]["containers"][0]["image"] == "nginx:1"  # input untouched


def test_strategic_merge_delete_directive_and_null():
    schema = schema_for("", "v1", "Pod")
    out = strategic_merge_patch(POD, {"metadata": {"labels": {"a": None}},
                                      "spec": {"containers": [{"name": "c2", "$patch": "delete"}],
                                               "$setElementOrder/containers": [{"name": "c1"}]}}, schema)
    assert out["metadata"]["labels"] == {"b": "2"}
    assert [c["name"] for c in out["spec"]["containers"]] == ["c1"]


def test_strategic_merge_list_without_merge_key_replaces():
    schema = schema_for("", "v1", "Pod")
    pod = {"spec": {"containers": [{"name": "c", "args": ["a", "b"]}]}}
    out = strategic_merge_patch(pod, {"spec": {"containers": [{"name": "c", "args": ["z"]}]}}, schema)
    assert out["spec"]["containers"][0]["args"] == ["z"]


def test_strategic_merge_missing_merge_key_is_400():
    with pytest.raises(errors.StatusError) as info:
        strategic_merge_patch(POD, {"spec": {"containers": [{"image": "x"}]}}, schema_for("", "v1", "Pod"))
    assert info.value.code == 400


def test_json_patch_operation_count_is_bounded_before_applying():
    """kube's maxJSONPatchOperations: 413 RequestEntityTooLarge for more than 10,000 operations."""
    with pytest.raises(errors.StatusError) as info:
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 1}] * 10_001)
    assert (info.value.code, info.value.reason) == (413, "RequestEntityTooLarge")
    assert info.value.message == "The allowed maximum operations in a JSON patch is 10000, got 10001"
    assert json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": 1}] * 10_000) == {"a": 1}


def test_json_patch_copy_amplification_is_refused_quickly():
    """CVE-2019-1002100's class: 30 doubling copies would make 2^30 copies; refused past 3 MiB of copies (422)."""
    import time

    doc = {"metadata": {"name": "x", "annotations": {}}}
    ops = [{"op": "copy", "from": "/metadata", "path": f"/metadata/annotations/a{i}"} for i in range(30)]
    started = time.monotonic()
    with pytest.raises(errors.StatusError) as info:
        json_patch(doc, ops)
    assert time.monotonic() - started < 1.0
    assert (info.value.code, info.value.reason) == (422, "Invalid")
    assert doc == {"metadata": {"name": "x", "annotations": {}}}  # input untouched
    with pytest.raises(errors.StatusError):
        json_patch({"a": "x" * 100}, [{"op": "copy", "from": "/a", "path": "/b"}], max_copy_bytes=50)


@pytest.mark.parametrize(("ops", "expected"), [
    ([{"op": "copy", "from": "/a", "path": "/c"}], {"a": {"b": 1}, "l": [1], "c": {"b": 1}}),
    ([{"op": "copy", "from": "/l/0", "path": "/l/-"}], {"a": {"b": 1}, "l": [1, 1]}),
    ([{"op": "copy", "from": "/a", "path": "/l/0"}], {"a": {"b": 1}, "l": [{"b": 1}, 1]}),
    ([{"op": "copy", "from": "/a", "path": "/a/b"}], {"a": {"b": {"b": 1}}, "l": [1]}),
    ([{"op": "copy", "from": "", "path": "/a"}], {"a": {"a": {"b": 1}, "l": [1]}, "l": [1]}),
])
def test_json_patch_copy_is_rfc6902(ops: list, expected: dict):
    result = json_patch({"a": {"b": 1}, "l": [1]}, ops)
    assert result == expected
    if "c" in result:  # the copy is deep: changing it leaves the source alone
        result["c"]["b"] = 2
        assert result["a"] == {"b": 1}


@pytest.mark.parametrize("ops", [
    [{"op": "copy", "from": "/nope", "path": "/c"}],
    [{"op": "copy", "from": "/a"}],
    [{"op": "copy", "path": "/c"}],
    [{"op": "copy", "from": "/a", "path": "/l/5"}],
    [{"op": "copy", "from": "/a", "path": "/x/y"}],
    [{"op": "copy", "from": "/a", "path": "/l/x"}],
])
def test_json_patch_bad_copies_are_422(ops: list):
    with pytest.raises(errors.StatusError) as info:
        json_patch({"a": 1, "l": []}, ops)
    assert (info.value.code, info.value.reason) == (422, "Invalid")
