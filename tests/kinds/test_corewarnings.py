"""kapi.kinds.corewarnings: kube 1.37's create/update warnings of PVs, PVCs, Nodes, Endpoints and Services."""

from __future__ import annotations

from kapi.kinds.corewarnings import (
    cidr_warnings,
    claim_spec_warnings,
    endpoints_update_warnings,
    endpoints_warnings,
    ip_warnings,
    node_selector_term_warnings,
    node_update_warnings,
    node_warnings,
    persistent_volume_claim_update_warnings,
    persistent_volume_claim_warnings,
    persistent_volume_update_warnings,
    persistent_volume_warnings,
    service_status_update_warnings,
    service_update_warnings,
    service_warnings,
)

SC = 'metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" ' \
     "attribute instead"
MO = 'metadata.annotations[volume.beta.kubernetes.io/mount-options]: deprecated since v1.31; use "mountOptions" ' \
     "attribute instead"
TERM = "spec.nodeAffinity.required.nodeSelectorTerms"


# ------------------------------------------------------------ GetWarningsForIP / GetWarningsForCIDR

def test_ip_warnings_standard_values_and_non_ips_warn_nothing():
    for value in ("1.2.3.4", "fd00::1234", "2001:db8::2", "", "bogus", None, 7, "fe80::1%eth0"):
        assert ip_warnings("spec.x", value) == []


def test_ip_warnings_leading_zeros_and_ipv4_mapped():
    assert ip_warnings("spec.x", "01.02.03.04") == [
        'spec.x: non-standard IP address "01.02.03.04" will be considered invalid in a future Kubernetes release: '
        'use "1.2.3.4"']
    assert ip_warnings("subsets[1].addresses[0].ip", "::ffff:1.2.3.4") == [
        'subsets[1].addresses[0].ip: non-standard IP address "::ffff:1.2.3.4" will be considered invalid in a '
        'future Kubernetes release: use "1.2.3.4"']


def test_ip_warnings_non_canonical_ipv6():
    assert ip_warnings("spec.loadBalancerIP", "2001:db8:0:0::2") == [
        'spec.loadBalancerIP: IPv6 address "2001:db8:0:0::2" should be in RFC 5952 canonical format ("2001:db8::2")']
    assert ip_warnings("p", "2001:DB8::1") == [
        'p: IPv6 address "2001:DB8::1" should be in RFC 5952 canonical format ("2001:db8::1")']
    assert ip_warnings("p", "::1.2.3.4") == [
        'p: IPv6 address "::1.2.3.4" should be in RFC 5952 canonical format ("::102:304")']


def test_cidr_warnings_standard_and_unparsable():
    for value in ("10.0.0.0/8", "2001:db8::/64", "0.0.0.0/0", "10.0.0.0", "10.0.0.0/33", " 10.0.0.0/8", None, ""):
        assert cidr_warnings("p", value) == []


def test_cidr_warnings_ambiguous_then_non_standard():
    assert cidr_warnings("p", "10.0.0.5/8") == [
        'p: CIDR value "10.0.0.5/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.5/32"?)']
    assert cidr_warnings("p", "010.0.0.5/8") == [
        'p: CIDR value "010.0.0.5/8" is ambiguous in this context (should be "10.0.0.0/8" or "10.0.0.5/32"?)',
        'p: non-standard CIDR value "010.0.0.5/8" will be considered invalid in a future Kubernetes release: '
        'use "10.0.0.0/8"']
    assert cidr_warnings("p", "10.0.0.0/08") == [
        'p: non-standard CIDR value "10.0.0.0/08" will be considered invalid in a future Kubernetes release: '
        'use "10.0.0.0/8"']
    assert cidr_warnings("p", "::ffff:1.2.3.0/120") == [
        'p: non-standard CIDR value "::ffff:1.2.3.0/120" will be considered invalid in a future Kubernetes '
        'release: use "1.2.3.0/24"']


def test_cidr_warnings_non_canonical_ipv6_only_without_other_warnings():
    assert cidr_warnings("spec.loadBalancerSourceRanges[0]", "2001:db8:1:0::/64") == [
        'spec.loadBalancerSourceRanges[0]: IPv6 CIDR value "2001:db8:1:0::/64" should be in RFC 5952 canonical '
        'format ("2001:db8:1::/64")']
    assert cidr_warnings("p", "2001:DB8::1/64") == [
        'p: CIDR value "2001:DB8::1/64" is ambiguous in this context (should be "2001:db8::/64" or '
        '"2001:db8::1/128"?)']


