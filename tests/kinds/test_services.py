"""kapi.kinds.services: the rest of kube 1.37's ValidateService / ValidateServiceUpdate, cause for cause."""

from __future__ import annotations

from kapi.kinds.services import (
    ANNOTATION_LOAD_BALANCER_SOURCE_RANGES,
    validate_allocate_load_balancer_node_ports,
    validate_duplicate_ports,
    validate_external_ips,
    validate_external_traffic_fields_update,
    validate_internal_traffic_policy,
    validate_load_balancer_class,
    validate_load_balancer_source_ranges,
    validate_service_port_rest,
    validate_service_selector,
    validate_service_update_rest,
    validate_session_affinity_config,
    validate_spec_after_external_traffic_policy,
    validate_spec_before_external_traffic_policy,
    validate_topology_annotations,
    validate_traffic_distribution,
    validate_upgrade_downgrade_ip_families,
)
from kapi.validation import VALID_CIDR_MSG, VALID_IP_MSG

LB_ONLY = "Forbidden: may only be used when `type` is 'LoadBalancer'"
QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
ANNOTATION_PATH = f"metadata.annotations[{ANNOTATION_LOAD_BALANCER_SOURCE_RANGES}]"


def pairs(causes):
    return [(c.field, c.message) for c in causes]


def lb(**extra):
    spec = {"type": "LoadBalancer", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "sessionAffinity": "None", "internalTrafficPolicy": "Cluster", "externalTrafficPolicy": "Cluster",
            "allocateLoadBalancerNodePorts": True, "clusterIP": "10.0.0.5", "clusterIPs": ["10.0.0.5"]}
    spec.update(extra)
    return spec


