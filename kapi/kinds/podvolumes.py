"""Pod volume sources: ``ValidateVolumes``' per-volume checks beyond the name, message for message.

From ``pkg/apis/core/validation/validation.go`` (kube 1.37): ``validateVolumeSource`` and the
``validate<X>VolumeSource`` functions it calls (hostPath, emptyDir, gitRepo, the cloud and network
disks, secret, configMap, downwardAPI, projected, persistentVolumeClaim, csi, ephemeral with its claim
template, image), ``validateKeyToPath``, ``ValidateLocalNonReservedPath``, ``validateObjectFieldSelector``,
``validateContainerResourceFieldSelector``, ``ValidateTemplateObjectMeta`` and
``ValidatePersistentVolumeClaimSpec``.

kube's own quirks are kept because clients see them: a gcePersistentDisk's checks sit under
``persistentDisk``, a second source named ``cephfs`` or ``downwardAPI`` is refused at ``cephFS`` /
``downwarAPI``, a downwardAPI volume's items report at the source path (no index), a projected
``serviceAccountToken`` without a path is ``projected.path``, a CSI secret's bad name is ``csi.name``.

Values are the v1 JSON objects after defaulting; absent keys are Go zero values, and a value of the
wrong JSON type is skipped (the schema layer reports it). The volume ``name`` checks (Required, DNS-1123
label, unique) are not here: :func:`kapi.kinds.podspec.validate_pod_spec` does them.
"""

from __future__ import annotations

import re
from typing import Any

from kapi import quantity
from kapi.errors import Cause
from kapi.kinds.fields import go_quote, not_supported, validate_label_selector
from kapi.objectmeta import forbidden, invalid, required, too_long, validate_annotations, validate_labels
from kapi.validation import is_dns1123_label, is_dns1123_subdomain, is_qualified_name
from kapi.values import as_dict as _dict
from kapi.values import as_int as _int
from kapi.values import as_list as _list
from kapi.values import as_str as _str

Obj = dict[str, Any]

FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"  # fileModeErrorMsg
MORE_THAN_ONE = "may not specify more than 1 volume type"
PARTITION_MSG = "must be between 1 and 255, inclusive"  # pdPartitionErrorMsg (the check itself is 0-255)
LUN_MSG = "must be between 0 and 255, inclusive"
IQN_PREFIX_MSG = "must be valid format starting with iqn, eui, or naa"
ISCSI_NAME_TOO_LONG = ("Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if "
                       "iscsi.initiatorName is specified.")
QUOBYTE_REGISTRY_MSG = "must be a host:port pair or multiple pairs separated by commas"
DUPLICATE_PATHS = "conflicting duplicate paths"
NOT_POSITIVE = "must be greater than zero"  # isNotPositiveErrorMsg

# supportedHostPathTypes, sorted as sets.List gives them
HOST_PATH_TYPES = ("", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate",
                   "Socket")
PULL_POLICIES = ("Always", "IfNotPresent", "Never")
ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
VOLUME_MODES = ("Block", "Filesystem")
AZURE_CACHING_MODES = ("None", "ReadOnly", "ReadWrite")
AZURE_DISK_KINDS = ("Dedicated", "Managed", "Shared")
AZURE_MANAGED_URI = "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"
AZURE_BLOB_URI = "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"
# validVolumeDownwardAPIFieldPathExpressions, sorted
VOLUME_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                      "metadata.uid")
# validContainerResourceFieldPathExpressions, sorted; hugepages-<size> prefixes are accepted too
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                        "requests.ephemeral-storage", "requests.memory")
HUGEPAGES_PREFIXES = ("limits.hugepages-", "requests.hugepages-")
# pods.ConvertDownwardAPIFieldLabel's accepted labels (spec.host is converted to spec.nodeName)
_DOWNWARD_LABELS = frozenset((
    "metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid",
    "spec.nodeName", "spec.restartPolicy", "spec.serviceAccountName", "spec.schedulerName", "status.phase",
    "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs", "spec.terminationGracePeriodSeconds"))
_CPU_DIVISORS = frozenset(("1m", "1"))
_BYTE_DIVISORS = frozenset(("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei"))
_BYTE_DIVISORS_TEXT = "1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei"
# ObjectMeta's Go fields in declaration order, as validateFieldAllowList names them (first letter lowered),
# with their JSON keys; Labels and Annotations are the allowed ones.
_TEMPLATE_META_FIELDS = (
    ("name", "name"), ("generateName", "generateName"), ("namespace", "namespace"), ("selfLink", "selfLink"),
    ("uID", "uid"), ("resourceVersion", "resourceVersion"), ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"), ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"), ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"), ("managedFields", "managedFields"))
# Go's regexps: $ is the end of the text (Python's \Z), [[:alnum:]] and \s are ASCII
_IQN = re.compile(r"iqn\.[0-9]{4}-[0-9]{2}\.([A-Za-z0-9\-.]+)(:[^,;*&$|\t\n\f\r ]+)\Z")
_EUI = re.compile(r"eui.[A-Za-z0-9]{16}\Z")
_NAA = re.compile(r"naa.[A-Za-z0-9]{32}\Z")


# ------------------------------------------------------------ small shared rules

def _present(value: Any) -> bool:
    """A Go pointer or optional member is set: the JSON key is there and not null."""
    return value is not None


