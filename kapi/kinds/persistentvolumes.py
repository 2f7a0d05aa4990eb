"""PersistentVolumeClaim and PersistentVolume validation, message for message (kube 1.37).

From ``pkg/apis/core/validation/validation.go``: ``ValidatePersistentVolumeClaim`` (its spec through
:func:`kapi.kinds.podvolumes.validate_claim_spec`, kube's ``ValidatePersistentVolumeClaimSpec``, with the
``ValidationOptionsForPersistentVolumeClaim`` an update derives from the stored claim),
``ValidatePersistentVolumeClaimUpdate``, ``ValidatePersistentVolumeClaimStatusUpdate``,
``ValidatePersistentVolume`` / ``ValidatePersistentVolumeSpec`` (with ``ValidationOptionsForPersistentVolume``,
``validateVolumeNodeAffinity`` and the ``validate<X>PersistentVolumeSource`` functions, reusing the pod volume
source checks of :mod:`kapi.kinds.podvolumes` where kube reuses them), ``ValidatePersistentVolumeUpdate``
(with ``validatePvNodeAffinity``) and ``ValidatePersistentVolumeStatusUpdate``; plus
``pkg/volume/validation/pv_validation.go`` ``ValidatePersistentVolume`` (``checkMountOption``), which the PV
registry strategy appends after ``ValidatePersistentVolume``.

ObjectMeta (``ValidateObjectMeta`` / ``ValidateObjectMetaUpdate``) is validated elsewhere and not here. The
feature gates are kube 1.37's defaults: VolumeAttributesClass and RecoverVolumeExpansionFailure are GA (on).

Values are the v1 JSON objects after defaulting; absent keys are Go zero values, and a value of the wrong JSON
type is skipped (the schema layer reports it). kube's spec-immutability messages end in a Go ``cmp.Diff`` of
the internal structs: only the message's first line is given here (as for a Pod's spec update).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from kapi import quantity
from kapi.errors import Cause
from kapi.kinds import podvolumes as pv
from kapi.kinds.fields import go_quote, immutable, not_supported, validate_label_selector
from kapi.kinds.podaffinity import validate_node_selector
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list
from kapi.values import as_str as _str

Obj = dict[str, Any]

NOT_POSITIVE = "must be greater than zero"  # isNotPositiveErrorMsg
BAD_QUANTITY = "must be a valid resource quantity"  # validateBasicResource
MUST_BE_VALID_FORMAT = "must be valid format"
ISCSI_PORTAL_TOO_LONG = ("Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
                         "iscsi.initiatorName is specified.")
CLAIM_SPEC_IMMUTABLE = ("spec is immutable after creation except resources.requests and volumeAttributesClassName "
                        "for bound claims")
SOURCE_IMMUTABLE = "spec.persistentvolumesource is immutable after creation"
NODE_AFFINITY_IMMUTABLE = "field is immutable, except for updating from beta label to GA"
RECLAIM_POLICIES = ("Delete", "Recycle", "Retain")  # sets.List(supportedReclaimPolicy)
# sets.List(resizeStatusSet), sorted
RESIZE_STATUSES = ("ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress",
                   "NodeResizeInfeasible", "NodeResizePending")
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"  # core.BetaStorageClassAnnotation
MOUNT_OPTIONS_ANNOTATION = "volume.beta.kubernetes.io/mount-options"  # core.MountOptionAnnotation
# checkMountOption: the sources that accept the mount-options annotation
_MOUNT_OPTION_SOURCES = ("gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "nfs", "rbd", "quobyte", "iscsi",
                         "cinder", "cephfs", "azureFile", "vsphereVolume", "azureDisk", "photonPersistentDisk")
# validation.go betaToGALabel: a PV's node affinity may move a requirement's key from the beta label to GA
BETA_TO_GA = {
    "failure-domain.beta.kubernetes.io/zone": "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
    "beta.kubernetes.io/os": "kubernetes.io/os",
    "beta.kubernetes.io/arch": "kubernetes.io/arch",
    "beta.kubernetes.io/instance-type": "node.kubernetes.io/instance-type",
}
GO_POINTER = "0xc000000000"  # a set pointer inside %#v is a heap address; kapi shows this stand-in
_INT64_MAX = 2**63 - 1


# ------------------------------------------------------------ small helpers

def _amount(raw: Any) -> Fraction:
    """The amount of a quantity value for comparisons (``Quantity.Cmp``); absent or unparsable: zero."""
    parsed = quantity.parsed(raw)
    return parsed[0] if parsed is not None else Fraction(0)


def _go_value(amount: Fraction) -> int:
    """``Quantity.Value()``: the amount as an int64, rounded away from zero."""
    whole = -(-abs(amount.numerator) // amount.denominator)
    return max(-_INT64_MAX - 1, min(_INT64_MAX, whole if amount >= 0 else -whole))


def _basic_resource(raw: Any, path: str) -> list[Cause]:
    """validateBasicResource: ``Invalid value: <Value()>: must be a valid resource quantity`` when negative."""
    parsed = quantity.parsed(raw)
    if parsed is not None and _go_value(parsed[0]) < 0:
        return [invalid(path, _go_value(parsed[0]), BAD_QUANTITY)]
    return []


def _positive(raw: Any, path: str) -> list[Cause]:
    """ValidatePositiveQuantityValue: ``Invalid value: "<String()>": must be greater than zero``."""
    parsed = quantity.parsed(raw)
    if parsed is not None and parsed[0] <= 0:
        return [invalid(path, parsed[1], NOT_POSITIVE)]
    return []


def _name_errors(value: str, path: str, checker: Any) -> list[Cause]:
    return [invalid(path, value, msg) for msg in checker(value)]


# ------------------------------------------------------------ Go renderings (%#v) for messages

def _go_quantity(raw: Any) -> str:
    """A decoded ``resource.Quantity`` as ``%#v`` prints it (ParseQuantity's int64Amount fast path and its
    cached text; the inf.Dec slow path shows kapi's pointer stand-in)."""
    if raw is None:  # JSON null: the zero Quantity
        return _go_quantity_struct(0, 0, "", "", False)
    text = (raw if isinstance(raw, str) else str(raw)).strip()
    if text == "0":
        return _go_quantity_struct(0, 0, "0", "DecimalSI", False)
    m = re.fullmatch(r"([+-]?)(\d*)(?:\.(\d*))?(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?", text)
    if not m or not (m.group(2) or m.group(3)):
        return _go_quantity_struct(0, 0, "", "", False)
    negative, whole, frac, suffix = m.group(1) == "-", m.group(2), m.group(3) or "", m.group(4) or ""
    num = whole.lstrip("0") or "0"
    binary = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
    decimal = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
    if suffix in binary:
        fmt, exponent = "BinarySI", binary[suffix]
        precision = 15 - len(num) - exponent * 3 // 10 - 1 if not frac else -1
        scale, mantissa = 0, 1 << exponent
    else:
        fmt, exponent = ("DecimalSI", decimal[suffix]) if suffix in decimal else ("DecimalExponent", int(suffix[1:]))
        precision = 18 - len(num) - len(frac)
        scale, mantissa = exponent, 1
    if precision >= 0:
        scale -= len(frac)
        shifted = num + frac
        digits = int(shifted)
        if scale >= -9 and digits <= _INT64_MAX and digits * mantissa <= _INT64_MAX:
            result = -digits * mantissa if negative else digits * mantissa
            if fmt == "BinarySI":
                cached = text if exponent % 10 == 0 and digits & 7 else ""
            else:
                cached = text if scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0" else ""
            return _go_quantity_struct(result, scale, cached, fmt, False)
    return _go_quantity_struct(0, 0, "", fmt, True)


