"""The typed conversion after a strategic merge patch (services/gateway/smptypes.py): kube's 422 texts."""

import copy
from types import SimpleNamespace

import pytest

from kapi import errors
from kapi.gofmt import go_float, go_json_v
from kapi.k8sproto import decoder
from services.gateway import negotiation, smptypes
from services.gateway.handlers.patch import apply

POD = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "valid-pod", "namespace": "default", "labels": {"name": "valid-pod"},
                    "creationTimestamp": "2024-05-01T10:00:00Z"},
       "spec": {"containers": [{"name": "c", "image": "nginx",
                                "resources": {"limits": {"cpu": "1", "memory": "512Mi"}}}]},
       "status": {"phase": "Pending"}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                       "template": {"metadata": {"labels": {"a": "b"}}, "spec": POD["spec"]}}}


def _scope(group: str, version: str, kind: str, resource: str) -> SimpleNamespace:
    return SimpleNamespace(resource=SimpleNamespace(group=group, version=version, kind=kind, resource=resource))


POD_SCOPE = _scope("", "v1", "Pod", "pods")


def _smp(current, patch, scope=POD_SCOPE):
    """The Status kapi answers for a strategic merge patch, or None when it applies."""
    try:
        apply(negotiation.STRATEGIC_MERGE_PATCH, copy.deepcopy(current), patch, scope)
    except errors.StatusError as err:
        return err.code, err.status()
    return None


def _detail(obj, group="", version="v1", kind="Pod"):
    return smptypes.conversion_error(obj, decoder.schema().lookup(group, version, kind))


# ----------------------------------------------------------------------------------- the Status, end to end

def test_labels_as_string_is_kubes_422():
    code, status = _smp(POD, {"metadata": {"labels": "invalid"}})
    assert code == 422
    assert status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": ' "" is invalid: patch: Invalid value: "map[metadata:map[labels:invalid]]": '
                   "cannot restore map from string",
        "reason": "Invalid",
        "details": {"causes": [{"reason": "FieldValueInvalid",
                                "message": 'Invalid value: "map[metadata:map[labels:invalid]]": '
                                           "cannot restore map from string",
                                "field": "patch"}]},
        "code": 422}


def test_containers_as_object():
    code, status = _smp(POD, {"spec": {"containers": {"a": 1}}})
    assert code == 422
    assert status["message"] == (' "" is invalid: patch: Invalid value: "map[spec:map[containers:map[a:1]]]": '
                                 "cannot restore slice from map")
    assert status["details"] == {"causes": [{"reason": "FieldValueInvalid", "field": "patch", "message":
                                             'Invalid value: "map[spec:map[containers:map[a:1]]]": '
                                             "cannot restore slice from map"}]}


def test_replicas_as_string_on_a_deployment():
    code, status = _smp(DEPLOYMENT, {"spec": {"replicas": "3"}}, _scope("apps", "v1", "Deployment", "deployments"))
    assert code == 422
    assert status["message"] == ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:3]]": ' \
                                "unrecognized type: int32"
    assert status["details"]["causes"][0]["message"] == \
        'Invalid value: "map[spec:map[replicas:3]]": unrecognized type: int32'


def test_bool_into_a_string_field():
    code, status = _smp(POD, {"spec": {"hostname": True}})
    assert code == 422
    assert status["message"] == ' "" is invalid: patch: Invalid value: "map[spec:map[hostname:true]]": ' \
                                "unrecognized type: string"


def test_bool_into_a_quantity():
    patch = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": True}}}]}}
    code, status = _smp(POD, patch)
    assert code == 422
    assert status["message"] == (
        ' "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c resources:map[limits:'
        'map[cpu:true]]]]]]": quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def test_a_number_into_a_quantity_converts():
    patch = {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": 2, "memory": 1.5}}}]}}
    assert _smp(POD, patch) is None


def test_a_good_patch_applies():
    assert _smp(POD, {"metadata": {"labels": {"x": "y"}}, "spec": {"containers": [{"name": "c", "image": "n2"}]}}) \
        is None
    assert _smp(POD, {"metadata": {"labels": None}, "spec": {"activeDeadlineSeconds": None}}) is None


def test_json_and_merge_patches_are_not_converted_here():
    for content_type, patch in ((negotiation.MERGE_PATCH, {"metadata": {"labels": "invalid"}}),
                                (negotiation.JSON_PATCH, [{"op": "replace", "path": "/metadata/labels",
                                                           "value": "invalid"}])):
        out = apply(content_type, copy.deepcopy(POD), patch, POD_SCOPE)
        assert out["metadata"]["labels"] == "invalid"


def test_kinds_without_a_go_struct_and_the_scale_view_are_not_converted():
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"n": 1}}
    out = apply(negotiation.STRATEGIC_MERGE_PATCH, widget, {"metadata": {"labels": "x"}},
                _scope("example.com", "v1", "Widget", "widgets"))
    assert out["metadata"]["labels"] == "x"
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"}, "spec": {"replicas": 1}}
    out = apply(negotiation.STRATEGIC_MERGE_PATCH, scale, {"spec": {"replicas": "3"}},
                _scope("apps", "v1", "Deployment", "deployments"), merge_schema=False)
    assert out["spec"]["replicas"] == "3"


