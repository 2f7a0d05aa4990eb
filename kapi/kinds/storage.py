"""The storage.k8s.io group's kinds: StorageClass and the CSI kinds (CSIDriver, CSINode, VolumeAttachment,
CSIStorageCapacity).

From ``pkg/apis/storage/v1/defaults.go`` and ``pkg/apis/storage/validation``:

- CSIDriver: spec defaults (attachRequired, podInfoOnMount, storageCapacity,
  fsGroupPolicy, requiresRepublish, volumeLifecycleModes, seLinuxMount),
  name a DNS subdomain of at most 63 characters, fsGroupPolicy and modes
  enums, token request audiences unique with expirations of at least 10
  minutes; attachRequired and volumeLifecycleModes immutable.
- CSINode: drivers named as CSI drivers, unique, with a nodeID (at most 192
  characters) and qualified topology keys; a driver's nodeID and
  topologyKeys immutable.
- VolumeAttachment: attacher and nodeName required, exactly one source;
  spec immutable.
- CSIStorageCapacity: storageClassName a DNS subdomain, capacities not
  negative; storageClassName and nodeTopology immutable.
- VolumeAttributesClass (GA in 1.34): driverName a qualified name,
  parameters required (at least one); both Forbidden to change.
- StorageClass: reclaimPolicy Delete and volumeBindingMode Immediate by
  default; provisioner a qualified name, parameters, the two enums;
  parameters, provisioner and reclaimPolicy Forbidden to change,
  volumeBindingMode immutable; allowedTopologies terms.
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.base import RESET_OBJECT_META_FOR_STATUS, Obj, Strategy, register
from kapi.kinds.fields import duplicate, field_value, immutable, not_supported
from kapi.objectmeta import forbidden, invalid, required
from kapi.validation import is_dns1123_subdomain, is_qualified_name
from kapi.values import as_dict as _dict
from kapi.values import as_list as _list
from kapi.values import as_str as _text

GROUP = "storage.k8s.io"
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
LIFECYCLE_MODES = ("Ephemeral", "Persistent")
CSI_NODE_ID_MAX = 192
MIN_TOKEN_SECONDS = 600
MAX_TOKEN_SECONDS = 1 << 32


def default_csi_driver(obj: Obj) -> None:
    """SetDefaults_CSIDriver (storage/v1)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    for key, value in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                       ("fsGroupPolicy", "ReadWriteOnceWithFSType"), ("requiresRepublish", False),
                       ("seLinuxMount", False)):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def validate_csi_driver_name(name: Any, path: str) -> list[Cause]:
    """apivalidation.ValidateCSIDriverName: required, at most 63 characters, a DNS subdomain (any case)."""
    text = name if isinstance(name, str) else ""
    out: list[Cause] = []
    if not text:
        out.append(required(path))
    if len(text) > 63:
        out.append(Cause("FieldValueTooLong", "Too long: may not be more than 63 bytes", path))
    out.extend(invalid(path, text, m) for m in is_dns1123_subdomain(text.lower()))
    return out