# ------------------------------------------------------------ PersistentVolume

def _pv(**spec):
    return {"metadata": {"name": "pv"}, "spec": {"persistentVolumeReclaimPolicy": "Retain", "capacity":
                                                 {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], **spec}}


def test_pv_without_warnings():
    assert persistent_volume_warnings(_pv(hostPath={"path": "/tmp"})) == []
    assert persistent_volume_warnings({}) == []
    assert persistent_volume_warnings({"spec": [], "metadata": "x"}) == []


def test_pv_annotations_recycle_node_labels_in_kube_order():
    pv = _pv(persistentVolumeReclaimPolicy="Recycle", nodeAffinity={"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "beta.kubernetes.io/os", "operator": "In", "values": ["windows"]},
                              {"key": "zone", "operator": "In", "values": ["a b"]}]},
        {"matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone", "operator": "Exists"}]}]}})
    pv["metadata"]["annotations"] = {"volume.beta.kubernetes.io/mount-options": "hard",
                                     "volume.beta.kubernetes.io/storage-class": "x"}
    assert persistent_volume_warnings(pv) == [
        SC, MO,
        "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended "
        "approach is to use dynamic provisioning.",
        f'{TERM}[0].matchExpressions[0].key: beta.kubernetes.io/os is deprecated since v1.14; use '
        '"kubernetes.io/os" instead',
        f"{TERM}[0].matchExpressions[1].values[0]: a b is invalid, a valid label must be an empty string or consist "
        "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        f'{TERM}[1].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use '
        '"topology.kubernetes.io/zone" instead',
    ]


def test_pv_deprecated_sources_in_kube_order():
    pv = _pv(rbd={"image": "i"}, cephfs={"monitors": ["m"]}, glusterfs={"path": "p"}, storageOS={},
             scaleIO={}, photonPersistentDisk={"pdID": "x"})
    assert persistent_volume_warnings(pv) == [
        "spec.cephfs: deprecated in v1.28, non-functional in v1.31+",
        "spec.photonPersistentDisk: deprecated in v1.11, non-functional in v1.16+",
        "spec.scaleIO: deprecated in v1.16, non-functional in v1.22+",
        "spec.storageOS: deprecated in v1.22, non-functional in v1.25+",
        "spec.glusterfs: deprecated in v1.25, non-functional in v1.26+",
        "spec.rbd: deprecated in v1.28, non-functional in v1.31+",
    ]


def test_pv_update_warns_about_the_new_object():
    old = _pv()
    new = _pv(persistentVolumeReclaimPolicy="Recycle")
    assert persistent_volume_update_warnings(new, old) == [
        "spec.persistentVolumeReclaimPolicy: The Recycle reclaim policy is deprecated. Instead, the recommended "
        "approach is to use dynamic provisioning."]
    assert persistent_volume_update_warnings(old, new) == []


def test_node_selector_term_warnings_skip_match_fields_and_values_by_default():
    term = {"matchExpressions": [{"key": "node-role.kubernetes.io/master", "operator": "Exists", "values": ["/"]}],
            "matchFields": [{"key": "beta.kubernetes.io/arch", "operator": "In", "values": ["x"]}]}
    assert node_selector_term_warnings(term, "t") == [
        't.matchExpressions[0].key: node-role.kubernetes.io/master is use "node-role.kubernetes.io/control-plane" '
        "instead"]
    assert node_selector_term_warnings("bad", "t", check_label_value=True) == []


# ------------------------------------------------------------ PersistentVolumeClaim

def _pvc(requests=None, limits=None, annotations=None):
    resources = {}
    if requests is not None:
        resources["requests"] = {"storage": requests}
    if limits is not None:
        resources["limits"] = {"storage": limits}
    meta = {"name": "c"} | ({"annotations": annotations} if annotations else {})
    return {"metadata": meta, "spec": {"accessModes": ["ReadWriteOnce"], "resources": resources}}


