"""ResourceQuota, LimitRange and ServiceAccount validation beyond ObjectMeta, as kube-apiserver 1.37.

Source: k8s.io/kubernetes ``pkg/apis/core/validation/validation.go`` (``ValidateResourceQuota``,
``ValidateResourceQuotaSpec``, ``ValidateResourceQuotaStatus``, ``validateResourceQuotaScopes``,
``validateScopeSelector``/``validateScopedResourceSelectorRequirement``, ``ValidateResourceQuantityValue``,
``ValidateResourceQuotaResourceName``, ``ValidateResourceQuotaUpdate``, ``ValidateResourceQuotaStatusUpdate``,
``ValidateLimitRange`` with ``validateLimitRangeTypeName``/``validateLimitRangeResourceName``) and the name sets of
``pkg/apis/core/helper/helpers.go`` (``IsStandardResourceName``, ``IsStandardQuotaResourceName``,
``IsIntegerResourceName``, ``IsStandardResourceQuotaScope``, ``IsResourceQuotaScopeValidForResource``, ...).

``ValidateServiceAccount``/``ValidateServiceAccountUpdate`` check nothing but ObjectMeta (validated elsewhere),
so this module has no ServiceAccount rules.

Objects are the decoded v1 JSON after defaulting (``SetDefaults_ResourceList`` rounds every quantity up to
milli-units, ``SetDefaults_LimitRangeItem`` fills a Container item's defaults). Quantities that do not parse, and
fields of the wrong JSON type, are the schema layer's and are skipped here.

Printing, as field.Error does (apimachinery ``field/errors.go``): a ``resource.Quantity`` passed as the bad value
prints through its ``String()`` unquoted (``Invalid value: 2: min value 2 is greater than max value 1``); one passed
as ``value.String()`` is a Go string and so quoted (``Invalid value: "-1": must be greater than or equal to 0``);
slices and structs of internal types print as ``%#v`` (``[]core.ResourceQuotaScope{"BestEffort"}``).

Go iterates maps in random order; here a ResourceList is walked in its JSON order and the set of a LimitRange
item's resource names in sorted order (kube's order for those errors is not deterministic).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from kapi import quantity
from kapi.errors import Cause
from kapi.kinds.fields import IMMUTABLE, duplicate, go_quote
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_qualified_name
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list

Obj = dict[str, Any]

NEGATIVE = "must be greater than or equal to 0"  # apimachinery validation.IsNegativeErrorMsg
NOT_INTEGER = "must be an integer"  # isNotIntegerErrorMsg
INVALID_QUOTA_RESOURCE = "must be a standard resource for quota"  # isInvalidQuotaResource
NOT_STANDARD_RESOURCE = "must be a standard resource type or fully qualified"
NOT_CONTAINER_RESOURCE = "must be a standard resource for containers"
NOT_EXTENDED_RESOURCE = "doesn't follow extended resource name standard"
NOT_LIMIT_TYPE = "must be a standard limit type or fully qualified"
UNSUPPORTED_SCOPE = "unsupported scope"
SCOPE_NOT_FOR_RESOURCE = "unsupported scope applied to resource"
CONFLICTING_SCOPES = "conflicting scopes"
SCOPE_NEEDS_EXISTS = ("must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "
                      "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                      "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity")
VALUES_REQUIRED = "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
VALUES_FORBIDDEN = "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
BAD_SELECTOR_OPERATOR = "not a valid selector operator"
POD_NO_DEFAULTS = "may not be specified when `type` is 'Pod'"
PVC_NEEDS_STORAGE = "either minimum or maximum storage value is required, but neither was provided"

HUGEPAGES_PREFIX = "hugepages-"  # core.ResourceHugePagesPrefix
REQUESTS_HUGEPAGES_PREFIX = "requests.hugepages-"  # core.ResourceRequestsHugePagesPrefix
REQUESTS_PREFIX = "requests."  # core.DefaultResourceRequestsPrefix
DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"  # core.ResourceDefaultNamespacePrefix

# helper.standardResources (IsStandardResourceName, with the hugepages prefixes)
STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage", "requests.storage",
    "services.nodeports", "services.loadbalancers"))
# helper.standardQuotaResources (IsStandardQuotaResourceName, with the hugepages prefixes)
STANDARD_QUOTA_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
    "resourcequotas", "services", "replicationcontrollers", "secrets", "persistentvolumeclaims", "configmaps",
    "services.nodeports", "services.loadbalancers"))
# helper.integerResources (IsIntegerResourceName, with extended resources)
INTEGER_RESOURCES = frozenset((
    "pods", "resourcequotas", "services", "replicationcontrollers", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"))
STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))  # helper.standardContainerResources
LIMIT_TYPES = frozenset(("Pod", "Container", "PersistentVolumeClaim"))  # helper.standardLimitRangeTypes

# helper.standardResourceQuotaScopes plus CrossNamespacePodAffinity (IsStandardResourceQuotaScope)
STANDARD_SCOPES = frozenset(("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                             "VolumeAttributesClass", "CrossNamespacePodAffinity"))
_POD_COUNT = frozenset(("pods",))
_POD_COMPUTE = frozenset(("cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"))
_PVC_RESOURCES = frozenset(("persistentvolumeclaims", "requests.storage"))
_EXISTS_ONLY_SCOPES = ("BestEffort", "NotBestEffort", "Terminating", "NotTerminating", "CrossNamespacePodAffinity")
_CONFLICTING = (("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating"))


# ------------------------------------------------------------ helpers (pkg/apis/core/helper)

def _is_quota_hugepages(name: str) -> bool:
    """helper.IsQuotaHugePageResourceName."""
    return name.startswith((HUGEPAGES_PREFIX, REQUESTS_HUGEPAGES_PREFIX))


def is_standard_resource_name(name: str) -> bool:
    """helper.IsStandardResourceName."""
    return name in STANDARD_RESOURCES or _is_quota_hugepages(name)


def is_standard_quota_resource_name(name: str) -> bool:
    """helper.IsStandardQuotaResourceName."""
    return name in STANDARD_QUOTA_RESOURCES or _is_quota_hugepages(name)


def _is_native(name: str) -> bool:
    """helper.IsNativeResource: no domain, or one containing ``kubernetes.io/``."""
    return "/" not in name or DEFAULT_NAMESPACE_PREFIX in name


def _is_extended(name: str) -> bool:
    """helper.IsExtendedResourceName."""
    if _is_native(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not is_qualified_name(REQUESTS_PREFIX + name)


def _is_integer_resource(name: str) -> bool:
    """helper.IsIntegerResourceName."""
    return name in INTEGER_RESOURCES or _is_extended(name)


def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native and not hugepages."""
    return _is_native(name) and not name.startswith(HUGEPAGES_PREFIX)


