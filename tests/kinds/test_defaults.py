"""Decode-time defaulting and conversion of built-in kinds."""

import copy
from typing import Any

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
    # only the pod template is defaulted: SetDefaults_Job takes a whole Job, not a JobTemplateSpec
    assert set(job) == {"template"}
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
    """initIPFamilyFields is the REST storage's (BeginCreate), not SetDefaults_Service: set by PrepareForCreate."""
    svc = {"spec": dict(spec)}
    strategy_for("", "Service").default(svc)
    assert "ipFamilies" not in svc["spec"] and "ipFamilyPolicy" not in svc["spec"]
    strategy_for("", "Service").prepare_for_create(svc)
    assert svc["spec"].get("ipFamilies") == families
    assert svc["spec"].get("ipFamilyPolicy") == ("SingleStack" if families else None)


# ------------------------------------------------------------ issue 17: Pod-only vs PodSpec, volumes, status zero

POD_SPEC_DEFAULTS = {"restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                     "securityContext": {}, "schedulerName": "default-scheduler"}


@pytest.mark.parametrize(("group", "kind", "obj", "path"), [
    ("apps", "Deployment", {"spec": {"template": {"spec": {}}}}, ("spec", "template", "spec")),
    ("apps", "StatefulSet", {"spec": {"template": {"spec": {}}}}, ("spec", "template", "spec")),
    ("apps", "DaemonSet", {"spec": {"template": {"spec": {}}}}, ("spec", "template", "spec")),
    ("apps", "ReplicaSet", {"spec": {"template": {"spec": {}}}}, ("spec", "template", "spec")),
    ("batch", "Job", {"spec": {"template": {"spec": {}}}}, ("spec", "template", "spec")),
    ("batch", "CronJob", {"spec": {"jobTemplate": {"spec": {"template": {"spec": {}}}}}},
     ("spec", "jobTemplate", "spec", "template", "spec")),
    ("", "PodTemplate", {"template": {"spec": {}}}, ("template", "spec")),
    ("", "ReplicationController", {"spec": {"template": {"spec": {}}}}, ("spec", "template", "spec")),
])
def test_templates_get_pod_spec_defaults_only(group, kind, obj, path):
    node = obj
    for key in path:
        node = node[key]
    node.update({"hostNetwork": True, "volumes": [{"name": "v"}],
                 "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80}],
                                 "resources": {"limits": {"cpu": "1"}}}]})
    strategy_for(group, kind).default(obj)
    assert {k: node[k] for k in POD_SPEC_DEFAULTS} == POD_SPEC_DEFAULTS
    assert "enableServiceLinks" not in node
    assert node["volumes"] == [{"name": "v", "emptyDir": {}}]
    assert node["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert node["containers"][0]["resources"] == {"limits": {"cpu": "1"}}


def test_pod_gets_pod_only_defaults():
    pod = {"spec": {"hostNetwork": True, "containers": [{"name": "c", "image": "x", "ports": [{"containerPort": 80}]}],
                    "initContainers": [{"name": "i", "image": "x", "resources": {"limits": {"memory": "1Gi"}}}]}}
    strategy_for("", "Pod").default(pod)
    spec = pod["spec"]
    assert spec["enableServiceLinks"] is True
    assert spec["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP", "hostPort": 80}]
    assert spec["initContainers"][0]["resources"]["requests"] == {"memory": "1Gi"}


