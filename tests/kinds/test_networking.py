"""networking.k8s.io rules that need a stored object the API would refuse today (ValidateIngressUpdate's and
ValidateNetworkPolicyUpdate's tolerance of what the old object had); the rest is end to end in
tests/e2e/test_kube_parity_groups.py."""

from __future__ import annotations

from typing import Any

from kapi.kinds import strategy_for

INGRESS = strategy_for("networking.k8s.io", "Ingress")
POLICY = strategy_for("networking.k8s.io", "NetworkPolicy")


def _ingress(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "i"}, "spec": spec}


def _fields(causes: list[Any]) -> list[str]:
    return [c.field for c in causes]


def test_ingress_update_keeps_what_the_stored_object_had() -> None:
    backend = {"service": {"name": "web", "port": {"number": 80}}}
    bad_secret = _ingress(defaultBackend=backend, tls=[{"secretName": "Not_Valid"}])
    assert _fields(INGRESS.validate(bad_secret)) == ["spec.tls[0].secretName"]
    assert INGRESS.validate_again(bad_secret, bad_secret) == []  # allowInvalidSecretName
    good = _ingress(defaultBackend=backend)
    assert _fields(INGRESS.validate_again(bad_secret, good)) == ["spec.tls[0].secretName"]

    wildcard = _ingress(rules=[{"host": "*.example.com", "http": {"paths": [{"path": "x", "pathType": "Prefix",
                                                                             "backend": backend}]}}])
    assert _fields(INGRESS.validate(wildcard)) == ["spec.rules[0].http.paths[0].path"]
    assert INGRESS.validate_again(wildcard, wildcard) == []  # allowInvalidWildcardHostRule

    label = _ingress(defaultBackend={"service": {"name": "1web", "port": {"number": 80}}})
    assert _fields(INGRESS.validate(label)) == ["spec.defaultBackend.service.name"]  # not a DNS-1035 label
    assert INGRESS.validate_again(label, label) == []  # allowRelaxedServiceNameValidation


def test_network_policy_update_keeps_stored_cidrs() -> None:
    policy = {"metadata": {"name": "p"}, "spec": {"podSelector": {}, "ingress": [
        {"from": [{"ipBlock": {"cidr": "10.0.0.0/40"}}]}]}}
    assert _fields(POLICY.validate(policy)) == ["spec.ingress[0].from[0].ipBlock.cidr"]
    assert POLICY.validate_again(policy, policy) == []
    assert _fields(POLICY.validate_again(policy, {"spec": {}})) == ["spec.ingress[0].from[0].ipBlock.cidr"]
