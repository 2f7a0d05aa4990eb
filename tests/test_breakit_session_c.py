"""Unit tests of the break-it pass of session C (the e2e half is tests/e2e/test_breakit_session_c.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors, schema
from kapi.kinds import strategy_for
from services.admission.policy import ValidatingAdmissionPolicy
from services.gateway.warning import recorded_warnings
from tests.admission.fakes import FakeInformers, FakeNamespaces, request


def test_unknown_fields_come_in_document_order() -> None:
    # sigs.k8s.io/json's strict decoder reports unknown fields as it meets them, so kubectl's
    # `--validate=warn` prints spec.bogus before spec.containers[0].foo (was: nested objects first)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "zz": 1},
           "spec": {"bogus": 1, "containers": [{"foo": 2, "image": "", "name": "c", "securityContext": {"qq": 1}}],
                    "zlast": 3},
           "top": 1}
    assert schema.validate(pod, "", "v1", "Pod").unknown == [
        "metadata.zz", "spec.bogus", "spec.containers[0].foo", "spec.containers[0].securityContext.qq",
        "spec.zlast", "top"]
    assert pod["spec"] == {"containers": [{"image": "", "name": "c", "securityContext": {}}]}  # still dropped
    later = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"foo": 2, "name": "c"}], "bogus": 1}}
    found = schema.validate(later, "", "v1", "Pod").unknown
    assert found == ["spec.containers[0].foo", "spec.bogus"]
    with pytest.raises(errors.StatusError) as strict:
        schema.apply_field_validation(found, "Strict", kind="Pod", version="v1")
    assert strict.value.message == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                                    'unknown field "spec.containers[0].foo", unknown field "spec.bogus"')


@pytest.mark.parametrize(("kind", "field"), [("ValidatingAdmissionPolicy", "matchConstraints"),
                                             ("ValidatingAdmissionPolicyBinding", "matchResources")])
def test_exclude_resource_rules_get_the_default_scope(kind: str, field: str) -> None:
    # SetObjectDefaults_ValidatingAdmissionPolicy/_Binding run SetDefaults_Rule on excludeResourceRules too
    # (was: only resourceRules got scope "*")
    rule = {"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["*"], "resources": ["deployments"]}
    obj: dict[str, Any] = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind, "metadata": {"name": "p"},
           "spec": {field: {"resourceRules": [dict(rule)], "excludeResourceRules": [dict(rule, resourceNames=["x"])],
                            "namespaceSelector": {}}}}
    strategy_for("admissionregistration.k8s.io", kind).default(obj)
    match = obj["spec"][field]
    assert [r["scope"] for r in match["resourceRules"] + match["excludeResourceRules"]] == ["*", "*"]
    assert match["matchPolicy"] == "Equivalent" and match["objectSelector"] == {}


def _policy_plugin(binding_spec: dict[str, Any], expression: str) -> ValidatingAdmissionPolicy:
    inf = FakeInformers()
    group = "admissionregistration.k8s.io"
    plugin = ValidatingAdmissionPolicy(inf, FakeNamespaces({"demo": {}}))  # type: ignore[arg-type]
    inf.put(group, "validatingadmissionpolicies", {"metadata": {"name": "p"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {"resourceRules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE"],
                                                "resources": ["deployments", "namespaces"]}]},
        "validations": [{"expression": expression}]}})
    inf.put(group, "validatingadmissionpolicybindings", {"metadata": {"name": "b"}, "spec": {
        "policyName": "p", "validationActions": ["Deny"], **binding_spec}})
    inf.put("", "configmaps", {"metadata": {"name": "kube-root-ca.crt", "namespace": "demo"}, "data": {"ca.crt": "x"}})
    return plugin


async def test_policy_binding_without_param_ref_evaluates_with_null_params() -> None:
    # generic.CollectParams: paramKind set, binding paramRef nil -> one evaluation with params null
    # (was: every ConfigMap of the namespace became a param, kube-root-ca.crt included)
    plugin = _policy_plugin({}, "params == null")
    await plugin.validate(request("CREATE", "deployments", {"metadata": {"name": "d", "namespace": "demo"}},
                                  namespace="demo", group="apps"))


async def test_policy_errors_read_as_cel_go_and_cluster_scoped_requests_need_a_param_namespace() -> None:
    plugin = _policy_plugin({"paramRef": {"selector": {}, "parameterNotFoundAction": "Deny"}},
                               "int(params.data.max) > 0")
    deploy = request("CREATE", "deployments", {"metadata": {"name": "d", "namespace": "demo"}}, namespace="demo",
                     group="apps")
    with pytest.raises(errors.StatusError) as missing:
        await plugin.validate(deploy)
    assert missing.value.message.endswith(  # cel-go's words for a missing key (was: 'max')
        "ValidatingAdmissionPolicy 'p' with binding 'b' denied request: expression 'int(params.data.max) > 0' "
        "resulted in error: no such key: max")
    with pytest.raises(errors.StatusError) as cluster:  # a Namespace is cluster-scoped: no namespace to look in
        await plugin.validate(request("CREATE", "namespaces", {"metadata": {"name": "n"}}))
    assert cluster.value.message == (
        'namespaces "n" is forbidden: ValidatingAdmissionPolicy \'p\' with binding \'b\' denied request: failed to '
        "configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")


def test_warning_recorder_truncates_as_kubes() -> None:
    # recorder.AddWarning: the text that would pass 4096 runes turns truncation on and is still written (all
    # recorded so far replayed cut to 256 runes); later texts go in until 4096 runes are written
    # (was: the one crossing the limit was dropped, 16 of these instead of kube's 17)
    texts = [f"{i:03d}" + "w" * 247 for i in range(20)]  # 250 runes each
    written = recorded_warnings(texts)
    assert written == texts[:17]
    long = ["x" * 300 + str(i) for i in range(20)]  # the 14th passes the limit: 14 replayed at 256, 2 more
    assert recorded_warnings(long) == [t[:256] for t in long[:16]]
    assert recorded_warnings(["a", "", "b", "a"]) == ["a", "b"]  # empty and repeated texts once
    assert recorded_warnings(["é" * 4000, "ü" * 96]) == ["é" * 4000, "ü" * 96]  # runes, not bytes: fits exactly