def test_volume_defaults():
    pod = {"spec": {"containers": [], "volumes": [
        {"name": "a"}, {"name": "b", "persistentVolumeClaim": {"claimName": "c"}},
        {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}},
                                                {"downwardAPI": {"items": [{"path": "n", "fieldRef": {
                                                    "fieldPath": "metadata.name"}}]}}]}},
        {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
        {"name": "r", "rbd": {"monitors": ["m"], "image": "i"}},
        {"name": "i", "image": {"reference": "img:v1"}}]}}
    strategy_for("", "Pod").default(pod)
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert volumes["a"] == {"name": "a", "emptyDir": {}}
    assert volumes["b"] == {"name": "b", "persistentVolumeClaim": {"claimName": "c"}}
    assert volumes["p"]["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}},
        {"downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}}]}}]}
    assert volumes["e"]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"] == "Filesystem"
    assert volumes["r"]["rbd"] == {"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin",
                                   "keyring": "/etc/ceph/keyring"}
    assert volumes["i"]["image"] == {"reference": "img:v1", "pullPolicy": "IfNotPresent"}


@pytest.mark.parametrize(("spec", "qos"), [
    ({"containers": [{"name": "c"}]}, "BestEffort"),
    ({"containers": [{"resources": {"requests": {"cpu": "100m"}}}]}, "Burstable"),
    ({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"},
                                    "requests": {"cpu": "1", "memory": "1Gi"}}}]}, "Guaranteed"),
    ({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m",
                                                                                      "memory": "1Gi"}}},
                     {"resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}}]}, "Burstable"),
    ({"containers": [{"resources": {"limits": {"example.com/gpu": "1"}}}]}, "BestEffort"),
    ({"resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1", "memory": "1Gi"}},
      "containers": [{"name": "c"}]}, "Guaranteed"),
])
def test_pod_qos_class(spec, qos):
    from kapi.kinds.core import pod_qos_class
    assert pod_qos_class(spec) == qos


def test_scheduling_gated_pod_starts_with_the_gated_condition():
    pod = {"spec": {"schedulingGates": [{"name": "g"}], "containers": []}}
    strategy_for("", "Pod").prepare_for_create(pod)
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort", "conditions": [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": None,
        "reason": "SchedulingGated", "message": "Scheduling is blocked due to non-empty scheduling gates"}]}


