"""resource.k8s.io/v1 per-field validators: ResourceSlice devices, claim constraints, tolerations, allocation.

From kube's ``pkg/apis/resource/validation/validation.go`` (kubernetes/kubernetes, the 1.37 development tree
read at commit 009801d930e2e3c8b3671a3ec28e31a2f64865ac) and the limits of ``pkg/apis/resource/types.go``.
:mod:`kapi.kinds.resource` holds the strategies and calls these in kube's order.

Feature gates as kube 1.37 sets them by default: on (GA or beta) DRAPrioritizedList, DRAAdminAccess,
DRADeviceTaints, DRAPartitionableDevices, DRAConsumableCapacity, DRADeviceBindingConditions,
DRAResourceClaimDeviceStatus, DRAExtendedResource; off (alpha, not validated here) DRAListTypeAttributes,
DRANodeAllocatableResources, DRAOptionalNodeOperations (``skipNodeOperations``), DRADerivedAttributes and the
pool status ``partitionTypeAttribute``.

Go maps are walked in the object's key order (kube's is random). Nothing here raises on wrong JSON types: a
value of the wrong type reads as absent (the schema layer reports the type).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any

from kapi import quantity
from kapi.errors import Cause
from kapi.kinds.fields import duplicate, go_strings, go_value, not_supported, too_many, validate_conditions
from kapi.kinds.storage import validate_csi_driver_name
from kapi.objectmeta import forbidden, invalid, required, too_long
from kapi.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
    parse_ip_sloppy,
    regex_error,
)
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list
from kapi.values import as_str as _str

Obj = dict[str, Any]
Validator = Callable[[Any, str], list[Cause]]

# pkg/apis/resource/types.go
POOL_NAME_MAX_LENGTH = 253
RESOURCE_SLICE_MAX_DEVICES = 128
RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
RESOURCE_SLICE_MAX_COUNTER_SETS = 8
RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET = 32
RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION = 32
RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32
RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE = 48
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
DEVICE_TAINTS_MAX_LENGTH = 16
BINDING_CONDITIONS_MAX_SIZE = 4
BINDING_FAILURE_CONDITIONS_MAX_SIZE = 4
CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS = 10
DEVICE_REQUESTS_MAX_SIZE = 32
DEVICE_CONSTRAINTS_MAX_SIZE = 32
DEVICE_CONFIG_MAX_SIZE = 32
DEVICE_SELECTORS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256
ALLOCATION_RESULTS_MAX_SIZE = 32
ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS = 8
ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH = 10 * 1024
NETWORK_DEVICE_DATA_MAX_IPS = 16
NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH = 256
NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH = 128
ATTRIBUTE_AND_CAPACITY_MAX_KEY_LENGTH = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH
DNS1123_LABEL_MAX_LENGTH = 63

TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")  # sets.List: sorted
TOLERATION_OPERATORS = ("Equal", "Exists")
CONFIG_SOURCES = ("FromClaim", "FromClass")

REQUEST_REF_MSG = ("must be the name of a request in the claim or the name of a request and a subrequest separated "
                   "by '/'")
NODE_SELECTION_MSG = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
DEVICE_NODE_SELECTION_MSG = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
                             "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
UID_FORM_MSG = ("uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase "
                "hexadecimal characters")
C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
C_IDENTIFIER_MSG = ("a valid C identifier must start with alphabetic character or '_', followed by a string of "
                    "alphanumeric characters or '_'")
_C_IDENTIFIER = re.compile(C_IDENTIFIER_FMT)
_NUMERIC = r"(0|[1-9]\d*)"
_PRE_RELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_BUILD = r"[0-9a-zA-Z-]+"
_SEMVER = re.compile(rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRE_RELEASE}(\.{_PRE_RELEASE})*)?"
                     rf"(\+{_BUILD}(\.{_BUILD})*)?")
_HEX = re.compile(r"[0-9a-fA-F]{2}")


# ---------------------------------------------------------------------------------------------- shared helpers

def _present(obj: Obj, key: str) -> bool:
    """A Go pointer / slice field that is non-nil: the key is there and not JSON null."""
    return obj.get(key) is not None


def _raw(path: str, shown: str, detail: str) -> Cause:
    """field.Invalid whose value Go prints through ``String()`` (not quoted)."""
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


def validate_slice(items: Any, max_size: int, item: Validator, path: str) -> list[Cause]:
    """validateSlice: more than ``max_size`` (when >= 0) is only ``Too many``; else each item at ``path[i]``."""
    items = _list(items)
    if 0 <= max_size < len(items):
        return [too_many(path, len(items), max_size)]
    out: list[Cause] = []
    for i, value in enumerate(items):
        out.extend(item(value, f"{path}[{i}]"))
    return out


def validate_set(items: Any, max_size: int, item: Validator, key: Callable[[Any], Hashable],
                 path: str) -> list[Cause]:
    """validateSet: validateSlice, then ``path[i]: Duplicate value: <key>`` for each repeated key."""
    items = _list(items)
    out = validate_slice(items, max_size, item, path)
    if 0 <= max_size < len(items):
        return out
    seen: set[Hashable] = set()
    for i, value in enumerate(items):
        k = key(value)
        if k in seen:
            out.append(duplicate(f"{path}[{i}]", k))
        else:
            seen.add(k)
    return out


def _truncate(key: str, max_len: int) -> str:
    """truncateIfTooLong: a long map key in a path is cut in the middle (at least 16 characters kept)."""
    max_len = max(max_len, 16)
    if len(key) <= max_len:
        return key
    remaining = max_len - 3
    return key[:(remaining + 1) // 2] + "..." + key[len(key) - remaining // 2:]


def _validate_map(mapping: Any, max_size: int, key_len: int, key: Validator, item: Validator | None,
                  path: str) -> list[Cause]:
    """validateMap: ``Too many`` over ``max_size``; else each key's errors at ``path`` and each value at
    ``path[<key>]``."""
    mapping = _dict(mapping)
    if 0 <= max_size < len(mapping):
        return [too_many(path, len(mapping), max_size)]
    out: list[Cause] = []
    for k, value in mapping.items():
        out.extend(key(k, path))
        if item is not None:
            out.extend(item(value, f"{path}[{_truncate(k, key_len)}]"))
    return out


def _dns_label(value: Any, path: str) -> list[Cause]:
    """corevalidation.ValidateDNS1123Label (device, request and counter names)."""
    text = _str(value)
    return [invalid(path, text, m) for m in is_dns1123_label(text)]


def _label_name(value: Any, path: str) -> list[Cause]:
    """metav1validation.ValidateLabelName (empty included)."""
    text = _str(value)
    return [invalid(path, text, m) for m in is_qualified_name(text)]


def _label_value(value: str, path: str) -> list[Cause]:
    return [invalid(path, value, m) for m in is_valid_label_value(value)]


def _node_name(name: str, path: str) -> list[Cause]:
    """validateNodeName: a DNS subdomain."""
    return [invalid(path, name, m) for m in is_dns1123_subdomain(name)]


def _node_selector(selector: Any, path: str) -> list[Cause]:
    from kapi.kinds.podaffinity import validate_node_selector  # noqa: PLC0415 - podaffinity is the pod's module
    return validate_node_selector(selector, path)


def validate_pool_name(name: Any, path: str) -> list[Cause]:
    """validatePoolName: required, at most 253 bytes, each ``/``-separated part a DNS subdomain."""
    text = _str(name)
    if not text:
        return [required(path)]
    out = [too_long(path, POOL_NAME_MAX_LENGTH)] if len(text) > POOL_NAME_MAX_LENGTH else []
    for part in text.split("/"):
        out.extend(invalid(path, part, m) for m in is_dns1123_subdomain(part))
    return out


def validate_uid(uid: Any, path: str) -> list[Cause]:
    """validateUID (a shareID): google/uuid's Validate, then the lowercase 36-character form."""
    text = _str(uid)
    err = _uuid_error(text)
    if err:
        return [invalid(path, text, f"error validating uid: {err}")]
    if len(text) != 36 or text != text.lower():
        return [invalid(path, text, UID_FORM_MSG)]
    return []


