"""kapi.strategy: BeforeCreate/BeforeUpdate system fields and ObjectMeta validation messages."""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest

from kapi import errors, strategy
from kapi.resources import REGISTRY, Resource

NOW = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
NAMESPACES = REGISTRY.get("", "v1", "namespaces")
CONFIGMAPS = REGISTRY.get("", "v1", "configmaps")
PODS = REGISTRY.get("", "v1", "pods")
SERVICES = REGISTRY.get("", "v1", "services")
SECRETS = REGISTRY.get("", "v1", "secrets")
ROLES = REGISTRY.get("rbac.authorization.k8s.io", "v1", "roles")
CLUSTERROLES = REGISTRY.get("rbac.authorization.k8s.io", "v1", "clusterroles")

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
    "is '[a-z]([-a-z0-9]*[a-z0-9])?')")
QUALIFIED_NAME_PART = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def test_create_sets_system_fields() -> None:
    obj = {"metadata": {"name": "app", "resourceVersion": "12", "selfLink": "/x", "deletionTimestamp": "t",
                        "managedFields": [{"manager": "kubectl"}], "uid": "client-uid"}, "data": {"a": "b"}}
    out = strategy.prepare_for_create(obj, CONFIGMAPS, "demo", NOW)
    meta = out["metadata"]
    assert meta["namespace"] == "demo"
    assert meta["creationTimestamp"] == "2024-05-06T07:08:09Z"
    assert uuid.UUID(meta["uid"]).version == 4 and meta["uid"] != "client-uid"
    assert "resourceVersion" not in meta and "selfLink" not in meta and "deletionTimestamp" not in meta
    assert meta["managedFields"] == [{"manager": "kubectl"}]
    assert "generation" not in meta  # ConfigMaps have no spec
    assert out["apiVersion"] == "v1" and out["kind"] == "ConfigMap"
    assert obj["metadata"]["resourceVersion"] == "12"  # the input is not modified


def test_create_timestamp_is_utc() -> None:
    local = NOW.astimezone(timezone(timedelta(hours=5)))
    out = strategy.prepare_for_create({"metadata": {"name": "a"}}, CONFIGMAPS, "d", local)
    assert out["metadata"]["creationTimestamp"] == "2024-05-06T07:08:09Z"


def test_generate_name() -> None:
    out = strategy.prepare_for_create({"metadata": {"generateName": "web-"}}, CONFIGMAPS, "d", NOW,
                                      rng=random.Random(7))
    assert re.fullmatch(r"web-[bcdfghjklmnpqrstvwxz2456789]{5}", out["metadata"]["name"])
    again = strategy.prepare_for_create({"metadata": {"generateName": "web-"}}, CONFIGMAPS, "d", NOW,
                                        rng=random.Random(7))
    assert again["metadata"]["name"] == out["metadata"]["name"]  # the random source is injectable
    named = strategy.prepare_for_create({"metadata": {"generateName": "web-", "name": "fixed"}}, CONFIGMAPS, "d", NOW)
    assert named["metadata"]["name"] == "fixed"
    long = strategy.prepare_for_create({"metadata": {"generateName": "x" * 80}}, CONFIGMAPS, "d", NOW)
    assert len(long["metadata"]["name"]) == 63


def test_create_namespace_rules() -> None:
    out = strategy.prepare_for_create({"metadata": {"name": "n", "namespace": "ignored"}}, NAMESPACES, "", NOW)
    assert "namespace" not in out["metadata"]
    assert out["spec"] == {"finalizers": ["kubernetes"]}
    assert out["status"] == {"phase": "Active"}
    assert out["metadata"]["labels"] == {"kubernetes.io/metadata.name": "n"}
    assert "generation" not in out["metadata"]
    keep = strategy.prepare_for_create({"metadata": {"name": "n"}, "spec": {"finalizers": ["a.io/x"]},
                                        "status": {"phase": "Terminating"}}, NAMESPACES, "", NOW)
    assert keep["spec"]["finalizers"] == ["a.io/x", "kubernetes"]
    assert keep["status"] == {"phase": "Active"}
    with pytest.raises(errors.StatusError) as exc:
        strategy.prepare_for_create({"metadata": {"name": "a", "namespace": "other"}}, CONFIGMAPS, "demo", NOW)
    assert exc.value.code == 400
    assert exc.value.message == ("the namespace of the provided object does not match the namespace sent on the "
                                 "request")


