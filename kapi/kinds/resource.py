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
- Validation (kube 1.37, ``pkg/apis/resource/validation/validation.go`` at
  commit 009801d930e2e3c8b3671a3ec28e31a2f64865ac), in kube's order: claim
  requests (at most 32, unique DNS-label names, exactly one of ``exactly`` /
  ``firstAvailable`` with at most 8 unique subrequests, ``deviceClassName``,
  selectors with compiling CEL, ``allocationMode``/``count``, tolerations),
  constraints and config naming requests, opaque parameters; a template's
  ``spec.metadata``; a claim's ``/status`` (reservedFor, devices, allocation
  results, the allocation immutable once set); a DeviceClass's selectors,
  config and extendedResourceName; a ResourceSlice's driver, pool, node
  selection, devices (attributes, capacity and requestPolicy, taints,
  counters, per-device node selection, binding conditions) and counter sets
  (:mod:`kapi.kinds.resourcedevices`). Not checked: CEL type checks and cost,
  AuthorizedForAdmin (adminAccess needs the namespace label), alpha fields.
"""

from __future__ import annotations

from typing import Any

from kapi import jsonutil
from kapi.errors import Cause
from kapi.kinds import resourcedevices as devices
from kapi.kinds.base import RESET_OBJECT_META_FOR_STATUS, Obj, Strategy, register
from kapi.kinds.fields import immutable_shown, not_supported
from kapi.objectmeta import invalid, required
from kapi.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
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


def _exact_or_sub(request: Obj, path: str) -> list[Cause]:
    """The shared part of validateExactDeviceRequest / validateDeviceSubRequest: deviceClassName, selectors,
    allocation mode, tolerations (derivedAttributes are alpha)."""
    out = _device_class_name(request.get("deviceClassName"), f"{path}.deviceClassName")
    out.extend(devices.validate_selectors(request.get("selectors"), f"{path}.selectors"))
    out.extend(_allocation(request, path))
    out.extend(devices.validate_tolerations(request.get("tolerations"), f"{path}.tolerations"))
    return out


def _request(raw: Any, rpath: str) -> list[Cause]:
    """validateDeviceRequest: the name a DNS label; exactly one of ``exactly`` / ``firstAvailable`` (at most 8
    subrequests with unique DNS-label names)."""
    request = _dict(raw)
    out = _label(request.get("name"), f"{rpath}.name")
    exactly, first = request.get("exactly"), _list(request.get("firstAvailable"))
    if exactly is None and not first:
        out.append(required(rpath, "exactly one of `exactly` or `firstAvailable` is required"))
    elif exactly is not None and first:
        # field.Invalid(path, nil, ...): Go renders a nil value as the quoted string "null"
        out.append(invalid(rpath, "null", "exactly one of `exactly` or `firstAvailable` is required, but "
                                          "multiple fields are set"))
    elif first:
        def sub(raw_sub: Any, spath: str) -> list[Cause]:
            return [*_label(_dict(raw_sub).get("name"), f"{spath}.name"), *_exact_or_sub(_dict(raw_sub), spath)]
        out.extend(devices.validate_set(first, devices.FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE, sub,
                                         lambda s: str(_dict(s).get("name") or ""), f"{rpath}.firstAvailable"))
    else:
        out.extend(_exact_or_sub(_dict(exactly), f"{rpath}.exactly"))
    return out


def validate_claim_spec(spec: Any, path: str) -> list[Cause]:
    """validateResourceClaimSpec / validateDeviceClaim: the requests (at most 32, unique names, each
    :func:`_request`), the constraints and the config (:mod:`kapi.kinds.resourcedevices`)."""
    claim = _dict(_dict(spec).get("devices"))
    names = devices.gather_request_names(spec)
    out = devices.validate_set(claim.get("requests"), devices.DEVICE_REQUESTS_MAX_SIZE, _request,
                                lambda r: str(_dict(r).get("name") or ""), f"{path}.devices.requests")
    out.extend(devices.validate_constraints(claim.get("constraints"), f"{path}.devices.constraints", names))
    out.extend(devices.validate_claim_config(claim.get("config"), f"{path}.devices.config", names))
    return out


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: has a domain outside ``kubernetes.io/``, no ``requests.`` prefix, and
    ``requests.<name>`` is a qualified name."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not is_qualified_name("requests." + name)


def validate_device_class_spec(spec: Any, old_spec: Any = None, path: str = "spec") -> list[Cause]:
    """validateDeviceClassSpec: selectors (at most 32; their CEL not compiled again when all selectors are as
    stored), config (at most 32; opaque, driver, parameters, the size limit not applied again when unchanged),
    extendedResourceName an extended resource name."""
    spec, old = _dict(spec), _dict(old_spec)
    stored = old_spec is not None and spec.get("selectors") == old.get("selectors")
    out = devices.validate_selectors(spec.get("selectors"), f"{path}.selectors", stored)
    stored = old_spec is not None and spec.get("config") == old.get("config")
    out.extend(devices.validate_slice(spec.get("config"), devices.DEVICE_CONFIG_MAX_SIZE,
                                       lambda c, p: devices.validate_device_configuration(c, p, stored),
                                       f"{path}.config"))
    name = spec.get("extendedResourceName")
    if isinstance(name, str) and not is_extended_resource_name(name):
        out.append(invalid(f"{path}.extendedResourceName", name, "must be a valid extended resource name"))
    return out


def validate_claim_template(obj: Obj) -> list[Cause]:
    """validateResourceClaimTemplateSpec: ``spec.metadata`` (ValidateTemplateObjectMeta), then ``spec.spec``."""
    from kapi.kinds.podvolumes import _template_meta  # noqa: PLC0415 - ValidateTemplateObjectMeta, shared
    spec = _dict(obj.get("spec"))
    out = _template_meta(_dict(spec.get("metadata")), "spec.metadata")
    out.extend(validate_claim_spec(spec.get("spec"), "spec.spec"))
    return out


def _spec_immutable(new: Obj) -> Cause:
    """``spec: Invalid value: <spec>: field is immutable`` (kube prints the Go struct with %#v; the value here
    is the spec's compact JSON)."""
    return immutable_shown("spec", jsonutil.dumps(new.get("spec")).decode())


@register
class DeviceClassStrategy(Strategy):
    """DeviceClass: generation tracked; ValidateDeviceClass / ValidateDeviceClassUpdate."""

    group, kind = GROUP, "DeviceClass"
    validates_required = True  # kube's Go structs have no required fields; the spec rules name what is missing

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateDeviceClass: :func:`validate_device_class_spec`."""
        return validate_device_class_spec(obj.get("spec"))

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidateDeviceClassUpdate: the spec with the stored one (unchanged selectors are not compiled again)."""
        return validate_device_class_spec(new.get("spec"), _dict(old.get("spec")))


@register
class ResourceClaimStrategy(Strategy):
    """ResourceClaim: status reset on create and kept on main-resource updates; spec immutable; no generation."""

    group, kind = GROUP, "ResourceClaim"
    #: resourceclaimStatusStrategy.PrepareForUpdate: spec, then metav1.ResetObjectMetaForStatus(new, old)
    status_reset_metadata = RESET_OBJECT_META_FOR_STATUS
    tracks_generation = False
    validates_required = True  # request names, deviceClassName, opaque drivers: kube's messages, in its order
    revalidates_first = True  # the strategy's ValidateUpdate: ValidateResourceClaim, then the spec immutable
    status_zero: dict[str, Any] = {}  # ResourceClaimStatus: every field omitempty

    def default(self, obj: Obj) -> None:
        """Request defaults (:func:`default_claim_spec`)."""
        default_claim_spec(obj.get("spec"))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateResourceClaim: :func:`validate_claim_spec`."""
        return validate_claim_spec(obj.get("spec"), "spec")

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """The strategy's ValidateUpdate after ValidateResourceClaim (:meth:`validate_again`, first:
        ``revalidates_first``): ``spec: Invalid value: ...: field is immutable``; on ``/status``
        ValidateResourceClaimStatusUpdate (:func:`kapi.kinds.resourcedevices.validate_claim_status_update`)."""
        if subresource == "status":
            return devices.validate_claim_status_update(new, old)
        if subresource or new.get("spec") == old.get("spec"):
            return []
        return [_spec_immutable(new)]


@register
class ResourceClaimTemplateStrategy(Strategy):
    """ResourceClaimTemplate: the template's claim spec defaulted and validated; spec immutable; no generation."""

    group, kind = GROUP, "ResourceClaimTemplate"
    tracks_generation = False
    validates_required = True
    revalidates_first = True  # the strategy's ValidateUpdate: ValidateResourceClaimTemplate, then the spec immutable

    def default(self, obj: Obj) -> None:
        """Request defaults of ``spec.spec``."""
        default_claim_spec(_dict(obj.get("spec")).get("spec"))

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateResourceClaimTemplate: :func:`validate_claim_template`."""
        return validate_claim_template(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """The strategy's ValidateUpdate after ValidateResourceClaimTemplate (:meth:`validate_again`, first:
        ``revalidates_first``): the spec is immutable."""
        if subresource or new.get("spec") == old.get("spec"):
            return []
        return [_spec_immutable(new)]


@register
class ResourceSliceStrategy(Strategy):
    """ResourceSlice: generation tracked; ValidateResourceSlice / ValidateResourceSliceUpdate; field labels
    spec.nodeName, spec.driver."""

    group, kind = GROUP, "ResourceSlice"
    validates_required = True  # kube's Go structs have no required fields (a zero pool generation is valid)
    selectable_fields = {
        "spec.nodeName": lambda o: str(_dict(o.get("spec")).get("nodeName") or ""),
        "spec.driver": lambda o: str(_dict(o.get("spec")).get("driver") or ""),
    }

    def validate(self, obj: Obj) -> list[Cause]:
        """ValidateResourceSlice: :func:`kapi.kinds.resourcedevices.validate_resource_slice_spec`."""
        return devices.validate_resource_slice_spec(obj.get("spec"))

    def validate_again(self, new: Obj, old: Obj) -> list[Cause]:
        """ValidateResourceSliceUpdate: the spec with the stored one (pool name, driver, nodeName immutable;
        unchanged capacity and taints not validated again)."""
        return devices.validate_resource_slice_spec(new.get("spec"), _dict(old.get("spec")))
