"""The apiregistration.k8s.io group's APIService: defaults and kube-aggregator's ``ValidateAPIService``.

From kube-aggregator ``pkg/apis/apiregistration/v1/defaults.go`` and
``pkg/apis/apiregistration/validation/validation.go``. Discovery order and
the built-in priorities are :mod:`kapi.apiregistration`.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any

from kapi.apiregistration import GROUP, name_of
from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.objectmeta import invalid, required
from kapi.validation import is_dns1035_label, is_dns1123_subdomain, is_valid_path_segment_name


def validate(obj: Mapping[str, Any]) -> list[Cause]:
    """kube-aggregator's ``ValidateAPIService`` causes for a 422 (the generic metadata rules run elsewhere).

    metadata.name must be ``spec.version + "." + spec.group``; spec.group a DNS
    subdomain (empty only with version v1, the legacy core group);
    spec.version a DNS-1035 label; groupPriorityMinimum 1..20000;
    versionPriority 1..1000; a Local APIService (no ``spec.service``) may have
    neither caBundle nor insecureSkipTLSVerify; a service needs namespace and
    name, a port 1..65535, and not both insecureSkipTLSVerify and caBundle.
    Fields absent or of the wrong JSON type are left to schema validation.
    """
    causes: list[Cause] = []
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(meta, dict) and isinstance(spec, dict)
    group = str(spec.get("group")) if isinstance(spec.get("group"), str) else ""
    version = str(spec.get("version")) if isinstance(spec.get("version"), str) else ""
    name = meta.get("name")
    if isinstance(name, str) and name and not is_valid_path_segment_name(name):
        wanted = name_of(group, version)
        if name != wanted:
            causes.append(invalid("metadata.name", name, f'must be `spec.version+"."+spec.group`: "{wanted}"'))
    if not group and version != "v1":
        causes.append(required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        causes.extend(invalid("spec.group", group, msg) for msg in is_dns1123_subdomain(group))
    causes.extend(invalid("spec.version", version, msg) for msg in is_dns1035_label(version))
    for key, top in (("groupPriorityMinimum", 20000), ("versionPriority", 1000)):
        value = spec.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and not 0 < value <= top:
            causes.append(invalid(f"spec.{key}", value, f"must be positive and less than {top}"))
    insecure = spec.get("insecureSkipTLSVerify") is True
    ca_len = _ca_bytes(spec.get("caBundle"))
    service = spec.get("service")
    if not isinstance(service, dict):
        if ca_len:
            causes.append(invalid("spec.caBundle", f"{ca_len} bytes", "local APIServices may not have a caBundle"))
        if insecure:
            causes.append(invalid("spec.insecureSkipTLSVerify", True,
                                  "local APIServices may not have insecureSkipTLSVerify"))
        return causes
    if not service.get("namespace"):
        causes.append(required("spec.service.namespace"))
    if not service.get("name"):
        causes.append(required("spec.service.name"))
    port = service.get("port")
    if isinstance(port, int) and not isinstance(port, bool) and not 0 < port <= 65535:
        causes.append(invalid("spec.service.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    if insecure and ca_len:
        causes.append(invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return causes


def _ca_bytes(value: Any) -> int:
    """Length in bytes of a base64 caBundle (0 when absent or not decodable: the decoder reports that)."""
    if not isinstance(value, str) or not value:
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return 0


@register
class APIServiceStrategy(Strategy):
    """APIService: ``spec.service.port`` 443; ValidateAPIService."""

    group, kind = GROUP, "APIService"
    #: apiServerStatusStrategy.PrepareForUpdate (kube-aggregator): spec, labels, annotations, finalizers,
    #: ownerReferences
    status_reset_metadata = ("labels", "annotations", "finalizers", "ownerReferences")
    status_zero: dict[str, Any] = {}  # APIServiceStatus: conditions only, omitempty

    def default(self, obj: Obj) -> None:
        """SetDefaults_ServiceReference: ``spec.service.port`` 443 when unset."""
        spec = obj.get("spec")
        service = spec.get("service") if isinstance(spec, dict) else None
        if isinstance(service, dict) and service.get("port") is None:
            service["port"] = 443

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate`."""
        return validate(obj)
