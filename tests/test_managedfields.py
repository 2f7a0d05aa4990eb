"""Field ownership and server-side apply (kapi.managedfields), table-driven against kube's behaviour."""

from __future__ import annotations

import pytest

from kapi import errors
from kapi import managedfields as mf
from services.gateway import patch as patching

T = "2026-01-01T00:00:00Z"
T2 = "2026-01-01T00:00:05Z"


def types(group: str, version: str, kind: str) -> mf.Types:
    return mf.Types(patching.schema_for(group, version, kind), patching._definitions())


CM = types("", "v1", "ConfigMap")
DEPLOY = types("apps", "v1", "Deployment")
SVC = types("", "v1", "Service")


def deployment(image: str = "nginx", replicas: int | None = 1, labels: dict | None = None) -> dict:
    spec: dict = {"selector": {"matchLabels": {"app": "d"}},
                  "template": {"metadata": {"labels": {"app": "d"}},
                               "spec": {"containers": [{"name": "c", "image": image}]}}}
    if replicas is not None:
        spec["replicas"] = replicas
    meta: dict = {"name": "d", "namespace": "ns"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta, "spec": spec}


@pytest.mark.parametrize("obj,t,expected", [
    ({"data": {"a": "1"}}, CM, {"f:data": {"f:a": {}}}),
    ({"metadata": {"name": "x", "labels": {"l": "v"}}, "data": {}}, CM,
     {"f:data": {}, "f:metadata": {"f:labels": {"f:l": {}}}}),
    (deployment(), DEPLOY, {"f:spec": {
        "f:replicas": {}, "f:selector": {},
        "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                       "f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}, "f:name": {}}}}}}}),
    ({"spec": {"ports": [{"port": 80}]}}, SVC, {"f:spec": {"f:ports": {
        'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}}}}}),
    ({"metadata": {"finalizers": ["a", "b"]}}, CM, {"f:metadata": {"f:finalizers": {'v:"a"': {}, 'v:"b"': {}}}}),
])
def test_apply_field_sets(obj, t, expected):
    """Apply ownership: leaves, atomic maps (selector), list items with "."; struct and map nodes not owned."""
    assert mf.to_fields_v1(mf.field_set(obj, t)) == expected


@pytest.mark.parametrize("fields", [
    {"f:data": {".": {}, "f:a": {}}},
    {"f:spec": {"f:containers": {'k:{"name":"c"}': {".": {}, "f:image": {}}}}},
    {"f:metadata": {"f:finalizers": {".": {}, 'v:"a"': {}}}},
])
def test_fields_v1_round_trip(fields):
    assert mf.to_fields_v1(mf.from_fields_v1(fields)) == fields


@pytest.mark.parametrize("path,text", [
    (("f:data", "f:a"), ".data.a"),
    (("f:spec", "f:containers", 'k:{"name":"c"}', "f:image"), '.spec.containers[name="c"].image'),
    (("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}'), '.spec.ports[port=80,protocol="TCP"]'),
    (("f:metadata", "f:finalizers", 'v:"a"'), '.metadata.finalizers[="a"]'),
])
def test_path_string(path, text):
    assert mf.path_string(path) == text


@pytest.mark.parametrize("agent,manager", [("kubectl/v1.37.1 (linux/amd64) kubernetes/abc", "kubectl"),
                                           ("python", "python"), ("", ""),
                                           ("bad\x00tool\x7f/1.0", "badtool"),  # unprintable runes dropped
                                           ("x" * 200, "x" * 128),
                                           ("é" * 100, "é" * 64)])  # 128 bytes of UTF-8, whole runes
def test_manager_from_user_agent(agent, manager):
    assert mf.manager_from_user_agent(agent) == manager


def test_update_on_create_owns_added_maps_with_dot():
    new = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "b"}},
           "data": {"k": "v"}}
    [entry] = mf.update(None, new, "kubectl-create", "v1", T, CM)
    assert entry == {"manager": "kubectl-create", "operation": "Update", "apiVersion": "v1", "time": T,
                     "fieldsType": "FieldsV1", "fieldsV1": {
                         "f:data": {".": {}, "f:k": {}}, "f:metadata": {"f:labels": {".": {}, "f:a": {}}}}}


def test_update_moves_changed_fields_and_drops_removed():
    live = {"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"}}
    live["metadata"]["managedFields"] = mf.update(None, live, "first", "v1", T, CM)
    new = {"metadata": {"name": "c", "managedFields": live["metadata"]["managedFields"]}, "data": {"a": "9"}}
    out = {e["manager"]: e["fieldsV1"] for e in mf.update(live, new, "second", "v1", T2, CM)}
    assert out == {"first": {"f:data": {}}, "second": {"f:data": {"f:a": {}}}}