def cluster_ip(**extra):
    spec = {"type": "ClusterIP", "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            "sessionAffinity": "None", "internalTrafficPolicy": "Cluster"}
    spec.update(extra)
    return spec


def service_port_struct(protocol, port):
    return (f'Duplicate value: core.ServicePort{{Name:"", Protocol:"{protocol}", AppProtocol:(*string)(nil), '
            f'Port:{port}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:0}}')


# ------------------------------------------------------------ happy paths

def test_valid_specs_give_nothing():
    for spec in (lb(), cluster_ip(), {"type": "ExternalName", "externalName": "example.com"}):
        assert validate_spec_before_external_traffic_policy(spec) == []
        assert validate_spec_after_external_traffic_policy(spec) == []
        assert validate_external_ips(spec) == []
        assert validate_session_affinity_config(spec) == []
        assert validate_service_selector(spec) == []
        assert validate_service_update_rest(spec, spec) == []
    assert validate_topology_annotations({}) == []
    assert validate_service_port_rest({"port": 80, "targetPort": "http", "appProtocol": "kubernetes.io/h2c"},
                                      "spec.ports[0]") == []
    full = lb(loadBalancerClass="example.com/lb", loadBalancerSourceRanges=[" 10.0.0.0/8", "2001:DB8::/32"],
              externalIPs=["192.0.2.1", "2001:db8::1"], trafficDistribution="PreferSameNode",
              selector={"app": "web"}, sessionAffinity="ClientIP",
              sessionAffinityConfig={"clientIP": {"timeoutSeconds": 86400}})
    assert validate_spec_before_external_traffic_policy(full) == []
    assert validate_spec_after_external_traffic_policy(full) == []
    assert validate_external_ips(full) == []
    assert validate_session_affinity_config(full) == []
    assert validate_service_selector(full) == []


def test_wrong_json_types_do_not_crash():
    bad = {"type": 5, "ports": "x", "externalIPs": {"a": 1}, "loadBalancerSourceRanges": [3],
           "sessionAffinity": "ClientIP", "sessionAffinityConfig": "x", "selector": [], "loadBalancerClass": 7,
           "trafficDistribution": 1, "internalTrafficPolicy": 2, "ipFamilies": "x"}
    validate_spec_before_external_traffic_policy(bad, annotations="x")
    validate_spec_after_external_traffic_policy(bad)
    assert validate_external_ips(bad) == []
    assert validate_session_affinity_config(bad) == []
    assert validate_service_selector(bad) == []
    validate_service_update_rest(bad, bad)
    assert validate_service_port_rest("x", "spec.ports[0]") == []
    assert validate_duplicate_ports({"ports": [{"port": "80"}, {"port": "80"}, 5]}) == []


# ------------------------------------------------------------ metadata

def test_topology_annotations_must_agree():
    mode, hints = "service.kubernetes.io/topology-mode", "service.kubernetes.io/topology-aware-hints"
    assert validate_topology_annotations({mode: "Auto", hints: "Auto"}) == []
    assert validate_topology_annotations({mode: "Auto"}) == []
    assert pairs(validate_topology_annotations({mode: "Auto", hints: "Disabled"})) == [
        (f"metadata.annotations[{mode}]",
         f'Invalid value: "Auto": must match annotations[{hints}] when both are specified')]


# ------------------------------------------------------------ ports

def test_target_port_name_is_an_iana_service_name():
    assert pairs(validate_service_port_rest({"port": 80, "targetPort": "Http--"}, "spec.ports[1]")) == [
        ("spec.ports[1].targetPort",
         'Invalid value: "Http--": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)'),
        ("spec.ports[1].targetPort", 'Invalid value: "Http--": must not contain consecutive hyphens'),
        ("spec.ports[1].targetPort", 'Invalid value: "Http--": must not begin or end with a hyphen'),
    ]
    assert pairs(validate_service_port_rest({"targetPort": "8080"}, "spec.ports[0]")) == [
        ("spec.ports[0].targetPort", 'Invalid value: "8080": must contain at least one letter (a-z)')]
    assert pairs(validate_service_port_rest({"targetPort": "a-very-long-port-name"}, "spec.ports[0]")) == [
        ("spec.ports[0].targetPort", 'Invalid value: "a-very-long-port-name": must be no more than 15 characters')]
    assert validate_service_port_rest({"targetPort": 99999}, "spec.ports[0]") == []  # numbers: ServiceStrategy's


def test_app_protocol_is_a_qualified_name_after_target_port():
    assert pairs(validate_service_port_rest({"targetPort": "8080", "appProtocol": "bad proto"}, "spec.ports[0]")) == [
        ("spec.ports[0].targetPort", 'Invalid value: "8080": must contain at least one letter (a-z)'),
        ("spec.ports[0].appProtocol", f'Invalid value: "bad proto": {QUALIFIED}'),
    ]
    assert pairs(validate_service_port_rest({"appProtocol": ""}, "spec.ports[0]")) == [
        ("spec.ports[0].appProtocol", 'Invalid value: "": name part must be non-empty'),
        ("spec.ports[0].appProtocol", f'Invalid value: "": {QUALIFIED}'),
    ]
    assert validate_service_port_rest({"appProtocol": None}, "spec.ports[0]") == []


def test_duplicate_node_ports_per_protocol_then_duplicate_ports():
    spec = lb(ports=[{"name": "a", "port": 80, "protocol": "TCP", "nodePort": 30080},
                     {"name": "b", "port": 80, "protocol": "UDP", "nodePort": 30080},
                     {"name": "c", "port": 81, "protocol": "TCP", "nodePort": 30080},
                     {"name": "d", "port": 80, "protocol": "TCP"}])
    assert pairs(validate_duplicate_ports(spec)) == [
        ("spec.ports[2].nodePort", "Duplicate value: 30080"),
        ("spec.ports[3]", service_port_struct("TCP", 80)),
    ]
    assert pairs(validate_duplicate_ports({"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "UDP"},
                                                     {"port": 53, "protocol": "UDP"}]})) == [
        ("spec.ports[1]", service_port_struct("UDP", 53)), ("spec.ports[2]", service_port_struct("UDP", 53))]
    assert validate_duplicate_ports({"ports": [{"port": 53, "protocol": "UDP", "nodePort": 0},
                                               {"port": 53, "protocol": "TCP", "nodePort": 0}]}) == []


# ------------------------------------------------------------ selector and session affinity

