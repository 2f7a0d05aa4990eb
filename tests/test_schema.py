"""kapi.schema: strict schema validation, unknown fields and fieldValidation."""

from __future__ import annotations

import copy
import time

import pytest

from kapi import errors, schema
from kapi.errors import Cause

POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "demo", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
                             "resources": {"limits": {"cpu": "500m", "memory": 128974848}},
                             "env": [{"name": "A", "value": "b"}]}],
             "restartPolicy": "Always"},
}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "demo"},
             "data": {"key": "value"}, "binaryData": {"bin": "AAEC"}, "immutable": False}


def test_valid_pod() -> None:
    obj = copy.deepcopy(POD)
    assert schema.validate(obj, "", "v1", "Pod") == schema.Result()
    assert obj == POD


def test_valid_configmap() -> None:
    obj = copy.deepcopy(CONFIGMAP)
    assert schema.validate(obj, "", "v1", "ConfigMap") == schema.Result()


def test_pod_wrong_types_and_missing_required() -> None:
    obj = copy.deepcopy(POD)
    obj["spec"]["containers"][0]["image"] = 123
    obj["spec"]["containers"][0]["ports"][0]["containerPort"] = "eighty"
    obj["spec"]["containers"][0]["resources"]["limits"]["cpu"] = True
    del obj["spec"]["containers"][0]["name"]
    result = schema.validate(obj, "", "v1", "Pod")
    assert result.unknown == []
    assert result.causes == [
        Cause("FieldValueTypeInvalid",
              'Invalid value: "integer": spec.containers[0].image in body must be of type string: "integer"',
              "spec.containers[0].image"),
        Cause("FieldValueTypeInvalid", 'Invalid value: "string": spec.containers[0].ports[0].containerPort in body '
              'must be of type integer: "string"', "spec.containers[0].ports[0].containerPort"),
        Cause("FieldValueTypeInvalid", 'Invalid value: "boolean": spec.containers[0].resources.limits[cpu] in body '
              'must be of type string or number: "boolean"', "spec.containers[0].resources.limits[cpu]"),
        Cause("FieldValueRequired", "Required value", "spec.containers[0].name"),
    ]


def test_configmap_bad_values_and_enum() -> None:
    result = schema.validate({"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"labels": {"a": 1}},
                              "data": {"k": 1}}, "", "v1", "ConfigMap")
    assert [(c.type, c.field) for c in result.causes] == [
        ("FieldValueNotSupported", "apiVersion"),
        ("FieldValueTypeInvalid", "data[k]"),
        ("FieldValueTypeInvalid", "metadata.labels[a]"),
    ]
    assert result.causes[0].message == 'Unsupported value: "v2": supported values: "v1"'


def test_unknown_fields_are_reported_and_dropped() -> None:
    obj = copy.deepcopy(POD)
    obj["spec"]["foo"] = 1
    obj["spec"]["containers"][0]["bar"] = {"x": 1}
    obj["metadata"]["extra"] = "y"
    obj["top"] = True
    result = schema.validate(obj, "", "v1", "Pod")
    assert result.causes == []
    assert result.unknown == ["metadata.extra", "spec.containers[0].bar", "spec.foo", "top"]
    assert obj == POD


def test_rbac_and_unknown_kind() -> None:
    result = schema.validate({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                              "metadata": {"name": "b"}}, "rbac.authorization.k8s.io", "v1", "RoleBinding")
    assert result.causes == [Cause("FieldValueRequired", "Required value", "roleRef")]
    assert schema.validate({"anything": 1}, "example.com", "v1", "Widget") == schema.Result()
    assert schema.has_schema("", "v1", "Event") and schema.has_schema("events.k8s.io", "v1", "Event")
    assert not schema.has_schema("example.com", "v1", "Widget")


