"""Pod volume sources (kapi.kinds.podvolumes): validateVolumeSource and the per-source checks of kube 1.37's
pkg/apis/core/validation/validation.go, as (field, message) pairs in kube's order."""

from __future__ import annotations

from typing import Any

import pytest

from kapi.kinds.podvolumes import (
    ephemeral_claim_conflict,
    validate_claim_spec,
    validate_csi_driver_name,
    validate_local_non_reserved_path,
    validate_token_projections_need_service_account,
    validate_volume_source,
    validate_volume_sources,
)

V = "spec.volumes[0]"
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
MODE = "must be a number between 0 and 0777 (octal), both inclusive"
HOST_PATH_TYPES = '"", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"'


def _pairs(causes: list[Any]) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in causes]


def _vol(**source: Any) -> list[tuple[str, str]]:
    return _pairs(validate_volume_source({"name": "v", **source}, V))


GOOD = [
    {"emptyDir": {}},
    {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    {"hostPath": {"path": "/data", "type": "DirectoryOrCreate"}},
    {"hostPath": {"path": "/data", "type": ""}},
    {"secret": {"secretName": "s", "defaultMode": 420, "items": [{"key": "k", "path": "a/b", "mode": 0o400}]}},
    {"configMap": {"name": "c", "defaultMode": 0o777, "items": [{"key": "k", "path": "..a"[1:]}]}},
    {"downwardAPI": {"defaultMode": 420, "items": [
        {"path": "labels", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}},
        {"path": "ann", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.annotations['a.b/c']"}},
        {"path": "cpu", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "1m"}},
        {"path": "hp", "resourceFieldRef": {"containerName": "c", "resource": "limits.hugepages-2Mi"}}]}},
    {"projected": {"defaultMode": 420, "sources": [
        {"secret": {"name": "s", "items": [{"key": "k", "path": "a"}]}},
        {"configMap": {"name": "c", "items": [{"key": "k", "path": "b"}]}},
        {"downwardAPI": {"items": [{"path": "c", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}]}},
        {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600, "audience": "api"}}]}},
    {"persistentVolumeClaim": {"claimName": "data"}},
    {"nfs": {"server": "nfs.example", "path": "/exports"}},
    {"iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0}},
    {"csi": {"driver": "csi.example.com", "nodePublishSecretRef": {"name": "creds"}}},
    {"ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {"a": "b"}}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeMode": "Filesystem",
        "storageClassName": "fast"}}}},
    {"image": {"reference": "busybox", "pullPolicy": "IfNotPresent"}},
    {"gitRepo": {"repository": "https://example.com/r.git", "directory": "src"}},
    {"gcePersistentDisk": {"pdName": "pd", "partition": 1}},
    {"awsElasticBlockStore": {"volumeID": "vol-1"}},
    {"fc": {"targetWWNs": ["500a0982991b8dc5"], "lun": 2}},
    {"fc": {"wwids": ["3600508b400105e210000900000490000"]}},
    {"quobyte": {"registry": "host1:7861,[::1]:7861", "volume": "v"}},
    {"azureDisk": {"diskName": "d", "diskURI": "https://a.blob.core.windows.net/c/d.vhd", "cachingMode": "ReadWrite",
                   "kind": "Shared"}},
    {"flexVolume": {"driver": "example/lvm", "options": {"example.com/x": "1"}}},
    {"storageos": {"volumeName": "vol", "volumeNamespace": "ns"}},
]


@pytest.mark.parametrize("source", GOOD)
def test_valid_sources_have_no_causes(source: dict[str, Any]) -> None:
    assert _pairs(validate_volume_source({"name": "v", **source}, V, resource_is_pod=True)) == []


def test_more_than_one_source_and_none() -> None:
    assert _vol(emptyDir={}, hostPath={"path": "/x"}, secret={"secretName": "s"}) == [
        (f"{V}.hostPath", "Forbidden: may not specify more than 1 volume type"),
        (f"{V}.secret", "Forbidden: may not specify more than 1 volume type")]
    # the refused sources are not validated; the first one is
    assert _vol(hostPath={}, configMap={}) == [
        (f"{V}.hostPath.path", "Required value"),
        (f"{V}.configMap", "Forbidden: may not specify more than 1 volume type")]
    assert _vol() == [(V, "Required value: must specify a volume type")]
    assert _vol(emptyDir=None) == [(V, "Required value: must specify a volume type")]