def _go_quantity_struct(value: int, scale: int, cached: str, fmt: str, dec: bool) -> str:
    pointer = f"(*inf.Dec)({GO_POINTER})" if dec else "(*inf.Dec)(nil)"
    return (f"resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, "
            f"d:resource.infDecAmount{{Dec:{pointer}}}, s:{go_quote(cached)}, Format:{go_quote(fmt)}}}")


def _go_resource_list(value: Any) -> str:
    """A ``core.ResourceList`` as ``%#v`` prints it: ``core.ResourceList(nil)`` when absent, keys sorted."""
    if not isinstance(value, dict):
        return "core.ResourceList(nil)"
    items = ", ".join(f"{go_quote(k)}:{_go_quantity(value[k])}" for k in sorted(value))
    return "core.ResourceList{" + items + "}"


def _shown_invalid(path: str, shown: str, detail: str) -> Cause:
    """field.Invalid whose value is already rendered as Go prints it."""
    return Cause("FieldValueInvalid", f"Invalid value: {shown}: {detail}", path)


# ------------------------------------------------------------ apiequality.Semantic.DeepEqual of JSON values

_PTR: tuple[bool, Any] = (True, {})  # a Go pointer field: nil (absent, null) differs from a pointer to a zero value
_QTY = "quantities"  # a ResourceList: values compared as amounts


