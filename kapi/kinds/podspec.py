"""PodSpec defaults and validation shared by Pod, PodTemplate and the workload kinds (core, apps, batch).

From ``pkg/apis/core/v1/defaults.go`` (``SetDefaults_PodSpec``,
``SetDefaults_Container``) and ``pkg/apis/core/validation/validation.go``
(``ValidatePodSpec``, the parts users hit), plus the checks every workload
spec shares (``pkg/apis/{apps,batch}/validation``: replicas, selector,
template labels, restartPolicy). No kind-specific rules live here: each
kind's home in :mod:`kapi.kinds` calls these with its own options.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.fields import duplicate, go_string_map, not_supported, selector_matches, selector_string
from kapi.objectmeta import forbidden, invalid, required, validate_labels
from kapi.validation import is_dns1123_label, is_qualified_name, is_valid_label_value
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list

PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"
PROTOCOLS = ("SCTP", "TCP", "UDP")
RESTART_POLICIES = ("Always", "OnFailure", "Never")
DNS_POLICIES = ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None")
SELECTOR_MISMATCH = "`selector` does not match template `labels`"
EMPTY_SELECTOR = "&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{},}"

Obj = dict[str, Any]


# ------------------------------------------------------------ defaults

def default_ports(ports: Any) -> None:
    """Container and Service ports: ``protocol`` TCP when absent."""
    for port in ports if isinstance(ports, list) else ():
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"


def image_pull_policy(image: Any) -> str:
    """Always for ``:latest`` or untagged images (no digest), else IfNotPresent."""
    text = str(image or "")
    if "@" in text:
        return "IfNotPresent"
    last = text.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_containers(containers: Any) -> None:
    for c in containers if isinstance(containers, list) else ():
        if not isinstance(c, dict):
            continue
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("imagePullPolicy", image_pull_policy(c.get("image")))
        c.setdefault("resources", {})
        default_ports(c.get("ports"))


def default_pod_spec(spec: Any) -> None:
    """SetDefaults_PodSpec and the containers' defaults, in place (also inside workload templates)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    _default_containers(spec.get("containers"))
    _default_containers(spec.get("initContainers"))


def default_template(spec: Obj, create: bool = False) -> None:
    """The pod spec defaults of a workload's ``spec.template``.

    ``create``: the template's ``spec`` is a struct in kube's Go types (apps/v1), so a ``null`` one decodes
    as empty and is defaulted (and then validated: ``spec.template.spec.containers: Required value``).
    """
    template = spec.get("template")
    if isinstance(template, dict):
        if create and template.get("spec") is None:
            template["spec"] = {}
        default_pod_spec(template.get("spec"))


def spec_of(obj: Obj) -> Obj:
    """``obj["spec"]``, created empty when absent or not an object (defaulting needs somewhere to write)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    return spec


# ------------------------------------------------------------ validation

def port_number(path: str, value: Any) -> list[Cause]:
    """validatePortNumOrName's numeric case: 1-65535."""
    port = _int(value)
    return [invalid(path, port, PORT_RANGE_MSG)] if port is not None and not 1 <= port <= 65535 else []


def _containers(containers: list[Any], path: str, names: set[str]) -> list[Cause]:
    out: list[Cause] = []
    for i, container in enumerate(containers):
        container = _dict(container)
        cpath = f"{path}[{i}]"
        name = container.get("name")
        if not name:
            out.append(required(f"{cpath}.name"))
        elif isinstance(name, str):
            out.extend(invalid(f"{cpath}.name", name, msg) for msg in is_dns1123_label(name))
            if name in names:
                out.append(duplicate(f"{cpath}.name", name))
            names.add(name)
        if not container.get("image"):
            out.append(required(f"{cpath}.image"))
        for j, port in enumerate(_list(container.get("ports"))):
            port = _dict(port)
            ppath = f"{cpath}.ports[{j}]"
            if not port.get("containerPort"):
                out.append(required(f"{ppath}.containerPort"))
            else:
                out.extend(port_number(f"{ppath}.containerPort", port.get("containerPort")))
            if port.get("hostPort"):
                out.extend(port_number(f"{ppath}.hostPort", port.get("hostPort")))
            protocol = port.get("protocol")
            if isinstance(protocol, str) and protocol not in PROTOCOLS:
                out.append(not_supported(f"{ppath}.protocol", protocol, PROTOCOLS))
    return out


def validate_pod_spec(spec: Any, path: str) -> list[Cause]:
    """ValidatePodSpec (containers, names, images, ports, restartPolicy, dnsPolicy) with causes under ``path``.

    An absent or ``null`` spec is kube's zero PodSpec (``<path>.containers: Required value``); another
    non-object is the schema's to refuse.
    """
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        return []
    out: list[Cause] = []
    names: set[str] = set()
    out.extend(_containers(_list(spec.get("initContainers")), f"{path}.initContainers", names))
    containers = _list(spec.get("containers"))
    if not containers:
        out.append(required(f"{path}.containers"))
    out.extend(_containers(containers, f"{path}.containers", names))
    # Ephemeral containers are added through their subresource; their names share the namespace.
    out.extend(_containers(_list(spec.get("ephemeralContainers")), f"{path}.ephemeralContainers", names))
    # An empty policy is what kube's defaulting fills in (Always, ClusterFirst), not an error here.
    policy = spec.get("restartPolicy")
    if policy and isinstance(policy, str) and policy not in RESTART_POLICIES:
        out.append(not_supported(f"{path}.restartPolicy", policy, RESTART_POLICIES))
    dns = spec.get("dnsPolicy")
    if dns and isinstance(dns, str) and dns not in DNS_POLICIES:
        out.append(not_supported(f"{path}.dnsPolicy", dns, DNS_POLICIES))
    return out