def _obj(value: Any) -> Obj | None:
    """A struct value to check: the object, ``{}`` for null (Go's zero struct), None for another JSON type (the
    schema layer reports it; nothing is checked)."""
    if value is None:
        return {}
    return value if isinstance(value, dict) else None


def _mode(value: Any, path: str) -> list[Cause]:
    """A file mode (defaultMode, items[].mode): 0 to 0777 inclusive."""
    mode = _int(value)
    return [invalid(path, mode, FILE_MODE_MSG)] if mode is not None and not 0 <= mode <= 0o777 else []


def _no_backsteps(target: str, path: str) -> list[Cause]:
    """validatePathNoBacksteps: no ``..`` element (one error however many)."""
    return [invalid(path, target, "must not contain '..'")] if ".." in target.split("/") else []


def _local_descending(target: str, path: str) -> list[Cause]:
    """validateLocalDescendingPath: relative, no ``..`` element."""
    out = [invalid(path, target, "must be a relative path")] if target.startswith("/") else []
    return out + _no_backsteps(target, path)


def validate_local_non_reserved_path(target: str, path: str) -> list[Cause]:
    """ValidateLocalNonReservedPath: relative (``must be a relative path``), no ``..`` element (``must not contain
    '..'``), and not starting with ``..`` (``must not start with '..'``, unless ``../`` already reported it).
    ``target`` is the path text, ``path`` the field; returns the causes ([] when fine)."""
    out = _local_descending(target, path)
    if target.startswith("..") and not target.startswith("../"):
        out.append(invalid(path, target, "must not start with '..'"))
    return out


def _key_to_path(item: Any, path: str) -> list[Cause]:
    """validateKeyToPath: key and path Required, the path local and non-reserved, mode 0-0777."""
    item = _obj(item)
    if item is None:
        return []
    key, target = _str(item.get("key")), _str(item.get("path"))
    out: list[Cause] = []
    if not key:
        out.append(required(f"{path}.key"))
    if not target:
        out.append(required(f"{path}.path"))
    out.extend(validate_local_non_reserved_path(target, f"{path}.path"))
    out.extend(_mode(item.get("mode"), f"{path}.mode"))
    return out


def _secret_name_errors(name: str) -> list[str]:
    return is_dns1123_subdomain(name)  # ValidateSecretName, NameIsDNSSubdomain


def _split_host_port(text: str) -> bool:
    """Whether Go's ``net.SplitHostPort`` accepts ``text``."""
    i = text.rfind(":")
    if i < 0:
        return False
    j = k = 0
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or end + 1 == len(text) or end + 1 != i:
            return False
        j, k = 1, end + 1
    elif ":" in text[:i]:
        return False
    return "[" not in text[j:] and "]" not in text[k:]


# ------------------------------------------------------------ sources

def _host_path(src: Obj, path: str) -> list[Cause]:
    """validateHostPathVolumeSource: path Required (and nothing else then), no ``..``, type a HostPathType."""
    target = _str(src.get("path"))
    if not target:
        return [required(f"{path}.path")]
    out = _no_backsteps(target, f"{path}.path")
    kind = src.get("type")
    if isinstance(kind, str) and kind not in HOST_PATH_TYPES:
        out.append(not_supported(f"{path}.type", kind, HOST_PATH_TYPES))
    return out


def _git_repo(src: Obj, path: str) -> list[Cause]:
    """validateGitRepoVolumeSource: repository Required; directory relative without ``..``."""
    out = [] if _str(src.get("repository")) else [required(f"{path}.repository")]
    return out + _local_descending(_str(src.get("directory")), f"{path}.directory")


def _partition(src: Obj, path: str) -> list[Cause]:
    value = _int(src.get("partition"))
    return [invalid(f"{path}.partition", value, PARTITION_MSG)] if value is not None and not 0 <= value <= 255 else []


def _gce_pd(src: Obj, path: str) -> list[Cause]:
    """validateGCEPersistentDiskVolumeSource: pdName Required, partition 0-255."""
    out = [] if _str(src.get("pdName")) else [required(f"{path}.pdName")]
    return out + _partition(src, path)


def _aws_ebs(src: Obj, path: str) -> list[Cause]:
    """validateAWSElasticBlockStoreVolumeSource: volumeID Required, partition 0-255."""
    out = [] if _str(src.get("volumeID")) else [required(f"{path}.volumeID")]
    return out + _partition(src, path)


def _secret(src: Obj, path: str) -> list[Cause]:
    """validateSecretVolumeSource: secretName Required, defaultMode, items."""
    out = [] if _str(src.get("secretName")) else [required(f"{path}.secretName")]
    out.extend(_mode(src.get("defaultMode"), f"{path}.defaultMode"))
    for i, item in enumerate(_list(src.get("items"))):
        out.extend(_key_to_path(item, f"{path}.items[{i}]"))
    return out


def _config_map(src: Obj, path: str) -> list[Cause]:
    """validateConfigMapVolumeSource: name Required, defaultMode, items."""
    out = [] if _str(src.get("name")) else [required(f"{path}.name")]
    out.extend(_mode(src.get("defaultMode"), f"{path}.defaultMode"))
    for i, item in enumerate(_list(src.get("items"))):
        out.extend(_key_to_path(item, f"{path}.items[{i}]"))
    return out


def _nfs(src: Obj, path: str) -> list[Cause]:
    """validateNFSVolumeSource: server and path Required, the path absolute (also reported when empty)."""
    target = _str(src.get("path"))
    out = [] if _str(src.get("server")) else [required(f"{path}.server")]
    if not target:
        out.append(required(f"{path}.path"))
    if not target.startswith("/"):
        out.append(invalid(f"{path}.path", target, "must be an absolute path"))
    return out


