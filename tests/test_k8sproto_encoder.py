"""kapi.k8sproto.encode: JSON objects -> kube's protobuf envelope; decode(encode(obj)) == obj, and the bytes."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest

from kapi import k8sproto
from kapi.k8sproto import encoder, wire

CREATED = "2023-11-14T22:13:20Z"

# Each object is as kube serves it: no zero of a non-pointer omitempty field (the decoder drops those, as Go's
# encoding/json does; test_zero_values_are_written_and_absent_ones_are_not covers the encoder's zeros).
POD: dict[str, Any] = {
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {
        "name": "web-0", "generateName": "web-", "namespace": "default", "uid": "0b5e6f3c-1111-2222-3333-444455556666",
        "resourceVersion": "42", "generation": 3, "creationTimestamp": CREATED,
        "deletionTimestamp": "2023-11-14T22:20:00Z", "deletionGracePeriodSeconds": 30,
        "labels": {"app": "web", "empty": ""}, "annotations": {"note": "ü ☃"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web",
                             "uid": "u-1", "controller": True, "blockOwnerDeletion": True}],
        "finalizers": ["example.com/x"],
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "apiVersion": "v1",
                           "time": CREATED, "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {"f:app": {}}}}}],
    },
    "spec": {
        "volumes": [{"name": "cache", "emptyDir": {}},
                    {"name": "cfg", "configMap": {"name": "cfg", "defaultMode": 420, "optional": False,
                                                  "items": [{"key": "a", "path": "a.conf"}]}},
                    {"name": "mem", "emptyDir": {"medium": "Memory", "sizeLimit": "64Mi"}}],
        "initContainers": [{"name": "init", "image": "busybox", "command": ["sh", "-c", "true"]}],
        "containers": [{
            "name": "app", "image": "nginx:1.27", "args": ["-g", "daemon off;"], "workingDir": "/srv",
            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
            "env": [{"name": "A", "value": "1"},
                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "b", "optional": True}}},
                    {"name": "C", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
            "envFrom": [{"prefix": "X_", "secretRef": {"name": "s"}}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": "100m"}},
            "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                              "periodSeconds": 10, "failureThreshold": 3},
            "readinessProbe": {"tcpSocket": {"port": 8080}, "timeoutSeconds": 1},
            "lifecycle": {"preStop": {"sleep": {"seconds": 5}}},
            "securityContext": {"runAsUser": 1000, "runAsNonRoot": True, "privileged": False,
                                "capabilities": {"drop": ["ALL"]}},
            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
        }],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "activeDeadlineSeconds": -1,
        "dnsPolicy": "ClusterFirst", "nodeSelector": {"kubernetes.io/os": "linux"},
        "serviceAccountName": "default", "nodeName": "node-1",
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}}},
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 60}],
        "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
        "overhead": {"cpu": "10m"},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "web"}}}],
    },
    "status": {
        "phase": "Running", "hostIP": "10.0.0.1", "podIP": "10.1.0.5", "podIPs": [{"ip": "10.1.0.5"}],
        "startTime": CREATED, "qosClass": "Burstable",
        "conditions": [{"type": "Ready", "status": "True", "lastProbeTime": None,
                        "lastTransitionTime": CREATED}],
        "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0, "image": "nginx:1.27",
                               "imageID": "sha256:abc", "started": True,
                               "state": {"running": {"startedAt": CREATED}},
                               "lastState": {"terminated": {"exitCode": -1, "reason": "Error",
                                                            "startedAt": CREATED, "finishedAt": CREATED}}}],
    },
}

DEPLOYMENT: dict[str, Any] = {
    "kind": "Deployment", "apiVersion": "apps/v1",
    "metadata": {"name": "web", "namespace": "default", "creationTimestamp": CREATED},
    "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "app", "image": "nginx"}]}},
             "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
             "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
    "status": {"observedGeneration": 1,
               "conditions": [{"type": "Available", "status": "True", "lastUpdateTime": CREATED,
                               "lastTransitionTime": CREATED, "reason": "MinimumReplicasAvailable"}]},
}

SERVICE: dict[str, Any] = {
    "kind": "Service", "apiVersion": "v1",
    "metadata": {"name": "svc", "namespace": "default"},
    "spec": {"ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "http", "nodePort": 30080},
                       {"name": "metrics", "protocol": "TCP", "port": 9090, "targetPort": 9090}],
             "selector": {"app": "web"}, "type": "NodePort", "clusterIP": "10.96.0.10",
             "clusterIPs": ["10.96.0.10"], "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
             "sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
             "externalTrafficPolicy": "Cluster", "internalTrafficPolicy": "Cluster"},
    "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4", "ports": [{"port": 80, "protocol": "TCP"}]}]}},
}

CONFIGMAP: dict[str, Any] = {
    "kind": "ConfigMap", "apiVersion": "v1",
    "metadata": {"name": "cfg", "namespace": "default", "labels": {"a": "b"}},
    "data": {"a.conf": "x=1\n", "empty": ""},
    "binaryData": {"blob": "AAH/7g==", "none": ""},
    "immutable": True,
}

LIST: dict[str, Any] = {
    "kind": "ConfigMapList", "apiVersion": "v1",
    "metadata": {"resourceVersion": "77", "continue": "tok", "remainingItemCount": 3},
    "items": [{k: v for k, v in CONFIGMAP.items() if k not in ("kind", "apiVersion")},
              {"metadata": {"name": "other", "namespace": "default"}, "data": {"k": "v"}}],
}

STATUS: dict[str, Any] = {
    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
    "message": 'Pod "x" is invalid: spec.containers: Required value', "reason": "Invalid",
    "details": {"name": "x", "kind": "pods",
                "causes": [{"reason": "FieldValueRequired", "message": "Required value",
                            "field": "spec.containers"}]},
    "code": 422,
}

LEASE: dict[str, Any] = {  # MicroTime
    "kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
    "metadata": {"name": "kube-scheduler", "namespace": "kube-system"},
    "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15, "acquireTime": "2023-11-14T22:13:20.123456Z",
             "renewTime": "2023-11-14T22:13:21.000000Z", "leaseTransitions": 2},
}

SAR: dict[str, Any] = {  # list-wrapper map values (ExtraValue)
    "kind": "SubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {},
    "spec": {"user": "alice", "groups": ["devs"], "extra": {"scopes": ["a", "b"]},
             "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"}},
    "status": {"allowed": True, "reason": "RBAC"},
}

CRONJOB: dict[str, Any] = {  # batch: a template in a template
    "kind": "CronJob", "apiVersion": "batch/v1", "metadata": {"name": "c", "namespace": "default"},
    "spec": {"schedule": "*/5 * * * *", "timeZone": "UTC", "concurrencyPolicy": "Forbid", "suspend": False,
             "jobTemplate": {"metadata": {}, "spec": {"backoffLimit": 6, "template": {
                 "metadata": {}, "spec": {"restartPolicy": "OnFailure",
                                          "containers": [{"name": "c", "image": "busybox"}]}}}}},
    "status": {},
}

HPA: dict[str, Any] = {  # autoscaling/v2 Quantity values
    "kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v2",
    "metadata": {"name": "h", "namespace": "default"},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
             "minReplicas": 1, "maxReplicas": 5,
             "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                 "type": "AverageValue", "averageValue": "500m"}}}]},
    "status": {"currentReplicas": 1, "desiredReplicas": 1},
}

# The groups added with gen_k8sproto_schema.py --merge.
WEBHOOKS: dict[str, Any] = {
    "kind": "ValidatingWebhookConfiguration", "apiVersion": "admissionregistration.k8s.io/v1",
    "metadata": {"name": "policy.example.com", "generation": 1, "creationTimestamp": CREATED},
    "webhooks": [{
        "name": "check.example.com",
        "clientConfig": {"url": "https://hooks.example.com/validate", "caBundle": "Q0E="},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                   "scope": "*"}],
        "failurePolicy": "Ignore", "matchPolicy": "Exact", "namespaceSelector": {},
        "objectSelector": {"matchExpressions": [{"key": "skip", "operator": "DoesNotExist"}]},
        "sideEffects": "NoneOnDryRun", "timeoutSeconds": 5, "admissionReviewVersions": ["v1", "v1beta1"],
        "matchConditions": [{"name": "c", "expression": "true"}]}],
}

MUTATING_POLICY: dict[str, Any] = {
    "kind": "MutatingAdmissionPolicy", "apiVersion": "admissionregistration.k8s.io/v1",
    "metadata": {"name": "add-label"},
    "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
             "matchConstraints": {"resourceRules": [{"resourceNames": ["a"], "operations": ["CREATE"],
                                                     "apiGroups": ["apps"], "apiVersions": ["v1"],
                                                     "resources": ["deployments"]}],
                                  "matchPolicy": "Equivalent"},
             "variables": [{"name": "v", "expression": "object.metadata.name"}],
             "mutations": [{"patchType": "ApplyConfiguration",
                            "applyConfiguration": {"expression": "Object{metadata: Object.metadata{}}"}}],
             "failurePolicy": "Fail", "reinvocationPolicy": "IfNeeded"},
}

FLOWSCHEMA: dict[str, Any] = {
    "kind": "FlowSchema", "apiVersion": "flowcontrol.apiserver.k8s.io/v1",
    "metadata": {"name": "service-accounts"},
    "spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 9000,
             "distinguisherMethod": {"type": "ByNamespace"},
             "rules": [{"subjects": [{"kind": "ServiceAccount",
                                      "serviceAccount": {"namespace": "*", "name": "*"}}],
                        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                           "clusterScope": True, "namespaces": ["*"]}]}]},
    "status": {"conditions": [{"type": "Dangling", "status": "False", "lastTransitionTime": CREATED,
                               "reason": "Found", "message": "ok"}]},
}

RESOURCE_CLAIM: dict[str, Any] = {
    "kind": "ResourceClaim", "apiVersion": "resource.k8s.io/v1",
    "metadata": {"name": "gpu", "namespace": "ml"},
    "spec": {"devices": {
        "requests": [{"name": "gpu", "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 1,
             "capacity": {"requests": {"memory": "40Gi"}}},
            {"name": "small", "deviceClassName": "gpu.example.com", "allocationMode": "All"}]}],
        "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/numa"}],
        "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com",
                                                    "parameters": {"kind": "GpuConfig",
                                                                   "sharing": {"strategy": "TimeSlicing"}}}}]}},
    "status": {"devices": [{"driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0",
                            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": CREATED,
                                            "reason": "Configured", "message": ""}],
                            "data": {"uuid": "GPU-1"},
                            "networkData": {"interfaceName": "eth1", "ips": ["10.0.0.5/24"]}}]},
}

DEVICE_SLICE: dict[str, Any] = {
    "kind": "ResourceSlice", "apiVersion": "resource.k8s.io/v1",
    "metadata": {"name": "node-1-gpu"},
    "spec": {"driver": "gpu.example.com", "pool": {"name": "node-1", "generation": 0, "resourceSliceCount": 1},
             "nodeName": "node-1",
             "devices": [{"name": "gpu-0",
                          "attributes": {"model": {"string": "A100"}, "cores": {"int": 0}, "mig": {"bool": False}},
                          "capacity": {"memory": {"value": "80Gi"}},
                          "taints": [{"key": "example.com/hot", "effect": "NoSchedule", "timeAdded": CREATED}]}]},
}

APISERVICE: dict[str, Any] = {
    "kind": "APIService", "apiVersion": "apiregistration.k8s.io/v1",
    "metadata": {"name": "v1.", "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}},
    "spec": {"service": None, "version": "v1", "groupPriorityMinimum": 18000, "versionPriority": 1},
    "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": CREATED,
                               "reason": "Local", "message": "Local APIServices are always available"}]},
}

CORPUS = {"pod": POD, "deployment": DEPLOYMENT, "service": SERVICE, "configmap": CONFIGMAP, "list": LIST,
          "status": STATUS, "lease": LEASE, "subjectaccessreview": SAR, "cronjob": CRONJOB, "hpa": HPA,
          "validatingwebhookconfiguration": WEBHOOKS, "mutatingadmissionpolicy": MUTATING_POLICY,
          "flowschema": FLOWSCHEMA, "resourceclaim": RESOURCE_CLAIM, "resourceslice": DEVICE_SLICE,
          "apiservice": APISERVICE}


def _without_nulls(value: Any) -> Any:
    """Go's JSON of the decoded object: a ``null`` (zero Time) is not written, as the decoder leaves it out."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_round_trip(name: str) -> None:
    obj = CORPUS[name]
    before = copy.deepcopy(obj)
    body = k8sproto.encode(obj)
    assert obj == before  # the input is not modified
    assert body.startswith(b"k8s\x00")
    assert k8sproto.decode(body) == _without_nulls(obj)


