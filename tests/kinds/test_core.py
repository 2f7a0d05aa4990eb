"""kapi.kinds.core: the core kinds' update rules (ValidateConfigMapUpdate, ValidateSecretUpdate,
ValidatePodUpdate, ValidateServiceUpdate's cluster IPs, Namespace finalizer names)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.errors import Cause
from kapi.kinds import core, strategy_for

POD = strategy_for("", "Pod")
SERVICE = strategy_for("", "Service")
NAMESPACE = strategy_for("", "Namespace")


@pytest.mark.parametrize(("kind", "old", "new", "fields"), [
    ("ConfigMap", {"immutable": True, "data": {"a": "1"}}, {"immutable": True, "data": {"a": "2"}}, ["data"]),
    ("ConfigMap", {"immutable": True, "data": {"a": "1"}}, {"data": {"a": "1"}}, ["immutable"]),
    ("ConfigMap", {"immutable": True, "data": {"a": "1"}}, {"immutable": True, "data": {"a": "1"}}, []),
    ("ConfigMap", {"data": {"a": "1"}}, {"immutable": True, "data": {"a": "2"}}, []),
    ("Secret", {"immutable": True, "data": {"a": "MQ=="}}, {"immutable": True, "data": {}}, ["data"]),
    ("Secret", {"type": "Opaque"}, {"type": "kubernetes.io/tls"}, ["type"]),
])
def test_immutable_configmaps_and_secrets(kind: str, old: dict[str, Any], new: dict[str, Any],
                                          fields: list[str]) -> None:
    causes = strategy_for("", kind).validate_update(new, old)
    assert [c.field for c in causes] == fields
    for c in causes:
        if c.field != "type":
            assert c.message == "Forbidden: field is immutable when `immutable` is set"


def test_pod_spec_is_immutable_but_images() -> None:
    old = {"spec": {"containers": [{"name": "c", "image": "nginx:1"}], "restartPolicy": "Always",
                    "tolerations": [{"key": "a", "operator": "Exists"}]}}
    image = {"spec": {**old["spec"], "containers": [{"name": "c", "image": "nginx:2"}],
                      "tolerations": [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}]}}
    assert POD.validate_update(image, old) == []
    changed = {"spec": {**old["spec"], "restartPolicy": "Never"}}
    (cause,) = POD.validate_update(changed, old)
    assert cause.field == "spec" and cause.message == "Forbidden: " + core.POD_UPDATE_FORBIDDEN
    assert POD.validate_update(changed, old, "status") == []
    dropped = {"spec": {**old["spec"], "tolerations": []}}
    assert [c.field for c in POD.validate_update(dropped, old)] == ["spec.tolerations"]


def _svc(**spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
                           "spec": {"ports": [{"port": 80}], **spec}}
    SERVICE.default(obj)
    return obj


def _updated(old: dict[str, Any], **spec: Any) -> dict[str, Any]:
    new = {**old, "spec": {**old["spec"], **spec}}
    for key, value in spec.items():
        if value is None:
            del new["spec"][key]
    SERVICE.prepare_for_update(new, old)
    return new


def _ip_cause(index: int, shown: str, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", f"spec.clusterIPs[{index}]")


def test_service_cluster_ip_may_not_change_once_set() -> None:
    old = _svc(clusterIP="10.96.0.10", clusterIPs=["10.96.0.10"])
    # a client changing clusterIP only (kubectl patch): clusterIPs follow it, then the change is refused
    new = _updated(old, clusterIP="10.96.0.99")
    assert new["spec"]["clusterIPs"] == ["10.96.0.99"]
    assert SERVICE.validate_update(new, old) == [
        _ip_cause(0, '[]string{"10.96.0.99"}', "may not change once set")]
    changed = _updated(old, clusterIP="10.96.0.99", clusterIPs=["10.96.0.99"])
    assert SERVICE.validate_update(changed, old) == [
        _ip_cause(0, '[]string{"10.96.0.99"}', "may not change once set")]


def test_service_omitted_cluster_ips_keep_the_stored_ones() -> None:
    old = _svc(clusterIP="10.96.0.10", clusterIPs=["10.96.0.10"])
    new = _updated(old, clusterIP=None, clusterIPs=None)
    assert (new["spec"]["clusterIP"], new["spec"]["clusterIPs"]) == ("10.96.0.10", ["10.96.0.10"])
    assert SERVICE.validate_update(new, old) == []
    assert SERVICE.validate_update(_updated(old, ports=[{"port": 81}]), old) == []


def test_service_cluster_ip_releases_and_type_changes() -> None:
    old = _svc(clusterIP="10.96.0.10", clusterIPs=["10.96.0.10"])
    cleared = _updated(old, clusterIP="", clusterIPs=[])  # patchAllocatedValues puts the stored ones back
    assert cleared["spec"]["clusterIPs"] == ["10.96.0.10"] and SERVICE.validate_update(cleared, old) == []
    # to ExternalName (and back) the allocations go away or come back: no rule applies
    external = _updated(old, type="ExternalName", externalName="example.com", clusterIP="", clusterIPs=None)
    assert SERVICE.validate_update(external, old) == []
    dual = _svc(clusterIP="10.96.0.10", clusterIPs=["10.96.0.10", "fd00::10"], ipFamilyPolicy="PreferDualStack")
    single = _updated(dual, clusterIPs=["10.96.0.10"])
    assert SERVICE.validate_update(single, dual) == [_ip_cause(
        0, '[]string{"10.96.0.10"}', "`ipFamilyPolicy` must be set to 'SingleStack' when releasing the secondary "
        "clusterIP")]
    assert SERVICE.validate_update(_updated(dual, clusterIPs=["10.96.0.10"], ipFamilyPolicy="SingleStack"),
                                   dual) == []
    headless = _svc(clusterIP="None", clusterIPs=["None"])
    assert SERVICE.validate_update(_updated(headless, ports=[]), headless) == []


@pytest.mark.parametrize(("finalizers", "expected"), [
    (["kubernetes", "example.com/cleanup", "orphan", "foregroundDeletion"], []),
    (["cleanup"], [Cause("FieldValueInvalid", 'Invalid value: "cleanup": name is neither a standard finalizer name '
                         "nor is it fully qualified", "spec.finalizers")]),
    (["example.com/a/b"], [Cause(
        "FieldValueInvalid", 'Invalid value: "example.com/a/b": a qualified name must consist of alphanumeric '
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
        "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
        "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')", "spec.finalizers")]),
])
def test_namespace_finalizer_names(finalizers: list[str], expected: list[Cause]) -> None:
    obj = {"metadata": {"name": "n"}, "spec": {"finalizers": finalizers}}
    assert NAMESPACE.validate(obj) == expected
    assert NAMESPACE.validate_update(obj, {"metadata": {"name": "n"}, "spec": {"finalizers": ["kubernetes"]}},
                                     "finalize") == expected
    assert NAMESPACE.validate_update(obj, obj) == []  # the main resource keeps the stored finalizers


def test_field_labels_and_generation_live_with_the_kind() -> None:
    from kapi import strategy
    from kapi.resources import REGISTRY
    from services.storage import fields

    assert "spec.nodeName" in fields.supported_fields("", "pods")
    assert fields.supported_fields("batch", "jobs") == {"metadata.name", "metadata.namespace", "status.successful"}
    node = fields.object_fields("", "nodes", {"metadata": {"name": "n1"}, "spec": {}})
    assert node == {"metadata.name": "n1", "metadata.namespace": "", "spec.unschedulable": "false"}
    pod = {"metadata": {"name": "p"}, "spec": {"hostNetwork": True},
           "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}}
    values = fields.object_fields("", "pods", pod)
    assert (values["spec.hostNetwork"], values["status.phase"], values["status.podIPs"]) == (
        "true", "Running", "10.0.0.1,fd00::1")
    assert not strategy.tracks_generation(REGISTRY.get("", "v1", "namespaces"))
    assert not strategy.tracks_generation(REGISTRY.get("", "v1", "services"))
    assert strategy.tracks_generation(REGISTRY.get("apps", "v1", "deployments"))
    assert strategy.tracks_generation(REGISTRY.get("", "v1", "pods"))
