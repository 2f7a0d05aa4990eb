"""Node validation as kube-apiserver 1.37 does it, cause for cause.

Source: kubernetes ``pkg/apis/core/validation/validation.go`` (kube 1.37):
``ValidateNode``, ``ValidateNodeUpdate``, ``ValidateNodeSpecificAnnotations``
(``ValidateTaintsInNodeAnnotations``, ``ValidateAvoidPodsInNodeAnnotations``,
``validatePreferAvoidPodsEntry``), ``validateNodeTaints``,
``validateTaintEffect``, ``ValidateNodeResources``,
``validateNodeSwapStatus``, ``validateNodeDeclaredFeatures``,
``validateNodeConfigSourceSpec`` / ``validateNodeConfigStatus`` and the
legacy CIDR rule (apimachinery ``IsValidCIDRForLegacyField`` with
StrictIPCIDRValidation on); the strategy parts come from
``pkg/registry/core/node/strategy.go`` (``dropDisabledFields``).

Objects are the v1 JSON dicts kapi stores. kube validates the internal type,
so two v1 -> internal conversions are reproduced: ``spec.podCIDR`` /
``spec.podCIDRs`` become one list (:func:`pod_cidrs`) and ``spec.externalID``
is ``DoNotUseExternalID``. ObjectMeta is validated elsewhere.

Paths are kube's, quirks included: ``ValidateNode`` roots the taints at
``metadata`` (``metadata.taints[0].effect``) and the swap status at
``metadata.nodeSwapStatus.capacity``; capacity entries are children, not keys
(``status.capacity.cpu``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from kapi import quantity
from kapi.errors import Cause
from kapi.kinds.fields import duplicate, go_quote, not_supported
from kapi.kinds.podspec import NEGATIVE, TAINT_EFFECTS
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import (
    is_config_map_key,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_cidr,
    is_valid_label_value,
    parse_ip_sloppy,
)
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list
from kapi.values import as_str as _str

__all__ = [
    "PREFER_AVOID_PODS_ANNOTATION",
    "TAINTS_ANNOTATION",
    "drop_disabled_node_fields",
    "drop_status_config",
    "pod_cidrs",
    "validate_node",
    "validate_node_specific_annotations",
    "validate_node_taints",
    "validate_node_update",
]

Obj = dict[str, Any]

TAINTS_ANNOTATION = "scheduler.alpha.kubernetes.io/taints"  # core.TaintsAnnotationKey
PREFER_AVOID_PODS_ANNOTATION = "scheduler.alpha.kubernetes.io/preferAvoidPods"  # core.PreferAvoidPodsAnnotationKey
TAINTS_UNIQUE = "taints must be unique by key and effect pair"
NOT_POSITIVE = "must be greater than zero"  # isNotPositiveErrorMsg
PODCIDR_CHANGE = 'node updates may not change podCIDR except from "" to valid'
PROVIDERID_CHANGE = 'node updates may not change providerID except from "" to valid'
ONE_CIDR_PER_FAMILY = "may specify no more than one CIDR for each IP family"
ONE_REFERENCE = "exactly one reference subfield must be non-nil"
DNS1123_SUBDOMAIN_MAX = 253
# nodeDeclaredFeatureRegexp: an UpperCamelCase first segment, then '/'-separated camel-case segments
_DECLARED_FEATURE = re.compile(r"[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*")
DECLARED_FEATURE_FORMAT = ("must start with an UpperCamelCase segment, with subsequent segments separated by '/' "
                           "(e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters "
                           "and slashes")


def _each(path: str, value: Any, messages: list[str]) -> list[Cause]:
    return [invalid(path, value, msg) for msg in messages]


def _internal(path: str, detail: str) -> Cause:
    """field.InternalError: ``Internal error: <detail>``."""
    return Cause("InternalError", f"Internal error: {detail}", path)


# ------------------------------------------------------------ v1 -> internal

def pod_cidrs(spec: Any) -> list[Any]:
    """The internal ``NodeSpec.PodCIDRs`` of a v1 spec (Convert_v1_NodeSpec_To_core_NodeSpec): ``podCIDRs`` when
    ``podCIDR`` is empty or is its first entry, else ``[podCIDR]`` (a mismatched ``podCIDR`` wins)."""
    spec = _dict(spec)
    single, many = _str(spec.get("podCIDR")), _list(spec.get("podCIDRs"))
    if not single:
        return list(many)
    if many and many[0] == single:
        return list(many)
    return [single]


def drop_disabled_node_fields(node: Obj, old: Obj | None = None) -> None:
    """nodeStrategy.PrepareForCreate/PrepareForUpdate's ``dropDisabledFields``, in place: on create
    ``spec.configSource`` and ``status.config`` go; on update ``spec.configSource`` goes unless the stored Node has
    one. (The /status strategy's PrepareForUpdate drops ``status.config`` unless the stored Node has one: pass the
    stored Node as ``old`` and call :func:`drop_status_config` for /status.)"""
    spec, status = node.get("spec"), node.get("status")
    if old is None:
        if isinstance(spec, dict):
            spec.pop("configSource", None)
        if isinstance(status, dict):
            status.pop("config", None)
    elif _dict(old.get("spec")).get("configSource") is None and isinstance(spec, dict):
        spec.pop("configSource", None)


def drop_status_config(node: Obj, old: Obj) -> None:
    """nodeStatusStrategy.PrepareForUpdate's ``status.config`` reset: dropped unless the stored Node has one."""
    status = node.get("status")
    if _dict(old.get("status")).get("config") is None and isinstance(status, dict):
        status.pop("config", None)


