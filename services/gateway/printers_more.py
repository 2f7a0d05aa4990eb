"""More per-kind Table columns: storage, networking, policy, quota and admission kinds.

The columns and cell formats of kube-apiserver's printers
(pkg/printers/internalversion/printers.go: printPersistentVolumeClaim,
printPersistentVolume, printIngress, printIngressClass, printNetworkPolicy,
printServiceCIDR, printIPAddress,
printPodDisruptionBudget, printReplicationController, printResourceQuota,
printPodTemplate, printControllerRevision, printMutatingWebhook,
printValidatingWebhook, printValidatingAdmissionPolicy[Binding], printEvent) and the
``-o wide`` columns of printNode and printCronJob. :mod:`printers` merges
:data:`MORE_PRINTERS` into its table.
"""

from __future__ import annotations

from typing import Any

from services.gateway.columns import Column, Obj, Printer, age, get

SWAGGER = "swagger:"  # a Column description resolved from the OpenAPI definitions (table.describe)


def doc(definition: str, field: str) -> str:
    """A Column description standing for ``<definition>{}.SwaggerDoc()[field]`` in kube's printers.go, e.g.
    ``doc("core.v1.ConfigMap", "data")``; ``definition`` is short for ``io.k8s.api.<definition>``."""
    return f"{SWAGGER}io.k8s.api.{definition}#{field}"

# helper.GetAccessModesAsString: fixed order, each mode once.
_ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                 ("ReadWriteOncePod", "RWOP"))
_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def access_modes(modes: Any) -> str:
    """kube's GetAccessModesAsString: e.g. ["ReadWriteMany", "ReadWriteOnce"] -> "RWO,RWX"."""
    have = set(modes or [])
    return ",".join(short for mode, short in _ACCESS_MODES if mode in have)


def format_labels(labels: Any) -> str:
    """labels.FormatLabels: sorted "k=v" joined by ",", "<none>" when empty."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_label_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: requirements sorted by key ("k=v", "k in (a,b)", "k", "!k"), "<none>" if empty."""
    if not isinstance(selector, dict):
        return "<none>"
    reqs: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op = str(expr.get("key", "")), str(expr.get("operator", ""))
        values = ",".join(sorted(str(v) for v in expr.get("values") or []))
        text = {"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                "DoesNotExist": f"!{key}"}.get(op)
        if text is None:
            return "<error>"
        reqs.append((key, text))
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0])) or "<none>"


def _go_label_selector(selector: Obj) -> str:
    """metav1.LabelSelector.String() (the generated Go form kube prints for a binding's paramRef selector)."""
    labels = selector.get("matchLabels") or {}
    exprs = "".join(f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
                    f"Values:[{' '.join(str(v) for v in e.get('values') or [])}],}},"
                    for e in selector.get("matchExpressions") or [])
    pairs = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{pairs}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{exprs}}},}}")


def _int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


def _containers(containers: Any) -> tuple[str, str]:
    """layoutContainerCells: container names and images, each joined by ","."""
    cs = containers if isinstance(containers, list) else []
    return ",".join(str(c.get("name", "")) for c in cs), ",".join(str(c.get("image", "")) for c in cs)


def _phase(obj: Obj) -> str:
    return "Terminating" if get(obj, "metadata", "deletionTimestamp") else str(get(obj, "status", "phase",
                                                                                     default=""))


def _storage_class(obj: Obj) -> str:
    """GetPersistentVolume[Claim]Class: the beta annotation wins over spec.storageClassName."""
    annotation = get(obj, "metadata", "annotations", _BETA_STORAGE_CLASS)
    return str(annotation if annotation is not None else get(obj, "spec", "storageClassName", default=""))


def _pvc(obj: Obj) -> list[Any]:
    """printPersistentVolumeClaim: capacity and access modes from status, only once bound (spec.volumeName)."""
    spec = obj.get("spec") or {}
    volume = spec.get("volumeName") or ""
    capacity = modes = ""
    if volume:
        modes = access_modes(get(obj, "status", "accessModes"))
        capacity = str(get(obj, "status", "capacity", "storage", default="0"))
    return [_phase(obj), volume, capacity, modes, _storage_class(obj),
            spec.get("volumeAttributesClassName") or "<unset>", spec.get("volumeMode") or "<unset>"]