@pytest.mark.parametrize(("spec", "expected"), [
    ({"sessionAffinity": "ClientIP", "ports": [{"port": 80, "targetPort": 0}]},
     {"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
      "ports": [{"port": 80, "targetPort": 80, "protocol": "TCP"}], "type": "ClusterIP",
      "internalTrafficPolicy": "Cluster"}),
    ({"sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}, "externalIPs": ["1.2.3.4"]},
     {"sessionAffinity": "None", "externalIPs": ["1.2.3.4"], "type": "ClusterIP", "internalTrafficPolicy": "Cluster",
      "externalTrafficPolicy": "Cluster"}),
    ({"type": "LoadBalancer"}, {"type": "LoadBalancer", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
                                "externalTrafficPolicy": "Cluster", "allocateLoadBalancerNodePorts": True}),
    ({"type": "ExternalName", "externalName": "x.example.com"},
     {"type": "ExternalName", "externalName": "x.example.com", "sessionAffinity": "None"}),
])
def test_service_set_defaults(spec, expected):
    svc = {"spec": spec}
    strategy_for("", "Service").default(svc)
    assert {k: v for k, v in svc["spec"].items() if k not in ("ipFamilyPolicy", "ipFamilies")} == expected


def test_volume_and_claim_defaults_and_statuses():
    pv = {"spec": {"capacity": {"storage": "1Gi"}}}
    strategy_for("", "PersistentVolume").default(pv)
    assert pv["spec"] == {"capacity": {"storage": "1Gi"}, "persistentVolumeReclaimPolicy": "Retain",
                          "volumeMode": "Filesystem"}
    strategy_for("", "PersistentVolume").prepare_for_create(pv)
    assert pv["status"]["phase"] == "Pending" and pv["status"]["lastPhaseTransitionTime"].endswith("Z")
    pvc = {"spec": {}}
    strategy_for("", "PersistentVolumeClaim").default(pvc)
    strategy_for("", "PersistentVolumeClaim").prepare_for_create(pvc)
    assert pvc == {"spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}}
    sts = {"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}]}}
    strategy_for("apps", "StatefulSet").default(sts)
    assert sts["spec"]["volumeClaimTemplates"] == [{"kind": "PersistentVolumeClaim", "apiVersion": "v1",
                                                    "metadata": {"name": "data"}, "spec": {"volumeMode": "Filesystem"},
                                                    "status": {"phase": "Pending"}}]


def test_replication_controller_selector_and_labels_from_the_template():
    rc = {"metadata": {}, "spec": {"template": {"metadata": {"labels": {"app": "a"}}, "spec": {}}}}
    strategy_for("", "ReplicationController").default(rc)
    assert rc["spec"]["selector"] == {"app": "a"} and rc["metadata"]["labels"] == {"app": "a"}


def test_job_defaults_that_depend_on_other_fields():
    job = {"spec": {"backoffLimitPerIndex": 1, "completionMode": "Indexed", "completions": 2,
                    "podFailurePolicy": {"rules": [{"action": "Ignore",
                                                    "onPodConditions": [{"type": "DisruptionTarget"}]}]}}}
    strategy_for("batch", "Job").default(job)
    spec = job["spec"]
    assert (spec["backoffLimit"], spec["podReplacementPolicy"]) == (2147483647, "Failed")
    assert spec["podFailurePolicy"]["rules"][0]["onPodConditions"] == [{"type": "DisruptionTarget", "status": "True"}]


def test_statefulset_retention_policy_fields_default_one_by_one():
    sts = {"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}}
    strategy_for("apps", "StatefulSet").default(sts)
    assert sts["spec"]["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Delete", "whenScaled": "Retain"}


def test_cronjob_names_leave_room_for_the_job_suffix():
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    cronjob = {"metadata": {"name": "c" * 53}, "spec": {"schedule": "* * * * *", "jobTemplate": template}}
    causes = strategy_for("batch", "CronJob").validate(cronjob)
    assert [(c.field, c.message) for c in causes] == [
        ("metadata.name", f'Invalid value: "{"c" * 53}": must be no more than 52 characters')]
    cronjob["metadata"]["name"] = "c" * 52
    assert strategy_for("batch", "CronJob").validate(cronjob) == []


def test_name_warnings_on_create():
    pod = {"metadata": {"name": "a.b"}}
    assert strategy_for("", "Pod").warnings_on_create(pod) == [
        "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is "
        "recommended: [must not contain dots]"]
    for group, kind in (("apps", "Deployment"), ("apps", "ReplicaSet"), ("batch", "Job"), ("batch", "CronJob"),
                        ("", "ReplicationController")):
        assert strategy_for(group, kind).warnings_on_create(pod) == [
            "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS "
            "label is recommended: [must not contain dots]"], kind
    assert strategy_for("apps", "Deployment").warnings_on_create({"metadata": {"name": "web"}}) == []
    assert strategy_for("", "ConfigMap").warnings_on_create(pod) == []


def test_pod_status_update_keeps_the_qos_class_and_observed_generations():
    old = {"status": {"phase": "Pending", "qosClass": "Burstable", "observedGeneration": 2,
                      "conditions": [{"type": "Ready", "status": "False", "observedGeneration": 2}]}}
    new = {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"},
                                                         {"type": "Initialized", "status": "True"}]}}
    strategy_for("", "Pod").prepare_for_update(new, old, "status")
    assert new["status"] == {"phase": "Running", "qosClass": "Burstable", "observedGeneration": 2, "conditions": [
        {"type": "Ready", "status": "True", "observedGeneration": 2}, {"type": "Initialized", "status": "True"}]}
    main = {"status": {}}
    strategy_for("", "Pod").prepare_for_update(main, old, "")
    assert main == {"status": {}}  # the main resource's status is the stored one already (the generic rule)


def test_deployment_and_replicaset_status_validation():
    old = {"status": {"collisionCount": 2}}
    new = {"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "updatedReplicas": -1,
                      "collisionCount": 1}}
    causes = strategy_for("apps", "Deployment").validate_update(new, old, "status")
    assert [(c.field, c.message) for c in causes] == [
        ("status.updatedReplicas", "Invalid value: -1: must be greater than or equal to 0"),
        ("status.readyReplicas", "Invalid value: 2: cannot be greater than status.replicas"),
        ("status.availableReplicas", "Invalid value: 3: cannot be greater than status.replicas"),
        ("status.availableReplicas", "Invalid value: 3: cannot be greater than readyReplicas"),
        ("status.collisionCount", "Invalid value: 1: cannot be decremented")]
    rs = {"status": {"replicas": 1, "fullyLabeledReplicas": 2}}
    causes = strategy_for("apps", "ReplicaSet").validate_update(rs, {}, "status")
    assert [(c.field, c.message) for c in causes] == [
        ("status.fullyLabeledReplicas", "Invalid value: 2: cannot be greater than status.replicas")]
    assert strategy_for("apps", "Deployment").validate_update({"status": {"replicas": 2, "readyReplicas": 1}},
                                                              {}, "status") == []


def test_replicaset_templates_may_not_set_active_deadline_seconds():
    rs = {"metadata": {"name": "r"}, "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"activeDeadlineSeconds": 5, "containers": [{"name": "c", "image": "x"}]}}}}
    for kind in ("ReplicaSet", "Deployment"):
        obj = copy.deepcopy(rs)
        strategy_for("apps", kind).default(obj)
        causes = strategy_for("apps", kind).validate(obj)
        assert [(c.field, c.message) for c in causes] == [
            ("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in ReplicaSet is not "
                                                         "Supported")], kind


def test_statefulset_and_daemonset_status_validation():
    sts = {"status": {"replicas": 1, "readyReplicas": 1, "currentReplicas": 2, "availableReplicas": 2}}
    causes = strategy_for("apps", "StatefulSet").validate_update(sts, {}, "status")
    assert [(c.field, c.message) for c in causes] == [
        ("status.currentReplicas", "Invalid value: 2: cannot be greater than status.replicas"),
        ("status.availableReplicas", "Invalid value: 2: cannot be greater than status.replicas"),
        ("status.availableReplicas", "Invalid value: 2: cannot be greater than status.readyReplicas")]
    ds = {"status": {"numberReady": -1, "collisionCount": 0}}
    causes = strategy_for("apps", "DaemonSet").validate_update(ds, {"status": {"collisionCount": 1}}, "status")
    assert [(c.field, c.message) for c in causes] == [
        ("status.numberReady", "Invalid value: -1: must be greater than or equal to 0"),
        ("status.collisionCount", "Invalid value: 0: cannot be decremented")]
    daemonset = {"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
        "metadata": {"labels": {"a": "b"}}, "spec": {"activeDeadlineSeconds": 1,
                                                     "containers": [{"name": "c", "image": "x"}]}}}}
    strategy_for("apps", "DaemonSet").default(daemonset)
    causes = strategy_for("apps", "DaemonSet").validate(daemonset)
    assert [(c.field, c.message) for c in causes] == [
        ("spec.template.spec.activeDeadlineSeconds", "Forbidden: activeDeadlineSeconds in DaemonSet is not Supported")]


