"""Per-kind defaulting and conversion applied when a built-in object is decoded.

kube-apiserver fills defaults while decoding a request body (the generated
``SetDefaults_*`` functions of k8s.io/kubernetes pkg/apis/<group>/v1) and
folds write-only fields in during conversion (Secret ``stringData`` into
``data``). kapi does the same in the admission service, before mutating
admission, so plugins and validation see defaulted objects.
Sources: "Secrets: stringData", the Pod and Service API reference defaults.
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
    pod_spec(obj.get("spec"))


_BY_KIND: dict[tuple[str, str], Callable[[Obj], None]] = {
    ("", "Secret"): _secret,
    ("", "Service"): _service,
    ("", "Pod"): _pod,
}


def apply(obj: Obj, group: str, kind: str) -> None:
    """Default ``obj`` (a decoded object of ``group``/``kind``) in place; kinds without defaults are untouched."""
    fn = _BY_KIND.get((group, kind))
    if fn is not None:
        fn(obj)
