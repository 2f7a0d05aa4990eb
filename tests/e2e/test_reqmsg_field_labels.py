"""Field selectors: each kind's field label conversion, as kube-apiserver 1.37 registers them.

ListResource runs every requirement through Scheme.ConvertFieldLabel (the kind's
AddFieldLabelConversionFunc in ``pkg/apis/<group>/v1/conversion.go``, else
runtime.DefaultMetaV1FieldSelectorConversion) and answers a refusal as a 400
BadRequest with the conversion's own text.
"""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from kapi.local.launcher import Stack
from tests.e2e.conftest import wait_for
from tests.e2e.test_grpc_api import rest

DEFAULT = '"{0}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def names(stack: Stack, path: str, selector: str) -> list[str]:
    status, body = rest(stack, "GET", f"{path}?fieldSelector={quote(selector)}")
    assert status == 200, body
    return sorted(i["metadata"]["name"] for i in json.loads(body)["items"])


def refusal(stack: Stack, path: str, selector: str) -> tuple[int, str, str]:
    status, body = rest(stack, "GET", f"{path}?fieldSelector={quote(selector)}")
    answer = json.loads(body)
    return status, answer["reason"], answer["message"]


def test_service_fields_select(stack: Stack) -> None:
    ns = "reqmsg-svc"
    rest(stack, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    for name, spec in (("a", {"type": "ClusterIP", "ports": [{"port": 80}]}),
                       ("b", {"type": "NodePort", "ports": [{"port": 80}]}),
                       ("c", {"clusterIP": "None", "ports": [{"port": 80}]})):
        status, body = rest(stack, "POST", f"/api/v1/namespaces/{ns}/services",
                            {"metadata": {"name": name}, "spec": spec})
        assert status == 201, body
    path = f"/api/v1/namespaces/{ns}/services"
    assert names(stack, path, "spec.type=ClusterIP") == ["a", "c"]
    assert names(stack, path, "spec.type!=ClusterIP") == ["b"]
    assert names(stack, path, "spec.clusterIP=None") == ["c"]
    assert names(stack, path, "metadata.namespace=" + ns) == ["a", "b", "c"]
    assert refusal(stack, path, "spec.ports=1") == (400, "BadRequest", "field label not supported: spec.ports")


def test_pod_spec_host_is_spec_node_name(stack: Stack) -> None:
    ns = "reqmsg-pods"
    rest(stack, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    for name, node in (("on-n1", "n1"), ("unbound", "")):
        spec = {"containers": [{"name": "c", "image": "busybox"}], **({"nodeName": node} if node else {})}
        status, body = rest(stack, "POST", f"/api/v1/namespaces/{ns}/pods", {"metadata": {"name": name}, "spec": spec})
        assert status == 201, body
    path = f"/api/v1/namespaces/{ns}/pods"
    assert names(stack, path, "spec.host=n1") == ["on-n1"]
    assert names(stack, path, "spec.host=") == ["unbound"]


@pytest.mark.parametrize(("path", "selector", "message"), [
    # cluster-scoped kinds whose conversion names no metadata.namespace
    ("/api/v1/namespaces", "metadata.namespace=x", "field label not supported: metadata.namespace"),
    ("/api/v1/nodes", "metadata.namespace=x", "field label not supported: metadata.namespace"),
    ("/apis/certificates.k8s.io/v1/certificatesigningrequests", "metadata.namespace=x",
     "field label not supported: metadata.namespace"),
    ("/apis/storage.k8s.io/v1/volumeattachments", "spec.source=x", "field label not supported: spec.source"),
    # conversions with their own texts
    ("/apis/batch/v1/jobs", "spec.parallelism=1", 'field label "spec.parallelism" not supported for Job'),
    ("/apis/resource.k8s.io/v1/resourceslices", "spec.pool=x",
     "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool"),
    # kinds without a conversion of their own: DefaultMetaV1FieldSelectorConversion
    ("/api/v1/configmaps", "foo=bar", DEFAULT.format("foo")),
    ("/apis/apps/v1/deployments", "status.replicas=1", DEFAULT.format("status.replicas")),
    ("/apis/apps/v1/statefulsets", "status.successful=1", DEFAULT.format("status.successful")),
    ("/api/v1/componentstatuses", "status=x", DEFAULT.format("status")),
])
def test_refusals_are_the_conversions_texts(stack: Stack, path: str, selector: str, message: str) -> None:
    assert refusal(stack, path, selector) == (400, "BadRequest", message)


def test_job_status_successful_counts_succeeded(stack: Stack) -> None:
    # JobToSelectableFields: strconv.Itoa(Status.Succeeded), so a Job nothing has run yet is "0"
    ns = "reqmsg-jobs"
    rest(stack, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    job = {"metadata": {"name": "j"}, "spec": {"suspend": True, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}
    status, body = rest(stack, "POST", f"/apis/batch/v1/namespaces/{ns}/jobs", job)
    assert status == 201, body
    path = f"/apis/batch/v1/namespaces/{ns}/jobs"
    assert names(stack, path, "status.successful=0") == ["j"]
    assert names(stack, path, "status.successful=1") == []


def test_events_k8s_io_has_its_own_labels(stack: Stack) -> None:
    # pkg/apis/events/v1/conversion.go: regarding.* and reportingController, renamed to the core Event's fields
    ns = "reqmsg-events"
    rest(stack, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    for name, kind in (("e-pod", "Pod"), ("e-node", "Node")):
        event = {"metadata": {"name": name}, "eventTime": "2026-01-01T00:00:00.000000Z", "action": "A",
                 "reason": "R", "type": "Normal", "reportingController": "ctl", "reportingInstance": "i",
                 "regarding": {"kind": kind, "name": "x", "namespace": ns}}
        status, body = rest(stack, "POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", event)
        assert status == 201, body
    path = f"/apis/events.k8s.io/v1/namespaces/{ns}/events"
    assert names(stack, path, "regarding.kind=Pod") == ["e-pod"]
    assert names(stack, path, "reportingController=ctl,regarding.kind!=Pod") == ["e-node"]
    assert refusal(stack, path, "involvedObject.kind=Pod") == (
        400, "BadRequest", "field label not supported: involvedObject.kind")
    # the core API keeps its own names
    assert names(stack, f"/api/v1/namespaces/{ns}/events", "involvedObject.kind=Node") == ["e-node"]
    assert refusal(stack, f"/api/v1/namespaces/{ns}/events", "regarding.kind=Pod") == (
        400, "BadRequest", "field label not supported: regarding.kind")


def test_cluster_scoped_custom_resources_have_no_metadata_namespace(stack: Stack) -> None:
    # apiextensions crConverter.ConvertFieldLabel: metadata.namespace only for a namespaced CRD
    group = "reqmsg.example.com"
    schema = {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"color": {"type": "string"}}}}}}
    for plural, scope in (("cgadgets", "Cluster"), ("ngadgets", "Namespaced")):
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": f"{plural}.{group}"},
               "spec": {"group": group, "scope": scope,
                        "names": {"plural": plural, "singular": plural[:-1], "kind": plural[:-1].capitalize()},
                        "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema,
                                      "selectableFields": [{"jsonPath": ".spec.color"}]}]}}
        status, body = rest(stack, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        assert status in (201, 409), body

    def established() -> bool:
        return all(rest(stack, "GET", f"/apis/{group}/v1/{p}")[0] == 200 for p in ("cgadgets", "ngadgets"))

    wait_for(established)
    cluster = f"/apis/{group}/v1/cgadgets"
    assert refusal(stack, cluster, "metadata.namespace=x") == (
        400, "BadRequest", "field label not supported: metadata.namespace")
    assert refusal(stack, cluster, "spec.size=1") == (400, "BadRequest", "field label not supported: spec.size")
    assert names(stack, cluster, "spec.color=red,metadata.name=a") == []
    assert names(stack, f"/apis/{group}/v1/ngadgets", "metadata.namespace=x") == []
