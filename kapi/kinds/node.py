"""The node.k8s.io group's RuntimeClass (``pkg/apis/node/validation``).

ValidateRuntimeClass: ``handler`` a DNS label (an empty one is the label message, not ``Required value``: kube
decodes into a Go struct and only this rule names it), ``overhead.podFixed`` as a container's limits (causes on
``overhead.limits[<name>]``, as kube reuses ValidateResourceRequirements), ``scheduling.nodeSelector`` as labels,
``scheduling.tolerations``;
ValidateRuntimeClassUpdate: ``handler`` immutable. No generation (the kind has no spec).
"""

from __future__ import annotations

from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import immutable
from kapi.kinds.podspec import validate_resources, validate_tolerations
from kapi.objectmeta import invalid, validate_labels
from kapi.validation import is_dns1123_label


def validate_runtime_class(obj: Obj) -> list[Cause]:
    """ValidateRuntimeClass: handler a DNS label, the overhead quantities, the scheduling tolerations."""
    handler = obj.get("handler")
    out = [invalid("handler", handler if isinstance(handler, str) else "", m)
           for m in is_dns1123_label(handler if isinstance(handler, str) else "")]
    overhead = obj.get("overhead")
    if isinstance(overhead, dict):
        out.extend(validate_resources({"limits": overhead.get("podFixed")}, "overhead"))
    scheduling = obj.get("scheduling")
    if isinstance(scheduling, dict):
        if scheduling.get("nodeSelector") is not None:
            out.extend(validate_labels(scheduling["nodeSelector"], "scheduling.nodeSelector"))
        if isinstance(scheduling.get("tolerations"), list):
            out.extend(validate_tolerations(scheduling["tolerations"], "scheduling.tolerations"))
    return out


@register
class RuntimeClassStrategy(Strategy):
    """RuntimeClass: ValidateRuntimeClass and ValidateRuntimeClassUpdate."""

    group, kind = "node.k8s.io", "RuntimeClass"
    validates_required = True

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_runtime_class`."""
        return validate_runtime_class(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """``handler`` immutable."""
        if subresource or new.get("handler") == old.get("handler"):
            return []
        return [immutable("handler", new.get("handler"))]