def _canon(value: Any, rules: Any = None) -> Any:
    """``value`` normalized so that ``==`` is Semantic.DeepEqual of the Go values it decodes to: zero-valued
    non-pointer members dropped (an empty slice or map equals nil, "" / 0 / false equal absent), pointer members
    (``rules``: key -> (is_pointer, sub-rules)) kept when set, quantities compared by amount."""
    if rules == _QTY:
        return {k: _amount(v) for k, v in value.items()} if isinstance(value, dict) else value
    rules = rules if isinstance(rules, dict) else {}
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            pointer, sub = rules.get(key, (False, {}))
            if pointer:
                if item is not None:
                    out[key] = _canon(item, sub)
                continue
            canon = _canon(item, sub)
            if canon is not None and canon != "" and canon is not False and canon != 0 and canon != [] \
                    and canon != {}:
                out[key] = canon
        return out
    if isinstance(value, list):
        return [_canon(item, rules) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


_CLAIM_SPEC_RULES = {
    "selector": _PTR, "storageClassName": _PTR, "volumeMode": _PTR, "volumeAttributesClassName": _PTR,
    "dataSource": (True, {"apiGroup": _PTR}), "dataSourceRef": (True, {"apiGroup": _PTR, "namespace": _PTR}),
    "resources": (False, {"limits": (False, _QTY), "requests": (False, _QTY)}),
}
_SECRET_REF = {"secretRef": _PTR}
# PersistentVolumeSource's members (all pointers) with their own pointer members
_SOURCE_RULES: dict[str, Any] = {
    "gcePersistentDisk": {}, "awsElasticBlockStore": {}, "hostPath": {"type": _PTR},
    "glusterfs": {"endpointsNamespace": _PTR}, "nfs": {}, "rbd": _SECRET_REF,
    "iscsi": {"initiatorName": _PTR, **_SECRET_REF}, "cinder": _SECRET_REF, "cephfs": _SECRET_REF,
    "fc": {"lun": _PTR}, "flocker": {}, "flexVolume": _SECRET_REF, "azureFile": {"secretNamespace": _PTR},
    "vsphereVolume": {}, "quobyte": {},
    "azureDisk": {"cachingMode": _PTR, "fsType": _PTR, "readOnly": _PTR, "kind": _PTR},
    "photonPersistentDisk": {}, "portworxVolume": {}, "scaleIO": _SECRET_REF, "local": {"fsType": _PTR},
    "storageos": _SECRET_REF,
    "csi": {key: _PTR for key in ("controllerPublishSecretRef", "nodeStageSecretRef", "nodePublishSecretRef",
                                   "controllerExpandSecretRef", "nodeExpandSecretRef")},
}


# ------------------------------------------------------------ PersistentVolumeClaim

def _claim_spec_options(old: Obj | None) -> tuple[bool, bool]:
    """ValidationOptionsForPersistentVolumeClaim's update-only options from the stored claim:
    (AllowInvalidLabelValueInSelector, AllowInvalidAPIGroupInDataSourceOrRef)."""
    if old is None:
        return False, False
    spec = _dict(old.get("spec"))
    selector = spec.get("selector")
    bad_selector = isinstance(selector, dict) and bool(validate_label_selector(selector, "spec.selector"))
    api_group = any(isinstance(spec.get(k), dict) and spec[k].get("apiGroup") is not None
                    for k in ("dataSource", "dataSourceRef"))
    return bad_selector, api_group


def validate_persistent_volume_claim(obj: Obj, old: Obj | None = None) -> list[Cause]:
    """ValidatePersistentVolumeClaim without ObjectMeta: ``spec`` as ValidatePersistentVolumeClaimSpec
    (:func:`kapi.kinds.podvolumes.validate_claim_spec` at ``spec``).

    ``obj`` is the PVC JSON; ``old`` the stored claim on an update (None on create): its options, as
    ValidationOptionsForPersistentVolumeClaim derives them, are applied: an old selector that fails validation
    lets the new one keep invalid label values (AllowInvalidLabelValueInSelector), and an old ``dataSource`` or
    ``dataSourceRef`` with an ``apiGroup`` set skips the apiGroup's DNS-subdomain check
    (AllowInvalidAPIGroupInDataSourceOrRef). Returns the causes in kube's order ([] when valid)."""
    spec = _dict(obj.get("spec"))
    out = pv.validate_claim_spec(spec, "spec")
    allow_selector, allow_api_group = _claim_spec_options(old)
    if allow_selector and isinstance(spec.get("selector"), dict):
        strict = validate_label_selector(spec["selector"], "spec.selector")
        relaxed = set(validate_label_selector(spec["selector"], "spec.selector", allow_invalid_label_values=True))
        for cause in strict:
            if cause not in relaxed and cause in out:
                out.remove(cause)
    if allow_api_group:
        out = [c for c in out if not (c.type == "FieldValueInvalid"
                                      and c.field in ("spec.dataSource.apiGroup", "spec.dataSourceRef.apiGroup"))]
    return out


def _upgrade_from_annotation(old_ann: Obj, new_ann: Obj, old_class: Any, new_class: Any) -> bool:
    """validateStorageClassUpgradeFromAnnotation."""
    return (BETA_STORAGE_CLASS in old_ann and old_class is None and new_class is not None
            and new_class == old_ann[BETA_STORAGE_CLASS]
            and (BETA_STORAGE_CLASS not in new_ann or new_ann[BETA_STORAGE_CLASS] == old_ann[BETA_STORAGE_CLASS]))


def _upgrade_from_nil(old_ann: Obj, old_class: Any, new_class: Any) -> bool:
    """validateStorageClassUpgradeFromNil."""
    return (new_class is not None and old_class is None
            and (BETA_STORAGE_CLASS not in old_ann or new_class == old_ann[BETA_STORAGE_CLASS]))


def validate_persistent_volume_claim_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidatePersistentVolumeClaimUpdate's own rules (after its ObjectMetaUpdate and its repeat of
    ValidatePersistentVolumeClaim, which :func:`validate_persistent_volume_claim` with ``old`` gives), in order:

    - the ``volume.beta.kubernetes.io/storage-class`` annotation immutable (``metadata.annotations.<key>:
      Invalid value: "<new>": field is immutable``) unless the update moves it into ``spec.storageClassName``;
    - ``spec: Forbidden: spec is immutable after creation except resources.requests and
      volumeAttributesClassName for bound claims`` when the spec changed beyond what is allowed: ``volumeName``
      may be set once, ``storageClassName`` set from nil (to the old annotation's value, if any), and, when
      ``status.phase`` is Bound, ``resources.requests[storage]`` and ``volumeAttributesClassName``; kube
      appends ``\\n`` and a ``cmp.Diff`` of the old and new internal specs, not reproduced;
    - a storage request below the old one that is also at most the old ``status.capacity[storage]``:
      ``spec.resources.requests.storage: Forbidden: field can not be less than status.capacity``
      (RecoverVolumeExpansionFailure is GA: a request may shrink back, but not to the capacity or below);
    - ``volumeMode: Invalid value: <new>: field is immutable`` (path without ``spec.``, as kube's);
    - an old ``volumeAttributesClassName`` may not go back to unset (``update from non-nil value to nil is
      forbidden``) or become "" (``update from non-nil value to an empty string is forbidden``).

    ``new`` / ``old`` are the PVC JSON objects (``new`` after PrepareForUpdate: its status is the old one)."""
    new_spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    new_ann, old_ann = _dict(_dict(new.get("metadata")).get("annotations")), \
        _dict(_dict(old.get("metadata")).get("annotations"))
    new_clone, old_clone = _canon(new_spec, _CLAIM_SPEC_RULES), _canon(old_spec, _CLAIM_SPEC_RULES)
    out: list[Cause] = []
    if not _str(old_spec.get("volumeName")):  # volumeName may be set once
        old_clone.pop("volumeName", None)
        if "volumeName" in new_clone:
            old_clone["volumeName"] = new_clone["volumeName"]
    new_class, old_class = new_spec.get("storageClassName"), old_spec.get("storageClassName")
    if _upgrade_from_annotation(old_ann, new_ann, old_class, new_class):
        new_clone.pop("storageClassName", None)
    else:
        new_value, old_value = _str(new_ann.get(BETA_STORAGE_CLASS)), _str(old_ann.get(BETA_STORAGE_CLASS))
        if new_value != old_value:
            out.append(immutable(f"metadata.annotations.{BETA_STORAGE_CLASS}", new_value))
        if _upgrade_from_nil(old_ann, old_class, new_class):
            new_clone.pop("storageClassName", None)
    bound = _dict(new.get("status")).get("phase") == "Bound"
    new_requests = _dict(new_spec.get("resources")).get("requests")
    if bound and isinstance(new_requests, dict):  # a bound claim's storage request may change: take the old one
        requests = new_clone.setdefault("resources", {}).setdefault("requests", {})
        requests["storage"] = _amount(_dict(_dict(old_spec.get("resources")).get("requests")).get("storage"))
    if bound and "volumeAttributesClassName" in new_clone:  # and so may its volumeAttributesClassName
        new_clone.pop("volumeAttributesClassName")
        if "volumeAttributesClassName" in old_clone:
            new_clone["volumeAttributesClassName"] = old_clone["volumeAttributesClassName"]
    if new_clone != old_clone:
        out.append(forbidden("spec", CLAIM_SPEC_IMMUTABLE))
    new_size = _amount(_dict(_dict(new_spec.get("resources")).get("requests")).get("storage"))
    old_size = _amount(_dict(_dict(old_spec.get("resources")).get("requests")).get("storage"))
    status_size = _amount(_dict(_dict(old.get("status")).get("capacity")).get("storage"))
    if new_size < old_size and new_size <= status_size:
        out.append(forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
    new_mode, old_mode = new_spec.get("volumeMode"), old_spec.get("volumeMode")
    if new_mode != old_mode:
        out.append(immutable("volumeMode", new_mode))
    new_vac, old_vac = new_spec.get("volumeAttributesClassName"), old_spec.get("volumeAttributesClassName")
    if new_vac != old_vac and old_vac is not None:
        if new_vac is None:
            out.append(forbidden("spec.volumeAttributesClassName", "update from non-nil value to nil is forbidden"))
        elif new_vac == "":
            out.append(forbidden("spec.volumeAttributesClassName",
                                 "update from non-nil value to an empty string is forbidden"))
    return out


def _resource_key(key: str, path: str) -> list[Cause]:
    """validatePersistentVolumeClaimResourceKey: a qualified name; a native one (no ``/``, or under
    ``kubernetes.io/``) must be ``storage``."""
    out = [invalid(path, key, msg) for msg in is_qualified_name(key)]
    if out:
        return out
    if ("/" not in key or "kubernetes.io/" in key) and key != "storage":
        return [not_supported(path, key, ("storage",))]
    return []


def validate_persistent_volume_claim_status_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidatePersistentVolumeClaimStatusUpdate without its ObjectMetaUpdate, in kube's order:
    ``resourceVersion: Required value`` when the new object has none; ``Spec.accessModes: Required value`` (kube
    spells it so) when the claim has no access modes; each ``status.capacity[<r>]`` as validateBasicResource;
    then (RecoverVolumeExpansionFailure on) each ``status.allocatedResourceStatuses`` key as a claim resource
    key and its value a resize status (both reported at ``status.allocatedResourceStatus``, the unsupported
    value showing the key), and each ``status.allocatedResources`` key and quantity. Go visits the maps in
    random order; here in key order. ``new`` / ``old`` are the PVC JSON objects."""
    out: list[Cause] = []
    if not _str(_dict(new.get("metadata")).get("resourceVersion")):
        out.append(required("resourceVersion"))
    if not _list(_dict(new.get("spec")).get("accessModes")):
        out.append(required("Spec.accessModes"))
    status = _dict(new.get("status"))
    capacity = _dict(status.get("capacity"))
    for name in sorted(capacity):
        out.extend(_basic_resource(capacity[name], f"status.capacity[{name}]"))
    rpath = "status.allocatedResourceStatus"
    statuses = _dict(status.get("allocatedResourceStatuses"))
    for key in sorted(statuses):
        out.extend(_resource_key(key, rpath))
        value = statuses[key]
        if isinstance(value, str) and value not in RESIZE_STATUSES:
            out.append(not_supported(rpath, key, RESIZE_STATUSES))
    allocated = _dict(status.get("allocatedResources"))
    for key in sorted(allocated):
        errors = _resource_key(key, "status.allocatedResources")
        if errors:
            out.extend(errors)
            continue
        out.extend(_basic_resource(allocated[key], f"status.allocatedResources[{key}]"))
    return out


# ------------------------------------------------------------ PersistentVolume sources

def _src(value: Any) -> Obj | None:
    """A source's struct to check: the object, ``{}`` for null, None for another JSON type (not checked)."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else None


def _pv_secret_ref(ref: Obj, path: str) -> list[Cause]:
    """validatePVSecretReference: name Required else a DNS subdomain; namespace Required else a DNS label."""
    name, namespace = _str(ref.get("name")), _str(ref.get("namespace"))
    out = _name_errors(name, f"{path}.name", is_dns1123_subdomain) if name else [required(f"{path}.name")]
    if namespace:
        out.extend(_name_errors(namespace, f"{path}.namespace", is_dns1123_label))
    else:
        out.append(required(f"{path}.namespace"))
    return out


def _pv_glusterfs(src: Obj, path: str) -> list[Cause]:
    """validateGlusterfsPersistentVolumeSource: the pod checks, then a set endpointsNamespace a namespace name."""
    out = pv._glusterfs(src, path)
    namespace = src.get("endpointsNamespace")
    if isinstance(namespace, str):
        npath = f"{path}.endpointsNamespace"
        if not namespace:
            out.append(invalid(npath, namespace, "if the endpointnamespace is set, it must be a valid namespace name"))
        else:
            out.extend(_name_errors(namespace, npath, is_dns1123_label))
    return out


def _pv_iscsi(src: Obj, path: str, pv_name: str) -> list[Cause]:
    """validateISCSIPersistentVolumeSource: targetPortal Required; with an initiatorName,
    ``<pv name>:<targetPortal>`` at most 64 characters (at ``targetportal``); iqn Required and of a valid format
    (every bad form is ``must be valid format``); lun 0-255; secretRef Required with CHAP and its name Required;
    the initiatorName's format (``initiatorname``)."""
    portal, iqn = _str(src.get("targetPortal")), _str(src.get("iqn"))
    initiator = src.get("initiatorName")
    out = [] if portal else [required(f"{path}.targetPortal")]
    if isinstance(initiator, str) and len(f"{pv_name}:{portal}") > 64:
        out.append(invalid(f"{path}.targetportal", portal, ISCSI_PORTAL_TOO_LONG))
    if not iqn:
        out.append(required(f"{path}.iqn"))
    else:
        out.extend(pv._initiator_format(iqn, f"{path}.iqn", MUST_BE_VALID_FORMAT))
    lun = _int(src.get("lun"))
    if lun is not None and not 0 <= lun <= 255:
        out.append(invalid(f"{path}.lun", lun, pv.LUN_MSG))
    ref = src.get("secretRef")
    if (src.get("chapAuthDiscovery") is True or src.get("chapAuthSession") is True) and ref is None:
        out.append(required(f"{path}.secretRef"))
    if isinstance(ref, dict) and not _str(ref.get("name")):
        out.append(required(f"{path}.secretRef.name"))
    if isinstance(initiator, str):
        out.extend(pv._initiator_format(initiator, f"{path}.initiatorname", MUST_BE_VALID_FORMAT))
    return out


def _with_secret_namespace(pod_check: Any) -> Any:
    """validateCinderPersistentVolumeSource / validateStorageOSPersistentVolumeSource: the pod source's checks,
    then a ``secretRef``'s namespace Required (a PersistentVolume's secret reference names its namespace)."""
    def check(src: Obj, path: str) -> list[Cause]:
        out: list[Cause] = pod_check(src, path)
        ref = src.get("secretRef")
        if isinstance(ref, dict) and not _str(ref.get("namespace")):
            out.append(required(f"{path}.secretRef.namespace"))
        return out
    return check


def _pv_azure_file(src: Obj, path: str) -> list[Cause]:
    """validateAzureFilePV: the pod checks, then a set secretNamespace not empty."""
    out = pv._azure_file(src, path)
    if src.get("secretNamespace") == "":
        out.append(required(f"{path}.secretNamespace"))
    return out


def _pv_local(src: Obj, path: str) -> list[Cause]:
    """validateLocalVolumeSource: path Required (nothing else then), no ``..`` element."""
    target = _str(src.get("path"))
    return pv._no_backsteps(target, f"{path}.path") if target else [required(f"{path}.path")]


def _pv_csi(src: Obj, path: str) -> list[Cause]:
    """validateCSIPersistentVolumeSource: the driver name, volumeHandle Required, the controllerPublish,
    controllerExpand, nodePublish and nodeExpand secret references (nodeStageSecretRef is not checked)."""
    out = pv.validate_csi_driver_name(_str(src.get("driver")), f"{path}.driver")
    if not _str(src.get("volumeHandle")):
        out.append(required(f"{path}.volumeHandle"))
    for key in ("controllerPublishSecretRef", "controllerExpandSecretRef", "nodePublishSecretRef",
                "nodeExpandSecretRef"):
        ref = src.get(key)
        if isinstance(ref, dict):
            out.extend(_pv_secret_ref(ref, f"{path}.{key}"))
    return out


# ValidatePersistentVolumeSpec's order: (JSON key, path when refused as a second source, path of its checks,
# checker); flexVolume is never refused (kube counts it without the check)
_PV_SOURCES: tuple[tuple[str, str, str, Any], ...] = (
    ("hostPath", "hostPath", "hostPath", pv._host_path),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk", pv._gce_pd),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", pv._aws_ebs),
    ("glusterfs", "glusterfs", "glusterfs", _pv_glusterfs),
    ("flocker", "flocker", "flocker", pv._flocker),
    ("nfs", "nfs", "nfs", pv._nfs),
    ("rbd", "rbd", "rbd", pv._rbd),
    ("quobyte", "quobyte", "quobyte", pv._quobyte),
    ("cephfs", "cephFS", "cephfs", pv._cephfs),
    ("iscsi", "iscsi", "iscsi", _pv_iscsi),
    ("cinder", "cinder", "cinder", _with_secret_namespace(pv._cinder)),
    ("fc", "fc", "fc", pv._fc),
    ("flexVolume", "", "flexVolume", pv._flex),
    ("azureFile", "azureFile", "azureFile", _pv_azure_file),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume", pv._vsphere),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", pv._photon),
    ("portworxVolume", "portworxVolume", "portworxVolume", pv._portworx),
    ("azureDisk", "azureDisk", "azureDisk", pv._azure_disk),
    ("scaleIO", "scaleIO", "scaleIO", pv._scale_io),
    ("local", "local", "local", _pv_local),
    ("storageos", "storageos", "storageos", _with_secret_namespace(pv._storageos)),
    ("csi", "csi", "csi", _pv_csi),
)