def _initiator_format(value: str, path: str, prefix_msg: str) -> list[Cause]:
    out: list[Cause] = []
    if not value.startswith(("iqn", "eui", "naa")):
        out.append(invalid(path, value, prefix_msg))
    if value.startswith("iqn") and not _IQN.search(value):
        out.append(invalid(path, value, "must be valid format"))
    elif value.startswith("eui") and not _EUI.match(value):
        out.append(invalid(path, value, "must be valid format"))
    elif value.startswith("naa") and not _NAA.match(value):
        out.append(invalid(path, value, "must be valid format"))
    return out


def _iscsi(src: Obj, path: str) -> list[Cause]:
    """validateISCSIVolumeSource: targetPortal and iqn Required, iqn/initiatorName formats, lun 0-255, secretRef
    Required with CHAP authentication."""
    out = [] if _str(src.get("targetPortal")) else [required(f"{path}.targetPortal")]
    iqn = _str(src.get("iqn"))
    if not iqn:
        out.append(required(f"{path}.iqn"))
    elif not iqn.startswith(("iqn", "eui", "naa")):
        out.append(invalid(f"{path}.iqn", iqn, IQN_PREFIX_MSG))
    else:
        out.extend(_initiator_format(iqn, f"{path}.iqn", IQN_PREFIX_MSG))
    lun = _int(src.get("lun"))
    if lun is not None and not 0 <= lun <= 255:
        out.append(invalid(f"{path}.lun", lun, LUN_MSG))
    if (src.get("chapAuthDiscovery") is True or src.get("chapAuthSession") is True) and src.get("secretRef") is None:
        out.append(required(f"{path}.secretRef"))
    initiator = src.get("initiatorName")
    if isinstance(initiator, str):
        out.extend(_initiator_format(initiator, f"{path}.initiatorname", IQN_PREFIX_MSG))
    return out


def _glusterfs(src: Obj, path: str) -> list[Cause]:
    """validateGlusterfsVolumeSource: endpoints and path Required."""
    out = [] if _str(src.get("endpoints")) else [required(f"{path}.endpoints")]
    return out + ([] if _str(src.get("path")) else [required(f"{path}.path")])


def _flocker(src: Obj, path: str) -> list[Cause]:
    """validateFlockerVolumeSource: exactly one of datasetName and datasetUUID; datasetName without ``/``."""
    name, uuid = _str(src.get("datasetName")), _str(src.get("datasetUUID"))
    out: list[Cause] = []
    if not name and not uuid:
        out.append(required(path, "one of datasetName and datasetUUID is required"))
    if name and uuid:
        out.append(invalid(path, "resource", "datasetName and datasetUUID can not be specified simultaneously"))
    if "/" in name:
        out.append(invalid(f"{path}.datasetName", name, "must not contain '/'"))
    return out


def _pvc(src: Obj, path: str) -> list[Cause]:
    """validatePersistentClaimVolumeSource: claimName Required."""
    return [] if _str(src.get("claimName")) else [required(f"{path}.claimName")]


def _rbd(src: Obj, path: str) -> list[Cause]:
    """validateRBDVolumeSource: monitors and image Required."""
    out = [] if _list(src.get("monitors")) else [required(f"{path}.monitors")]
    return out + ([] if _str(src.get("image")) else [required(f"{path}.image")])


def _secret_ref_name(src: Obj, path: str) -> list[Cause]:
    ref = src.get("secretRef")
    if isinstance(ref, dict) and not _str(ref.get("name")):
        return [required(f"{path}.secretRef.name")]
    return []


def _cinder(src: Obj, path: str) -> list[Cause]:
    """validateCinderVolumeSource: volumeID Required; a secretRef needs a name."""
    out = [] if _str(src.get("volumeID")) else [required(f"{path}.volumeID")]
    return out + _secret_ref_name(src, path)


def _cephfs(src: Obj, path: str) -> list[Cause]:
    """validateCephFSVolumeSource: monitors Required."""
    return [] if _list(src.get("monitors")) else [required(f"{path}.monitors")]


def _quobyte(src: Obj, path: str) -> list[Cause]:
    """validateQuobyteVolumeSource: registry Required (else tenant at most 64 characters, else every
    comma-separated registry a host:port pair), volume Required."""
    registry, tenant = _str(src.get("registry")), _str(src.get("tenant"))
    out: list[Cause] = []
    if not registry:
        out.append(required(f"{path}.registry", QUOBYTE_REGISTRY_MSG))
    elif len(tenant) >= 65:
        out.append(required(f"{path}.tenant", "must be a UUID and may not exceed a length of 64 characters"))
    else:
        for pair in registry.split(","):
            if not _split_host_port(pair):
                out.append(invalid(f"{path}.registry", registry, QUOBYTE_REGISTRY_MSG))
    if not _str(src.get("volume")):
        out.append(required(f"{path}.volume"))
    return out