def test_update_through_another_version_is_another_manager():
    """BuildManagerIdentifier keeps an Update's apiVersion: one manager writing through two versions has two
    entries (an Apply's version is not part of its identity)."""
    live = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    live["metadata"]["managedFields"] = mf.update(None, live, "m", "v1", T, CM)
    new = {"metadata": {"name": "c", "managedFields": live["metadata"]["managedFields"]}, "data": {"a": "1", "b": "2"}}
    out = mf.update(live, new, "m", "v2", T2, CM)
    assert [(e["manager"], e["apiVersion"], e["fieldsV1"]) for e in out] == [
        ("m", "v1", {"f:data": {".": {}, "f:a": {}}}), ("m", "v2", {"f:data": {"f:b": {}}})]


def test_update_without_changes_adds_no_entry():
    live = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    live["metadata"]["managedFields"] = mf.update(None, live, "first", "v1", T, CM)
    out = mf.update(live, dict(live), "other", "v1", T2, CM)
    assert [e["manager"] for e in out] == ["first"]


def test_update_with_cleared_managed_fields():
    live = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    live["metadata"]["managedFields"] = mf.update(None, live, "first", "v1", T, CM)
    new = {"metadata": {"name": "c", "managedFields": [{}]}, "data": {"a": "1"}}
    assert mf.update(live, new, "other", "v1", T2, CM) == []


def test_apply_creates_and_reapply_is_stable():
    cfg = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}
    obj = mf.apply(None, cfg, "kubectl", "v1", T, CM)
    assert obj["data"] == {"a": "1"}
    assert obj["metadata"]["managedFields"] == [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                                                 "time": T, "fieldsType": "FieldsV1",
                                                 "fieldsV1": {"f:data": {"f:a": {}}}}]
    again = mf.apply(obj, cfg, "kubectl", "v1", T2, CM)
    assert again["data"] == {"a": "1"} and len(again["metadata"]["managedFields"]) == 1


# (first manager's config, second manager's config, force, expected error message or None, expected data)
CONFLICTS = [
    ({"a": "1"}, {"a": "2"}, False, 'Apply failed with 1 conflict: conflict with "one": .data.a', None),
    ({"a": "1"}, {"a": "1"}, False, None, {"a": "1"}),  # same value: shared ownership, no conflict
    ({"a": "1"}, {"b": "2"}, False, None, {"a": "1", "b": "2"}),
    ({"a": "1"}, {"a": "2"}, True, None, {"a": "2"}),
    ({"a": "1", "b": "1"}, {"a": "2", "b": "2"}, False,
     'Apply failed with 2 conflicts: conflicts with "one":\n- .data.a\n- .data.b', None),
]