def _clean_is_root(target: str) -> bool:
    """Whether Go's ``path.Clean(target) == "/"``."""
    if not target.startswith("/"):
        return False
    depth = 0
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            depth = max(0, depth - 1)
        else:
            depth += 1
    return depth == 0


def _invalid_required_affinity_values(spec: Obj) -> bool:
    """helper.HasInvalidLabelValueInNodeSelectorTerms of a PV's ``nodeAffinity.required`` terms."""
    required_selector = _dict(_dict(spec.get("nodeAffinity")).get("required"))
    for term in _list(required_selector.get("nodeSelectorTerms")):
        for expr in _list(_dict(term).get("matchExpressions")):
            for value in _list(_dict(expr).get("values")):
                if isinstance(value, str) and is_valid_label_value(value):
                    return True
    return False


def validate_persistent_volume(obj: Obj, old: Obj | None = None) -> list[Cause]:
    """ValidatePersistentVolume without ObjectMeta (ValidatePersistentVolumeSpec at ``spec``, not inline), then
    pkg/volume/validation's checkMountOption, in kube's order:

    ``spec.accessModes: Required value`` / each mode supported / ReadWriteOncePod alone; ``spec.capacity:
    Required value``, ``spec.capacity: Unsupported value: <%#v of the ResourceList>: supported values:
    "storage"`` when ``storage`` is missing or another resource is there, each ``capacity[<r>]`` not negative
    (``must be a valid resource quantity``) and positive (``must be greater than zero``);
    ``persistentVolumeReclaimPolicy`` Delete, Recycle or Retain; ``nodeAffinity.required`` Required (``must
    specify required node constraints``) else ValidateNodeSelector; exactly one source (a later one
    ``Forbidden: may not specify more than 1 volume type``, none ``spec: Required value: must specify a volume
    type``) with its checks (a local volume also needs ``nodeAffinity``: ``Required value: Local volume
    requires node affinity``); Recycle forbidden for a hostPath of ``/``; storageClassName a DNS subdomain;
    volumeMode Block or Filesystem; a set volumeAttributesClassName not "" (``an empty string is disallowed``),
    a DNS subdomain, and only with ``csi``; finally the ``volume.beta.kubernetes.io/mount-options`` annotation
    forbidden for sources that take no mount options.

    ``obj`` is the PV JSON; ``old`` the stored PV on an update (None on create): if its required node affinity
    has invalid label values, the new one may too (ValidationOptionsForPersistentVolume). Returns the causes."""
    spec = _dict(obj.get("spec"))
    name = _str(_dict(obj.get("metadata")).get("name"))
    out: list[Cause] = []
    modes = _list(spec.get("accessModes"))
    if not modes:
        out.append(required("spec.accessModes"))
    once_pod = other = False
    for mode in modes:
        if not isinstance(mode, str):
            continue
        if mode not in pv.ACCESS_MODES:
            out.append(not_supported("spec.accessModes", mode, pv.ACCESS_MODES))
        elif mode == "ReadWriteOncePod":
            once_pod = True
        else:
            other = True
    if once_pod and other:
        out.append(forbidden("spec.accessModes", "may not use ReadWriteOncePod with other access modes"))
    capacity = spec.get("capacity")
    cap = _dict(capacity)
    if capacity is not None and not isinstance(capacity, dict):
        pass  # not a map: the schema layer reports it
    else:
        if not cap:
            out.append(required("spec.capacity"))
        if "storage" not in cap or len(cap) > 1:
            shown = _go_resource_list(capacity)
            out.append(Cause("FieldValueNotSupported", f'Unsupported value: {shown}: supported values: "storage"',
                             "spec.capacity"))
    for resource in sorted(cap):
        out.extend(_basic_resource(cap[resource], f"spec.capacity[{resource}]"))
        out.extend(_positive(cap[resource], f"spec.capacity[{resource}]"))
    policy = spec.get("persistentVolumeReclaimPolicy")
    if isinstance(policy, str) and policy and policy not in RECLAIM_POLICIES:
        out.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    affinity = spec.get("nodeAffinity")
    has_affinity = affinity is not None
    if isinstance(affinity, dict):
        selector = affinity.get("required")
        if selector is None:
            out.append(required("spec.nodeAffinity.required", "must specify required node constraints"))
        elif isinstance(selector, dict):
            allow = old is not None and _invalid_required_affinity_values(_dict(old.get("spec")))
            out.extend(validate_node_selector(selector, "spec.nodeAffinity.required", allow_invalid_label_value=allow))
    count = 0
    for key, refused_at, checks_at, check in _PV_SOURCES:
        if spec.get(key) is None:
            continue
        if count and refused_at:
            out.append(forbidden(f"spec.{refused_at}", pv.MORE_THAN_ONE))
            continue
        count += 1
        source = _src(spec.get(key))
        if source is not None:
            if key == "iscsi":
                out.extend(_pv_iscsi(source, "spec.iscsi", name))
            else:
                out.extend(check(source, f"spec.{checks_at}"))
        if key == "local" and not has_affinity:
            out.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    if not count:
        out.append(required("spec", "must specify a volume type"))
    host_path = spec.get("hostPath")
    if isinstance(host_path, dict) and _clean_is_root(_str(host_path.get("path"))) and policy == "Recycle":
        out.append(forbidden("spec.persistentVolumeReclaimPolicy", "may not be 'recycle' for a hostPath mount of '/'"))
    class_name = spec.get("storageClassName")
    if isinstance(class_name, str) and class_name:
        out.extend(_name_errors(class_name, "spec.storageClassName", is_dns1123_subdomain))
    mode = spec.get("volumeMode")
    if isinstance(mode, str) and mode not in pv.VOLUME_MODES:
        out.append(not_supported("spec.volumeMode", mode, pv.VOLUME_MODES))
    vac = spec.get("volumeAttributesClassName")
    if isinstance(vac, str):
        if not vac:
            out.append(required("spec.volumeAttributesClassName", "an empty string is disallowed"))
        else:
            out.extend(_name_errors(vac, "spec.volumeAttributesClassName", is_dns1123_subdomain))
        if spec.get("csi") is None:
            out.append(required("spec.csi", "has to be specified when using volumeAttributesClassName"))
    annotations = _dict(_dict(obj.get("metadata")).get("annotations"))
    if MOUNT_OPTIONS_ANNOTATION in annotations and all(spec.get(k) is None for k in _MOUNT_OPTION_SOURCES):
        out.append(forbidden(f"metadata.annotations.{MOUNT_OPTIONS_ANNOTATION}",
                             "may not specify mount options for this volume type"))
    return out