def _scope_valid_for(scope: str, name: str) -> bool:
    """helper.IsResourceQuotaScopeValidForResource."""
    if scope in ("Terminating", "NotTerminating", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"):
        return name in _POD_COUNT or name in _POD_COMPUTE
    if scope == "BestEffort":
        return name in _POD_COUNT
    if scope == "VolumeAttributesClass":
        return name in _PVC_RESOURCES
    return True


# ------------------------------------------------------------ Go printing

def _shown_invalid(path: str, shown: str, detail: str) -> Cause:
    """field.Invalid with a bad value that prints unquoted (a Quantity's ``String()``, a ``%#v`` rendering)."""
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


def _go_str(value: Any) -> str:
    """A Go string field's value (``""`` for a missing or non-string one)."""
    return value if isinstance(value, str) else ""


def _go_scopes(scopes: Any) -> str:
    """``%#v`` of a ``[]core.ResourceQuotaScope``: nil when absent, ``{}`` when empty."""
    if not isinstance(scopes, list):
        return "[]core.ResourceQuotaScope(nil)"
    return "[]core.ResourceQuotaScope{" + ", ".join(go_quote(_go_str(s)) for s in scopes) + "}"


def _go_string_slice(values: Any) -> str:
    """``%#v`` of a ``[]string``."""
    if not isinstance(values, list):
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(_go_str(v)) for v in values) + "}"


def _go_scope_selector(selector: Obj) -> str:
    """``%#v`` of a ``core.ScopeSelector`` (what field.Invalid prints for the dereferenced pointer)."""
    exprs = selector.get("matchExpressions")
    if not isinstance(exprs, list):
        inner = "[]core.ScopedResourceSelectorRequirement(nil)"
    else:
        items = []
        for expr in exprs:
            expr = _dict(expr)
            items.append(f"core.ScopedResourceSelectorRequirement{{ScopeName:{go_quote(_go_str(expr.get('scopeName')))}"
                         f", Operator:{go_quote(_go_str(expr.get('operator')))}"
                         f", Values:{_go_string_slice(expr.get('values'))}}}")
        inner = "[]core.ScopedResourceSelectorRequirement{" + ", ".join(items) + "}"
    return f"core.ScopeSelector{{MatchExpressions:{inner}}}"