def test_selector_labels():
    causes = pairs(validate_service_selector({"selector": {"bad key!": "ok", "app": "bad value!"}}))
    assert [field for field, _ in causes] == ["spec.selector", "spec.selector"]
    assert causes[0][1].startswith('Invalid value: "bad key!": name part must consist of')
    assert causes[1][1].startswith('Invalid value: "bad value!": a valid label must be an empty string')


def test_client_ip_affinity_config():
    def check(config):
        return pairs(validate_session_affinity_config({"sessionAffinity": "ClientIP", "sessionAffinityConfig": config}))

    reason = "Required value: when session affinity type is ClientIP"
    assert pairs(validate_session_affinity_config({"sessionAffinity": "ClientIP"})) == [
        ("spec.sessionAffinityConfig", reason)]
    assert check({}) == [("spec.sessionAffinityConfig.clientIP", reason)]
    assert check({"clientIP": {}}) == [("spec.sessionAffinityConfig.clientIP.timeoutSeconds", reason)]
    timeout = "spec.sessionAffinityConfig.clientIP.timeoutSeconds"
    assert check({"clientIP": {"timeoutSeconds": 0}}) == [
        (timeout, "Invalid value: 0: must be greater than 0 and less than 86400")]
    assert check({"clientIP": {"timeoutSeconds": 86401}}) == [
        (timeout, "Invalid value: 86401: must be greater than 0 and less than 86400")]
    assert check({"clientIP": {"timeoutSeconds": 1}}) == []


def test_affinity_none_forbids_config():
    assert pairs(validate_session_affinity_config({"sessionAffinity": "None", "sessionAffinityConfig": {}})) == [
        ("spec.sessionAffinityConfig", "Forbidden: must not be set when session affinity is None")]
    assert validate_session_affinity_config({"sessionAffinity": "Sticky", "sessionAffinityConfig": {}}) == []


# ------------------------------------------------------------ externalIPs

