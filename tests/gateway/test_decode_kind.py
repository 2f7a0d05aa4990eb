"""decode_object's typed-decode messages: which wrong kinds are unregistered, unconvertible or another version."""

from __future__ import annotations

from typing import Any

import pytest

from kapi import errors
from kapi.resources import REGISTRY
from services.gateway import scope

NAMESPACES = REGISTRY.get("", "v1", "namespaces")
EVENTS = REGISTRY.get("", "v1", "events")
DEPLOYMENTS = REGISTRY.get("apps", "v1", "deployments")


@pytest.mark.parametrize(("resource", "api_version", "kind", "message"), [
    (NAMESPACES, "v1", "Namespace", None),
    (NAMESPACES, "v1", "Pod", 'Pod in version "v1" cannot be handled as a Namespace: converting (v1.Pod) to '
                              "(core.Namespace): unknown conversion"),
    (DEPLOYMENTS, "v1", "Pod", 'Pod in version "v1" cannot be handled as a Deployment: converting (v1.Pod) to '
                               "(apps.Deployment): unknown conversion"),
    (NAMESPACES, "v1", "Nope", 'Nope in version "v1" cannot be handled as a Namespace: no kind "Nope" is '
                               'registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30"'),
    # events.k8s.io/v1 Event and v1 Event share kube's internal type: it decodes (the API version check refuses)
    (EVENTS, "events.k8s.io/v1", "Event", None),
])
def test_typed_kind(resource: Any, api_version: str, kind: str, message: str | None) -> None:
    target = (resource.group, resource.version, resource.kind)
    if message is None:
        scope.check_typed_kind(*target, api_version, kind)
        return
    with pytest.raises(errors.StatusError) as err:
        scope.check_typed_kind(*target, api_version, kind)
    assert (err.value.code, err.value.message) == (400, message)


@pytest.mark.parametrize(("body", "summary"), [
    (b"", "<empty>"),
    (b'{"kind": 7}', '{"kind": 7}'),
    (b'{"apiVersion": "v1", "kind": 7, "metadata": {}}', '{"apiVersion": "v1", "kind": 7 ...'),
    (b"kind: 7\n", "6b696e643a20370a"),  # YAML as sent: hex
])
def test_summarize_as_kube(body: bytes, summary: str) -> None:
    assert scope._summarize(body) == summary