# ------------------------------------------------------------ quantities

_MILLI = Fraction(1, 1000)
_MAX_MILLI_VALUE = (2**63 - 1) // 1000  # resource.MaxMilliValue


def _quantity(raw: Any) -> tuple[Fraction, str] | None:
    """A defaulted ResourceList value: its amount rounded up to milli-units (``SetDefaults_ResourceList``'s
    ``RoundUp(-3)``, away from zero) and its ``String()``; None when it does not parse (the schema's)."""
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None
    try:
        value = quantity.parse(raw)
    except ValueError:
        return None
    milli = value / _MILLI
    if milli.denominator != 1:
        milli = Fraction(math.ceil(milli) if milli > 0 else math.floor(milli))
        value = milli * _MILLI
    shown = quantity.format(value)
    with contextlib.suppress(ValueError):
        shown = quantity.canonical(raw, milli=True)
    return value, shown


def _resource_list(values: Any) -> Iterable[tuple[str, Any]]:
    return ((str(k), v) for k, v in _dict(values).items())


# ------------------------------------------------------------ resource names

def _each(path: str, value: str, messages: list[str]) -> list[Cause]:
    return [invalid(path, value, m) for m in messages]


def validate_resource_name(name: str, path: str) -> list[Cause]:
    """validateResourceName: a qualified name (each message ``Invalid value: "<name>": <msg>``, and then nothing
    more); a name without ``/`` must be a standard resource (``must be a standard resource type or fully
    qualified``)."""
    msgs = is_qualified_name(name)
    if msgs:
        return _each(path, name, msgs)
    if "/" not in name and not is_standard_resource_name(name):
        return [invalid(path, name, NOT_STANDARD_RESOURCE)]
    return []


def validate_resource_quota_resource_name(name: str, path: str) -> list[Cause]:
    """ValidateResourceQuotaResourceName: :func:`validate_resource_name`, then a name without ``/`` must be a
    standard quota resource (``must be a standard resource for quota``, also after the errors above)."""
    out = validate_resource_name(name, path)
    if "/" not in name and not is_standard_quota_resource_name(name):
        out.append(invalid(path, name, INVALID_QUOTA_RESOURCE))
    return out


def _container_resource_name(name: str, path: str) -> list[Cause]:
    """validateContainerResourceName: :func:`validate_resource_name`, then a bare name must be a container
    resource, a domain-qualified non-native one an extended resource."""
    out = validate_resource_name(name, path)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith(HUGEPAGES_PREFIX):
            out.append(invalid(path, name, NOT_CONTAINER_RESOURCE))
    elif not _is_native(name) and not _is_extended(name):
        out.append(invalid(path, name, NOT_EXTENDED_RESOURCE))
    return out


def validate_resource_quantity_value(name: str, raw: Any, path: str) -> list[Cause]:
    """ValidateResourceQuantityValue: ``Invalid value: "<q>": must be greater than or equal to 0`` (quoted:
    kube passes ``String()``), then for integer resources (object counts, extended resources) a whole number:
    ``Invalid value: <q>: must be an integer`` (unquoted: the Quantity itself)."""
    parsed = _quantity(raw)
    if parsed is None:
        return []
    value, shown = parsed
    out: list[Cause] = []
    if value < 0:
        out.append(invalid(path, shown, NEGATIVE))
    if _is_integer_resource(name) and value.denominator != 1:
        out.append(_shown_invalid(path, shown, NOT_INTEGER))
    return out


def _quota_list(values: Any, path: str) -> list[Cause]:
    """Each entry of a quota ResourceList at ``<path>[<name>]``: name, then quantity."""
    out: list[Cause] = []
    for name, raw in _resource_list(values):
        rpath = f"{path}[{name}]"
        out.extend(validate_resource_quota_resource_name(name, rpath))
        out.extend(validate_resource_quantity_value(name, raw, rpath))
    return out


# ------------------------------------------------------------ ResourceQuota

