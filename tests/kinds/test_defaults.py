"""Decode-time defaulting and conversion of built-in kinds."""

import pytest

from kapi.kinds import strategy_for


def test_secret_string_data_is_folded_into_data():
    secret = {"kind": "Secret", "data": {"a": "eA=="}, "stringData": {"b": "s3cret", "a": "y"}}
    strategy_for("", "Secret").default(secret)
    assert "stringData" not in secret
    assert secret["data"] == {"a": "eQ==", "b": "czNjcmV0"}
    assert secret["type"] == "Opaque"


def test_service_defaults():
    svc = {"spec": {"ports": [{"port": 80}]}}
    strategy_for("", "Service").default(svc)
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["sessionAffinity"] == "None"
    assert svc["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]


@pytest.mark.parametrize("image,policy", [("nginx", "Always"), ("nginx:latest", "Always"),
                                          ("nginx:1.27", "IfNotPresent"), ("reg:5000/app", "Always"),
                                          ("reg:5000/app:v1", "IfNotPresent"), ("app@sha256:abc", "IfNotPresent")])
def test_pod_image_pull_policy(image, policy):
    pod = {"spec": {"containers": [{"name": "c", "image": image}]}}
    strategy_for("", "Pod").default(pod)
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == policy
    assert pod["spec"]["restartPolicy"] == "Always"
    assert pod["spec"]["dnsPolicy"] == "ClusterFirst"


def test_explicit_values_are_kept_and_other_kinds_untouched():
    pod = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x", "imagePullPolicy": "Never"}]}}
    strategy_for("", "Pod").default(pod)
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"
    cm = {"data": {"a": "b"}}
    strategy_for("", "ConfigMap").default(cm)
    assert cm == {"data": {"a": "b"}}


@pytest.mark.parametrize(("group", "kind", "obj", "expected"), [
    ("apps", "Deployment", {"spec": {}}, {"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                                         "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                                             "maxUnavailable": "25%", "maxSurge": "25%"}}}),
    ("apps", "Deployment", {"spec": {"replicas": 0, "strategy": {"type": "Recreate"}}},
     {"replicas": 0, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600, "strategy": {"type": "Recreate"}}),
    ("apps", "ReplicaSet", {"spec": {}}, {"replicas": 1}),
    ("apps", "StatefulSet", {"spec": {}}, {
        "replicas": 1, "podManagementPolicy": "OrderedReady", "revisionHistoryLimit": 10,
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"}}),
    ("apps", "DaemonSet", {"spec": {}}, {"revisionHistoryLimit": 10, "updateStrategy": {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}}),
    ("batch", "Job", {"spec": {}}, {"completions": 1, "parallelism": 1, "backoffLimit": 6,
                                    "completionMode": "NonIndexed", "suspend": False,
                                    "podReplacementPolicy": "TerminatingOrFailed"}),
    ("batch", "Job", {"spec": {"parallelism": 3}}, {"parallelism": 3, "backoffLimit": 6,
                                                    "completionMode": "NonIndexed", "suspend": False,
                                                    "podReplacementPolicy": "TerminatingOrFailed"}),
])
def test_workload_defaults(group, kind, obj, expected):
    strategy_for(group, kind).default(obj)
    assert obj["spec"] == expected


def test_templates_and_cronjob_defaults():
    cj = {"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}}}
    strategy_for("batch", "CronJob").default(cj)
    spec = cj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    job = spec["jobTemplate"]["spec"]
    assert job["backoffLimit"] == 6
    assert job["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert job["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"


def test_pod_requests_default_to_limits():
    pod = {"spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"},
                                                                          "requests": {"memory": "1Gi"}}}]}}
    strategy_for("", "Pod").default(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"memory": "1Gi", "cpu": "1"}


def test_webhook_configuration_defaults():
    cfg = {"webhooks": [{"name": "a", "rules": [{"operations": ["CREATE"]}],
                         "clientConfig": {"service": {"name": "s", "namespace": "n"}}}]}
    strategy_for("admissionregistration.k8s.io", "MutatingWebhookConfiguration").default(cfg)
    hook = cfg["webhooks"][0]
    assert (hook["failurePolicy"], hook["matchPolicy"], hook["timeoutSeconds"], hook["reinvocationPolicy"]) == (
        "Fail", "Equivalent", 10, "Never")
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}
    assert hook["rules"][0]["scope"] == "*" and hook["clientConfig"]["service"]["port"] == 443


@pytest.mark.parametrize("spec,families", [
    ({"ports": [{"port": 80}]}, ["IPv4"]),
    ({"clusterIP": "None", "selector": {"a": "b"}}, ["IPv4"]),
    ({"clusterIP": "None"}, None),
    ({"type": "ExternalName", "externalName": "x.example.com"}, None),
])
def test_service_ip_families(spec, families):
    svc = {"spec": dict(spec)}
    strategy_for("", "Service").default(svc)
    assert svc["spec"].get("ipFamilies") == families
    assert svc["spec"].get("ipFamilyPolicy") == ("SingleStack" if families else None)
