"""The node.k8s.io group's RuntimeClass: ``handler`` a DNS label, immutable (``pkg/apis/node/validation``)."""

from __future__ import annotations

from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import immutable
from kapi.objectmeta import invalid
from kapi.validation import is_dns1123_label


def validate_runtime_class(obj: Obj) -> list[Cause]:
    """ValidateRuntimeClass: handler a DNS label; overhead and scheduling are checked by the schema."""
    handler = obj.get("handler")
    return [invalid("handler", handler if isinstance(handler, str) else "", m)
            for m in is_dns1123_label(handler if isinstance(handler, str) else "")]


@register
class RuntimeClassStrategy(Strategy):
    """RuntimeClass: ValidateRuntimeClass and ValidateRuntimeClassUpdate."""

    group, kind = "node.k8s.io", "RuntimeClass"

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_runtime_class`."""
        return validate_runtime_class(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """``handler`` immutable."""
        if subresource or new.get("handler") == old.get("handler"):
            return []
        return [immutable("handler", new.get("handler"))]