def test_limit_range_endpoints_and_node_status_defaults():
    lr = {"spec": {"limits": [{"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "default": {"cpu": "1"},
                               "min": {"memory": "10Mi", "cpu": "100m"}},
                              {"type": "Pod", "max": {"cpu": "4"}}]}}
    strategy_for("", "LimitRange").default(lr)
    container, pod = lr["spec"]["limits"]
    assert container["default"] == {"cpu": "1", "memory": "1Gi"}
    assert container["defaultRequest"] == {"cpu": "1", "memory": "1Gi"}
    assert pod == {"type": "Pod", "max": {"cpu": "4"}}
    ep = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]}
    strategy_for("", "Endpoints").default(ep)
    assert ep["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    node = {"status": {"capacity": {"cpu": "4"}}}
    strategy_for("", "Node").default(node)
    assert node["status"]["allocatable"] == {"cpu": "4"}


@pytest.mark.parametrize(("schedule", "error"), [
    ("*/5 * * * *", None), ("0 9-17 * JAN-mar mon,fri", None), ("@hourly", None), ("@every 1h30m", None),
    ("TZ=Europe/Paris 0 1 * * *", None),
    ("x", "expected exactly 5 fields, found 1: [x]"),
    ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("a * * * *", 'failed to parse int from a: strconv.Atoi: parsing "a": invalid syntax'),
    ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
    ("@fortnightly", "unrecognized descriptor: @fortnightly"),
])
def test_cron_schedules_parse_as_robfig_cron(schedule, error):
    from kapi.kinds.batch import cron_schedule_error
    assert cron_schedule_error(schedule) == error


def test_cronjob_spec_validation():
    template = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    cronjob = {"metadata": {"name": "c"}, "spec": {
        "schedule": "TZ=UTC 0 * * * *", "jobTemplate": template, "timeZone": "Mars/Olympus",
        "concurrencyPolicy": "Sometimes", "startingDeadlineSeconds": -1, "failedJobsHistoryLimit": -1}}
    strategy_for("batch", "CronJob").default(cronjob)
    causes = strategy_for("batch", "CronJob").validate(cronjob)
    assert [(c.field, c.message) for c in causes] == [
        ("spec.schedule", 'Invalid value: "TZ=UTC 0 * * * *": cannot use TZ or CRON_TZ in schedule, use timeZone field '
                          "instead"),
        ("spec.startingDeadlineSeconds", "Invalid value: -1: must be greater than or equal to 0"),
        ("spec.timeZone", 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus'),
        ("spec.concurrencyPolicy", 'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"'),
        ("spec.failedJobsHistoryLimit", "Invalid value: -1: must be greater than or equal to 0")]


@pytest.mark.parametrize("zone", ["America/Argentina", "x" * 300, "Etc"])  # a directory, a name too long
def test_cronjob_time_zone_that_is_no_file_is_unknown(zone: str) -> None:
    from kapi.kinds.batch import validate_cronjob_spec

    causes = validate_cronjob_spec({"schedule": "0 * * * *", "timeZone": zone})
    assert [(c.field, c.message) for c in causes] == [
        ("spec.timeZone", f'Invalid value: "{zone}": unknown time zone {zone}')]


def test_match_label_keys_merge_into_selectors_on_create():
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone", "matchLabelKeys": ["rev", "x"],
            "mismatchLabelKeys": ["team"]}
    pod = {"metadata": {"labels": {"app": "web", "rev": "7", "team": "a"}}, "spec": {
        "containers": [],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [copy.deepcopy(term)]},
                     "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                         {"weight": 1, "podAffinityTerm": {"topologyKey": "zone", "matchLabelKeys": ["rev"]}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["rev"]}]}}
    strategy_for("", "Pod").prepare_for_create(pod)
    spec = pod["spec"]
    assert spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"] \
        == {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "rev", "operator": "In", "values": ["7"]},
                                                               {"key": "team", "operator": "NotIn", "values": ["a"]}]}
    preferred = spec["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert "labelSelector" not in preferred["podAffinityTerm"]  # no selector: matches nothing, left alone
    assert spec["topologySpreadConstraints"][0]["labelSelector"]["matchExpressions"] == [
        {"key": "rev", "operator": "In", "values": ["7"]}]


def test_volume_mounts_are_validated():
    mounts = [{"name": "data", "mountPath": "/d"}, {"name": "cache", "mountPath": "/d"},
              {"name": "data", "mountPath": "", "subPath": "a", "subPathExpr": "b"}]
    spec = {"volumes": [{"name": "data", "emptyDir": {}}],
            "containers": [{"name": "c", "image": "x", "volumeMounts": mounts}]}
    from kapi.kinds.podspec import validate_pod_spec
    causes = validate_pod_spec(spec, "spec")
    assert [(c.field, c.message) for c in causes] == [
        ("spec.containers[0].volumeMounts[1].name", 'Not found: "cache"'),
        ("spec.containers[0].volumeMounts[1].mountPath", 'Invalid value: "/d": must be unique'),
        ("spec.containers[0].volumeMounts[2].mountPath", "Required value"),
        ("spec.containers[0].volumeMounts[2].subPathExpr", 'Invalid value: "b": subPathExpr and subPath are mutually '
                                                           "exclusive")]


def test_statefulset_containers_may_mount_their_claim_templates():
    # ValidatePodTemplateSpecForStatefulSet does not validate the PodSpec (kube's TODO): no mount is checked
    sts = {"metadata": {"name": "db"}, "spec": {
        "selector": {"matchLabels": {"a": "b"}}, "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {}}],
        "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [
            {"name": "c", "image": "x", "volumeMounts": [{"name": "data", "mountPath": "/d"},
                                                         {"name": "other", "mountPath": "/o"}]}]}}}}
    strategy_for("apps", "StatefulSet").default(sts)
    assert strategy_for("apps", "StatefulSet").validate(sts) == []


