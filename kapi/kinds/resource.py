"""The resource.k8s.io/v1 group (Dynamic Resource Allocation, GA since kube 1.34).

DeviceClass and ResourceSlice are cluster-scoped, ResourceClaim and
ResourceClaimTemplate namespaced. From kube's
``pkg/apis/resource/v1/defaults.go``, ``pkg/registry/resource/*/strategy.go``
and ``pkg/apis/resource/validation``:

- Defaults: an ``exactly`` request (and each ``firstAvailable`` subrequest)
  gets ``allocationMode: ExactCount`` and, for ExactCount, ``count: 1``; a
  toleration's ``operator`` defaults to ``Equal``.
- DeviceClass and ResourceSlice: generation 1 on create, bumped when the spec
  changes; ResourceClaim and ResourceClaimTemplate keep none.
- ResourceClaim: ``status`` reset to ``{}`` on create and kept from the stored
  object on updates of the main resource (``/status`` writes it; the spec
  is kept there); the spec is immutable. ResourceClaimTemplate: the spec is
  immutable.
- Validation, the main rules with kube's messages: request names DNS labels;
  exactly one of ``exactly`` / ``firstAvailable``; ``deviceClassName``
  required and a DNS subdomain; ``allocationMode`` All/ExactCount with its
  ``count`` rules; selectors need ``cel``; config needs ``opaque`` with a
  driver; a ResourceSlice's driver and pool name. CEL compilation and cost,
  constraints, allocation results and device limits are not checked
  (docs/kube-parity.md).
"""

from __future__ import annotations

from typing import Any

from kapi import jsonutil
from kapi.errors import Cause
from kapi.kinds.base import Obj, Strategy, register
from kapi.kinds.fields import immutable_shown, not_supported
from kapi.kinds.storage import validate_csi_driver_name
from kapi.objectmeta import invalid, required
from kapi.validation import is_dns1123_label, is_dns1123_subdomain
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

GROUP = "resource.k8s.io"
ALLOCATION_MODES = ("All", "ExactCount")


def _default_request(request: Obj) -> None:
    """SetDefaults_ExactDeviceRequest / SetDefaults_DeviceSubRequest in place."""
    if not request.get("allocationMode"):
        request["allocationMode"] = "ExactCount"
    if request.get("allocationMode") == "ExactCount" and not request.get("count"):
        request["count"] = 1
    for toleration in _list(request.get("tolerations")):
        if isinstance(toleration, dict) and not toleration.get("operator"):
            toleration["operator"] = "Equal"


def default_claim_spec(spec: Any) -> None:
    """Defaults of a ResourceClaimSpec (a claim's ``spec``, a template's ``spec.spec``) in place."""
    for request in _list(_dict(_dict(spec).get("devices")).get("requests")):
        if not isinstance(request, dict):
            continue
        if isinstance(request.get("exactly"), dict):
            _default_request(request["exactly"])
        for sub in _list(request.get("firstAvailable")):
            if isinstance(sub, dict):
                _default_request(sub)


def _label(value: Any, path: str) -> list[Cause]:
    text = value if isinstance(value, str) else ""
    return [invalid(path, text, m) for m in is_dns1123_label(text)]


def _device_class_name(value: Any, path: str) -> list[Cause]:
    text = value if isinstance(value, str) else ""
    if not text:
        return [required(path)]
    return [invalid(path, text, m) for m in is_dns1123_subdomain(text)]


def _selectors(selectors: Any, path: str) -> list[Cause]:
    return [required(f"{path}[{i}].cel") for i, s in enumerate(_list(selectors)) if not _dict(s).get("cel")]


