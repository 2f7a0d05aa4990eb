"""Small kube-parity rows of issue #17 (docs/kube-parity.md), each against kube 1.37's source:

- CustomResourceDefinition ``/status``: statusStrategy.PrepareForUpdate
  (apiextensions-apiserver ``pkg/registry/customresourcedefinition/strategy.go``) resets the new ObjectMeta
  from itself, so labels, annotations, finalizers and ownerReferences change with the request; a Deployment's
  ``/status`` keeps the stored labels only (deploymentStatusStrategy).
- StatefulSet: ValidatePodTemplateSpecForStatefulSet (``pkg/apis/apps/validation/validation.go``) leaves the
  template's PodSpec unvalidated (a TODO) but checks the selector match, the pod-specific annotations, the
  ``restartPolicy`` Always and no ``activeDeadlineSeconds``; the template is still defaulted.
- ValidatePodSpec's dnsConfig, readinessGates and hostAliases checks (``pkg/apis/core/validation/validation.go``
  validatePodDNSConfig, validateReadinessGates, ValidateHostAliases), for Pods and every pod template.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from kapi import strategy
from kapi.kinds import strategy_for
from kapi.resources import REGISTRY

CRDS = REGISTRY.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
DEPLOYMENTS = REGISTRY.get("apps", "v1", "deployments")
NOW = datetime(2026, 1, 1, tzinfo=UTC)
OWNER = [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-1"}]


def _crd() -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ws.e.com", "labels": {"a": "1"}, "annotations": {"n": "1"}},
            "spec": {"group": "e.com", "scope": "Namespaced", "names": {"plural": "ws", "kind": "W"},
                     "versions": [{"name": "v1", "served": True, "storage": True}]}}


def _changed_metadata(obj: dict) -> dict:
    new = copy.deepcopy(obj)
    meta = new["metadata"]
    meta["labels"] = {"a": "2"}
    meta.pop("annotations")
    meta["finalizers"] = ["e.com/keep"]
    meta["ownerReferences"] = OWNER
    return new


def test_crd_status_update_takes_the_requests_labels_annotations_finalizers_and_owners():
    old = strategy.prepare_for_create(_crd(), CRDS, "", NOW)
    old["metadata"]["resourceVersion"] = "5"
    new = _changed_metadata(old)
    new["spec"]["scope"] = "Cluster"  # still reset: spec comes from the stored object
    new["status"]["storedVersions"] = ["v1", "v0"]
    out = strategy.prepare_for_update(new, old, CRDS, subresource="status")
    meta = out["metadata"]
    assert meta["labels"] == {"a": "2"}
    assert "annotations" not in meta
    assert meta["finalizers"] == ["e.com/keep"]
    assert meta["ownerReferences"] == OWNER
    assert out["spec"]["scope"] == "Namespaced"
    assert out["status"]["storedVersions"] == ["v1", "v0"]
    assert meta["generation"] == 1  # BeforeUpdate keeps the stored generation


def test_crd_main_resource_update_still_keeps_the_stored_status():
    old = strategy.prepare_for_create(_crd(), CRDS, "", NOW)
    new = _changed_metadata(old)
    new["status"]["storedVersions"] = ["v0"]
    out = strategy.prepare_for_update(new, old, CRDS)
    assert out["metadata"]["labels"] == {"a": "2"}
    assert out["status"]["storedVersions"] == ["v1"]


def test_deployment_status_update_keeps_only_the_stored_labels():
    # deploymentStatusStrategy.PrepareForUpdate resets spec and labels; annotations, finalizers and
    # ownerReferences are the request's (every kind's rule: tests/kinds/test_status_metadata.py)
    old = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": "d", "namespace": "n", "labels": {"a": "1"}, "annotations": {"n": "1"},
                        "generation": 1, "resourceVersion": "3"},
           "spec": {"selector": {"matchLabels": {"a": "1"}}}, "status": {}}
    out = strategy.prepare_for_update(_changed_metadata(old), old, DEPLOYMENTS, subresource="status")
    meta = out["metadata"]
    assert meta["labels"] == {"a": "1"}
    assert "annotations" not in meta
    assert meta["finalizers"] == ["e.com/keep"]
    assert meta["ownerReferences"] == OWNER


def _statefulset(pod_spec: dict, labels: dict | None = None) -> dict:
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "n"},
            "spec": {"selector": {"matchLabels": {"app": "db"}},
                     "template": {"metadata": {"labels": {"app": "db"} if labels is None else labels},
                                  "spec": pod_spec}}}


def _causes(obj: dict) -> list[tuple[str, str]]:
    sts = strategy_for("apps", "StatefulSet")
    sts.default(obj)
    return [(c.field, c.message) for c in sts.validate(obj)]


def test_statefulset_template_pod_spec_is_not_validated_but_defaulted():
    bad = {"containers": [{"name": "Bad_Name", "ports": [{"containerPort": 0}],
                           "volumeMounts": [{"name": "missing", "mountPath": "/m"}]}],
           "dnsPolicy": "Nowhere"}
    obj = _statefulset(bad)
    assert _causes(obj) == []
    container = obj["spec"]["template"]["spec"]["containers"][0]
    assert container["terminationMessagePath"] == "/dev/termination-log"  # defaults still run
    assert container["ports"][0]["protocol"] == "TCP"
    assert _causes(_statefulset({})) == []  # no containers at all: kube's TODO lets it through


def test_statefulset_template_still_checks_selector_restart_policy_and_active_deadline():
    pod_spec = {"containers": [{"name": "c", "image": "x"}], "restartPolicy": "Never", "activeDeadlineSeconds": 5}
    assert _causes(_statefulset(pod_spec, labels={"app": "other"})) == [
        ("spec.template.metadata.labels",
         'Invalid value: map[string]string{"app":"other"}: `selector` does not match template `labels`'),
        ("spec.template.spec.restartPolicy", 'Unsupported value: "Never": supported values: "Always"'),
        ("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in StatefulSet is not "
                                                     "Supported")]


def test_other_workloads_still_validate_the_template_pod_spec():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                      "metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c"}]}}}}
    kind = strategy_for("apps", "Deployment")
    kind.default(deployment)
    assert ("spec.template.spec.containers[0].image", "Required value") in [
        (c.field, c.message) for c in kind.validate(deployment)]


SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
                 "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
UNDERSCORE_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or "
                  "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                  "validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')")
IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
QUALIFIED_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                 "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
                 "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def _pod_causes(**spec) -> list[tuple[str, str]]:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"},
           "spec": {"containers": [{"name": "c", "image": "x"}], **spec}}
    kind = strategy_for("", "Pod")
    kind.default(pod)
    return [(c.field, c.message) for c in kind.validate(pod)]


def test_dns_config_nameservers_searches_and_options():
    searches = ["_sip._tcp.example.com", ".", "trailing.dot.", "Bad_Case.com"]
    assert _pod_causes(dnsConfig={"nameservers": ["1.1.1.1", "2001:DB8::1", "010.0.0.1", "nope"],
                                  "searches": searches, "options": [{"name": "ndots", "value": "2"}, {"value": "1"}]}
                       ) == [
        ("spec.dnsConfig.nameservers", 'Invalid value: []string{"1.1.1.1", "2001:DB8::1", "010.0.0.1", "nope"}: '
                                       "must not have more than 3 nameservers"),
        ("spec.dnsConfig.nameservers[2]", 'Invalid value: "010.0.0.1": must not have leading 0s'),
        ("spec.dnsConfig.nameservers[3]", f'Invalid value: "nope": {IP_MSG}'),
        ("spec.dnsConfig.searches[3]", f'Invalid value: "Bad_Case.com": {UNDERSCORE_MSG}'),
        ("spec.dnsConfig.options[1]", "Required value: must not be empty")]


def test_dns_config_search_limits():
    many = [f"s{i}.example.com" for i in range(33)]
    causes = _pod_causes(dnsConfig={"searches": many})
    assert [(f, m.split(": ")[-1]) for f, m in causes] == [("spec.dnsConfig.searches", "must not have more than 32 "
                                                                                         "search paths")]
    long = ["a" * 63 + "." + "b" * 63 + "." + "c" * 63 + "." + "d" * 61] * 9  # 9 x 253 characters, joined 2285
    causes = _pod_causes(dnsConfig={"searches": long})
    assert [(f, m.split(": ")[-1]) for f, m in causes] == [
        ("spec.dnsConfig.searches", "must not have more than 2048 characters (including spaces) in the search list")]


def test_dns_policy_none_needs_a_config_with_a_nameserver():
    assert _pod_causes(dnsPolicy="None") == [
        ("spec.dnsConfig", "Required value: must provide `dnsConfig` when `dnsPolicy` is None")]
    assert _pod_causes(dnsPolicy="None", dnsConfig={"searches": ["Bad"]}) == [
        ("spec.dnsConfig.nameservers", "Required value: must provide at least one DNS nameserver when `dnsPolicy` "
                                       "is None")]
    assert _pod_causes(dnsPolicy="None", dnsConfig={"nameservers": ["10.0.0.10"]}) == []


def test_readiness_gates_and_host_aliases():
    assert _pod_causes(readinessGates=[{"conditionType": "example.com/ready"}, {"conditionType": "bad type"}],
                       hostAliases=[{"ip": "10.1.2.3", "hostnames": ["foo.local", "Foo"]},
                                    {"ip": "::ffff:10.1.2.3", "hostnames": ["bar.local."]}, {"ip": "x"}]) == [
        ("spec.readinessGates[1].conditionType", f'Invalid value: "bad type": {QUALIFIED_MSG}'),
        ("spec.hostAliases[0].hostnames[1]", f'Invalid value: "Foo": {SUBDOMAIN_MSG}'),
        ("spec.hostAliases[1].ip", 'Invalid value: "::ffff:10.1.2.3": must not be an IPv4-mapped IPv6 address'),
        ("spec.hostAliases[1].hostnames[0]", f'Invalid value: "bar.local.": {SUBDOMAIN_MSG}'),
        ("spec.hostAliases[2].ip", f'Invalid value: "x": {IP_MSG}')]


def test_templates_get_the_same_pod_spec_checks():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "n"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {
                      "metadata": {"labels": {"app": "d"}},
                      "spec": {"containers": [{"name": "c", "image": "x"}], "dnsPolicy": "None"}}}}
    kind = strategy_for("apps", "Deployment")
    kind.default(deployment)
    assert [(c.field, c.message) for c in kind.validate(deployment)] == [
        ("spec.template.spec.dnsConfig", "Required value: must provide `dnsConfig` when `dnsPolicy` is None")]