def _scope_rules(spec: Obj, path: str) -> list[Cause]:
    """validateResourceQuotaScopes at ``<path>.scopes`` (each error shows the whole ``scopes`` list)."""
    scopes = spec.get("scopes")
    if not isinstance(scopes, list) or not scopes:
        return []
    spath, shown = f"{path}.scopes", _go_scopes(scopes)
    hard = sorted(str(k) for k in _dict(spec.get("hard")))
    out: list[Cause] = []
    seen: set[str] = set()
    for scope in scopes:
        scope = _go_str(scope)
        if scope not in STANDARD_SCOPES:
            out.append(_shown_invalid(spath, shown, UNSUPPORTED_SCOPE))
        for name in hard:
            if is_standard_quota_resource_name(name) and not _scope_valid_for(scope, name):
                out.append(_shown_invalid(spath, shown, SCOPE_NOT_FOR_RESOURCE))
        seen.add(scope)
    for pair in _CONFLICTING:
        if seen.issuperset(pair):
            out.append(_shown_invalid(spath, shown, CONFLICTING_SCOPES))
    return out


def _scope_selector_rules(spec: Obj, path: str) -> list[Cause]:
    """validateScopeSelector / validateScopedResourceSelectorRequirement at
    ``<path>.scopeSelector.matchExpressions`` (no index: kube's paths have none)."""
    selector = spec.get("scopeSelector")
    if not isinstance(selector, dict):
        return []
    mpath = f"{path}.scopeSelector.matchExpressions"
    hard = sorted(str(k) for k in _dict(spec.get("hard")))
    out: list[Cause] = []
    seen: set[str] = set()
    for req in _list(selector.get("matchExpressions")):
        req = _dict(req)
        scope, operator = _go_str(req.get("scopeName")), _go_str(req.get("operator"))
        values = req.get("values")
        if scope not in STANDARD_SCOPES:
            out.append(invalid(f"{mpath}.scopeName", scope, UNSUPPORTED_SCOPE))
        for name in hard:
            if is_standard_quota_resource_name(name) and not _scope_valid_for(scope, name):
                out.append(_shown_invalid(mpath, _go_scope_selector(selector), SCOPE_NOT_FOR_RESOURCE))
        if scope in _EXISTS_ONLY_SCOPES and operator != "Exists":
            out.append(invalid(f"{mpath}.operator", operator, SCOPE_NEEDS_EXISTS))
        count = len(values) if isinstance(values, list) else 0
        if operator in ("In", "NotIn"):
            if count == 0:
                out.append(required(f"{mpath}.values", VALUES_REQUIRED))
        elif operator in ("Exists", "DoesNotExist"):
            if count != 0:
                out.append(_shown_invalid(f"{mpath}.values", _go_string_slice(values), VALUES_FORBIDDEN))
        else:
            out.append(invalid(f"{mpath}.operator", operator, BAD_SELECTOR_OPERATOR))
        seen.add(scope)
    for pair in _CONFLICTING:
        if seen.issuperset(pair):  # kube shows spec.scopes here, not the selector
            out.append(_shown_invalid(mpath, _go_scopes(spec.get("scopes")), CONFLICTING_SCOPES))
    return out


def validate_resource_quota_spec(spec: Any, path: str = "spec") -> list[Cause]:
    """ValidateResourceQuotaSpec of ``spec`` (a ResourceQuotaSpec dict) at ``path``: ``hard`` entries
    (:func:`validate_resource_quota_resource_name`, :func:`validate_resource_quantity_value`), then the
    ``scopes`` rules (validateResourceQuotaScopes), then ``scopeSelector`` (validateScopeSelector)."""
    spec = _dict(spec)
    out = _quota_list(spec.get("hard"), f"{path}.hard")
    out.extend(_scope_rules(spec, path))
    out.extend(_scope_selector_rules(spec, path))
    return out


def validate_resource_quota_status(status: Any, path: str = "status") -> list[Cause]:
    """ValidateResourceQuotaStatus: ``status.hard`` then ``status.used`` entries, as ``spec.hard``'s."""
    status = _dict(status)
    return _quota_list(status.get("hard"), f"{path}.hard") + _quota_list(status.get("used"), f"{path}.used")


def validate_resource_quota(obj: Obj) -> list[Cause]:
    """ValidateResourceQuota without ObjectMeta: :func:`validate_resource_quota_spec` of ``spec`` then
    :func:`validate_resource_quota_status` of ``status``; [] when valid. ``ResourceQuotaStrategy.validate``."""
    obj = _dict(obj)
    return validate_resource_quota_spec(obj.get("spec")) + validate_resource_quota_status(obj.get("status"))