def test_create_generation_and_status_per_kind() -> None:
    pod = strategy.prepare_for_create({"metadata": {"name": "p"}, "spec": {}, "status": {"phase": "Running"}},
                                      PODS, "d", NOW)
    assert pod["metadata"]["generation"] == 1 and pod["status"] == {"phase": "Pending"}
    svc = strategy.prepare_for_create({"metadata": {"name": "s"}, "spec": {}}, SERVICES, "d", NOW)
    assert "generation" not in svc["metadata"] and svc["status"] == {"loadBalancer": {}}
    secret = strategy.prepare_for_create({"metadata": {"name": "s"}}, SECRETS, "d", NOW)
    assert secret["type"] == "Opaque"


@pytest.mark.parametrize("body", [[], "x", {"metadata": "x"}])
def test_create_rejects_non_objects(body: object) -> None:
    with pytest.raises(errors.StatusError) as exc:
        strategy.prepare_for_create(body, CONFIGMAPS, "d", NOW)  # type: ignore[arg-type]
    assert exc.value.code == 400


def _stored_pod() -> dict:
    return strategy.prepare_for_create({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}},
                                       PODS, "d", NOW) | {}


def test_update_keeps_system_fields_and_bumps_generation() -> None:
    old = _stored_pod()
    old["metadata"]["resourceVersion"] = "5"
    old["metadata"]["deletionTimestamp"] = "2024-05-06T08:00:00Z"
    new = {"metadata": {"name": "p", "creationTimestamp": "1999-01-01T00:00:00Z", "generation": 40},
           "spec": {"containers": [{"name": "b"}]}, "status": {"phase": "Running"}}
    out = strategy.prepare_for_update(new, old, PODS)
    meta = out["metadata"]
    assert meta["uid"] == old["metadata"]["uid"]
    assert meta["creationTimestamp"] == "2024-05-06T07:08:09Z"
    assert meta["deletionTimestamp"] == "2024-05-06T08:00:00Z"
    assert meta["namespace"] == "d" and meta["resourceVersion"] == "5"
    assert meta["generation"] == 2
    assert out["status"] == {"phase": "Pending"}  # main-resource updates keep the stored status
    same = strategy.prepare_for_update({"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": old["spec"]},
                                       old, PODS)
    assert same["metadata"]["generation"] == 1  # spec unchanged: no bump
    status = strategy.prepare_for_update({"metadata": {"name": "p", "labels": {"x": "y"}}, "spec": {},
                                          "status": {"phase": "Running"}}, old, PODS, subresource="status")
    assert status["status"] == {"phase": "Running"} and status["spec"] == old["spec"]
    assert "labels" not in status["metadata"] and status["metadata"]["generation"] == 1


def test_update_namespace_keeps_finalizers_and_status() -> None:
    old = strategy.prepare_for_create({"metadata": {"name": "n"}}, NAMESPACES, "", NOW)
    out = strategy.prepare_for_update({"metadata": {"name": "n"}, "spec": {"finalizers": []},
                                       "status": {"phase": "Terminating"}}, old, NAMESPACES)
    assert out["spec"]["finalizers"] == ["kubernetes"] and out["status"] == {"phase": "Active"}
    final = strategy.prepare_for_update({"metadata": {"name": "n"}, "spec": {"finalizers": []}}, old, NAMESPACES,
                                        subresource="finalize")
    assert final["spec"]["finalizers"] == [] and final["status"] == {"phase": "Active"}