@pytest.mark.parametrize("first,second,force,message,data", CONFLICTS)
def test_apply_conflicts(first, second, force, message, data):
    obj = mf.apply(None, {"metadata": {"name": "c"}, "data": first}, "one", "v1", T, CM)
    cfg = {"metadata": {"name": "c"}, "data": second}
    if message:
        with pytest.raises(errors.StatusError) as info:
            mf.apply(obj, cfg, "two", "v1", T2, CM, force=force)
        assert info.value.code == 409 and info.value.reason == "Conflict"
        assert info.value.message == message
        assert info.value.details["causes"][0] == {"reason": "FieldManagerConflict",
                                                   "message": 'conflict with "one"', "field": ".data.a"}
        return
    out = mf.apply(obj, cfg, "two", "v1", T2, CM, force=force)
    assert out["data"] == data
    owners = {e["manager"]: e["fieldsV1"] for e in out["metadata"]["managedFields"]}
    if force:
        assert "one" not in owners  # lost its only field
        assert owners["two"] == {"f:data": {"f:a": {}}}


def test_conflict_with_update_manager_names_api_version_without_time():
    live = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    live["metadata"]["managedFields"] = mf.update(None, live, "kubectl-client-side-apply", "v1", T, CM)
    with pytest.raises(errors.StatusError) as info:
        mf.apply(live, {"metadata": {"name": "c"}, "data": {"a": "2"}}, "kubectl", "v1", T2, CM)
    # kube's manager identifier has no time (BuildManagerIdentifier), so neither has its message
    assert info.value.message == ('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" '
                                  'using v1: .data.a')
    assert info.value.details["causes"] == [{"reason": "FieldManagerConflict", "field": ".data.a",
                                             "message": 'conflict with "kubectl-client-side-apply" using v1'}]


def test_allowed_conflicts_from_last_applied_are_the_recorded_fields_still_live():
    last = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","b":"1"}}\n'
    live = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "annotations": {mf.LAST_APPLIED: last}}, "data": {"a": "1", "b": "2"}}
    # a still holds the recorded value; b was changed by someone else
    assert mf.allowed_conflicts_from_last_applied(live, "v1", CM) == {("f:data", "f:a")}
    assert mf.allowed_conflicts_from_last_applied(live, "apps/v1", CM) is None  # another version: no upgrade
    live["metadata"]["annotations"][mf.LAST_APPLIED] = "not json"
    assert mf.allowed_conflicts_from_last_applied(live, "v1", CM) is None


def test_apply_prunes_fields_it_no_longer_applies_unless_others_own_them():
    obj = mf.apply(None, {"metadata": {"name": "c"}, "data": {"a": "1", "b": "1"}}, "one", "v1", T, CM)
    obj = mf.apply(obj, {"metadata": {"name": "c"}, "data": {"b": "1"}}, "two", "v1", T, CM)
    obj = mf.apply(obj, {"metadata": {"name": "c"}, "data": {}}, "one", "v1", T2, CM)
    assert obj["data"] == {"b": "1"}  # a pruned; b kept because "two" co-owns it


def test_apply_merges_associative_lists_by_key():
    live = mf.apply(None, deployment("nginx:1"), "one", "apps/v1", T, DEPLOY)
    sidecar = deployment("nginx:1")
    sidecar["spec"]["template"]["spec"]["containers"] = [{"name": "side", "image": "busybox"}]
    del sidecar["spec"]["replicas"]
    out = mf.apply(live, sidecar, "two", "apps/v1", T2, DEPLOY)
    names = [c["name"] for c in out["spec"]["template"]["spec"]["containers"]]
    assert names == ["c", "side"]
    with pytest.raises(errors.StatusError) as info:
        mf.apply(out, deployment("nginx:2"), "two", "apps/v1", T2, DEPLOY)
    assert '.spec.template.spec.containers[name="c"].image' in info.value.message


def test_apply_removes_list_item_it_stopped_applying():
    cfg = deployment()
    cfg["spec"]["template"]["spec"]["containers"].append({"name": "x", "image": "y"})
    live = mf.apply(None, cfg, "one", "apps/v1", T, DEPLOY)
    out = mf.apply(live, deployment(), "one", "apps/v1", T2, DEPLOY)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["c"]