def _scope_set(obj: Obj) -> set[str]:
    return {_go_str(s) for s in _list(_dict(obj.get("spec")).get("scopes"))}


def validate_resource_quota_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidateResourceQuotaUpdate without ObjectMeta: :func:`validate_resource_quota_spec` of the new spec
    (not its status), then ``spec.scopes`` as a set must not change: ``spec.scopes: Invalid value:
    []core.ResourceQuotaScope{...}: field is immutable`` (the new list). kube runs nothing else on a
    main-resource update (no ValidateResourceQuota), so :meth:`validate_again` should add nothing."""
    new, old = _dict(new), _dict(old)
    out = validate_resource_quota_spec(new.get("spec"))
    if _scope_set(new) != _scope_set(old):
        out.append(_shown_invalid("spec.scopes", _go_scopes(_dict(new.get("spec")).get("scopes")), IMMUTABLE))
    return out


def validate_resource_quota_status_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidateResourceQuotaStatusUpdate without ObjectMeta: an empty ``metadata.resourceVersion`` is
    ``resourceVersion: Required value`` (that path, no ``metadata.``), then ``status.hard`` and ``status.used``
    entries as :func:`validate_resource_quota_status`. ``old`` is unused (kube compares only metadata)."""
    new = _dict(new)
    out: list[Cause] = []
    if not _dict(new.get("metadata")).get("resourceVersion"):
        out.append(required("resourceVersion"))
    out.extend(validate_resource_quota_status(new.get("status")))
    return out


# ------------------------------------------------------------ LimitRange

def _limit_type_name(value: str, path: str) -> list[Cause]:
    """validateLimitRangeTypeName: a qualified name; a bare one Pod, Container or PersistentVolumeClaim."""
    msgs = is_qualified_name(value)
    if msgs:
        return _each(path, value, msgs)
    if "/" not in value and value not in LIMIT_TYPES:
        return [invalid(path, value, NOT_LIMIT_TYPE)]
    return []


def _limit_resource_name(limit_type: str, name: str, path: str) -> list[Cause]:
    """validateLimitRangeResourceName: container resource names for Pod and Container items, any resource
    name otherwise."""
    if limit_type in ("Pod", "Container"):
        return _container_resource_name(name, path)
    return validate_resource_name(name, path)


def _ratio_limit(ratio: Fraction, low: Fraction, high: Fraction) -> tuple[float, float] | None:
    """The ``max/min`` comparison of ValidateLimitRange in float64: (ratio, max/min), milli-units when all three
    are below MaxMilliValue, else whole units (``Value()``, rounded up); None when max/min is not a number or
    infinite (Go's +Inf and NaN never compare greater)."""
    r, lo, hi = math.ceil(ratio), math.ceil(low), math.ceil(high)
    ratio_value = float(r)
    if r < _MAX_MILLI_VALUE and lo < _MAX_MILLI_VALUE and hi < _MAX_MILLI_VALUE:
        ratio_value = float(math.ceil(ratio * 1000)) / 1000
        lo, hi = math.ceil(low * 1000), math.ceil(high * 1000)
    if float(lo) == 0:
        return None
    return ratio_value, float(hi) / float(lo)


