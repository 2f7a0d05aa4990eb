"""A DaemonSet's ``deprecated.daemonset.template.generation`` annotation, as kube-apiserver 1.37 writes it.

kube keeps ``DaemonSetSpec.TemplateGeneration`` in the internal type only; apps/v1 carries it as that annotation
(pkg/apis/apps/v1/conversion.go Convert_v1_DaemonSet_To_apps_DaemonSet / Convert_apps_DaemonSet_To_v1_DaemonSet).
pkg/registry/apps/daemonset/strategy.go: PrepareForCreate keeps a client value of at least 1, else 1;
PrepareForUpdate keeps the stored one, plus 1 when ``spec.template`` changed; the status strategy keeps the spec.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import pytest

from kapi import errors, strategy
from kapi.k8sproto import zero
from kapi.kinds import apps, strategy_for
from kapi.resources import REGISTRY

ANNOTATION = "deprecated.daemonset.template.generation"
NOW = datetime(2026, 12, 3, tzinfo=UTC)
RESOURCE = REGISTRY.get("apps", "v1", "daemonsets")
KIND = strategy_for("apps", "DaemonSet")


def _ds(annotations: dict[str, str] | None = None, image: str = "nginx") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "web", "namespace": "d"}
    if annotations is not None:
        meta["annotations"] = annotations
    obj: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
                           "spec": {"selector": {"matchLabels": {"app": "web"}},
                                    "template": {"metadata": {"labels": {"app": "web"}},
                                                 "spec": {"containers": [{"name": "web", "image": image}]}}}}
    KIND.default(obj)
    return obj


def _created(obj: dict[str, Any]) -> dict[str, Any]:
    return strategy.prepare_for_create(obj, RESOURCE, "d", NOW)


def _updated(new: dict[str, Any], old: dict[str, Any], subresource: str = "") -> dict[str, Any]:
    return strategy.prepare_for_update(new, old, RESOURCE, subresource=subresource, now=NOW)


def test_create_writes_1_beside_the_clients_annotations():
    out = _created(_ds({"team": "a"}))
    assert out["metadata"]["annotations"] == {"team": "a", ANNOTATION: "1"}
    assert out["metadata"]["generation"] == 1
    assert _created(_ds())["metadata"]["annotations"] == {ANNOTATION: "1"}


@pytest.mark.parametrize(("given", "stored"), [("5", "5"), ("1", "1"), ("0", "1"), ("-3", "1"), ("+7", "7"),
                                               ("007", "7")])
def test_create_keeps_a_client_value_of_at_least_1(given: str, stored: str):
    assert _created(_ds({ANNOTATION: given}))["metadata"]["annotations"] == {ANNOTATION: stored}


@pytest.mark.parametrize(("given", "problem"), [("abc", "invalid syntax"), ("", "invalid syntax"),
                                                (" 1", "invalid syntax"), ("1_0", "invalid syntax"),
                                                ("9223372036854775808", "value out of range")])
def test_an_annotation_parseint_refuses_is_the_decode_error(given: str, problem: str):
    with pytest.raises(errors.StatusError) as caught:
        _created(_ds({ANNOTATION: given}))
    assert caught.value.code == 400
    assert caught.value.message == ('DaemonSet in version "v1" cannot be handled as a DaemonSet: strconv.ParseInt: '
                                    f'parsing "{given}": {problem}')


def test_a_template_change_bumps_it_with_the_generation():
    old = _created(_ds())
    new = _ds(image="nginx:2")
    out = _updated(new, old)
    assert out["metadata"]["annotations"] == {ANNOTATION: "2"}
    assert out["metadata"]["generation"] == 2


def test_a_spec_change_outside_the_template_bumps_only_the_generation():
    old = _created(_ds())
    new = copy.deepcopy(old)
    new["spec"]["minReadySeconds"] = 5
    out = _updated(new, old)
    assert out["metadata"]["annotations"] == {ANNOTATION: "1"}
    assert out["metadata"]["generation"] == 2


def test_a_metadata_only_update_keeps_it_whatever_the_client_sends():
    old = _created(_ds())
    for sent in ({"team": "b", ANNOTATION: "40"}, {"team": "b"}, {"team": "b", ANNOTATION: "0"}):
        new = copy.deepcopy(old)
        new["metadata"]["annotations"] = dict(sent)
        out = _updated(new, old)
        assert out["metadata"]["annotations"] == {"team": "b", ANNOTATION: "1"}
        assert out["metadata"]["generation"] == 1
    new = copy.deepcopy(old)
    del new["metadata"]["annotations"]
    assert _updated(new, old)["metadata"]["annotations"] == {ANNOTATION: "1"}


def test_an_update_still_parses_the_clients_value():
    old = _created(_ds())
    new = copy.deepcopy(old)
    new["metadata"]["annotations"] = {ANNOTATION: "x"}
    with pytest.raises(errors.StatusError) as caught:
        _updated(new, old)
    assert caught.value.message == ('DaemonSet in version "v1" cannot be handled as a DaemonSet: strconv.ParseInt: '
                                    'parsing "x": invalid syntax')


def test_a_status_update_keeps_the_stored_value_even_with_a_new_template():
    old = _created(_ds())
    new = _ds(annotations={ANNOTATION: "9"}, image="nginx:2")
    new["status"] = {"numberReady": 1}
    out = _updated(new, old, "status")
    assert out["metadata"]["annotations"] == {ANNOTATION: "1"}
    assert out["spec"] == old["spec"]


def test_a_stored_object_without_it_counts_from_0():
    old = _created(_ds())
    del old["metadata"]["annotations"]
    assert _updated(_ds(image="nginx:2"), old)["metadata"]["annotations"] == {ANNOTATION: "1"}
    assert _updated(copy.deepcopy(old), old)["metadata"]["annotations"] == {ANNOTATION: "0"}


def test_template_generation_reads_the_annotation():
    assert apps.template_generation({"metadata": {"annotations": {ANNOTATION: "-4"}}}) == -4
    assert apps.template_generation({"metadata": {}}) == 0


def test_the_bookmark_zero_daemonset_carries_0():
    obj = zero.zero_object("apps/v1", "DaemonSet", {"resourceVersion": "9",
                                                    "annotations": {"k8s.io/initial-events-end": "true"}})
    assert obj is not None
    assert obj["metadata"] == {"resourceVersion": "9", "annotations": {
        ANNOTATION: "0", "k8s.io/initial-events-end": "true"}}
    plain = zero.zero_object("apps/v1", "DaemonSet", {"resourceVersion": "9"})
    assert plain is not None and plain["metadata"] == {"resourceVersion": "9", "annotations": {ANNOTATION: "0"}}
    deployment = zero.zero_object("apps/v1", "Deployment", {"resourceVersion": "9"})
    assert deployment is not None and deployment["metadata"] == {"resourceVersion": "9"}
