"""Per-kind defaulting and conversion applied when a built-in object is decoded.

kube-apiserver fills defaults while decoding a request body (the generated
``SetDefaults_*`` functions of k8s.io/kubernetes pkg/apis/<group>/v1) and
folds write-only fields in during conversion (Secret ``stringData`` into
``data``). kapi does the same in the admission service, before mutating
admission, so plugins and validation see defaulted objects.
Sources: "Secrets: stringData", the API reference defaults of Pod, Service,
Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob,
ReplicationController and the admissionregistration.k8s.io/v1 kinds.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]


def _secret(obj: Obj) -> None:
    """``stringData`` entries overwrite ``data`` (base64-encoded) and are not stored; ``type`` defaults to Opaque."""
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = obj.get("data")
        if not isinstance(data, dict):
            data = obj["data"] = {}
        for key, value in string_data.items():
            if isinstance(value, str):
                data[key] = base64.b64encode(value.encode()).decode()
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _ports(ports: Any) -> None:
    for port in ports if isinstance(ports, list) else ():
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"


def _service(obj: Obj) -> None:
    """type ClusterIP, sessionAffinity None, port protocol TCP, targetPort = port, traffic policies."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    _ports(spec.get("ports"))
    for port in spec.get("ports") or ():
        if isinstance(port, dict) and "targetPort" not in port and "port" in port:
            port["targetPort"] = port["port"]
    if spec.get("type") != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec.get("type") in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec.get("type") != "ExternalName" and (spec.get("clusterIP") != "None" or spec.get("selector")):
        # kapi allocates IPv4 only: single-stack IPv4, as kube-apiserver on an IPv4 service CIDR.
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("ipFamilies", ["IPv4"])


def _image_pull_policy(image: Any) -> str:
    """Always for ``:latest`` or untagged images (no digest), else IfNotPresent."""
    text = str(image or "")
    if "@" in text:
        return "IfNotPresent"
    last = text.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _containers(containers: Any) -> None:
    for c in containers if isinstance(containers, list) else ():
        if not isinstance(c, dict):
            continue
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("imagePullPolicy", _image_pull_policy(c.get("image")))
        c.setdefault("resources", {})
        _ports(c.get("ports"))


def pod_spec(spec: Any) -> None:
    """PodSpec defaults (also used inside workload templates)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    _containers(spec.get("containers"))
    _containers(spec.get("initContainers"))


def _pod(obj: Obj) -> None:
    spec = obj.get("spec")
    pod_spec(spec)
    # SetDefaults_Pod: a container limit without a request requests the limit.
    for key in ("initContainers", "containers"):
        for c in (spec or {}).get(key) or () if isinstance(spec, dict) else ():
            res = c.get("resources") if isinstance(c, dict) else None
            if isinstance(res, dict) and isinstance(res.get("limits"), dict) and res["limits"]:
                requests = res.setdefault("requests", {})
                if isinstance(requests, dict):
                    for name, value in res["limits"].items():
                        requests.setdefault(name, value)


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


def _template(spec: Obj) -> None:
    template = spec.get("template")
    if isinstance(template, dict):
        pod_spec(template.get("spec"))


def _deployment(obj: Obj) -> None:
    """replicas 1, RollingUpdate 25%/25%, revisionHistoryLimit 10, progressDeadlineSeconds 600."""
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def _replicated(obj: Obj) -> None:
    """ReplicaSet / ReplicationController: replicas 1."""
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    _template(spec)


def _statefulset(obj: Obj) -> None:
    """replicas 1, OrderedReady, RollingUpdate partition 0, revisionHistoryLimit 10, PVC retention Retain."""
    spec = _spec(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    _template(spec)


def _daemonset(obj: Obj) -> None:
    """RollingUpdate maxUnavailable 1 / maxSurge 0, revisionHistoryLimit 10."""
    spec = _spec(obj)
    strategy = spec.setdefault("updateStrategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", 1)
                rolling.setdefault("maxSurge", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def job_spec(spec: Obj) -> None:
    """JobSpec defaults: completions/parallelism 1, backoffLimit 6, NonIndexed, suspend false."""
    if "completions" not in spec and "parallelism" not in spec:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    _template(spec)


def _job(obj: Obj) -> None:
    job_spec(_spec(obj))


def _cronjob(obj: Obj) -> None:
    """concurrencyPolicy Allow, suspend false, history limits 3 and 1, the job template's defaults."""
    spec = _spec(obj)
    spec.setdefault("concurrencyPolicy", "Allow")
    spec.setdefault("suspend", False)
    spec.setdefault("successfulJobsHistoryLimit", 3)
    spec.setdefault("failedJobsHistoryLimit", 1)
    template = spec.get("jobTemplate")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        job_spec(template["spec"])


