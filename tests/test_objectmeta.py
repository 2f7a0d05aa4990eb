"""kapi.objectmeta: ObjectMeta validation on create and update, kube's messages, table-driven."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kapi import errors, objectmeta, strategy
from kapi.resources import REGISTRY, Resource

NOW = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
NAMESPACES = REGISTRY.get("", "v1", "namespaces")
CONFIGMAPS = REGISTRY.get("", "v1", "configmaps")
PODS = REGISTRY.get("", "v1", "pods")
SERVICES = REGISTRY.get("", "v1", "services")
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



def _stored_pod() -> dict:
    return strategy.prepare_for_create({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}},
                                       PODS, "d", NOW) | {}


@pytest.mark.parametrize(("field", "value"), [
    ("name", "other"),
    ("namespace", "elsewhere"),
    ("uid", "not-the-same"),
])
def test_update_immutable_fields(field: str, value: str) -> None:
    old = _stored_pod()
    new = strategy.prepare_for_update({"metadata": {**old["metadata"], field: value}, "spec": old["spec"]}, old,
                                      PODS)
    causes = objectmeta.validate_object_meta(new, PODS, create=False, old=old)
    assert causes == [errors.Cause("FieldValueInvalid", f'Invalid value: "{value}": field is immutable',
                                   f"metadata.{field}")]


def test_update_no_new_finalizers_while_deleting() -> None:
    old = _stored_pod()
    old["metadata"]["deletionTimestamp"] = "2024-05-06T08:00:00Z"
    old["metadata"]["finalizers"] = ["a.io/x"]
    new = strategy.prepare_for_update({"metadata": {**old["metadata"], "finalizers": ["a.io/x", "b.io/y"]},
                                       "spec": old["spec"]}, old, PODS)
    causes = objectmeta.validate_object_meta(new, PODS, create=False, old=old)
    assert [c.message for c in causes] == [
        'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers '
        '[]string{"b.io/y"}']


def _meta_causes(resource: Resource, meta: dict) -> list[tuple[str, str, str]]:
    return [(c.type, c.field, c.message) for c in objectmeta.validate_object_meta({"metadata": meta}, resource, True)]


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
    (NAMESPACES, {"name": "a.b"},
     [("FieldValueInvalid", "metadata.name", 'Invalid value: "a.b": must not contain dots')]),
    (NAMESPACES, {"name": "a_b"}, [("FieldValueInvalid", "metadata.name", f'Invalid value: "a_b": {LABEL_MSG}')]),
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
    causes = objectmeta.validate_object_meta({"metadata": {"name": "a", "namespace": "d", "labels": labels}},
                                           CONFIGMAPS, True)
    assert [(c.field, c.message) for c in causes] == expected
    assert all(c.type == "FieldValueInvalid" for c in causes)


def test_annotation_validation() -> None:
    ok = {"metadata": {"name": "a", "namespace": "d", "annotations": {"Example.com/Key": "any value at all"}}}
    assert objectmeta.validate_object_meta(ok, CONFIGMAPS, True) == []  # keys are checked lower-cased
    big = {"metadata": {"name": "a", "namespace": "d", "annotations": {"k": "v" * (256 * 1024)}}}
    assert objectmeta.validate_object_meta(big, CONFIGMAPS, True) == [
        errors.Cause("FieldValueTooLong", "Too long: may not be more than 262144 bytes", "metadata.annotations")]
    bad = {"metadata": {"name": "a", "namespace": "d", "annotations": {"a b": "v"}}}
    assert [c.field for c in objectmeta.validate_object_meta(bad, CONFIGMAPS, True)] == ["metadata.annotations"]


def test_owner_references_and_finalizers() -> None:
    meta = {"name": "a", "namespace": "d", "finalizers": ["ok.io/f", "bad finalizer"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "", "uid": "u"}]}
    causes = _meta_causes(CONFIGMAPS, meta)
    assert ("FieldValueInvalid", "metadata.ownerReferences.name", 'Invalid value: "": must not be empty') in causes
    assert any(c[1] == "metadata.finalizers" and c[2].startswith('Invalid value: "bad finalizer"') for c in causes)


def test_invalid_status_message() -> None:
    causes = objectmeta.validate_object_meta({"metadata": {"name": "Bad_Name", "namespace": "d"}}, CONFIGMAPS, True)
    err = errors.invalid("ConfigMap", "Bad_Name", causes)
    assert err.code == 422
    assert err.message == f'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN_MSG}'


@pytest.mark.parametrize(("value", "shown"), [
    (None, '"null"'),  # nil (or a nil pointer) becomes the string "null", printed with %q
    ("a\"b\n", '"a\\"b\\n"'),  # %q escapes
    ("\x00\u2028é", '"\\x00\\u2028é"'),
    (True, "true"),
    (0, "0"),
    (-3, "-3"),
    (2.0, "2"),  # an integer field decoded as a JSON float prints as the integer it holds
    (0.5, "0.5"),
    (["a", "b"], '[]string{"a", "b"}'),  # %#v of a []string
])
def test_bad_values_print_as_field_error_body(value: object, shown: str) -> None:
    """field.Error.ErrorBody (apimachinery pkg/util/validation/field/errors.go): kube writes
    ``Invalid value: "null"`` for nil, not ``Invalid value: null``."""
    assert objectmeta.bad_value(value) == shown
    assert objectmeta.invalid("spec.x", value, "bad").message == f"Invalid value: {shown}: bad"


def test_invalid_message_lists_each_distinct_error_once() -> None:
    """ErrorList.ToAggregate drops repeated messages from the summary; NewInvalid keeps every cause."""
    cause = objectmeta.required("spec.x")
    err = errors.invalid("ConfigMap", "c", [cause, cause, objectmeta.required("spec.y")])
    assert err.message == 'ConfigMap "c" is invalid: [spec.x: Required value, spec.y: Required value]'
    assert len(err.details["causes"]) == 3
    once = errors.invalid("ConfigMap", "c", [cause, cause])
    assert once.message == 'ConfigMap "c" is invalid: spec.x: Required value'