def _uuid_error(s: str) -> str:
    """uuid.Validate's error text, "" when valid."""
    if len(s) == 36 + 9:
        if s[:9].lower() != "urn:uuid:":
            return f"invalid urn prefix: {go_value(s[:9])}"
        s = s[9:]
    elif len(s) == 36 + 2:
        s = s[1:37]
    elif len(s) == 32:
        return "" if all(_HEX.fullmatch(s[i:i + 2]) for i in range(0, 32, 2)) else "invalid UUID format"
    elif len(s) != 36:
        return f"invalid UUID length: {len(s)}"
    if s[8] != "-" or s[13] != "-" or s[18] != "-" or s[23] != "-":
        return "invalid UUID format"
    if not all(_HEX.fullmatch(s[x:x + 2]) for x in (0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34)):
        return "invalid UUID format"
    return ""


def validate_raw_extension(value: Any, present: bool, path: str, max_length: int, stored: bool = False) -> list[Cause]:
    """validateRawExtension (opaque ``parameters``, a device status ``data``): required, at most ``max_length``
    bytes on create, a JSON object. The size is that of the compact JSON kapi holds (kube: the bytes sent)."""
    if not present or value is None:
        return [required(path)]
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if not stored and len(raw.encode()) > max_length:
        return [too_long(path, max_length)]
    if not isinstance(value, dict):
        return [invalid(path, "<value omitted>", "must be a valid JSON object")]
    return []


# ------------------------------------------------------------------------------------- qualified names, CEL

def _c_identifier(ident: str, path: str) -> list[Cause]:
    """validateCIdentifier: at most 32 bytes and a C identifier."""
    out = [too_long(path, DEVICE_MAX_ID_LENGTH)] if len(ident) > DEVICE_MAX_ID_LENGTH else []
    if not _C_IDENTIFIER.fullmatch(ident):
        out.append(invalid(path, ident, regex_error(C_IDENTIFIER_MSG, C_IDENTIFIER_FMT, "my_name", "MY_NAME",
                                                    "MyName")))
    return out


def validate_qualified_name(name: Any, path: str) -> list[Cause]:
    """validateQualifiedName: a C identifier, or ``<driver name>/<C identifier>``; more slashes refused."""
    text = _str(name)
    parts = text.split("/")
    if len(parts) == 1:
        return _c_identifier(parts[0], path)
    if len(parts) > 2:
        return [invalid(path, text, "must not contain more than one slash")]
    out = [invalid(path, "", "the domain must not be empty")] if not parts[0] \
        else validate_csi_driver_name(parts[0], path)
    out.extend([invalid(path, "", "the name must not be empty")] if not parts[1] else _c_identifier(parts[1], path))
    return out


def validate_fully_qualified_name(name: Any, path: str) -> list[Cause]:
    """validateFullyQualifiedName: a qualified name that has a domain."""
    out = validate_qualified_name(name, path)
    if "/" not in _str(name):
        out.append(invalid(path, _str(name), "a fully qualified name must be a domain and a name separated by a "
                                             "slash"))
    return out