def test_second_source_paths_keep_kubes_spellings() -> None:
    assert _vol(emptyDir={}, cephfs={"monitors": ["m"]}, downwardAPI={}) == [
        (f"{V}.cephFS", "Forbidden: may not specify more than 1 volume type"),
        (f"{V}.downwarAPI", "Forbidden: may not specify more than 1 volume type")]


def test_empty_dir_size_limit() -> None:
    assert _vol(emptyDir={"sizeLimit": "-1Gi"}) == [
        (f"{V}.emptyDir.sizeLimit", "Forbidden: SizeLimit field must be a valid resource quantity")]
    assert _vol(emptyDir={"sizeLimit": "0", "medium": "Anything"}) == []


def test_host_path() -> None:
    assert _vol(hostPath={"type": "Bogus"}) == [(f"{V}.hostPath.path", "Required value")]
    assert _vol(hostPath={"path": "/a/../b", "type": "Bogus"}) == [
        (f"{V}.hostPath.path", 'Invalid value: "/a/../b": must not contain \'..\''),
        (f"{V}.hostPath.type", f'Unsupported value: "Bogus": supported values: {HOST_PATH_TYPES}')]
    assert _vol(hostPath={"path": "/a/..b"}) == []


def test_git_repo() -> None:
    assert _vol(gitRepo={"directory": "/abs/../x"}) == [
        (f"{V}.gitRepo.repository", "Required value"),
        (f"{V}.gitRepo.directory", 'Invalid value: "/abs/../x": must be a relative path'),
        (f"{V}.gitRepo.directory", 'Invalid value: "/abs/../x": must not contain \'..\'')]


def test_cloud_disks() -> None:
    assert _vol(gcePersistentDisk={"partition": 256}) == [
        (f"{V}.persistentDisk.pdName", "Required value"),
        (f"{V}.persistentDisk.partition", "Invalid value: 256: must be between 1 and 255, inclusive")]
    assert _vol(awsElasticBlockStore={"partition": -1}) == [
        (f"{V}.awsElasticBlockStore.volumeID", "Required value"),
        (f"{V}.awsElasticBlockStore.partition", "Invalid value: -1: must be between 1 and 255, inclusive")]
    assert _vol(azureFile={}) == [(f"{V}.azureFile.secretName", "Required value"),
                                  (f"{V}.azureFile.shareName", "Required value")]
    assert _vol(vsphereVolume={}) == [(f"{V}.vsphereVolume.volumePath", "Required value")]
    assert _vol(photonPersistentDisk={}) == [(f"{V}.photonPersistentDisk.pdID", "Required value")]
    assert _vol(portworxVolume={}) == [(f"{V}.portworxVolume.volumeID", "Required value")]
    assert _vol(scaleIO={"system": "s"}) == [(f"{V}.scaleIO.gateway", "Required value"),
                                             (f"{V}.scaleIO.volumeName", "Required value")]
    assert _vol(cinder={"secretRef": {}}) == [(f"{V}.cinder.volumeID", "Required value"),
                                              (f"{V}.cinder.secretRef.name", "Required value")]
    assert _vol(rbd={}) == [(f"{V}.rbd.monitors", "Required value"), (f"{V}.rbd.image", "Required value")]
    assert _vol(cephfs={}) == [(f"{V}.cephfs.monitors", "Required value")]
    assert _vol(glusterfs={}) == [(f"{V}.glusterfs.endpoints", "Required value"),
                                  (f"{V}.glusterfs.path", "Required value")]


def test_azure_disk() -> None:
    assert _vol(azureDisk={"cachingMode": "Fast", "kind": "Weird"}) == [
        (f"{V}.azureDisk.diskName", "Required value"),
        (f"{V}.azureDisk.diskURI", "Required value"),
        (f"{V}.azureDisk.cachingMode", 'Unsupported value: "Fast": supported values: "None", "ReadOnly", '
                                       '"ReadWrite"'),
        (f"{V}.azureDisk.kind", 'Unsupported value: "Weird": supported values: "Dedicated", "Managed", "Shared"'),
        (f"{V}.azureDisk.diskURI", 'Unsupported value: "": supported values: '
                                   '"https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"')]
    assert _vol(azureDisk={"diskName": "d", "diskURI": "https://x", "kind": "Managed"}) == [
        (f"{V}.azureDisk.diskURI", 'Unsupported value: "https://x": supported values: "/subscriptions/{sub-id}/'
                                   'resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"')]