def validate_csi_driver(obj: Obj) -> list[Cause]:
    """ValidateCSIDriver: attachRequired and podInfoOnMount set (kube's path for the first is
    ``spec.attachedRequired``), fsGroupPolicy, volumeLifecycleModes, tokenRequests. The name is the generic
    ObjectMeta rule (a DNS subdomain, ``metadata.name``: storage validation's ValidateCSIDriverName is
    NameIsDNSSubdomain), not the 63-character driver name rule of the fields naming a driver."""
    spec = _dict(obj.get("spec"))
    out: list[Cause] = []
    for key, path in (("attachRequired", "spec.attachedRequired"), ("podInfoOnMount", "spec.podInfoOnMount")):
        if spec.get(key) is None:
            out.append(required(path))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        out.append(not_supported("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    for i, mode in enumerate(_list(spec.get("volumeLifecycleModes"))):
        if mode not in LIFECYCLE_MODES:
            out.append(not_supported(f"spec.volumeLifecycleModes[{i}]", mode, LIFECYCLE_MODES))
    audiences: set[str] = set()
    for i, request in enumerate(_list(spec.get("tokenRequests"))):
        request = _dict(request)
        path = f"spec.tokenRequests[{i}]"
        audience = str(request.get("audience") or "")
        if audience in audiences:
            out.append(duplicate(f"{path}.audience", audience))
        audiences.add(audience)
        seconds = request.get("expirationSeconds")
        if isinstance(seconds, int) and seconds < MIN_TOKEN_SECONDS:
            out.append(invalid(f"{path}.expirationSeconds", seconds,
                               "may not specify a duration less than 10 minutes"))
        elif isinstance(seconds, int) and seconds >= MAX_TOKEN_SECONDS:
            out.append(invalid(f"{path}.expirationSeconds", seconds,
                               "may not specify a duration larger than 2^32 seconds"))
    return out


def validate_csi_node(obj: Obj) -> list[Cause]:
    """ValidateCSINode: driver names, uniqueness, nodeID, topology keys, allocatable count."""
    out: list[Cause] = []
    names: set[str] = set()
    for i, driver in enumerate(_list(_dict(obj.get("spec")).get("drivers"))):
        driver = _dict(driver)
        path = f"spec.drivers[{i}]"
        name = driver.get("name")
        out.extend(validate_csi_driver_name(name, f"{path}.name"))
        if isinstance(name, str):
            if name in names:
                out.append(duplicate(f"{path}.name", name))
            names.add(name)
        node_id = driver.get("nodeID")
        if not node_id:
            out.append(required(f"{path}.nodeID"))
        elif isinstance(node_id, str) and len(node_id) > CSI_NODE_ID_MAX:
            out.append(invalid(f"{path}.nodeID", node_id, f"must be {CSI_NODE_ID_MAX} characters or less"))
        keys: set[str] = set()
        for j, key in enumerate(_list(driver.get("topologyKeys"))):
            kpath = f"{path}.topologyKeys[{j}]"
            if not key:
                out.append(required(kpath))
                continue
            out.extend(invalid(kpath, key, m) for m in is_qualified_name(str(key)))
            if key in keys:
                out.append(duplicate(kpath, key))
            keys.add(key)
        count = _dict(driver.get("allocatable")).get("count")
        if isinstance(count, int) and count < 0:
            out.append(invalid(f"{path}.allocatable.count", count, "must be greater than or equal to 0"))
    return out


ONE_SOURCE = "must specify exactly one of inlineVolumeSpec and persistentVolumeName"


def validate_volume_attachment(obj: Obj) -> list[Cause]:
    """ValidateVolumeAttachment then ValidateVolumeAttachmentV1, in kube's order: attacher required; the source
    (``Required value``/``Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName``, an
    empty persistentVolumeName ``Required value: must specify non empty persistentVolumeName``); nodeName a DNS
    subdomain (an empty one is the subdomain message, not ``Required value``); then the attacher as a CSI driver
    name and the persistentVolumeName as a volume name (a DNS subdomain)."""
    spec = _dict(obj.get("spec"))
    attacher = _text(spec.get("attacher"))
    out = [required("spec.attacher")] if not attacher else []
    source = _dict(spec.get("source"))
    pv, inline = source.get("persistentVolumeName"), source.get("inlineVolumeSpec")
    if pv is None and inline is None:
        out.append(required("spec.source", ONE_SOURCE))
    elif pv is not None and inline is not None:
        out.append(forbidden("spec.source", ONE_SOURCE))
    elif pv == "":
        out.append(required("spec.source.persistentVolumeName", "must specify non empty persistentVolumeName"))
    node = _text(spec.get("nodeName"))
    out.extend(invalid("spec.nodeName", node, m) for m in is_dns1123_subdomain(node))
    out.extend(validate_csi_driver_name(attacher, "spec.attacher"))
    if isinstance(pv, str):
        out.extend(invalid("spec.source.persistentVolumeName", pv, m) for m in is_dns1123_subdomain(pv))
    return out


def validate_csi_storage_capacity(obj: Obj) -> list[Cause]:
    """ValidateCSIStorageCapacity: storageClassName, capacity and maximumVolumeSize not negative."""
    name = obj.get("storageClassName")
    out = [invalid("storageClassName", name if isinstance(name, str) else "", m)
           for m in is_dns1123_subdomain(name if isinstance(name, str) else "")]
    for key in ("capacity", "maximumVolumeSize"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip().startswith("-"):
            out.append(invalid(key, value, "must be greater than or equal to 0"))
    return out


def _same(out: list[Cause], path: str, new_value: Any, old_value: Any, shown: Any = None) -> None:
    if new_value != old_value:
        out.append(immutable(path, new_value if shown is None else shown))


@register
class CSIDriverStrategy(Strategy):
    """CSIDriver: defaults, ValidateCSIDriver, attachRequired and volumeLifecycleModes immutable."""

    group, kind = GROUP, "CSIDriver"
    generation_on_create = False  # PrepareForCreate leaves it at 0; the first spec change makes it 1

    def default(self, obj: Obj) -> None:
        """:func:`default_csi_driver`."""
        default_csi_driver(obj)

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_csi_driver`."""
        return validate_csi_driver(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateCSIDriverUpdate: ``spec.attachRequired`` (kube's path: ``spec.attachedRequired``) and
        ``spec.volumeLifecycleModes`` immutable."""
        out: list[Cause] = []
        if subresource:
            return out
        spec, old_spec = _dict(new.get("spec")), _dict(old.get("spec"))
        _same(out, "spec.attachedRequired", spec.get("attachRequired"), old_spec.get("attachRequired"))
        _same(out, "spec.volumeLifecycleModes", spec.get("volumeLifecycleModes"), old_spec.get("volumeLifecycleModes"),
              ",".join(map(str, _list(spec.get("volumeLifecycleModes")))))
        return out


@register
class CSINodeStrategy(Strategy):
    """CSINode: ValidateCSINode; a driver's nodeID and topologyKeys immutable."""

    group, kind = GROUP, "CSINode"

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_csi_node`."""
        return validate_csi_node(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateCSINodeUpdate: each kept driver's nodeID and topologyKeys unchanged."""
        out: list[Cause] = []
        if subresource:
            return out
        before = {d.get("name"): d for d in _list(_dict(old.get("spec")).get("drivers")) if isinstance(d, dict)}
        for i, driver in enumerate(_list(_dict(new.get("spec")).get("drivers"))):
            driver = _dict(driver)
            old_driver = before.get(driver.get("name"))
            if old_driver is not None:
                _same(out, f"spec.drivers[{i}].nodeID", driver.get("nodeID"), old_driver.get("nodeID"))
                _same(out, f"spec.drivers[{i}].topologyKeys", driver.get("topologyKeys"),
                      old_driver.get("topologyKeys"), ",".join(map(str, _list(driver.get("topologyKeys")))))
        return out


@register
class VolumeAttachmentStrategy(Strategy):
    """VolumeAttachment: ValidateVolumeAttachment; the spec immutable."""

    group, kind = GROUP, "VolumeAttachment"
    #: volumeAttachmentStatusStrategy.PrepareForUpdate: spec, then metav1.ResetObjectMetaForStatus(new, old)
    status_reset_metadata = RESET_OBJECT_META_FOR_STATUS
    validates_required = True  # kube names the missing fields itself (above), never the schema
    status_zero = {"attached": False}  # VolumeAttachmentStatus.Attached has no omitempty; v1 resets it on create
    tracks_generation = False  # the strategy never sets it ("we don't allow updates to spec")
    #: the fields of AddFieldLabelConversionsForVolumeAttachment (pkg/apis/storage/v1/conversion.go)
    selectable_fields = {"spec.nodeName": field_value("spec", "nodeName"),
                         "spec.attacher": field_value("spec", "attacher"),
                         "spec.persistentVolumeName": field_value("spec", "source", "persistentVolumeName")}

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_volume_attachment`."""
        return validate_volume_attachment(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateVolumeAttachmentUpdate: ``spec`` immutable (main resource)."""
        out: list[Cause] = []
        if not subresource:
            _same(out, "spec", new.get("spec"), old.get("spec"), "spec")
        return out


@register
class CSIStorageCapacityStrategy(Strategy):
    """CSIStorageCapacity: ValidateCSIStorageCapacity; storageClassName and nodeTopology immutable."""

    group, kind = GROUP, "CSIStorageCapacity"

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_csi_storage_capacity`."""
        return validate_csi_storage_capacity(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """ValidateCSIStorageCapacityUpdate: ``storageClassName`` and ``nodeTopology`` immutable."""
        out: list[Cause] = []
        if not subresource:
            _same(out, "storageClassName", new.get("storageClassName"), old.get("storageClassName"))
            _same(out, "nodeTopology", new.get("nodeTopology"), old.get("nodeTopology"), "nodeTopology")
        return out


# ------------------------------------------------------------ StorageClass

RECLAIM_POLICIES = ("Delete", "Retain")  # sets.List: sorted
BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
MAX_PARAMETERS = 512  # maxProvisionerParameterLen
MAX_PARAMETERS_SIZE = 256 * 1024  # maxProvisionerParameterSize


def validate_provisioner(value: Any, path: str) -> list[Cause]:
    """validateProvisioner: required, and lower-cased a qualified name."""
    provisioner = value if isinstance(value, str) else ""
    if not provisioner:
        return [required(path)]
    return [invalid(path, provisioner, m) for m in is_qualified_name(provisioner.lower())]  # the value as sent


def validate_parameters(value: Any, path: str, allow_empty: bool = True) -> list[Cause]:
    """validateParameters: at most 512, no empty key (``field can not be empty.``), 256 KiB in all; with
    ``allow_empty`` False at least one (``Required value: must contain at least one key/value pair``)."""
    params = _dict(value)
    if len(params) > MAX_PARAMETERS:
        return [Cause("FieldValueTooLong", f"Too long: may not be more than {MAX_PARAMETERS} bytes", path)]
    out = [invalid(path, "", "field can not be empty.") for key in params if not key]
    if sum(len(k) + len(str(v)) for k, v in params.items()) > MAX_PARAMETERS_SIZE:
        out.append(Cause("FieldValueTooLong", f"Too long: may not be more than {MAX_PARAMETERS_SIZE} bytes", path))
    if not allow_empty and not params:
        out.append(required(path, "must contain at least one key/value pair"))
    return out


def validate_allowed_topologies(terms: Any, path: str = "allowedTopologies") -> list[Cause]:
    """validateAllowedTopologies: each term's match label expressions (ValidateTopologySelectorTerm: values
    required and unique, the key a qualified name, no key twice in a term) and no two terms alike
    (``<term>.matchLabelExpressions: Duplicate value: ""``). Terms without expressions are not compared (kube's
    comparison also counts them as duplicates of its pre-sized empty entries)."""
    out: list[Cause] = []
    seen: list[dict[str, frozenset[str]]] = []
    for i, term in enumerate(_list(terms)):
        tpath = f"{path}[{i}]"
        exprs: dict[str, frozenset[str]] = {}
        for j, expr in enumerate(_list(_dict(term).get("matchLabelExpressions"))):
            expr, epath = _dict(expr), f"{tpath}.matchLabelExpressions[{j}]"
            values = _list(expr.get("values"))
            if not values:
                out.append(required(f"{epath}.values"))
            out.extend(duplicate(f"{epath}.values[{k}]", value)
                       for k, value in enumerate(values) if value in values[:k])
            key = _text(expr.get("key"))
            out.extend(invalid(f"{epath}.key", key, m) for m in is_qualified_name(key))
            if key in exprs:
                out.append(duplicate(f"{epath}.key", key))
            exprs[key] = frozenset(str(v) for v in values)
        if exprs and exprs in seen:
            out.append(duplicate(f"{tpath}.matchLabelExpressions", ""))
        seen.append(exprs)
    return out


def validate_storage_class(obj: Obj) -> list[Cause]:
    """ValidateStorageClass in kube's order: ``provisioner`` (:func:`validate_provisioner`), ``parameters``
    (:func:`validate_parameters`), ``reclaimPolicy`` Delete or Retain, ``volumeBindingMode`` Immediate or
    WaitForFirstConsumer (required; the defaults set both)."""
    out = validate_provisioner(obj.get("provisioner"), "provisioner")
    out.extend(validate_parameters(obj.get("parameters"), "parameters"))
    policy = obj.get("reclaimPolicy")
    if isinstance(policy, str) and policy and policy not in RECLAIM_POLICIES:
        out.append(not_supported("reclaimPolicy", policy, RECLAIM_POLICIES))
    mode = obj.get("volumeBindingMode")
    if mode is None:
        out.append(required("volumeBindingMode"))
    elif mode not in BINDING_MODES:
        out.append(not_supported("volumeBindingMode", mode, BINDING_MODES))
    out.extend(validate_allowed_topologies(obj.get("allowedTopologies")))
    return out


@register
class StorageClassStrategy(Strategy):
    """StorageClass: SetDefaults_StorageClass, ValidateStorageClass, ValidateStorageClassUpdate."""

    group, kind = GROUP, "StorageClass"
    validates_required = True

    def default(self, obj: Obj) -> None:
        """``reclaimPolicy: Delete``, ``volumeBindingMode: Immediate`` when unset."""
        if obj.get("reclaimPolicy") is None:
            obj["reclaimPolicy"] = "Delete"
        if obj.get("volumeBindingMode") is None:
            obj["volumeBindingMode"] = "Immediate"

    def validate(self, obj: Obj) -> list[Cause]:
        """:func:`validate_storage_class`."""
        return validate_storage_class(obj)

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """``parameters``, ``provisioner`` and ``reclaimPolicy`` are Forbidden to change (``updates to <field>
        are forbidden.``); ``volumeBindingMode`` is immutable."""
        out: list[Cause] = []
        if _dict(new.get("parameters")) != _dict(old.get("parameters")):
            out.append(forbidden("parameters", "updates to parameters are forbidden."))
        # an object stored before kapi defaulted these reads as defaulted (kube decodes with the defaults)
        for key, default in (("provisioner", None), ("reclaimPolicy", "Delete")):
            if (new.get(key) or default) != (old.get(key) or default):
                out.append(forbidden(key, f"updates to {key} are forbidden."))
        _same(out, "volumeBindingMode", new.get("volumeBindingMode"), old.get("volumeBindingMode") or "Immediate")
        return out


@register
class VolumeAttributesClassStrategy(Strategy):
    """VolumeAttributesClass: ValidateVolumeAttributesClass and ValidateVolumeAttributesClassUpdate; no generation
    (no spec), no defaults."""

    group, kind = GROUP, "VolumeAttributesClass"
    validates_required = True

    def validate(self, obj: Obj) -> list[Cause]:
        """``driverName`` as a provisioner, ``parameters`` with at least one pair."""
        out = validate_provisioner(obj.get("driverName"), "driverName")
        out.extend(validate_parameters(obj.get("parameters"), "parameters", allow_empty=False))
        return out

    def validate_update(self, new: Obj, old: Obj, subresource: str = "") -> list[Cause]:
        """``driverName`` and ``parameters``: ``Forbidden: updates to <field> are forbidden.``"""
        out: list[Cause] = []
        if new.get("driverName") != old.get("driverName"):
            out.append(forbidden("driverName", "updates to driverName are forbidden."))
        if _dict(new.get("parameters")) != _dict(old.get("parameters")):
            out.append(forbidden("parameters", "updates to parameters are forbidden."))
        return out
