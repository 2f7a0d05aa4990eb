"""kube-apiserver 1.37's answers for the other API groups' v1 kinds (issue 17's systematic pass, docs/kube-parity.md).

Per group: what a create of a minimal object stores and returns (SetDefaults_*, PrepareForCreate, the structs kube
always encodes, generation), the messages of the common mistakes (field paths, ``Required value``,
``Invalid value``, ``Unsupported value``, ``Forbidden``), and the update rules (``field is immutable``, forbidden
changes). Raw REST through Envoy, so the bodies are what any client reads; kubectl where it shows what users see.
"""

from __future__ import annotations

import json
from typing import Any

from kapi.local.launcher import Stack
from tests.e2e.conftest import Kubectl, wait_for
from tests.e2e.test_kube_parity_defaults import _raw

RBAC = "/apis/rbac.authorization.k8s.io/v1"
NETWORKING = "/apis/networking.k8s.io/v1"
STORAGE = "/apis/storage.k8s.io/v1"


def _call(stack: Stack, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
    code, raw = _raw(stack, method, path, body)
    return code, json.loads(raw)


def _created(stack: Stack, path: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST ``body`` expecting 201; the answer without the server-set metadata."""
    code, reply = _call(stack, "POST", path, body)
    assert code == 201, reply
    for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
        reply["metadata"].pop(key, None)  # absent when the writer set nothing the zero object lacks
    return reply


def _invalid(stack: Stack, method: str, path: str, body: dict[str, Any]) -> str:
    """The message of a 422 Invalid answer to ``method path body``."""
    code, reply = _call(stack, method, path, body)
    assert (code, reply.get("reason")) == (422, "Invalid"), reply
    return reply["message"]


def _replace(stack: Stack, path: str, **changes: Any) -> dict[str, Any]:
    """The stored object at ``path`` with ``changes`` applied to its top level (a PUT body)."""
    code, obj = _call(stack, "GET", path)
    assert code == 200, obj
    obj.update(changes)
    return obj


# ------------------------------------------------------------ rbac.authorization.k8s.io

def test_rbac_roles_bindings_defaults_and_messages(stack: Stack, namespace: str) -> None:
    roles = f"{RBAC}/namespaces/{namespace}/roles"
    role = _created(stack, roles, {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                                   "metadata": {"name": "empty"}})
    # Rules []PolicyRule `json:"rules"` (no omitempty): an empty Role is `"rules": null`, also when read back.
    assert role == {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                    "metadata": {"name": "empty", "namespace": namespace}, "rules": None}
    code, raw = _raw(stack, "GET", f"{roles}/empty")
    assert code == 200 and b'"rules":null' in raw, raw

    assert _invalid(stack, "POST", roles, {"metadata": {"name": "bad"}, "rules": [{}, {
        "verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}) == (
        'Role.rbac.authorization.k8s.io "bad" is invalid: ['
        "rules[0].verbs: Required value: verbs must contain at least one value, "
        "rules[0].apiGroups: Required value: resource rules must supply at least one api group, "
        "rules[0].resources: Required value: resource rules must supply at least one resource, "
        'rules[1].nonResourceURLs: Invalid value: []string{"/healthz"}: namespaced rules cannot apply to '
        "non-resource URLs]")

    bindings = f"{RBAC}/namespaces/{namespace}/rolebindings"
    binding = _created(stack, bindings, {"metadata": {"name": "rb"}, "roleRef": {"kind": "Role", "name": "empty"},
                                         "subjects": [{"kind": "User", "name": "u"},
                                                      {"kind": "ServiceAccount", "name": "default"}]})
    # SetDefaults_RoleBinding / SetDefaults_Subject: the RBAC group on the roleRef and User/Group subjects only.
    assert binding["roleRef"] == {"kind": "Role", "name": "empty", "apiGroup": "rbac.authorization.k8s.io"}
    assert binding["subjects"] == [{"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io"},
                                   {"kind": "ServiceAccount", "name": "default"}]
    assert _invalid(stack, "PUT", f"{bindings}/rb", _replace(stack, f"{bindings}/rb", roleRef={
        "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"})) == (
        'RoleBinding.rbac.authorization.k8s.io "rb" is invalid: roleRef: Invalid value: rbac.RoleRef{'
        'APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"view"}: cannot change roleRef')
    assert _invalid(stack, "POST", f"{RBAC}/clusterrolebindings", {
        "metadata": {"name": f"{namespace}-crb"}, "roleRef": {"kind": "Role", "name": "x"},
        "subjects": [{"kind": "ServiceAccount", "name": "s"}, {"kind": "Robot", "name": "r"}]}) == (
        f'ClusterRoleBinding.rbac.authorization.k8s.io "{namespace}-crb" is invalid: ['
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", '
        "subjects[0].namespace: Required value, "
        'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"]')


def test_aggregated_cluster_role_rules_belong_to_the_aggregation_controller(kubectl: Kubectl,
                                                                             namespace: str) -> None:
    aggregated, part = f"{namespace}-agg", f"{namespace}-part"
    kubectl.run("create", "clusterrole", aggregated, f"--aggregation-rule=parity-{namespace}=yes")
    kubectl.run("create", "clusterrole", part, "--verb=get", "--resource=pods")
    kubectl.run("label", "clusterrole", part, f"parity-{namespace}=yes")

    def aggregated_role() -> dict[str, Any] | None:
        role = json.loads(kubectl.run("get", "clusterrole", aggregated, "-o", "json", "--show-managed-fields").stdout)
        return role if role.get("rules") else None
    role = wait_for(aggregated_role)
    assert role["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    # kube's controller server-side applies rules with Force as clusterrole-aggregation-controller
    owners = {e["manager"]: (e["operation"], e["fieldsV1"]) for e in role["metadata"]["managedFields"]}
    assert owners["clusterrole-aggregation-controller"] == ("Apply", {"f:rules": {}})
    # aggregationRule is a pointer struct: the zero ClusterRole has none, so the node is the creator's (".")
    assert owners["kubectl-create"] == ("Update", {"f:aggregationRule": {".": {}, "f:clusterRoleSelectors": {}}})


# ------------------------------------------------------------ networking.k8s.io

def test_network_policy_defaults_and_validation(stack: Stack, namespace: str) -> None:
    policies = f"{NETWORKING}/namespaces/{namespace}/networkpolicies"
    bare = _created(stack, policies, {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                                      "metadata": {"name": "bare"}})
    # the spec struct with its podSelector is always encoded; no policyTypes -> [Ingress]; generation 1
    assert bare["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
    assert bare["metadata"]["generation"] == 1 and "status" not in bare
    egress = _created(stack, policies, {"metadata": {"name": "egress"}, "spec": {
        "podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}})
    assert egress["spec"] == {"podSelector": {}, "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}],
                              "policyTypes": ["Ingress", "Egress"]}

    assert _invalid(stack, "POST", policies, {"metadata": {"name": "bad"}, "spec": {
        "podSelector": {}, "policyTypes": ["Sideways"],
        "ingress": [{"ports": [{"protocol": "ICMP", "port": 0}, {"port": "http", "endPort": 90}],
                     "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/33"}},
                              {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}},
                              {"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}]}}) == (
        'NetworkPolicy.networking.k8s.io "bad" is invalid: ['
        'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP", '
        "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive, "
        "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric, "
        "spec.ingress[0].from[0]: Required value: must specify a peer, "
        'spec.ingress[0].from[1].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value, '
        "(e.g. 10.9.8.0/24 or 2001:db8::/64), "
        'spec.ingress[0].from[2].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset of '
        "`cidr`, "
        "spec.ingress[0].from[3]: Forbidden: may not specify both ipBlock and another peer, "
        'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"]')

    # a spec change bumps the generation
    changed = _replace(stack, f"{policies}/bare", spec={"podSelector": {"matchLabels": {"app": "web"}}})
    code, reply = _call(stack, "PUT", f"{policies}/bare", changed)
    assert code == 200 and reply["metadata"]["generation"] == 2, reply


def test_ingress_validation_status_and_class_annotation(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    ingresses = f"{NETWORKING}/namespaces/{namespace}/ingresses"
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    ingress = _created(stack, ingresses, {"metadata": {"name": "web"}, "spec": {"defaultBackend": backend},
                                          "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}})
    assert ingress["status"] == {"loadBalancer": {}} and ingress["metadata"]["generation"] == 1
    ingress["status"] = {"loadBalancer": {"ingress": [{"ip": "10.0.0.300"}, {"hostname": "10.0.0.1"},
                                                      {"ip": "10.0.0.7", "hostname": "lb.example.com"}]}}
    assert _invalid(stack, "PUT", f"{ingresses}/web/status", ingress) == (
        'Ingress.networking.k8s.io "web" is invalid: ['
        'status.loadBalancer.ingress[0].ip: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 '
        "or 2001:db8::ffff), "
        'status.loadBalancer.ingress[1].hostname: Invalid value: "10.0.0.1": must be a DNS name, not an IP address]')
    ingress["status"]["loadBalancer"]["ingress"] = ingress["status"]["loadBalancer"]["ingress"][2:]
    code, reply = _call(stack, "PUT", f"{ingresses}/web/status", ingress)
    assert code == 200 and reply["status"]["loadBalancer"]["ingress"] == [{"ip": "10.0.0.7",
                                                                          "hostname": "lb.example.com"}], reply
    assert _invalid(stack, "POST", ingresses, {"metadata": {"name": "empty"}}) == (
        'Ingress.networking.k8s.io "empty" is invalid: spec: Invalid value: []networking.IngressRule(nil): either '
        "`defaultBackend` or `rules` must be specified")
    assert _invalid(stack, "POST", ingresses, {"metadata": {"name": "bad"}, "spec": {"rules": [
        {"host": "1.2.3.4", "http": {"paths": [{"path": "/a", "backend": backend}]}},
        {"host": "*.Example.com", "http": {"paths": [
            {"path": "a//b", "pathType": "Prefix", "backend": {"service": {"name": "Web"}}},
            {"path": "/x", "pathType": "Regex", "backend": {}}]}}]}}) == (
        'Ingress.networking.k8s.io "bad" is invalid: ['
        'spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address, '
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified, "
        "spec.rules[1].host: Invalid value: \"*.Example.com\": a wildcard DNS-1123 subdomain must start with '*.', "
        "followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' "
        "and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is "
        "'\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
        'spec.rules[1].http.paths[0].path: Invalid value: "a//b": must be an absolute path, '
        "spec.rules[1].http.paths[0].path: Invalid value: \"a//b\": must not contain '//', "
        'spec.rules[1].http.paths[0].backend.service.name: Invalid value: "Web": a DNS-1035 label must consist of '
        "lower case alphanumeric characters or '-', start with an alphabetic character, and end with an "
        "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?'), "
        "spec.rules[1].http.paths[0].backend: Required value: port name or number is required, "
        'spec.rules[1].http.paths[1].pathType: Unsupported value: "Regex": supported values: "Exact", '
        '"ImplementationSpecific", "Prefix", '
        'spec.rules[1].http.paths[1].backend: Invalid value: "": resource or service backend is required]')
    annotated = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                 "metadata": {"name": "annotated", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
                 "spec": {"ingressClassName": "other", "defaultBackend": backend}}
    assert _invalid(stack, "POST", ingresses, annotated) == (
        'Ingress.networking.k8s.io "annotated" is invalid: annotations.kubernetes.io/ingress.class: Invalid value: '
        '"nginx": must match `ingressClassName` when both are specified')
    del annotated["spec"]["ingressClassName"]
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(annotated))
    assert ("Warning: annotation \"kubernetes.io/ingress.class\" is deprecated, please use 'spec.ingressClassName' "
            "instead") in proc.stderr, proc.stderr


def test_ingress_class_controller_rules(stack: Stack, namespace: str) -> None:
    classes = f"{NETWORKING}/ingressclasses"
    name = f"{namespace}-ic"
    created = _created(stack, classes, {"metadata": {"name": name}, "spec": {
        "controller": "example.com/ingress", "parameters": {"kind": "Params", "name": "p"}}})
    # SetDefaults_IngressClass: a parameters reference without scope is Cluster
    assert created["spec"]["parameters"] == {"kind": "Params", "name": "p", "scope": "Cluster"}
    assert created["metadata"]["generation"] == 1
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-none"}}) == (
        f'IngressClass.networking.k8s.io "{name}-none" is invalid: spec.controller: Required value')
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-bad"}, "spec": {
        "controller": "nginx", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}}}) == (
        f'IngressClass.networking.k8s.io "{name}-bad" is invalid: ['
        'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo"), '
        "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace']")
    body = _replace(stack, f"{classes}/{name}", spec={**created["spec"], "controller": "example.com/other"})
    assert _invalid(stack, "PUT", f"{classes}/{name}", body) == (
        f'IngressClass.networking.k8s.io "{name}" is invalid: spec.controller: Invalid value: "example.com/other": '
        "field is immutable")


# ------------------------------------------------------------ storage.k8s.io

def test_storage_class_defaults_validation_and_updates(stack: Stack, namespace: str) -> None:
    classes = f"{STORAGE}/storageclasses"
    name = f"{namespace}-sc"
    created = _created(stack, classes, {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                                        "metadata": {"name": name}, "provisioner": "example.com/disk"})
    assert created == {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
                       "provisioner": "example.com/disk", "reclaimPolicy": "Delete",
                       "volumeBindingMode": "Immediate"}
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-none"}}) == (
        f'StorageClass.storage.k8s.io "{name}-none" is invalid: provisioner: Required value')
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-bad"}, "provisioner": "My Disk",
                                             "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"}) == (
        f'StorageClass.storage.k8s.io "{name}-bad" is invalid: ['
        "provisioner: Invalid value: \"My Disk\": name part must consist of alphanumeric characters, '-', '_' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), "
        'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain", '
        'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"]')
    zone = {"key": "topology.kubernetes.io/zone", "values": ["a", "a"]}
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-topo"}, "provisioner": "example.com/d",
                                             "allowedTopologies": [
                                                 {"matchLabelExpressions": [zone, {"key": "bad key", "values": []}]},
                                                 {"matchLabelExpressions": [{**zone, "values": ["b"]}]},
                                                 {"matchLabelExpressions": [{**zone, "values": ["b"]}]}]}) == (
        f'StorageClass.storage.k8s.io "{name}-topo" is invalid: ['
        'allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: "a", '
        "allowedTopologies[0].matchLabelExpressions[1].values: Required value, "
        "allowedTopologies[0].matchLabelExpressions[1].key: Invalid value: \"bad key\": name part must consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), "
        'allowedTopologies[2].matchLabelExpressions: Duplicate value: ""]')
    body = _replace(stack, f"{classes}/{name}", provisioner="example.com/other", parameters={"type": "ssd"},
                    reclaimPolicy="Retain", volumeBindingMode="WaitForFirstConsumer")
    assert _invalid(stack, "PUT", f"{classes}/{name}", body) == (
        f'StorageClass.storage.k8s.io "{name}" is invalid: ['
        "parameters: Forbidden: updates to parameters are forbidden., "
        "provisioner: Forbidden: updates to provisioner are forbidden., "
        "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden., "
        'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable]')
    # other fields may change
    body = _replace(stack, f"{classes}/{name}", allowVolumeExpansion=True, mountOptions=["ro"])
    code, reply = _call(stack, "PUT", f"{classes}/{name}", body)
    assert code == 200 and reply["allowVolumeExpansion"] is True, reply


def test_volume_attachment_generation_and_messages(stack: Stack, namespace: str) -> None:
    attachments = f"{STORAGE}/volumeattachments"
    created = _created(stack, attachments, {"metadata": {"name": f"{namespace}-va"}, "spec": {
        "attacher": "csi.example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}}})
    # the strategy never sets a generation ("we don't allow updates to spec"); status resets to attached: false
    assert "generation" not in created["metadata"] and created["status"] == {"attached": False}
    assert _invalid(stack, "POST", attachments, {"metadata": {"name": f"{namespace}-bad"}, "spec": {
        "attacher": "CSI_Driver", "source": {"persistentVolumeName": ""}}}) == (
        f'VolumeAttachment.storage.k8s.io "{namespace}-bad" is invalid: ['
        "spec.source.persistentVolumeName: Required value: must specify non empty persistentVolumeName, "
        'spec.nodeName: Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
        "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
        "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), "
        'spec.attacher: Invalid value: "CSI_Driver": a lowercase RFC 1123 subdomain must consist of lower case '
        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
        "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
        "[a-z0-9])?)*'), "
        "spec.source.persistentVolumeName: Invalid value: \"\": a lowercase RFC 1123 subdomain must consist of "
        "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]"
        "([-a-z0-9]*[a-z0-9])?)*')]")
    assert _invalid(stack, "POST", attachments, {"metadata": {"name": f"{namespace}-two"}, "spec": {
        "attacher": "csi.example.com", "nodeName": "n1",
        "source": {"persistentVolumeName": "pv1", "inlineVolumeSpec": {}}}}) == (
        f'VolumeAttachment.storage.k8s.io "{namespace}-two" is invalid: spec.source: Forbidden: must specify '
        "exactly one of inlineVolumeSpec and persistentVolumeName")


def test_csi_driver_name_is_a_subdomain_and_attach_required_is_immutable(stack: Stack, namespace: str) -> None:
    drivers = f"{STORAGE}/csidrivers"
    # storage validation names CSIDriver objects as DNS subdomains: 64 characters are fine (the 63-character limit
    # is for the fields that name a driver, such as a VolumeAttachment's attacher)
    name = f"{namespace}-{'d' * 64}"[:60] + ".com"
    created = _created(stack, drivers, {"metadata": {"name": name}})
    assert len(name) == 64 and created["spec"]["attachRequired"] is True
    # PrepareForCreate sets no generation; the first spec change makes it 1, a metadata change none
    assert "generation" not in created["metadata"]
    body = _replace(stack, f"{drivers}/{name}")
    body["metadata"]["labels"] = {"a": "b"}
    code, reply = _call(stack, "PUT", f"{drivers}/{name}", body)
    assert code == 200 and "generation" not in reply["metadata"], reply
    body = _replace(stack, f"{drivers}/{name}", spec={**created["spec"], "podInfoOnMount": True})
    code, reply = _call(stack, "PUT", f"{drivers}/{name}", body)
    assert code == 200 and reply["metadata"]["generation"] == 1, reply
    body = _replace(stack, f"{drivers}/{name}", spec={**created["spec"], "attachRequired": False})
    assert _invalid(stack, "PUT", f"{drivers}/{name}", body) == (
        f'CSIDriver.storage.k8s.io "{name}" is invalid: spec.attachedRequired: Invalid value: false: field is '
        "immutable")


def test_volume_attributes_class_is_served(stack: Stack, kubectl: Kubectl, namespace: str) -> None:
    classes = f"{STORAGE}/volumeattributesclasses"
    name = f"{namespace}-vac"
    created = _created(stack, classes, {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass",
                                        "metadata": {"name": name}, "driverName": "example.com/disk",
                                        "parameters": {"iops": "3000"}})
    assert created == {"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass", "metadata": {"name": name},
                       "driverName": "example.com/disk", "parameters": {"iops": "3000"}}
    rows = {line.split()[0]: line.split() for line in kubectl.run("api-resources").stdout.splitlines()[1:]}
    assert rows["volumeattributesclasses"] == ["volumeattributesclasses", "vac", "storage.k8s.io/v1", "false",
                                               "VolumeAttributesClass"]
    table = kubectl.run("get", "vac", name).stdout.splitlines()
    assert table[0].split() == ["NAME", "DRIVERNAME", "AGE"] and table[1].split()[:2] == [name, "example.com/disk"]
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-bad"}}) == (
        f'VolumeAttributesClass.storage.k8s.io "{name}-bad" is invalid: [driverName: Required value, '
        "parameters: Required value: must contain at least one key/value pair]")
    body = _replace(stack, f"{classes}/{name}", driverName="example.com/other", parameters={"iops": "1"})
    assert _invalid(stack, "PUT", f"{classes}/{name}", body) == (
        f'VolumeAttributesClass.storage.k8s.io "{name}" is invalid: ['
        "driverName: Forbidden: updates to driverName are forbidden., "
        "parameters: Forbidden: updates to parameters are forbidden.]")


# ------------------------------------------------------------ policy

def test_pod_disruption_budget_validation(stack: Stack, namespace: str) -> None:
    budgets = f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets"
    bare = _created(stack, budgets, {"metadata": {"name": "bare"}})
    assert bare["spec"] == {} and bare["metadata"]["generation"] == 1
    assert bare["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}
    message = _invalid(stack, "POST", budgets, {"metadata": {"name": "both"}, "spec": {
        "minAvailable": 1, "maxUnavailable": 1}})
    # kube prints the internal spec struct with pointer addresses here: only the path and the detail are stable
    assert message.startswith('PodDisruptionBudget.policy "both" is invalid: spec: Invalid value: ')
    assert message.endswith(": minAvailable and maxUnavailable cannot be both set")
    assert _invalid(stack, "POST", budgets, {"metadata": {"name": "bad"}, "spec": {
        "minAvailable": "150%", "selector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
        "unhealthyPodEvictionPolicy": "Never"}}) == (
        'PodDisruptionBudget.policy "bad" is invalid: ['
        'spec.minAvailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"150%"}: must not be '
        "greater than 100%, "
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn', "
        'spec.unhealthyPodEvictionPolicy: Unsupported value: "Never": supported values: "AlwaysAllow", '
        '"IfHealthyBudget"]')
    assert _invalid(stack, "POST", budgets, {"metadata": {"name": "negative"}, "spec": {"maxUnavailable": -1}}) == (
        'PodDisruptionBudget.policy "negative" is invalid: spec.maxUnavailable: Invalid value: -1: must be greater '
        "than or equal to 0")
    # the spec may change (kube 1.15+); status counts may not go negative
    body = _replace(stack, f"{budgets}/bare", spec={"minAvailable": "50%"})
    code, reply = _call(stack, "PUT", f"{budgets}/bare", body)
    assert code == 200 and reply["metadata"]["generation"] == 2, reply
    reply["status"]["expectedPods"] = -1
    assert _invalid(stack, "PUT", f"{budgets}/bare/status", reply) == (
        'PodDisruptionBudget.policy "bare" is invalid: status.expectedPods: Invalid value: -1: must be greater than '
        "or equal to 0")
    reply["status"]["expectedPods"] = 0
    reply["status"]["conditions"] = [{"type": "DisruptionAllowed", "status": "Maybe", "reason": "1"}]
    assert _invalid(stack, "PUT", f"{budgets}/bare/status", reply) == (
        'PodDisruptionBudget.policy "bare" is invalid: ['
        'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown", '
        "status.conditions[0].lastTransitionTime: Required value: must be set, "
        'status.conditions[0].reason: Invalid value: "1": a condition reason must start with alphabetic character, '
        "optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric "
        "character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "
        "'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')]")


# ------------------------------------------------------------ coordination.k8s.io

def test_lease_has_no_generation_and_drops_gated_fields(stack: Stack, namespace: str) -> None:
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    bare = _created(stack, leases, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                    "metadata": {"name": "bare"}})
    assert bare == {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": "bare", "namespace": namespace}, "spec": {}}
    # CoordinatedLeaderElection is off by default: strategy and preferredHolder are dropped
    gated = _created(stack, leases, {"metadata": {"name": "gated"}, "spec": {
        "holderIdentity": "me", "strategy": "OldestEmulationVersion", "preferredHolder": "you"}})
    assert gated["spec"] == {"holderIdentity": "me"}
    assert _invalid(stack, "POST", leases, {"metadata": {"name": "bad"}, "spec": {
        "leaseDurationSeconds": 0, "leaseTransitions": -1}}) == (
        'Lease.coordination.k8s.io "bad" is invalid: ['
        "spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, "
        "spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]")
    body = _replace(stack, f"{leases}/gated", spec={"holderIdentity": "other", "leaseDurationSeconds": 15})
    code, reply = _call(stack, "PUT", f"{leases}/gated", body)
    assert code == 200 and "generation" not in reply["metadata"], reply


# ------------------------------------------------------------ scheduling.k8s.io

def test_priority_class_defaults_limits_and_updates(stack: Stack, namespace: str) -> None:
    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    name = f"{namespace}-pc"
    created = _created(stack, classes, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                        "metadata": {"name": name}, "value": 1000})
    assert created == {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                       "value": 1000, "preemptionPolicy": "PreemptLowerPriority"}
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-high"}, "value": 1_000_000_001}) == (
        f'PriorityClass.scheduling.k8s.io "{name}-high" is invalid: value: Forbidden: maximum allowed value of a '
        "user defined priority is 1000000000")
    assert _invalid(stack, "POST", classes, {"metadata": {"name": "system-mine"}, "value": 1}) == (
        'PriorityClass.scheduling.k8s.io "system-mine" is invalid: metadata.name: Forbidden: priority class names '
        "with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority "
        "class")
    assert _invalid(stack, "POST", classes, {"metadata": {"name": "system-node-critical"}, "value": 1}) == (
        'PriorityClass.scheduling.k8s.io "system-node-critical" is invalid: metadata.name: Forbidden: priority '
        "class names with 'system-' prefix are reserved for system use only. error: value of system-node-critical "
        "PriorityClass must be 2000001000")
    assert _invalid(stack, "POST", classes, {"metadata": {"name": f"{name}-p"}, "value": 1,
                                             "preemptionPolicy": "Always"}) == (
        f'PriorityClass.scheduling.k8s.io "{name}-p" is invalid: preemptionPolicy: Unsupported value: "Always": '
        'supported values: "PreemptLowerPriority", "Never"')
    body = _replace(stack, f"{classes}/{name}", value=2000, preemptionPolicy="Never", description="now described")
    assert _invalid(stack, "PUT", f"{classes}/{name}", body) == (
        f'PriorityClass.scheduling.k8s.io "{name}" is invalid: [value: Forbidden: may not be changed in an update., '
        'preemptionPolicy: Invalid value: "Never": field is immutable]')


def test_system_priority_classes_exist(stack: Stack, kubectl: Kubectl) -> None:
    # the scheduling/bootstrap-system-priority-classes post-start hook
    for name, value, description in (
            ("system-node-critical", 2000001000,
             "Used for system critical pods that must not be moved from their current node."),
            ("system-cluster-critical", 2000000000,
             "Used for system critical pods that must run in the cluster, but can be moved to another node if "
             "necessary.")):
        code, reply = _call(stack, "GET", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}")
        assert code == 200, reply
        assert (reply["value"], reply["description"], reply["preemptionPolicy"], "globalDefault" in reply) == (
            value, description, "PreemptLowerPriority", False)
    code, raw = _raw(stack, "GET", "/healthz/poststarthook/scheduling/bootstrap-system-priority-classes")
    assert (code, raw) == (200, b"ok")


def test_only_one_global_default_priority_class(stack: Stack, namespace: str) -> None:
    classes = "/apis/scheduling.k8s.io/v1/priorityclasses"
    first, second = f"{namespace}-d1", f"{namespace}-d2"
    _created(stack, classes, {"metadata": {"name": first}, "value": 0, "globalDefault": True})
    try:
        def refused() -> dict[str, Any] | None:  # the Priority plugin reads classes from its informer
            code, reply = _call(stack, "POST", f"{classes}?dryRun=All",
                                {"metadata": {"name": second}, "value": 1, "globalDefault": True})
            return reply if code == 403 else None
        reply = wait_for(refused)
        assert (reply["reason"], reply["message"]) == (
            "Forbidden", f'priorityclasses.scheduling.k8s.io "{second}" is forbidden: PriorityClass {first} is '
            "already marked as default. Only one default can exist")
        # the default itself may be updated; another class may not become a default
        code, reply = _call(stack, "PUT", f"{classes}/{first}", _replace(stack, f"{classes}/{first}",
                                                                           description="the default"))
        assert code == 200, reply
        _created(stack, classes, {"metadata": {"name": second}, "value": 1})
        code, reply = _call(stack, "PUT", f"{classes}/{second}", _replace(stack, f"{classes}/{second}",
                                                                            globalDefault=True))
        assert code == 403 and reply["message"].endswith(f"PriorityClass {first} is already marked as default. "
                                                         "Only one default can exist"), reply
    finally:
        for name in (first, second):
            _raw(stack, "DELETE", f"{classes}/{name}")


# ------------------------------------------------------------ node.k8s.io

def test_runtime_class_handler_and_overhead(stack: Stack, namespace: str) -> None:
    classes = "/apis/node.k8s.io/v1/runtimeclasses"
    name = f"{namespace}-rc"
    # an empty handler is the DNS-label message alone: kube's Go struct has no required fields to report
    assert _invalid(stack, "POST", classes, {"metadata": {"name": name}}) == (
        f'RuntimeClass.node.k8s.io "{name}" is invalid: handler: Invalid value: "": a lowercase RFC 1123 label must '
        "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
        "character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
    # the overhead is checked as a container's limits, so the path says limits
    assert _invalid(stack, "POST", classes, {"metadata": {"name": name}, "handler": "runc",
                                             "overhead": {"podFixed": {"cpu": "-1"}},
                                             "scheduling": {"nodeSelector": {"zone": "a b"}}}) == (
        f'RuntimeClass.node.k8s.io "{name}" is invalid: [overhead.limits[cpu]: Invalid value: "-1": must be greater '
        'than or equal to 0, scheduling.nodeSelector: Invalid value: "a b": a valid label must be an empty string or '
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]")
    created = _created(stack, classes, {"metadata": {"name": name}, "handler": "runc"})
    assert "generation" not in created["metadata"]
    body = _replace(stack, f"{classes}/{name}", handler="crun")
    assert _invalid(stack, "PUT", f"{classes}/{name}", body) == (
        f'RuntimeClass.node.k8s.io "{name}" is invalid: handler: Invalid value: "crun": field is immutable')


# ------------------------------------------------------------ discovery.k8s.io

def test_endpoint_slice_encoding_generation_and_messages(stack: Stack, namespace: str) -> None:
    slices = f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"
    bare = _created(stack, slices, {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                                    "metadata": {"name": "bare"}, "addressType": "IPv4"})
    # Endpoints and Ports have no omitempty: null; the strategy sets generation 1 though there is no spec
    assert bare == {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
                    "metadata": {"name": "bare", "namespace": namespace, "generation": 1},
                    "endpoints": None, "ports": None}
    full = _created(stack, slices, {"metadata": {"name": "full"}, "addressType": "IPv4",
                                    "endpoints": [{"addresses": ["10.0.0.1"],
                                                   "deprecatedTopology": {"kubernetes.io/hostname": "n1"}}],
                                    "ports": [{"port": 80}]})
    # each endpoint's conditions struct is encoded; deprecatedTopology is not writable through v1; port defaults
    assert full["endpoints"] == [{"addresses": ["10.0.0.1"], "conditions": {}}]
    assert full["ports"] == [{"port": 80, "name": "", "protocol": "TCP"}]
    body = _replace(stack, f"{slices}/full", endpoints=[{"addresses": ["10.0.0.2"]}])
    code, reply = _call(stack, "PUT", f"{slices}/full", body)
    assert code == 200 and reply["metadata"]["generation"] == 2, reply
    body = _replace(stack, f"{slices}/full")
    body["metadata"]["annotations"] = {"a": "b"}
    code, reply = _call(stack, "PUT", f"{slices}/full", body)
    assert code == 200 and reply["metadata"]["generation"] == 2, reply  # metadata alone: no bump
    assert _invalid(stack, "POST", slices, {"metadata": {"name": "bad"}, "addressType": "IPv5", "endpoints": [
        {"addresses": [], "hints": {"forZones": [{"name": "a"}, {"name": "a"}]}}],
        "ports": [{"name": "A", "protocol": "ICMP"}, {"name": "A"}]}) == (
        'EndpointSlice.discovery.k8s.io "bad" is invalid: ['
        'addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6", '
        "endpoints[0].addresses: Required value: must contain at least 1 address, "
        'endpoints[0].hints.forZones[1].name: Duplicate value: "a", '
        'ports[0].name: Invalid value: "A": a lowercase RFC 1123 label must consist of lower case alphanumeric '
        "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), "
        'ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP", '
        'ports[1].name: Invalid value: "A": a lowercase RFC 1123 label must consist of lower case alphanumeric '
        "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
        "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), "
        'ports[1].name: Duplicate value: "A"]')
    body = _replace(stack, f"{slices}/bare", addressType="IPv6")
    assert _invalid(stack, "PUT", f"{slices}/bare", body) == (
        'EndpointSlice.discovery.k8s.io "bare" is invalid: addressType: Invalid value: "IPv6": field is immutable')


# ------------------------------------------------------------ autoscaling

def test_hpa_v1_create_without_status_and_zero_status_per_version(stack: Stack, namespace: str) -> None:
    v1 = f"/apis/autoscaling/v1/namespaces/{namespace}/horizontalpodautoscalers"
    spec = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}
    # v1's status has currentReplicas and desiredReplicas without omitempty (was: 422 status.currentReplicas:
    # Required value, for every v1 create); a status sent is reset
    created = _created(stack, v1, {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                                   "metadata": {"name": "web"}, "spec": spec,
                                   "status": {"currentReplicas": 4, "desiredReplicas": 4}})
    assert created["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    assert created["spec"] == {**spec, "minReplicas": 1, "targetCPUUtilizationPercentage": 80}
    code, v2 = _call(stack, "GET", f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/web")
    # v2: currentReplicas is omitempty, currentMetrics is not (a nil slice is written null)
    assert code == 200 and v2["status"] == {"desiredReplicas": 0, "currentMetrics": None}, v2
    assert _invalid(stack, "POST", v1, {"metadata": {"name": "bad"}, "spec": {"maxReplicas": 0}}) == (
        'HorizontalPodAutoscaler.autoscaling "bad" is invalid: ['
        "spec.maxReplicas: Invalid value: 0: must be greater than 0, "
        "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`, "
        "spec.scaleTargetRef.kind: Required value, spec.scaleTargetRef.name: Required value]")


# ------------------------------------------------------------ certificates.k8s.io

def test_csr_messages_name_no_missing_request(stack: Stack, namespace: str) -> None:
    csrs = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
    # the request is a []byte: absent it is nil (`[]byte(nil)`), and only validateCSR reports it
    assert _invalid(stack, "POST", csrs, {"metadata": {"name": f"{namespace}-a"},
                                          "spec": {"signerName": "example.com/signer"}}) == (
        f'CertificateSigningRequest.certificates.k8s.io "{namespace}-a" is invalid: ['
        "spec.request: Invalid value: []byte(nil): PEM block type must be CERTIFICATE REQUEST, "
        "spec.usages: Required value]")
    message = _invalid(stack, "POST", csrs, {"metadata": {"name": f"{namespace}-b"}, "spec": {
        "request": "", "usages": ["client auth", "client auth"], "signerName": "example.com/signer"}})
    assert message == (f'CertificateSigningRequest.certificates.k8s.io "{namespace}-b" is invalid: ['
                       "spec.request: Invalid value: []byte{}: PEM block type must be CERTIFICATE REQUEST, "
                       'spec.usages[1]: Duplicate value: "client auth"]')


# ------------------------------------------------------------ admissionregistration.k8s.io

def test_webhook_configuration_messages(stack: Stack, namespace: str) -> None:
    configs = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    name = f"{namespace}-vwc"
    hook = {"name": "check.example.com", "clientConfig": {"url": "https://hooks.example.com/check"},
            "sideEffects": "None", "admissionReviewVersions": ["v1"]}
    created = _created(stack, configs, {"metadata": {"name": name}, "webhooks": [hook]})
    assert created["webhooks"] == [{**hook, "failurePolicy": "Fail", "matchPolicy": "Equivalent",
                                    "namespaceSelector": {}, "objectSelector": {}, "timeoutSeconds": 10}]
    assert _invalid(stack, "POST", configs, {"metadata": {"name": f"{name}-bad"}, "webhooks": [
        {"name": "check", "clientConfig": {"url": "http://hooks.example.com/?x=1"}},
        {"name": "two.example.com", "clientConfig": {}, "sideEffects": "Some", "admissionReviewVersions": ["v2", "v2"],
         "timeoutSeconds": 31, "rules": [{"operations": ["*", "CREATE"], "apiVersions": ["v1"],
                                          "resources": ["pods/*", "pods/log"], "scope": "Everywhere"}]},
        {**hook, "name": "two.example.com"}]}) == (
        f'ValidatingWebhookConfiguration.admissionregistration.k8s.io "{name}-bad" is invalid: ['
        'webhooks[0].name: Invalid value: "check": should be a domain with at least three segments separated by '
        "dots, "
        "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, "
        "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired "
        "format: https://host[/path], "
        'webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL, '
        "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1, "
        'webhooks[1].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE"}: '
        "if '*' is present, must not specify other operations, "
        "webhooks[1].rules[0].apiGroups: Required value, "
        'webhooks[1].rules[0].resources[1]: Invalid value: "pods/log": if \'pods/*\' is present, must not specify '
        "pods/log, "
        'webhooks[1].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", '
        '"Namespaced", '
        'webhooks[1].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun", '
        "webhooks[1].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, "
        "webhooks[1].clientConfig: Required value: exactly one of url or service is required, "
        'webhooks[1].admissionReviewVersions[1]: Invalid value: "v2": duplicate version, '
        'webhooks[1].admissionReviewVersions: Invalid value: []string{"v2", "v2"}: must include at least one of '
        "v1, v1beta1, "
        'webhooks[2].name: Duplicate value: "two.example.com"]')
    mutating = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
    assert _invalid(stack, "POST", mutating, {"metadata": {"name": f"{name}-m"}, "webhooks": [
        {**hook, "reinvocationPolicy": "Always"}]}) == (
        f'MutatingWebhookConfiguration.admissionregistration.k8s.io "{name}-m" is invalid: '
        'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"')


def test_validating_admission_policy_and_binding_messages(stack: Stack, namespace: str) -> None:
    policies = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
    name = f"{namespace}-vap"
    # the most common mistake: no matchConstraints (was: accepted, and the policy never matched)
    assert _invalid(stack, "POST", policies, {"metadata": {"name": name}, "spec": {
        "validations": [{"expression": "true"}]}}) == (
        f'ValidatingAdmissionPolicy.admissionregistration.k8s.io "{name}" is invalid: '
        "spec.matchConstraints: Required value")
    assert _invalid(stack, "POST", policies, {"metadata": {"name": name}, "spec": {
        "paramKind": {"apiVersion": "v1"}, "matchConstraints": {}, "variables": [{"name": "my-var"}]}}) == (
        f'ValidatingAdmissionPolicy.admissionregistration.k8s.io "{name}" is invalid: ['
        "spec.paramKind.kind: Required value, spec.matchConstraints.resourceRules: Required value, "
        'spec.variables[0].name: Invalid value: "my-var": name is not a valid CEL identifier, '
        "spec.variables[0].expression: Required value: expression is not specified, "
        "spec.validations: Required value: validations or auditAnnotations must contain at least one item, "
        "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item]")
    rules = {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                                "resources": ["deployments"]}]}
    assert _invalid(stack, "POST", policies, {"metadata": {"name": name}, "spec": {
        "matchConstraints": rules, "validations": [{"expression": " ", "reason": "Teapot",
                                                    "message": "two\nlines"}]}}) == (
        f'ValidatingAdmissionPolicy.admissionregistration.k8s.io "{name}" is invalid: ['
        "spec.validations[0].expression: Required value: expression is not specified, "
        'spec.validations[0].message: Invalid value: "two\\nlines": message must not contain line breaks, '
        'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", '
        '"RequestEntityTooLarge"]')
    assert _invalid(stack, "POST", policies, {"metadata": {"name": name}, "spec": {
        "matchConstraints": rules, "matchConditions": [{"name": "c", "expression": "1 +"}],
        "validations": [{"expression": "object.spec.("}]}}) == (
        f'ValidatingAdmissionPolicy.admissionregistration.k8s.io "{name}" is invalid: ['
        'spec.matchConditions[0].expression: Invalid value: "1 +": compilation failed: ERROR: <input>:1:4: Syntax '
        "error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
        "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | 1 +\n | ...^, "
        'spec.validations[0].expression: Invalid value: "object.spec.(": compilation failed: ERROR: <input>:1:13: '
        "Syntax error: no viable alternative at input '.('\n | object.spec.(\n | ............^]")
    created = _created(stack, policies, {"metadata": {"name": name}, "spec": {
        "matchConstraints": rules, "validations": [{"expression": "true"}]}})
    assert created["spec"]["failurePolicy"] == "Fail" and created["status"] == {}
    bindings = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
    assert _invalid(stack, "POST", bindings, {"metadata": {"name": name}, "spec": {}}) == (
        f'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "{name}" is invalid: ['
        "spec.policyName: Required value, "
        "spec.validationActions: Required value: at least one validation action is required]")
    assert _invalid(stack, "POST", bindings, {"metadata": {"name": name}, "spec": {
        "policyName": name, "validationActions": ["Deny", "Warn", "Deny", "Block"]}}) == (
        f'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "{name}" is invalid: ['
        'spec.validationActions[2]: Duplicate value: "Deny", '
        'spec.validationActions[3]: Unsupported value: "Block": supported values: "Audit", "Deny", "Warn", '
        'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Deny", '
        '"Block"}: must not contain both Deny and Warn (repeating the same validation failure information in the '
        "API response and headers serves no purpose)]")


# ------------------------------------------------------------ flowcontrol.apiserver.k8s.io

def test_flowcontrol_messages_name_only_what_kube_names(stack: Stack, namespace: str) -> None:
    levels = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations"
    # LimitResponse is a struct: kube reports its empty type, not a missing limitResponse (was: both)
    assert _invalid(stack, "POST", levels, {"metadata": {"name": f"{namespace}-pl"},
                                            "spec": {"type": "Limited", "limited": {}}}) == (
        f'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "{namespace}-pl" is invalid: '
        'spec.limited.limitResponse.type: Unsupported value: "": supported values: "Queue", "Reject"')
    assert _invalid(stack, "POST", levels, {"metadata": {"name": f"{namespace}-pl"}}) == (
        f'PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io "{namespace}-pl" is invalid: '
        'spec.type: Unsupported value: "": supported values: "Exempt", "Limited"')
    schemas = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas"
    assert _invalid(stack, "POST", schemas, {"metadata": {"name": f"{namespace}-fs"}}) == (
        f'FlowSchema.flowcontrol.apiserver.k8s.io "{namespace}-fs" is invalid: '
        "spec.priorityLevelConfiguration.name: Required value: must reference a priority level")
    created = _created(stack, schemas, {"metadata": {"name": f"{namespace}-fs"},
                                        "spec": {"priorityLevelConfiguration": {"name": "global-default"}}})
    assert created["spec"]["matchingPrecedence"] == 1000 and created["status"] == {}
    assert created["metadata"]["generation"] == 1