@pytest.mark.parametrize(("directive", "warnings", "error"), [
    ("", ['unknown field "spec.foo"', 'unknown field "spec.containers[0].bar"'], None),
    ("Warn", ['unknown field "spec.foo"', 'unknown field "spec.containers[0].bar"'], None),
    ("Ignore", [], None),
    ("Strict", None, (400, "BadRequest",
                      'strict decoding error: unknown field "spec.foo", unknown field "spec.containers[0].bar"')),
    ("Loud", None, (422, "Invalid", 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
                    '"Loud": supported values: "Ignore", "Strict", "Warn"')),
])
def test_field_validation(directive: str, warnings: list[str] | None, error: tuple | None) -> None:
    unknown = ["spec.foo", "spec.containers[0].bar"]
    if error is None:
        assert schema.apply_field_validation(unknown, directive) == warnings
    else:
        with pytest.raises(errors.StatusError) as exc:
            schema.apply_field_validation(unknown, directive)
        assert (exc.value.code, exc.value.reason, exc.value.message) == error


def test_single_unknown_field_strict() -> None:
    with pytest.raises(errors.StatusError) as exc:
        schema.apply_field_validation(["spec.foo"], "Strict")
    assert exc.value.message == 'strict decoding error: unknown field "spec.foo"'
    with pytest.raises(errors.StatusError) as exc:
        schema.apply_field_validation(["spec.foo"], "Strict", kind="Role", version="v1")
    assert exc.value.message == 'Role in version "v1" cannot be handled as a Role: strict decoding error: unknown ' \
        'field "spec.foo"'
    assert schema.apply_field_validation([], "Strict") == []


def test_validation_is_fast() -> None:
    schema.validate(copy.deepcopy(POD), "", "v1", "Pod")  # compile once
    start = time.perf_counter()
    for _ in range(100):
        schema.validate(copy.deepcopy(POD), "", "v1", "Pod")
    per_pod = (time.perf_counter() - start) / 100
    assert per_pod < 0.005, f"{per_pod * 1e3:.2f} ms per Pod"


def test_preload_and_lean_schemas_keep_property_names() -> None:
    assert schema.preload([("", "v1", "Pod"), ("", "v1", "ConfigMap"), ("example.com", "v1", "Widget")]) == 2
    # Event has a property named "note"/"reason" and CRD-like kinds have "description"/"format" properties:
    # leaning the schema must drop the keywords, never a property of that name.
    props = schema.top_level_fields("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    assert {"spec", "status", "metadata"} <= props
    result = schema.validate({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                              "metadata": {"name": "w.example.com"},
                              "spec": {"group": "example.com", "names": {"plural": "w", "kind": "W"}, "scope": "x",
                                       "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                                           "openAPIV3Schema": {"type": "object", "description": "d",
                                                               "format": "f", "bogus": 1}}}]}},
                             "apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    assert result.unknown == ["spec.versions[0].schema.openAPIV3Schema.bogus"]


# ------------------------------------------------------------ decodability: 400 like kube's decoder

QTY_ERR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@pytest.mark.parametrize(("text", "expected"), [
    ("AAEC", None), ("AA==", None), ("AAE=", None), ("", None), ("AAEC\nAAEC", None),
    ("a", "illegal base64 data at input byte 0"),
    ("AAE", "illegal base64 data at input byte 0"),
    ("not base64!", "illegal base64 data at input byte 3"),
    ("AA==x", "illegal base64 data at input byte 4"),
    ("A===", "illegal base64 data at input byte 1"),
    ("AA=", "illegal base64 data at input byte 3"),
    ("AA=B", "illegal base64 data at input byte 2"),
])
def test_base64_error(text: str, expected: str | None) -> None:
    assert schema.base64_error(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("1", None), ("500m", None), ("1.5Gi", None), ("+1e3", None), ("-2", None), (" 2 ", None), ("1E", None),
    ("abc", QTY_ERR), ("", QTY_ERR), ("1Zi", QTY_ERR), ("1.2.3", QTY_ERR), ("lots", QTY_ERR),
    ("1e", schema.QUANTITY_SUFFIX_ERROR), ("1mi", schema.QUANTITY_SUFFIX_ERROR),
    ("Mi", schema.QUANTITY_NUMERIC_ERROR),
])
def test_quantity_error(text: str, expected: str | None) -> None:
    assert schema.quantity_error(text) == expected