def test_envelope_bytes_are_kubes() -> None:
    body = k8sproto.encode({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}, "data": {"k": "v"}})
    type_meta = b"\x0a\x02v1\x12\x09ConfigMap"
    raw = b"\x0a\x03\x0a\x01a" + b"\x12\x06\x0a\x01k\x12\x01v"
    assert body == (b"k8s\x00" + b"\x0a" + bytes([len(type_meta)]) + type_meta + b"\x12" + bytes([len(raw)]) + raw
                    + b"\x1a\x00\x22\x00")


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    return [(n, w, bytes(buf[v:s]) if w == wire.LEN else v) for n, w, v, s in wire.fields(buf, 0, len(buf))]


def test_zero_values_are_written_and_absent_ones_are_not() -> None:
    raw = encoder.default_encoder().message(k8sproto.schema().messages["k8s.io.api.apps.v1.DeploymentSpec"],
                                    {"replicas": 0, "paused": False, "minReadySeconds": None})
    assert _fields(raw) == [(1, wire.VARINT, 0), (7, wire.VARINT, 0)]


def test_scalar_encodings() -> None:
    table = k8sproto.schema().messages
    # negative int32 / int64 sign-extended to 10 bytes, as Go writes them
    raw = encoder.default_encoder().message(table["k8s.io.api.core.v1.PodSpec"], {"activeDeadlineSeconds": -1})
    assert raw == b"\x28" + b"\xff" * 9 + b"\x01"
    # IntOrString both ways, Quantity from a JSON number, Time, MicroTime, Duration
    io = table["k8s.io.apimachinery.pkg.util.intstr.IntOrString"]
    assert encoder.default_encoder().message(io, 8080) == b"\x08\x00\x10\x90\x3f\x1a\x00"
    assert encoder.default_encoder().message(io, "http") == b"\x08\x01\x10\x00\x1a\x04http"
    assert encoder.default_encoder().message(table["k8s.io.apimachinery.pkg.api.resource.Quantity"], 2) == b"\x0a\x012"
    assert _fields(encoder.default_encoder().message(table["k8s.io.apimachinery.pkg.apis.meta.v1.Time"], CREATED)) == [
        (1, wire.VARINT, 1_700_000_000), (2, wire.VARINT, 0)]
    micro = encoder.default_encoder().message(table["k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime"],
                                      "2023-11-14T22:13:20.000250Z")
    assert _fields(micro) == [(1, wire.VARINT, 1_700_000_000), (2, wire.VARINT, 250_000)]
    dur = table["k8s.io.apimachinery.pkg.apis.meta.v1.Duration"]
    assert _fields(encoder.default_encoder().message(dur, "1h30m0.5s")) == [(1, wire.VARINT, 5_400_500_000_000)]
    assert wire.int64(_fields(encoder.default_encoder().message(dur, "-250ms"))[0][2]) == -250_000_000