def validate_cel_expression(expression: Any, path: str, stored: bool = False) -> list[Cause]:
    """validateCELExpression of a selector: skipped when stored; at most 10 KiB (``Too long``, not compiled);
    then the DRA CEL compiler's syntax errors (``Invalid value: "<expr>": compilation failed: ERROR: ...``).
    Type checks (the ``device`` variable's fields, a non-bool result) and the cost limit are not checked."""
    if stored:
        return []
    from kapi.kinds.admissionregistration import cel_syntax  # noqa: PLC0415 - the admission CEL syntax check
    text = _str(expression)
    if len(text) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
        return [too_long(path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH)]
    return cel_syntax(path, text)


def validate_selectors(selectors: Any, path: str, stored: bool = False) -> list[Cause]:
    """validateSelectorSlice: at most 32; each ``cel`` required and its expression compiling."""
    def one(selector: Any, spath: str) -> list[Cause]:
        cel = _dict(selector).get("cel")
        if cel is None:
            return [required(f"{spath}.cel")]
        if not isinstance(cel, dict):
            return []
        return validate_cel_expression(cel.get("expression"), f"{spath}.cel.expression", stored)
    return validate_slice(selectors, DEVICE_SELECTORS_MAX_SIZE, one, path)


# ------------------------------------------------------------------------------------- configuration, requests

def validate_device_configuration(config: Any, path: str, stored: bool = False) -> list[Cause]:
    """validateDeviceConfiguration: ``opaque`` required; its driver a driver name, its ``parameters`` a JSON
    object of at most 10 KiB."""
    config = _dict(config)
    opaque = config.get("opaque")
    if opaque is None:
        return [required(f"{path}.opaque")]
    opaque = _dict(opaque)
    out = validate_csi_driver_name(opaque.get("driver"), f"{path}.opaque.driver")
    out.extend(validate_raw_extension(opaque.get("parameters"), "parameters" in opaque,
                                      f"{path}.opaque.parameters", OPAQUE_PARAMETERS_MAX_LENGTH, stored))
    return out


RequestNames = dict[str, "set[str] | None"]


def gather_request_names(spec: Any) -> RequestNames:
    """gatherRequestNames of a ResourceClaimSpec: request name -> its subrequest names (None without any)."""
    names: RequestNames = {}
    for request in _list(_dict(_dict(spec).get("devices")).get("requests")):
        request = _dict(request)
        subs = _list(request.get("firstAvailable"))
        names[_str(request.get("name"))] = {_str(_dict(s).get("name")) for s in subs} if subs else None
    return names


def _has_request(names: RequestNames, ref: str) -> bool:
    segments = ref.split("/")
    if len(segments) > 2 or segments[0] not in names:
        return False
    return len(segments) == 1 or segments[1] in (names[segments[0]] or set())


def validate_request_name_ref(name: Any, path: str, names: RequestNames) -> list[Cause]:
    """validateRequestNameRef: ``<request>`` or ``<request>/<subrequest>``, each a DNS label, naming one of the
    claim's requests."""
    text = _str(name)
    segments = text.split("/")
    if len(segments) > 2:
        return [invalid(path, text, REQUEST_REF_MSG)]
    out: list[Cause] = []
    for segment in segments:
        out.extend(_dns_label(segment, path))
    if not _has_request(names, text):
        out.append(invalid(path, text, REQUEST_REF_MSG))
    return out


def _request_refs(refs: Any, path: str, names: RequestNames) -> list[Cause]:
    return validate_set(refs, DEVICE_REQUESTS_MAX_SIZE, lambda n, p: validate_request_name_ref(n, p, names),
                         _str, path)


def validate_constraints(constraints: Any, path: str, names: RequestNames) -> list[Cause]:
    """validateSlice of validateDeviceConstraint: at most 32; each ``requests`` naming requests (unique, at most
    32), then ``matchAttribute`` or else ``distinctAttribute`` a fully qualified name; neither is
    ``Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields
    are set`` at the constraint (kube's text, DRAConsumableCapacity on)."""
    def one(constraint: Any, cpath: str) -> list[Cause]:
        constraint = _dict(constraint)
        out = _request_refs(constraint.get("requests"), f"{cpath}.requests", names)
        if constraint.get("matchAttribute") is not None:
            out.extend(validate_fully_qualified_name(constraint["matchAttribute"], f"{cpath}.matchAttribute"))
        elif constraint.get("distinctAttribute") is not None:
            out.extend(validate_fully_qualified_name(constraint["distinctAttribute"], f"{cpath}.distinctAttribute"))
        else:
            out.append(required(cpath, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                                       "multiple fields are set"))
        return out
    return validate_slice(constraints, DEVICE_CONSTRAINTS_MAX_SIZE, one, path)


def validate_claim_config(configs: Any, path: str, names: RequestNames, stored: bool = False) -> list[Cause]:
    """validateSlice of validateDeviceClaimConfiguration: at most 32; each ``requests`` naming requests, then the
    device configuration."""
    def one(config: Any, cpath: str) -> list[Cause]:
        out = _request_refs(_dict(config).get("requests"), f"{cpath}.requests", names)
        out.extend(validate_device_configuration(config, cpath, stored))
        return out
    return validate_slice(configs, DEVICE_CONFIG_MAX_SIZE, one, path)