def validate_label_selector(selector: Any, path: str) -> list[Cause]:
    """metav1validation.ValidateLabelSelector (create: label values in selectors must be valid).

    ``matchLabels`` as ValidateLabels (causes on ``<path>.matchLabels``); each ``matchExpressions[i]``:
    In/NotIn need ``values`` (``Required value: must be specified when `operator` is 'In' or 'NotIn'``),
    Exists/DoesNotExist forbid them, any other operator is ``Invalid value: "X": not a valid selector
    operator``; the key is a qualified name and each value a label value. [] when valid, which is also when
    ``metav1.LabelSelectorAsSelector`` can convert it.
    """
    selector = _dict(selector)
    out = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expr in enumerate(_list(selector.get("matchExpressions"))):
        expr = _dict(expr)
        epath = f"{path}.matchExpressions[{i}]"
        operator, values = expr.get("operator") or "", _list(expr.get("values"))
        if operator in ("In", "NotIn"):
            if not values:
                out.append(required(f"{epath}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                out.append(forbidden(f"{epath}.values",
                                     "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            out.append(invalid(f"{epath}.operator", operator, "not a valid selector operator"))
        key = expr.get("key")
        out.extend(invalid(f"{epath}.key", key, msg) for msg in is_qualified_name(key if isinstance(key, str) else ""))
        for j, value in enumerate(values):
            if isinstance(value, str):
                out.extend(invalid(f"{epath}.values[{j}]", value, msg) for msg in is_valid_label_value(value))
    return out


def validate_workload(spec: Obj, what: str, restart_policies: tuple[str, ...] | None, selector_required: bool = True,
                      replicas: bool = True, label_selector: bool = True,
                      invalid_selector: str | None = None) -> list[Cause]:
    """The spec checks every workload shares, with kube's paths under ``spec``.

    ``what`` names the kind in ``empty selector is invalid for <what>``;
    ``restart_policies`` are the template's allowed policies (None: any);
    ``replicas`` False skips ``spec.replicas >= 0`` (DaemonSet, Job);
    ``label_selector`` False for ReplicationController's plain-map selector;
    ``invalid_selector``: for kinds whose validation (ValidateDeploymentSpec, ValidateReplicaSetSpec,
    ValidateStatefulSetSpec) stops at a selector ``LabelSelectorAsSelector`` refuses, the detail of the
    ``spec.selector: Invalid value: &LabelSelector{...}`` cause they add, after which the template is not
    validated; None: only the template-labels match is skipped (DaemonSet, Job).
    """
    out: list[Cause] = []
    count = _int(spec.get("replicas"))
    if replicas and count is not None and count < 0:
        out.append(invalid("spec.replicas", count, "must be greater than or equal to 0"))
    template = _dict(spec.get("template"))
    selector = spec.get("selector")
    if not label_selector:  # ReplicationController: a plain map, defaulted from the template labels
        pass
    elif selector is None:
        if selector_required:
            out.append(required("spec.selector"))
    elif isinstance(selector, dict):
        selector_causes = validate_label_selector(selector, "spec.selector")
        out.extend(selector_causes)
        if not selector.get("matchLabels") and not selector.get("matchExpressions"):
            out.append(Cause("FieldValueInvalid", f"Invalid value: {EMPTY_SELECTOR}: empty selector is invalid for "
                             f"{what}", "spec.selector"))
        elif selector_causes:
            if invalid_selector is not None:
                shown = selector_string(selector)
                detail = f": {invalid_selector}" if invalid_selector else ""
                out.append(Cause("FieldValueInvalid", f"Invalid value: {shown}{detail}", "spec.selector"))
                return out
        else:
            labels = _dict(template.get("metadata")).get("labels")
            if selector_matches(selector, _dict(labels)) is False:
                out.append(Cause("FieldValueInvalid", f"Invalid value: {go_string_map(labels)}: {SELECTOR_MISMATCH}",
                                 "spec.template.metadata.labels"))
    if not label_selector and spec.get("template") is None:  # ReplicationController's template is a pointer
        return [*out, required("spec.template")]
    pod_spec = template.get("spec")
    out.extend(validate_pod_spec(pod_spec, "spec.template.spec"))
    policy = _dict(pod_spec).get("restartPolicy")
    if restart_policies and isinstance(pod_spec, dict) and policy and policy not in restart_policies:
        out.append(not_supported("spec.template.spec.restartPolicy", policy, restart_policies))
    return out
