"""Table columns and cells of the kinds whose kube printers (pkg/printers/internalversion) have columns."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from kapi.resources import REGISTRY, RESOURCES
from services.gateway import columns, printers, table
from services.gateway.printers_more import access_modes, format_label_selector

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
META = {"name": "x", "creationTimestamp": "2026-01-01T11:55:00Z"}  # 5m before NOW


def _headers(group: str, resource: str, version: str = "v1") -> list[tuple[str, int]]:
    res = REGISTRY.get(group, version, resource)
    assert res is not None
    return [(c["name"], c["priority"]) for c in table.column_definitions(res)]


def _cells(group: str, resource: str, obj: dict[str, Any], version: str = "v1") -> list[Any]:
    res = REGISTRY.get(group, version, resource)
    assert res is not None
    return table.row(res, {"metadata": META, **obj}, "None", NOW)["cells"]


W = 1  # priority of -o wide columns
# kube's Event table: no leading Name (it is the last, wide-only column) and no Age.
_EVENT_COLUMNS = [("Last Seen", 0), ("Type", 0), ("Reason", 0), ("Object", 0), ("Subobject", W), ("Source", W),
                  ("Message", 0), ("First Seen", W), ("Count", W), ("Name", W)]

COLUMNS = [
    ("", "persistentvolumeclaims", [("Name", 0), ("Status", 0), ("Volume", 0), ("Capacity", 0), ("Access Modes", 0),
                                    ("StorageClass", 0), ("VolumeAttributesClass", 0), ("Age", 0),
                                    ("VolumeMode", W)]),
    ("", "persistentvolumes", [("Name", 0), ("Capacity", 0), ("Access Modes", 0), ("Reclaim Policy", 0),
                               ("Status", 0), ("Claim", 0), ("StorageClass", 0), ("VolumeAttributesClass", 0),
                               ("Reason", 0), ("Age", 0), ("VolumeMode", W)]),
    ("networking.k8s.io", "ingresses", [("Name", 0), ("Class", 0), ("Hosts", 0), ("Address", 0), ("Ports", 0),
                                        ("Age", 0)]),
    ("networking.k8s.io", "ingressclasses", [("Name", 0), ("Controller", 0), ("Parameters", 0), ("Age", 0)]),
    ("networking.k8s.io", "networkpolicies", [("Name", 0), ("Pod-Selector", 0), ("Age", 0)]),
    ("policy", "poddisruptionbudgets", [("Name", 0), ("Min Available", 0), ("Max Unavailable", 0),
                                        ("Allowed Disruptions", 0), ("Age", 0)]),
    ("", "resourcequotas", [("Name", 0), ("Request", 0), ("Limit", 0), ("Age", 0)]),
    ("", "replicationcontrollers", [("Name", 0), ("Desired", 0), ("Current", 0), ("Ready", 0), ("Age", 0),
                                    ("Containers", W), ("Images", W), ("Selector", W)]),
    ("", "podtemplates", [("Name", 0), ("Containers", 0), ("Images", 0), ("Pod Labels", 0)]),
    ("", "nodes", [("Name", 0), ("Status", 0), ("Roles", 0), ("Age", 0), ("Version", 0), ("Internal-IP", W),
                   ("External-IP", W), ("OS-Image", W), ("Kernel-Version", W), ("Container-Runtime", W)]),
    ("batch", "cronjobs", [("Name", 0), ("Schedule", 0), ("Timezone", 0), ("Suspend", 0), ("Active", 0),
                           ("Last Schedule", 0), ("Age", 0), ("Containers", W), ("Images", W), ("Selector", W)]),
    ("storage.k8s.io", "csistoragecapacities", [("Name", 0), ("StorageClassName", 0), ("Capacity", 0)]),
    ("coordination.k8s.io", "leases", [("Name", 0), ("Holder", 0), ("Age", 0)]),
    ("", "events", _EVENT_COLUMNS),
    ("events.k8s.io", "events", _EVENT_COLUMNS),
    ("apps", "controllerrevisions", [("Name", 0), ("Controller", 0), ("Revision", 0), ("Age", 0)]),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations", [("Name", 0), ("Webhooks", 0), ("Age", 0)]),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations", [("Name", 0), ("Webhooks", 0), ("Age", 0)]),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies", [("Name", 0), ("Validations", 0),
                                                                     ("ParamKind", 0), ("Age", 0)]),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings", [("Name", 0), ("PolicyName", 0),
                                                                           ("ParamRef", 0), ("Age", 0)]),
]


@pytest.mark.parametrize(("group", "resource", "want"), COLUMNS, ids=[c[1] for c in COLUMNS])
def test_columns_as_kube(group: str, resource: str, want: list[tuple[str, int]]) -> None:
    assert _headers(group, resource) == want


_BOUND_PVC = {"spec": {"volumeName": "pv1", "storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}},
              "status": {"phase": "Bound", "capacity": {"storage": "2Gi"},
                         "accessModes": ["ReadWriteMany", "ReadWriteOnce"]}}

CELLS = [
    ("pvc bound: capacity from status", "", "persistentvolumeclaims", _BOUND_PVC,
     ["x", "Bound", "pv1", "2Gi", "RWO,RWX", "fast", "<unset>", "5m", "<unset>"]),
    ("pvc pending: no capacity", "", "persistentvolumeclaims",
     {"spec": {"resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Block",
               "volumeAttributesClassName": "gold"}, "status": {"phase": "Pending"}},
     ["x", "Pending", "", "", "", "", "gold", "5m", "Block"]),
    ("pvc beta storage-class annotation wins", "", "persistentvolumeclaims",
     {"metadata": {**META, "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
      "spec": {"storageClassName": "new"}, "status": {"phase": "Pending"}},
     ["x", "Pending", "", "", "", "old", "<unset>", "5m", "<unset>"]),
    ("pvc terminating", "", "persistentvolumeclaims",
     {"metadata": {**META, "deletionTimestamp": "2026-01-01T11:59:00Z"}, "status": {"phase": "Bound"}},
     ["x", "Terminating", "", "", "", "", "<unset>", "5m", "<unset>"]),
    ("pv bound", "", "persistentvolumes",
     {"spec": {"capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOncePod", "ReadOnlyMany"],
               "persistentVolumeReclaimPolicy": "Retain", "claimRef": {"namespace": "ns", "name": "c"},
               "storageClassName": "sc", "volumeMode": "Filesystem"}, "status": {"phase": "Bound"}},
     ["x", "5Gi", "ROX,RWOP", "Retain", "Bound", "ns/c", "sc", "<unset>", "", "5m", "Filesystem"]),
    ("pv failed with reason", "", "persistentvolumes",
     {"spec": {}, "status": {"phase": "Failed", "reason": "Oops"}},
     ["x", "0", "", "", "Failed", "", "", "<unset>", "Oops", "5m", "<unset>"]),
    ("ingress no hosts, no tls", "networking.k8s.io", "ingresses",
     {"spec": {"rules": [{"http": {}}]}}, ["x", "<none>", "*", "", "80", "5m"]),
    ("ingress hosts, tls, address", "networking.k8s.io", "ingresses",
     {"spec": {"ingressClassName": "nginx", "rules": [{"host": "a.com"}, {"host": "b.com"}],
               "tls": [{"hosts": ["a.com"]}]},
      "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb.example"}]}}},
     ["x", "nginx", "a.com,b.com", "10.0.0.2,lb.example", "80, 443", "5m"]),
    ("ingress more than 3 hosts", "networking.k8s.io", "ingresses",
     {"spec": {"rules": [{"host": f"h{i}"} for i in range(5)]}},
     ["x", "<none>", "h0,h1,h2 + 2 more...", "", "80", "5m"]),
    ("ingressclass with parameters", "networking.k8s.io", "ingressclasses",
     {"spec": {"controller": "k8s.io/nginx", "parameters": {"apiGroup": "k8s.example.com", "kind": "P",
                                                            "name": "p1"}}},
     ["x", "k8s.io/nginx", "P.k8s.example.com/p1", "5m"]),
    ("ingressclass without", "networking.k8s.io", "ingressclasses", {"spec": {"controller": "c"}},
     ["x", "c", "<none>", "5m"]),
    ("netpol empty selector", "networking.k8s.io", "networkpolicies", {"spec": {"podSelector": {}}},
     ["x", "<none>", "5m"]),
    ("netpol selector", "networking.k8s.io", "networkpolicies",
     {"spec": {"podSelector": {"matchLabels": {"role": "db"}, "matchExpressions": [
         {"key": "app", "operator": "In", "values": ["b", "a"]}, {"key": "zz", "operator": "DoesNotExist"}]}}},
     ["x", "app in (a,b),role=db,!zz", "5m"]),
    ("pdb minAvailable", "policy", "poddisruptionbudgets",
     {"spec": {"minAvailable": 2}, "status": {"disruptionsAllowed": 1}}, ["x", "2", "N/A", 1, "5m"]),
    ("pdb maxUnavailable percent", "policy", "poddisruptionbudgets",
     {"spec": {"maxUnavailable": "50%"}}, ["x", "N/A", "50%", 0, "5m"]),
    ("quota", "", "resourcequotas",
     {"status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi", "limits.memory": "2Gi"},
                 "used": {"pods": "3", "limits.cpu": "500m"}}},
     ["x", "pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 500m/2, limits.memory: 0/2Gi", "5m"]),
    ("rc", "", "replicationcontrollers",
     {"spec": {"replicas": 3, "selector": {"b": "2", "a": "1"},
               "template": {"spec": {"containers": [{"name": "c1", "image": "i1"}, {"name": "c2", "image": "i2"}]}}},
      "status": {"replicas": 3, "readyReplicas": 2}},
     ["x", 3, 3, 2, "5m", "c1,c2", "i1,i2", "a=1,b=2"]),
    ("podtemplate (no age)", "", "podtemplates",
     {"template": {"metadata": {"labels": {"app": "w"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
     ["x", "c", "i", "app=w"]),
    ("node wide", "", "nodes",
     {"metadata": {**META, "labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "edge"}},
      "spec": {"unschedulable": True},
      "status": {"conditions": [{"type": "Ready", "status": "True"}], "nodeInfo": {"kubeletVersion": "v1.31.0"},
                 "addresses": [{"type": "Hostname", "address": "n"}, {"type": "InternalIP", "address": "10.1.1.1"}]}},
     ["x", "Ready,SchedulingDisabled", "control-plane,edge", "5m", "v1.31.0", "10.1.1.1", "<none>", "<unknown>",
      "<unknown>", "<unknown>"]),
    ("node no conditions", "", "nodes", {}, ["x", "Unknown", "<none>", "5m", "", "<none>", "<none>", "<unknown>",
                                             "<unknown>", "<unknown>"]),
    ("cronjob wide", "batch", "cronjobs",
     {"spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {"containers": [
         {"name": "c", "image": "busybox"}]}}}}}, "status": {}},
     ["x", "*/1 * * * *", "<none>", False, 0, "<none>", "5m", "c", "busybox", "<none>"]),
    ("controllerrevision", "apps", "controllerrevisions",
     {"revision": 2, "metadata": {**META, "ownerReferences": [
         {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": True}]}},
     ["x", "statefulset.apps/web", 2, "5m"]),
    ("controllerrevision no owner", "apps", "controllerrevisions", {"revision": 1}, ["x", "<none>", 1, "5m"]),
    ("webhooks", "admissionregistration.k8s.io", "validatingwebhookconfigurations",
     {"webhooks": [{"name": "a"}, {"name": "b"}]}, ["x", 2, "5m"]),
    ("vap", "admissionregistration.k8s.io", "validatingadmissionpolicies",
     {"spec": {"validations": [{"expression": "true"}], "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}},
     ["x", 1, "v1/ConfigMap", "5m"]),
    ("lease without holder", "coordination.k8s.io", "leases", {"spec": {}}, ["x", "", "5m"]),
    ("csistoragecapacity (no age)", "storage.k8s.io", "csistoragecapacities",
     {"storageClassName": "sc", "capacity": "10Gi"}, ["x", "sc", "10Gi"]),
    ("storageclass default (GA annotation)", "storage.k8s.io", "storageclasses",
     {"metadata": {**META, "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
      "provisioner": "p"}, ["x (default)", "p", "Delete", "Immediate", False, "5m"]),
    ("storageclass default (beta annotation)", "storage.k8s.io", "storageclasses",
     {"metadata": {**META, "annotations": {"storageclass.beta.kubernetes.io/is-default-class": "true"}},
      "provisioner": "p"}, ["x (default)", "p", "Delete", "Immediate", False, "5m"]),
    ("storageclass annotation not exactly true", "storage.k8s.io", "storageclasses",
     {"metadata": {**META, "annotations": {"storageclass.kubernetes.io/is-default-class": "True"}},
      "provisioner": "p", "reclaimPolicy": "Retain"}, ["x", "p", "Retain", "Immediate", False, "5m"]),
    ("pod never restarted", "", "pods",
     {"spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Running", "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0}]}},
     ["x", "1/1", "Running", "0", "5m", "<none>", "<none>", "<none>", "<none>"]),
    ("pod restarts without a terminated lastState", "", "pods",
     {"spec": {"containers": [{"name": "c"}]},
      "status": {"phase": "Running", "containerStatuses": [{"name": "c", "ready": True, "restartCount": 2}]}},
     ["x", "1/1", "Running", "2", "5m", "<none>", "<none>", "<none>", "<none>"]),
    ("vap unset", "admissionregistration.k8s.io", "validatingadmissionpolicies", {"spec": {}},
     ["x", 0, "<unset>", "5m"]),
    ("vapb named param, no namespace", "admissionregistration.k8s.io", "validatingadmissionpolicybindings",
     {"spec": {"policyName": "p", "paramRef": {"name": "cfg"}}}, ["x", "p", "*/cfg", "5m"]),
    ("vapb param selector", "admissionregistration.k8s.io", "validatingadmissionpolicybindings",
     {"spec": {"policyName": "p", "paramRef": {"selector": {"matchLabels": {"a": "b"}}}}},
     ["x", "p", "&LabelSelector{MatchLabels:map[string]string{a: b,},MatchExpressions:[]LabelSelectorRequirement{},}",
      "5m"]),
]


@pytest.mark.parametrize(("case", "group", "resource", "obj", "want"), CELLS, ids=[c[0] for c in CELLS])
def test_cells_as_kube(case: str, group: str, resource: str, obj: dict[str, Any], want: list[Any]) -> None:
    assert _cells(group, resource, obj) == want


@pytest.mark.parametrize(("modes", "want"), [
    ([], ""), (["ReadWriteOnce"], "RWO"), (["ReadWriteOncePod", "ReadWriteMany", "ReadOnlyMany", "ReadWriteOnce"],
                                           "RWO,ROX,RWX,RWOP"), (["ReadWriteOnce", "ReadWriteOnce"], "RWO")])
def test_access_modes(modes: list[str], want: str) -> None:
    assert access_modes(modes) == want


@pytest.mark.parametrize(("selector", "want"), [
    (None, "<none>"), ({}, "<none>"), ({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, "a"),
    ({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]}, "a notin (x)"),
    ({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}, "<error>")])
def test_format_label_selector(selector: Any, want: str) -> None:
    assert format_label_selector(selector) == want


# Built-ins for which kube-apiserver has no printer either: they keep the default NAME / CREATED AT table.
_NO_KUBE_PRINTER = {("", "limitranges"), (_R := "rbac.authorization.k8s.io", "roles"), (_R, "clusterroles"),
                    ("apiextensions.k8s.io", "customresourcedefinitions")}


def test_every_stored_builtin_with_a_kube_printer_has_one() -> None:
    missing = {(r.group, r.resource) for r in RESOURCES
               if r.stored and printers.printer_for(r.group, r.resource) is None}
    assert missing == _NO_KUBE_PRINTER


OLD = "2020-01-01T00:00:00Z"


def _ago(stamp: str) -> str:
    return columns.age({"metadata": {"creationTimestamp": stamp}})


@pytest.mark.parametrize(("case", "group", "obj", "want"), [
    ("core event", "", {"type": "Normal", "reason": "Pulled", "message": " pulled \n",
                        "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{c}"},
                        "source": {"component": "kubelet", "host": "node1"}, "firstTimestamp": OLD,
                        "lastTimestamp": "2021-06-01T00:00:00Z", "count": 3},
     ["LAST", "Normal", "Pulled", "pod/web", "spec.containers{c}", "kubelet, node1", "pulled", "FIRST", 3, "x"]),
    ("core event, new style, no count", "", {"type": "Warning", "reason": "R", "involvedObject": {"kind": "Node"},
                                             "eventTime": OLD, "reportingComponent": "ctl"},
     ["FIRST", "Warning", "R", "node", "", "ctl", "", "FIRST", 1, "x"]),
    ("events.k8s.io event with series", "events.k8s.io",
     {"type": "Normal", "reason": "Scaled", "note": "up", "regarding": {"kind": "Deployment", "name": "d"},
      "eventTime": OLD, "reportingController": "deployment-controller", "reportingInstance": "kcm-1",
      "series": {"count": 7, "lastObservedTime": "2021-06-01T00:00:00.000000Z"}},
     ["LAST", "Normal", "Scaled", "deployment/d", "", "deployment-controller, kcm-1", "up", "FIRST", 7, "x"]),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_event_cells_as_kube(case: str, group: str, obj: dict[str, Any], want: list[Any]) -> None:
    want = [_ago("2021-06-01T00:00:00Z") if w == "LAST" else _ago(OLD) if w == "FIRST" else w for w in want]
    assert _cells(group, "events", obj) == want


def test_pod_restarts_say_when_the_last_container_restart_finished() -> None:
    """printPod: "3 (<age> ago)" from the latest lastState.terminated.finishedAt over the containers."""
    statuses = [{"name": "a", "restartCount": 1, "lastState": {"terminated": {"finishedAt": OLD}}},
                {"name": "b", "restartCount": 2, "lastState": {"terminated": {"finishedAt": "2021-06-01T00:00:00Z"}}}]
    cells = _cells("", "pods", {"spec": {"containers": [{"name": "a"}, {"name": "b"}]},
                                "status": {"phase": "Running", "containerStatuses": statuses}})
    assert cells[3] == f"3 ({_ago('2021-06-01T00:00:00Z')} ago)"