# ------------------------------------------------------------ Go renderings (%#v)

def _go_taint(taint: Obj) -> str:
    """A core.Taint as ``%#v`` prints it. ``timeAdded`` is a pointer whose address Go prints; kapi prints a fixed
    one (``(*v1.Time)(0xc000000000)``) since the real address means nothing to a client."""
    added = "(*v1.Time)(nil)" if taint.get("timeAdded") is None else "(*v1.Time)(0xc000000000)"
    return (f"core.Taint{{Key:{go_quote(_str(taint.get('key')))}, Value:{go_quote(_str(taint.get('value')))}, "
            f"Effect:{go_quote(_str(taint.get('effect')))}, TimeAdded:{added}}}")


def _go_address(address: Obj) -> str:
    """A core.NodeAddress as ``%#v`` prints it."""
    return (f"core.NodeAddress{{Type:{go_quote(_str(address.get('type')))}, "
            f"Address:{go_quote(_str(address.get('address')))}}}")


# ------------------------------------------------------------ taints

def validate_node_taints(taints: Any, path: str) -> list[Cause]:
    """validateNodeTaints: each ``key`` a qualified name (ValidateLabelName), ``value`` a label value (the messages
    joined by ``;``), ``effect`` Required or one of NoSchedule/PreferNoSchedule/NoExecute (validateTaintEffect,
    empty not allowed); a second taint with the same key and effect is ``Duplicate value: core.Taint{...}: taints
    must be unique by key and effect pair`` (and is not remembered). ``taints`` is the v1 list; causes under
    ``path[i]``."""
    out: list[Cause] = []
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(_list(taints)):
        taint = _dict(taint)
        tpath = f"{path}[{i}]"
        key, value, effect = _str(taint.get("key")), _str(taint.get("value")), _str(taint.get("effect"))
        out.extend(_each(f"{tpath}.key", key, is_qualified_name(key)))
        msgs = is_valid_label_value(value)
        if msgs:
            out.append(invalid(f"{tpath}.value", value, ";".join(msgs)))
        if not effect:
            out.append(required(f"{tpath}.effect"))
        elif effect not in TAINT_EFFECTS:
            out.append(not_supported(f"{tpath}.effect", effect, TAINT_EFFECTS))
        if (effect, key) in seen:
            out.append(Cause("FieldValueDuplicate", f"Duplicate value: {_go_taint(taint)}: {TAINTS_UNIQUE}", tpath))
            continue
        seen.add((effect, key))
    return out


# ------------------------------------------------------------ the annotations (Go's encoding/json, approximately)

class _GoJSONError(Exception):
    """A decode error with Go's ``encoding/json`` message."""


_JSON_KINDS = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


def _kind(value: Any) -> str:
    return _JSON_KINDS.get(type(value), "number")


