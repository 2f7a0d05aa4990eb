"""The name admission attributes carry (AdmissionRequest.review_name): webhooks' and policies' request.name.

kube's create handler names the attributes ``ObjectName(obj)`` (empty for a generateName create) and
``rest.AdmissionToValidateObjectFunc`` fills in the generated name for validating admission; errors
(``extractResourceName``) alone fall back to the generateName.
"""

from __future__ import annotations

from typing import Any

from services.admission import webhooks
from services.admission.matching import request_variable
from services.admission.policy import ValidatingAdmissionPolicy
from tests.admission.fakes import pod, request


def _review_name(req: Any) -> str | None:
    sent = webhooks._review(req, webhooks.Webhook("h.example.com", "cfg", {}, False), "u-1")["request"]
    return sent.get("name")


def test_a_generate_name_create_has_no_name_while_mutating() -> None:
    req = request("CREATE", "configmaps", {"metadata": {"generateName": "cm-"}})
    assert req.review_name == ""
    assert _review_name(req) is None  # omitempty
    assert request_variable(req)["name"] == ""  # policies' and matchConditions' CEL request.name
    assert req.name == "cm-"  # what Forbidden messages name (kube's extractResourceName)


def test_validating_admission_sees_the_generated_name() -> None:
    req = request("CREATE", "configmaps", {"metadata": {"generateName": "cm-", "name": "cm-x7k2p"}})
    assert req.review_name == "cm-x7k2p"
    assert _review_name(req) == "cm-x7k2p"
    assert request_variable(req)["name"] == "cm-x7k2p"


def test_updates_and_deletes_carry_the_url_name() -> None:
    req = request("DELETE", "pods", None, old=pod())
    assert req.review_name == "web" and _review_name(req) == "web"


def test_resource_names_match_never_the_generate_name() -> None:
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"],
            "resourceNames": ["cm-"]}
    req = request("CREATE", "configmaps", {"metadata": {"generateName": "cm-"}})
    assert not ValidatingAdmissionPolicy._rule(rule, req)
    named = request("CREATE", "configmaps", {"metadata": {"name": "cm-"}})
    assert ValidatingAdmissionPolicy._rule(rule, named)


def test_the_review_object_is_in_kube_s_key_order() -> None:
    req = request("CREATE", "configmaps", {"data": {"z": "1", "a": "2"}, "metadata": {"name": "cm"},
                                           "kind": "ConfigMap", "apiVersion": "v1"})
    sent = webhooks._review(req, webhooks.Webhook("h.example.com", "cfg", {}, False), "u-1")["request"]
    assert list(sent["object"]) == ["kind", "apiVersion", "metadata", "data"]
    assert list(sent["object"]["data"]) == ["a", "z"]
    assert list(req.object) == ["data", "metadata", "kind", "apiVersion"]  # the request itself is untouched