@pytest.mark.parametrize(("field", "value"), [
    ("name", "other"),
    ("namespace", "elsewhere"),
    ("uid", "not-the-same"),
])
def test_update_immutable_fields(field: str, value: str) -> None:
    old = _stored_pod()
    new = strategy.prepare_for_update({"metadata": {**old["metadata"], field: value}, "spec": old["spec"]}, old,
                                      PODS)
    causes = strategy.validate_object_meta(new, PODS, create=False, old=old)
    assert causes == [errors.Cause("FieldValueInvalid", f'Invalid value: "{value}": field is immutable',
                                   f"metadata.{field}")]


def test_update_no_new_finalizers_while_deleting() -> None:
    old = _stored_pod()
    old["metadata"]["deletionTimestamp"] = "2024-05-06T08:00:00Z"
    old["metadata"]["finalizers"] = ["a.io/x"]
    new = strategy.prepare_for_update({"metadata": {**old["metadata"], "finalizers": ["a.io/x", "b.io/y"]},
                                       "spec": old["spec"]}, old, PODS)
    causes = strategy.validate_object_meta(new, PODS, create=False, old=old)
    assert [c.message for c in causes] == [
        'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers '
        '[]string{"b.io/y"}']


def _meta_causes(resource: Resource, meta: dict) -> list[tuple[str, str, str]]:
    return [(c.type, c.field, c.message) for c in strategy.validate_object_meta({"metadata": meta}, resource, True)]


NAME_CASES = [
    # (resource, metadata, expected causes)
    (CONFIGMAPS, {"name": "app.example-1", "namespace": "d"}, []),
    (CONFIGMAPS, {"namespace": "d"},
     [("FieldValueRequired", "metadata.name", "Required value: name or generateName is required")]),
    (CONFIGMAPS, {"name": "Bad_Name", "namespace": "d"},
     [("FieldValueInvalid", "metadata.name", f'Invalid value: "Bad_Name": {SUBDOMAIN_MSG}')]),
    (CONFIGMAPS, {"name": "a" * 254, "namespace": "d"},
     [("FieldValueInvalid", "metadata.name", f'Invalid value: "{"a" * 254}": must be no more than 253 characters')]),
    (CONFIGMAPS, {"name": "a" * 253, "namespace": "d"}, []),
    (CONFIGMAPS, {"name": "a"},
     [("FieldValueRequired", "metadata.namespace", "Required value")]),
    (CONFIGMAPS, {"name": "a", "namespace": "Bad"},
     [("FieldValueInvalid", "metadata.namespace", f'Invalid value: "Bad": {LABEL_MSG}')]),
    (CONFIGMAPS, {"generateName": "web-", "namespace": "d", "name": "web-abcde"}, []),
    (CONFIGMAPS, {"generateName": "Web-", "namespace": "d", "name": "web-abcde"},
     [("FieldValueInvalid", "metadata.generateName", f'Invalid value: "Web-": {SUBDOMAIN_MSG}')]),
    (NAMESPACES, {"name": "a.b"}, [("FieldValueInvalid", "metadata.name", f'Invalid value: "a.b": {LABEL_MSG}')]),
    (NAMESPACES, {"name": "a" * 64},
     [("FieldValueInvalid", "metadata.name", f'Invalid value: "{"a" * 64}": must be no more than 63 characters')]),
    (NAMESPACES, {"name": "ok", "namespace": "x"},
     [("FieldValueForbidden", "metadata.namespace", "Forbidden: not allowed on this type")]),
    (SERVICES, {"name": "1abc", "namespace": "d"},
     [("FieldValueInvalid", "metadata.name", f'Invalid value: "1abc": {DNS1035_MSG}')]),
    (SERVICES, {"name": "web", "namespace": "d"}, []),
    (ROLES, {"name": "system:Admin_role", "namespace": "d"}, []),
    (ROLES, {"name": "a/b", "namespace": "d"},
     [("FieldValueInvalid", "metadata.name", "Invalid value: \"a/b\": may not contain '/'")]),
    (CLUSTERROLES, {"name": ".."}, [("FieldValueInvalid", "metadata.name", "Invalid value: \"..\": may not be '..'")]),
    (CLUSTERROLES, {"name": "50%"},
     [("FieldValueInvalid", "metadata.name", "Invalid value: \"50%\": may not contain '%'")]),
    (CONFIGMAPS, {"name": "a", "namespace": "d", "generation": -1},
     [("FieldValueInvalid", "metadata.generation", "Invalid value: -1: must be greater than or equal to 0")]),
]