def test_pvc_without_warnings():
    assert persistent_volume_claim_warnings(_pvc("1Gi", "2Gi")) == []
    assert persistent_volume_claim_warnings(_pvc("0.9999")) == []  # rounded up to 1 by SetDefaults_ResourceList
    assert persistent_volume_claim_warnings(_pvc("nope")) == []
    assert persistent_volume_claim_warnings({}) == []


def test_pvc_annotation_then_fractional_requests_then_limits():
    pvc = _pvc("1500m", 2.5, {"volume.beta.kubernetes.io/storage-class": "", "volume.beta.kubernetes.io/"
                               "mount-options": "x"})
    assert persistent_volume_claim_warnings(pvc) == [
        SC,
        'spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
        'spec.resources.limits[storage]: fractional byte value "2500m" is invalid, must be an integer',
    ]
    assert persistent_volume_claim_update_warnings(_pvc("100u"), _pvc("1")) == [
        'spec.resources.requests[storage]: fractional byte value "1m" is invalid, must be an integer']


def test_claim_spec_warnings_at_an_ephemeral_volume_path():
    path = "spec.volumes[0].ephemeral.volumeClaimTemplate.spec"
    assert claim_spec_warnings({"resources": {"limits": {"storage": "1.5"}}}, path) == [
        f'{path}.resources.limits[storage]: fractional byte value "1500m" is invalid, must be an integer']
    assert claim_spec_warnings(None) == []


# ------------------------------------------------------------ Node

def test_node_warnings():
    assert node_warnings({"metadata": {"name": "n"}, "spec": {"podCIDR": "10.0.0.0/24"}}) == []
    assert node_warnings({"spec": {"externalID": ""}}) == []
    assert node_warnings({"spec": {"configSource": {"configMap": {}}, "externalID": "i-123"}}) == [
        "spec.configSource: the feature is removed",
        "spec.externalID: this field is deprecated, and is unused by Kubernetes",
    ]
    assert node_update_warnings({"spec": {"externalID": "x"}}, {"spec": {}}) == [
        "spec.externalID: this field is deprecated, and is unused by Kubernetes"]


# ------------------------------------------------------------ Endpoints

def _endpoints(labels=None):
    return {"metadata": {"name": "e", "labels": labels or {}}, "subsets": [
        {"addresses": [{"ip": "fd00::1234"}, {"ip": "01.02.03.04"}]},
        {"addresses": [{"ip": "::ffff:1.2.3.4"}]},
        {"addresses": [{"ip": "1.2.3.4"}], "notReadyAddresses": [{"ip": "2001:db8:0::1"}]},
    ]}


def test_endpoints_warnings_in_subset_order():
    assert endpoints_warnings(_endpoints()) == [
        'subsets[0].addresses[1].ip: non-standard IP address "01.02.03.04" will be considered invalid in a future '
        'Kubernetes release: use "1.2.3.4"',
        'subsets[1].addresses[0].ip: non-standard IP address "::ffff:1.2.3.4" will be considered invalid in a '
        'future Kubernetes release: use "1.2.3.4"',
        'subsets[2].notReadyAddresses[0].ip: IPv6 address "2001:db8:0::1" should be in RFC 5952 canonical format '
        '("2001:db8::1")',
    ]
    assert endpoints_update_warnings(_endpoints(), {}) == endpoints_warnings(_endpoints())


def test_endpoints_of_the_controller_and_valid_ones_warn_nothing():
    assert endpoints_warnings(_endpoints({"endpoints.kubernetes.io/managed-by": "endpoint-controller"})) == []
    assert endpoints_warnings({"subsets": [{"addresses": [{"ip": "1.2.3.4"}, {}]}]}) == []
    assert endpoints_warnings({"subsets": "x"}) == []


# ------------------------------------------------------------ Service

def _svc(annotations=None, **spec):
    base = {"type": "ClusterIP", "sessionAffinity": "None", "ports": [{"port": 80}]}
    return {"metadata": {"name": "s", "annotations": annotations or {}}, "spec": base | spec}


def test_service_without_warnings():
    assert service_warnings(_svc(clusterIP="10.0.0.1", clusterIPs=["10.0.0.1"])) == []
    assert service_warnings(_svc(annotations={"service.kubernetes.io/topology-mode": "Auto"})) == []
    assert service_warnings({}) == []
    assert service_warnings(_svc(type="ExternalName", externalName="example.com")) == []
    assert service_warnings(_svc(trafficDistribution="PreferSameZone")) == []