def _webhook(hook: Any, mutating: bool) -> None:
    if not isinstance(hook, dict):
        return
    hook.setdefault("failurePolicy", "Fail")
    hook.setdefault("matchPolicy", "Equivalent")
    hook.setdefault("namespaceSelector", {})
    hook.setdefault("objectSelector", {})
    hook.setdefault("timeoutSeconds", 10)
    if mutating:
        hook.setdefault("reinvocationPolicy", "Never")
    for rule in hook.get("rules") or ():
        if isinstance(rule, dict):
            rule.setdefault("scope", "*")
    service = (hook.get("clientConfig") or {}).get("service") if isinstance(hook.get("clientConfig"), dict) else None
    if isinstance(service, dict):
        service.setdefault("port", 443)


def _mutating_webhooks(obj: Obj) -> None:
    """failurePolicy Fail, matchPolicy Equivalent, selectors {}, timeoutSeconds 10, reinvocationPolicy Never."""
    for hook in obj.get("webhooks") or ():
        _webhook(hook, True)


def _validating_webhooks(obj: Obj) -> None:
    """failurePolicy Fail, matchPolicy Equivalent, selectors {}, timeoutSeconds 10, rule scope "*"."""
    for hook in obj.get("webhooks") or ():
        _webhook(hook, False)


def _validating_policy(obj: Obj) -> None:
    """failurePolicy Fail; matchConstraints matchPolicy Equivalent, selectors {}, rule scope "*"."""
    spec = _spec(obj)
    spec.setdefault("failurePolicy", "Fail")
    constraints = spec.get("matchConstraints")
    if isinstance(constraints, dict):
        constraints.setdefault("matchPolicy", "Equivalent")
        constraints.setdefault("namespaceSelector", {})
        constraints.setdefault("objectSelector", {})
        for rule in constraints.get("resourceRules") or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


def _apiservice(obj: Obj) -> None:
    """apiregistration v1 SetDefaults_ServiceReference: service.port 443."""
    service = (obj.get("spec") or {}).get("service") if isinstance(obj.get("spec"), dict) else None
    if isinstance(service, dict) and service.get("port") is None:
        service["port"] = 443


def _hpa(obj: Obj) -> None:
    """HorizontalPodAutoscaler: minReplicas 1 (v1, v2); v2 also a CPU 80% metric and behavior's gaps."""
    from kapi import autoscaling

    autoscaling.apply_defaults(obj)


def _endpoint_slice(obj: Obj) -> None:
    """EndpointSlice ports: name "" and protocol TCP."""
    from kapi import morekinds

    morekinds.default_endpoint_slice(obj)


def _csi_driver(obj: Obj) -> None:
    """CSIDriver spec: attachRequired true, podInfoOnMount false, fsGroupPolicy ReadWriteOnceWithFSType..."""
    from kapi import morekinds

    morekinds.default_csi_driver(obj)


_ADMREG = "admissionregistration.k8s.io"
_BY_KIND: dict[tuple[str, str], Callable[[Obj], None]] = {
    ("", "Secret"): _secret,
    ("", "Service"): _service,
    ("", "Pod"): _pod,
    ("", "ReplicationController"): _replicated,
    ("apps", "Deployment"): _deployment,
    ("apps", "ReplicaSet"): _replicated,
    ("apps", "StatefulSet"): _statefulset,
    ("apps", "DaemonSet"): _daemonset,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    (_ADMREG, "MutatingWebhookConfiguration"): _mutating_webhooks,
    (_ADMREG, "ValidatingWebhookConfiguration"): _validating_webhooks,
    (_ADMREG, "ValidatingAdmissionPolicy"): _validating_policy,
    ("apiregistration.k8s.io", "APIService"): _apiservice,
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa,
    ("discovery.k8s.io", "EndpointSlice"): _endpoint_slice,
    ("storage.k8s.io", "CSIDriver"): _csi_driver,
}


def apply(obj: Obj, group: str, kind: str) -> None:
    """Default ``obj`` (a decoded object of ``group``/``kind``) in place; kinds without defaults are untouched."""
    fn = _BY_KIND.get((group, kind))
    if fn is not None:
        fn(obj)