def test_durations_round_trip_through_go_text() -> None:
    dur = k8sproto.schema().messages["k8s.io.apimachinery.pkg.apis.meta.v1.Duration"]
    for text in ("0s", "1h0m0s", "1m30s", "250ms", "2µs", "7ns", "-1.5s"):
        raw = encoder.default_encoder().message(dur, text)
        assert k8sproto.schema().decode(dur, raw, 0, len(raw)) == text


def test_status_has_a_message_in_every_version_but_custom_kinds_do_not() -> None:
    assert k8sproto.encodable("apps/v1", "Status") and k8sproto.encodable("v1", "Status")
    assert k8sproto.encodable("v1", "PodList")
    assert k8sproto.encodable("meta.k8s.io/v1", "PartialObjectMetadataList")
    assert not k8sproto.encodable("meta.k8s.io/v1beta1", "PartialObjectMetadataList")
    assert not k8sproto.encodable("example.com/v1", "Widget")
    assert not k8sproto.encodable("meta.k8s.io/v1", "Table")
    with pytest.raises(k8sproto.EncodeError, match='no kind "Widget"'):
        k8sproto.encode({"kind": "Widget", "apiVersion": "example.com/v1"})


def test_the_merged_groups_have_messages_but_custom_resource_definitions_do_not() -> None:
    for api_version, kind in [("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
                              ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBindingList"),
                              ("flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration"),
                              ("resource.k8s.io/v1", "DeviceClass"), ("resource.k8s.io/v1", "ResourceClaimTemplate"),
                              ("apiregistration.k8s.io/v1", "APIServiceList")]:
        assert k8sproto.encodable(api_version, kind), kind
    # JSONSchemaProps' JSON-or-bool/-array fields have no form in the schema table (gen_k8sproto_schema.py)
    assert not k8sproto.encodable("apiextensions.k8s.io/v1", "CustomResourceDefinition")
    assert not k8sproto.encodable("autoscaling/v1", "Scale")


@pytest.mark.parametrize(("patch", "message"), [
    ({"spec": {"replicas": "3"}}, "Deployment.spec.replicas: str value for an integer field"),
    ({"spec": {"paused": 1}}, "Deployment.spec.paused: int value for a bool field"),
    ({"metadata": {"labels": ["a"]}}, "Deployment.metadata.labels: list value for a map"),
    ({"metadata": {"labels": {"a": 1}}}, "Deployment.metadata.labels[a]: int value for a string field"),
    ({"metadata": {"creationTimestamp": "yesterday"}},
     "Deployment.metadata.creationTimestamp: time 'yesterday' is not RFC 3339"),
    ({"spec": {"template": {"spec": {"containers": {}}}}},
     "Deployment.spec.template.spec.containers: dict value for a list"),
    ({"spec": {"template": {"spec": {"containers": [{"env": [{"valueFrom": {"configMapKeyRef": {"name": 3}}}]}]}}}},
     "Deployment.spec.template.spec.containers.env.valueFrom.configMapKeyRef.name: int value for a string field"),
])
def test_wrong_json_types_are_encode_errors(patch: dict[str, Any], message: str) -> None:
    obj = {"kind": "Deployment", "apiVersion": "apps/v1", **patch}
    with pytest.raises(k8sproto.EncodeError) as info:
        k8sproto.encode(obj)
    assert str(info.value) == message


def test_binary_data_must_be_base64() -> None:
    with pytest.raises(k8sproto.EncodeError, match="illegal base64"):
        k8sproto.encode({"kind": "ConfigMap", "apiVersion": "v1", "binaryData": {"a": "!!"}})


def test_watch_event_frame() -> None:
    obj = k8sproto.encode(CONFIGMAP)
    frame = k8sproto.watch_event("ADDED", obj)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    event = _fields(frame[4:])
    assert event[0] == (1, wire.LEN, b"ADDED")
    assert _fields(event[1][2]) == [(1, wire.LEN, obj)]
    assert k8sproto.decode(_fields(event[1][2])[0][2]) == CONFIGMAP


def test_pod_encodes_well_under_a_millisecond() -> None:
    k8sproto.encode(POD)
    runs = 300
    start = time.perf_counter()
    for _ in range(runs):
        k8sproto.encode(POD)
    per_call = (time.perf_counter() - start) / runs
    assert per_call < 0.002, f"{per_call * 1e6:.0f} us per Pod"
