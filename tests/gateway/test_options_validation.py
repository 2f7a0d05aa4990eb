"""DeleteOptions and PatchOptions as kube-apiserver validates them, and a patch's name/namespace changes.

Sources: apimachinery ``pkg/apis/meta/v1/validation/validation.go`` (ValidateDeleteOptions, ValidatePatchOptions,
ValidateFieldManager, ValidateDryRun, ValidateFieldValidation), apiserver ``pkg/endpoints/handlers/delete.go``,
``patch.go`` (PatchResource, patcher.applyPatch) and ``rest.go`` (checkName),
``pkg/registry/rest/create.go`` (EnsureObjectNamespaceMatchesRequestNamespace).
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from multidict import MultiDict

from kapi import errors
from services.gateway import fieldmanager
from services.gateway.handlers import delete as delete_handler
from services.gateway.handlers import patch as patch_handler
from services.gateway.registry import deletion

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
BOTH_SET = "orphanDependents and deletionPropagation cannot be both set"
POLICIES = 'supported values: "Foreground", "Background", "Orphan", "nil"'


def _status(err: errors.StatusError) -> dict[str, Any]:
    return err.status()


def _invalid(kind: str, message: str, causes: list[dict[str, str]]) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'{kind}.meta.k8s.io "" is invalid: {message}', "reason": "Invalid",
            "details": {"group": "meta.k8s.io", "kind": kind, "causes": causes}, "code": 422}


def _scope(query: list[tuple[str, str]] | None = None, *, namespaced: bool = True, resource: str = "configmaps",
           namespace: str = "ns", name: str = "p4", verb: str = "patch") -> Any:
    q: MultiDict[str] = MultiDict(query or [])
    return SimpleNamespace(query=q, param=lambda key, default="": q.get(key, default),
                           resource=SimpleNamespace(group="", resource=resource, namespaced=namespaced),
                           info=SimpleNamespace(namespace=namespace if namespaced else "", name=name, verb=verb))


def test_orphan_dependents_with_propagation_policy_is_invalid() -> None:
    with pytest.raises(errors.StatusError) as info:
        delete_handler.check_options({"orphanDependents": False, "propagationPolicy": "Background"})
    message = f'Invalid value: "Background": {BOTH_SET}'
    assert _status(info.value) == _invalid("DeleteOptions", f"propagationPolicy: {message}", [
        {"reason": "FieldValueInvalid", "message": message, "field": "propagationPolicy"}])


def test_unknown_policy_lists_nil_and_every_error_is_kept() -> None:
    with pytest.raises(errors.StatusError) as info:
        delete_handler.check_options({"orphanDependents": True, "propagationPolicy": "Sideways",
                                      "dryRun": ["All", "x"]})
    both = f'Invalid value: "Sideways": {BOTH_SET}'
    unsupported = f'Unsupported value: "Sideways": {POLICIES}'
    dry = 'Unsupported value: []string{"All", "x"}: supported values: "All"'
    assert _status(info.value) == _invalid(
        "DeleteOptions", f"[propagationPolicy: {both}, propagationPolicy: {unsupported}, dryRun: {dry}]", [
            {"reason": "FieldValueInvalid", "message": both, "field": "propagationPolicy"},
            {"reason": "FieldValueNotSupported", "message": unsupported, "field": "propagationPolicy"},
            {"reason": "FieldValueNotSupported", "message": dry, "field": "dryRun"}])


@pytest.mark.parametrize("options", [{}, {"propagationPolicy": "Orphan"}, {"orphanDependents": True},
                                     {"dryRun": ["All"]}, {"dryRun": []}, {"orphanDependents": None,
                                                                          "propagationPolicy": "Foreground"}])
def test_valid_delete_options(options: dict[str, Any]) -> None:
    delete_handler.check_options(options)


def test_the_garbage_collection_finalizer_check_is_the_same_validation() -> None:
    with pytest.raises(errors.StatusError) as info:
        deletion.gc_finalizer({"propagationPolicy": ""})
    assert info.value.message == f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: ' \
                                 f'"": {POLICIES}'


@pytest.mark.parametrize(("query", "expected"), [
    ([("orphanDependents", "1")], {"orphanDependents": True}),
    ([("orphanDependents", "")], {"orphanDependents": True}),
    ([("orphanDependents", "FALSE")], {"orphanDependents": False}),
    ([("orphanDependents", "0"), ("propagationPolicy", "")], {"orphanDependents": False, "propagationPolicy": ""}),
    ([("dryRun", "All"), ("dryRun", "x"), ("gracePeriodSeconds", "7")], {"dryRun": ["All", "x"],
                                                                       "gracePeriodSeconds": 7}),
    ([("labelSelector", "a=b")], {}),
])
def test_options_from_the_query(query: list[tuple[str, str]], expected: dict[str, Any]) -> None:
    assert delete_handler.options_from_query(_scope(query)) == expected


def test_query_options_both_set_are_refused() -> None:
    options = delete_handler.options_from_query(_scope([("orphanDependents", "false"),
                                                        ("propagationPolicy", "Foreground")]))
    with pytest.raises(errors.StatusError) as info:
        delete_handler.check_options(options)
    assert info.value.code == 422 and info.value.message.endswith(f'Invalid value: "Foreground": {BOTH_SET}')


def test_force_on_a_non_apply_patch_is_forbidden() -> None:
    for value in ("true", "false", ""):
        with pytest.raises(errors.StatusError) as info:
            patch_handler.validate_patch_options(_scope([("force", value)]), MERGE)
        assert _status(info.value) == _invalid(
            "PatchOptions", "force: Forbidden: may not be specified for non-apply patch",
            [{"reason": "FieldValueForbidden", "message": "Forbidden: may not be specified for non-apply patch",
              "field": "force"}])


def test_apply_without_field_manager_is_required_value() -> None:
    with pytest.raises(errors.StatusError) as info:
        patch_handler.validate_patch_options(_scope([("force", "true")]), APPLY)
    assert _status(info.value) == _invalid(
        "PatchOptions", "fieldManager: Required value: is required for apply patch",
        [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
          "field": "fieldManager"}])
    patch_handler.validate_patch_options(_scope([("force", "true"), ("fieldManager", "me")]), APPLY)


def test_patch_options_errors_in_kube_order() -> None:
    query = [("dryRun", "x"), ("fieldValidation", "Bogus"), ("fieldManager", "a\nb")]
    with pytest.raises(errors.StatusError) as info:
        patch_handler.validate_patch_options(_scope(query), APPLY)
    manager = 'Invalid value: "a\\nb": invalid character U+000A (at position 1)'
    dry = 'Unsupported value: []string{"x"}: supported values: "All"'
    directive = 'Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"'
    assert _status(info.value)["message"] == (
        f'PatchOptions.meta.k8s.io "" is invalid: [fieldManager: {manager}, dryRun: {dry}, '
        f"fieldValidation: {directive}]")
    assert [c["reason"] for c in _status(info.value)["details"]["causes"]] == [
        "FieldValueInvalid", "FieldValueNotSupported", "FieldValueNotSupported"]


def test_patch_options_valid() -> None:
    patch_handler.validate_patch_options(_scope([("dryRun", "All"), ("fieldValidation", "Strict")]), MERGE)


def test_apply_field_manager_required_in_the_field_manager_too() -> None:
    scope = _scope()
    scope.request = SimpleNamespace(headers={})
    with pytest.raises(errors.StatusError) as info:
        fieldmanager.manager(scope, required=True)
    assert info.value.code == 422 and info.value.message == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch')


def test_patched_name_must_match_the_url() -> None:
    for name, message in (("p9", "the name of the object (p9) does not match the name on the URL (p4)"),
                          ("", "the name of the object (p4 based on URL) was undeterminable: name must be provided")):
        with pytest.raises(errors.StatusError) as info:
            patch_handler.check_identity(_scope(), {"metadata": {"name": name, "namespace": "ns"}})
        assert _status(info.value) == {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "BadRequest", "code": 400}


def test_patched_namespace() -> None:
    with pytest.raises(errors.StatusError) as info:
        patch_handler.check_identity(_scope(), {"metadata": {"name": "p4", "namespace": "other"}})
    assert (info.value.code, info.value.message) == (
        400, "the namespace of the provided object does not match the namespace sent on the request")
    emptied: dict[str, Any] = {"metadata": {"name": "p4"}}
    patch_handler.check_identity(_scope(), emptied)
    assert emptied["metadata"]["namespace"] == "ns"  # none is the request's


def test_a_cluster_scoped_object_drops_a_patched_namespace() -> None:
    for resource in ("clusterroles", "namespaces"):
        obj: dict[str, Any] = {"metadata": {"name": "p4", "namespace": "x"}}
        patch_handler.check_identity(_scope(namespaced=resource == "namespaces", resource=resource), obj)
        assert obj["metadata"] == {"name": "p4"}
