"""APIService knowledge (kapi/apiregistration.py): discovery order, kube's priority table, ValidateAPIService."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from kapi import apiregistration
from kapi.apiregistration import Entry, aggregated_order, entries_for, legacy_order
from kapi.kinds import strategy_for


def test_builtin_legacy_order_is_kube_apiservers() -> None:
    # What kube-apiserver's /apis lists for the same groups (apiregistration first, then by groupPriorityMinimum,
    # ties by APIService name: v1.admissionregistration... before v1.apiextensions...).
    served = {"": ["v1"], "apps": ["v1"], "batch": ["v1"], "apiextensions.k8s.io": ["v1"], "policy": ["v1"],
              "admissionregistration.k8s.io": ["v1"], "events.k8s.io": ["v1"], "apiregistration.k8s.io": ["v1"],
              "flowcontrol.apiserver.k8s.io": ["v1"], "rbac.authorization.k8s.io": ["v1"]}
    assert [g for g, _ in legacy_order(entries_for(served))] == [
        "apiregistration.k8s.io", "apps", "events.k8s.io", "batch", "policy", "rbac.authorization.k8s.io",
        "admissionregistration.k8s.io", "apiextensions.k8s.io", "flowcontrol.apiserver.k8s.io"]


def test_crd_groups_come_after_builtins_and_sort_by_apiservice_name_in_legacy_and_group_name_in_aggregated() -> None:
    served = {"apps": ["v1"], "zeta.example.com": ["v1"], "alpha.example.com": ["v1alpha1"]}
    entries = entries_for(served, crd_groups=["zeta.example.com", "alpha.example.com"])
    # legacy: APIService names "v1.zeta.example.com" < "v1alpha1.alpha.example.com"
    assert [g for g, _ in legacy_order(entries)][1:] == ["apps", "zeta.example.com", "alpha.example.com"]
    # aggregated: the group name breaks the tie; apiregistration.k8s.io has no table entry (1000, 15)
    entries.append(Entry("apiregistration.k8s.io", "v1", *apiregistration.DEFAULT_PRIORITY))
    assert [g for g, _ in aggregated_order(entries)] == [
        "apps", "alpha.example.com", "apiregistration.k8s.io", "zeta.example.com"]


@pytest.mark.parametrize(("versions", "expected"), [
    # equal versionPriority (CRDs: 100): kube's version order
    ([("v1alpha1", 100), ("v1", 100), ("v1beta2", 100), ("v2", 100), ("foo", 100), ("v1beta1", 100)],
     ["v2", "v1", "v1beta2", "v1beta1", "v1alpha1", "foo"]),
    # versionPriority wins over the version string
    ([("v1", 15), ("v2beta1", 9), ("v2", 30)], ["v2", "v1", "v2beta1"]),
    ([("v1alpha1", 20), ("v1", 10)], ["v1alpha1", "v1"]),
])
def test_versions_by_priority_then_kube_version_order(versions: list[tuple[str, int]], expected: list[str]) -> None:
    entries = [Entry("g.example.com", v, 1000, p) for v, p in versions]
    assert legacy_order(entries)[1] == ("g.example.com", expected)
    assert aggregated_order(entries) == [("g.example.com", expected)]


def test_group_position_follows_its_highest_priority() -> None:
    entries = [Entry("a.example.com", "v1", 100, 15), Entry("b.example.com", "v1", 500, 15),
               Entry("a.example.com", "v2", 900, 15)]
    assert [g for g, _ in aggregated_order(entries)] == ["a.example.com", "b.example.com"]
    assert [g for g, _ in legacy_order(entries)][1:] == ["a.example.com", "b.example.com"]


def test_apiservice_objects_override_the_table_and_remote_ones_are_added() -> None:
    objs = [{"metadata": {"name": "v1.apps"}, "spec": {"group": "apps", "version": "v1",
                                                      "groupPriorityMinimum": 10, "versionPriority": 15}},
            {"metadata": {"name": "v1alpha1.wardle.example.com"},
             "spec": {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 20000,
                      "versionPriority": 1, "service": {"namespace": "w", "name": "api"}}},
            {"metadata": {"name": "v9.unserved.example.com"},  # local but not served: not in discovery
             "spec": {"group": "unserved.example.com", "version": "v9", "groupPriorityMinimum": 20000,
                      "versionPriority": 1}}]
    order = legacy_order(entries_for({"apps": ["v1"], "batch": ["v1"]}, objs))
    assert order == [("apiregistration.k8s.io", ["v1"]), ("wardle.example.com", ["v1alpha1"]), ("batch", ["v1"]),
                     ("apps", ["v1"])]


def test_local_apiservice_shape() -> None:
    assert apiregistration.local_apiservice("apps", "v1", apiregistration.PRIORITIES[("apps", "v1")], "onstart") == {
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1.apps", "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}},
        "spec": {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15}}
    assert apiregistration.local_apiservice("", "v1", (18000, 1), "onstart")["metadata"]["name"] == "v1."


CA = base64.b64encode(b"x" * 12).decode()


def _svc(name: str = "v1alpha1.wardle.example.com", **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"group": "wardle.example.com", "version": "v1alpha1", "groupPriorityMinimum": 1000,
                            "versionPriority": 15, "service": {"namespace": "w", "name": "api", "port": 443}}
    base.update(spec)
    return {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name},
            "spec": {k: v for k, v in base.items() if v is not None}}


@pytest.mark.parametrize(("obj", "expected"), [
    (_svc(), []),
    (_svc("v1.", group=None, version="v1", service=None), []),
    (_svc("wrong"), [("metadata.name",
                      'Invalid value: "wrong": must be `spec.version+"."+spec.group`: "v1alpha1.wardle.example.com"')]),
    (_svc("v2.", group=None, version="v2", service=None),
     [("spec.group", "Required value: only v1 may have an empty group and it better be legacy kube")]),
    (_svc(groupPriorityMinimum=0), [("spec.groupPriorityMinimum",
                                     "Invalid value: 0: must be positive and less than 20000")]),
    (_svc(groupPriorityMinimum=20001), [("spec.groupPriorityMinimum",
                                         "Invalid value: 20001: must be positive and less than 20000")]),
    (_svc(groupPriorityMinimum=20000, versionPriority=1000), []),
    (_svc(versionPriority=1001),
     [("spec.versionPriority", "Invalid value: 1001: must be positive and less than 1000")]),
    (_svc(versionPriority=-1), [("spec.versionPriority", "Invalid value: -1: must be positive and less than 1000")]),
    (_svc(caBundle=CA, insecureSkipTLSVerify=True),
     [("spec.insecureSkipTLSVerify", "Invalid value: true: may not be true if caBundle is present")]),
    (_svc(service={"port": 443}), [("spec.service.namespace", "Required value"),
                                   ("spec.service.name", "Required value")]),
    (_svc(service={"namespace": "w", "name": "api", "port": 0}),
     [("spec.service.port", "Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive")]),
    (_svc(service={"namespace": "w", "name": "api", "port": 65536}),
     [("spec.service.port", "Invalid value: 65536: port is not valid: must be between 1 and 65535, inclusive")]),
    (_svc("v1.apps", group="apps", version="v1", service=None, caBundle=CA, insecureSkipTLSVerify=True),
     [("spec.caBundle", 'Invalid value: "12 bytes": local APIServices may not have a caBundle'),
      ("spec.insecureSkipTLSVerify", "Invalid value: true: local APIServices may not have insecureSkipTLSVerify")]),
    (_svc("v1.Bad_Group", group="Bad_Group", version="v1"),
     [("spec.group", 'Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case '
                     "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
                     "(e.g. 'example.com', regex used for validation is "
                     "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
])
def test_validate_apiservice(obj: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    got = [(c.field, c.message) for c in strategy_for("apiregistration.k8s.io", "APIService").validate(obj)]
    assert got == expected