def _deployment(**spec: object) -> dict[str, object]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}, **spec}}


@pytest.mark.parametrize(("kind", "group", "obj", "message"), [
    ("Secret", "", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "abc!"}},
     'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'),
    ("ConfigMap", "", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
                       "binaryData": {"k": "%%%%"}},
     'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0'),
    ("Pod", "", {**POD, "spec": {"containers": [{"name": "c", "image": "i",
                                                   "resources": {"requests": {"memory": "lots"}}}]}},
     f'Pod in version "v1" cannot be handled as a Pod: {QTY_ERR}'),
    ("ResourceQuota", "", {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
                           "spec": {"hard": {"pods": "ten"}}},
     f'ResourceQuota in version "v1" cannot be handled as a ResourceQuota: {QTY_ERR}'),
    ("Deployment", "apps", _deployment(replicas=1e20),
     'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1e+20 into Go '
     "struct field DeploymentSpec.spec.replicas of type int32"),
    ("Deployment", "apps", _deployment(replicas=2 ** 31),
     'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 2147483648 into '
     "Go struct field DeploymentSpec.spec.replicas of type int32"),
    ("Deployment", "apps", _deployment(replicas=1.5),
     'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 1.5 into Go '
     "struct field DeploymentSpec.spec.replicas of type int32"),
    ("Pod", "", {**POD, "spec": {"containers": [{"name": "c", "image": "i"}], "activeDeadlineSeconds": 2 ** 63}},
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 9223372036854775808 into Go '
     "struct field PodSpec.spec.activeDeadlineSeconds of type int64"),
    ("Pod", "", {**POD, "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 8.5}]}]}},
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 8.5 into Go struct field '
     "ContainerPort.spec.containers.ports.containerPort of type int32"),
])
def test_undecodable_values_are_bad_requests(kind: str, group: str, obj: dict[str, object], message: str) -> None:
    result = schema.validate(copy.deepcopy(obj), group, "v1", kind)
    errs = [c for c in result.causes if c.type == "FieldValueTypeInvalid"]
    assert errs, result
    err = schema.decode_error(kind, "v1", errs[0])
    assert (err.code, err.reason, err.message) == (400, "BadRequest", message)


@pytest.mark.parametrize("replicas", [0, 3, 2 ** 31 - 1, -1])
def test_in_range_integers_decode(replicas: int) -> None:
    assert schema.validate(_deployment(replicas=replicas), "apps", "v1", "Deployment").causes == []