def _object_field_selector(ref: Obj, path: str) -> list[Cause]:
    """validateObjectFieldSelector with the volume's field paths: apiVersion, then fieldPath Required; the label
    converted as pods.ConvertDownwardAPIFieldLabel does; a subscript's key a qualified name."""
    version, field_path = _str(ref.get("apiVersion")), _str(ref.get("fieldPath"))
    if not version:
        return [required(f"{path}.apiVersion")]
    if not field_path:
        return [required(f"{path}.fieldPath")]
    split = _split_subscript(field_path)
    error = ""
    internal = field_path
    if version != "v1":
        error = f"unsupported pod version: {version}"
    elif split is not None:
        if split[0] not in ("metadata.annotations", "metadata.labels"):
            error = f"field label does not support subscript: {field_path}"
    elif field_path == "spec.host":
        internal = "spec.nodeName"
    elif field_path not in _DOWNWARD_LABELS:
        error = f"field label not supported: {field_path}"
    if error:
        return [invalid(f"{path}.fieldPath", field_path, f"error converting fieldPath: {error}")]
    if split is not None:
        key = split[1].lower() if split[0] == "metadata.annotations" else split[1]
        return [invalid(path, key, msg) for msg in is_qualified_name(key)]
    if internal not in VOLUME_FIELD_PATHS:
        return [not_supported(f"{path}.fieldPath", internal, VOLUME_FIELD_PATHS)]
    return []


def _split_subscript(field_path: str) -> tuple[str, str] | None:
    """fieldpath.SplitMaybeSubscriptedPath: ``metadata.labels['key']`` -> ("metadata.labels", "key")."""
    if not field_path.endswith("']"):
        return None
    head, sep, key = field_path[:-2].partition("['")
    return (head, key) if sep and head else None


def _resource_field_selector(ref: Obj, path: str) -> list[Cause]:
    """validateContainerResourceFieldSelector for a volume: containerName, else resource Required, else a known
    resource (or a hugepages one); then the divisor."""
    container, resource = _str(ref.get("containerName")), _str(ref.get("resource"))
    out: list[Cause] = []
    if not container:
        out.append(required(f"{path}.containerName"))
    elif not resource:
        out.append(required(f"{path}.resource"))
    elif resource not in RESOURCE_FIELD_PATHS and not resource.startswith(HUGEPAGES_PREFIXES):
        out.append(not_supported(f"{path}.resource", resource, RESOURCE_FIELD_PATHS))
    divisor = quantity.parsed(ref.get("divisor"))
    if divisor is None or divisor[0] == 0:
        return out
    shown, dpath = divisor[1], f"{path}.divisor"
    if resource in ("limits.cpu", "requests.cpu") and shown not in _CPU_DIVISORS:
        out.append(invalid(dpath, resource, "only divisor's values 1m and 1 are supported with the cpu resource"))
    elif resource in ("limits.memory", "requests.memory") and shown not in _BYTE_DIVISORS:
        out.append(invalid(dpath, resource, f"only divisor's values {_BYTE_DIVISORS_TEXT} are supported with the "
                                            "memory resource"))
    elif resource in ("limits.ephemeral-storage", "requests.ephemeral-storage") and shown not in _BYTE_DIVISORS:
        out.append(invalid(dpath, resource, f"only divisor's values {_BYTE_DIVISORS_TEXT} are supported with the "
                                            "local ephemeral storage resource"))
    if resource.startswith(HUGEPAGES_PREFIXES) and shown not in _BYTE_DIVISORS:
        out.append(invalid(dpath, resource, f"only divisor's values {_BYTE_DIVISORS_TEXT} are supported with the "
                                            "hugepages resource"))
    return out