def _go_char(ch: str) -> str:
    """encoding/json quoteChar."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + go_quote(ch)[1:-1] + "'"


def _innermost_open(text: str, pos: int) -> str:
    """The innermost unclosed ``[`` or ``{`` before ``pos`` (outside strings); "" at top level."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            stack.append(ch)
        elif ch in "]}" and stack:
            stack.pop()
    return stack[-1] if stack else ""


def _go_loads(text: str) -> Any:
    """json.loads with Go's syntax error messages (the common cases: ``unexpected end of JSON input``, ``invalid
    character 'x' <context>``); Go's exact context for every malformed input is not reproduced."""
    def no_constants(name: str) -> Any:
        raise _GoJSONError(f"invalid character {_go_char(name[0])} looking for beginning of value")

    try:
        return json.loads(text, parse_constant=no_constants)
    except json.JSONDecodeError as err:
        pos = err.pos
        if pos >= len(text.rstrip()):
            raise _GoJSONError("unexpected end of JSON input") from None
        ch = text[pos]
        what = err.msg
        if what.startswith("Invalid control character"):
            context = "in string literal"
        elif what.startswith("Expecting property name"):
            context = "looking for beginning of object key string"
        elif what.startswith("Expecting ':'"):
            context = "after object key"
        elif what.startswith("Expecting ','"):
            context = "after array element" if _innermost_open(text, pos) == "[" else "after object key:value pair"
        elif what.startswith("Extra data"):
            context = "after top-level value"
        else:
            context = "looking for beginning of value"
        raise _GoJSONError(f"invalid character {_go_char(ch)} {context}") from None


def _fold_get(obj: Obj, name: str) -> tuple[bool, Any]:
    """Go's field matching for a struct without json tags: any case-insensitive match of the Go name; the last such
    key wins, as the decoder overwrites the field."""
    found, value = False, None
    for key, val in obj.items():
        if key.lower() == name.lower():
            found, value = True, val
    return found, value


_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


def _decode_taints(text: str) -> list[Obj]:
    """helper.GetTaintsFromNodeAnnotations: the annotation as []core.Taint (fields matched case-insensitively);
    raises :class:`_GoJSONError` with Go's message (the first type error, or a timeAdded parse error)."""
    data = _go_loads(text)
    if data is None:
        return []
    if not isinstance(data, list):
        raise _GoJSONError(f"json: cannot unmarshal {_kind(data)} into Go value of type []core.Taint")
    first: str | None = None
    taints: list[Obj] = []
    for item in data:
        taint: Obj = {}
        if item is not None and not isinstance(item, dict):
            first = first or f"json: cannot unmarshal {_kind(item)} into Go value of type core.Taint"
        for field, go_type in (("Key", "string"), ("Value", "string"), ("Effect", "core.TaintEffect")):
            found, value = _fold_get(_dict(item), field)
            if not found or value is None:
                continue
            if isinstance(value, str):
                taint[field.lower()] = value
            else:
                first = first or (f"json: cannot unmarshal {_kind(value)} into Go struct field Taint.{field} of "
                                  f"type {go_type}")
        found, added = _fold_get(_dict(item), "TimeAdded")
        if found and added is not None:
            if not isinstance(added, str):
                raise _GoJSONError(f"json: cannot unmarshal {_kind(added)} into Go value of type string")
            if not _RFC3339.fullmatch(added):
                raise _GoJSONError(f'parsing time {go_quote(added)} as "2006-01-02T15:04:05Z07:00": cannot parse '
                                   f'{go_quote(added)} as "2006"')
            taint["timeAdded"] = added
        taints.append(taint)
    if first:
        raise _GoJSONError(first)
    return taints


def _avoid_pods(text: str, path: str) -> list[Cause]:
    """ValidateAvoidPodsInNodeAnnotations + validatePreferAvoidPodsEntry: the annotation decoded as core.AvoidPods
    (fields matched case-insensitively); an entry without ``podSignature.podController`` is Required at
    ``<path>.<key>[i].PodSignature``, one whose ``controller`` is false ``must point to a controller``. A decode
    error is ``<path>.AvoidPods: Invalid value: "<key>": <Go's error>``."""
    key = PREFER_AVOID_PODS_ANNOTATION
    try:
        data = _go_loads(text)
        if data is not None and not isinstance(data, dict):
            raise _GoJSONError(f"json: cannot unmarshal {_kind(data)} into Go value of type core.AvoidPods")
        _, entries = _fold_get(_dict(data), "PreferAvoidPods")
        if entries is not None and not isinstance(entries, list):
            raise _GoJSONError(f"json: cannot unmarshal {_kind(entries)} into Go struct field "
                               "AvoidPods.PreferAvoidPods of type []core.PreferAvoidPodsEntry")
    except _GoJSONError as err:
        return [invalid(f"{path}.AvoidPods", key, str(err))]
    out: list[Cause] = []
    for i, entry in enumerate(_list(entries)):
        epath = f"{path}.{key}[{i}]"
        _, signature = _fold_get(_dict(entry), "PodSignature")
        _, controller = _fold_get(_dict(signature), "PodController")
        if not isinstance(controller, dict):
            out.append(required(f"{epath}.PodSignature"))
        elif controller.get("controller") is False:
            # kube dereferences ``controller`` unchecked: an unset one panics (a 500), not reproduced here
            out.append(invalid(f"{epath}.PodSignature.PodController.Controller", False, "must point to a controller"))
    return out


def validate_node_specific_annotations(annotations: Any, path: str = "metadata.annotations") -> list[Cause]:
    """ValidateNodeSpecificAnnotations: a non-empty ``scheduler.alpha.kubernetes.io/taints`` annotation must decode
    as a taint list (else ``<path>: Invalid value: "<key>": <Go's json error>``) whose taints pass
    :func:`validate_node_taints` under ``<path>.<key>[i]``; then a non-empty
    ``scheduler.alpha.kubernetes.io/preferAvoidPods`` one (ValidateAvoidPodsInNodeAnnotations)."""
    annotations = _dict(annotations)
    out: list[Cause] = []
    text = annotations.get(TAINTS_ANNOTATION)
    if isinstance(text, str) and text:
        try:
            taints = _decode_taints(text)
        except _GoJSONError as err:
            out.append(invalid(path, TAINTS_ANNOTATION, str(err)))
        else:
            out.extend(validate_node_taints(taints, f"{path}.{TAINTS_ANNOTATION}"))
    text = annotations.get(PREFER_AVOID_PODS_ANNOTATION)
    if isinstance(text, str) and text:
        out.extend(_avoid_pods(text, path))
    return out


# ------------------------------------------------------------ status

def _node_resources(node: Obj) -> list[Cause]:
    """ValidateNodeResources: ValidateResourceQuantityValue of each ``status.capacity`` and ``status.allocatable``
    quantity (``status.capacity.<name>: Invalid value: "-1": must be greater than or equal to 0``). kube ranges
    over Go maps (no fixed order); kapi keeps the object's order."""
    from kapi.kinds.podspec import quantity_shown  # podspec's Quantity String() rendering

    status = _dict(node.get("status"))
    out: list[Cause] = []
    for which in ("capacity", "allocatable"):
        for name, raw in _dict(status.get(which)).items():
            try:
                value = quantity.parse(raw)
            except (ValueError, ZeroDivisionError):
                continue  # the schema's
            if value < 0:
                out.append(invalid(f"status.{which}.{name}", quantity_shown(raw, value), NEGATIVE))
            # ValidateResourceQuantityValue's "must be an integer" for integer resources prints the Quantity with
            # %#v (its internal struct): not reproduced, see the module's report
    return out


def _swap_status(node: Obj) -> list[Cause]:
    """validateNodeSwapStatus: ``status.nodeInfo.swap.capacity``, when set, must be positive (ValidatePositiveField),
    reported at ``metadata.nodeSwapStatus.capacity`` as kube roots it."""
    capacity = _int(_dict(_dict(_dict(node.get("status")).get("nodeInfo")).get("swap")).get("capacity"))
    if capacity is not None and capacity <= 0:
        return [invalid("metadata.nodeSwapStatus.capacity", capacity, NOT_POSITIVE)]
    return []


def _declared_features(node: Obj) -> list[Cause]:
    """validateNodeDeclaredFeatures (NodeDeclaredFeatures, GA in 1.37): each ``status.declaredFeatures[i]`` at most
    253 characters and of nodeDeclaredFeatureRegexp's form; the list sorted, without duplicates (reported on the
    later entry)."""
    features = [f if isinstance(f, str) else "" for f in _list(_dict(node.get("status")).get("declaredFeatures"))]
    path = "status.declaredFeatures"
    out: list[Cause] = []
    for i, feature in enumerate(features):
        if len(feature) > DNS1123_SUBDOMAIN_MAX:
            out.append(invalid(f"{path}[{i}]", feature, f"invalid feature name {go_quote(feature)}: must be no more "
                                                        f"than {DNS1123_SUBDOMAIN_MAX} characters"))
        elif not _DECLARED_FEATURE.fullmatch(feature):
            out.append(invalid(f"{path}[{i}]", feature,
                               f"invalid feature name {go_quote(feature)}: {DECLARED_FEATURE_FORMAT}"))
        if i + 1 < len(features):
            following = features[i + 1]
            if feature == following:
                out.append(duplicate(f"{path}[{i + 1}]", following))
            elif feature.encode() > following.encode():
                out.append(invalid(f"{path}[{i + 1}]", following, "list must be sorted alphabetically"))
    return out


# ------------------------------------------------------------ spec.podCIDRs

def _legacy_cidr(value: str) -> list[str]:
    """IsValidCIDRForLegacyField with strict validation (StrictIPCIDRValidation, on): parseCIDR's one message, no
    canonical-form rule."""
    return [m for m in is_valid_cidr(value) if not m.startswith("must be in canonical form")][:1]


def _sloppy_family(value: str) -> int | None:
    """netutils.ParseCIDRSloppy's IP family (4 or 6; an IPv4-mapped address counts as 4); None when it refuses."""
    ip, sep, bits = value.partition("/")
    addr = parse_ip_sloppy(ip)
    if not sep or addr is None or not bits.isascii() or not bits.isdigit() or int(bits) > addr.max_prefixlen:
        return None
    if addr.version == 6 and getattr(addr, "ipv4_mapped", None) is not None:
        return 4
    return addr.version


def _pod_cidrs(node: Obj) -> list[Cause]:
    """ValidateNode's PodCIDRs rules: each a valid CIDR (legacy rule, ``spec.podCIDRs[i]``); more than one must be
    one IPv4 and one IPv6 (``spec.podCIDRs: Invalid value: []string{...}: may specify no more than one CIDR for
    each IP family``, after an InternalError when one does not parse at all)."""
    cidrs = pod_cidrs(node.get("spec"))
    path = "spec.podCIDRs"
    out: list[Cause] = []
    texts = [c if isinstance(c, str) else "" for c in cidrs]
    for i, cidr in enumerate(texts):
        out.extend(_each(f"{path}[{i}]", cidr, _legacy_cidr(cidr)))
    if len(texts) > 1:
        families = [_sloppy_family(c) for c in texts]
        bad = next((i for i, f in enumerate(families) if f is None), None)
        if bad is not None:
            out.append(_internal(path, "invalid PodCIDRs. failed to check with dual stack with error:invalid "
                                       f"CIDR[{bad}]: <nil> (invalid CIDR address: {texts[bad]})"))
            dual = False
        else:
            dual = 4 in families and 6 in families
        if not dual or len(texts) > 2:
            out.append(invalid(path, texts, ONE_CIDR_PER_FAMILY))
    return out


# ------------------------------------------------------------ ValidateNode

def validate_node(node: Obj) -> list[Cause]:
    """ValidateNode of a v1 Node (ObjectMeta aside), in kube's order: the node annotations
    (:func:`validate_node_specific_annotations`), ``spec.taints`` (at ``metadata.taints[i]``), the status
    quantities, ``status.nodeInfo.swap`` (at ``metadata.nodeSwapStatus``), ``status.declaredFeatures``, then the pod
    CIDRs. Used on create and, ahead of :func:`validate_node_update`, on a main-resource update. [] when valid."""
    out = validate_node_specific_annotations(_dict(node.get("metadata")).get("annotations"))
    taints = _list(_dict(node.get("spec")).get("taints"))
    if taints:
        out.extend(validate_node_taints(taints, "metadata.taints"))
    out.extend(_node_resources(node))
    out.extend(_swap_status(node))
    out.extend(_declared_features(node))
    out.extend(_pod_cidrs(node))
    return out


# ------------------------------------------------------------ config source (deprecated, kept by kube)

def _config_map_source(source: Obj, path: str, *, status: bool) -> list[Cause]:
    """validateConfigMapNodeConfigSourceSpec / ...Status, then validateConfigMapNodeConfigSource."""

    out: list[Cause] = []
    uid, version = _str(source.get("uid")), _str(source.get("resourceVersion"))
    if status:
        if not uid:
            out.append(required(f"{path}.uid"))
        if not version:
            out.append(required(f"{path}.resourceVersion"))
    else:
        if uid:
            out.append(forbidden(f"{path}.uid", "uid must not be set in spec"))
        if version:
            out.append(forbidden(f"{path}.resourceVersion", "resourceVersion must not be set in spec"))
    namespace, name, key = (_str(source.get(f)) for f in ("namespace", "name", "kubeletConfigKey"))
    if not namespace:
        out.append(required(f"{path}.namespace"))
    else:
        out.extend(_each(f"{path}.namespace", namespace, is_dns1123_label(namespace)))
    if not name:
        out.append(required(f"{path}.name"))
    else:
        out.extend(_each(f"{path}.name", name, is_dns1123_subdomain(name)))
    if not key:
        out.append(required(f"{path}.kubeletConfigKey"))
    else:
        out.extend(_each(f"{path}.kubeletConfigKey", key, is_config_map_key(key)))
    return out


def _config_source(source: Any, path: str, *, status: bool) -> list[Cause]:
    """validateNodeConfigSourceSpec / validateNodeConfigSourceStatus: exactly one reference (``configMap``)."""
    config_map = _dict(source).get("configMap")
    if not isinstance(config_map, dict):
        shown = "core.NodeConfigSource{ConfigMap:(*core.ConfigMapNodeConfigSource)(nil)}"
        return [Cause("FieldValueInvalid", f"Invalid value: {shown}: {ONE_REFERENCE}", path)]
    return _config_map_source(config_map, f"{path}.configMap", status=status)


# ------------------------------------------------------------ ValidateNodeUpdate

def validate_node_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidateNodeUpdate (ObjectMeta aside), in kube's order: the node annotations, the status quantities,
    ``status.declaredFeatures``, duplicate ``status.addresses`` (``Duplicate value: core.NodeAddress{...}``), pod
    CIDRs that change once set (``spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to
    valid``, once per changed entry, or once when the count changes), a set ``spec.providerID`` that changes,
    ``spec.configSource`` and ``status.config`` when present, ``spec.taints`` again (``metadata.taints[i]``) and a
    changed ``spec.externalID`` (``Forbidden: may not be updated``).

    kube's main-resource update runs :func:`validate_node` first and then this (so taint causes appear twice); the
    /status update runs only this. Note kube's PrepareForUpdate copies the stored ``status`` into a main-resource
    update and the stored ``spec`` into a /status one before validating.
    """
    out = validate_node_specific_annotations(_dict(new.get("metadata")).get("annotations"))
    out.extend(_node_resources(new))
    out.extend(_declared_features(new))
    seen: set[tuple[str, str]] = set()
    for i, address in enumerate(_list(_dict(new.get("status")).get("addresses"))):
        address = _dict(address)
        pair = (_str(address.get("type")), _str(address.get("address")))
        if pair in seen:
            out.append(Cause("FieldValueDuplicate", f"Duplicate value: {_go_address(address)}",
                             f"status.addresses[{i}]"))
        seen.add(pair)
    new_spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    old_cidrs, new_cidrs = pod_cidrs(old_spec), pod_cidrs(new_spec)
    if old_cidrs:
        if len(old_cidrs) != len(new_cidrs):
            out.append(forbidden("spec.podCIDRs", PODCIDR_CHANGE))
        else:
            out.extend(forbidden("spec.podCIDRs", PODCIDR_CHANGE)
                       for a, b in zip(old_cidrs, new_cidrs, strict=True) if a != b)
    old_provider = _str(old_spec.get("providerID"))
    if old_provider and old_provider != _str(new_spec.get("providerID")):
        out.append(forbidden("spec.providerID", PROVIDERID_CHANGE))
    if new_spec.get("configSource") is not None:
        out.extend(_config_source(new_spec.get("configSource"), "spec.configSource", status=False))
    config = _dict(new.get("status")).get("config")
    if config is not None:
        config = _dict(config)
        for which in ("assigned", "active", "lastKnownGood"):
            if config.get(which) is not None:
                out.extend(_config_source(config.get(which), f"status.config.{which}", status=True))
    taints = _list(new_spec.get("taints"))
    if taints:
        out.extend(validate_node_taints(taints, "metadata.taints"))
    if _str(new_spec.get("externalID")) != _str(old_spec.get("externalID")):
        out.append(forbidden("spec.externalID", "may not be updated"))
    return out