def test_nulls_decode_as_go_zero_values():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": None}, "annotations": None,
                                                           "creationTimestamp": None},
           "spec": {"containers": [{"name": None, "image": "x", "args": [None], "ports": [None],
                                    "resources": {"limits": {"cpu": None}}}], "volumes": None},
           "status": {"conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None, "reason": None}],
                      "startTime": None}}
    schema.nulls_to_zero(pod, "", "v1", "Pod")
    assert pod == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": ""}},
                   "spec": {"containers": [{"image": "x", "args": [""], "ports": [{}],
                                            "resources": {"limits": {"cpu": "0"}}}]},
                   "status": {"conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None}]}}


@pytest.mark.parametrize(("group", "kind", "obj", "expected"), [
    # *metav1.Time fields: null is nil, not encoded (omitempty)
    ("", "Pod", {"status": {"startTime": None}, "metadata": {"deletionTimestamp": None}},
     {"status": {}, "metadata": {}}),
    ("batch", "Job", {"status": {"startTime": None, "completionTime": None}}, {"status": {}}),
    ("batch", "CronJob", {"status": {"lastScheduleTime": None, "lastSuccessfulTime": None}}, {"status": {}}),
    ("", "Node", {"spec": {"taints": [{"key": "k", "effect": "NoSchedule", "timeAdded": None}]}},
     {"spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]}}),
    ("coordination.k8s.io", "Lease", {"spec": {"acquireTime": None, "renewTime": None}}, {"spec": {}}),
    ("", "ConfigMap", {"metadata": {"managedFields": [{"manager": "m", "time": None}]}},
     {"metadata": {"managedFields": [{"manager": "m"}]}}),
    # a metav1.Time struct (not a pointer) keeps its null: kube encodes the zero Time as null
    ("", "Pod", {"status": {"containerStatuses": [{"name": "c", "state": {"terminated": {"startedAt": None}}}]}},
     {"status": {"containerStatuses": [{"name": "c", "state": {"terminated": {"startedAt": None}}}]}}),
    ("", "Event", {"eventTime": None, "firstTimestamp": None}, {"eventTime": None, "firstTimestamp": None}),
])
def test_null_pointer_times_are_absent(group: str, kind: str, obj: dict, expected: dict) -> None:
    version = "v1"
    schema.nulls_to_zero(obj, group, version, kind)
    assert obj == expected


def _bodies() -> list[tuple[str, str, dict[str, object]]]:
    """Valid and invalid bodies of several kinds: every kind of error validate() reports."""
    bad_types = copy.deepcopy(POD)
    bad_types["spec"]["containers"][0]["image"] = 123
    unknown = copy.deepcopy(CONFIGMAP)
    unknown["spec"] = {"x": 1}
    unknown["metadata"]["labelz"] = {}
    enum = copy.deepcopy(POD)
    enum["spec"]["restartPolicy"] = "Sometimes"
    missing = copy.deepcopy(POD)
    del missing["spec"]["containers"][0]["name"]
    return [("", "Pod", copy.deepcopy(POD)), ("", "ConfigMap", copy.deepcopy(CONFIGMAP)),
            ("apps", "Deployment", _deployment(replicas=3)), ("", "Pod", bad_types), ("", "ConfigMap", unknown),
            ("", "Pod", enum), ("", "Pod", missing),
            ("apps", "Deployment", _deployment(replicas=True)), ("apps", "Deployment", _deployment(replicas=1.0)),
            ("apps", "Deployment", _deployment(replicas=10 ** 30)), ("apps", "Deployment", _deployment(replicas=None)),
            ("", "Secret", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "abc!"}}),
            ("", "Pod", {**POD, "spec": {"containers": [{"name": "c", "image": "i",
                                                          "resources": {"requests": {"memory": "lots"}}}]}})]


@pytest.mark.parametrize(("group", "kind", "obj"), _bodies())
def test_fast_check_agrees_with_the_full_walk(group: str, kind: str, obj: dict[str, object],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled pre-check passes exactly the bodies the jsonschema walk finds nothing in, and validate()
    answers the same with it as without it (same causes, same unknown fields, same pruned body)."""
    with_fast, without = copy.deepcopy(obj), copy.deepcopy(obj)
    fast = schema.fast_valid(copy.deepcopy(obj), group, "v1", kind)
    result = schema.validate(with_fast, group, "v1", kind)
    monkeypatch.setattr(schema, "fast_valid", lambda *args: False)
    walked = schema.validate(without, group, "v1", kind)
    assert (result, with_fast) == (walked, without)
    assert fast == (walked == schema.Result()), (fast, walked)


def test_fast_check_is_used_for_valid_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    """A valid body is never walked by jsonschema (that walk is ~100x the cost); an invalid one is."""
    schema.validate(copy.deepcopy(POD), "", "v1", "Pod")  # both validators built
    walks: list[object] = []
    validator = schema._validator("", "v1", "Pod")
    original = type(validator).iter_errors
    monkeypatch.setattr(type(validator), "iter_errors", lambda self, inst: walks.append(inst) or original(self, inst))
    assert schema.validate(copy.deepcopy(POD), "", "v1", "Pod") == schema.Result()
    assert walks == []
    bad = copy.deepcopy(POD)
    bad["spec"]["containers"][0]["image"] = 123
    assert schema.validate(bad, "", "v1", "Pod").causes
    assert walks and walks[0] is bad  # (oneOf branches are walked by nested calls)


def test_fast_check_without_a_schema_is_false() -> None:
    assert schema.fast_valid({"kind": "Widget"}, "example.com", "v1", "Widget") is False