def _downward_file(item: Any, path: str) -> list[Cause]:
    """validateDownwardAPIVolumeFile (``path`` is the source's, not the item's: kube gives no index)."""
    item = _obj(item)
    if item is None:
        return []
    target = _str(item.get("path"))
    out = [] if target else [required(f"{path}.path")]
    out.extend(validate_local_non_reserved_path(target, f"{path}.path"))
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if _present(field_ref):
        if isinstance(field_ref, dict):
            out.extend(_object_field_selector(field_ref, f"{path}.fieldRef"))
        if _present(resource_ref):
            out.append(invalid(path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
    elif _present(resource_ref):
        if isinstance(resource_ref, dict):
            out.extend(_resource_field_selector(resource_ref, f"{path}.resourceFieldRef"))
    else:
        out.append(required(path, "one of fieldRef and resourceFieldRef is required"))
    out.extend(_mode(item.get("mode"), f"{path}.mode"))
    return out


def _downward_api(src: Obj, path: str) -> list[Cause]:
    """validateDownwardAPIVolumeSource: defaultMode, then each item."""
    out = _mode(src.get("defaultMode"), f"{path}.defaultMode")
    for item in _list(src.get("items")):
        out.extend(_downward_file(item, path))
    return out


def _fc(src: Obj, path: str) -> list[Cause]:
    """validateFCVolumeSource: targetWWNs or wwids (not both); lun Required (0-255) with targetWWNs."""
    wwns, wwids = _list(src.get("targetWWNs")), _list(src.get("wwids"))
    out: list[Cause] = []
    if not wwns and not wwids:
        out.append(required(f"{path}.targetWWNs", "must specify either targetWWNs or wwids, but not both"))
    if wwns and wwids:
        out.append(invalid(f"{path}.targetWWNs", wwns, "targetWWNs and wwids can not be specified simultaneously"))
    if wwns:
        lun = src.get("lun")
        if lun is None:
            out.append(required(f"{path}.lun", "lun is required if targetWWNs is specified"))
        elif _int(lun) is not None and not 0 <= lun <= 255:
            out.append(invalid(f"{path}.lun", lun, LUN_MSG))
    return out


def _flex(src: Obj, path: str) -> list[Cause]:
    """validateFlexVolumeSource: driver Required; option keys outside the kubernetes.io / k8s.io namespaces
    (Go visits the map in random order; here in key order)."""
    out = [] if _str(src.get("driver")) else [required(f"{path}.driver")]
    for key in sorted(_dict(src.get("options"))):
        namespace = key.split("/", 1)[0] if "/" in key else key
        normalized = "." + namespace.lower()
        if normalized.endswith((".kubernetes.io", ".k8s.io")):
            out.append(invalid(f"{path}.options[{key}]", key, "kubernetes.io and k8s.io namespaces are reserved"))
    return out


def _azure_file(src: Obj, path: str) -> list[Cause]:
    """validateAzureFile: secretName and shareName Required."""
    out = [] if _str(src.get("secretName")) else [required(f"{path}.secretName")]
    return out + ([] if _str(src.get("shareName")) else [required(f"{path}.shareName")])


def _vsphere(src: Obj, path: str) -> list[Cause]:
    """validateVsphereVolumeSource: volumePath Required."""
    return [] if _str(src.get("volumePath")) else [required(f"{path}.volumePath")]


def _photon(src: Obj, path: str) -> list[Cause]:
    """validatePhotonPersistentDiskVolumeSource: pdID Required."""
    return [] if _str(src.get("pdID")) else [required(f"{path}.pdID")]


def _portworx(src: Obj, path: str) -> list[Cause]:
    """validatePortworxVolumeSource: volumeID Required."""
    return [] if _str(src.get("volumeID")) else [required(f"{path}.volumeID")]


def _azure_disk(src: Obj, path: str) -> list[Cause]:
    """validateAzureDisk: diskName and diskURI Required, cachingMode and kind supported, the URI's form by kind."""
    uri = _str(src.get("diskURI"))
    out = [] if _str(src.get("diskName")) else [required(f"{path}.diskName")]
    if not uri:
        out.append(required(f"{path}.diskURI"))
    caching, kind = src.get("cachingMode"), src.get("kind")
    if isinstance(caching, str) and caching not in AZURE_CACHING_MODES:
        out.append(not_supported(f"{path}.cachingMode", caching, AZURE_CACHING_MODES))
    if isinstance(kind, str) and kind not in AZURE_DISK_KINDS:
        out.append(not_supported(f"{path}.kind", kind, AZURE_DISK_KINDS))
    if isinstance(kind, str) and kind == "Managed" and not uri.startswith("/subscriptions/"):
        out.append(not_supported(f"{path}.diskURI", uri, (AZURE_MANAGED_URI,)))
    if isinstance(kind, str) and kind != "Managed" and not uri.startswith("https://"):
        out.append(not_supported(f"{path}.diskURI", uri, (AZURE_BLOB_URI,)))
    return out


def _storageos(src: Obj, path: str) -> list[Cause]:
    """validateStorageOSVolumeSource: volumeName Required and a DNS label, volumeNamespace a DNS label, a
    secretRef needs a name."""
    name, namespace = _str(src.get("volumeName")), _str(src.get("volumeNamespace"))
    if not name:
        out = [required(f"{path}.volumeName")]
    else:
        out = [invalid(f"{path}.volumeName", name, msg) for msg in is_dns1123_label(name)]
    if namespace:
        out.extend(invalid(f"{path}.volumeNamespace", namespace, msg) for msg in is_dns1123_label(namespace))
    return out + _secret_ref_name(src, path)


def _projected(src: Obj, path: str) -> list[Cause]:
    """validateProjectedVolumeSource and validateProjectionSources: defaultMode; each source's secret /
    configMap / downwardAPI / serviceAccountToken, their item paths unique across the sources, one kind per
    source. clusterTrustBundle and podCertificate (feature gates off by default, dropped before validation) are
    neither validated nor counted."""
    out = _mode(src.get("defaultMode"), f"{path}.defaultMode")
    seen: set[str] = set()

    def unique(target: str, shown: Any) -> None:
        if target in seen:
            out.append(invalid(path, shown, DUPLICATE_PATHS))
        seen.add(target)

    for i, source in enumerate(_list(src.get("sources"))):
        source = _obj(source)
        if source is None:
            continue
        spath = f"{path}.sources[{i}]"
        count = 0
        for kind in ("secret", "configMap"):
            projection = source.get(kind)
            if not _present(projection):
                continue
            count += 1
            projection = _obj(projection)
            if projection is None:
                continue
            name = _str(projection.get("name"))
            if not name:
                out.append(required(f"{spath}.{kind}.name"))
            for j, item in enumerate(_list(projection.get("items"))):
                out.extend(_key_to_path(item, f"{spath}.{kind}.items[{j}]"))
                target = _str(_dict(item).get("path"))
                if target:
                    unique(target, name)
        downward = source.get("downwardAPI")
        if _present(downward):
            count += 1
            for item in _list(_dict(downward).get("items")):
                out.extend(_downward_file(item, f"{spath}.downwardAPI"))
                target = _str(_dict(item).get("path"))
                if target:
                    unique(target, target)
        token = source.get("serviceAccountToken")
        if _present(token):
            count += 1
            token = _obj(token)
            if token is None:
                continue
            seconds = _int(token.get("expirationSeconds"))
            seconds = 0 if seconds is None and token.get("expirationSeconds") is None else seconds
            if seconds is not None and seconds < 600:
                out.append(invalid(f"{spath}.serviceAccountToken.expirationSeconds", seconds,
                                   "may not specify a duration less than 10 minutes"))
            if seconds is not None and seconds > 1 << 32:
                out.append(invalid(f"{spath}.serviceAccountToken.expirationSeconds", seconds,
                                   "may not specify a duration larger than 2^32 seconds"))
            target = _str(token.get("path"))
            if not target:
                out.append(required(f"{path}.path"))  # kube's path: the projected volume's, not the source's
            else:  # AllowNonLocalProjectedTokenPath is only for pods that already had such a path
                out.extend(validate_local_non_reserved_path(target, f"{path}.path"))
        if count > 1:
            out.append(forbidden(spath, "may not specify more than 1 volume type per source"))
    return out


def _scale_io(src: Obj, path: str) -> list[Cause]:
    """validateScaleIOVolumeSource: gateway, system and volumeName Required."""
    return [required(f"{path}.{key}") for key in ("gateway", "system", "volumeName") if not _str(src.get(key))]


def validate_csi_driver_name(driver: str, path: str) -> list[Cause]:
    """ValidateCSIDriverName: Required when empty, at most 63 bytes (``Too long``), and its lower-cased form a
    DNS-1123 subdomain (the message shows the name as given). Returns the causes at ``path``."""
    out: list[Cause] = []
    if not driver:
        out.append(required(path))
    if len(driver.encode()) > 63:
        out.append(too_long(path, 63))
    out.extend(invalid(path, driver, msg) for msg in is_dns1123_subdomain(driver.lower()))
    return out


def _csi(src: Obj, path: str) -> list[Cause]:
    """validateCSIVolumeSource: the driver name; a nodePublishSecretRef's name Required and a secret name (the
    latter reported at ``csi.name``, as kube does)."""
    out = validate_csi_driver_name(_str(src.get("driver")), f"{path}.driver")
    ref = src.get("nodePublishSecretRef")
    if isinstance(ref, dict):
        name = _str(ref.get("name"))
        if not name:
            out.append(required(f"{path}.nodePublishSecretRef.name"))
        else:
            out.extend(invalid(f"{path}.name", name, msg) for msg in _secret_name_errors(name))
    return out


def _template_meta(meta: Obj, path: str) -> list[Cause]:
    """ValidateTemplateObjectMeta: annotations and labels valid, every other ObjectMeta field unset."""
    out = validate_annotations(meta.get("annotations"), f"{path}.annotations")
    out.extend(validate_labels(meta.get("labels"), f"{path}.labels"))
    for go_name, key in _TEMPLATE_META_FIELDS:
        value = meta.get(key)
        if value is None or value == "" or (key == "generation" and value == 0):
            continue  # Go's zero values (a list or map, even empty, was decoded non-nil)
        out.append(forbidden(f"{path}.{go_name}", "cannot be set"))
    return out


def _data_source(ref: Obj, path: str, with_namespace: bool) -> list[Cause]:
    """validateDataSource / validateDataSourceRef: name and kind Required, the core group only for claims, the
    group a DNS subdomain; a dataSourceRef's namespace a namespace name."""
    kind, group = _str(ref.get("kind")), _str(ref.get("apiGroup"))
    out: list[Cause] = []
    if not _str(ref.get("name")):
        out.append(required(f"{path}.name"))
    if not kind:
        out.append(required(f"{path}.kind"))
    if not group and kind != "PersistentVolumeClaim":
        out.append(invalid(path, kind, "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
    if group:
        out.extend(invalid(f"{path}.apiGroup", group, msg) for msg in is_dns1123_subdomain(group))
    namespace = _str(ref.get("namespace"))
    if with_namespace and namespace:
        out.extend(invalid(f"{path}.namespace", namespace, msg) for msg in is_dns1123_label(namespace))
    return out


def validate_claim_spec(spec: Any, path: str) -> list[Cause]:
    """ValidatePersistentVolumeClaimSpec (create, VolumeAttributesClass on): accessModes Required (``at least 1
    access mode is required``), the selector, each mode supported and ReadWriteOncePod alone, ``resources[storage]``
    Required and positive, storageClassName and volumeAttributesClassName DNS subdomains, volumeMode Block or
    Filesystem, dataSource and dataSourceRef. ``spec`` is the claim spec JSON object; causes under ``path``."""

    spec = _dict(spec)
    modes = _list(spec.get("accessModes"))
    out: list[Cause] = []
    if not modes:
        out.append(required(f"{path}.accessModes", "at least 1 access mode is required"))
    if isinstance(spec.get("selector"), dict):
        out.extend(validate_label_selector(spec["selector"], f"{path}.selector"))
    once_pod = other = False
    for mode in modes:
        if not isinstance(mode, str):
            continue
        if mode not in ACCESS_MODES:
            out.append(not_supported(f"{path}.accessModes", mode, ACCESS_MODES))
        if mode == "ReadWriteOncePod":
            once_pod = True
        elif mode in ACCESS_MODES:
            other = True
    if once_pod and other:
        out.append(forbidden(f"{path}.accessModes", "may not use ReadWriteOncePod with other access modes"))
    requests = _dict(_dict(spec.get("resources")).get("requests"))
    spath = f"{path}.resources[storage]"
    if "storage" not in requests:
        out.append(required(spath))
    else:
        storage = quantity.parsed(requests["storage"])
        if storage is not None and storage[0] <= 0:
            out.append(invalid(spath, storage[1], NOT_POSITIVE))
    class_name = spec.get("storageClassName")
    if isinstance(class_name, str) and class_name:
        out.extend(invalid(f"{path}.storageClassName", class_name, msg) for msg in is_dns1123_subdomain(class_name))
    mode = spec.get("volumeMode")
    if isinstance(mode, str) and mode not in VOLUME_MODES:
        out.append(not_supported(f"{path}.volumeMode", mode, VOLUME_MODES))
    if isinstance(spec.get("dataSource"), dict):
        out.extend(_data_source(spec["dataSource"], f"{path}.dataSource", False))
    if isinstance(spec.get("dataSourceRef"), dict):
        out.extend(_data_source(spec["dataSourceRef"], f"{path}.dataSourceRef", True))
    # dataSource against dataSourceRef; the bad value is a *field.Path, which field.Error prints unquoted
    source, ref = spec.get("dataSource"), spec.get("dataSourceRef")
    if isinstance(ref, dict) and _str(ref.get("namespace")):
        if source is not None:
            out.append(Cause("FieldValueInvalid", f"Invalid value: {path}.dataSource: may not be specified when "
                                                  "dataSourceRef.namespace is specified", path))
    elif isinstance(source, dict) and isinstance(ref, dict):
        if (source.get("apiGroup"), _str(source.get("kind")), _str(source.get("name"))) != \
                (ref.get("apiGroup"), _str(ref.get("kind")), _str(ref.get("name"))):
            out.append(Cause("FieldValueInvalid", f"Invalid value: {path}.dataSource: must match dataSourceRef", path))
    vac = spec.get("volumeAttributesClassName")
    if isinstance(vac, str) and vac:
        out.extend(invalid(f"{path}.volumeAttributesClassName", vac, msg) for msg in is_dns1123_subdomain(vac))
    return out


def _ephemeral(src: Obj, path: str) -> list[Cause]:
    """validateEphemeralVolumeSource: volumeClaimTemplate Required, else ValidatePersistentVolumeClaimTemplate
    (the template's metadata, then its spec)."""
    template = src.get("volumeClaimTemplate")
    if not _present(template):
        return [required(f"{path}.volumeClaimTemplate")]
    template = _dict(template)
    tpath = f"{path}.volumeClaimTemplate"
    return _template_meta(_dict(template.get("metadata")), f"{tpath}.metadata") + \
        validate_claim_spec(template.get("spec"), f"{tpath}.spec")


def _image(src: Obj, path: str, resource_is_pod: bool) -> list[Cause]:
    """validateImageVolumeSource: reference Required in a Pod (not in a template), pullPolicy Required and
    supported."""
    out = [required(f"{path}.reference")] if resource_is_pod and not _str(src.get("reference")) else []
    policy = src.get("pullPolicy")
    if policy is None or policy == "":
        out.append(required(f"{path}.pullPolicy"))
    elif isinstance(policy, str) and policy not in PULL_POLICIES:
        out.append(not_supported(f"{path}.pullPolicy", policy, PULL_POLICIES))
    return out


# validateVolumeSource's order: (JSON key, path when refused as a second source, path of its checks, checker)
_SOURCES: tuple[tuple[str, str, str, Any], ...] = (
    ("hostPath", "hostPath", "hostPath", _host_path),
    ("gitRepo", "gitRepo", "gitRepo", _git_repo),
    ("gcePersistentDisk", "gcePersistentDisk", "persistentDisk", _gce_pd),
    ("awsElasticBlockStore", "awsElasticBlockStore", "awsElasticBlockStore", _aws_ebs),
    ("secret", "secret", "secret", _secret),
    ("nfs", "nfs", "nfs", _nfs),
    ("iscsi", "iscsi", "iscsi", _iscsi),
    ("glusterfs", "glusterfs", "glusterfs", _glusterfs),
    ("flocker", "flocker", "flocker", _flocker),
    ("persistentVolumeClaim", "persistentVolumeClaim", "persistentVolumeClaim", _pvc),
    ("rbd", "rbd", "rbd", _rbd),
    ("cinder", "cinder", "cinder", _cinder),
    ("cephfs", "cephFS", "cephfs", _cephfs),
    ("quobyte", "quobyte", "quobyte", _quobyte),
    ("downwardAPI", "downwarAPI", "downwardAPI", _downward_api),
    ("fc", "fc", "fc", _fc),
    ("flexVolume", "flexVolume", "flexVolume", _flex),
    ("configMap", "configMap", "configMap", _config_map),
    ("azureFile", "azureFile", "azureFile", _azure_file),
    ("vsphereVolume", "vsphereVolume", "vsphereVolume", _vsphere),
    ("photonPersistentDisk", "photonPersistentDisk", "photonPersistentDisk", _photon),
    ("portworxVolume", "portworxVolume", "portworxVolume", _portworx),
    ("azureDisk", "azureDisk", "azureDisk", _azure_disk),
    ("storageos", "storageos", "storageos", _storageos),
    ("projected", "projected", "projected", _projected),
    ("scaleIO", "scaleIO", "scaleIO", _scale_io),
    ("csi", "csi", "csi", _csi),
    ("ephemeral", "ephemeral", "ephemeral", _ephemeral),
    ("image", "image", "image", _image),
)


# ------------------------------------------------------------ public

def validate_volume_source(volume: Any, path: str, *, pod_name: str | None = None,
                           resource_is_pod: bool = False) -> list[Cause]:
    """validateVolumeSource for one volume (``volume`` the ``spec.volumes[i]`` JSON object, ``path`` its field
    path, e.g. ``spec.volumes[0]``): exactly one source (a later one is ``Forbidden: may not specify more than 1
    volume type``, none is ``Required value: must specify a volume type``), each source's own checks, an iscsi
    volume's ``<name>:<targetPortal>`` length with an initiatorName, and, with ``pod_name`` (a real Pod's name),
    an ephemeral volume's claim name ``<pod>-<volume>`` a DNS subdomain. ``resource_is_pod``: the spec is a
    Pod's (PodValidationOptions.ResourceIsPod: an image volume's reference is Required). Returns the causes in
    kube's order; the name checks are not included."""
    volume = _dict(volume)
    name = _str(volume.get("name"))
    out: list[Cause] = []
    count = 0
    empty_dir = volume.get("emptyDir")
    if _present(empty_dir):
        count += 1
        limit = quantity.parsed(_dict(empty_dir).get("sizeLimit"))
        if limit is not None and limit[0] < 0:
            out.append(forbidden(f"{path}.emptyDir.sizeLimit", "SizeLimit field must be a valid resource quantity"))
    for key, refused_at, checks_at, check in _SOURCES:
        source = volume.get(key)
        if not _present(source):
            continue
        if count:
            out.append(forbidden(f"{path}.{refused_at}", MORE_THAN_ONE))
        else:
            count += 1
            if isinstance(source, dict):
                if check is _image:
                    out.extend(_image(source, f"{path}.image", resource_is_pod))
                else:
                    out.extend(check(source, f"{path}.{checks_at}"))
                if key == "ephemeral" and pod_name and name:
                    claim = f"{pod_name}-{name}"
                    out.extend(invalid(f"{path}.name", name, f"PVC name {go_quote(claim)}: {msg}")
                               for msg in is_dns1123_subdomain(claim))
        if key == "iscsi" and isinstance(source, dict) and isinstance(source.get("initiatorName"), str) \
                and len(f"{name}:{_str(source.get('targetPortal'))}") > 64:
            out.append(invalid(f"{path}.name", name, ISCSI_NAME_TOO_LONG))
    if not count:
        out.append(required(path, "must specify a volume type"))
    return out


def ephemeral_claim_conflict(volume: Any, path: str, volumes: Any, pod_name: str | None) -> list[Cause]:
    """ValidateVolumes' last per-volume check (after the name checks): a persistentVolumeClaim volume may not
    name a claim that one of the Pod's ephemeral volumes creates (``<pod>-<volume>``); only with the Pod's name.
    ``volume`` is ``volumes[i]``, ``path`` its field path, ``volumes`` all of ``spec.volumes``."""
    if not pod_name:
        return []
    claim = _dict(volume).get("persistentVolumeClaim")
    if not isinstance(claim, dict):
        return []
    created = {f"{pod_name}-{_str(_dict(v).get('name'))}" for v in _list(volumes)
               if _present(_dict(v).get("ephemeral"))}
    claim_name = _str(claim.get("claimName"))
    if claim_name in created:
        return [invalid(f"{path}.persistentVolumeClaim.claimName", claim_name,
                        "must not reference a PVC that gets created for an ephemeral volume")]
    return []


def validate_volume_sources(volumes: Any, path: str, *, pod_name: str | None = None,
                            resource_is_pod: bool = False) -> list[Cause]:
    """ValidateVolumes without the name checks, for ``spec.volumes`` (a JSON list) at ``path`` (e.g.
    ``spec.volumes``): per volume, :func:`validate_volume_source` then :func:`ephemeral_claim_conflict`.

    kube runs, per volume i: the source checks, then the name checks (Required / DNS label / Duplicate), then
    the claim conflict; a caller that wants kube's exact interleaving calls the two per-volume functions around
    its name checks. Returns the causes ([] when every source is valid)."""
    volumes = _list(volumes)
    out: list[Cause] = []
    for i, volume in enumerate(volumes):
        vpath = f"{path}[{i}]"
        out.extend(validate_volume_source(volume, vpath, pod_name=pod_name, resource_is_pod=resource_is_pod))
        out.extend(ephemeral_claim_conflict(volume, vpath, volumes, pod_name))
    return out


def validate_token_projections_need_service_account(spec: Any, path: str = "spec") -> list[Cause]:
    """validatePodMetadataAndSpec's Pod-only check (after ValidatePodSpec): with no ``serviceAccountName``, every
    projected ``serviceAccountToken`` source is ``Forbidden: must not be specified when serviceAccountName is not
    set`` (at ``<path>.volumes[i].projected.sources[j].serviceAccountToken``). ``spec`` is the PodSpec JSON."""
    spec = _dict(spec)
    if _str(spec.get("serviceAccountName")):
        return []
    out: list[Cause] = []
    for i, volume in enumerate(_list(spec.get("volumes"))):
        projected = _dict(volume).get("projected")
        if not isinstance(projected, dict):
            continue
        for j, source in enumerate(_list(projected.get("sources"))):
            if _present(_dict(source).get("serviceAccountToken")):
                out.append(forbidden(f"{path}.volumes[{i}].projected.sources[{j}].serviceAccountToken",
                                     "must not be specified when serviceAccountName is not set"))
    return out
