"""PersistentVolumeClaim and PersistentVolume validation (kapi.kinds.persistentvolumes): kube 1.37's
ValidatePersistentVolumeClaim(Update/StatusUpdate) and ValidatePersistentVolume(Spec/Update/StatusUpdate) of
pkg/apis/core/validation/validation.go, as (field, message) pairs in kube's order."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kapi.kinds.persistentvolumes import (
    validate_persistent_volume,
    validate_persistent_volume_claim,
    validate_persistent_volume_claim_status_update,
    validate_persistent_volume_claim_update,
    validate_persistent_volume_status_update,
    validate_persistent_volume_update,
)

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
               "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
               "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
MODES = '"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'
CLAIM_IMMUTABLE = ("Forbidden: spec is immutable after creation except resources.requests and "
                   "volumeAttributesClassName for bound claims")
SOURCE_IMMUTABLE = "Forbidden: spec.persistentvolumesource is immutable after creation"
SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd", "quobyte",
           "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume", "photonPersistentDisk",
           "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")
QTY_1 = ('resource.Quantity{i:resource.int64Amount{value:1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, '
         's:"1", Format:"DecimalSI"}')


def _pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


# ------------------------------------------------------------ PersistentVolumeClaim

def _pvc(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                            "volumeMode": "Filesystem"}
    base.update(spec)
    return {"metadata": {"name": "c", "namespace": "ns", "resourceVersion": "1"}, "spec": base,
            "status": {"phase": "Pending"}}


def _claim(**spec: Any) -> list[tuple[str, str]]:
    return _pairs(validate_persistent_volume_claim(_pvc(**spec)))


def test_claim_valid() -> None:
    assert _claim() == []
    assert _claim(storageClassName="fast", volumeAttributesClassName="gold",
                  dataSource={"kind": "PersistentVolumeClaim", "name": "src"}) == []


def test_claim_spec_rules_come_from_validate_claim_spec() -> None:
    assert _claim(accessModes=[], resources={}) == [
        ("spec.accessModes", "Required value: at least 1 access mode is required"),
        ("spec.resources[storage]", "Required value")]
    assert _claim(accessModes=["ReadWriteOncePod", "ReadOnlyMany", "Bad"],
                  resources={"requests": {"storage": "0"}}) == [
        ("spec.accessModes", f'Unsupported value: "Bad": supported values: {MODES}'),
        ("spec.accessModes", "Forbidden: may not use ReadWriteOncePod with other access modes"),
        ("spec.resources[storage]", 'Invalid value: "0": must be greater than zero')]
    assert _claim(dataSource={"kind": "Snap", "name": "s"}) == [
        ("spec.dataSource", "Invalid value: \"Snap\": must be 'PersistentVolumeClaim' when referencing the default "
                            "apiGroup")]


def test_claim_update_options_from_old_claim() -> None:
    bad_selector = {"matchExpressions": [{"key": "k", "operator": "In", "values": ["-bad-"]}]}
    new = _pvc(selector=bad_selector, dataSource={"apiGroup": "Bad_Group", "kind": "K", "name": "n"})
    strict = _pairs(validate_persistent_volume_claim(new))
    assert strict == [
        ("spec.selector.matchExpressions[0].values[0]", f'Invalid value: "-bad-": {LABEL_VALUE}'),
        ("spec.dataSource.apiGroup", f'Invalid value: "Bad_Group": {SUBDOMAIN}')]
    old = copy.deepcopy(new)
    assert validate_persistent_volume_claim(new, old) == []
    clean_old = _pvc()
    assert _pairs(validate_persistent_volume_claim(new, clean_old)) == strict


def _update(new: dict[str, Any], old: dict[str, Any]) -> list[tuple[str, str]]:
    return _pairs(validate_persistent_volume_claim_update(new, old))


def test_claim_update_unchanged_and_volume_name_set_once() -> None:
    old = _pvc()
    assert _update(copy.deepcopy(old), old) == []
    new = _pvc(volumeName="pv-1")
    assert _update(new, old) == []
    bound_old = _pvc(volumeName="pv-1")
    assert _update(_pvc(volumeName="pv-2"), bound_old) == [("spec", CLAIM_IMMUTABLE)]


def test_claim_update_spec_immutable_except_bound_storage_and_vac() -> None:
    old = _pvc(volumeAttributesClassName="gold")
    grown = _pvc(resources={"requests": {"storage": "2Gi"}}, volumeAttributesClassName="silver")
    assert _update(grown, old) == [("spec", CLAIM_IMMUTABLE)]  # a pending claim may not change
    old["status"]["phase"] = "Bound"
    grown["status"]["phase"] = "Bound"
    assert _update(grown, old) == []
    other = _pvc(resources={"requests": {"storage": "2Gi", "cpu": "1"}}, volumeAttributesClassName="gold")
    other["status"]["phase"] = "Bound"
    assert _update(other, old) == [("spec", CLAIM_IMMUTABLE)]
    assert _update(_pvc(accessModes=["ReadOnlyMany"]), _pvc()) == [("spec", CLAIM_IMMUTABLE)]


def test_claim_update_semantic_equality() -> None:
    old = _pvc(resources={"requests": {"storage": "1Gi"}, "limits": {}}, selector=None)
    new = _pvc(resources={"requests": {"storage": "1024Mi"}})
    assert _update(new, old) == []
    assert _update(_pvc(storageClassName=""), _pvc(storageClassName="x")) == [("spec", CLAIM_IMMUTABLE)]
    assert _update(_pvc(selector={}), _pvc()) == [("spec", CLAIM_IMMUTABLE)]


def test_claim_update_storage_class_from_annotation_and_nil() -> None:
    old = _pvc()
    old["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "gold"}
    assert _update(_pvc(storageClassName="gold"), old) == []  # the annotation moves into the field
    assert _update(_pvc(storageClassName="silver"), old) == [
        ("metadata.annotations.volume.beta.kubernetes.io/storage-class", 'Invalid value: "": field is immutable'),
        ("spec", CLAIM_IMMUTABLE)]
    assert _update(_pvc(storageClassName="any"), _pvc()) == []  # set from nil, no annotation
    assert _update(_pvc(storageClassName="b"), _pvc(storageClassName="a")) == [("spec", CLAIM_IMMUTABLE)]


def test_claim_update_storage_shrink() -> None:
    old = _pvc(resources={"requests": {"storage": "10Gi"}})
    old["status"] = {"phase": "Bound", "capacity": {"storage": "5Gi"}}
    shrunk = _pvc(resources={"requests": {"storage": "5Gi"}})
    shrunk["status"] = copy.deepcopy(old["status"])
    assert _update(shrunk, old) == [
        ("spec.resources.requests.storage", "Forbidden: field can not be less than status.capacity")]
    partial = _pvc(resources={"requests": {"storage": "6Gi"}})
    partial["status"] = copy.deepcopy(old["status"])
    assert _update(partial, old) == []  # recovering from a failed expansion


def test_claim_update_volume_mode_and_vac() -> None:
    assert _update(_pvc(volumeMode="Block"), _pvc()) == [
        ("spec", CLAIM_IMMUTABLE), ("volumeMode", 'Invalid value: "Block": field is immutable')]
    old = _pvc(volumeAttributesClassName="gold")
    old["status"]["phase"] = "Bound"
    removed = _pvc()
    removed["status"]["phase"] = "Bound"
    assert _update(removed, old) == [
        ("spec", CLAIM_IMMUTABLE),
        ("spec.volumeAttributesClassName", "Forbidden: update from non-nil value to nil is forbidden")]
    emptied = _pvc(volumeAttributesClassName="")
    emptied["status"]["phase"] = "Bound"
    assert _update(emptied, old) == [
        ("spec.volumeAttributesClassName", "Forbidden: update from non-nil value to an empty string is forbidden")]


def test_claim_status_update() -> None:
    old = _pvc()
    assert validate_persistent_volume_claim_status_update(copy.deepcopy(old), old) == []
    new = _pvc(accessModes=[])
    del new["metadata"]["resourceVersion"]
    new["status"] = {"capacity": {"storage": "-1"},
                     "allocatedResourceStatuses": {"cpu": "Weird", "storage": "ControllerResizeInProgress",
                                                   "example.com/x": "Other"},
                     "allocatedResources": {"Bad Key": "1", "storage": "-2"}}
    assert _pairs(validate_persistent_volume_claim_status_update(new, old)) == [
        ("resourceVersion", "Required value"),
        ("Spec.accessModes", "Required value"),
        ("status.capacity[storage]", "Invalid value: -1: must be a valid resource quantity"),
        ("status.allocatedResourceStatus", 'Unsupported value: "cpu": supported values: "storage"'),
        ("status.allocatedResourceStatus",
         'Unsupported value: "cpu": supported values: "ControllerResizeInProgress", "ControllerResizeInfeasible", '
         '"NodeResizeInProgress", "NodeResizeInfeasible", "NodeResizePending"'),
        ("status.allocatedResourceStatus",
         'Unsupported value: "example.com/x": supported values: "ControllerResizeInProgress", '
         '"ControllerResizeInfeasible", "NodeResizeInProgress", "NodeResizeInfeasible", "NodeResizePending"'),
        ("status.allocatedResources",
         "Invalid value: \"Bad Key\": name part must consist of alphanumeric characters, '-', '_' or '.', and must "
         "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
         "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
        ("status.allocatedResources[storage]", "Invalid value: -2: must be a valid resource quantity")]


# ------------------------------------------------------------ PersistentVolume

def _pv_obj(name: str = "pv", annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
                            "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}
    if not any(key in spec for key in SOURCES):
        base["nfs"] = {"server": "s", "path": "/x"}
    base.update(spec)
    meta: dict[str, Any] = {"name": name, "resourceVersion": "1"}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": base}


def _pv(name: str = "pv", **spec: Any) -> list[tuple[str, str]]:
    return _pairs(validate_persistent_volume(_pv_obj(name, **spec)))


NODE_AFFINITY = {"required": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}


def test_pv_valid() -> None:
    assert _pv() == []
    assert _pv(local={"path": "/mnt/disk"}, nodeAffinity=NODE_AFFINITY, storageClassName="local") == []
    assert _pv(csi={"driver": "ebs.csi.aws.com", "volumeHandle": "vol-1"}, volumeAttributesClassName="gold") == []
    assert _pv(hostPath={"path": "/data", "type": ""}, persistentVolumeReclaimPolicy="Recycle") == []


def test_pv_empty_spec() -> None:
    assert _pairs(validate_persistent_volume({"metadata": {"name": "pv"}, "spec": {}})) == [
        ("spec.accessModes", "Required value"),
        ("spec.capacity", "Required value"),
        ("spec.capacity", 'Unsupported value: core.ResourceList(nil): supported values: "storage"'),
        ("spec", "Required value: must specify a volume type")]


def test_pv_access_modes_reclaim_policy_class_and_mode() -> None:
    assert _pv(accessModes=["ReadWriteOncePod", "ReadWriteMany", "Nope"], persistentVolumeReclaimPolicy="Keep",
               storageClassName="Bad_Class", volumeMode="Raw") == [
        ("spec.accessModes", f'Unsupported value: "Nope": supported values: {MODES}'),
        ("spec.accessModes", "Forbidden: may not use ReadWriteOncePod with other access modes"),
        ("spec.persistentVolumeReclaimPolicy",
         'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"'),
        ("spec.storageClassName", f'Invalid value: "Bad_Class": {SUBDOMAIN}'),
        ("spec.volumeMode", 'Unsupported value: "Raw": supported values: "Block", "Filesystem"')]


def test_pv_capacity() -> None:
    assert _pv(capacity={}) == [
        ("spec.capacity", "Required value"),
        ("spec.capacity", 'Unsupported value: core.ResourceList{}: supported values: "storage"')]
    assert _pv(capacity={"storage": "-1Gi"}) == [
        ("spec.capacity[storage]", "Invalid value: -1073741824: must be a valid resource quantity"),
        ("spec.capacity[storage]", 'Invalid value: "-1Gi": must be greater than zero')]
    assert _pv(capacity={"storage": "0"}) == [
        ("spec.capacity[storage]", 'Invalid value: "0": must be greater than zero')]
    assert _pv(capacity={"storage": "-500m"}) == [
        ("spec.capacity[storage]", "Invalid value: -1: must be a valid resource quantity"),
        ("spec.capacity[storage]", 'Invalid value: "-500m": must be greater than zero')]
    assert _pv(capacity={"cpu": "1"}) == [
        ("spec.capacity", f'Unsupported value: core.ResourceList{{"cpu":{QTY_1}}}: supported values: "storage"')]
    ten_g = ('resource.Quantity{i:resource.int64Amount{value:10, scale:9}, '
             'd:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"10G", Format:"DecimalSI"}')
    eight_gi = ('resource.Quantity{i:resource.int64Amount{value:8589934592, scale:0}, '
                'd:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:"", Format:"BinarySI"}')
    assert _pv(capacity={"storage": "10G", "x": "8Gi"}) == [
        ("spec.capacity", f'Unsupported value: core.ResourceList{{"storage":{ten_g}, "x":{eight_gi}}}: '
                          'supported values: "storage"')]


def test_pv_sources_count() -> None:
    assert _pv(hostPath={"path": "/a"}, nfs={"server": "s", "path": "/x"}, gcePersistentDisk={"pdName": "d"}) == [
        ("spec.gcePersistentDisk", "Forbidden: may not specify more than 1 volume type"),
        ("spec.nfs", "Forbidden: may not specify more than 1 volume type")]
    assert _pv(cephfs={"monitors": ["m"]}, csi={"driver": "d", "volumeHandle": "h"}) == [
        ("spec.csi", "Forbidden: may not specify more than 1 volume type")]
    # flexVolume is counted but never refused
    assert _pv(hostPath={"path": "/a"}, flexVolume={"driver": ""}) == [("spec.flexVolume.driver", "Required value")]
    assert _pv(rbd={"monitors": ["m"], "image": "i"}, cephfs={"monitors": ["m"]}) == [
        ("spec.cephFS", "Forbidden: may not specify more than 1 volume type")]


def test_pv_reused_pod_source_checks() -> None:
    assert _pv(hostPath={"path": "/a/../b", "type": "Nope"}) == [
        ("spec.hostPath.path", 'Invalid value: "/a/../b": must not contain \'..\''),
        ("spec.hostPath.type", 'Unsupported value: "Nope": supported values: "", "BlockDevice", "CharDevice", '
                               '"Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"')]
    assert _pv(gcePersistentDisk={"pdName": "", "partition": 256}) == [
        ("spec.persistentDisk.pdName", "Required value"),
        ("spec.persistentDisk.partition", "Invalid value: 256: must be between 1 and 255, inclusive")]
    assert _pv(nfs={"server": "", "path": "x"}) == [
        ("spec.nfs.server", "Required value"), ("spec.nfs.path", 'Invalid value: "x": must be an absolute path')]
    assert _pv(fc={"targetWWNs": ["w"]}) == [
        ("spec.fc.lun", "Required value: lun is required if targetWWNs is specified")]
    assert _pv(scaleIO={}) == [("spec.scaleIO.gateway", "Required value"), ("spec.scaleIO.system", "Required value"),
                               ("spec.scaleIO.volumeName", "Required value")]


@pytest.mark.parametrize(("source", "expected"), [
    ({"awsElasticBlockStore": {"volumeID": ""}}, [("spec.awsElasticBlockStore.volumeID", "Required value")]),
    ({"flocker": {}}, [("spec.flocker", "Required value: one of datasetName and datasetUUID is required")]),
    ({"rbd": {"monitors": [], "image": ""}}, [("spec.rbd.monitors", "Required value"),
                                             ("spec.rbd.image", "Required value")]),
    ({"quobyte": {"registry": "", "volume": ""}}, [
        ("spec.quobyte.registry", "Required value: must be a host:port pair or multiple pairs separated by commas"),
        ("spec.quobyte.volume", "Required value")]),
    ({"cephfs": {"monitors": []}}, [("spec.cephfs.monitors", "Required value")]),
    ({"vsphereVolume": {}}, [("spec.vsphereVolume.volumePath", "Required value")]),
    ({"photonPersistentDisk": {}}, [("spec.photonPersistentDisk.pdID", "Required value")]),
    ({"portworxVolume": {}}, [("spec.portworxVolume.volumeID", "Required value")]),
    ({"azureDisk": {"diskName": "d", "diskURI": "x", "kind": "Managed", "cachingMode": "ReadWrite"}}, [
        ("spec.azureDisk.diskURI", 'Unsupported value: "x": supported values: '
                                   '"/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/'
                                   'disks/{disk-id}"')]),
    ({"flexVolume": {"driver": "d", "options": {"kubernetes.io/x": "1"}}}, [
        ("spec.flexVolume.options[kubernetes.io/x]",
         'Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io namespaces are reserved')]),
])
def test_pv_other_sources(source: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert _pv(**source) == expected


def test_pv_glusterfs_cinder_azure_file_storageos() -> None:
    assert _pv(glusterfs={"endpoints": "e", "path": "p", "endpointsNamespace": ""}) == [
        ("spec.glusterfs.endpointsNamespace",
         'Invalid value: "": if the endpointnamespace is set, it must be a valid namespace name')]
    assert _pv(glusterfs={"endpoints": "", "path": "p", "endpointsNamespace": "Bad"}) == [
        ("spec.glusterfs.endpoints", "Required value"),
        ("spec.glusterfs.endpointsNamespace", f'Invalid value: "Bad": {LABEL}')]
    assert _pv(cinder={"volumeID": "v", "secretRef": {}}) == [
        ("spec.cinder.secretRef.name", "Required value"), ("spec.cinder.secretRef.namespace", "Required value")]
    assert _pv(azureFile={"secretName": "s", "shareName": "", "secretNamespace": ""}) == [
        ("spec.azureFile.shareName", "Required value"), ("spec.azureFile.secretNamespace", "Required value")]
    assert _pv(storageos={"volumeName": "v", "secretRef": {"name": "n"}}) == [
        ("spec.storageos.secretRef.namespace", "Required value")]


def test_pv_iscsi() -> None:
    assert _pv(iscsi={"targetPortal": "1.2.3.4:3260", "iqn": "iqn.2015-02.example.com:test", "lun": 0}) == []
    assert _pv(iscsi={"targetPortal": "", "iqn": "bad", "lun": 300, "chapAuthSession": True,
                      "initiatorName": "nope"}) == [
        ("spec.iscsi.targetPortal", "Required value"),
        ("spec.iscsi.iqn", 'Invalid value: "bad": must be valid format'),
        ("spec.iscsi.lun", "Invalid value: 300: must be between 0 and 255, inclusive"),
        ("spec.iscsi.secretRef", "Required value"),
        ("spec.iscsi.initiatorname", 'Invalid value: "nope": must be valid format')]
    long_name = "n" * 60
    assert _pv(long_name, iscsi={"targetPortal": "1.2.3.4:3260", "iqn": "eui.1234", "secretRef": {},
                                 "initiatorName": "iqn.2015-02.example.com:x"}) == [
        ("spec.iscsi.targetportal", 'Invalid value: "1.2.3.4:3260": Total length of <volume name>:<iscsi.targetPortal> '
                                    'must be under 64 characters if iscsi.initiatorName is specified.'),
        ("spec.iscsi.iqn", 'Invalid value: "eui.1234": must be valid format'),
        ("spec.iscsi.secretRef.name", "Required value")]


def test_pv_csi() -> None:
    assert _pv(csi={"driver": "", "volumeHandle": "", "controllerPublishSecretRef": {},
                    "nodePublishSecretRef": {"name": "Bad_Name", "namespace": "Bad"},
                    "nodeStageSecretRef": {}}) == [
        ("spec.csi.driver", "Required value"),
        ("spec.csi.driver", f'Invalid value: "": {SUBDOMAIN}'),
        ("spec.csi.volumeHandle", "Required value"),
        ("spec.csi.controllerPublishSecretRef.name", "Required value"),
        ("spec.csi.controllerPublishSecretRef.namespace", "Required value"),
        ("spec.csi.nodePublishSecretRef.name", f'Invalid value: "Bad_Name": {SUBDOMAIN}'),
        ("spec.csi.nodePublishSecretRef.namespace", f'Invalid value: "Bad": {LABEL}')]


def test_pv_local_and_node_affinity() -> None:
    assert _pv(local={"path": ""}) == [
        ("spec.local.path", "Required value"),
        ("spec.nodeAffinity", "Required value: Local volume requires node affinity")]
    assert _pv(local={"path": "/a/.."}, nodeAffinity={}) == [
        ("spec.nodeAffinity.required", "Required value: must specify required node constraints"),
        ("spec.local.path", 'Invalid value: "/a/..": must not contain \'..\'')]
    assert _pv(nodeAffinity={"required": {"nodeSelectorTerms": []}}) == [
        ("spec.nodeAffinity.required.nodeSelectorTerms", "Required value: must have at least one node selector term")]
    bad_value = {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["-x-"]}]}]}}
    expected = [("spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values[0]",
                 f'Invalid value: "-x-": {LABEL_VALUE}')]
    assert _pv(nodeAffinity=bad_value) == expected
    new = _pv_obj(nodeAffinity=bad_value)
    assert validate_persistent_volume(new, copy.deepcopy(new)) == []  # the stored PV already had it
    assert _pairs(validate_persistent_volume(new, _pv_obj())) == expected


def test_pv_host_path_root_recycle() -> None:
    for root in ("/", "//", "/.", "/./"):
        assert _pv(hostPath={"path": root}, persistentVolumeReclaimPolicy="Recycle") == [
            ("spec.persistentVolumeReclaimPolicy", "Forbidden: may not be 'recycle' for a hostPath mount of '/'")]
    assert _pv(hostPath={"path": "/"}, persistentVolumeReclaimPolicy="Delete") == []
    assert _pv(hostPath={"path": "/a/.."}, persistentVolumeReclaimPolicy="Recycle") == [
        ("spec.hostPath.path", 'Invalid value: "/a/..": must not contain \'..\''),
        ("spec.persistentVolumeReclaimPolicy", "Forbidden: may not be 'recycle' for a hostPath mount of '/'")]
    assert _pv(hostPath={"path": "/a"}, persistentVolumeReclaimPolicy="Recycle") == []


def test_pv_volume_attributes_class() -> None:
    assert _pv(volumeAttributesClassName="") == [
        ("spec.volumeAttributesClassName", "Required value: an empty string is disallowed"),
        ("spec.csi", "Required value: has to be specified when using volumeAttributesClassName")]
    assert _pv(csi={"driver": "d", "volumeHandle": "h"}, volumeAttributesClassName="Bad_Vac") == [
        ("spec.volumeAttributesClassName", f'Invalid value: "Bad_Vac": {SUBDOMAIN}')]


def test_pv_mount_options_annotation() -> None:
    ann = {"volume.beta.kubernetes.io/mount-options": "ro"}
    assert _pairs(validate_persistent_volume(_pv_obj(annotations=ann))) == []  # nfs takes mount options
    assert _pairs(validate_persistent_volume(_pv_obj(annotations=ann, hostPath={"path": "/a"}))) == [
        ("metadata.annotations.volume.beta.kubernetes.io/mount-options",
         "Forbidden: may not specify mount options for this volume type")]


def _pv_update(new: dict[str, Any], old: dict[str, Any]) -> list[tuple[str, str]]:
    return _pairs(validate_persistent_volume_update(new, old))


def test_pv_update_source_immutable() -> None:
    old = _pv_obj()
    assert _pv_update(copy.deepcopy(old), old) == []
    assert _pv_update(_pv_obj(nfs={"server": "other", "path": "/x"}), old) == [
        ("spec.persistentvolumesource", SOURCE_IMMUTABLE)]
    assert _pv_update(_pv_obj(nfs={"server": "s", "path": "/x", "readOnly": False}), old) == []  # Go zero value
    # everything but the source may change
    assert _pv_update(_pv_obj(capacity={"storage": "5Gi"}, storageClassName="x"), old) == []


def test_pv_update_csi_controller_expand_secret_may_be_added() -> None:
    old = _pv_obj(csi={"driver": "d", "volumeHandle": "h"})
    added = _pv_obj(csi={"driver": "d", "volumeHandle": "h", "controllerExpandSecretRef": {"name": "s",
                                                                                          "namespace": "n"}})
    assert _pv_update(added, old) == []
    assert _pv_update(old, added) == [("spec.persistentvolumesource", SOURCE_IMMUTABLE)]
    staged = _pv_obj(csi={"driver": "d", "volumeHandle": "h", "nodeStageSecretRef": {}})
    assert _pv_update(staged, old) == [("spec.persistentvolumesource", SOURCE_IMMUTABLE)]  # a set pointer differs


def test_pv_update_volume_mode_and_vac() -> None:
    assert _pv_update(_pv_obj(volumeMode="Block"), _pv_obj()) == [
        ("volumeMode", 'Invalid value: "Block": field is immutable')]
    old = _pv_obj(csi={"driver": "d", "volumeHandle": "h"}, volumeAttributesClassName="gold")
    assert _pv_update(_pv_obj(csi={"driver": "d", "volumeHandle": "h"}), old) == [
        ("spec.volumeAttributesClassName", "Forbidden: update from non-nil value to nil is forbidden")]
    assert _pv_update(old, _pv_obj(csi={"driver": "d", "volumeHandle": "h"})) == []  # may be set


def test_pv_update_node_affinity() -> None:
    def affinity(key: str, values: list[str]) -> dict[str, Any]:
        return {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In",
                                                                          "values": values}]}]}}

    old = _pv_obj(nodeAffinity=affinity("failure-domain.beta.kubernetes.io/zone", ["a"]))
    assert _pv_update(_pv_obj(nodeAffinity=affinity("topology.kubernetes.io/zone", ["a"])), old) == []
    assert _pv_update(_pv_obj(nodeAffinity=affinity("topology.kubernetes.io/zone", ["b"])), old) == [
        ("nodeAffinity", "Invalid value: core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc000000000)}: "
                         "field is immutable, except for updating from beta label to GA")]
    assert _pv_update(_pv_obj(), old) == [
        ("nodeAffinity", 'Invalid value: "null": field is immutable, except for updating from beta label to GA')]
    assert _pv_update(_pv_obj(nodeAffinity={}), old) == [
        ("nodeAffinity", "Invalid value: core.VolumeNodeAffinity{Required:(*core.NodeSelector)(nil)}: "
                         "field is immutable, except for updating from beta label to GA")]
    # a GA key may not go back to beta, and an unset affinity may be set
    ga = _pv_obj(nodeAffinity=affinity("topology.kubernetes.io/zone", ["a"]))
    assert len(_pv_update(old, ga)) == 1
    assert _pv_update(ga, _pv_obj()) == []


def test_pv_status_update() -> None:
    old = _pv_obj()
    assert validate_persistent_volume_status_update(copy.deepcopy(old), old) == []
    new = copy.deepcopy(old)
    del new["metadata"]["resourceVersion"]
    assert _pairs(validate_persistent_volume_status_update(new, old)) == [("resourceVersion", "Required value")]


@pytest.mark.parametrize("spec", [
    {"capacity": "big", "accessModes": "x", "nodeAffinity": [], "hostPath": "p"},
    {"capacity": {"storage": {"a": 1}}, "csi": 1, "iscsi": [], "local": None},
    {"accessModes": [1, None], "capacity": {"storage": None}, "volumeAttributesClassName": 3},
])
def test_wrong_types_do_not_raise(spec: dict[str, Any]) -> None:
    obj = {"metadata": {"name": 1, "annotations": "x"}, "spec": spec, "status": "s"}
    validate_persistent_volume(obj)
    validate_persistent_volume_update(obj, obj)
    validate_persistent_volume_claim(obj, obj)
    validate_persistent_volume_claim_update(obj, obj)
    validate_persistent_volume_claim_status_update(obj, obj)
    validate_persistent_volume_status_update(obj, obj)
