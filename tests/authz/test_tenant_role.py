"""The seeds' namespace-creator ClusterRole lets a tenant administer (and delegate in) the namespace she created."""

from __future__ import annotations

import pytest

from services.authz.bootstrap import CLUSTER_ROLES
from services.authz.rbac import PolicyRule
from services.authz.rules import covers


def _rules(name: str) -> list[PolicyRule]:
    return [PolicyRule.from_json(r) for r in CLUSTER_ROLES[name][0]]


def _aggregated(name: str) -> list[PolicyRule]:
    """admin/edit/view as the aggregator builds them from the system:aggregate-to-* roles."""
    chain = {"view": ["view"], "edit": ["edit", "view"], "admin": ["admin", "edit", "view"]}[name]
    return [rule for part in chain for rule in _rules(f"system:aggregate-to-{part}")]


@pytest.mark.parametrize("role", ["view", "edit", "admin"])
def test_namespace_creator_covers_kube_role(role: str) -> None:
    ok, missing = covers(_rules("namespace-creator"), _aggregated(role))
    assert ok, missing


def test_namespace_creator_still_deletes_its_namespace_but_creates_none() -> None:
    owner = _rules("namespace-creator")
    assert covers(owner, [PolicyRule.from_json({"verbs": ["delete"], "apiGroups": [""],
                                                "resources": ["namespaces"]})])[0]
    assert not covers(owner, [PolicyRule.from_json({"verbs": ["create"], "apiGroups": [""],
                                                    "resources": ["namespaces"]})])[0]
    assert not covers(owner, [PolicyRule.from_json({"verbs": ["create"], "apiGroups": ["rbac.authorization.k8s.io"],
                                                    "resources": ["clusterrolebindings"]})])[0]


def test_namespace_creator_is_admin_plus_its_namespace_and_nothing_more() -> None:
    # README: kube's admin rules plus deleting the namespace. A trial found deployments/status and jobs/status
    # writable through an extra apps/autoscaling/batch "*" rule; admin may write neither.
    allowed = [*_aggregated("admin"), PolicyRule.from_json({"verbs": ["delete", "get"], "apiGroups": [""],
                                                            "resources": ["namespaces"]})]
    ok, missing = covers(allowed, _rules("namespace-creator"))
    assert ok, missing
    owner = _rules("namespace-creator")
    for group, resource in (("apps", "deployments/status"), ("batch", "jobs/status"), ("apps", "controllerrevisions")):
        assert not covers(owner, [PolicyRule.from_json({"verbs": ["update"], "apiGroups": [group],
                                                        "resources": [resource]})])[0], resource
