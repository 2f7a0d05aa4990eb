"""kapi.kinds.core: the core kinds' update rules (ValidateConfigMapUpdate, ValidateSecretUpdate,
ValidatePodUpdate, ValidateServiceUpdate's cluster IPs, Namespace finalizer names)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kapi import validation
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
    assert fields.supported_fields("batch", "jobs").accepted == {"metadata.name", "metadata.namespace",
                                                                 "status.successful"}
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


# ------------------------------------------------------------ ValidatePodSpec: resources, env, ports, volumes, ...

NEGATIVE = "must be greater than or equal to 0"
C0 = "spec.containers[0]"


def _pod(container: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
                           "spec": {"containers": [{"name": "c", "image": "nginx", **(container or {})}], **spec}}
    POD.default(obj)
    return obj


def _inv(path: str, shown: str, detail: str) -> Cause:
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


def _ns(path: str, shown: str, supported: str) -> Cause:
    return Cause("FieldValueNotSupported", f"Unsupported value: {shown}: supported values: {supported}", path)


@pytest.mark.parametrize(("container", "spec", "expected"), [
    # resources (a limit without a request is requested too: both are reported)
    ({"resources": {"limits": {"cpu": -1}}}, {},
     [_inv(f"{C0}.resources.limits[cpu]", '"-1"', NEGATIVE),
      _inv(f"{C0}.resources.requests[cpu]", '"-1"', NEGATIVE)]),
    ({"resources": {"requests": {"memory": "-1Mi"}}}, {},
     [_inv(f"{C0}.resources.requests[memory]", '"-1Mi"', NEGATIVE)]),
    ({"resources": {"limits": {"cpu": "500m"}, "requests": {"cpu": "1"}}}, {},
     [_inv(f"{C0}.resources.requests[cpu]", '"1"', "must be less than or equal to cpu limit of 500m")]),
    ({"resources": {"limits": {"example.com/gpu": 2}, "requests": {"example.com/gpu": 1}}}, {},
     [_inv(f"{C0}.resources.requests[example.com/gpu]", '"1"', "must be equal to example.com/gpu limit of 2")]),
    ({"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "0.5", "memory": "1Gi"}}}, {}, []),
    # env names: printable ASCII but '=' (values are not validated)
    ({"env": [{"name": "A\u0000B", "value": "x"}]}, {},
     [_inv(f"{C0}.env[0].name", '"A\\x00B"', validation.ENV_NAME_MSG)]),
    ({"env": [{"name": "A=B"}]}, {}, [_inv(f"{C0}.env[0].name", '"A=B"', validation.ENV_NAME_MSG)]),
    # ValidateEnv checks the name's syntax only when it is not empty: Required alone
    ({"env": [{"name": ""}]}, {}, [Cause("FieldValueRequired", "Required value", f"{C0}.env[0].name")]),
    ({"env": [{"name": "my.var-1 x", "value": "a\u0000b"}]}, {}, []),
    # container port names: IANA_SVC_NAME, unique in the container
    ({"ports": [{"name": "8080", "containerPort": 80}]}, {},
     [_inv(f"{C0}.ports[0].name", '"8080"', "must contain at least one letter (a-z)")]),
    ({"ports": [{"name": "Http--", "containerPort": 80}]}, {},
     [_inv(f"{C0}.ports[0].name", '"Http--"', "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"),
      _inv(f"{C0}.ports[0].name", '"Http--"', "must not contain consecutive hyphens"),
      _inv(f"{C0}.ports[0].name", '"Http--"', "must not begin or end with a hyphen")]),
    ({"ports": [{"name": "a-very-long-port-name", "containerPort": 80}]}, {},
     [_inv(f"{C0}.ports[0].name", '"a-very-long-port-name"', "must be no more than 15 characters")]),
    ({"ports": [{"name": "http", "containerPort": 80}, {"name": "http", "containerPort": 81}]}, {},
     [Cause("FieldValueDuplicate", 'Duplicate value: "http"', f"{C0}.ports[1].name")]),
    # volume names: DNS-1123 labels, unique
    ({}, {"volumes": [{"name": "Data", "emptyDir": {}}]},
     [_inv("spec.volumes[0].name", '"Data"', "a lowercase RFC 1123 label must consist of lower case alphanumeric "
           "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
           "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]),
    ({}, {"volumes": [{"name": "d", "emptyDir": {}}, {"name": "d", "emptyDir": {}}]},
     [Cause("FieldValueDuplicate", 'Duplicate value: "d"', "spec.volumes[1].name")]),
    # tolerations
    ({}, {"tolerations": [{"key": "k", "operator": "Near", "value": "v"}]},
     [_ns("spec.tolerations[0].operator", '"Near"', '"Equal", "Exists"')]),
    ({}, {"tolerations": [{"key": "k", "operator": "Equal", "value": "v", "effect": "Never"}]},
     [_ns("spec.tolerations[0].effect", '"Never"', '"NoSchedule", "PreferNoSchedule", "NoExecute"')]),
    ({}, {"tolerations": [{"key": "k", "operator": "Exists", "value": "v", "effect": "NoSchedule"}]},
     [_inv("spec.tolerations[0].operator", 'core.Toleration{Key:"k", Operator:"Exists", Value:"v", '
           'Effect:"NoSchedule", TolerationSeconds:(*int64)(nil)}',
           "value must be empty when `operator` is 'Exists'")]),
    ({}, {"tolerations": [{"operator": "Equal", "value": "v"}]},
     [_inv("spec.tolerations[0].operator", '"Equal"',
           'operator must be Exists when `key` is empty, which means "match all values and all keys"')]),
    ({}, {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]},
     [_inv("spec.tolerations[0].effect", '"NoSchedule"',
           "effect must be 'NoExecute' when `tolerationSeconds` is set")]),
    ({}, {"tolerations": [{"operator": "Exists"}, {"key": "k", "value": "v", "effect": "NoExecute",
                                                    "tolerationSeconds": 5}]}, []),
])
def test_pod_spec_validation(container: dict[str, Any], spec: dict[str, Any], expected: list[Cause]) -> None:
    assert POD.validate(_pod(container, **spec)) == expected


def test_pod_with_a_null_spec_needs_containers() -> None:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": None}
    POD.default(obj)
    assert POD.validate(obj) == [Cause("FieldValueRequired", "Required value", "spec.containers")]


# ------------------------------------------------------------ ValidateService's enumerations, ValidateSecret's types

@pytest.mark.parametrize(("spec", "expected"), [
    ({"sessionAffinity": "Sticky"}, [_ns("spec.sessionAffinity", '"Sticky"', '"ClientIP", "None"')]),
    ({"sessionAffinity": "ClientIP"}, []),
    ({"ipFamilyPolicy": "DualStack"},
     [_ns("spec.ipFamilyPolicy", '"DualStack"', '"PreferDualStack", "RequireDualStack", "SingleStack"')]),
    ({"ipFamilies": ["IPv5"]}, [_ns("spec.ipFamilies[0]", '"IPv5"', '"IPv4", "IPv6"')]),
    ({"ipFamilies": ["IPv4", "IPv4"]}, [Cause("FieldValueDuplicate", 'Duplicate value: "IPv4"', "spec.ipFamilies[1]")]),
    ({"ipFamilies": ["IPv4", "IPv6", "IPv4"]},
     [Cause("FieldValueDuplicate", 'Duplicate value: "IPv4"', "spec.ipFamilies[2]")]),
    ({"ipFamilies": ["IPv5"], "ipFamilyPolicy": "DualStack"},
     [_ns("spec.ipFamilies[0]", '"IPv5"', '"IPv4", "IPv6"'),
      _ns("spec.ipFamilyPolicy", '"DualStack"', '"PreferDualStack", "RequireDualStack", "SingleStack"')]),
])
def test_service_enumerations(spec: dict[str, Any], expected: list[Cause]) -> None:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
                           "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}, **spec}}
    SERVICE.default(obj)
    assert SERVICE.validate(obj) == expected


SECRET = strategy_for("", "Secret")


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _req(path: str) -> Cause:
    return Cause("FieldValueRequired", "Required value", path)


def _redacted(path: str, error: str) -> Cause:
    return _inv(path, '"<secret contents redacted>"', error)


@pytest.mark.parametrize(("secret_type", "data", "annotations", "expected"), [
    ("kubernetes.io/dockerconfigjson", {}, {}, [_req("data[.dockerconfigjson]")]),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": _b64("not json")}, {},
     [_redacted("data[.dockerconfigjson]", "invalid character 'o' in literal null (expecting 'u')")]),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": _b64("x")}, {},
     [_redacted("data[.dockerconfigjson]", "invalid character 'x' looking for beginning of value")]),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": _b64("[]")}, {},
     [_redacted("data[.dockerconfigjson]",
                "json: cannot unmarshal array into Go value of type map[string]interface {}")]),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": _b64('{"auths":')}, {},
     [_redacted("data[.dockerconfigjson]", "unexpected end of JSON input")]),
    ("kubernetes.io/dockerconfigjson", {".dockerconfigjson": _b64('{"auths": {}}')}, {}, []),
    ("kubernetes.io/dockercfg", {}, {}, [_req("data[.dockercfg]")]),
    ("kubernetes.io/dockercfg", {".dockercfg": _b64("{}")}, {}, []),
    ("kubernetes.io/tls", {}, {}, [_req("data[tls.crt]"), _req("data[tls.key]")]),
    ("kubernetes.io/tls", {"tls.crt": "", "tls.key": ""}, {}, []),
    ("kubernetes.io/ssh-auth", {}, {}, [_req("data[ssh-privatekey]")]),
    ("kubernetes.io/ssh-auth", {"ssh-privatekey": _b64("k")}, {}, []),
    ("kubernetes.io/basic-auth", {}, {}, [_req("data[username]"), _req("data[password]")]),
    ("kubernetes.io/basic-auth", {"password": ""}, {}, []),
    ("kubernetes.io/service-account-token", {}, {},
     [_req("metadata.annotations[kubernetes.io/service-account.name]")]),
    ("kubernetes.io/service-account-token", {}, {"kubernetes.io/service-account.name": "default"}, []),
    ("example.com/anything", {}, {}, []),
])
def test_secret_type_rules(secret_type: str, data: dict[str, str], annotations: dict[str, str],
                           expected: list[Cause]) -> None:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "type": secret_type, "data": data,
                           "metadata": {"name": "s", "namespace": "d", "annotations": annotations}}
    SECRET.default(obj)
    assert SECRET.validate(obj) == expected


def test_secret_type_rules_see_string_data() -> None:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/basic-auth",
                           "metadata": {"name": "s"}, "stringData": {"username": "admin"}}
    SECRET.default(obj)
    assert SECRET.validate(obj) == []


def test_secret_type_is_immutable() -> None:
    old: dict[str, Any] = {"metadata": {"name": "s"}, "type": "Opaque"}
    new = {**old, "type": "kubernetes.io/basic-auth", "data": {"username": ""}}
    assert SECRET.validate_update(new, old) == [_inv("type", '"kubernetes.io/basic-auth"', "field is immutable")]


# ------------------------------------------------------------ Service: clusterIPs, families, types (break-it pass)

def _created(**spec: Any) -> list[tuple[str, str]]:
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "d"},
                           "spec": {"ports": [{"port": 80}], "selector": {"app": "web"}, **spec}}
    SERVICE.default(obj)
    SERVICE.prepare_for_create(obj)
    return [(c.field, c.message) for c in SERVICE.validate(obj)]


VALID_IP = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


@pytest.mark.parametrize(("spec", "expected"), [
    ({"clusterIP": "10.96.0.10"}, []),
    ({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"]}, []),
    ({"clusterIP": "None"}, []),
    ({"clusterIP": "None", "selector": None}, []),
    ({"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}, []),
    ({"ports": [{"port": 80, "nodePort": 30080}]},
     [("spec.ports[0].nodePort", "Forbidden: may not be used when `type` is 'ClusterIP'")]),
    ({"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 81, "nodePort": 30081}]},
     [("spec.ports[1].nodePort", "Forbidden: may not be used when `type` is 'ClusterIP'")]),
    ({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.11"]},
     [("spec.clusterIPs", 'Invalid value: []string{"10.96.0.11"}: first value must match `clusterIP`')]),
    ({"clusterIPs": ["10.96.0.11"]},
     [("spec.clusterIPs", 'Invalid value: []string{"10.96.0.11"}: must be empty when `clusterIP` is not specified')]),
    ({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10", "10.96.0.11"]},
     [("spec.clusterIPs", 'Invalid value: []string{"10.96.0.10", "10.96.0.11"}: may specify no more than one IP '
                          "for each IP family")]),
    ({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10", "fd00::10"]}, [
        ("spec.ipFamilyPolicy", "Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' "
                                "when multiple cluster IPs are specified"),
        ("spec.clusterIPs[1]", 'Invalid value: []string{"10.96.0.10", "fd00::10"}: IPv6 is not configured on this '
                               "cluster")]),
    ({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10", "fd00::10"], "ipFamilyPolicy": "PreferDualStack"},
     [("spec.clusterIPs[1]", 'Invalid value: []string{"10.96.0.10", "fd00::10"}: IPv6 is not configured on this '
                             "cluster")]),
    ({"clusterIP": "fd00::10"},
     [("spec.clusterIPs[0]", 'Invalid value: []string{"fd00::10"}: IPv6 is not configured on this cluster')]),
    ({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10", "10.96.0.11", "10.96.0.12"]},
     [("spec.clusterIPs", 'Invalid value: []string{"10.96.0.10", "10.96.0.11", "10.96.0.12"}: may only hold up to 2 '
                          "values"),
      ("spec.clusterIPs", 'Invalid value: []string{"10.96.0.10", "10.96.0.11", "10.96.0.12"}: may specify no more '
                          "than one IP for each IP family")]),
    ({"clusterIP": "None", "clusterIPs": ["None", "10.96.0.11"]},
     [("spec.clusterIPs", 'Invalid value: []string{"None", "10.96.0.11"}: \'None\' must be the first and only '
                          "value")]),
    ({"clusterIP": "10.96.0.300"}, [("spec.clusterIPs[0]", f'Invalid value: "10.96.0.300": {VALID_IP}')]),
    ({"clusterIP": "10.96.0.10", "ipFamilies": ["IPv6"]},
     [("spec.clusterIPs[0]", 'Invalid value: "10.96.0.10": expected an IPv6 value as indicated by `ipFamilies[0]`')]),
    ({"ipFamilies": ["IPv4", "IPv6"]},
     [("spec.ipFamilyPolicy", "Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' "
                              "when multiple IP families are specified")]),
    ({"ipFamilyPolicy": "RequireDualStack"},
     [("spec.ipFamilyPolicy", 'Invalid value: "RequireDualStack": this cluster is not configured for dual-stack '
                              "services")]),
    ({"ipFamilies": ["IPv6"]}, [("spec.ipFamilies[0]", 'Invalid value: "IPv6": not configured on this cluster')]),
    ({"ipFamilyPolicy": "PreferDualStack"}, []),
    # the allocator's checks come alone, before ValidateService's
    ({"clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.11"], "ports": [{"port": 80, "nodePort": 30080}]},
     [("spec.clusterIPs", 'Invalid value: []string{"10.96.0.11"}: first value must match `clusterIP`')]),
    ({"type": "NodePort", "clusterIP": "None"},
     [("spec.clusterIPs[0]", "Invalid value: \"None\": may not be set to 'None' for NodePort services")]),
    ({"type": "LoadBalancer", "clusterIP": "None"},
     [("spec.clusterIPs[0]", "Invalid value: \"None\": may not be set to 'None' for LoadBalancer services")]),
    ({"type": "ExternalName", "externalName": "db.example.com."}, []),
    ({"type": "ExternalName", "externalName": "db.example.com", "clusterIP": "10.96.0.10"},
     [("spec.clusterIPs", "Forbidden: may not be set for ExternalName services")]),
    ({"type": "ExternalName", "externalName": "db.example.com", "ipFamilies": ["IPv4"],
      "ipFamilyPolicy": "SingleStack"},
     [("spec.ipFamilies", "Forbidden: may not be set for ExternalName services"),
      ("spec.ipFamilyPolicy", "Forbidden: may not be set for ExternalName services")]),
    ({"type": "ExternalName"}, [("spec.externalName", "Required value")]),
])
def test_service_cluster_ips_and_types(spec: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    spec = {k: v for k, v in spec.items()}
    if spec.get("selector", "") is None:
        del spec["selector"]
    assert _created(**spec) == expected


def test_headless_service_never_gets_an_ip() -> None:
    headless = _svc(clusterIP="None", selector={"app": "web"})
    SERVICE.prepare_for_create(headless)
    assert headless["spec"]["clusterIPs"] == ["None"]
    to_ip = _updated(headless, clusterIP="10.96.0.10")
    assert SERVICE.validate_update(to_ip, headless) == [
        _ip_cause(0, '[]string{"10.96.0.10"}', "may not change once set")]
    # one stored before clusterIPs were normalised (clusterIP "None" only) is refused the same way
    legacy = _svc(clusterIP="None", selector={"app": "web"})
    assert "clusterIPs" not in legacy["spec"]
    assert SERVICE.validate_update(_updated(legacy, clusterIP="10.96.0.10"), legacy) == [
        _ip_cause(0, '[]string{"10.96.0.10"}', "may not change once set")]
    # and an allocated one never becomes headless
    allocated = _svc(clusterIP="10.96.0.10", clusterIPs=["10.96.0.10"])
    assert SERVICE.validate_update(_updated(allocated, clusterIP="None"), allocated) == [
        _ip_cause(0, '[]string{"None"}', "may not change once set")]


def test_type_change_drops_what_the_new_type_does_not_use() -> None:
    node_port = _svc(type="NodePort", clusterIP="10.96.0.10", clusterIPs=["10.96.0.10"],
                     ports=[{"port": 80, "nodePort": 30080}])
    cluster_ip = _updated(node_port, type="ClusterIP")  # a merge patch of type alone keeps the stored nodePort
    assert "nodePort" not in cluster_ip["spec"]["ports"][0]
    assert SERVICE.validate(cluster_ip) == [] and SERVICE.validate_update(cluster_ip, node_port) == []
    picked = _updated(node_port, type="ClusterIP", ports=[{"port": 80, "nodePort": 30081}])  # asked for one
    assert [c.field for c in SERVICE.validate(picked)] == ["spec.ports[0].nodePort"]
    external = _updated(node_port, type="ExternalName", externalName="db.example.com")
    assert not {"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} & set(external["spec"])
    assert SERVICE.validate(external) == [] and SERVICE.validate_update(external, node_port) == []


APPARMOR = "container.apparmor.security.beta.kubernetes.io/"


def _apparmor_pod(annotations: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "annotations": annotations},
            "spec": {"initContainers": [{"name": "init", "image": "i"}],
                     "containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i",
                                     "securityContext": {"appArmorProfile": {"type": "Unconfined"}}}], **spec}}


def test_pod_apparmor_annotations_become_fields_with_a_warning() -> None:
    """applyAppArmorVersionSkew (1.33+): a container's annotation becomes its field, kube warns once per
    annotation it read; a container that has the field, an annotation equal to the Pod's profile, a Windows Pod
    and (since 1.33) a field without an annotation are left alone."""
    pod_strategy = strategy_for("", "Pod")
    pod = _apparmor_pod({APPARMOR + "init": "localhost/custom", APPARMOR + "a": "runtime/default",
                         APPARMOR + "b": "runtime/default", APPARMOR + "gone": "unconfined"})
    assert pod_strategy.warnings_on_prepare(pod) == [
        f'metadata.annotations[{APPARMOR}init]: deprecated since v1.30; use the "appArmorProfile" field instead',
        f'metadata.annotations[{APPARMOR}a]: deprecated since v1.30; use the "appArmorProfile" field instead']
    pod_strategy.prepare_for_create(pod)
    spec = pod["spec"]
    assert spec["initContainers"][0]["securityContext"] == {
        "appArmorProfile": {"type": "Localhost", "localhostProfile": "custom"}}
    assert spec["containers"][0]["securityContext"] == {"appArmorProfile": {"type": "RuntimeDefault"}}
    assert spec["containers"][1]["securityContext"] == {"appArmorProfile": {"type": "Unconfined"}}
    assert len(pod["metadata"]["annotations"]) == 4  # the annotations stay; none added

    # the Pod-level profile already says it: no copy, no warning; a field alone writes no annotation
    same = _apparmor_pod({APPARMOR + "a": "runtime/default"},
                         securityContext={"appArmorProfile": {"type": "RuntimeDefault"}})
    assert pod_strategy.warnings_on_prepare(same) == []
    pod_strategy.prepare_for_create(same)
    assert "securityContext" not in same["spec"]["containers"][0]
    assert same["metadata"]["annotations"] == {APPARMOR + "a": "runtime/default"}

    windows = _apparmor_pod({APPARMOR + "a": "runtime/default"}, os={"name": "windows"})
    assert pod_strategy.warnings_on_prepare(windows) == []
    pod_strategy.prepare_for_create(windows)
    assert "securityContext" not in windows["spec"]["containers"][0]


@pytest.mark.parametrize("value", ["localhost/", "localhost/ padded", "localhost/" + "x" * 4096, "bogus"])
def test_pod_apparmor_annotation_without_a_valid_field_only_warns(value: str) -> None:
    """An annotation naming no valid profile (ValidateAppArmorProfileField fails) warns and copies nothing."""
    pod_strategy = strategy_for("", "Pod")
    pod = _apparmor_pod({APPARMOR + "a": value})
    assert pod_strategy.warnings_on_prepare(pod) == [
        f'metadata.annotations[{APPARMOR}a]: deprecated since v1.30; use the "appArmorProfile" field instead']
    pod_strategy.prepare_for_create(pod)
    assert "securityContext" not in pod["spec"]["containers"][0]


@pytest.mark.parametrize(("spec", "expected"), [
    ({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 30100}, []),
    ({"type": "LoadBalancer", "externalTrafficPolicy": "Local"}, []),  # the allocator fills the port afterwards
    ({"type": "LoadBalancer", "externalTrafficPolicy": "Cluster", "healthCheckNodePort": 30100},
     [("spec.healthCheckNodePort", "Invalid value: 30100: " + core.HEALTH_CHECK_ONLY)]),
    ({"type": "NodePort", "externalTrafficPolicy": "Local", "healthCheckNodePort": 30100},
     [("spec.healthCheckNodePort", "Invalid value: 30100: " + core.HEALTH_CHECK_ONLY)]),
    ({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 70000},
     [("spec.healthCheckNodePort", "Invalid value: 70000: must be between 1 and 65535, inclusive")]),
    ({"type": "NodePort", "externalTrafficPolicy": "Remote"},
     [("spec.externalTrafficPolicy", 'Unsupported value: "Remote": supported values: "Cluster", "Local"')]),
    ({"type": "ClusterIP", "externalTrafficPolicy": "Local"},
     [("spec.externalTrafficPolicy", 'Invalid value: "Local": may only be set for externally-accessible services')]),
])
def test_service_external_traffic_policy_and_health_check_node_port(spec: dict[str, Any],
                                                                     expected: list[tuple[str, str]]) -> None:
    """validateServiceExternalTrafficPolicy (pkg/apis/core/validation/validation.go)."""
    assert _created(**spec) == expected


def test_service_health_check_node_port_kept_while_needed_dropped_when_not() -> None:
    """patchAllocatedValues keeps an omitted healthCheckNodePort; dropTypeDependentFields drops an unchanged one
    when the Service stops needing it (Local -> Cluster)."""
    old = _svc(type="LoadBalancer", externalTrafficPolicy="Local", healthCheckNodePort=30100)
    kept = _updated(old, healthCheckNodePort=None)
    assert kept["spec"]["healthCheckNodePort"] == 30100
    dropped = _updated(old, externalTrafficPolicy="Cluster")
    assert "healthCheckNodePort" not in dropped["spec"]
    assert SERVICE.validate(dropped) == []


def test_type_change_drops_the_traffic_policy_and_load_balancer_fields_left_as_stored() -> None:
    """dropTypeDependentFields: LoadBalancer -> ClusterIP wipes allocateLoadBalancerNodePorts, loadBalancerClass,
    externalTrafficPolicy and the nodePorts the client left as stored; a changed one stays for validation."""
    lb = _svc(type="LoadBalancer", loadBalancerClass="example.com/lb", ports=[{"port": 80, "nodePort": 30080}])
    assert lb["spec"]["externalTrafficPolicy"] == "Cluster" and lb["spec"]["allocateLoadBalancerNodePorts"] is True
    cluster_ip = _updated(lb, type="ClusterIP")
    assert not {"externalTrafficPolicy", "allocateLoadBalancerNodePorts", "loadBalancerClass"} & set(cluster_ip["spec"])
    assert SERVICE.validate(cluster_ip) == []
    asked = _updated(lb, type="ClusterIP", externalTrafficPolicy="Local")
    assert [(c.field, c.message) for c in SERVICE.validate(asked)] == [(
        "spec.externalTrafficPolicy", 'Invalid value: "Local": may only be set for externally-accessible services')]