def test_a_stored_shape_that_fails_already_is_not_the_patchs_doing():
    odd = copy.deepcopy(POD)
    odd["spec"]["hostname"] = 5  # not a shape kapi stores; the guard keeps the patch path as before
    assert _smp(odd, {"metadata": {"labels": {"x": "y"}}}) is None
    with pytest.raises(errors.StatusError):
        smptypes.check_patched({**POD, "spec": {"hostname": 5}}, {"spec": {"hostname": 5}}, POD, "", "v1", "Pod")


# ------------------------------------------------------------------------------------------- converter texts

def test_scalar_conversions():
    assert _detail({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "protocol": 6}]}]}}) == \
        "cannot convert int64 to v1.Protocol"
    assert _detail({"spec": {"nodeName": 7}}) == "cannot convert int64 to string"
    assert _detail({"spec": {"priority": 1.5}}) == "cannot convert float64 to int32"
    assert _detail({"spec": {"priority": 2.0}}) is None  # a whole float64 converts
    assert _detail({"spec": {"hostNetwork": "yes"}}) == "unrecognized type: bool"
    assert _detail({"spec": {"hostNetwork": 1}}) == "unrecognized type: bool"
    assert _detail({"spec": {"terminationGracePeriodSeconds": [1]}}) == "unrecognized type: int64"
    assert _detail({"spec": {"nodeName": 1.5}}) == "unrecognized type: string"
    assert _detail({"kind": 5}) == "cannot convert int64 to string"


def test_container_kinds():
    assert _detail({"spec": {"nodeSelector": ["a"]}}) == "cannot restore map from slice"
    assert _detail({"spec": {"nodeSelector": {"a": 1}}}) == "cannot convert int64 to string"
    assert _detail({"spec": {"tolerations": "x"}}) == "cannot restore slice from string"
    assert _detail({"spec": {"securityContext": 1.5}}) == "cannot restore struct from: float64"
    assert _detail({"spec": {"containers": [1]}}) == "cannot restore struct from: int64"
    assert _detail({"spec": {"containers": [None, {"name": "c"}]}}) is None  # null is the zero value
    assert _detail({"spec": "x"}) == "cannot restore struct from: string"


def test_go_declaration_order():
    # protobuf numbers put containers (2) before initContainers (20); Go declares initContainers first
    assert _detail({"spec": {"containers": "a", "initContainers": 1}}) == "cannot restore slice from int64"
    assert _detail({"spec": {"volumes": True, "initContainers": 1}}) == "cannot restore slice from bool"
    assert _detail({"metadata": {"labels": "x"}, "spec": "y"}) == "cannot restore map from string"


def test_int_or_string():
    def probe(port):
        return {"spec": {"containers": [{"name": "c", "livenessProbe": {"httpGet": {"port": port}}}]}}

    assert _detail(probe("http")) is None
    assert _detail(probe(8080)) is None
    assert _detail(probe(True)) == "json: cannot unmarshal bool into Go value of type int32"
    assert _detail(probe({"a": 1})) == "json: cannot unmarshal object into Go value of type int32"
    assert _detail(probe([1])) == "json: cannot unmarshal array into Go value of type int32"
    assert _detail(probe(1.5)) == "json: cannot unmarshal number 1.5 into Go value of type int32"
    assert _detail(probe(3000000000)) == "json: cannot unmarshal number 3000000000 into Go value of type int32"
    assert _detail(probe(1e21)) == "json: cannot unmarshal number 1e+21 into Go value of type int32"