@pytest.mark.parametrize(("resource", "meta", "expected"), NAME_CASES)
def test_name_validation(resource: Resource, meta: dict, expected: list) -> None:
    assert _meta_causes(resource, meta) == expected


LABEL_CASES = [
    ({"app": "web", "example.com/tier": "front_end.1", "empty": ""}, []),
    ({"a/b/c": "x"}, [("metadata.labels", 'Invalid value: "a/b/c": a qualified name ' + QUALIFIED_NAME_PART
                       + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]),
    ({"/x": "v"}, [("metadata.labels", 'Invalid value: "/x": prefix part must be non-empty')]),
    ({"Example.com/x": "v"}, [("metadata.labels", 'Invalid value: "Example.com/x": prefix part ' + SUBDOMAIN_MSG)]),
    ({"k" * 64: "v"}, [("metadata.labels", f'Invalid value: "{"k" * 64}": name part must be no more than 63 '
                        "characters")]),
    ({"x/": "v"}, [("metadata.labels", 'Invalid value: "x/": name part must be non-empty'),
                   ("metadata.labels", 'Invalid value: "x/": name part ' + QUALIFIED_NAME_PART)]),
    ({"-x": "v"}, [("metadata.labels", 'Invalid value: "-x": name part ' + QUALIFIED_NAME_PART)]),
    ({"k": "v" * 64}, [("metadata.labels", f'Invalid value: "{"v" * 64}": must be no more than 63 characters')]),
    ({"k": "a b"}, [("metadata.labels", 'Invalid value: "a b": a valid label must be an empty string or consist of '
                     "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
                     "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
                     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]),
]


@pytest.mark.parametrize(("labels", "expected"), LABEL_CASES)
def test_label_validation(labels: dict, expected: list) -> None:
    causes = strategy.validate_object_meta({"metadata": {"name": "a", "namespace": "d", "labels": labels}},
                                           CONFIGMAPS, True)
    assert [(c.field, c.message) for c in causes] == expected
    assert all(c.type == "FieldValueInvalid" for c in causes)


def test_annotation_validation() -> None:
    ok = {"metadata": {"name": "a", "namespace": "d", "annotations": {"Example.com/Key": "any value at all"}}}
    assert strategy.validate_object_meta(ok, CONFIGMAPS, True) == []  # keys are checked lower-cased
    big = {"metadata": {"name": "a", "namespace": "d", "annotations": {"k": "v" * (256 * 1024)}}}
    assert strategy.validate_object_meta(big, CONFIGMAPS, True) == [
        errors.Cause("FieldValueTooLong", "Too long: may not be more than 262144 bytes", "metadata.annotations")]
    bad = {"metadata": {"name": "a", "namespace": "d", "annotations": {"a b": "v"}}}
    assert [c.field for c in strategy.validate_object_meta(bad, CONFIGMAPS, True)] == ["metadata.annotations"]


def test_owner_references_and_finalizers() -> None:
    meta = {"name": "a", "namespace": "d", "finalizers": ["ok.io/f", "bad finalizer"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "", "uid": "u"}]}
    causes = _meta_causes(CONFIGMAPS, meta)
    assert ("FieldValueInvalid", "metadata.ownerReferences.name", 'Invalid value: "": must not be empty') in causes
    assert any(c[1] == "metadata.finalizers" and c[2].startswith('Invalid value: "bad finalizer"') for c in causes)


def test_invalid_status_message() -> None:
    causes = strategy.validate_object_meta({"metadata": {"name": "Bad_Name", "namespace": "d"}}, CONFIGMAPS, True)
    err = errors.invalid("ConfigMap", "Bad_Name", causes)
    assert err.code == 422
    assert err.message == f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}'