def test_entries_sorted_apply_first():
    live = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    live["metadata"]["managedFields"] = mf.update(None, live, "zz-update", "v1", T, CM)
    out = mf.apply(live, {"metadata": {"name": "c"}, "data": {"b": "1"}}, "applier", "v1", T2, CM)
    assert [(e["manager"], e["operation"]) for e in out["metadata"]["managedFields"]] == [
        ("applier", "Apply"), ("zz-update", "Update")]


def test_status_update_keeps_the_spec_owners_fields():
    created = deployment()
    created["metadata"]["managedFields"] = mf.update(None, created, "kubectl-create", "apps/v1", T, DEPLOY, "",
                                                     ("status",))
    updated = {**created, "status": {"replicas": 1}}
    fields = mf.update(created, updated, "kube-controller-manager", "apps/v1", T2, DEPLOY, "status", ("spec",))
    owners = {e["manager"]: e for e in fields}
    assert "f:spec" in owners["kubectl-create"]["fieldsV1"]  # spec is outside /status, still kubectl-create's
    assert owners["kube-controller-manager"]["fieldsV1"] == {"f:status": {"f:replicas": {}}}
    assert owners["kube-controller-manager"]["subresource"] == "status"


def test_update_owns_only_what_the_request_set_when_told():
    requested = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    admitted = {"metadata": {"name": "c", "labels": {"added-by": "admission"}}, "data": {"a": "1"}}
    [entry] = mf.update(None, admitted, "kubectl-create", "v1", T, CM,
                        only=mf.flatten(requested, CM)[0])
    assert entry["fieldsV1"] == {"f:data": {".": {}, "f:a": {}}}  # the label admission added is nobody's
    [entry] = mf.update(None, admitted, "kubectl-create", "v1", T, CM)
    assert "f:metadata" in entry["fieldsV1"]  # without ``only`` the admitted object is the request's


def test_typed_update_owns_the_nodes_the_zero_object_lacks():
    from kapi.k8sproto import goshape
    message = goshape.message_for({"apiVersion": "apps/v1", "kind": "Deployment"})
    new = deployment()
    new["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}
    [entry] = mf.update(goshape.shaped({}, message), goshape.shaped(new, message), "m", "apps/v1", T, DEPLOY,
                        typed=True)
    spec = entry["fieldsV1"]["f:spec"]
    assert "." not in spec and "." not in spec["f:strategy"] and "." not in spec["f:template"]["f:spec"]["f:containers"]
    assert spec["f:strategy"]["f:rollingUpdate"] == {".": {}, "f:maxSurge": {}}  # a pointer struct appeared
    assert spec["f:template"]["f:metadata"]["f:labels"] == {".": {}, "f:app": {}}
    assert spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"c"}'] == {
        ".": {}, "f:image": {}, "f:name": {}, "f:resources": {}}  # the new item's struct fields too
    # untyped (custom resources), struct nodes stay non-members
    [entry] = mf.update(None, new, "m", "apps/v1", T, DEPLOY)
    assert entry["fieldsV1"]["f:spec"]["f:strategy"]["f:rollingUpdate"] == {"f:maxSurge": {}}


def test_undeclared_fields_are_named_as_structured_merge_diff_paths() -> None:
    """Fields a built-in schema does not declare, with list items by key, set value or index; maps are open."""
    t = mf.Types(patching.schema_for("apps", "v1", "Deployment"), patching._definitions())
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "labels": {"any": "x"}},
              "spec": {"template": {"spec": {"containers": [{"name": "c", "typo": 1}], "nodeAffinity": {},
                                             "tolerations": [{"key": "k", "bad": True}]}}}}
    assert [mf.path_string(p) for p in mf.undeclared(config, t)] == [
        '.spec.template.spec.containers[name="c"].typo', ".spec.template.spec.nodeAffinity",
        ".spec.template.spec.tolerations[0].bad"]
    assert mf.undeclared({"apiVersion": "v1", "metadata": {"annotations": {"a": "b"}}}, t) == []
