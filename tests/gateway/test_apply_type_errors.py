"""Server-side apply of configurations that do not fit their type, as kube-apiserver 1.37 answers them.

kube's structuredMergeManager.Apply types the configuration (structured-merge-diff v6 FromUnstructured) and
returns a plain error, which the apiserver writes as a 500 without reason:
``failed to create typed patch object (<ns>/<name>; <group>/<version>, Kind=<Kind>): <errors>``; kapi answers
the same message as 400 BadRequest (bad input never gets a 500).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from multidict import MultiDict

from kapi import errors
from kapi import managedfields as mf
from kapi.resources import REGISTRY
from services.gateway import fieldmanager
from services.gateway import patch as patching

DEPLOYMENT = mf.Types(patching.schema_for("apps", "v1", "Deployment"), patching._definitions())
SERVICE = mf.Types(patching.schema_for("", "v1", "Service"), patching._definitions())
CONFIGMAP = mf.Types(patching.schema_for("", "v1", "ConfigMap"), patching._definitions())
MISSING_NAME = ('.spec.template.spec.containers: element 1: associative list with keys has an element that omits '
                'key field "name" (and doesn\'t have default value)')


def _pod_spec(spec: Any) -> dict[str, Any]:
    return {"spec": {"template": {"spec": spec}}}


CASES = [
    (DEPLOYMENT, {"spec": {"replicas": "3"}}, [".spec.replicas: expected numeric (int or float), got string"]),
    (DEPLOYMENT, {"spec": {"replicas": True}}, [".spec.replicas: expected numeric (int or float), got bool"]),
    (DEPLOYMENT, {"spec": []}, [".spec: expected map, got &{[]}"]),
    (DEPLOYMENT, {"spec": "x"}, [".spec: expected map, got &{x}"]),
    (DEPLOYMENT, _pod_spec({"containers": {}}), [".spec.template.spec.containers: expected list, got &{map[]}"]),
    (DEPLOYMENT, _pod_spec({"containers": {"a": 1}}),
     [".spec.template.spec.containers: expected list, got &{map[a:1]}"]),
    (DEPLOYMENT, _pod_spec({"containers": [{"name": "a", "image": "x"}, {"name": "a"}]}),
     ['.spec.template.spec.containers: duplicate entries for key [name="a"]']),
    (DEPLOYMENT, _pod_spec({"containers": [{"name": "a"}, {"image": "x"}, {"name": 5}]}), [MISSING_NAME]),
    (DEPLOYMENT, _pod_spec({"containers": ["a"]}),
     [".spec.template.spec.containers: element 0: associative list with keys may not have non-map elements"]),
    (DEPLOYMENT, _pod_spec({"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}), []),
    (DEPLOYMENT, _pod_spec({"containers": [{"name": "a", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}}]}),
     []),
    (DEPLOYMENT, _pod_spec({"containers": [{"name": "a", "resources": {"limits": {"cpu": {}}}}]}),
     ['.spec.template.spec.containers[name="a"].resources.limits.cpu: expected any scalar, got &{map[]}']),
    (DEPLOYMENT, {"spec": {"paused": "yes"}}, [".spec.paused: expected boolean, got &{yes}"]),
    (DEPLOYMENT, {"spec": {"foo": 1}}, [".spec.foo: field not declared in schema"]),
    (DEPLOYMENT, {"spec": {"replicas": None, "selector": None}}, []),
    (SERVICE, {"spec": {"ports": [{"name": "a"}]}},
     ['.spec.ports: element 0: associative list with keys has an element that omits key field "port" (and '
      "doesn't have default value)"]),
    (SERVICE, {"spec": {"ports": [{"port": 80}, {"port": 80, "protocol": "TCP"}]}},
     ['.spec.ports: duplicate entries for key [port=80,protocol="TCP"]']),
    (SERVICE, {"spec": {"ports": [{"port": 80, "targetPort": "http"}, {"port": 81, "targetPort": 8081}]}}, []),
    (CONFIGMAP, {"data": {"a": 1}}, [".data.a: expected string, got &value.valueUnstructured{Value:1}"]),
    (CONFIGMAP, {"data": {"a": 1.5, "b": True, "c": {"x": ["s"]}}},
     [".data.a: expected string, got &value.valueUnstructured{Value:1.5}",
      ".data.b: expected string, got &value.valueUnstructured{Value:true}",
      '.data.c: expected string, got &value.valueUnstructured{Value:map[string]interface {}{"x":[]interface {}'
      '{"s"}}}']),
    (CONFIGMAP, {"metadata": {"finalizers": ["a", "a"]}}, ['.metadata.finalizers: duplicate entries for key [="a"]']),
]


@pytest.mark.parametrize("types,config,expected", CASES)
def test_type_errors_are_structured_merge_diffs(types: mf.Types, config: dict[str, Any],
                                                expected: list[str]) -> None:
    assert mf.type_errors(config, types) == expected


def _scope(group: str, version: str, kind: str, query: str = "") -> Any:
    resource = REGISTRY.by_kind(group, version, kind)
    pairs = [tuple(p.split("=", 1)) if "=" in p else (p, "") for p in query.split("&") if p]
    return SimpleNamespace(resource=resource, query=MultiDict(pairs), backends=SimpleNamespace(custom_resources=None))


def _refusal(scope: Any, config: dict[str, Any], namespace: str = "", kind: Any = None) -> errors.StatusError:
    with pytest.raises(errors.StatusError) as info:
        fieldmanager.check_declared(scope, config, namespace, kind)
    return info.value


def test_a_configuration_that_does_not_fit_is_a_400_with_kubes_message() -> None:
    config = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": "3"}}
    err = _refusal(_scope("apps", "v1", "Deployment"), config, "ns")
    assert (err.code, err.reason) == (400, "BadRequest")  # kube: a 500 without reason, the same message
    assert err.message == ("failed to create typed patch object (ns/d; apps/v1, Kind=Deployment): .spec.replicas: "
                           "expected numeric (int or float), got string")


def test_several_errors_are_listed_under_errors() -> None:
    config = {"metadata": {"name": "c"}, "data": {"a": 1, "b": 2}}
    err = _refusal(_scope("", "v1", "ConfigMap"), config)
    assert err.message == ("failed to create typed patch object (/c; /v1, Kind=ConfigMap): errors:\n"
                           "  .data.a: expected string, got &value.valueUnstructured{Value:1}\n"
                           "  .data.b: expected string, got &value.valueUnstructured{Value:2}")


def test_a_scale_is_checked_as_autoscaling_v1_scale() -> None:
    config = {"metadata": {"name": "s"}, "spec": {"replicas": 2, "foo": 1}}
    err = _refusal(_scope("apps", "v1", "Deployment"), config, "ns", ("autoscaling", "v1", "Scale"))
    assert (err.code, err.message) == (400, "failed to create typed patch object (ns/s; autoscaling/v1, "
                                       "Kind=Scale): .spec.foo: field not declared in schema")
    fieldmanager.check_declared(_scope("apps", "v1", "Deployment"), {"spec": {"replicas": 2}}, "",
                                ("autoscaling", "v1", "Scale"))


@pytest.mark.parametrize("query,forced", [
    ("", False), ("force=true", True), ("force=1", True), ("force=0", False), ("force=false", False),
    ("force=FALSE", False), ("force=False", False), ("force=", True), ("force=yes", True), ("force=no", True),
    ("force=0&force=true", False), ("force=true&force=0", True),
])
def test_force_is_kubes_bool_conversion(query: str, forced: bool) -> None:
    """Convert_Slice_string_To_bool: only "0" and "false" (any case) are false; never an error."""
    assert fieldmanager.force(_scope("", "v1", "ConfigMap", query)) is forced


CRD = {"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "size": {"type": "integer"}, "flag": {"type": "boolean"}, "port": {"x-kubernetes-int-or-string": True},
        "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}}}]}}


def test_a_custom_resource_is_typed_by_its_structural_schema() -> None:
    t = fieldmanager.crd_types(CRD, "v1")
    assert mf.type_errors({"spec": {"size": "big"}}, t) == [".spec.size: expected numeric (int or float), got string"]
    assert mf.type_errors({"spec": {"flag": 1}}, t) == [".spec.flag: expected boolean, got &{1}"]
    assert mf.type_errors({"spec": {"port": []}}, t) == [".spec.port: expected any scalar, got &{[]}"]
    assert mf.type_errors({"spec": {"items": [{"name": "a"}, {"name": "a"}]}}, t) == [
        '.spec.items: duplicate entries for key [name="a"]']
    assert mf.type_errors({"spec": {"size": 1, "flag": True, "port": "http", "extra": {"x": [1, {"y": 2}]}},
                           "metadata": {"name": "x"}}, t) == []