def _pv(obj: Obj) -> list[Any]:
    """printPersistentVolume: Claim is "namespace/name" of spec.claimRef."""
    spec = obj.get("spec") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, dict) else ""
    return [str(get(spec, "capacity", "storage", default="0")), access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), _phase(obj), claim, _storage_class(obj),
            spec.get("volumeAttributesClassName") or "<unset>", get(obj, "status", "reason", default=""),
            spec.get("volumeMode") or "<unset>"]


def _ingress_hosts(rules: Any) -> str:
    """formatHosts: up to 3 hosts joined by ",", "+ N more...", "*" when no rule names a host."""
    rules = rules if isinstance(rules, list) else []
    hosts = [str(r.get("host")) for r in rules[:3] if r.get("host")]
    if not hosts:
        return "*"
    return ",".join(hosts) + (f" + {len(rules) - 3} more..." if len(rules) > 3 else "")


def _ingress(obj: Obj) -> list[Any]:
    """printIngress: Class, Hosts, Address (load-balancer IPs or hostnames, sorted), Ports ("80" or "80, 443")."""
    spec = obj.get("spec") or {}
    addresses = sorted({str(i.get("ip") or i.get("hostname")) for i in get(obj, "status", "loadBalancer",
                                                                             "ingress", default=[])
                        if i.get("ip") or i.get("hostname")})
    return [spec.get("ingressClassName") or "<none>", _ingress_hosts(spec.get("rules")), ",".join(addresses),
            "80, 443" if spec.get("tls") else "80"]


def _ingress_class(obj: Obj) -> list[Any]:
    """printIngressClass: Parameters as "Kind[.apiGroup]/name"."""
    spec = obj.get("spec") or {}
    params = spec.get("parameters")
    text = "<none>"
    if isinstance(params, dict):
        text = str(params.get("kind", "")) + (f".{params['apiGroup']}" if params.get("apiGroup") is not None else "")
        text += f"/{params.get('name', '')}"
    return [spec.get("controller", ""), text]


def _ip_address_parent(obj: Obj) -> list[Any]:
    """printIPAddress: ParentRef as the lower-cased group resource, then ``/namespace`` when set, ``/name``;
    ``<none>`` without a parent reference."""
    ref = get(obj, "spec", "parentRef")
    if not isinstance(ref, dict):
        return ["<none>"]
    group, resource = str(ref.get("group") or ""), str(ref.get("resource") or "")
    text = (f"{resource}.{group}" if group else resource).lower()
    if ref.get("namespace"):
        text += f"/{ref['namespace']}"
    return [f"{text}/{ref.get('name') or ''}"]


def _pdb(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    return [_int_or_string(spec.get("minAvailable")), _int_or_string(spec.get("maxUnavailable")),
            int(get(obj, "status", "disruptionsAllowed", default=0))]


def _rc(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    names, images = _containers(get(spec, "template", "spec", "containers"))
    return [spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0), names, images,
            format_labels(spec.get("selector"))]


def _quota(obj: Obj) -> list[Any]:
    """printResourceQuota: "name: used/hard" per status.hard resource, sorted; limits.* go to the Limit column."""
    hard = get(obj, "status", "hard", default={})
    used = get(obj, "status", "used", default={})
    request: list[str] = []
    limit: list[str] = []
    for name in sorted(hard):
        pieces = name.split(".")
        (limit if len(pieces) > 1 and pieces[0] == "limits" else request).append(
            f"{name}: {used.get(name, '0')}/{hard[name]}")
    return [", ".join(request), ", ".join(limit)]


def _pod_template(obj: Obj) -> list[Any]:
    names, images = _containers(get(obj, "template", "spec", "containers"))
    return [names, images, format_labels(get(obj, "template", "metadata", "labels"))]


def _controller_revision(obj: Obj) -> list[Any]:
    """printControllerRevision: the controller owner as "kind.group/name" (lower-cased kind.group)."""
    owner = next((o for o in get(obj, "metadata", "ownerReferences", default=[])
                  if isinstance(o, dict) and o.get("controller")), None)
    controller = "<none>"
    if owner is not None:
        api_version = str(owner.get("apiVersion", ""))
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        kind = str(owner.get("kind", ""))
        group_kind = f"{kind}.{group}" if group else kind
        controller = f"{group_kind.lower()}/{owner.get('name', '')}" if group_kind else str(owner.get("name", ""))
    return [controller, obj.get("revision", 0)]


def _vap(obj: Obj) -> list[Any]:
    spec = obj.get("spec") or {}
    kind = spec.get("paramKind")
    param = f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}" if isinstance(kind, dict) else "<unset>"
    return [len(spec.get("validations") or []), param]