def _allocation(request: Obj, path: str) -> list[Cause]:
    """validateDeviceAllocationMode."""
    mode, count = request.get("allocationMode"), request.get("count") or 0
    if mode == "All":
        return [invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")] \
            if count != 0 else []
    if mode == "ExactCount":
        return [invalid(f"{path}.count", count, "must be greater than zero")] \
            if not isinstance(count, int) or count <= 0 else []
    return [not_supported(f"{path}.allocationMode", mode or "", ALLOCATION_MODES)]


def _config(configs: Any, path: str) -> list[Cause]:
    """validateDeviceConfiguration of each entry: ``opaque`` required, with a driver name."""
    out: list[Cause] = []
    for i, config in enumerate(_list(configs)):
        opaque = _dict(config).get("opaque")
        if not isinstance(opaque, dict):
            out.append(required(f"{path}[{i}].opaque"))
        else:
            out.extend(validate_csi_driver_name(opaque.get("driver"), f"{path}[{i}].opaque.driver"))
    return out


def validate_claim_spec(spec: Any, path: str) -> list[Cause]:
    """validateResourceClaimSpec, main rules: each request and subrequest, then the claim's config."""
    devices = _dict(_dict(spec).get("devices"))
    out: list[Cause] = []
    for i, raw in enumerate(_list(devices.get("requests"))):
        request, rpath = _dict(raw), f"{path}.devices.requests[{i}]"
        out.extend(_label(request.get("name"), f"{rpath}.name"))
        exactly, first = request.get("exactly"), _list(request.get("firstAvailable"))
        if exactly is None and not first:
            out.append(required(rpath, "exactly one of `exactly` or `firstAvailable` is required"))
        elif exactly is not None and first:
            # field.Invalid(path, nil, ...): Go renders a nil value as the quoted string "null"
            out.append(invalid(rpath, "null", "exactly one of `exactly` or `firstAvailable` is required, but "
                                              "multiple fields are set"))
        elif first:
            for j, raw_sub in enumerate(first):
                sub, spath = _dict(raw_sub), f"{rpath}.firstAvailable[{j}]"
                out.extend(_label(sub.get("name"), f"{spath}.name"))
                out.extend(_device_class_name(sub.get("deviceClassName"), f"{spath}.deviceClassName"))
                out.extend(_selectors(sub.get("selectors"), f"{spath}.selectors"))
                out.extend(_allocation(sub, spath))
        else:
            epath, exact = f"{rpath}.exactly", _dict(exactly)
            out.extend(_device_class_name(exact.get("deviceClassName"), f"{epath}.deviceClassName"))
            out.extend(_selectors(exact.get("selectors"), f"{epath}.selectors"))
            out.extend(_allocation(exact, epath))
    out.extend(_config(devices.get("config"), f"{path}.devices.config"))
    return out


def _spec_immutable(new: Obj) -> Cause:
    """``spec: Invalid value: <spec>: field is immutable`` (kube prints the Go struct with %#v; the value here
    is the spec's compact JSON)."""
    return immutable_shown("spec", jsonutil.dumps(new.get("spec")).decode())


@register
class DeviceClassStrategy(Strategy):
    """DeviceClass: generation tracked; selectors need ``cel``, config needs ``opaque``."""

    group, kind = GROUP, "DeviceClass"

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateDeviceClass (main rules)."""
        spec = _dict(obj.get("spec"))
        return [*_selectors(spec.get("selectors"), "spec.selectors"), *_config(spec.get("config"), "spec.config")]


@register
class ResourceClaimStrategy(Strategy):
    """ResourceClaim: status reset on create and kept on main-resource updates; spec immutable; no generation."""

    group, kind = GROUP, "ResourceClaim"
    tracks_generation = False
    validates_required = True  # request names, deviceClassName, opaque drivers: kube's messages, in its order
    status_zero: dict[str, Any] = {}  # ResourceClaimStatus: every field omitempty

    def default(self, obj: Obj) -> None:
        """Request defaults (:func:`default_claim_spec`)."""
        default_claim_spec(obj.get("spec"))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateResourceClaim (main rules)."""
        return validate_claim_spec(obj.get("spec"), "spec")

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateResourceClaimUpdate: ``spec: Invalid value: ...: field is immutable``."""
        if subresource or new.get("spec") == old.get("spec"):
            return []
        return [_spec_immutable(new)]


@register
class ResourceClaimTemplateStrategy(Strategy):
    """ResourceClaimTemplate: the template's claim spec defaulted and validated; spec immutable; no generation."""

    group, kind = GROUP, "ResourceClaimTemplate"
    tracks_generation = False
    validates_required = True

    def default(self, obj: Obj) -> None:
        """Request defaults of ``spec.spec``."""
        default_claim_spec(_dict(obj.get("spec")).get("spec"))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateResourceClaimTemplate (main rules of ``spec.spec``)."""
        return validate_claim_spec(_dict(obj.get("spec")).get("spec"), "spec.spec")

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateResourceClaimTemplateUpdate: the spec is immutable."""
        if new.get("spec") == old.get("spec"):
            return []
        return [_spec_immutable(new)]


@register
class ResourceSliceStrategy(Strategy):
    """ResourceSlice: generation tracked; driver and pool name required; field labels spec.nodeName, spec.driver."""

    group, kind = GROUP, "ResourceSlice"
    selectable_fields = {
        "spec.nodeName": lambda o: str(_dict(o.get("spec")).get("nodeName") or ""),
        "spec.driver": lambda o: str(_dict(o.get("spec")).get("driver") or ""),
    }

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateResourceSlice (main rules): driver a CSI driver name, pool name required."""
        spec = _dict(obj.get("spec"))
        out = validate_csi_driver_name(spec.get("driver"), "spec.driver")
        if not _dict(spec.get("pool")).get("name"):
            out.append(required("spec.pool.name"))
        return out