def test_quantities():
    def limits(cpu):
        return {"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": cpu}}}]}}

    fmt = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    assert _detail(limits("100m")) is None
    assert _detail(limits(" 2 ")) is None  # UnmarshalJSON trims
    assert _detail(limits("abc")) == fmt
    assert _detail(limits("")) == fmt
    assert _detail(limits({"a": 1})) == fmt
    assert _detail(limits("1Mii")) == "unable to parse quantity's suffix"
    assert _detail(limits("1Qi")) == fmt
    assert _detail({"spec": {"overhead": "1"}}) == "cannot restore map from string"


def test_times():
    def created(value):
        return {"metadata": {"creationTimestamp": value}}

    layout = '"2006-01-02T15:04:05Z07:00"'
    assert _detail(created("2024-02-29T23:59:59.5+05:30")) is None
    assert _detail(created(5)) == "json: cannot unmarshal number into Go value of type string"
    assert _detail(created(True)) == "json: cannot unmarshal bool into Go value of type string"
    assert _detail(created("abc")) == f'parsing time "abc" as {layout}: cannot parse "abc" as "2006"'
    assert _detail(created("")) == f'parsing time "" as {layout}: cannot parse "" as "2006"'
    assert _detail(created("2024/01/01")) == f'parsing time "2024/01/01" as {layout}: cannot parse "/01/01" as "-"'
    assert _detail(created("2024-01-01")) == f'parsing time "2024-01-01" as {layout}: cannot parse "" as "T"'
    assert _detail(created("2024-1-01T00:00:00Z")) == \
        f'parsing time "2024-1-01T00:00:00Z" as {layout}: cannot parse "1-01T00:00:00Z" as "01"'
    assert _detail(created("2024-13-01T00:00:00Z")) == 'parsing time "2024-13-01T00:00:00Z": month out of range'
    assert _detail(created("2023-02-29T00:00:00Z")) == 'parsing time "2023-02-29T00:00:00Z": day out of range'
    assert _detail(created("2024-01-01T24:00:00Z")) == 'parsing time "2024-01-01T24:00:00Z": hour out of range'
    assert _detail(created("2024-01-01T00:00:00Zx")) == 'parsing time "2024-01-01T00:00:00Zx": extra text: "x"'
    assert _detail(created("2024-01-01T00:00:00")) == \
        f'parsing time "2024-01-01T00:00:00" as {layout}: cannot parse "" as "Z07:00"'
    assert smptypes.time_parse_error(smptypes.RFC3339_MICRO, "2024-01-01T00:00:00.123456Z") is None
    assert smptypes.time_parse_error(smptypes.RFC3339_MICRO, "2024-01-01T00:00:00Z") == \
        'parsing time "2024-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'


def test_bytes_and_raw_values():
    assert _detail({"data": {"k": "YWJj"}}, kind="Secret") is None
    base64 = "error decoding from json: illegal base64 data at input byte "
    assert _detail({"data": {"k": "YWJ"}}, kind="Secret") == base64 + "0"
    assert _detail({"data": {"k": "a!=="}}, kind="Secret") == base64 + "1"
    assert _detail({"data": {"k": 5}}, kind="Secret") == "cannot restore slice from int64"
    assert _detail({"metadata": {"managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {}}}]}}) is None
    assert _detail({"metadata": {"managedFields": {"manager": "m"}}}) == "cannot restore slice from map"


# ----------------------------------------------------------------------------------- %v of the patch map

def test_patch_map_printing():
    patch = {"spec": {"b": [1, "two", None, True, {"z": 1, "a": 2}], "a": {"y": 1.5, "x": 1.0}},
             "metadata": {"n": 10 ** 20, "f": 1e21, "s": 1e-05, "big": 1e6, "i": -3}}
    assert go_json_v(patch) == ("map[metadata:map[big:1e+06 f:1e+21 i:-3 n:1e+20 s:1e-05] "
                                "spec:map[a:map[x:1 y:1.5] b:[1 two <nil> true map[a:2 z:1]]]]")
    assert go_json_v({}) == "map[]" and go_json_v([]) == "[]"
    err = smptypes.invalid_patch({"metadata": {"labels": {"a": 'q"t'}}}, "x")
    assert err.status()["message"] == \
        ' "" is invalid: patch: Invalid value: "map[metadata:map[labels:map[a:q\\"t]]]": x'


def test_go_float():
    cases = {1.0: "1", 1.5: "1.5", 1e6: "1e+06", 123456.0: "123456", 1234567.0: "1.234567e+06", 0.0001: "0.0001",
             0.00001: "1e-05", 1e21: "1e+21", -2.5e-7: "-2.5e-07", 0.1: "0.1", -0.0: "-0", 1e100: "1e+100"}
    assert {k: go_float(k) for k in cases} == cases