def _sources(spec: Obj) -> dict[str, Any]:
    return {key: _canon(spec[key], rules) for key, rules in _SOURCE_RULES.items() if spec.get(key) is not None}


def _affinity_equal(new: Any, old: Any) -> bool:
    """Semantic.DeepEqual of two VolumeNodeAffinity values where a requirement's key may have moved from a beta
    label to its GA one (getMaskNodeSelectorLabelChangeEqualities)."""
    rules = {"required": _PTR}
    if new is None or old is None:
        return new is None and old is None
    new, old = _canon(_dict(new), rules), _canon(_dict(old), rules)
    if ("required" in new) != ("required" in old):
        return False
    if "required" not in new:
        return new == old
    new_terms = _list(_dict(new["required"]).get("nodeSelectorTerms"))
    old_terms = _list(_dict(old["required"]).get("nodeSelectorTerms"))
    if len(new_terms) != len(old_terms):
        return False
    for new_term, old_term in zip(new_terms, old_terms, strict=True):
        new_term, old_term = _dict(new_term), _dict(old_term)
        if (set(new_term) | set(old_term)) - {"matchExpressions", "matchFields"}:  # not NodeSelectorTerm's
            if new_term != old_term:
                return False
            continue
        for key in ("matchExpressions", "matchFields"):
            new_reqs, old_reqs = _list(new_term.get(key)), _list(old_term.get(key))
            if len(new_reqs) != len(old_reqs):
                return False
            for new_req, old_req in zip(new_reqs, old_reqs, strict=True):
                new_req, old_req = _dict(new_req), dict(_dict(old_req))
                old_key = old_req.get("key")
                if old_key != new_req.get("key") and BETA_TO_GA.get(_str(old_key)) == new_req.get("key"):
                    old_req["key"] = new_req.get("key")
                if new_req != old_req:
                    return False
    return True


