"""Storage semantics through the whole stack with real kubectl: finalizers, object size."""

from __future__ import annotations

import json

from tests.e2e.conftest import Kubectl


def _cm(kubectl: Kubectl, namespace: str, name: str) -> dict:
    return json.loads(kubectl.run("-n", namespace, "get", "cm", name, "-o", "json").stdout)


def test_finalizers_delay_deletion_until_cleared(kubectl: Kubectl, namespace: str) -> None:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "data": {"k": "v"}}
    kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(manifest))
    raw = kubectl.run("-n", namespace, "delete", "cm", "held", "--wait=false", "-v=8", check=False)
    assert raw.returncode == 0, raw.stderr
    assert "deletionGracePeriodSeconds" in raw.stderr  # the response body is the marked object, not a Status
    held = _cm(kubectl, namespace, "held")
    assert held["metadata"]["deletionTimestamp"].endswith("Z")
    assert held["metadata"]["deletionGracePeriodSeconds"] == 0
    refused = kubectl.run("-n", namespace, "patch", "cm", "held", "--type=merge", "-p",
                          json.dumps({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}),
                          check=False)
    assert refused.returncode != 0
    assert "no new finalizers can be added if the object is being deleted" in refused.stderr
    kubectl.run("-n", namespace, "patch", "cm", "held", "--type=merge", "-p",
                json.dumps({"metadata": {"finalizers": None}}))
    gone = kubectl.run("-n", namespace, "get", "cm", "held", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_object_over_etcd_limit_is_request_entity_too_large(kubectl: Kubectl, namespace: str) -> None:
    # A ConfigMap that size is refused earlier (422, its 1 MiB data limit); an Event message has no limit of its own.
    manifest = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "big"}, "reason": "Big",
                "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace}, "message": "x" * 1_600_000}
    proc = kubectl.run("-n", namespace, "create", "-f", "-", input=json.dumps(manifest), check=False)
    assert proc.returncode != 0
    assert "InternalError" not in proc.stderr and "Internal error" not in proc.stderr, proc.stderr
    assert "too large" in proc.stderr.lower(), proc.stderr
