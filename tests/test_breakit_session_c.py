"""Unit tests of the break-it pass of session C (the e2e half is tests/e2e/test_breakit_session_c.py)."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors, schema
from kapi.kinds import strategy_for


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