def validate_device_toleration(toleration: Any, path: str) -> list[Cause]:
    """validateDeviceToleration: a key a label name; ``Exists`` with no value, ``Equal`` with a label value,
    the operator required and Equal/Exists; an effect NoExecute/NoSchedule/None when set."""
    toleration = _dict(toleration)
    key, operator, value = _str(toleration.get("key")), _str(toleration.get("operator")), _str(toleration.get("value"))
    out = _label_name(key, f"{path}.key") if key else []
    if operator == "Exists":
        if value:
            out.append(invalid(f"{path}.value", value, "must be empty for operator `Exists`"))
    elif operator == "Equal":
        out.extend(_label_value(value, f"{path}.value"))
    elif not operator:
        out.append(required(f"{path}.operator"))
    else:
        out.append(not_supported(f"{path}.operator", operator, TOLERATION_OPERATORS))
    effect = _str(toleration.get("effect"))
    if effect and effect not in TAINT_EFFECTS:
        out.append(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return out


def validate_tolerations(tolerations: Any, path: str) -> list[Cause]:
    """Each toleration of a request or allocation result (no count limit in the handwritten rules)."""
    out: list[Cause] = []
    for i, toleration in enumerate(_list(tolerations)):
        out.extend(validate_device_toleration(toleration, f"{path}[{i}]"))
    return out


def validate_binding_parameters(device: Obj, path: str) -> list[Cause]:
    """validateDeviceBindingParameters of a device or allocation result at ``path``: at most 4 of each, label
    names, no duplicates, no failure condition that is also a binding condition, and neither without the
    other."""
    conditions, failures = device.get("bindingConditions"), device.get("bindingFailureConditions")
    cpath, fpath = f"{path}.bindingConditions", f"{path}.bindingFailureConditions"
    out = validate_slice(conditions, BINDING_CONDITIONS_MAX_SIZE, _label_name, cpath)
    out.extend(validate_slice(failures, BINDING_FAILURE_CONDITIONS_MAX_SIZE, _label_name, fpath))
    names = [_str(c) for c in _list(conditions)]
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            out.append(duplicate(f"{cpath}[{i}]", name))
        seen.add(name)
    seen = set()
    for i, name in enumerate(_str(c) for c in _list(failures)):
        if name in seen:
            out.append(duplicate(f"{fpath}[{i}]", name))
        seen.add(name)
        if name in names:
            out.append(invalid(f"{fpath}[{i}]", name, "bindingFailureConditions must not overlap with "
                                                      "bindingConditions"))
    if not _list(conditions) and _list(failures):
        out.append(_raw(cpath, go_strings(conditions), "bindingConditions are required to use "
                                                       "bindingFailureConditions"))
    if not _list(failures) and _list(conditions):
        out.append(_raw(fpath, go_strings(failures), "bindingFailureConditions are required to use "
                                                     "bindingConditions"))
    return out


# ------------------------------------------------------------------------------------------- ResourceSlice

def _go_requirements(requirements: Any) -> str:
    if not isinstance(requirements, list):
        return "[]core.NodeSelectorRequirement(nil)"
    shown = [f"core.NodeSelectorRequirement{{Key:{go_value(_str(_dict(r).get('key')))}, "
             f"Operator:{go_value(_str(_dict(r).get('operator')))}, Values:{go_strings(_dict(r).get('values'))}}}"
             for r in requirements]
    return "[]core.NodeSelectorRequirement{" + ", ".join(shown) + "}"


def go_node_selector_terms(terms: Any) -> str:
    """A ``[]core.NodeSelectorTerm`` as Go's %#v prints it."""
    if not isinstance(terms, list):
        return "[]core.NodeSelectorTerm(nil)"
    shown = [f"core.NodeSelectorTerm{{MatchExpressions:{_go_requirements(_dict(t).get('matchExpressions'))}, "
             f"MatchFields:{_go_requirements(_dict(t).get('matchFields'))}}}" for t in terms]
    return "[]core.NodeSelectorTerm{" + ", ".join(shown) + "}"


def _resource_pool(pool: Any, path: str) -> list[Cause]:
    """validateResourcePool: the pool name, resourceSliceCount > 0, generation >= 0."""
    pool = _dict(pool)
    out = validate_pool_name(pool.get("name"), f"{path}.name")
    count, generation = pool.get("resourceSliceCount", 0), pool.get("generation")
    count = 0 if count is None else count
    if isinstance(count, int) and not isinstance(count, bool) and count <= 0:
        out.append(invalid(f"{path}.resourceSliceCount", count, "must be greater than zero"))
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        out.append(invalid(f"{path}.generation", generation, "must be greater than or equal to zero"))
    return out


def _immutable(path: str, new: Any, old: Any) -> list[Cause]:
    from kapi.kinds.fields import immutable  # noqa: PLC0415
    return [] if new == old else [immutable(path, new)]


def validate_resource_slice_spec(spec: Any, old_spec: Any = None, path: str = "spec") -> list[Cause]:
    """validateResourceSliceSpec (``old_spec`` None on create): driver, pool, on update the pool name, driver
    and nodeName immutable; the node selection (exactly one of nodeName / nodeSelector / allNodes /
    perDeviceNodeSelection); sharedCounters and devices not both; the devices (at most 128, 64 with taints or
    counter consumption; unique names) and the counter sets (at most 8, unique names)."""
    spec = _dict(spec)
    out = validate_csi_driver_name(spec.get("driver"), f"{path}.driver")
    out.extend(_resource_pool(spec.get("pool"), f"{path}.pool"))
    if old_spec is not None:
        old = _dict(old_spec)
        out.extend(_immutable(f"{path}.pool.name", _str(_dict(spec.get("pool")).get("name")),
                              _str(_dict(old.get("pool")).get("name"))))
        out.extend(_immutable(f"{path}.driver", _str(spec.get("driver")), _str(old.get("driver"))))
        out.extend(_immutable(f"{path}.nodeName", spec.get("nodeName"), old.get("nodeName")))
    set_fields: list[str] = []
    node_name = spec.get("nodeName")
    if isinstance(node_name, str):
        if node_name:
            set_fields.append("`nodeName`")
            out.extend(_node_name(node_name, f"{path}.nodeName"))
        else:
            out.append(invalid(f"{path}.nodeName", "", "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict):
        set_fields.append("`nodeSelector`")
        out.extend(_node_selector(selector, f"{path}.nodeSelector"))
        terms = selector.get("nodeSelectorTerms")
        if len(_list(terms)) != 1:
            out.append(_raw(f"{path}.nodeSelector.nodeSelectorTerms", go_node_selector_terms(terms),
                            "must have exactly one node selector term"))
    for key in ("allNodes", "perDeviceNodeSelection"):
        flag = spec.get(key)
        if flag is True:
            set_fields.append(f"`{key}`")
        elif flag is False:
            out.append(invalid(f"{path}.{key}", False, "must be either unset or set to true"))
    if not set_fields:
        out.append(required(path, NODE_SELECTION_MSG))
    elif len(set_fields) > 1:
        out.append(invalid(path, "{" + ", ".join(set_fields) + "}", NODE_SELECTION_MSG
                           + ", but multiple fields are set"))
    if _present(spec, "sharedCounters") and _present(spec, "devices"):
        out.append(invalid(path, "", "only one of `sharedCounters` or `devices` is allowed"))
    devices = _list(spec.get("devices"))
    advanced = any(_list(_dict(d).get("taints")) or _list(_dict(d).get("consumesCounters")) for d in devices)
    old_devices = {_str(_dict(d).get("name")): _dict(d) for d in _list(_dict(old_spec).get("devices"))} \
        if old_spec is not None else {}
    per_device = spec.get("perDeviceNodeSelection") is True
    out.extend(validate_set(
        devices, RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES if advanced else RESOURCE_SLICE_MAX_DEVICES,
        lambda d, p: validate_device(d, old_devices.get(_str(_dict(d).get("name"))), p, per_device),
        lambda d: _str(_dict(d).get("name")), f"{path}.devices"))
    out.extend(validate_set(spec.get("sharedCounters"), RESOURCE_SLICE_MAX_COUNTER_SETS, _counter_set,
                             lambda c: _str(_dict(c).get("name")), f"{path}.sharedCounters"))
    return out


def _counters(counters: Any, max_size: int, path: str) -> list[Cause]:
    return _validate_map(counters, max_size, DNS1123_LABEL_MAX_LENGTH, _dns_label, None, path)


def _named_counters(value: Any, name_key: str, max_counters: int, path: str) -> list[Cause]:
    """A named set of counters: ``name_key`` required and a DNS label; ``counters`` required, at most
    ``max_counters``, keys DNS labels (kube's validateCounterSet and validateDeviceCounterConsumption)."""
    value = _dict(value)
    name = _str(value.get(name_key))
    out = [required(f"{path}.{name_key}")] if not name else _dns_label(name, f"{path}.{name_key}")
    if not _dict(value.get("counters")):
        out.append(required(f"{path}.counters"))
    else:
        out.extend(_counters(value["counters"], max_counters, f"{path}.counters"))
    return out


def _counter_set(counter_set: Any, path: str) -> list[Cause]:
    """validateCounterSet: name required and a DNS label; counters required, at most 32, keys DNS labels."""
    return _named_counters(counter_set, "name", RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET, path)


def _counter_consumption(consumption: Any, path: str) -> list[Cause]:
    """validateDeviceCounterConsumption: counterSet required and a DNS label; counters required, at most 32."""
    return _named_counters(consumption, "counterSet", RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION,
                           path)


def _attribute_values(attributes: Obj) -> int:
    """numEntriesDeviceAttribute: a scalar attribute counts one, a list attribute its items."""
    total = 0
    for attribute in attributes.values():
        attribute = _dict(attribute)
        items = sum(len(_list(attribute.get(k))) for k in ("bools", "ints", "strings", "versions"))
        total += items or 1
    return total


def validate_device_attribute(attribute: Any, path: str) -> list[Cause]:
    """validateDeviceAttribute (scalar values; the list values are alpha): a string at most 64 bytes, a version
    semver and at most 64 bytes, exactly one value. The several-values error shows the attribute as JSON (kube
    prints the Go struct with its pointers)."""
    attribute = _dict(attribute)
    out: list[Cause] = []
    count = sum(1 for k in ("bool", "int", "string", "version") if attribute.get(k) is not None)
    string = attribute.get("string")
    if isinstance(string, str) and len(string.encode()) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
        out.append(too_long(f"{path}.string", DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
    version = attribute.get("version")
    if isinstance(version, str):
        if not _SEMVER.fullmatch(version):
            out.append(invalid(f"{path}.version", version, "must be a string compatible with semver.org spec 2.0.0"))
        if len(version.encode()) > DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH:
            out.append(too_long(f"{path}.version", DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH))
    if count == 0:
        out.append(invalid(path, "", "exactly one value must be specified"))
    elif count > 1:
        out.append(_raw(path, json.dumps(attribute, separators=(",", ":")), "exactly one value must be specified"))
    return out


def _single_capacity(capacity: Any, path: str) -> list[Cause]:
    """validateSingleAllocatableDeviceCapacity: no requestPolicy without allowMultipleAllocations."""
    if _dict(capacity).get("requestPolicy") is not None:
        return [forbidden(f"{path}.requestPolicy", "allowMultipleAllocations must be true")]
    return []


def _multi_capacity(capacity: Any, path: str) -> list[Cause]:
    """validateMultiAllocatableDeviceCapacity: the requestPolicy against the capacity's value."""
    capacity = _dict(capacity)
    policy = capacity.get("requestPolicy")
    value = quantity.parsed(capacity.get("value"))
    if not isinstance(policy, dict):
        return []
    return validate_request_policy(value or (Fraction(0), "0"), policy, f"{path}.requestPolicy")


def validate_request_policy(maximum: tuple[Any, str], policy: Obj, path: str) -> list[Cause]:
    """validateRequestPolicy: not both validValues and validRange; a default required with either; the valid
    values sorted, at most 10, unique, none above the capacity, holding the default; the range's min required,
    min/max/default within the capacity and each other, and a positive step that fits, with the default and
    max whole steps from min. Quantities print as ``Quantity.String()``. The int64 overflow guards of very large
    bounds are not checked."""
    values = [quantity.parsed(v) for v in _list(policy.get("validValues"))]
    if any(v is None for v in values):
        return []  # an unparseable quantity is the decode error
    valid_range, default = policy.get("validRange"), quantity.parsed(policy.get("default"))
    if values and valid_range is not None:
        return [forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" and '
                                '"validRange" at the same time')]
    if values:
        if default is None:
            return [required(f"{path}.default", "required when validValues is defined")]
        return _valid_values(default, maximum, values, f"{path}.validValues")  # type: ignore[arg-type]
    if valid_range is not None:
        if default is None:
            return [required(f"{path}.default", "required when validRange is defined")]
        return _valid_range(default, maximum, _dict(valid_range), f"{path}.validRange")
    return []


def _valid_values(default: tuple[Any, str], maximum: tuple[Any, str], values: list[tuple[Any, str]],
                  path: str) -> list[Cause]:
    out = [invalid(f"{path}[{i + 1}]", values[i + 1][1], "values must be sorted in ascending order")
           for i in range(len(values) - 1) if values[i][0] > values[i + 1][0]]
    if len(values) > CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS:
        out.append(too_many(path, len(values), CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS))
        found = False
    else:
        found, seen = False, set()
        for i, (amount, shown) in enumerate(values):
            if amount > maximum[0]:
                out.append(invalid(f"{path}[{i}]", shown, f"option is larger than capacity value: {maximum[1]}"))
            found = found or amount == default[0]
        for i, (amount, _) in enumerate(values):
            if amount in seen:
                out.append(duplicate(f"{path}[{i}]", _dec_string(amount)))
            seen.add(amount)
    if not found:
        out.append(invalid(path, default[1], "default value is not valid according to the requestPolicy"))
    return out


def _dec_string(amount: Fraction) -> str:
    """A quantity's exact decimal text (the key inf.Dec prints; its trailing zeros of scale are not kept)."""
    if amount.denominator == 1:
        return str(amount.numerator)
    sign, amount = ("-" if amount < 0 else ""), abs(amount)
    whole, rest = divmod(amount.numerator, amount.denominator)
    digits = ""
    while rest and len(digits) < 30:
        rest *= 10
        digit, rest = divmod(rest, amount.denominator)
        digits += str(digit)
    return f"{sign}{whole}.{digits}"


def _valid_range(default: tuple[Any, str], maximum: tuple[Any, str], valid_range: Obj, path: str) -> list[Cause]:
    low, high, step = (quantity.parsed(valid_range.get(k)) for k in ("min", "max", "step"))
    if low is None:
        return [required(f"{path}.min", "required when validRange is defined")]
    out: list[Cause] = []
    if low[0] > maximum[0]:
        out.append(invalid(f"{path}.min", low[1], f"min is larger than capacity value: {maximum[1]}"))
    if default[0] < low[0]:
        out.append(invalid(f"{path}.default", default[1], f"default is less than min: {low[1]}"))
    if high is not None:
        if low[0] > high[0]:
            out.append(invalid(f"{path}.max", low[1], f"min is larger than max: {high[1]}"))
        if high[0] > maximum[0]:
            out.append(invalid(f"{path}.max", high[1], f"max is larger than capacity value: {maximum[1]}"))
        if default[0] > high[0]:
            out.append(invalid(f"{path}.default", default[1], f"default is more than max: {high[1]}"))
    if step is not None:
        if step[0] <= 0:
            out.append(invalid(f"{path}.step", step[1], "must be greater than zero"))
        else:
            added = low[0] + step[0]
            if added > maximum[0]:
                out.append(invalid(f"{path}.step", step[1], f"one step {quantity.format(added)} is larger than "
                                                            f"capacity value: {maximum[1]}"))
            for value in (default, high):
                if value is not None and (value[0] - low[0]) % step[0] != 0:
                    out.append(invalid(f"{path}.step", value[1], f"value is not a multiple of a given step "
                                                                 f"({step[1]}) from ({low[1]})"))
    return out


def _device_taint(taint: Any, path: str) -> list[Cause]:
    """validateDeviceTaint (no old taint): key a label name, value a label value when set, effect required and
    NoExecute/NoSchedule/None."""
    taint = _dict(taint)
    out = _label_name(taint.get("key"), f"{path}.key")
    value = _str(taint.get("value"))
    if value:
        out.extend(_label_value(value, f"{path}.value"))
    effect = _str(taint.get("effect"))
    if not effect:
        out.append(required(f"{path}.effect"))
    elif effect not in TAINT_EFFECTS:
        out.append(not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return out


def validate_device(device: Any, old_device: Obj | None, path: str, per_device_node_selection: bool) -> list[Cause]:
    """validateDevice: name a DNS label; at most 32 attributes and capacities and 48 attribute values;
    attributes (qualified names, values), capacity (qualified names; requestPolicy only with
    allowMultipleAllocations) and taints (at most 16) unless unchanged from ``old_device``; consumesCounters
    (at most 2, unique counter sets); the per-device node selection; binding conditions."""
    device = _dict(device)
    out = _dns_label(device.get("name"), f"{path}.name")
    attributes, capacity = _dict(device.get("attributes")), _dict(device.get("capacity"))
    total = len(attributes) + len(capacity)
    if total > RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE:
        out.append(invalid(path, total, "the total number of attributes and capacities must not exceed "
                                        f"{RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE}"))
    values = _attribute_values(attributes)
    if values > RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE:
        out.append(invalid(path, values, "the total number of attribute values must not exceed "
                                         f"{RESOURCE_SLICE_MAX_ATTRIBUTE_VALUES_PER_DEVICE}"))
    out.extend(_validate_map(attributes, -1, ATTRIBUTE_AND_CAPACITY_MAX_KEY_LENGTH, validate_qualified_name,
                             validate_device_attribute, f"{path}.attributes"))
    old = old_device or {}
    if old_device is None or _dict(old.get("capacity")) != capacity:
        item = _multi_capacity if device.get("allowMultipleAllocations") is True else _single_capacity
        out.extend(_validate_map(capacity, -1, ATTRIBUTE_AND_CAPACITY_MAX_KEY_LENGTH, validate_qualified_name,
                                 item, f"{path}.capacity"))
    if old_device is None or old.get("taints") != device.get("taints"):
        out.extend(validate_slice(device.get("taints"), DEVICE_TAINTS_MAX_LENGTH, _device_taint, f"{path}.taints"))
    out.extend(validate_set(device.get("consumesCounters"), RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE,
                             _counter_consumption, lambda c: _str(_dict(c).get("counterSet")),
                             f"{path}.consumesCounters"))
    out.extend(_device_node_selection(device, path, per_device_node_selection))
    out.extend(validate_binding_parameters(device, path))
    return out


def _device_node_selection(device: Obj, path: str, per_device: bool) -> list[Cause]:
    node_name, selector, all_nodes = device.get("nodeName"), device.get("nodeSelector"), device.get("allNodes")
    if not per_device:
        if node_name is not None or selector is not None or all_nodes is not None:
            return [invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")]
        return []
    out: list[Cause] = []
    set_fields: list[str] = []
    if isinstance(node_name, str):
        if node_name:
            set_fields.append("`nodeName`")
            out.extend(_node_name(node_name, f"{path}.nodeName"))
        else:
            out.append(invalid(f"{path}.nodeName", "", "must not be empty"))
    if isinstance(selector, dict):
        set_fields.append("`nodeSelector`")
        out.extend(_node_selector(selector, f"{path}.nodeSelector"))
    if all_nodes is True:
        set_fields.append("`allNodes`")
    elif all_nodes is False:
        out.append(invalid(f"{path}.allNodes", False, "must be either unset or set to true"))
    if not set_fields:
        out.append(required(path, DEVICE_NODE_SELECTION_MSG))
    elif len(set_fields) > 1:
        out.append(invalid(path, "{" + ", ".join(set_fields) + "}", DEVICE_NODE_SELECTION_MSG))
    return out


# ------------------------------------------------------------------------------------------- claim status

def _device_id(driver: Any, pool: Any, device: Any, share_id: Any) -> str:
    """structured.SharedDeviceID's String(): ``<driver>/<pool>/<device>[/<shareID>]``."""
    text = f"{_str(driver)}/{_str(pool)}/{_str(device)}"
    return f"{text}/{share_id}" if isinstance(share_id, str) else text


def _allocated_devices(allocation: Any) -> set[str]:
    return {_device_id(r.get("driver"), r.get("pool"), r.get("device"), r.get("shareID"))
            for r in (_dict(x) for x in _list(_dict(_dict(allocation).get("devices")).get("results")))}


def _interface_address(value: Any, path: str) -> list[Cause]:
    """validation.IsValidInterfaceAddress: an address in CIDR form, canonical."""
    text = _str(value)
    ip_text, _, bits = text.partition("/")
    ip = parse_ip_sloppy(ip_text)
    limit = 32 if ip is not None and ip.version == 4 else 128
    if ip is None or not bits.isdigit() or not bits.isascii() or int(bits) > limit:
        return [invalid(path, text, "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)")]
    size = int(bits)
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None and size > 32:
        shown = f"{mapped}/{size - 96}"
    else:
        shown = f"{mapped or ip}/{size}"
    return [] if text == shown else [invalid(path, text, f"must be in canonical form ({json.dumps(shown)})")]


def _network_data(data: Any, path: str) -> list[Cause]:
    """validateNetworkDeviceData: interfaceName at most 256 bytes, hardwareAddress 128, ips (at most 16,
    unique) interface addresses."""
    if not isinstance(data, dict):
        return []
    out: list[Cause] = []
    if len(_str(data.get("interfaceName")).encode()) > NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH:
        out.append(too_long(f"{path}.interfaceName", NETWORK_DEVICE_DATA_INTERFACE_NAME_MAX_LENGTH))
    if len(_str(data.get("hardwareAddress")).encode()) > NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH:
        out.append(too_long(f"{path}.hardwareAddress", NETWORK_DEVICE_DATA_HARDWARE_ADDRESS_MAX_LENGTH))
    out.extend(validate_set(data.get("ips"), NETWORK_DEVICE_DATA_MAX_IPS, _interface_address, _str,
                             f"{path}.ips"))
    return out


def _device_status(device: Any, path: str, allocated: set[str]) -> list[Cause]:
    """validateDeviceStatus: driver, pool, device names, shareID; an allocated device; at most 8 conditions
    (ValidateConditions); data a JSON object of at most 10 KiB; networkData."""
    device = _dict(device)
    out = validate_csi_driver_name(device.get("driver"), f"{path}.driver")
    out.extend(validate_pool_name(device.get("pool"), f"{path}.pool"))
    out.extend(_dns_label(device.get("device"), f"{path}.device"))
    if device.get("shareID") is not None:
        out.extend(validate_uid(device.get("shareID"), f"{path}.shareID"))
    ident = _device_id(device.get("driver"), device.get("pool"), device.get("device"), device.get("shareID"))
    if ident not in allocated:
        out.append(_raw(path, ident, "must be an allocated device in the claim"))
    conditions = _list(device.get("conditions"))
    if len(conditions) > ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS:
        out.append(too_many(f"{path}.conditions", len(conditions), ALLOCATED_DEVICE_STATUS_MAX_CONDITIONS))
    out.extend(validate_conditions(conditions, f"{path}.conditions"))
    if device.get("data") is not None:
        out.extend(validate_raw_extension(device["data"], True, f"{path}.data",
                                          ALLOCATED_DEVICE_STATUS_DATA_MAX_LENGTH))
    out.extend(_network_data(device.get("networkData"), f"{path}.networkData"))
    return out


def _consumer_reference(ref: Any, path: str) -> list[Cause]:
    """validateResourceClaimUserReference: resource, name and uid required."""
    ref = _dict(ref)
    return [required(f"{path}.{key}") for key in ("resource", "name", "uid") if not _str(ref.get(key))]


def _allocation_result(result: Any, path: str, names: RequestNames) -> list[Cause]:
    """validateDeviceRequestAllocationResult: request reference, driver, pool, device, binding conditions,
    tolerations, shareID."""
    result = _dict(result)
    out = validate_request_name_ref(result.get("request"), f"{path}.request", names)
    out.extend(validate_csi_driver_name(result.get("driver"), f"{path}.driver"))
    out.extend(validate_pool_name(result.get("pool"), f"{path}.pool"))
    out.extend(_dns_label(result.get("device"), f"{path}.device"))
    out.extend(validate_binding_parameters(result, path))
    out.extend(validate_tolerations(result.get("tolerations"), f"{path}.tolerations"))
    if result.get("shareID") is not None:
        out.extend(validate_uid(result.get("shareID"), f"{path}.shareID"))
    return out


def _allocation_config(config: Any, path: str, names: RequestNames) -> list[Cause]:
    """validateDeviceAllocationConfiguration: source required, FromClaim/FromClass; requests; the config."""
    config = _dict(config)
    source = _str(config.get("source"))
    out: list[Cause] = []
    if not source:
        out.append(required(f"{path}.source"))
    elif source not in CONFIG_SOURCES:
        out.append(not_supported(f"{path}.source", source, CONFIG_SOURCES))
    out.extend(_request_refs(config.get("requests"), f"{path}.requests", names))
    out.extend(validate_device_configuration(config, path))
    return out


def validate_allocation_result(allocation: Any, path: str, names: RequestNames) -> list[Cause]:
    """validateAllocationResult of a new allocation: devices.results (at most 32), devices.config (at most
    64), a nodeSelector."""
    allocation = _dict(allocation)
    devices = _dict(allocation.get("devices"))
    out = validate_slice(devices.get("results"), ALLOCATION_RESULTS_MAX_SIZE,
                          lambda r, p: _allocation_result(r, p, names), f"{path}.devices.results")
    out.extend(validate_slice(devices.get("config"), 2 * DEVICE_CONFIG_MAX_SIZE,
                               lambda c, p: _allocation_config(c, p, names), f"{path}.devices.config"))
    if allocation.get("nodeSelector") is not None:
        out.extend(_node_selector(allocation["nodeSelector"], f"{path}.nodeSelector"))
    return out


def _reference_key(ref: Any) -> tuple[str, ...]:
    ref = _dict(ref)
    return tuple(_str(ref.get(k)) for k in ("apiGroup", "resource", "name", "uid"))


def validate_claim_status_update(new: Obj, old: Obj) -> list[Cause]:
    """validateResourceClaimStatusUpdate (ValidateResourceClaimStatusUpdate without the metadata): reservedFor
    (at most 256, resource/name/uid required, unique uids), devices (unique, each an allocated device),
    reservedFor only with an allocation and none added while the claim is being deleted, an existing
    allocation immutable (shown as compact JSON; kube prints the Go struct), a new one validated."""
    from kapi import jsonutil  # noqa: PLC0415
    from kapi.kinds.fields import immutable_shown  # noqa: PLC0415
    status, old_status = _dict(new.get("status")), _dict(old.get("status"))
    names = gather_request_names(new.get("spec"))
    reserved = _list(status.get("reservedFor"))
    out = validate_set(reserved, RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE, _consumer_reference,
                        lambda r: _str(_dict(r).get("uid")), "status.reservedFor")
    allocation = status.get("allocation")
    allocated = _allocated_devices(allocation) if allocation is not None else set()
    devices = _list(status.get("devices"))
    out.extend(validate_slice(devices, -1, lambda d, p: _device_status(d, p, allocated), "status.devices"))
    seen: set[str] = set()
    for i, device in enumerate(_dict(d) for d in devices):
        ident = _device_id(device.get("driver"), device.get("pool"), device.get("device"), device.get("shareID"))
        if ident in seen:
            out.append(Cause("FieldValueDuplicate", f"Duplicate value: {ident}", f"status.devices[{i}]"))
        seen.add(ident)
    if reserved:
        if allocation is None:
            out.append(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif _dict(new.get("metadata")).get("deletionTimestamp"):
            before = {_reference_key(r) for r in _list(old_status.get("reservedFor"))}
            if any(_reference_key(r) not in before for r in reserved):
                out.append(forbidden("status.reservedFor", "new entries may not be added while "
                                                           "`deallocationRequested` or `deletionTimestamp` are set"))
    old_allocation = old_status.get("allocation")
    if old_allocation is not None and allocation is not None:
        if allocation != old_allocation:
            out.append(immutable_shown("status.allocation", jsonutil.dumps(allocation).decode()))
    elif allocation is not None:
        out.extend(validate_allocation_result(allocation, "status.allocation", names))
    return out