def test_service_all_ip_fields_in_kube_order():
    svc = _svc(annotations={"service.kubernetes.io/topology-aware-hints": "auto"}, type="LoadBalancer",
               clusterIP="2001:db8:0:0::2", clusterIPs=["2001:db8:0:0::2", "192.012.2.2"],
               externalIPs=["2001:db8:1:0::2", "10.012.2.2"], loadBalancerIP="10.001.1.1",
               loadBalancerSourceRanges=["2001:db8:1:0::/64", "10.012.2.0/24"], externalName="x.example",
               trafficDistribution="PreferClose")
    assert service_warnings(svc) == [
        "annotation service.kubernetes.io/topology-aware-hints is deprecated, please use "
        "service.kubernetes.io/topology-mode instead",
        'spec.clusterIPs[0]: IPv6 address "2001:db8:0:0::2" should be in RFC 5952 canonical format ("2001:db8::2")',
        'spec.clusterIPs[1]: non-standard IP address "192.012.2.2" will be considered invalid in a future '
        'Kubernetes release: use "192.12.2.2"',
        'spec.externalIPs[0]: IPv6 address "2001:db8:1:0::2" should be in RFC 5952 canonical format '
        '("2001:db8:1::2")',
        'spec.externalIPs[1]: non-standard IP address "10.012.2.2" will be considered invalid in a future '
        'Kubernetes release: use "10.12.2.2"',
        "spec.externalIPs is deprecated and may no longer be implemented in some clusters",
        'spec.loadBalancerIP: non-standard IP address "10.001.1.1" will be considered invalid in a future '
        'Kubernetes release: use "10.1.1.1"',
        'spec.loadBalancerSourceRanges[0]: IPv6 CIDR value "2001:db8:1:0::/64" should be in RFC 5952 canonical '
        'format ("2001:db8:1::/64")',
        'spec.loadBalancerSourceRanges[1]: non-standard CIDR value "10.012.2.0/24" will be considered invalid in a '
        'future Kubernetes release: use "10.12.2.0/24"',
        'spec.externalName is ignored when spec.type is not "ExternalName"',
        'spec.trafficDistribution: "PreferClose" is deprecated; use "PreferSameZone"',
    ]


def test_service_headless_ignored_fields():
    svc = _svc(clusterIP="None", clusterIPs=["None"], loadBalancerIP="1.2.3.4", externalIPs=["1.2.3.4"],
               sessionAffinity="ClientIP")
    assert service_warnings(svc) == [
        "spec.loadBalancerIP is ignored for headless services",
        "spec.externalIPs is ignored for headless services",
        "spec.SessionAffinity is ignored for headless services",
    ]


def test_service_cluster_ips_only_checked_when_cluster_ip_is_set():
    assert service_warnings(_svc(clusterIPs=["01.1.1.1"])) == []


def test_service_external_name_with_external_ips():
    svc = _svc(type="ExternalName", externalName="example.com", externalIPs=["1.2.3.4"])
    assert service_warnings(svc) == ['spec.externalIPs is ignored when spec.type is "ExternalName"']


def test_service_update_and_status_update():
    old = _svc(clusterIP="10.0.0.1", clusterIPs=["10.0.0.1"])
    new = _svc(clusterIP="10.0.0.1", clusterIPs=["10.0.0.1"], externalIPs=["1.2.3.4"])
    assert service_update_warnings(new, old) == [
        "spec.externalIPs is deprecated and may no longer be implemented in some clusters"]
    status = {"status": {"loadBalancer": {"ingress": [{"hostname": "h"}, {"ip": "1.2.3.4"}, {"ip": "01.2.3.4"},
                                                      {"ip": "2001:db8:0::1"}]}}}
    assert service_status_update_warnings(status, old) == [
        'status.loadBalancer.ingress[2]: non-standard IP address "01.2.3.4" will be considered invalid in a future '
        'Kubernetes release: use "1.2.3.4"',
        'status.loadBalancer.ingress[3]: IPv6 address "2001:db8:0::1" should be in RFC 5952 canonical format '
        '("2001:db8::1")',
    ]
    assert service_status_update_warnings({}, old) == []