def _vap_binding(obj: Obj) -> list[Any]:
    """printValidatingAdmissionPolicyBinding: ParamRef "ns/name", "*/name" without namespace, or the selector."""
    spec = obj.get("spec") or {}
    ref = spec.get("paramRef")
    param = "<unset>"
    if isinstance(ref, dict):
        if ref.get("name"):
            param = f"{ref.get('namespace') or '*'}/{ref['name']}"
        elif isinstance(ref.get("selector"), dict):
            param = _go_label_selector(ref["selector"])
    return [spec.get("policyName", ""), param]


def _node_wide(obj: Obj) -> list[Any]:
    """printNode's -o wide cells: first InternalIP, first ExternalIP, OS image, kernel, container runtime."""
    addresses = get(obj, "status", "addresses", default=[])
    info = get(obj, "status", "nodeInfo", default={})

    def address(kind: str) -> str:
        return next((str(a.get("address", "")) for a in addresses if a.get("type") == kind), "<none>")

    return [address("InternalIP"), address("ExternalIP"), info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


def node_cells(obj: Obj) -> list[Any]:
    """printNode: Status (Ready/NotReady/Unknown, ",SchedulingDisabled"), Roles, Version, then the wide cells."""
    ready = next((c for c in get(obj, "status", "conditions", default=[]) if c.get("type") == "Ready"), None)
    status = "Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")
    if get(obj, "spec", "unschedulable"):
        status += ",SchedulingDisabled"
    roles = set()
    for key, value in (get(obj, "metadata", "labels", default={}) or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key.split("/", 1)[1]:
            roles.add(key.split("/", 1)[1])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return [status, ",".join(sorted(roles)) or "<none>", get(obj, "status", "nodeInfo", "kubeletVersion",
                                                               default="")] + _node_wide(obj)


def _cronjob(obj: Obj) -> list[Any]:
    """printCronJob: Last Schedule as an age ("<none>" before the first run), wide: the job template's pods."""
    spec = obj.get("spec") or {}
    last = get(obj, "status", "lastScheduleTime")
    job = get(spec, "jobTemplate", "spec", default={})
    names, images = _containers(get(job, "template", "spec", "containers"))
    return [spec.get("schedule", ""), spec.get("timeZone") or "<none>", bool(spec.get("suspend", False)),
            len(get(obj, "status", "active", default=[])),
            age({"metadata": {"creationTimestamp": last}}) if last else "<none>", names, images,
            format_label_selector(job.get("selector"))]


def _since(stamp: Any) -> str:
    """translateTimestampSince: the age of an RFC 3339 time, "<unknown>" when unset."""
    return age({"metadata": {"creationTimestamp": stamp}}) if stamp else "<unknown>"


def event_cells(obj: Obj) -> list[Any]:
    """printEvent for core/v1 and events.k8s.io/v1 Events (the latter as kube converts them: regarding, note,
    deprecated* fields): Last Seen, Type, Reason, Object, Subobject, Source, Message, First Seen, Count, Name."""
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    first_ts = obj.get("firstTimestamp") or obj.get("deprecatedFirstTimestamp")
    last_ts = obj.get("lastTimestamp") or obj.get("deprecatedLastTimestamp")
    first = _since(first_ts) if first_ts else _since(obj.get("eventTime"))
    last = _since(last_ts) if last_ts else first
    count = obj.get("count") or obj.get("deprecatedCount") or 0
    series = obj.get("series")
    if isinstance(series, dict):
        last, count = _since(series.get("lastObservedTime")), series.get("count", 0)
    elif not count:
        count = 1
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or obj.get("deprecatedSource") or {}
    component = source.get("component") or obj.get("reportingComponent") or obj.get("reportingController") or ""
    instance = source.get("host") or obj.get("reportingInstance") or ""
    return [last, obj.get("type", ""), obj.get("reason", ""), target, involved.get("fieldPath", ""),
            f"{component}, {instance}" if instance else component,
            str(obj.get("message") or obj.get("note") or "").strip(), first, count,
            get(obj, "metadata", "name", default="")]


_EVENT = Printer((Column("Last Seen"), Column("Type"), Column("Reason"), Column("Object"),
                  Column("Subobject", priority=1), Column("Source", priority=1), Column("Message"),
                  Column("First Seen", priority=1), Column("Count", priority=1),
                  Column("Name", priority=1, format="name")), event_cells, with_age=False, with_name=False)

_WIDE = ("Containers", "Images", "Selector")

MORE_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "persistentvolumeclaims"): Printer(
        (Column("Status"), Column("Volume"), Column("Capacity"), Column("Access Modes"), Column("StorageClass"),
         Column("VolumeAttributesClass"), Column("VolumeMode", priority=1)), _pvc),
    ("", "persistentvolumes"): Printer(
        (Column("Capacity"), Column("Access Modes"), Column("Reclaim Policy"), Column("Status"), Column("Claim"),
         Column("StorageClass"), Column("VolumeAttributesClass"), Column("Reason"),
         Column("VolumeMode", priority=1)), _pv),
    ("", "replicationcontrollers"): Printer(
        (Column("Desired", "integer"), Column("Current", "integer"), Column("Ready", "integer"))
        + tuple(Column(n, priority=1) for n in _WIDE), _rc),
    ("", "resourcequotas"): Printer((Column("Request"), Column("Limit")), _quota),
    ("", "podtemplates"): Printer((Column("Containers"), Column("Images"), Column("Pod Labels")), _pod_template,
                                  with_age=False),
    # kube's nodeColumnDefinitions (pkg/printers/internalversion/printers.go)
    ("", "nodes"): Printer((Column("Status", description="The status of the node"),
                            Column("Roles", description="The roles of the node"),
                            Column("Version", description=doc("core.v1.NodeSystemInfo", "kubeletVersion")),
                            Column("Internal-IP", priority=1, description=doc("core.v1.NodeStatus", "addresses")),
                            Column("External-IP", priority=1, description=doc("core.v1.NodeStatus", "addresses")),
                            Column("OS-Image", priority=1, description=doc("core.v1.NodeSystemInfo", "osImage")),
                            Column("Kernel-Version", priority=1,
                                   description=doc("core.v1.NodeSystemInfo", "kernelVersion")),
                            Column("Container-Runtime", priority=1,
                                   description=doc("core.v1.NodeSystemInfo", "containerRuntimeVersion"))),
                           node_cells, age_index=2),
    ("batch", "cronjobs"): Printer((Column("Schedule"), Column("Timezone"), Column("Suspend", "boolean"),
                                    Column("Active", "integer"), Column("Last Schedule"))
                                   + tuple(Column(n, priority=1) for n in _WIDE), _cronjob),
    ("", "events"): _EVENT,
    ("events.k8s.io", "events"): _EVENT,
    ("apps", "controllerrevisions"): Printer((Column("Controller"), Column("Revision")), _controller_revision),
    ("networking.k8s.io", "ingresses"): Printer(
        (Column("Class"), Column("Hosts"), Column("Address"), Column("Ports")), _ingress),
    ("networking.k8s.io", "ingressclasses"): Printer((Column("Controller"), Column("Parameters")), _ingress_class),
    ("networking.k8s.io", "servicecidrs"): Printer(
        (Column("CIDRs"),), lambda o: [",".join(str(c) for c in get(o, "spec", "cidrs", default=None) or [])]),
    ("networking.k8s.io", "ipaddresses"): Printer((Column("ParentRef"),), _ip_address_parent, with_age=False),
    ("networking.k8s.io", "networkpolicies"): Printer(
        (Column("Pod-Selector"),), lambda o: [format_label_selector(get(o, "spec", "podSelector"))]),
    ("policy", "poddisruptionbudgets"): Printer(
        (Column("Min Available"), Column("Max Unavailable"), Column("Allowed Disruptions", "integer")), _pdb),
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): Printer(
        (Column("Webhooks", "integer"),), lambda o: [len(o.get("webhooks") or [])]),
    ("admissionregistration.k8s.io", "validatingwebhookconfigurations"): Printer(
        (Column("Webhooks", "integer"),), lambda o: [len(o.get("webhooks") or [])]),
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): Printer(
        (Column("Validations", "integer"), Column("ParamKind")), _vap),
    ("admissionregistration.k8s.io", "validatingadmissionpolicybindings"): Printer(
        (Column("PolicyName"), Column("ParamRef")), _vap_binding),
}