def test_job_spec_field_validation():
    template = {"spec": {"restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "x"}]}}
    job = {"metadata": {"name": "j"}, "spec": {"parallelism": -1, "completionMode": "Indexed", "maxFailedIndexes": 1,
                                               "podFailurePolicy": {"rules": []}, "podReplacementPolicy":
                                                   "TerminatingOrFailed", "template": template}}
    causes = strategy_for("batch", "Job").validate(job)
    assert [(c.field, c.message) for c in causes][:5] == [
        ("spec.parallelism", "Invalid value: -1: must be greater than or equal to 0"),
        ("spec.backoffLimitPerIndex", "Required value: when maxFailedIndexes is specified"),
        ("spec.completions", "Required value: when completion mode is Indexed"),
        ("spec.podReplacementPolicy", 'Unsupported value: "TerminatingOrFailed": supported values: "Failed"'),
        ("spec.template.spec.restartPolicy",
         'Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified')]
    nonindexed = {"metadata": {"name": "j"}, "spec": {"backoffLimitPerIndex": 1, "template": {
        "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    assert [(c.field, c.message) for c in strategy_for("batch", "Job").validate(nonindexed)] == [
        ("spec.backoffLimitPerIndex", "Invalid value: 1: requires indexed completion mode")]


def test_job_status_update_validation():
    old = {"status": {"conditions": [{"type": "SuccessCriteriaMet", "status": "True"}]}}
    new = {"status": {"active": -1, "uncountedTerminatedPods": {"succeeded": ["a", ""], "failed": ["a"]},
                      "conditions": [{"type": "FailureTarget", "status": "True"}]}}
    causes = strategy_for("batch", "Job").validate_update(new, old, "status")
    assert [(c.field, c.message) for c in causes] == [
        ("status.active", "Invalid value: -1: must be greater than or equal to 0"),
        ("status.uncountedTerminatedPods.succeeded[1]", 'Invalid value: "": must not be empty'),
        ("status.uncountedTerminatedPods.failed[0]", 'Duplicate value: "a"'),
        ("status.conditions", "Invalid value: cannot disable the SuccessCriteriaMet=True condition")]
    assert strategy_for("batch", "Job").validate_update({"status": {"active": 1}}, {}, "status") == []


def test_empty_container_policies_are_defaulted_like_unset_ones() -> None:
    """SetDefaults_Container tests for "": an empty imagePullPolicy, terminationMessagePolicy or
    terminationMessagePath a client sent is defaulted, then validation finds nothing to refuse."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "nginx:1.27", "imagePullPolicy": "", "terminationMessagePolicy": "",
         "terminationMessagePath": ""}]}}
    strategy_for("", "Pod").default(pod)
    container = pod["spec"]["containers"][0]
    assert (container["imagePullPolicy"], container["terminationMessagePolicy"],
            container["terminationMessagePath"]) == ("IfNotPresent", "File", "/dev/termination-log")
    assert strategy_for("", "Pod").validate(pod) == []


def test_claim_data_sources_are_normalized() -> None:
    """EnforceDataSourceBackwardsCompatibility and NormalizeDataSources in the PVC strategy's PrepareForCreate."""
    pvc = strategy_for("", "PersistentVolumeClaim")

    def prepared(spec: dict[str, Any]) -> dict[str, Any]:
        obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "c"}, "spec": spec}
        pvc.prepare_for_create(obj)
        return obj["spec"]

    snap = {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"}
    assert prepared({"dataSource": dict(snap)}) == {"dataSource": snap, "dataSourceRef": snap}
    ref = {"apiGroup": "example.com", "kind": "Populator", "name": "p"}
    assert prepared({"dataSourceRef": dict(ref)}) == {"dataSourceRef": ref, "dataSource": ref}
    assert prepared({"dataSource": dict(ref)}) == {}  # not a PVC or snapshot: dropped
    other = {**ref, "namespace": "other"}
    assert prepared({"dataSourceRef": dict(other)}) == {"dataSourceRef": other}  # a dataSource has no namespace