def _go_volume_node_affinity(value: Any) -> str:
    """A ``*core.VolumeNodeAffinity`` as field.Invalid prints it (``"null"``, else ``%#v`` of the struct)."""
    if value is None:
        return '"null"'
    selector = _dict(value).get("required")
    pointer = "nil" if selector is None else GO_POINTER
    return f"core.VolumeNodeAffinity{{Required:(*core.NodeSelector)({pointer})}}"


def validate_persistent_volume_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidatePersistentVolumeUpdate's own rules (after its repeat of ValidatePersistentVolume, which
    :func:`validate_persistent_volume` with ``old`` gives), in order:

    - the volume source immutable: ``spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is
      immutable after creation`` (kube appends ``\\n`` and a ``cmp.Diff`` of the old and new internal
      PersistentVolumeSource, not reproduced); a ``csi.controllerExpandSecretRef`` may be added when the old
      one had none;
    - ``volumeMode: Invalid value: <new>: field is immutable`` (path without ``spec.``, as kube's);
    - a set node affinity immutable except a requirement key moving from a beta label to GA:
      ``nodeAffinity: Invalid value: <%#v>: field is immutable, except for updating from beta label to GA``
      (the value: ``"null"`` when removed, else ``core.VolumeNodeAffinity{Required:(*core.NodeSelector)(...)}``
      with kapi's pointer stand-in);
    - an old ``volumeAttributesClassName`` may not go back to unset (``spec.volumeAttributesClassName:
      Forbidden: update from non-nil value to nil is forbidden``).

    ``new`` / ``old`` are the PV JSON objects."""
    new_spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
    out: list[Cause] = []
    new_sources, old_sources = _sources(new_spec), _sources(old_spec)
    old_csi, new_csi = old_spec.get("csi"), new_spec.get("csi")
    if isinstance(old_csi, dict) and old_csi.get("controllerExpandSecretRef") is None and \
            isinstance(new_csi, dict) and new_csi.get("controllerExpandSecretRef") is not None:
        new_sources["csi"].pop("controllerExpandSecretRef", None)
    if new_sources != old_sources:
        out.append(forbidden("spec.persistentvolumesource", SOURCE_IMMUTABLE))
    new_mode, old_mode = new_spec.get("volumeMode"), old_spec.get("volumeMode")
    if new_mode != old_mode:
        out.append(immutable("volumeMode", new_mode))
    old_affinity, new_affinity = old_spec.get("nodeAffinity"), new_spec.get("nodeAffinity")
    if old_affinity is not None and not _affinity_equal(new_affinity, old_affinity):
        out.append(_shown_invalid("nodeAffinity", _go_volume_node_affinity(new_affinity), NODE_AFFINITY_IMMUTABLE))
    new_vac, old_vac = new_spec.get("volumeAttributesClassName"), old_spec.get("volumeAttributesClassName")
    if new_vac != old_vac and old_vac is not None and new_vac is None:
        out.append(forbidden("spec.volumeAttributesClassName", "update from non-nil value to nil is forbidden"))
    return out


def validate_persistent_volume_status_update(new: Obj, old: Obj) -> list[Cause]:
    """ValidatePersistentVolumeStatusUpdate without its ObjectMetaUpdate: ``resourceVersion: Required value``
    when the new PV JSON has no ``metadata.resourceVersion``; nothing else."""
    if not _str(_dict(new.get("metadata")).get("resourceVersion")):
        return [required("resourceVersion")]
    return []