def _limit_item(item: Obj, path: str, seen_types: set[str]) -> list[Cause]:
    """One ``spec.limits[i]`` of ValidateLimitRange."""
    out: list[Cause] = []
    limit_type = _go_str(item.get("type"))
    out.extend(_limit_type_name(limit_type, f"{path}.type"))
    if limit_type in seen_types:
        out.append(duplicate(f"{path}.type", limit_type))
    seen_types.add(limit_type)

    keys: set[str] = set()
    parsed: dict[str, dict[str, tuple[Fraction, str]]] = {}

    def collect(field: str) -> None:
        parsed[field] = {}
        for name, raw in _resource_list(item.get(field)):
            out.extend(_limit_resource_name(limit_type, name, f"{path}.{field}[{name}]"))
            keys.add(name)
            q = _quantity(raw)
            if q is not None:
                parsed[field][name] = q

    collect("max")
    collect("min")
    if limit_type == "Pod":
        parsed["default"], parsed["defaultRequest"] = {}, {}
        if _dict(item.get("default")):
            out.append(forbidden(f"{path}.default", POD_NO_DEFAULTS))
        if _dict(item.get("defaultRequest")):
            out.append(forbidden(f"{path}.defaultRequest", POD_NO_DEFAULTS))
    else:
        collect("default")
        collect("defaultRequest")
    if limit_type == "PersistentVolumeClaim":
        if "storage" not in _dict(item.get("min")) and "storage" not in _dict(item.get("max")):
            out.append(required(f"{path}.limits", PVC_NEEDS_STORAGE))
    collect("maxLimitRequestRatio")

    for name in sorted(keys):
        low, high = parsed["min"].get(name), parsed["max"].get(name)
        default, request = parsed["default"].get(name), parsed["defaultRequest"].get(name)
        ratio = parsed["maxLimitRequestRatio"].get(name)
        if low and high and low[0] > high[0]:
            out.append(_shown_invalid(f"{path}.min[{name}]", low[1],
                                      f"min value {low[1]} is greater than max value {high[1]}"))
        if request and low and low[0] > request[0]:
            out.append(_shown_invalid(f"{path}.defaultRequest[{name}]", request[1],
                                      f"min value {low[1]} is greater than default request value {request[1]}"))
        if request and high and request[0] > high[0]:
            out.append(_shown_invalid(f"{path}.defaultRequest[{name}]", request[1],
                                      f"default request value {request[1]} is greater than max value {high[1]}"))
        if request and default and request[0] > default[0]:
            out.append(_shown_invalid(f"{path}.defaultRequest[{name}]", request[1],
                                      f"default request value {request[1]} is greater than default limit value "
                                      f"{default[1]}"))
        if default and low and low[0] > default[0]:
            out.append(_shown_invalid(f"{path}.default[{name}]", low[1],
                                      f"min value {low[1]} is greater than default value {default[1]}"))
        if default and high and default[0] > high[0]:
            out.append(_shown_invalid(f"{path}.default[{name}]", high[1],
                                      f"default value {default[1]} is greater than max value {high[1]}"))
        if ratio and ratio[0] < 1:
            out.append(_shown_invalid(f"{path}.maxLimitRequestRatio[{name}]", ratio[1],
                                      f"ratio {ratio[1]} is less than 1"))
        if ratio and low and high:
            compared = _ratio_limit(ratio[0], low[0], high[0])
            if compared and compared[0] > compared[1]:
                out.append(_shown_invalid(f"{path}.maxLimitRequestRatio[{name}]", ratio[1],
                                          f"ratio {ratio[1]} is greater than max/min = {compared[1]:f}"))
        if not _overcommit_allowed(name) and default and request and default[0] != request[0]:
            out.append(_shown_invalid(f"{path}.defaultRequest[{name}]", request[1],
                                      f"default value {default[1]} must equal to defaultRequest value {request[1]} "
                                      f"in {name}"))
    return out


def validate_limit_range(obj: Obj) -> list[Cause]:
    """ValidateLimitRange without ObjectMeta, for create and update alike (``LimitRangeStrategy.validate``; kube's
    ValidateUpdate runs the same function on the new object).

    Per ``spec.limits[i]``: ``type`` (qualified name; a bare name Pod, Container or PersistentVolumeClaim:
    ``must be a standard limit type or fully qualified``; an empty type gets the qualified-name messages), a
    repeated type ``Duplicate value: "<type>"``; resource names of ``max``, ``min``, then ``default`` and
    ``defaultRequest`` (a Pod item may have neither: ``Forbidden: may not be specified when `type` is 'Pod'``),
    a PersistentVolumeClaim item's ``<path>.limits: Required value: either minimum or maximum storage value is
    required, ...``, ``maxLimitRequestRatio`` names; then per resource (sorted) ``min <= defaultRequest <= default
    <= max`` (``min value 2 is greater than max value 1`` ...), the ratio ``>= 1`` and ``<= max/min``, and a
    resource that cannot be overcommitted (extended, hugepages) with ``default == defaultRequest``. Quantities are
    printed with ``String()``, unquoted. [] when valid."""
    out: list[Cause] = []
    seen: set[str] = set()
    for i, item in enumerate(_list(_dict(_dict(obj).get("spec")).get("limits"))):
        if isinstance(item, dict):
            out.extend(_limit_item(item, f"spec.limits[{i}]", seen))
    return out
