"""events.k8s.io/v1 and core/v1 Events are one resource served through both APIs."""

from __future__ import annotations

import json
import textwrap

from tests.e2e.conftest import Kubectl


def test_event_written_through_one_api_reads_through_the_other(kubectl: Kubectl, namespace: str):
    kubectl.run("-n", namespace, "apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: events.k8s.io/v1
        kind: Event
        metadata: {name: new-style}
        eventTime: "2026-01-01T00:00:00.000000Z"
        reportingController: example.com/ctl
        reportingInstance: ctl-1
        action: Testing
        reason: Checked
        type: Normal
        note: written as events.k8s.io
        regarding: {kind: Pod, name: p, namespace: NS}
        """).replace("NS", namespace))
    core = json.loads(kubectl.run("get", "--raw", f"/api/v1/namespaces/{namespace}/events/new-style").stdout)
    assert core["apiVersion"] == "v1"
    assert core["message"] == "written as events.k8s.io" and core["involvedObject"]["name"] == "p"
    assert core["reportingComponent"] == "example.com/ctl"

    kubectl.run("-n", namespace, "apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: v1
        kind: Event
        metadata: {name: old-style}
        involvedObject: {kind: Pod, name: q, namespace: NS}
        reason: Old
        message: written as core
        type: Warning
        """).replace("NS", namespace))
    listed = json.loads(kubectl.run("get", "--raw",
                                    f"/apis/events.k8s.io/v1/namespaces/{namespace}/events").stdout)
    by_name = {e["metadata"]["name"]: e for e in listed["items"]}
    assert "apiVersion" not in by_name["old-style"]  # a typed list's items carry no apiVersion/kind, as kube's
    old_style = json.loads(kubectl.run("get", "--raw",
                                       f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/old-style").stdout)
    assert old_style["apiVersion"] == "events.k8s.io/v1"
    assert by_name["old-style"]["note"] == "written as core" and by_name["old-style"]["regarding"]["name"] == "q"
    assert by_name["new-style"]["note"] == "written as events.k8s.io"
