"""Per-kind Table columns, as kube-apiserver's printers (pkg/printers/internalversion) define them.

Each :class:`~services.gateway.columns.Printer` is a list of ``Column``
(header, type, priority — 1 means shown only with ``-o wide``) and a
function from an object to its cells (without NAME, which :mod:`table` adds
first). Kinds without a printer get kube's default table: Name and Created At.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kapi import certificates
from kapi.kinds import autoscaling
from services.gateway.columns import Column, Obj, Printer, age, get, human_duration
from services.gateway.printers_more import MORE_PRINTERS, doc


def _none(value: Any) -> Any:
    return "<none>" if value in (None, "", [], {}) else value


def _pod(obj: Obj) -> list[Any]:
    statuses = get(obj, "status", "containerStatuses", default=[])
    total = len(get(obj, "spec", "containers", default=[]))
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(int(s.get("restartCount") or 0) for s in statuses)
    last_restart = max((str(get(s, "lastState", "terminated", "finishedAt", default="")) for s in statuses),
                       default="")
    reason = get(obj, "status", "reason") or get(obj, "status", "phase", default="")
    for s in statuses:
        waiting = get(s, "state", "waiting", "reason")
        terminated = get(s, "state", "terminated", "reason")
        if waiting or terminated:
            reason = waiting or terminated
    if get(obj, "metadata", "deletionTimestamp"):
        reason = "Terminating"
    restarts_cell = str(restarts)
    if restarts and last_restart:  # kube: "3 (5m ago)" from the latest lastState.terminated.finishedAt
        restarts_cell = f"{restarts} ({age({'metadata': {'creationTimestamp': last_restart}})} ago)"
    return [f"{ready}/{total}", reason, restarts_cell, _none(get(obj, "status", "podIP")),
            _none(get(obj, "spec", "nodeName")), _none(get(obj, "status", "nominatedNodeName")),
            _none(len(get(obj, "spec", "readinessGates", default=[])) or None)]


_DEFAULT_CLASS_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class",
                               "storageclass.beta.kubernetes.io/is-default-class")


def _storage_class_name(obj: Obj) -> str:
    """printStorageClass's NAME: ``name (default)`` when either is-default-class annotation is exactly "true"."""
    name = str(get(obj, "metadata", "name", default=""))
    annotations = get(obj, "metadata", "annotations", default={})
    if isinstance(annotations, dict) and any(annotations.get(a) == "true" for a in _DEFAULT_CLASS_ANNOTATIONS):
        return f"{name} (default)"
    return name


def _ports(ports: Any) -> str:
    out = []
    for p in ports or []:
        text = str(p.get("port", ""))
        if p.get("nodePort"):
            text += f":{p['nodePort']}"
        out.append(f"{text}/{p.get('protocol') or 'TCP'}")
    return ",".join(out) or "<none>"