def test_external_ips_legacy_rule_then_non_special():
    spec = cluster_ip(externalIPs=["1.2.3", "010.1.2.3", "::ffff:1.2.3.4", "127.0.0.1", "0.0.0.0", "fe80::1",
                                   "224.0.0.1", "2001:DB8::1"])
    assert pairs(validate_external_ips(spec)) == [
        ("spec.externalIPs[0]", f'Invalid value: "1.2.3": {VALID_IP_MSG}'),
        ("spec.externalIPs[1]", 'Invalid value: "010.1.2.3": must not have leading 0s'),
        ("spec.externalIPs[2]", 'Invalid value: "::ffff:1.2.3.4": must not be an IPv4-mapped IPv6 address'),
        ("spec.externalIPs[3]",
         'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)'),
        ("spec.externalIPs[4]", 'Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)'),
        ("spec.externalIPs[5]",
         'Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
        ("spec.externalIPs[6]",
         'Invalid value: "224.0.0.1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'),
    ]


def test_external_ips_already_stored_skip_the_legacy_rule_only():
    old = cluster_ip(externalIPs=["010.1.2.3", "127.000.0.1"])
    new = cluster_ip(externalIPs=["127.000.0.1", "010.1.2.3", "010.1.2.4"])
    assert pairs(validate_external_ips(new, old)) == [
        ("spec.externalIPs[0]",
         'Invalid value: "127.000.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)'),
        ("spec.externalIPs[2]", 'Invalid value: "010.1.2.4": must not have leading 0s'),
    ]


# ------------------------------------------------------------ load balancer fields

def test_source_ranges_field():
    spec = cluster_ip(loadBalancerSourceRanges=[" 10.0.0.0/8 ", "10.0.0.1/8", "010.0.0.0/8", "10.0.0.0/08",
                                                "::ffff:10.0.0.0/104", "nope"])
    assert pairs(validate_load_balancer_source_ranges(spec)) == [
        ("spec.LoadBalancerSourceRanges", LB_ONLY),
        ("spec.LoadBalancerSourceRanges[1]", 'Invalid value: "10.0.0.1/8": must not have bits set beyond the '
                                             "prefix length"),
        ("spec.LoadBalancerSourceRanges[2]",
         'Invalid value: "010.0.0.0/8": must not have leading 0s in IP or prefix length'),
        ("spec.LoadBalancerSourceRanges[3]",
         'Invalid value: "10.0.0.0/08": must not have leading 0s in IP or prefix length'),
        ("spec.LoadBalancerSourceRanges[4]",
         'Invalid value: "::ffff:10.0.0.0/104": must not have an IPv4-mapped IPv6 address'),
        ("spec.LoadBalancerSourceRanges[5]", f'Invalid value: "nope": {VALID_CIDR_MSG}'),
    ]


def test_source_ranges_ratchet_on_update():
    old = lb(loadBalancerSourceRanges=["10.0.0.1/8 "])
    new = lb(loadBalancerSourceRanges=[" 10.0.0.1/8", "10.0.0.2/8"])
    assert pairs(validate_load_balancer_source_ranges(new, None, old)) == [
        ("spec.LoadBalancerSourceRanges[1]",
         'Invalid value: "10.0.0.2/8": must not have bits set beyond the prefix length')]


def test_source_ranges_annotation():
    annotations = {ANNOTATION_LOAD_BALANCER_SOURCE_RANGES: " 10.0.0.0/8, 1.2.3.4/8 ,"}
    assert pairs(validate_load_balancer_source_ranges(cluster_ip(), annotations)) == [
        (ANNOTATION_PATH, LB_ONLY),
        (ANNOTATION_PATH, 'Invalid value: "1.2.3.4/8": must not have bits set beyond the prefix length'),
        (ANNOTATION_PATH, f'Invalid value: "": {VALID_CIDR_MSG}'),
    ]
    assert pairs(validate_load_balancer_source_ranges(cluster_ip(), {ANNOTATION_LOAD_BALANCER_SOURCE_RANGES: " "})) \
        == [(ANNOTATION_PATH, LB_ONLY)]
    assert validate_load_balancer_source_ranges(lb(), {ANNOTATION_LOAD_BALANCER_SOURCE_RANGES: "10.0.0.0/8"}) == []
    # the field wins: the annotation is not looked at
    assert validate_load_balancer_source_ranges(lb(loadBalancerSourceRanges=["10.0.0.0/8"]),
                                                {ANNOTATION_LOAD_BALANCER_SOURCE_RANGES: "junk"}) == []


def test_source_ranges_annotation_unchanged_on_update_is_not_rechecked():
    annotations = {ANNOTATION_LOAD_BALANCER_SOURCE_RANGES: "junk"}
    assert validate_load_balancer_source_ranges(lb(), annotations, lb(), annotations) == []
    assert pairs(validate_load_balancer_source_ranges(cluster_ip(), annotations, lb(), annotations)) == [
        (ANNOTATION_PATH, LB_ONLY)]
    assert pairs(validate_load_balancer_source_ranges(lb(), annotations, lb(), {})) == [
        (ANNOTATION_PATH, f'Invalid value: "junk": {VALID_CIDR_MSG}')]


def test_allocate_load_balancer_node_ports():
    assert pairs(validate_allocate_load_balancer_node_ports(cluster_ip(allocateLoadBalancerNodePorts=False))) == [
        ("spec.allocateLoadBalancerNodePorts", LB_ONLY)]
    spec = lb()
    del spec["allocateLoadBalancerNodePorts"]
    assert pairs(validate_allocate_load_balancer_node_ports(spec)) == [
        ("allocateLoadBalancerNodePorts", "Required value")]
    assert validate_allocate_load_balancer_node_ports(lb(allocateLoadBalancerNodePorts=False)) == []


def test_load_balancer_class_create():
    assert pairs(validate_load_balancer_class(cluster_ip(loadBalancerClass="example.com/lb"))) == [
        ("spec.loadBalancerClass", LB_ONLY)]
    assert pairs(validate_load_balancer_class(lb(loadBalancerClass="bad class"))) == [
        ("spec.loadBalancerClass", f'Invalid value: "bad class": {QUALIFIED}')]
    assert validate_load_balancer_class(lb(loadBalancerClass="example.com/lb")) == []


def test_load_balancer_class_may_not_change_between_load_balancers():
    old = lb(loadBalancerClass="example.com/a")
    assert pairs(validate_load_balancer_class(lb(loadBalancerClass="example.com/b"), old)) == [
        ("spec.loadBalancerClass", 'Invalid value: "example.com/b": may not change once set')]
    assert pairs(validate_load_balancer_class(lb(), old)) == [
        ("spec.loadBalancerClass", 'Invalid value: "null": may not change once set')]
    assert pairs(validate_load_balancer_class(lb(loadBalancerClass="example.com/a"), lb())) == [
        ("spec.loadBalancerClass", 'Invalid value: "example.com/a": may not change once set')]
    assert pairs(validate_load_balancer_class(lb(loadBalancerClass="bad class"), old)) == [
        ("spec.loadBalancerClass", 'Invalid value: "bad class": may not change once set'),
        ("spec.loadBalancerClass", f'Invalid value: "bad class": {QUALIFIED}')]
    # a type change in or out of LoadBalancer may set or drop the class
    assert validate_load_balancer_class(lb(loadBalancerClass="example.com/b"), cluster_ip()) == []
    assert validate_load_balancer_class(cluster_ip(), old) == []


def test_before_external_traffic_policy_order():
    spec = cluster_ip(ports=[{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "TCP"}],
                      loadBalancerSourceRanges=["10.0.0.0/8"], allocateLoadBalancerNodePorts=True,
                      loadBalancerClass="x")
    assert [f for f, _ in pairs(validate_spec_before_external_traffic_policy(spec))] == [
        "spec.ports[1]", "spec.LoadBalancerSourceRanges", "spec.allocateLoadBalancerNodePorts",
        "spec.loadBalancerClass"]


# ------------------------------------------------------------ internal traffic policy, traffic distribution

def test_internal_traffic_policy():
    for kind in ("ClusterIP", "NodePort", "LoadBalancer"):
        assert pairs(validate_internal_traffic_policy({"type": kind})) == [
            ("spec.internalTrafficPolicy", "Required value")]
    assert validate_internal_traffic_policy({"type": "ExternalName"}) == []
    assert pairs(validate_internal_traffic_policy({"type": "ExternalName", "internalTrafficPolicy": "Node"})) == [
        ("spec.internalTrafficPolicy", 'Unsupported value: "Node": supported values: "Cluster", "Local"')]
    assert validate_internal_traffic_policy({"type": "ClusterIP", "internalTrafficPolicy": "Local"}) == []


def test_traffic_distribution():
    for value in ("PreferClose", "PreferSameZone", "PreferSameNode"):
        assert validate_traffic_distribution({"trafficDistribution": value}) == []
    supported = 'supported values: "PreferClose", "PreferSameZone", "PreferSameNode"'
    assert pairs(validate_traffic_distribution({"trafficDistribution": "Nearest"})) == [
        ("spec.trafficDistribution", f'Unsupported value: "Nearest": {supported}')]
    assert pairs(validate_traffic_distribution({"trafficDistribution": ""})) == [
        ("spec.trafficDistribution", f'Unsupported value: "": {supported}')]
    assert validate_traffic_distribution({"trafficDistribution": None}) == []


def test_after_external_traffic_policy_order():
    assert [f for f, _ in pairs(validate_spec_after_external_traffic_policy(
        {"type": "NodePort", "trafficDistribution": "x"}))] == ["spec.internalTrafficPolicy",
                                                               "spec.trafficDistribution"]


# ------------------------------------------------------------ ValidateServiceUpdate

def test_ip_families_same_count_may_not_change():
    old = cluster_ip(clusterIPs=["10.0.0.5", "fd00::5"], ipFamilies=["IPv4", "IPv6"])
    new = cluster_ip(clusterIPs=["10.0.0.5", "fd00::5"], ipFamilies=["IPv6", "IPv4"])
    shown = '[]core.IPFamily{"IPv6", "IPv4"}'
    assert pairs(validate_upgrade_downgrade_ip_families(new, old)) == [
        ("spec.ipFamilies[0]", f"Invalid value: {shown}: may not change once set"),
        ("spec.ipFamilies[0]", f"Invalid value: {shown}: may not change once set"),
    ]


def test_ip_families_release_needs_single_stack():
    old = cluster_ip(clusterIPs=["10.0.0.5", "fd00::5"], ipFamilies=["IPv4", "IPv6"],
                     ipFamilyPolicy="PreferDualStack")
    new = cluster_ip(clusterIPs=["10.0.0.5"], ipFamilies=["IPv4"], ipFamilyPolicy="PreferDualStack")
    assert pairs(validate_upgrade_downgrade_ip_families(new, old)) == [
        ("spec.ipFamilyPolicy",
         'Invalid value: "PreferDualStack": must be set to \'SingleStack\' when releasing the secondary ipFamily')]
    new["ipFamilyPolicy"] = "SingleStack"
    assert validate_upgrade_downgrade_ip_families(new, old) == []
    swapped = cluster_ip(clusterIPs=["fd00::5"], ipFamilies=["IPv6"])
    assert pairs(validate_upgrade_downgrade_ip_families(swapped, old)) == [
        ("spec.ipFamilies[0]", 'Invalid value: []string{"fd00::5"}: may not change once set'),
        ("spec.ipFamilyPolicy",
         'Invalid value: "null": must be set to \'SingleStack\' when releasing the secondary ipFamily')]
    unset = cluster_ip(ipFamilies=[], ipFamilyPolicy="SingleStack")
    assert pairs(validate_upgrade_downgrade_ip_families(unset, old)) == [
        ("spec.ipFamilies[0]", "Invalid value: []core.IPFamily{}: primary ipFamily can not be unset")]


def test_ip_families_upgrade_keeps_primary_and_skips():
    old = cluster_ip(clusterIPs=["10.0.0.5"], ipFamilies=["IPv4"])
    assert validate_upgrade_downgrade_ip_families(
        cluster_ip(clusterIPs=["10.0.0.5", "fd00::5"], ipFamilies=["IPv4", "IPv6"]), old) == []
    assert pairs(validate_upgrade_downgrade_ip_families(
        cluster_ip(clusterIPs=["fd00::5", "10.0.0.5"], ipFamilies=["IPv6", "IPv4"]), old)) == [
        ("spec.ipFamilies[0]", 'Invalid value: []string{"fd00::5", "10.0.0.5"}: may not change once set')]
    headless = cluster_ip(clusterIP="None", clusterIPs=["None"], ipFamilies=["IPv6"])
    assert validate_upgrade_downgrade_ip_families(headless, old) == []
    external = {"type": "ExternalName", "externalName": "example.com"}
    assert validate_upgrade_downgrade_ip_families(external, old) == []


def test_health_check_node_port_immutable():
    old = lb(externalTrafficPolicy="Local", healthCheckNodePort=30001)
    assert pairs(validate_external_traffic_fields_update(lb(externalTrafficPolicy="Local",
                                                            healthCheckNodePort=30002), old)) == [
        ("spec.healthCheckNodePort", "Forbidden: field is immutable")]
    assert validate_external_traffic_fields_update(lb(externalTrafficPolicy="Local", healthCheckNodePort=30001),
                                                   old) == []
    assert validate_external_traffic_fields_update(lb(), old) == []


def test_update_rest_order():
    old = lb(externalTrafficPolicy="Local", healthCheckNodePort=30001, loadBalancerClass="a",
             clusterIPs=["10.0.0.5", "fd00::5"], ipFamilies=["IPv4", "IPv6"])
    new = lb(externalTrafficPolicy="Local", healthCheckNodePort=30002, loadBalancerClass="b",
             clusterIPs=["10.0.0.5", "fd00::5"], ipFamilies=["IPv4", "IPv4"])
    assert [f for f, _ in pairs(validate_service_update_rest(new, old))] == [
        "spec.ipFamilies[0]", "spec.loadBalancerClass", "spec.healthCheckNodePort"]
