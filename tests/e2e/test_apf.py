"""API Priority and Fairness through Envoy: default objects, Dangling, PF headers, debug dumps, readyz detail."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from email.message import Message

from kapi.local.launcher import Stack

from .conftest import TOKENS, Kubectl

FLOW_SCHEMAS = ["catch-all", "endpoint-controller", "exempt", "global-default", "kube-controller-manager",
                "kube-scheduler",
                "kube-system-service-accounts", "probes", "service-accounts", "system-leader-election",
                "system-node-high", "system-nodes", "workload-leader-election"]
PRIORITY_LEVELS = ["catch-all", "exempt", "global-default", "leader-election", "node-high", "system",
                   "workload-high", "workload-low"]


def names(kubectl: Kubectl, resource: str) -> list[str]:
    return kubectl.run("get", resource, "-o", "jsonpath={.items[*].metadata.name}").stdout.split()


def uid(kubectl: Kubectl, resource: str, name: str) -> str:
    return kubectl.run("get", resource, name, "-o", "jsonpath={.metadata.uid}").stdout


def request(stack: Stack, path: str, token: str | None = None) -> tuple[int, Message, str]:
    """GET ``path`` through Envoy as a token user, or as the admin (client certificate) when ``token`` is None."""
    context = ssl.create_default_context(cafile=str(stack.pki.ca_cert))
    headers = {}
    if token is None:
        context.load_cert_chain(str(stack.pki.admin_cert), str(stack.pki.admin_key))
    else:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(stack.url + path, headers=headers), context=context,
                                    timeout=30) as response:
            return response.status, response.headers, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read().decode()


def test_default_objects_exist_with_autoupdate_annotation(kubectl: Kubectl) -> None:
    assert names(kubectl, "flowschemas") == FLOW_SCHEMAS
    assert names(kubectl, "prioritylevelconfigurations") == PRIORITY_LEVELS
    schema = json.loads(kubectl.run("get", "flowschema", "exempt", "-o", "json").stdout)
    assert schema["metadata"]["annotations"]["apf.kubernetes.io/autoupdate-spec"] == "true"
    assert schema["spec"]["rules"][0]["subjects"] == [{"kind": "Group", "group": {"name": "system:masters"}}]
    level = json.loads(kubectl.run("get", "prioritylevelconfiguration", "workload-low", "-o", "json").stdout)
    assert level["spec"]["limited"]["nominalConcurrencyShares"] == 100


def test_dangling_condition_on_a_schema_without_its_level(kubectl: Kubectl) -> None:
    manifest = {
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
        "metadata": {"name": "e2e-dangling"},
        "spec": {"priorityLevelConfiguration": {"name": "e2e-missing"}, "matchingPrecedence": 5000,
                 "distinguisherMethod": {"type": "ByUser"},
                 "rules": [{"subjects": [{"kind": "User", "user": {"name": "nobody-at-all"}}],
                            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/version"]}]}]}}
    kubectl.run("apply", "-f", "-", input=json.dumps(manifest))
    try:
        deadline = time.monotonic() + 15
        status = ""
        while time.monotonic() < deadline:
            status = kubectl.run("get", "flowschema", "e2e-dangling", "-o",
                                 'jsonpath={.status.conditions[?(@.type=="Dangling")].status}').stdout
            if status:
                break
            time.sleep(0.2)
        assert status == "True"
        message = kubectl.run("get", "flowschema", "e2e-dangling", "-o",
                              'jsonpath={.status.conditions[?(@.type=="Dangling")].message}').stdout
        assert message.endswith('named "e2e-missing" but there is no such object')
    finally:
        kubectl.run("delete", "flowschema", "e2e-dangling", "--ignore-not-found")


def test_pf_headers_name_the_classification(stack: Stack, kubectl: Kubectl) -> None:
    code, headers, _ = request(stack, "/api/v1/namespaces/default/configmaps", TOKENS["alice"])
    assert code == 403  # alice has no bindings; flow control ran before authorization
    assert headers["X-Kubernetes-PF-FlowSchema-UID"] == uid(kubectl, "flowschema", "global-default")
    assert headers["X-Kubernetes-PF-PriorityLevel-UID"] == uid(kubectl, "prioritylevelconfiguration",
                                                               "global-default")
    code, headers, _ = request(stack, "/api/v1/namespaces/default/configmaps")
    assert code == 200
    assert headers["X-Kubernetes-PF-FlowSchema-UID"] == uid(kubectl, "flowschema", "exempt")
    # a watch is classified too, and its streamed answer carries the headers (set while it is prepared)
    code, headers, _ = request(stack, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
    assert code == 200
    assert headers["X-Kubernetes-PF-FlowSchema-UID"] == uid(kubectl, "flowschema", "exempt")
    assert headers["X-Kubernetes-PF-PriorityLevel-UID"] == uid(kubectl, "prioritylevelconfiguration", "exempt")


def _cells(text: str) -> list[list[str]]:
    """A dump's rows as cells (kube writes them ``,``-separated through Go's tabwriter)."""
    return [[c.strip() for c in line.split(",")] for line in text.splitlines()]


def test_debug_dumps_in_kube_columns(kubectl: Kubectl, alice: Kubectl) -> None:
    base = "/debug/api_priority_and_fairness/"
    text = kubectl.run("get", "--raw", base + "dump_priority_levels").stdout
    levels = _cells(text)
    assert levels[0] == ["PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests",
                         "ExecutingRequests", "DispatchedRequests", "RejectedRequests", "TimedoutRequests",
                         "CancelledRequests"]
    exempt = next(row for row in levels if row[0] == "exempt")
    assert exempt[1:5] == ["0", "false", "false", "0"] and int(exempt[5]) >= 1 and int(exempt[6]) >= 1  # this GET
    assert any(row[0] == "global-default" and len(row) == 10 for row in levels)
    queues = _cells(kubectl.run("get", "--raw", base + "dump_queues").stdout)
    assert queues[0] == ["PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse",
                         "NextDispatchR", "InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum"]
    assert sum(row[0] == "global-default" for row in queues) == 128
    assert all(row[5].endswith("ss") for row in queues[1:])
    requests = _cells(kubectl.run("get", "--raw", base + "dump_requests").stdout)
    assert requests[0] == ["PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue",
                           "FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency",
                           "StartTime"]
    detailed = _cells(kubectl.run("get", "--raw", base + "dump_requests?includeRequestDetails=yes").stdout)
    assert detailed[0][10:] == ["UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource",
                                "SubResource"]  # kube: any non-empty value asks for the details
    # this request executes on the exempt level: a queue-less executing request (-1, -1)
    assert any(row[:4] == ["exempt", "exempt", "-1", "-1"] for row in requests[1:])
    seats = _cells(kubectl.run("get", "--raw", base + "dump_seats").stdout)
    assert seats[0][:5] == ["PriorityLevelName", "FlowSchemaName", "FlowDistingsher", "Seats", "UserName"]
    assert any(row[5:7] == ["get", f"{base}dump_seats"] for row in seats[1:])
    denied = alice.run("get", "--raw", base + "dump_queues", check=False)
    assert denied.returncode != 0 and "Forbidden" in denied.stderr
    missing = kubectl.run("get", "--raw", base + "dump_nothing", check=False)
    assert missing.returncode != 0 and "NotFound" in missing.stderr


def test_a_watch_gives_its_seat_back_once_started(kubectl: Kubectl, namespace: str) -> None:
    watcher = kubectl.popen("get", "configmaps", "-n", namespace, "--watch", "--request-timeout=30s")
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    try:
        deadline = time.monotonic() + 10
        seen_seats: list[str] = []
        while time.monotonic() < deadline:
            time.sleep(0.3)
            seen_seats.append(kubectl.run("get", "--raw", "/debug/api_priority_and_fairness/dump_seats").stdout)
            if len(seen_seats) > 3 and path not in seen_seats[-1]:
                break
        assert watcher.poll() is None, "the watch ended"
        assert path not in seen_seats[-1]
    finally:
        watcher.terminate()
        watcher.wait(10)


def test_readyz_verbose_reports_flowcontrol(stack: Stack) -> None:
    code, _, body = request(stack, "/readyz?verbose")
    assert code == 200
    assert "[+]poststarthook/apiserver/bootstrap-system-flowcontrol-configuration ok" in body.splitlines()
    assert body.endswith("readyz check passed\n")


def test_apf_metrics_on_the_gateway(stack: Stack) -> None:
    """kube's apiserver_flowcontrol_* families, cluster-wide from the flowcontrol service, on /metrics."""
    request(stack, "/api/v1/namespaces/default/configmaps", TOKENS["alice"])  # a global-default request
    code, _, body = request(stack, "/metrics")
    assert code == 200
    lines = body.splitlines()

    def value(prefix: str) -> float:
        found = [line for line in lines if line.startswith(prefix)]
        assert found, prefix
        return float(found[0].rsplit(" ", 1)[1])

    assert value('apiserver_flowcontrol_dispatched_requests_total{flow_schema="global-default",'
                 'priority_level="global-default"}') >= 1
    assert value('apiserver_flowcontrol_dispatched_requests_total{flow_schema="exempt",priority_level="exempt"}') >= 1
    assert value('apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="true",'
                 'flow_schema="exempt",le="0.0",priority_level="exempt"}') >= 1
    assert value('apiserver_flowcontrol_nominal_limit_seats{priority_level="global-default"}') >= 1
    assert value('apiserver_flowcontrol_current_executing_requests{flow_schema="exempt",'
                 'priority_level="exempt"}') >= 1  # this very scrape holds an exempt seat
    assert value("kapi_flowcontrol_local_fallback") == 0
    assert "# TYPE apiserver_flowcontrol_rejected_requests_total counter" in lines