def _service(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    external = spec.get("externalIPs") or [
        i.get("ip") or i.get("hostname") for i in get(obj, "status", "loadBalancer", "ingress", default=[])]
    ext = ",".join(x for x in external if x) or ("<pending>" if spec.get("type") == "LoadBalancer" else "<none>")
    if spec.get("type") == "ExternalName":
        ext = spec.get("externalName", "<none>")
    selector = ",".join(f"{k}={v}" for k, v in (spec.get("selector") or {}).items()) or "<none>"
    return [spec.get("type", ""), spec.get("clusterIP") or "<none>", ext, _ports(spec.get("ports")), selector]


def _containers(obj: Obj) -> tuple[str, str]:
    cs = get(obj, "spec", "template", "spec", "containers", default=[])
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _selector(obj: Obj) -> str:
    sel = get(obj, "spec", "selector", default={})
    labels = sel.get("matchLabels") if isinstance(sel, dict) and "matchLabels" in sel else sel
    parts = [f"{k}={v}" for k, v in (labels or {}).items()] if isinstance(labels, dict) else []
    for expr in (sel.get("matchExpressions") or []) if isinstance(sel, dict) else []:
        values = ",".join(expr.get("values") or [])
        parts.append(f"{expr.get('key')} {str(expr.get('operator', '')).lower()} ({values})")
    return ",".join(parts) or "<none>"


def _deployment(obj: Obj) -> list[Any]:
    status = obj.get("status") or {}
    names, images = _containers(obj)
    return [f"{status.get('readyReplicas', 0)}/{get(obj, 'spec', 'replicas', default=0)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0), names, images, _selector(obj)]


def _replicaset(obj: Obj) -> list[Any]:
    status = obj.get("status") or {}
    names, images = _containers(obj)
    return [get(obj, "spec", "replicas", default=0), status.get("replicas", 0), status.get("readyReplicas", 0),
            names, images, _selector(obj)]


def _statefulset(obj: Obj) -> list[Any]:
    names, images = _containers(obj)
    return [f"{get(obj, 'status', 'readyReplicas', default=0)}/{get(obj, 'spec', 'replicas', default=0)}",
            names, images]


def _daemonset(obj: Obj) -> list[Any]:
    s = obj.get("status") or {}
    node_selector = get(obj, "spec", "template", "spec", "nodeSelector", default={})
    names, images = _containers(obj)
    return [s.get("desiredNumberScheduled", 0), s.get("currentNumberScheduled", 0), s.get("numberReady", 0),
            s.get("updatedNumberScheduled", 0), s.get("numberAvailable", 0),
            ",".join(f"{k}={v}" for k, v in node_selector.items()) or "<none>", names, images, _selector(obj)]


def _job_condition(obj: Obj, kind: str) -> bool:
    """hasJobCondition: the first condition of type ``kind`` has status True."""
    for c in get(obj, "status", "conditions", default=[]):
        if isinstance(c, dict) and c.get("type") == kind:
            return c.get("status") == "True"
    return False


def _job_duration(obj: Obj) -> str:
    """printJob's Duration: completionTime - startTime, the time since startTime while running, "" unstarted."""
    start = _timestamp(get(obj, "status", "startTime"))
    if start is None:
        return ""
    end = _timestamp(get(obj, "status", "completionTime")) or datetime.now(UTC)
    return human_duration((end - start).total_seconds())


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)


def _job(obj: Obj) -> list[Any]:
    """printJob (pkg/printers/internalversion): Status (Complete, Failed, Terminating, Suspended, FailureTarget,
    Running, in that precedence), Completions (``n/c``; no completions: ``n/1``, ``n/1 of p`` for parallelism
    above 1), Duration, then the wide Containers, Images and Selector."""
    if _job_condition(obj, "Complete"):
        status = "Complete"
    elif _job_condition(obj, "Failed"):
        status = "Failed"
    elif get(obj, "metadata", "deletionTimestamp"):
        status = "Terminating"
    elif _job_condition(obj, "Suspended"):
        status = "Suspended"
    elif _job_condition(obj, "FailureTarget"):
        status = "FailureTarget"
    else:
        status = "Running"
    completions = get(obj, "spec", "completions")
    succeeded = get(obj, "status", "succeeded", default=0)
    parallelism = get(obj, "spec", "parallelism", default=0)
    if completions is not None:
        done = f"{succeeded}/{completions}"
    elif isinstance(parallelism, int) and parallelism > 1:
        done = f"{succeeded}/1 of {parallelism}"
    else:
        done = f"{succeeded}/1"
    names, images = _containers(obj)
    return [status, done, _job_duration(obj), names, images, _selector(obj)]


def _count(key: str) -> Callable[[Obj], list[Any]]:
    return lambda obj: [len(obj.get(key) or {}) + (len(obj.get("binaryData") or {}) if key == "data" else 0)]


def _secret(obj: Obj) -> list[Any]:
    return [obj.get("type", ""), len(obj.get("data") or {})]


def _binding(obj: Obj) -> list[Any]:
    ref = obj.get("roleRef") or {}
    subjects = obj.get("subjects") or []

    def names(kind: str) -> str:
        if kind == "ServiceAccount":
            return ",".join(f"{s.get('namespace', '')}/{s.get('name', '')}" for s in subjects if s.get("kind") == kind)
        return ",".join(s.get("name", "") for s in subjects if s.get("kind") == kind)

    return [f"{ref.get('kind', '')}/{ref.get('name', '')}", names("User"), names("Group"), names("ServiceAccount")]


def _lease(obj: Obj) -> list[Any]:
    """printLease: the holder, "" when none."""
    return [get(obj, "spec", "holderIdentity", default="")]


def _flowschema(obj: Obj) -> list[Any]:
    """kube's FlowSchema columns; MissingPL from the Dangling condition."""
    spec = obj.get("spec") or {}
    method = get(spec, "distinguisherMethod", "type", default="<none>")
    dangling = next((c.get("status") for c in get(obj, "status", "conditions", default=[])
                     if c.get("type") == "Dangling"), "?")
    missing = {"True": "True", "False": "False"}.get(str(dangling), "?")
    return [get(spec, "priorityLevelConfiguration", "name", default=""), spec.get("matchingPrecedence", 0), method,
            missing]


def _priority_level(obj: Obj) -> list[Any]:
    """kube's PriorityLevelConfiguration columns ("<none>" where a level has no queuing)."""
    spec = obj.get("spec") or {}
    limited = spec.get("limited") or {}
    queuing = get(limited, "limitResponse", "queuing", default={})
    if spec.get("type") != "Limited":
        return [spec.get("type", ""), "<none>", "<none>", "<none>", "<none>"]
    return [spec.get("type", ""), limited.get("nominalConcurrencyShares", 30),
            queuing.get("queues", "<none>") if queuing else "<none>",
            queuing.get("handSize", "<none>") if queuing else "<none>",
            queuing.get("queueLengthLimit", "<none>") if queuing else "<none>"]


def _apiservice(obj: Obj) -> list[Any]:
    """kube-aggregator's APIService columns: Service ("Local" or namespace/name), Available ("False (Reason)")."""
    service = get(obj, "spec", "service")
    where = f"{service.get('namespace', '')}/{service.get('name', '')}" if isinstance(service, dict) else "Local"
    available = next((c for c in get(obj, "status", "conditions", default=[])
                      if isinstance(c, dict) and c.get("type") == "Available"), None)
    status = "Unknown"
    if available is not None:
        status = str(available.get("status") or "")
        if status != "True" and available.get("reason"):
            status = f"{status} ({available['reason']})"
    return [where, status]


def _hpa(obj: Obj) -> list[Any]:
    """kube's printHorizontalPodAutoscaler: Reference, Targets (formatHPAMetrics), MinPods, MaxPods, Replicas."""
    spec = obj.get("spec") or {}
    ref = spec.get("scaleTargetRef") or {}
    minimum = spec.get("minReplicas")
    return [f"{ref.get('kind', '')}/{ref.get('name', '')}", autoscaling.format_targets(obj),
            "<unset>" if minimum is None else str(minimum), spec.get("maxReplicas", 0),
            get(obj, "status", "currentReplicas", default=0)]


def _csr(obj: Obj) -> list[Any]:
    """kube's printCertificateSigningRequest: SignerName, Requestor, RequestedDuration, Condition."""
    spec = obj.get("spec") or {}
    seconds = spec.get("expirationSeconds")
    return [spec.get("signerName") or "<none>", spec.get("username", ""),
            "<none>" if seconds is None else human_duration(seconds), certificates.condition_summary(obj)]


def _more(items: list[str], limit: int = 3) -> str:
    """kube's listWithMoreString: the first ``limit`` items joined by ",", "+ N more...", "<unset>" when empty."""
    text = ",".join(items[:limit])
    if len(items) > limit:
        return f"{text} + {len(items) - limit} more..."
    return text or "<unset>"


def _endpoint_slice(obj: Obj) -> list[Any]:
    """kube's printEndpointSlice: AddressType, Ports (number, name or *), Endpoints (addresses)."""
    ports = [str(p["port"]) if p.get("port") is not None else (p.get("name") if p.get("name") is not None else "*")
             for p in obj.get("ports") or []]
    addresses = [str(a) for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    return [obj.get("addressType", ""), _more(ports), _more(addresses)]


def _csi_driver(obj: Obj) -> list[Any]:
    """kube's printCSIDriver columns."""
    spec = obj.get("spec") or {}
    audiences = ",".join(str(t.get("audience", "")) for t in spec.get("tokenRequests") or [])
    return [spec.get("attachRequired", True), spec.get("podInfoOnMount", False), spec.get("storageCapacity", False),
            audiences or "<unset>", spec.get("requiresRepublish", False),
            ",".join(spec.get("volumeLifecycleModes") or []) or "<none>"]


def _volume_attachment(obj: Obj) -> list[Any]:
    """kube's printVolumeAttachment: Attacher, PV, Node, Attached."""
    spec = obj.get("spec") or {}
    return [spec.get("attacher", ""), get(spec, "source", "persistentVolumeName", default=""),
            spec.get("nodeName", ""), get(obj, "status", "attached", default=False)]


_ROLE_COLUMNS = (Column("Role"), Column("Users", priority=1), Column("Groups", priority=1),
                 Column("ServiceAccounts", priority=1))

def _resource_claim_state(obj: Obj) -> list[Any]:
    """kube's resourceClaimState: deleted / pending / allocated[,reserved|,deallocating], comma-joined."""
    states = []
    deleted = bool(get(obj, "metadata", "deletionTimestamp"))
    if deleted:
        states.append("deleted")
    if not get(obj, "status", "allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if get(obj, "status", "reservedFor"):
            states.append("reserved")
        elif deleted:
            states.append("deallocating")
    return [",".join(states)]


def _component_status(obj: Obj) -> list[Any]:
    """printComponentStatus: the Healthy condition's Status as Healthy (status "True") or Unhealthy (any other),
    its message and error; Unknown and two empty cells when there is no Healthy condition."""
    for condition in obj.get("conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            return [status, condition.get("message", ""), condition.get("error", "")]
    return ["Unknown", "", ""]


_CONTAINERS = "Names of each container in the template."
_IMAGES = "Images referenced by each container in the template."

PRINTERS: dict[tuple[str, str], Printer] = {
    # kube's componentStatusColumnDefinitions (pkg/printers/internalversion/printers.go): no Age column
    ("", "componentstatuses"): Printer((Column("Status", description="Status of the component conditions"),
                                        Column("Message", description="Message of the component conditions"),
                                        Column("Error", description="Error of the component conditions")),
                                       _component_status, with_age=False),
    # kube's podColumnDefinitions, serviceColumnDefinitions (pkg/printers/internalversion/printers.go)
    ("", "pods"): Printer((
        Column("Ready", description="The aggregate readiness state of this pod for accepting traffic."),
        Column("Status", description="The aggregate status of the containers in this pod."),
        Column("Restarts", "string", description="The number of times the containers in this pod have been "
               "restarted and when the last container in this pod has restarted."),
        Column("IP", priority=1, description=doc("core.v1.PodStatus", "podIP")),
        Column("Node", priority=1, description=doc("core.v1.PodSpec", "nodeName")),
        Column("Nominated Node", priority=1, description=doc("core.v1.PodStatus", "nominatedNodeName")),
        Column("Readiness Gates", priority=1, description=doc("core.v1.PodSpec", "readinessGates"))), _pod),
    ("", "services"): Printer((Column("Type", description=doc("core.v1.ServiceSpec", "type")),
                               Column("Cluster-IP", description=doc("core.v1.ServiceSpec", "clusterIP")),
                               Column("External-IP", description=doc("core.v1.ServiceSpec", "externalIPs")),
                               Column("Port(s)", description=doc("core.v1.ServiceSpec", "ports")),
                               Column("Selector", priority=1, description=doc("core.v1.ServiceSpec", "selector"))),
                              _service),
    ("", "namespaces"): Printer((Column("Status", description="The status of the namespace"),),
                                lambda o: [get(o, "status", "phase", default="")]),
    # kube's configMapColumnDefinitions and secretColumnDefinitions: Data is of type string (its cell a count)
    ("", "configmaps"): Printer((Column("Data", description=doc("core.v1.ConfigMap", "data")),), _count("data")),
    ("", "secrets"): Printer((Column("Type", description=doc("core.v1.Secret", "type")),
                              Column("Data", description=doc("core.v1.Secret", "data"))), _secret),
    # kube's serviceAccountColumnDefinitions (Secrets of type string) and endpointColumnDefinitions
    ("", "serviceaccounts"): Printer((Column("Secrets", description=doc("core.v1.ServiceAccount", "secrets")),),
                                     lambda o: [len(o.get("secrets") or [])]),
    ("", "endpoints"): Printer((Column("Endpoints", description=doc("core.v1.Endpoints", "subsets")),),
                               lambda o: [_none(",".join(
        f"{a.get('ip')}:{p.get('port')}" for s in o.get("subsets") or [] for a in s.get("addresses") or []
        for p in s.get("ports") or []))]),
    # kube's deploymentColumnDefinitions: all of type string; docs of extensions/v1beta1 (Selector's as kube serves
    # it; Up-to-date/Available apps/v1's, kapi having no extensions/v1beta1 definitions)
    ("apps", "deployments"): Printer((
        Column("Ready", description="Number of the pod with ready state"),
        Column("Up-to-date", description=doc("apps.v1.DeploymentStatus", "updatedReplicas")),
        Column("Available", description=doc("apps.v1.DeploymentStatus", "availableReplicas")),
        Column("Containers", priority=1, description=_CONTAINERS),
        Column("Images", priority=1, description=_IMAGES),
        Column("Selector", priority=1, description="Label selector for pods. Existing ReplicaSets whose pods are "
               "selected by this will be the ones affected by this deployment.")), _deployment),
    ("apps", "replicasets"): Printer((Column("Desired", "integer"), Column("Current", "integer"),
                                      Column("Ready", "integer"), Column("Containers", priority=1),
                                      Column("Images", priority=1), Column("Selector", priority=1)), _replicaset),
    ("apps", "statefulsets"): Printer((Column("Ready", description="Number of the pod with ready state"),
                                       Column("Containers", priority=1, description=_CONTAINERS),
                                       Column("Images", priority=1, description=_IMAGES)), _statefulset),
    ("apps", "daemonsets"): Printer((Column("Desired", "integer"), Column("Current", "integer"),
                                     Column("Ready", "integer"), Column("Up-to-date", "integer"),
                                     Column("Available", "integer"), Column("Node Selector"),
                                     Column("Containers", priority=1), Column("Images", priority=1),
                                     Column("Selector", priority=1)), _daemonset),
    ("batch", "jobs"): Printer((Column("Status"), Column("Completions"), Column("Duration"),
                                Column("Containers", priority=1), Column("Images", priority=1),
                                Column("Selector", priority=1)), _job),
    ("rbac.authorization.k8s.io", "rolebindings"): Printer(_ROLE_COLUMNS, _binding),
    ("rbac.authorization.k8s.io", "clusterrolebindings"): Printer(_ROLE_COLUMNS, _binding),
    ("coordination.k8s.io", "leases"): Printer((Column("Holder"),), _lease),
    ("scheduling.k8s.io", "priorityclasses"): Printer((Column("Value", "integer"), Column("Global-Default", "boolean"),
                                                       Column("PreemptionPolicy")), lambda o: [
        o.get("value", 0), o.get("globalDefault", False), o.get("preemptionPolicy", "PreemptLowerPriority")]),
    ("storage.k8s.io", "storageclasses"): Printer((Column("Provisioner"), Column("ReclaimPolicy"),
                                                   Column("VolumeBindingMode"), Column("AllowVolumeExpansion",
                                                                                      "boolean")), lambda o: [
        o.get("provisioner", ""), o.get("reclaimPolicy", "Delete"), o.get("volumeBindingMode", "Immediate"),
        o.get("allowVolumeExpansion", False)], name=_storage_class_name),
    ("apiregistration.k8s.io", "apiservices"): Printer((Column("Service"), Column("Available")), _apiservice),
    ("autoscaling", "horizontalpodautoscalers"): Printer((Column("Reference"), Column("Targets"), Column("MinPods"),
                                                          Column("MaxPods", "integer"), Column("Replicas", "integer")),
                                                         _hpa),
    ("certificates.k8s.io", "certificatesigningrequests"): Printer(
        (Column("SignerName"), Column("Requestor"), Column("RequestedDuration"), Column("Condition")), _csr,
        age_index=0),
    ("discovery.k8s.io", "endpointslices"): Printer((Column("AddressType"), Column("Ports"), Column("Endpoints")),
                                                    _endpoint_slice),
    ("node.k8s.io", "runtimeclasses"): Printer((Column("Handler"),), lambda o: [o.get("handler", "")]),
    ("resource.k8s.io", "deviceclasses"): Printer((), lambda o: []),
    ("resource.k8s.io", "resourceclaims"): Printer((Column("State"),), _resource_claim_state),
    ("resource.k8s.io", "resourceclaimtemplates"): Printer((), lambda o: []),
    ("resource.k8s.io", "resourceslices"): Printer((Column("Node"), Column("Driver"), Column("Pool")), lambda o: [
        get(o, "spec", "nodeName", default=""), get(o, "spec", "driver", default=""),
        get(o, "spec", "pool", "name", default="")]),
    ("storage.k8s.io", "volumeattributesclasses"): Printer((Column("DriverName"),),
                                                            lambda o: [o.get("driverName", "")]),
    ("storage.k8s.io", "csidrivers"): Printer(
        (Column("AttachRequired", "boolean"), Column("PodInfoOnMount", "boolean"), Column("StorageCapacity", "boolean"),
         Column("TokenRequests"), Column("RequiresRepublish", "boolean"), Column("Modes")), _csi_driver),
    ("storage.k8s.io", "csinodes"): Printer((Column("Drivers", "integer"),), lambda o: [
        len(get(o, "spec", "drivers", default=[]))]),
    ("storage.k8s.io", "volumeattachments"): Printer((Column("Attacher"), Column("PV"), Column("Node"),
                                                      Column("Attached", "boolean")), _volume_attachment),
    ("storage.k8s.io", "csistoragecapacities"): Printer((Column("StorageClassName"), Column("Capacity")), lambda o: [
        o.get("storageClassName", ""), o.get("capacity") or "<unset>"], with_age=False),  # kube's has no Age
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): Printer(
        (Column("PriorityLevel"), Column("MatchingPrecedence", "string"), Column("DistinguisherMethod"),
         Column("MissingPL")), _flowschema, age_index=3),
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): Printer(
        (Column("Type"), Column("NominalConcurrencyShares", "string"), Column("Queues", "string"),
         Column("HandSize", "string"), Column("QueueLengthLimit", "string")), _priority_level),
}


PRINTERS.update(MORE_PRINTERS)


# custom resources' printers, one per served version: (group, version, resource) -> Printer (dynamic.py)
VERSIONED: dict[tuple[str, str, str], Printer] = {}


def printer_for(group: str, resource: str, version: str = "") -> Printer | None:
    """The printer of a resource (a custom resource's of ``version``: apiextensions-apiserver's table convertor
    per served version), or None for kube's default (Name, Created At)."""
    return VERSIONED.get((group, version, resource)) or PRINTERS.get((group, resource))