def test_flocker_fc_flex_quobyte_storageos() -> None:
    assert _vol(flocker={}) == [(f"{V}.flocker", "Required value: one of datasetName and datasetUUID is required")]
    assert _vol(flocker={"datasetName": "a/b", "datasetUUID": "u"}) == [
        (f"{V}.flocker", 'Invalid value: "resource": datasetName and datasetUUID can not be specified simultaneously'),
        (f"{V}.flocker.datasetName", 'Invalid value: "a/b": must not contain \'/\'')]
    assert _vol(fc={}) == [(f"{V}.fc.targetWWNs", "Required value: must specify either targetWWNs or wwids, but not "
                                                  "both")]
    assert _vol(fc={"targetWWNs": ["a"], "wwids": ["b"]}) == [
        (f"{V}.fc.targetWWNs", 'Invalid value: []string{"a"}: targetWWNs and wwids can not be specified '
                               'simultaneously'),
        (f"{V}.fc.lun", "Required value: lun is required if targetWWNs is specified")]
    assert _vol(fc={"targetWWNs": ["a"], "lun": 300}) == [
        (f"{V}.fc.lun", "Invalid value: 300: must be between 0 and 255, inclusive")]
    assert _vol(flexVolume={"options": {"kubernetes.io/x": "1", "a.k8s.io": "2", "ok": "3"}}) == [
        (f"{V}.flexVolume.driver", "Required value"),
        (f"{V}.flexVolume.options[a.k8s.io]", 'Invalid value: "a.k8s.io": kubernetes.io and k8s.io namespaces are '
                                              'reserved'),
        (f"{V}.flexVolume.options[kubernetes.io/x]", 'Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io '
                                                     'namespaces are reserved')]
    registry = "must be a host:port pair or multiple pairs separated by commas"
    assert _vol(quobyte={}) == [(f"{V}.quobyte.registry", f"Required value: {registry}"),
                                (f"{V}.quobyte.volume", "Required value")]
    assert _vol(quobyte={"registry": "a:1,b,c:d:e", "volume": "v"}) == [
        (f"{V}.quobyte.registry", f'Invalid value: "a:1,b,c:d:e": {registry}'),
        (f"{V}.quobyte.registry", f'Invalid value: "a:1,b,c:d:e": {registry}')]
    assert _vol(quobyte={"registry": "a:1", "tenant": "t" * 65, "volume": "v"}) == [
        (f"{V}.quobyte.tenant", "Required value: must be a UUID and may not exceed a length of 64 characters")]
    assert _vol(storageos={"volumeName": "a.b", "volumeNamespace": "N", "secretRef": {}}) == [
        (f"{V}.storageos.volumeName", 'Invalid value: "a.b": must not contain dots'),
        (f"{V}.storageos.volumeNamespace", "Invalid value: \"N\": a lowercase RFC 1123 label must consist of lower "
         "case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. "
         "'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
        (f"{V}.storageos.secretRef.name", "Required value")]
    assert _vol(storageos={}) == [(f"{V}.storageos.volumeName", "Required value")]


def test_secret_and_key_to_path() -> None:
    items = [{}, {"key": "k", "path": "/abs", "mode": -1}, {"key": "k", "path": "../x"}, {"key": "k", "path": "..x"}]
    assert _vol(secret={"defaultMode": 0o1000, "items": items}) == [
        (f"{V}.secret.secretName", "Required value"),
        (f"{V}.secret.defaultMode", f"Invalid value: 512: {MODE}"),
        (f"{V}.secret.items[0].key", "Required value"),
        (f"{V}.secret.items[0].path", "Required value"),
        (f"{V}.secret.items[1].path", 'Invalid value: "/abs": must be a relative path'),
        (f"{V}.secret.items[1].mode", f"Invalid value: -1: {MODE}"),
        (f"{V}.secret.items[2].path", 'Invalid value: "../x": must not contain \'..\''),
        (f"{V}.secret.items[3].path", 'Invalid value: "..x": must not start with \'..\'')]


def test_config_map() -> None:
    assert _vol(configMap={"defaultMode": -1, "items": [{"key": "k", "path": "a/../b"}]}) == [
        (f"{V}.configMap.name", "Required value"),
        (f"{V}.configMap.defaultMode", f"Invalid value: -1: {MODE}"),
        (f"{V}.configMap.items[0].path", 'Invalid value: "a/../b": must not contain \'..\'')]


def test_local_non_reserved_path_both_dotdot_rules() -> None:
    assert _pairs(validate_local_non_reserved_path("..", "p")) == [
        ("p", 'Invalid value: "..": must not contain \'..\''), ("p", 'Invalid value: "..": must not start with \'..\'')]
    assert _pairs(validate_local_non_reserved_path("a", "p")) == []


def test_downward_api_items_report_at_the_source_path() -> None:
    d = f"{V}.downwardAPI"
    assert _vol(downwardAPI={"defaultMode": 0o1777, "items": [
        {},
        {"path": "a", "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}, "resourceFieldRef": {},
         "mode": 0o1000},
        {"path": "b", "fieldRef": {"fieldPath": "metadata.name"}},
        {"path": "c", "fieldRef": {"apiVersion": "v1"}},
        {"path": "d", "fieldRef": {"apiVersion": "v2", "fieldPath": "metadata.name"}},
        {"path": "e", "fieldRef": {"apiVersion": "v1", "fieldPath": "status.bogus"}},
        {"path": "f", "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.host"}},
        {"path": "g", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name['x']"}},
        {"path": "h", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['-bad']"}},
    ]}) == [
        (f"{d}.defaultMode", f"Invalid value: 1023: {MODE}"),
        (f"{d}.path", "Required value"),
        (d, "Required value: one of fieldRef and resourceFieldRef is required"),
        (f"{d}.fieldRef.fieldPath", 'Unsupported value: "spec.nodeName": supported values: "metadata.annotations", '
                                    '"metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"'),
        (d, 'Invalid value: "resource": fieldRef and resourceFieldRef can not be specified simultaneously'),
        (f"{d}.mode", f"Invalid value: 512: {MODE}"),
        (f"{d}.fieldRef.apiVersion", "Required value"),
        (f"{d}.fieldRef.fieldPath", "Required value"),
        (f"{d}.fieldRef.fieldPath", 'Invalid value: "metadata.name": error converting fieldPath: unsupported pod '
                                    'version: v2'),
        (f"{d}.fieldRef.fieldPath", 'Invalid value: "status.bogus": error converting fieldPath: field label not '
                                    'supported: status.bogus'),
        (f"{d}.fieldRef.fieldPath", 'Unsupported value: "spec.nodeName": supported values: "metadata.annotations", '
                                    '"metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"'),
        (f"{d}.fieldRef.fieldPath", 'Invalid value: "metadata.name[\'x\']": error converting fieldPath: field label '
                                    'does not support subscript: metadata.name[\'x\']'),
        (f"{d}.fieldRef", "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or "
                          "'.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name', "
                          " or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
    ]


def test_downward_api_resource_field_ref() -> None:
    d = f"{V}.downwardAPI"
    assert _vol(downwardAPI={"items": [
        {"path": "a", "resourceFieldRef": {"resource": "limits.cpu"}},
        {"path": "b", "resourceFieldRef": {"containerName": "c"}},
        {"path": "c", "resourceFieldRef": {"containerName": "c", "resource": "limits.gpu"}},
        {"path": "d", "resourceFieldRef": {"containerName": "c", "resource": "limits.cpu", "divisor": "2"}},
        {"path": "e", "resourceFieldRef": {"containerName": "c", "resource": "requests.memory", "divisor": "3Mi"}},
        {"path": "f", "resourceFieldRef": {"containerName": "c", "resource": "limits.ephemeral-storage",
                                           "divisor": "1m"}},
        {"path": "g", "resourceFieldRef": {"containerName": "c", "resource": "limits.hugepages-1Gi",
                                           "divisor": "5"}},
        {"path": "h", "resourceFieldRef": {"containerName": "c", "resource": "limits.memory", "divisor": "1024Ki"}},
    ]}) == [
        (f"{d}.resourceFieldRef.containerName", "Required value"),
        (f"{d}.resourceFieldRef.resource", "Required value"),
        (f"{d}.resourceFieldRef.resource", 'Unsupported value: "limits.gpu": supported values: "limits.cpu", '
                                           '"limits.ephemeral-storage", "limits.memory", "requests.cpu", '
                                           '"requests.ephemeral-storage", "requests.memory"'),
        (f"{d}.resourceFieldRef.divisor", 'Invalid value: "limits.cpu": only divisor\'s values 1m and 1 are '
                                          'supported with the cpu resource'),
        (f"{d}.resourceFieldRef.divisor", 'Invalid value: "requests.memory": only divisor\'s values 1, 1k, 1M, 1G, '
                                          '1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory '
                                          'resource'),
        (f"{d}.resourceFieldRef.divisor", 'Invalid value: "limits.ephemeral-storage": only divisor\'s values 1, 1k, '
                                          '1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the '
                                          'local ephemeral storage resource'),
        (f"{d}.resourceFieldRef.divisor", 'Invalid value: "limits.hugepages-1Gi": only divisor\'s values 1, 1k, 1M, '
                                          '1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the '
                                          'hugepages resource'),
    ]


def test_projected_sources() -> None:
    p = f"{V}.projected"
    assert _vol(projected={"defaultMode": 0o1000, "sources": [
        {"secret": {"items": [{"key": "k", "path": "a"}]}},
        {"configMap": {"name": "cm", "items": [{"key": "k", "path": "a"}, {"path": ""}]}},
        {"downwardAPI": {"items": [{"path": "a", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.uid"}}]}},
        {"secret": {"name": "s"}, "configMap": {"name": "c"}},
        {},
    ]}) == [
        (f"{p}.defaultMode", f"Invalid value: 512: {MODE}"),
        (f"{p}.sources[0].secret.name", "Required value"),
        (p, 'Invalid value: "cm": conflicting duplicate paths'),
        (f"{p}.sources[1].configMap.items[1].key", "Required value"),
        (f"{p}.sources[1].configMap.items[1].path", "Required value"),
        (p, 'Invalid value: "a": conflicting duplicate paths'),
        (f"{p}.sources[3]", "Forbidden: may not specify more than 1 volume type per source"),
    ]


def test_projected_service_account_token() -> None:
    p = f"{V}.projected"
    assert _vol(projected={"sources": [
        {"serviceAccountToken": {"expirationSeconds": 599}},
        {"serviceAccountToken": {"path": "/abs", "expirationSeconds": (1 << 32) + 1}},
        {"serviceAccountToken": {"path": "..t", "expirationSeconds": 600}},
        {"serviceAccountToken": {"path": "t", "expirationSeconds": 1 << 32}, "secret": {"name": "s"}},
    ]}) == [
        (f"{p}.sources[0].serviceAccountToken.expirationSeconds",
         "Invalid value: 599: may not specify a duration less than 10 minutes"),
        (f"{p}.path", "Required value"),
        (f"{p}.sources[1].serviceAccountToken.expirationSeconds",
         "Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds"),
        (f"{p}.path", 'Invalid value: "/abs": must be a relative path'),
        (f"{p}.path", 'Invalid value: "..t": must not start with \'..\''),
        (f"{p}.sources[3]", "Forbidden: may not specify more than 1 volume type per source"),
    ]


def test_gated_projections_are_not_counted() -> None:
    # clusterTrustBundle and podCertificate are dropped while their (off by default) gates are off
    assert _vol(projected={"sources": [{"clusterTrustBundle": {"path": "x"}, "secret": {"name": "s"}},
                                       {"podCertificate": {}}]}) == []


def test_token_projection_needs_service_account() -> None:
    spec = {"volumes": [{"name": "a", "emptyDir": {}},
                        {"name": "b", "projected": {"sources": [{"secret": {"name": "s"}},
                                                                {"serviceAccountToken": {"path": "t"}}]}}]}
    assert _pairs(validate_token_projections_need_service_account(spec)) == [
        ("spec.volumes[1].projected.sources[1].serviceAccountToken",
         "Forbidden: must not be specified when serviceAccountName is not set")]
    assert validate_token_projections_need_service_account({**spec, "serviceAccountName": "default"}) == []


def test_pvc_nfs() -> None:
    assert _vol(persistentVolumeClaim={}) == [(f"{V}.persistentVolumeClaim.claimName", "Required value")]
    assert _vol(nfs={}) == [(f"{V}.nfs.server", "Required value"), (f"{V}.nfs.path", "Required value"),
                            (f"{V}.nfs.path", 'Invalid value: "": must be an absolute path')]
    assert _vol(nfs={"server": "s", "path": "rel"}) == [(f"{V}.nfs.path", 'Invalid value: "rel": must be an absolute '
                                                                          'path')]


def test_iscsi() -> None:
    i = f"{V}.iscsi"
    assert _vol(iscsi={"lun": 256, "chapAuthSession": True}) == [
        (f"{i}.targetPortal", "Required value"), (f"{i}.iqn", "Required value"),
        (f"{i}.lun", "Invalid value: 256: must be between 0 and 255, inclusive"),
        (f"{i}.secretRef", "Required value")]
    assert _vol(iscsi={"targetPortal": "p", "iqn": "xyz"}) == [
        (f"{i}.iqn", 'Invalid value: "xyz": must be valid format starting with iqn, eui, or naa')]
    assert _vol(iscsi={"targetPortal": "p", "iqn": "iqn.2001-04.com.example"}) == [
        (f"{i}.iqn", 'Invalid value: "iqn.2001-04.com.example": must be valid format')]
    assert _vol(iscsi={"targetPortal": "p", "iqn": "eui.02004567A425678D"}) == []
    assert _vol(iscsi={"targetPortal": "p", "iqn": "naa.short", "initiatorName": "bad"}) == [
        (f"{i}.iqn", 'Invalid value: "naa.short": must be valid format'),
        (f"{i}.initiatorname", 'Invalid value: "bad": must be valid format starting with iqn, eui, or naa')]
    portal = "p" * 62  # "v:" + 62 characters = 64: fine; one more is too long
    assert _vol(iscsi={"targetPortal": portal, "iqn": "eui.02004567A425678D",
                       "initiatorName": "eui.02004567A425678D"}) == []
    assert _vol(iscsi={"targetPortal": portal + "p", "iqn": "eui.02004567A425678D",
                       "initiatorName": "eui.02004567A425678D"}) == [
        (f"{V}.name", 'Invalid value: "v": Total length of <volume name>:<iscsi.targetPortal> must be under 64 '
                      'characters if iscsi.initiatorName is specified.')]


def test_csi() -> None:
    assert _vol(csi={}) == [(f"{V}.csi.driver", "Required value"),
                            (f"{V}.csi.driver", f'Invalid value: "": {SUBDOMAIN}')]
    assert _vol(csi={"driver": "CSI.Example.com", "nodePublishSecretRef": {"name": "Bad_Name"}}) == [
        (f"{V}.csi.name", f'Invalid value: "Bad_Name": {SUBDOMAIN}')]
    assert _vol(csi={"driver": "d", "nodePublishSecretRef": {}}) == [
        (f"{V}.csi.nodePublishSecretRef.name", "Required value")]
    assert _pairs(validate_csi_driver_name("a" * 64, "d")) == [("d", "Too long: may not be more than 63 bytes")]
    assert _pairs(validate_csi_driver_name("bad_driver", "d")) == [("d", f'Invalid value: "bad_driver": {SUBDOMAIN}')]


def test_image() -> None:
    assert _pairs(validate_volume_source({"name": "v", "image": {}}, V, resource_is_pod=True)) == [
        (f"{V}.image.reference", "Required value"), (f"{V}.image.pullPolicy", "Required value")]
    # in a pod template the reference may be left for a controller to fill in
    assert _vol(image={"pullPolicy": "Sometimes"}) == [
        (f"{V}.image.pullPolicy", 'Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", '
                                  '"Never"')]


def test_ephemeral() -> None:
    e = f"{V}.ephemeral.volumeClaimTemplate"
    assert _vol(ephemeral={}) == [(e, "Required value")]
    assert _vol(ephemeral={"volumeClaimTemplate": {}}) == [
        (f"{e}.spec.accessModes", "Required value: at least 1 access mode is required"),
        (f"{e}.spec.resources[storage]", "Required value")]
    assert _vol(ephemeral={"volumeClaimTemplate": {
        "metadata": {"name": "x", "uid": "u", "generation": 0, "creationTimestamp": None, "labels": {"a": "-b"}},
        "spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "Sometimes"],
                 "resources": {"requests": {"storage": "0Gi"}}, "volumeMode": "Raw", "storageClassName": "Fast"}}}) == [
        (f"{e}.metadata.labels", "Invalid value: \"-b\": a valid label must be an empty string or consist of "
                                 "alphanumeric characters, '-', '_' or '.', and must start and end with an "
                                 "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
                                 "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        (f"{e}.metadata.name", "Forbidden: cannot be set"),
        (f"{e}.metadata.uID", "Forbidden: cannot be set"),
        (f"{e}.spec.accessModes", 'Unsupported value: "Sometimes": supported values: "ReadOnlyMany", '
                                  '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"'),
        (f"{e}.spec.accessModes", "Forbidden: may not use ReadWriteOncePod with other access modes"),
        (f"{e}.spec.resources[storage]", 'Invalid value: "0": must be greater than zero'),
        (f"{e}.spec.storageClassName", f'Invalid value: "Fast": {SUBDOMAIN}'),
        (f"{e}.spec.volumeMode", 'Unsupported value: "Raw": supported values: "Block", "Filesystem"')]


def test_ephemeral_claim_name_with_the_pod_name() -> None:
    vol = {"name": "v", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}
    assert _pairs(validate_volume_source(vol, V, pod_name="pod")) == []
    assert _pairs(validate_volume_source(vol, V, pod_name="p" * 252)) == [
        (f"{V}.name", f'Invalid value: "v": PVC name "{"p" * 252}-v": must be no more than 253 characters')]


def test_claim_spec_data_sources_and_selector() -> None:
    spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "selector": {"matchLabels": {"a": "-"}},
            "dataSource": {"kind": "Snapshot"},
            "dataSourceRef": {"name": "n", "kind": "K", "apiGroup": "Bad_Group", "namespace": "NS"},
            "volumeAttributesClassName": "Gold"}
    label_msg = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
                 "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
                 "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
    dns_label = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                 "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
    assert _pairs(validate_claim_spec(spec, "s")) == [
        ("s.selector.matchLabels", f'Invalid value: "-": {label_msg}'),
        ("s.dataSource.name", "Required value"),
        ("s.dataSource", "Invalid value: \"Snapshot\": must be 'PersistentVolumeClaim' when referencing the default "
                         "apiGroup"),
        ("s.dataSourceRef.apiGroup", f'Invalid value: "Bad_Group": {SUBDOMAIN}'),
        ("s.dataSourceRef.namespace", f'Invalid value: "NS": {dns_label}'),
        ("s", "Invalid value: s.dataSource: may not be specified when dataSourceRef.namespace is specified"),
        ("s.volumeAttributesClassName", f'Invalid value: "Gold": {SUBDOMAIN}')]
    spec.pop("volumeAttributesClassName")
    spec["dataSourceRef"] = {"name": "other", "kind": "PersistentVolumeClaim"}
    spec["dataSource"] = {"name": "n", "kind": "PersistentVolumeClaim"}
    assert _pairs(validate_claim_spec(spec, "s"))[-1] == ("s", "Invalid value: s.dataSource: must match dataSourceRef")


def test_claim_conflict_and_list_helper() -> None:
    volumes = [{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
                   "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}},
               {"name": "data", "persistentVolumeClaim": {"claimName": "pod-scratch"}},
               {"name": "bad"}]
    conflict = ("spec.volumes[1].persistentVolumeClaim.claimName",
                'Invalid value: "pod-scratch": must not reference a PVC that gets created for an ephemeral volume')
    assert _pairs(ephemeral_claim_conflict(volumes[1], "spec.volumes[1]", volumes, "pod")) == [conflict]
    assert ephemeral_claim_conflict(volumes[1], "spec.volumes[1]", volumes, None) == []
    assert _pairs(validate_volume_sources(volumes, "spec.volumes", pod_name="pod")) == [
        conflict, ("spec.volumes[2]", "Required value: must specify a volume type")]
    assert _pairs(validate_volume_sources(volumes, "spec.volumes")) == [
        ("spec.volumes[2]", "Required value: must specify a volume type")]


@pytest.mark.parametrize("bad", ["x", 3, None, [1], {"secret": "x"}, {"secret": {"items": "x", "defaultMode": "x"}},
                                 {"projected": {"sources": ["x", None]}}, {"downwardAPI": {"items": [3, None]}},
                                 {"ephemeral": {"volumeClaimTemplate": {"metadata": "x", "spec": []}}},
                                 {"emptyDir": {"sizeLimit": "lots"}}, {"hostPath": {"path": 3, "type": 4}}])
def test_wrong_json_types_do_not_raise(bad: Any) -> None:
    validate_volume_source(bad, V, pod_name="p", resource_is_pod=True)
    validate_volume_sources([bad], "spec.volumes", pod_name="p")
    validate_volume_sources(bad, "spec.volumes")
    validate_token_projections_need_service_account(bad)
