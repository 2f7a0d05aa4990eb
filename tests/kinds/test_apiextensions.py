"""CustomResourceDefinition defaults and strategy (kapi.kinds.apiextensions) against kube's defaults.go/strategy.go."""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from kapi import kinds, strategy
from kapi.resources import REGISTRY

CRDS = REGISTRY.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def crd(**spec) -> dict:
    base = {"group": "e.com", "scope": "Namespaced", "names": {"plural": "ws", "kind": "W"},
            "versions": [{"name": "v1", "served": True, "storage": False},
                         {"name": "v2", "served": True, "storage": True}]}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "ws.e.com"}, "spec": {**base, **spec}}


def test_defaults_list_kind_singular_conversion_and_webhook_port():
    strat = kinds.strategy_for("apiextensions.k8s.io", "CustomResourceDefinition")
    obj = crd()
    strat.default(obj)
    assert obj["spec"]["names"] == {"plural": "ws", "kind": "W", "singular": "w", "listKind": "WList"}
    assert obj["spec"]["conversion"] == {"strategy": "None"}
    hooked = crd(conversion={"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {
        "service": {"namespace": "n", "name": "s"}}}}, names={"plural": "ws", "kind": "W", "listKind": "Ws"})
    strat.default(hooked)
    assert hooked["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443
    assert hooked["spec"]["names"]["listKind"] == "Ws"  # given values stay


def test_create_starts_from_the_zero_status_with_the_storage_version():
    obj = crd()
    obj["status"] = {"storedVersions": ["v0"], "conditions": [{"type": "Established", "status": "True"}]}
    obj["metadata"]["finalizers"] = ["a/b"]
    out = strategy.prepare_for_create(obj, CRDS, "", NOW)
    assert out["status"] == {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
                             "storedVersions": ["v2"]}
    assert list(out["status"]) == ["conditions", "acceptedNames", "storedVersions"]  # Go's field order
    assert out["metadata"]["finalizers"] == ["a/b"]  # nothing added at create
    assert out["metadata"]["generation"] == 1


def test_update_keeps_status_and_records_a_new_storage_version():
    old = strategy.prepare_for_create(crd(), CRDS, "", NOW)
    old["metadata"]["resourceVersion"] = "5"
    new = copy.deepcopy(old)
    new["status"] = {"storedVersions": []}  # ignored on the main resource
    new["spec"]["versions"] = [{"name": "v1", "served": True, "storage": True},
                               {"name": "v2", "served": True, "storage": False}]
    out = strategy.prepare_for_update(new, old, CRDS)
    assert out["status"]["storedVersions"] == ["v2", "v1"]
    assert out["metadata"]["generation"] == 2
